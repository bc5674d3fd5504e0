# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""_validation_checks: what each node is expected to show, the drain/resume and cordon/uncordon
actions, the actions that failed, rolling maintenance.

Inputs are real captures (scontrol show node from Slurm's own documentation, nvidia-smi XML
judged by _health.evaluate, kubectl get nodes) or, where a test needs a state the captures do not
show, a real capture with one field changed.
"""

from __future__ import annotations

import copy

import pytest

from ansible_collections.gpucluster.core.plugins.module_utils._health import evaluate
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._rules import RuleError
from ansible_collections.gpucluster.core.plugins.plugin_utils.validation._checks import (
    CORDON_KINDS,
    HELD,
    cordon_actions,
    cordon_patch,
    failed_actions,
    maintenance_errors,
    maintenance_to_drain,
    node_actions,
    not_judged,
    node_expectations,
    resumable,
)
from ansible_collections.gpucluster.core.plugins.plugin_utils.validation._plan import POLICIES, parse_scontrol_nodes
from ansible_collections.gpucluster.core.plugins.plugin_utils.validation._report import ACTIONS as REPORT_ACTIONS
from ansible_collections.gpucluster.core.plugins.plugin_utils.validation._report import document
from ansible_collections.gpucluster.core.tests.unit.plugins.plugin_utils.validation.validation_helpers import (
    H100,
    MARK,
    PREFIX,
    V100,
    kube_view,
    node_text,
    smi,
)


# ---------------------------------------------------------------------------
# node_expectations
# ---------------------------------------------------------------------------

def baseline_node(capture, expected=None, host="gpu1"):
    """A node of a burn-in document: its passive results on a real capture."""
    return document({}, {host: evaluate({"nvidia_smi": smi(*capture)}, expected or {})}, [], [], {})["nodes"][0]


SLURM_8 = {"state": "IDLE", "flags": [], "reason": None, "gpus": 8}
SLURM_NONE = {"state": "IDLE", "flags": [], "reason": None, "gpus": None}

GPU_COUNT_CASES = [
    ({"validation_gpu_count": 4}, SLURM_8, None, True, {"value": 4, "source": "validation_gpu_count"}),
    ({"validation_gpu_count": 0}, SLURM_8, None, True, {"value": 8, "source": "Slurm's node definition (gres/gpu=8)"}),
    ({"slurm_gres_expected_gpus": 4}, SLURM_8, None, True,
     {"value": 8, "source": "Slurm's node definition (gres/gpu=8)"}),
    ({"slurm_gres_expected_gpus": 4}, SLURM_NONE, None, True, {"value": 4, "source": "slurm_gres_expected_gpus"}),
    ({}, None, baseline_node(V100), True, {"value": 8, "source": "the burn-in baseline"}),
    ({}, SLURM_NONE, None, True, None),
    ({"validation_gpu_count": 8}, SLURM_8, None, False, {"value": 0, "source": "not a GPU node (gpucluster_gpu_nodes)"}),
]


@pytest.mark.parametrize("settings, slurm_node, base, gpu_node, want", GPU_COUNT_CASES)
def test_gpu_count_precedence(settings, slurm_node, base, gpu_node, want):
    assert node_expectations(settings, slurm_node, base, gpu_node).get("gpu_count") == want


@pytest.mark.parametrize("settings, base, want", [
    ({"validation_gpu_model": "H100"}, baseline_node(V100), {"value": "H100", "source": "validation_gpu_model"}),
    # a burn-in that pinned the model recorded the GPUs' names
    ({}, baseline_node(H100, {"gpu_model": {"value": "H100", "source": "validation_gpu_model"}}),
     {"value": "NVIDIA H100 80GB HBM3", "source": "the burn-in baseline"}),
    ({}, None, None),
])
def test_gpu_model(settings, base, want):
    assert node_expectations(settings, None, base, True).get("gpu_model") == want


def test_gpu_model_from_a_burn_in_without_model_pin():
    base = baseline_node(H100)
    assert node_expectations({"validation_gpu_model": ""}, None, base, True).get("gpu_model") == {
        "value": "NVIDIA H100 80GB HBM3", "source": "the burn-in baseline"}


@pytest.mark.parametrize("settings, driver, cuda", [
    ({"validation_driver_version": "580.159.04", "nvidia_driver_version": "570.172.08", "nvidia_driver_branch": 570,
      "validation_cuda_version": "13.0", "cuda_default_toolkit": "12.8"},
     {"value": "580.159.04", "source": "validation_driver_version"}, {"value": "13.0", "source": "validation_cuda_version"}),
    ({"validation_driver_version": "", "nvidia_driver_version": "570.172.08", "nvidia_driver_branch": 570,
      "validation_cuda_version": "", "cuda_default_toolkit": "12.8"},
     {"value": "570.172.08", "source": "nvidia_driver_version"}, {"value": "12.8", "source": "cuda_default_toolkit"}),
    ({"nvidia_driver_branch": 570}, {"value": "570", "source": "nvidia_driver_branch"}, None),
    ({}, None, None),
])
def test_pins(settings, driver, cuda):
    expected = node_expectations(settings, None, None, True)
    assert (expected.get("driver_version"), expected.get("cuda_version")) == (driver, cuda)


@pytest.mark.parametrize("hca, want", [
    ({"rate_gbps": 400}, {"rate_gbps": 400, "source": "validation_hca.rate_gbps"}),
    ({"rate_gbps": 0, "link_layers": ["Ethernet"]},
     {"rate_gbps": 0, "link_layers": ["Ethernet"], "source": "the fastest active port of the same adapter model"}),
    ({"rate_gbps": 200, "source": "HDR rails"}, {"rate_gbps": 200, "source": "HDR rails"}),
    ({}, None),
])
def test_hca(hca, want):
    assert node_expectations({"validation_hca": hca}, None, None, True).get("hca") == want


@pytest.mark.parametrize("settings, time_sync, disk_space", [
    # the role's defaults
    ({"validation_time_max_offset": 0.5, "validation_time_fail_offset": 60,
      "validation_disk_space_paths": ["/var", "/tmp", "/var/lib/slurm"], "validation_disk_space_min_free_percent": 5,
      "validation_disk_space_min_free_mib": 0},
     {"max_offset": 0.5, "fail_offset": 60.0, "source": "validation_time_max_offset"},
     {"paths": ["/var", "/tmp", "/var/lib/slurm"], "min_free_percent": 5.0, "min_free_bytes": 0,
      "source": "validation_disk_space_paths"}),
    ({"validation_time_max_offset": 2, "validation_time_fail_offset": 30,
      "validation_disk_space_paths": ["/scratch"], "validation_disk_space_min_free_percent": 2.5,
      "validation_disk_space_min_free_mib": 2048},
     {"max_offset": 2.0, "fail_offset": 30.0, "source": "validation_time_max_offset"},
     {"paths": ["/scratch"], "min_free_percent": 2.5, "min_free_bytes": 2 * 2 ** 30, "source": "validation_disk_space_paths"}),
    # off per host: 0 and []; unset (a host the role's defaults did not reach): none either
    ({"validation_time_max_offset": 0, "validation_disk_space_paths": []}, None, None),
    ({}, None, None),
    # the fail offset and the minimum left out: the checks' defaults
    ({"validation_time_max_offset": 1, "validation_disk_space_paths": ["/var"]},
     {"max_offset": 1.0, "fail_offset": 60.0, "source": "validation_time_max_offset"},
     {"paths": ["/var"], "min_free_percent": 5.0, "min_free_bytes": 0, "source": "validation_disk_space_paths"}),
], ids=["defaults", "set", "off", "unset", "partial"])
def test_time_and_disk(settings, time_sync, disk_space):
    expected = node_expectations(settings, None, None, True)
    assert (expected.get("time_sync"), expected.get("disk_space")) == (time_sync, disk_space)


def test_whole_expectation():
    settings = {
        "validation_gpu_count": 0, "validation_gpu_model": "H100", "validation_driver_version": "",
        "nvidia_driver_version": "580.159.04", "cuda_default_toolkit": "13.0",
        "validation_hca": {"rate_gbps": 400, "ignore": ["mlx5_1"]},
        "validation_mounts": [{"path": "/nfs", "fstype": "nfs4", "source": "ignored"}],
        "validation_services": ["munge", "slurmd", "docker"],
        "validation_xid_codes": ["79", 48], "validation_severity": {"persistence_mode": "fail"},
    }
    assert node_expectations(settings, SLURM_8, None, True) == {
        "gpu_count": {"value": 8, "source": "Slurm's node definition (gres/gpu=8)"},
        "gpu_model": {"value": "H100", "source": "validation_gpu_model"},
        "driver_version": {"value": "580.159.04", "source": "nvidia_driver_version"},
        "cuda_version": {"value": "13.0", "source": "cuda_default_toolkit"},
        "hca": {"rate_gbps": 400, "ignore": ["mlx5_1"], "source": "validation_hca.rate_gbps"},
        "mounts": [{"path": "/nfs", "fstype": "nfs4", "source": "validation_mounts"}],
        "services": ["munge", "slurmd", "docker"],
        "xid_codes": [79, 48],
        "severity": {"persistence_mode": "fail"},
    }


def test_expectation_judges_a_real_node():
    """What node_expectations builds is what evaluate takes: the 8x V100 node against Slurm's gres/gpu=8."""
    expected = node_expectations({"validation_gpu_model": "V100S", "nvidia_driver_branch": 460}, SLURM_8, None, True)
    results = {r["check"]: r for r in evaluate({"nvidia_smi": smi(*V100)}, expected)}
    assert [(c, results[c]["status"], results[c]["source"]) for c in ("gpu_count", "gpu_model", "driver_version")] == [
        ("gpu_count", "pass", "Slurm's node definition (gres/gpu=8)"),
        ("gpu_model", "pass", "validation_gpu_model"),
        ("driver_version", "pass", "nvidia_driver_branch"),
    ]


# ---------------------------------------------------------------------------
# node_actions
# ---------------------------------------------------------------------------

def slurm_view():
    """Four real-format nodes: adev1 idle; adev2 drained by this validation; adev3 drained by an
    admin; adev4 down (not responding, not drained)."""
    text = "\n".join([
        node_text(name="adev1", state="IDLE", reason=""),
        node_text(name="adev2", state="IDLE+DRAIN", reason="gpucluster-validation: xid [root@06/02-14:01:24]"),
        node_text(name="adev3", state="IDLE+DRAIN", reason="Kill task failed [root@2024-08-08T19:12:57]"),
        node_text(name="adev4"),
    ])
    return parse_scontrol_nodes(text)


ACTIONS = [
    ("adev1", "fail", ["xid", "hca_ports"], "drain", {"kind": "drained", "reason": "gpucluster-validation: xid,hca_ports"}),
    ("adev1", "fail", ["xid", "hca_ports"], "drain-and-stop",
     {"kind": "drained", "reason": "gpucluster-validation: xid,hca_ports"}),
    ("adev1", "fail", ["xid"], "report", {"kind": "would drain (report only)", "reason": "gpucluster-validation: xid"}),
    ("adev1", "fail", [], "drain", {"kind": "drained", "reason": "gpucluster-validation: unknown"}),
    ("adev1", "pass", [], "drain", {"kind": "none", "reason": None}),
    ("adev1", "warn", [], "drain", {"kind": "none", "reason": None}),
    # drained by us for the same checks: nothing to do
    ("adev2", "fail", ["xid"], "drain", {"kind": "none", "reason": "gpucluster-validation: xid [root@06/02-14:01:24]"}),
    # drained by us for other checks: drained again with the new reason
    ("adev2", "fail", ["gpu_count"], "drain", {"kind": "drained", "reason": "gpucluster-validation: gpu_count"}),
    ("adev2", "pass", [], "drain", {"kind": "resumed", "reason": "gpucluster-validation: xid [root@06/02-14:01:24]"}),
    ("adev2", "warn", [], "drain-and-stop",
     {"kind": "resumed", "reason": "gpucluster-validation: xid [root@06/02-14:01:24]"}),
    ("adev2", "pass", [], "report",
     {"kind": "would resume (report only)", "reason": "gpucluster-validation: xid [root@06/02-14:01:24]"}),
    # an admin's drain is never touched
    ("adev3", "fail", ["xid"], "drain", {"kind": "kept drained (admin)", "reason": "Kill task failed [root@2024-08-08T19:12:57]"}),
    ("adev3", "pass", [], "drain", {"kind": "kept drained (admin)", "reason": "Kill task failed [root@2024-08-08T19:12:57]"}),
    ("adev4", "fail", ["gpu_count"], "drain", {"kind": "drained", "reason": "gpucluster-validation: gpu_count"}),
    ("adev4", "pass", [], "drain", {"kind": "none", "reason": None}),
    # not in Slurm
    ("gpu9", "fail", ["xid"], "drain", {"kind": "none", "reason": None}),
]


@pytest.mark.parametrize("host, verdict, failing, policy, want", ACTIONS)
def test_node_actions(host, verdict, failing, policy, want):
    assert node_actions({host: verdict}, {host: failing}, slurm_view(), policy, PREFIX) == {host: want}
    assert want["kind"] in REPORT_ACTIONS  # the results document's schema takes it


def _tooling(name, status="warn"):
    return {"check": name, "status": status, "tooling": True, "message": "nvidia-smi could not be used"}


@pytest.mark.parametrize("checks, reason, want", [
    ([_tooling("xid")], "gpucluster-validation: xid [root@06/02-14:01:24]", ["xid"]),
    ([_tooling("gpu_count"), _tooling("xid")], "gpucluster-validation: gpu_count,hca_ports", ["gpu_count"]),
    # a judged check, or a tooling fault of a check the reason does not name, proves nothing against it
    ([{"check": "xid", "status": "warn", "message": "Xid 13"}], "gpucluster-validation: xid", []),
    ([_tooling("gpu_count")], "gpucluster-validation: xid", []),
    # not this validation's reason (an admin's), or none
    ([_tooling("xid")], "xid seen [root@06/02-14:01:24]", []),
    ([_tooling("xid")], None, []),
    ([], "gpucluster-validation: xid", []),
])
def test_not_judged(checks, reason, want):
    assert not_judged(checks, reason, PREFIX) == want


@pytest.mark.parametrize("host, checks, policy, want", [
    # drained by us for xid; this run could not read the kernel log: kept drained, in every policy
    ("adev2", [_tooling("xid")], "drain", {"kind": "kept drained (not judged)",
                                           "reason": "gpucluster-validation: xid [root@06/02-14:01:24]"}),
    ("adev2", [_tooling("xid")], "report", {"kind": "kept drained (not judged)",
                                            "reason": "gpucluster-validation: xid [root@06/02-14:01:24]"}),
    # a tool that could not run for another check: the drain's own check passed, resumed
    ("adev2", [_tooling("gpu_count"), {"check": "xid", "status": "pass"}], "drain",
     {"kind": "resumed", "reason": "gpucluster-validation: xid [root@06/02-14:01:24]"}),
    # an admin's drain and an undrained node: as without tooling faults
    ("adev3", [_tooling("xid")], "drain", {"kind": "kept drained (admin)", "reason": "Kill task failed [root@2024-08-08T19:12:57]"}),
    ("adev1", [_tooling("xid")], "drain", {"kind": "none", "reason": None}),
])
def test_node_actions_keep_a_drain_whose_check_was_not_judged(host, checks, policy, want):
    assert node_actions({host: "warn"}, {host: []}, slurm_view(), policy, PREFIX, (), {host: checks}) == {host: want}
    assert want["kind"] in REPORT_ACTIONS


def test_node_actions_bad_policy():
    with pytest.raises(RuleError) as exc:
        node_actions({}, {}, {}, "drain-all", PREFIX)
    assert str(exc.value) == "validation_policy: 'drain-all' is not one of report, drain, drain-and-stop"
    assert POLICIES == ("report", "drain", "drain-and-stop")


def test_inputs_are_not_mutated():
    slurm = slurm_view()
    before = copy.deepcopy(slurm)
    node_actions({"adev2": "pass"}, {}, slurm, "drain", PREFIX)
    assert slurm == before


# ---------------------------------------------------------------------------
# Kubernetes: cordon_actions, cordon_patch
# ---------------------------------------------------------------------------

CORDONS = [
    ("kdev1", "fail", ["xid", "hca_ports"], "drain", "cordoned", "gpucluster-validation: xid,hca_ports", False),
    ("kdev1", "fail", ["xid"], "drain-and-stop", "cordoned", "gpucluster-validation: xid", False),
    ("kdev1", "fail", ["xid"], "report", "would cordon (report only)", "gpucluster-validation: xid", False),
    ("kdev1", "fail", [], "drain", "cordoned", "gpucluster-validation: unknown", False),
    ("kdev1", "pass", [], "drain", "none", None, False),
    ("kdev1", "warn", [], "drain", "none", None, False),
    # cordoned by us for the same checks: nothing to do; for others: the new reason
    ("kdev2", "fail", ["xid"], "drain", "none", "gpucluster-validation: xid", False),
    ("kdev2", "fail", ["gpu_count"], "drain", "cordoned", "gpucluster-validation: gpu_count", False),
    ("kdev2", "pass", [], "drain", "uncordoned", "gpucluster-validation: xid", True),
    ("kdev2", "warn", [], "drain-and-stop", "uncordoned", "gpucluster-validation: xid", True),
    ("kdev2", "pass", [], "report", "would uncordon (report only)", "gpucluster-validation: xid", False),
    # an admin's cordon is never touched
    ("kdev3", "fail", ["xid"], "drain", "kept cordoned (admin)", "gpucluster-validation: xid", False),
    ("kdev3", "pass", [], "drain", "kept cordoned (admin)", None, False),
    # uncordoned by hand: cordoned again when it fails; its stale mark dropped when it passes
    ("kdev4", "fail", ["xid"], "drain", "cordoned", "gpucluster-validation: xid", False),
    ("kdev4", "pass", [], "drain", "none", None, True),
    ("kdev4", "pass", [], "report", "none", None, False),
]


@pytest.mark.parametrize("host, verdict, failing, policy, kind, reason, unmark", CORDONS)
def test_cordon_actions(host, verdict, failing, policy, kind, reason, unmark):
    assert kind in CORDON_KINDS
    assert cordon_actions({host: verdict}, {host: failing}, kube_view(), policy, PREFIX) == {
        host: {"node": host, "kind": kind, "reason": reason, "unmark": unmark}}


@pytest.mark.parametrize("host, checks, kind, reason, unmark", [
    ("kdev2", [_tooling("xid")], "kept cordoned (not judged)", "gpucluster-validation: xid", False),
    ("kdev2", [_tooling("gpu_count")], "uncordoned", "gpucluster-validation: xid", True),
    ("kdev3", [_tooling("xid")], "kept cordoned (admin)", None, False),
])
def test_cordon_actions_keep_a_cordon_whose_check_was_not_judged(host, checks, kind, reason, unmark):
    assert kind in CORDON_KINDS
    assert cordon_actions({host: "warn"}, {host: []}, kube_view(), "drain", PREFIX, {host: checks}) == {
        host: {"node": host, "kind": kind, "reason": reason, "unmark": unmark}}


def test_cordon_actions_leave_out_nodes_kubernetes_does_not_know():
    assert cordon_actions({"gpu9": "fail", "kdev1": "pass"}, {"gpu9": ["xid"]}, kube_view(), "drain", PREFIX) == {
        "kdev1": {"node": "kdev1", "kind": "none", "reason": None, "unmark": False}}


def test_cordon_actions_bad_policy():
    with pytest.raises(RuleError) as exc:
        cordon_actions({}, {}, {}, "cordon", PREFIX)
    assert str(exc.value) == "validation_policy: 'cordon' is not one of report, drain, drain-and-stop"


@pytest.mark.parametrize("cordon, reason, want", [
    (True, "gpucluster-validation: xid,gpu_count",
     {"spec": {"unschedulable": True},
      "metadata": {"annotations": {"gpucluster.core/validation-cordon": "gpucluster-validation: xid,gpu_count"}}}),
    (False, None, {"spec": {"unschedulable": False}, "metadata": {"annotations": {"gpucluster.core/validation-cordon": None}}}),
    # an uncordon removes the mark whatever reason is given
    (False, "gpucluster-validation: xid",
     {"spec": {"unschedulable": False}, "metadata": {"annotations": {"gpucluster.core/validation-cordon": None}}}),
])
def test_cordon_patch(cordon, reason, want):
    assert cordon_patch(MARK, cordon, reason) == want


# ---------------------------------------------------------------------------
# Rolling maintenance and the resume before the active checks
# ---------------------------------------------------------------------------

GOOD_MAINTENANCE = {"maintenance_roles": ["nvidia_driver", "cuda"], "maintenance_batch": "10%",
                    "maintenance_drain_timeout": 3600}


@pytest.mark.parametrize("change", [
    {}, {"maintenance_roles": []}, {"maintenance_batch": 1}, {"maintenance_batch": "2"}, {"maintenance_batch": "100%"},
    {"maintenance_drain_timeout": "60"}, {"maintenance_roles": ["slurm", "ofed", "container_toolkit"]},
])
def test_maintenance_good_settings(change):
    assert maintenance_errors(dict(GOOD_MAINTENANCE, **change)) == []


@pytest.mark.parametrize("change, messages", [
    ({"maintenance_roles": ["base_os"]},
     ["maintenance_roles: must be a list of nvidia_driver, cuda, ofed, container_toolkit, slurm (got ['base_os'])"]),
    ({"maintenance_roles": "cuda"},
     ["maintenance_roles: must be a list of nvidia_driver, cuda, ofed, container_toolkit, slurm (got 'cuda')"]),
    ({"maintenance_batch": 0},
     ["maintenance_batch: must be a number of nodes (1 or more) or a percentage (1%-100%) (got 0)"]),
    ({"maintenance_batch": "150%"},
     ["maintenance_batch: must be a number of nodes (1 or more) or a percentage (1%-100%) (got '150%')"]),
    ({"maintenance_batch": True},
     ["maintenance_batch: must be a number of nodes (1 or more) or a percentage (1%-100%) (got True)"]),
    ({"maintenance_drain_timeout": 10, "maintenance_batch": "x"},
     ["maintenance_batch: must be a number of nodes (1 or more) or a percentage (1%-100%) (got 'x')",
      "maintenance_drain_timeout: must be seconds within 60-604800 (got 10)"]),
])
def test_maintenance_bad_settings(change, messages):
    assert maintenance_errors(dict(GOOD_MAINTENANCE, **change)) == messages


def _slurm(state, flags=(), reason=None):
    return {"state": state, "flags": list(flags), "reason": reason, "gpus": 8}


SLURM_MIXED = {
    "gpu1": _slurm("IDLE"),
    "gpu2": _slurm("IDLE", ["DRAIN"], "admin: BIOS update [root@2026-11-24T10:00:00]"),
    "gpu3": _slurm("MIXED", ["DRAIN"], "gpucluster-validation: gpu_count [root@2026-11-24T10:00:00]"),
    "gpu10": _slurm("ALLOCATED"),
}


def test_maintenance_drains_only_what_is_not_drained():
    assert maintenance_to_drain(SLURM_MIXED, ["gpu10", "gpu3", "gpu2", "gpu1", "unknown"]) == ["gpu1", "gpu10"]


@pytest.mark.parametrize("health, expected", [
    ({"gpu1": {"verdict": "pass"}, "gpu2": {"verdict": "pass"}, "gpu3": {"verdict": "warn"}}, ["gpu3"]),
    ({"gpu3": {"verdict": "fail"}}, []),
    ({"gpu3": None}, []),
    # drained for gpu_count, which this run could not judge (nvidia-smi could not run): not resumed
    ({"gpu3": {"verdict": "warn", "checks": [_tooling("gpu_count")]}}, []),
    ({"gpu3": {"verdict": "warn", "checks": [_tooling("xid"), {"check": "gpu_count", "status": "pass"}]}}, ["gpu3"]),
])
def test_resumable_only_own_drains_that_pass(health, expected):
    assert resumable(["gpu1", "gpu2", "gpu3", "gpu10"], health, SLURM_MIXED, "gpucluster-validation:") == expected


def test_resumed_early_is_drained_again_when_it_fails():
    actions = node_actions({"gpu3": "fail", "gpu1": "pass"}, {"gpu3": ["slurm_gpu_job"]},
                           dict(SLURM_MIXED, gpu3=_slurm("IDLE")), "drain", "gpucluster-validation:",
                           resumed_early=["gpu3"])
    assert actions == {"gpu3": {"kind": "drained", "reason": "gpucluster-validation: slurm_gpu_job"},
                       "gpu1": {"kind": "none", "reason": None}}
    actions = node_actions({"gpu3": "warn"}, {}, SLURM_MIXED, "drain", "gpucluster-validation:", resumed_early=["gpu3"])
    assert actions == {"gpu3": {"kind": "resumed", "reason": "gpucluster-validation: gpu_count [root@2026-11-24T10:00:00]"}}


# ---------------------------------------------------------------------------
# failed_actions: the node actions (drain, resume, cordon, uncordon) that failed
# ---------------------------------------------------------------------------

def _item(host, rc=0, stderr="", **extra):
    return dict({"item": {"host": host, "action": {"kind": "drained"}}, "rc": rc, "stderr": stderr,
                 "failed": False, "changed": True}, **extra)


@pytest.mark.parametrize("actions, want", [
    pytest.param({}, [], id="no-actions"),
    pytest.param({"drain": {"skipped": True, "results": []}, "cordon": {"changed": False, "msg": "All items skipped"}},
                 [], id="skipped-tasks"),
    pytest.param({"drain": {"results": [_item("gpu01"), _item("gpu02")]}}, [], id="all-taken"),
    pytest.param({"drain": {"results": [_item("gpu01"), _item("gpu09", 1, "slurm_update error: Invalid node name specified")]},
                  "cordon": {"results": [_item("gpu02", 1, 'Error from server (NotFound): nodes "gpu02" not found\n')]}},
                 ["drain gpu09: slurm_update error: Invalid node name specified",
                  'cordon gpu02: Error from server (NotFound): nodes "gpu02" not found'], id="one-per-action-in-order"),
    pytest.param({"uncordon": {"results": [_item("cp1", None, "", failed=True, msg="[Errno 2] No such file or directory: b'kubectl'")]}},
                 ["uncordon cp1: [Errno 2] No such file or directory: b'kubectl'"], id="command-not-found"),
    pytest.param({"resume": {"results": [_item("gpu03", 1, "")]}}, ["resume gpu03: no message"], id="silent-failure"),
    # kubernetes.core.k8s's failure as ignore_errors keeps it: the message without ansible-core's frame
    pytest.param({"cordon": {"results": [_item("gpu02", None, "", failed=True, msg="Task failed: Module failed: Failed to patch "
                                               "object: b'nodes \"gpu02\" not found'")]}},
                 ["cordon gpu02: Failed to patch object: b'nodes \"gpu02\" not found'"], id="module-failure"),
    # kubernetes.core.k8s state patched of a node the API server no longer has: a warning, no object
    pytest.param({"uncordon": {"results": [dict(_item("gpu05", None), result={}), dict(_item("gpu06", None), result={"kind": "Node"},
                                                                                       method="update")]}},
                 ["uncordon gpu05: the node is not in Kubernetes (nothing patched)"], id="node-gone"),
    pytest.param({"resume": {"results": [_item("gpu03", 1, "x" * 500 + " end")]}},
                 ["resume gpu03: " + ("x" * 500 + " end")[-300:]], id="long-error-tail"),
    pytest.param({"drain": {"results": [{"skipped": True, "item": {"host": "gpu04"}}]}}, [], id="skipped-item"),
])
def test_failed_actions(actions, want):
    assert failed_actions(actions) == want


# ---------------------------------------------------------------------------
# The drain budget in node_actions and cordon_actions (issue 32)
# ---------------------------------------------------------------------------

HELD_WHY = "drain budget spent: %d of %d nodes %s by gpucluster-validation, budget %d (%s%% of %d, at least %d)"


def budget_slurm(drained_by_us=(), admin=(), idle=(), rma=()):
    """A cluster in scontrol's real format: nodes drained by this validation (for xid), by an admin, idle,
    and kept out by the quarantine (``rma: dcgm_diag``)."""
    text = [node_text(name=n, state="IDLE+DRAIN", reason="gpucluster-validation: xid [root@06/02-14:01:24]")
            for n in drained_by_us]
    text += [node_text(name=n, state="IDLE+DRAIN", reason="rma: dcgm_diag [root@06/02-14:01:24]") for n in rma]
    text += [node_text(name=n, state="IDLE+DRAIN", reason="Kill task failed [root@2024-08-08T19:12:57]") for n in admin]
    text += [node_text(name=n, state="IDLE", reason="") for n in idle]
    return parse_scontrol_nodes("\n".join(text))


def _held(reason, ours, total, budget, fraction="10", floor=2, verb="drained"):
    return {"kind": HELD, "reason": "%s (not %s: %s)" % (reason, verb, HELD_WHY % (ours, total, verb, budget, fraction,
                                                                                   total, floor))}


IDLE_20 = ["gpu%d" % i for i in range(3, 21)]


XID = ["xid"]


@pytest.mark.parametrize("slurm, verdicts, policy, budget, early, want", [
    # 20 nodes, budget 2: two of three new failures drained in natural order, the third held
    (budget_slurm(idle=["gpu1", "gpu2"] + IDLE_20), {"gpu10": XID, "gpu2": XID, "gpu3": XID}, "drain", (0.1, 2), [],
     {"gpu2": {"kind": "drained", "reason": "gpucluster-validation: xid"},
      "gpu3": {"kind": "drained", "reason": "gpucluster-validation: xid"},
      "gpu10": _held("gpucluster-validation: xid", 2, 20, 2)}),
    # report only: held the same way, so the report says what drain would do
    (budget_slurm(idle=["gpu1", "gpu2"] + IDLE_20), {"gpu1": XID, "gpu2": XID, "gpu3": XID}, "report", (0.1, 2), [],
     {"gpu1": {"kind": "would drain (report only)", "reason": "gpucluster-validation: xid"},
      "gpu2": {"kind": "would drain (report only)", "reason": "gpucluster-validation: xid"},
      "gpu3": _held("gpucluster-validation: xid", 2, 20, 2)}),
    # two already drained by us: the budget is spent; their failing again (same checks) costs nothing
    (budget_slurm(drained_by_us=["gpu1", "gpu2"], idle=IDLE_20), {"gpu1": XID, "gpu2": XID, "gpu3": XID},
     "drain-and-stop", (0.1, 2), [],
     {"gpu1": {"kind": "none", "reason": "gpucluster-validation: xid [root@06/02-14:01:24]"},
      "gpu2": {"kind": "none", "reason": "gpucluster-validation: xid [root@06/02-14:01:24]"},
      "gpu3": _held("gpucluster-validation: xid", 2, 20, 2)}),
    # drained by us and failing another check: drained again with the new reason, no new budget
    (budget_slurm(drained_by_us=["gpu1", "gpu2"], idle=IDLE_20), {"gpu1": ["gpu_count"]}, "drain", (0.1, 2), [],
     {"gpu1": {"kind": "drained", "reason": "gpucluster-validation: gpu_count"}}),
    # an admin's drains do not count against the budget
    (budget_slurm(admin=["gpu1", "gpu2"], idle=IDLE_20), {"gpu3": XID, "gpu4": XID}, "drain", (0.1, 2), [],
     {"gpu3": {"kind": "drained", "reason": "gpucluster-validation: xid"},
      "gpu4": {"kind": "drained", "reason": "gpucluster-validation: xid"}}),
    # the quarantine's rma: drains count against the budget (this system took those nodes out)
    (budget_slurm(rma=["gpu1", "gpu2"], idle=IDLE_20), {"gpu3": XID}, "drain", (0.1, 2), [],
     {"gpu3": _held("gpucluster-validation: xid", 2, 20, 2)}),
    # ... and one rma: node leaves room for one more; an rma: node failing again is left as it is
    (budget_slurm(rma=["gpu1"], idle=["gpu2"] + IDLE_20), {"gpu1": XID, "gpu3": XID, "gpu4": XID}, "drain", (0.1, 2), [],
     {"gpu1": {"kind": "kept drained (admin)", "reason": "rma: dcgm_diag [root@06/02-14:01:24]"},
      "gpu3": {"kind": "drained", "reason": "gpucluster-validation: xid"},
      "gpu4": _held("gpucluster-validation: xid", 2, 20, 2)}),
    # a node this run resumes frees its place for a new drain
    (budget_slurm(drained_by_us=["gpu1", "gpu2"], idle=IDLE_20), {"gpu1": [], "gpu3": XID}, "drain", (0.1, 2), [],
     {"gpu1": {"kind": "resumed", "reason": "gpucluster-validation: xid [root@06/02-14:01:24]"},
      "gpu3": {"kind": "drained", "reason": "gpucluster-validation: xid"}}),
    # resumed before the active checks and failed them: drained again, still counted as ours
    (budget_slurm(drained_by_us=["gpu1", "gpu2"], idle=IDLE_20), {"gpu1": ["gpu_count"], "gpu3": XID}, "drain", (0.1, 2),
     ["gpu1"],
     {"gpu1": {"kind": "drained", "reason": "gpucluster-validation: gpu_count"},
      "gpu3": _held("gpucluster-validation: xid", 2, 20, 2)}),
    # a one-node cluster: the floor lets its node be drained; with no floor it is held
    (budget_slurm(idle=["gpu1"]), {"gpu1": XID}, "drain", (0.1, 2), [],
     {"gpu1": {"kind": "drained", "reason": "gpucluster-validation: xid"}}),
    (budget_slurm(idle=["gpu1"]), {"gpu1": XID}, "drain", (0.1, 0), [],
     {"gpu1": _held("gpucluster-validation: xid", 0, 1, 0, floor=0)}),
])
def test_node_actions_keep_to_the_drain_budget(slurm, verdicts, policy, budget, early, want):
    """``verdicts``: each node's failing checks (none: it passes)."""
    actions = node_actions({host: "fail" if failing else "pass" for host, failing in verdicts.items()}, verdicts, slurm,
                           policy, PREFIX, early, None, budget)
    assert actions == want
    assert all(action["kind"] in REPORT_ACTIONS for action in actions.values())


def test_node_actions_default_budget_is_ten_percent_at_least_two():
    slurm = budget_slurm(idle=["gpu%d" % i for i in range(1, 31)])
    actions = node_actions({"gpu%d" % i: "fail" for i in range(1, 6)}, {}, slurm, "drain", PREFIX)
    assert [host for host, action in actions.items() if action["kind"] == "drained"] == ["gpu1", "gpu2", "gpu3"]
    assert actions["gpu4"] == _held("gpucluster-validation: unknown", 3, 30, 3)


def kube_budget_view():
    """kdev1-kdev4 (kdev2 cordoned by this validation, kdev3 by an admin) and kdev5 schedulable."""
    view = kube_view()
    view["kdev5"] = dict(view["kdev1"], node="kdev5")
    return view


@pytest.mark.parametrize("verdicts, policy, want", [
    # 5 nodes, budget 2, kdev2 ours: one more cordon (kdev1); kdev4 and kdev5 held
    ({"kdev1": "fail", "kdev4": "fail", "kdev5": "fail"}, "drain",
     {"kdev1": {"node": "kdev1", "kind": "cordoned", "reason": "gpucluster-validation: xid", "unmark": False},
      "kdev4": {"node": "kdev4", "kind": HELD, "unmark": False,
                "reason": _held("gpucluster-validation: xid", 2, 5, 2, verb="cordoned")["reason"]},
      "kdev5": {"node": "kdev5", "kind": HELD, "unmark": False,
                "reason": _held("gpucluster-validation: xid", 2, 5, 2, verb="cordoned")["reason"]}}),
    # kdev2 uncordoned this run: its place goes to kdev1 and kdev4
    ({"kdev1": "fail", "kdev2": "pass", "kdev4": "fail", "kdev5": "fail"}, "drain",
     {"kdev1": {"node": "kdev1", "kind": "cordoned", "reason": "gpucluster-validation: xid", "unmark": False},
      "kdev2": {"node": "kdev2", "kind": "uncordoned", "reason": "gpucluster-validation: xid", "unmark": True},
      "kdev4": {"node": "kdev4", "kind": "cordoned", "reason": "gpucluster-validation: xid", "unmark": False},
      "kdev5": {"node": "kdev5", "kind": HELD, "unmark": False,
                "reason": _held("gpucluster-validation: xid", 2, 5, 2, verb="cordoned")["reason"]}}),
    # the admin's cordon (kdev3) is not counted
    ({"kdev3": "fail", "kdev1": "fail"}, "report",
     {"kdev1": {"node": "kdev1", "kind": "would cordon (report only)", "reason": "gpucluster-validation: xid", "unmark": False},
      "kdev3": {"node": "kdev3", "kind": "kept cordoned (admin)", "reason": "gpucluster-validation: xid", "unmark": False}}),
])
def test_cordon_actions_keep_to_the_drain_budget(verdicts, policy, want):
    failing = {host: XID for host, verdict in verdicts.items() if verdict == "fail"}
    actions = cordon_actions(verdicts, failing, kube_budget_view(), policy, PREFIX, None, (0.1, 2))
    assert actions == want
    assert all(action["kind"] in CORDON_KINDS for action in actions.values())


FLAPPING = parse_scontrol_nodes(node_text(name="adev5", state="IDLE+DRAIN",
                                          reason="gpucluster-validation: flapping pcie_link [root@2026-11-27T17:01:02]"))


@pytest.mark.parametrize("policy", ["drain", "report"])
@pytest.mark.parametrize("verdict", ["pass", "fail"])
def test_a_drain_for_flapping_is_kept_by_validate_whatever_the_verdict(policy, verdict):
    # gpucluster-healthcheck drained it for flapping: one passing run of validate.yml is what a flapping node
    # shows, and a failing one must not turn the reason into an ordinary drain the program lifts at its next pass
    assert node_actions({"adev5": verdict}, {"adev5": ["pcie_link"]}, FLAPPING, policy, PREFIX) == {
        "adev5": {"kind": "kept drained (flapping)", "reason": "gpucluster-validation: flapping pcie_link [root@2026-11-27T17:01:02]"}}
    assert resumable(["adev5"], {"adev5": {"verdict": "pass", "checks": []}}, FLAPPING, PREFIX) == []
