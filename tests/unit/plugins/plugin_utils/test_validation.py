# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""_validation: Slurm's view of the nodes, expectations, bandwidth judgements, pairing, drain/resume
actions, the results document, the baseline comparison and the job results.

Inputs are real captures (scontrol show node from Slurm's own documentation, the DeepOps
``Gres=`` lines, ibstat captures, nvidia-smi XML judged by _health.evaluate) or, where a test
needs a state the captures do not show, a real capture with one field changed. Tests marked

"""

from __future__ import annotations

import copy
import json

import pytest

from ansible_collections.gpucluster.core.plugins.module_utils._dcgmi import parse_dcgmi_diag
from ansible_collections.gpucluster.core.plugins.module_utils._health import evaluate, hardware
from ansible_collections.gpucluster.core.plugins.module_utils._ibstat import parse_ibstat, summarize
from ansible_collections.gpucluster.core.plugins.module_utils._nvidia_smi import parse_health_xml
from ansible_collections.gpucluster.core.plugins.plugin_utils._rules import RuleError
from ansible_collections.gpucluster.core.plugins.plugin_utils._validation import (
    CORDON_KINDS,
    DDP_MARKER,
    NVLINK_GBS,
    PCIE_X16_GBS,
    POLICIES,
    SCHEMA,
    blame,
    checks_run,
    compare_baseline,
    container_result,
    cordon_actions,
    cordon_patch,
    dcgm_diag_result,
    ddp_result,
    document,
    drained,
    fabric_rounds,
    failed_actions,
    failing_checks,
    gpu_jobs,
    ddp_job_plan,
    ddp_job_result,
    ddp_job_state,
    gpu_pod_name,
    gpu_pod_plan,
    gpu_pod_results,
    gpu_pods_waiting,
    gpus_in_use,
    fastest_active_port,
    host_plan,
    judge,
    kubernetes_view,
    maintenance_errors,
    maintenance_to_drain,
    natural_key,
    nccl_expectation,
    nic_rate_per_gpu,
    node_actions,
    node_expectations,
    not_responding,
    pairs,
    parse_kubectl_nodes,
    parse_scontrol_nodes,
    remix,
    resumable,
    summary_lines,
)
from ansible_collections.gpucluster.core.plugins.plugin_utils._validation_report import ACTIONS as REPORT_ACTIONS
from ansible_collections.gpucluster.core.tests.unit.plugins.shared_fixtures import read_fixture

SLURM = "slurm"
# scontrol show node adev1, from Slurm's Quick Start User Guide (see slurm/SOURCES-scontrol.md)
QUICKSTART = "slurm-docs-quickstart-scontrol-show-node-down-not-responding.txt"
# "   Gres=gpu:3g.40gb:8(S:0-1),gpu:2g.20gb:8(S:0-1),gpu:1g.10gb:16(S:0-1)" of a DGX A100 with MIG (DeepOps)
DEEPOPS_GRES = "dgx-a100-mig-scontrol-show-node-gres.txt"
PREFIX = "gpucluster-validation:"  # the role's default validation_reason_prefix

IB = "ibstat"
IB_MIXED = "h100-8x-ndr-ib-cx7-plus-4x-roce-cx6dx-3-ports-down.txt"
IB_ROCE_DOWN = "h100-12x-roce-ethernet-2-cx7-ports-down.txt"
IB_ROCE_OK = "h100-12x-roce-ethernet-cx7-400g-cx6dx-100g-all-active.txt"
IB_A100 = "a100-9x-mlx5gen-vf-mt4126-8-ib-hdr-1-ethernet.txt"
IB_AZURE = "ibstatus-azure-a100-9x-hdr-200g.txt"


def quickstart():
    return read_fixture(SLURM, QUICKSTART)


def node_text(state=None, reason=None, name=None, gres=None):
    """The real adev1 record, with its State=, Reason= or name changed, or a Gres= line added."""
    text = quickstart()
    if state is not None:
        text = text.replace("State=DOWN*", "State=" + state, 1)
    if reason is not None:
        text = text.replace("Reason=Not responding [slurm@06/02-14:01:24]", "Reason=" + reason, 1)
    if name is not None:
        text = text.replace("NodeName=adev1", "NodeName=" + name, 1)
    if gres is not None:
        first, rest = text.split("\n", 1)
        text = first + "\n   Gres=" + gres + "\n" + rest
    return text


def ibstat(name):
    return summarize(parse_ibstat(read_fixture(IB, name)), IB)


def smi(directory, name):
    return parse_health_xml(read_fixture(directory, name))


H100 = ("h100-80gb-hbm3-driver580", "nvidia-smi-q.xml")
T4 = ("nvidia-smi-xml", "tesla-t4-driver515-v11.xml")
V100 = ("nvidia-smi-xml", "8x-tesla-v100s-pcie-32gb-driver460-v11.xml")


# ---------------------------------------------------------------------------
# parse_scontrol_nodes, drained
# ---------------------------------------------------------------------------

def test_parse_real_scontrol_show_node():
    assert parse_scontrol_nodes(quickstart()) == {
        "adev1": {"state": "DOWN", "flags": [], "reason": "Not responding [slurm@06/02-14:01:24]", "gpus": None},
    }


@pytest.mark.parametrize("state, base, flags, is_drained", [
    ("DOWN*", "DOWN", [], False),
    ("IDLE", "IDLE", [], False),
    ("IDLE+DRAIN", "IDLE", ["DRAIN"], True),
    ("MIXED+DRAIN", "MIXED", ["DRAIN"], True),
    ("ALLOCATED+DRAIN", "ALLOCATED", ["DRAIN"], True),
    ("DOWN+DRAIN+NOT_RESPONDING", "DOWN", ["DRAIN", "NOT_RESPONDING"], True),
    ("IDLE+DRAIN+MAINTENANCE+RESERVED", "IDLE", ["DRAIN", "MAINTENANCE", "RESERVED"], True),
    ("IDLE+DRAIN+INVALID_REG", "IDLE", ["DRAIN", "INVALID_REG"], True),
    ("IDLE+CLOUD+POWERED_DOWN", "IDLE", ["CLOUD", "POWERED_DOWN"], False),
    ("DOWN+NOT_RESPONDING", "DOWN", ["NOT_RESPONDING"], False),
    ("DRAINED", "DRAINED", [], True),
    ("DRAINING", "DRAINING", [], True),
])
def test_states(state, base, flags, is_drained):
    node = parse_scontrol_nodes(node_text(state=state))["adev1"]
    assert (node["state"], node["flags"]) == (base, flags)
    assert drained(node) is is_drained


@pytest.mark.parametrize("gres, gpus", [
    # the DGX A100 MIG node's Gres (DeepOps' scontrol show node | grep Gres)
    ("gpu:3g.40gb:8(S:0-1),gpu:2g.20gb:8(S:0-1),gpu:1g.10gb:16(S:0-1)", 32),
    # its slurm.conf NodeName lines (DeepOps: generated, then edited for MIG)
    ("gpu:8", 8),
    ("gpu:3g.40gb:8,gpu:2g.20gb:8,gpu:1g.10gb:16", 32),
    ("(null)", None),
])
def test_gres_gpu_count(gres, gpus):
    assert parse_scontrol_nodes(node_text(gres=gres))["adev1"]["gpus"] == gpus


def test_real_gres_line_inside_a_node():
    gres_line = read_fixture(SLURM, DEEPOPS_GRES)
    first, rest = quickstart().split("\n", 1)
    nodes = parse_scontrol_nodes(first + "\n" + gres_line + rest)
    assert nodes["adev1"]["gpus"] == 32


@pytest.mark.parametrize("reason, want", [
    # a reason keeps its blanks, colons and equals signs whole; the State= in it is not the node's
    ("gpucluster-validation: xid,hca_ports [root@06/02-14:01:24]", "gpucluster-validation: xid,hca_ports [root@06/02-14:01:24]"),
    ("NHC: check_fs_mount: /scratch State=ro [root@06/02-14:01:24]", "NHC: check_fs_mount: /scratch State=ro [root@06/02-14:01:24]"),
    ("", None),
])
def test_reason_line(reason, want):
    node = parse_scontrol_nodes(node_text(reason=reason))["adev1"]
    assert node["reason"] == want
    assert node["state"] == "DOWN"


def test_several_nodes():
    text = (node_text(state="IDLE+DRAIN", reason="Kill task failed [root@2024-08-08T19:12:57]") + "\n"
            + node_text(name="adev2", state="MIXED", gres="gpu:8") + "\n\n"
            + node_text(name="adev10"))
    assert parse_scontrol_nodes(text) == {
        "adev1": {"state": "IDLE", "flags": ["DRAIN"], "reason": "Kill task failed [root@2024-08-08T19:12:57]",
                  "gpus": None},
        "adev2": {"state": "MIXED", "flags": [], "reason": "Not responding [slurm@06/02-14:01:24]", "gpus": 8},
        "adev10": {"state": "DOWN", "flags": [], "reason": "Not responding [slurm@06/02-14:01:24]", "gpus": None},
    }


@pytest.mark.parametrize("text, message", [
    (read_fixture(SLURM, DEEPOPS_GRES),
     "scontrol show node: line 1 comes before any NodeName= line: "
     "Gres=gpu:3g.40gb:8(S:0-1),gpu:2g.20gb:8(S:0-1),gpu:1g.10gb:16(S:0-1)"),
    ("\n\n" + quickstart().split("\n", 1)[1],
     "scontrol show node: line 3 comes before any NodeName= line: RealMemory=4000 TmpDisk=0"),
    (quickstart().replace("State=DOWN* ", ""), "scontrol show node: node adev1 has no State= field"),
])
def test_parse_errors(text, message):
    with pytest.raises(RuleError) as exc:
        parse_scontrol_nodes(text)
    assert str(exc.value) == message


def test_parse_empty():
    assert parse_scontrol_nodes("") == {}
    assert parse_scontrol_nodes("\n\n") == {}


@pytest.mark.parametrize("names, ordered", [
    (["gpu10", "gpu9", "gpu1"], ["gpu1", "gpu9", "gpu10"]),
    (["dgx-a100-12", "dgx-a100-2", "cpu-1"], ["cpu-1", "dgx-a100-2", "dgx-a100-12"]),
])
def test_natural_key(names, ordered):
    assert sorted(names, key=natural_key) == ordered


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
# Bandwidth expectations
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("name, gpus, layers, want", [
    (IB_MIXED, 8, ("InfiniBand", "Ethernet"), 400.0),
    (IB_MIXED, 8, ("InfiniBand",), 400.0),
    (IB_MIXED, 4, ("InfiniBand",), 400.0),  # at most one port per GPU
    (IB_MIXED, 8, ("Ethernet",), 12.5),  # the one active CX-6 Dx port: 100 / 8
    (IB_ROCE_OK, 8, ("InfiniBand", "Ethernet"), 400.0),
    (IB_ROCE_OK, 8, ("InfiniBand",), None),  # RoCE only
    (IB_A100, 8, ("InfiniBand", "Ethernet"), 200.0),
    (IB_AZURE, 8, ("InfiniBand", "Ethernet"), 200.0),
    (IB_AZURE, 8, ("Ethernet",), 5.0),  # the 40G accelerated-networking port
    (IB_AZURE, 0, ("InfiniBand",), None),
])
def test_nic_rate_per_gpu(name, gpus, layers, want):
    assert nic_rate_per_gpu(ibstat(name), gpus, layers) == want


def test_nic_rate_per_gpu_without_ibstat():
    assert nic_rate_per_gpu(None, 8) is None
    assert nic_rate_per_gpu({}, 8) is None
    assert nic_rate_per_gpu({"cas": []}, 8) is None


def test_nic_rate_per_gpu_counts_only_the_adapter_model_with_most_ports():
    # 6 active CX-7 (MT4129) rails at 400G + 4 CX-6 Dx (MT4125) at 100G, 8 GPUs: 6 x 400 / 8
    assert nic_rate_per_gpu(ibstat(IB_ROCE_DOWN), 8) == 300.0


@pytest.mark.parametrize("scope, fraction, kwargs, want", [
    ("inter", 0.9, {"nic_gbps_per_gpu": 400.0},
     {"value": 45.0, "unit": "GB/s", "source": "0.90 x 400 Gb/s NIC line rate per GPU (ibstat)"}),
    ("inter", 0.9, {"nic_gbps_per_gpu": 200.0},
     {"value": 22.5, "unit": "GB/s", "source": "0.90 x 200 Gb/s NIC line rate per GPU (ibstat)"}),
    ("inter", 0.9, {"nic_gbps_per_gpu": None}, None),
    ("inter", 0.9, {"nic_gbps_per_gpu": 0}, None),
    ("intra", 0.7, {"architecture": "Hopper", "nvlink": True},
     {"value": 315.0, "unit": "GB/s", "source": "0.70 x 450 GB/s Hopper NVLink per GPU"}),
    ("intra", 0.7, {"architecture": "Ampere", "nvlink": True},
     {"value": 210.0, "unit": "GB/s", "source": "0.70 x 300 GB/s Ampere NVLink per GPU"}),
    ("intra", 0.7, {"architecture": "Volta", "nvlink": True},
     {"value": 105.0, "unit": "GB/s", "source": "0.70 x 150 GB/s Volta NVLink per GPU"}),
    ("intra", 0.7, {"architecture": "Blackwell", "nvlink": True},
     {"value": 630.0, "unit": "GB/s", "source": "0.70 x 900 GB/s Blackwell NVLink per GPU"}),
    # no NVLink: the PCIe x16 link of the generation
    ("intra", 0.7, {"architecture": "Hopper", "nvlink": False, "pcie_gen": 5},
     {"value": 44.1, "unit": "GB/s", "source": "0.70 x 63 GB/s PCIe gen5 x16"}),
    ("intra", 0.7, {"architecture": "Ada Lovelace", "nvlink": True, "pcie_gen": 4},
     {"value": 22.05, "unit": "GB/s", "source": "0.70 x 31.5 GB/s PCIe gen4 x16"}),
    ("intra", 0.5, {"pcie_gen": 3}, {"value": 7.88, "unit": "GB/s", "source": "0.50 x 15.75 GB/s PCIe gen3 x16"}),
    ("intra", 0.7, {"pcie_gen": 2}, None),
    ("intra", 0.7, {}, None),
])
def test_nccl_expectation(scope, fraction, kwargs, want):
    assert nccl_expectation(scope, fraction, **kwargs) == want


def test_bandwidth_tables():
    assert NVLINK_GBS == {"Volta": 150.0, "Ampere": 300.0, "Hopper": 450.0, "Blackwell": 900.0}
    assert PCIE_X16_GBS == {3: 15.75, 4: 31.5, 5: 63.0, 6: 121.0}


@pytest.mark.parametrize("capture, ib, want", [
    # the single H100 in a VM (no NVLink): PCIe gen5 within the node
    (H100, None, ("intra", {"value": 44.1, "unit": "GB/s", "source": "0.70 x 63 GB/s PCIe gen5 x16"})),
    # the 8x V100S PCIe (v11 schema: no architecture reported): PCIe gen3
    (V100, None, ("intra", {"value": 11.02, "unit": "GB/s", "source": "0.70 x 15.75 GB/s PCIe gen3 x16"})),
])
def test_expectations_from_real_hardware(capture, ib, want):
    hw = hardware({"nvidia_smi": smi(*capture), "ibstat": ib})
    assert nccl_expectation("intra", 0.7, architecture=hw["architecture"], pcie_gen=hw["pcie_max_gen"]) == want[1]


def test_inter_node_expectation_from_a_real_node():
    rate = nic_rate_per_gpu(ibstat(IB_MIXED), 8)
    assert nccl_expectation("inter", 0.9, nic_gbps_per_gpu=rate) == {
        "value": 45.0, "unit": "GB/s", "source": "0.90 x 400 Gb/s NIC line rate per GPU (ibstat)"}


# ---------------------------------------------------------------------------
# judge
# ---------------------------------------------------------------------------

NCCL_45 = {"value": 45.0, "unit": "GB/s", "source": "0.90 x 400 Gb/s NIC line rate per GPU (ibstat)"}
SERIES = [{"size_bytes": 8, "value": 0.0}, {"size_bytes": 8589934592, "value": 46.21}]


def judged(check, hosts, measured, expected, status, message, **extra):
    out = {
        "check": check, "hosts": hosts, "measured": measured,
        "expected": expected["value"] if expected else None, "unit": expected["unit"] if expected else None,
        "source": expected["source"] if expected else None, "recorded": False, "series": [], "note": None,
        "status": status, "message": message,
    }
    out.update(extra)
    return out


@pytest.mark.parametrize("args, kwargs, want", [
    (("nccl_all_reduce", ["gpu1", "gpu2"], 46.21, NCCL_45), {"series": SERIES},
     judged("nccl_all_reduce", ["gpu1", "gpu2"], 46.21, NCCL_45, "pass", "46.21 GB/s measured, >= 45 expected",
            series=SERIES)),
    (("nccl_all_reduce", ("gpu1", "gpu2"), 30.5, NCCL_45), {},
     judged("nccl_all_reduce", ["gpu1", "gpu2"], 30.5, NCCL_45, "fail", "30.5 GB/s measured, >= 45 expected")),
    (("nccl_all_reduce", ["gpu1", "gpu2"], 45.0, NCCL_45), {},
     judged("nccl_all_reduce", ["gpu1", "gpu2"], 45.0, NCCL_45, "pass", "45 GB/s measured, >= 45 expected")),
    (("nccl_all_reduce", ["gpu1", "gpu2"], 0.0, NCCL_45), {},
     judged("nccl_all_reduce", ["gpu1", "gpu2"], 0.0, NCCL_45, "fail", "0 GB/s measured, >= 45 expected")),
    (("ib_write_lat", ["gpu1", "gpu2"], 2.1, {"value": 3.0, "unit": "usec", "source": "site limit"}),
     {"higher_is_better": False},
     judged("ib_write_lat", ["gpu1", "gpu2"], 2.1, {"value": 3.0, "unit": "usec", "source": "site limit"}, "pass",
            "2.1 usec measured, <= 3 expected")),
    (("nccl_all_reduce", ["gpu1", "gpu2"], 46.21, None), {},
     judged("nccl_all_reduce", ["gpu1", "gpu2"], 46.21, None, "warn",
            "nccl_all_reduce: 46.21 measured, nothing to compare with")),
    (("nccl_all_reduce", ["gpu1", "gpu2"], None, NCCL_45), {},
     judged("nccl_all_reduce", ["gpu1", "gpu2"], None, NCCL_45, "fail", "no result")),
    (("nccl_all_reduce", ["gpu1", "gpu2"], 46.21, NCCL_45), {"errors": "3 wrong results (#wrong)"},
     judged("nccl_all_reduce", ["gpu1", "gpu2"], 46.21, NCCL_45, "fail", "3 wrong results (#wrong)")),
    (("ib_write_bw", ["gpu1", "gpu2"], 361.2, {"value": 360.0, "unit": "Gb/s", "source": "0.90 x 400 Gb/s port rate (ibstat)"}),
     {"recorded": "/srv/validation/ib_write_bw.txt"},
     judged("ib_write_bw", ["gpu1", "gpu2"], 361.2,
            {"value": 360.0, "unit": "Gb/s", "source": "0.90 x 400 Gb/s port rate (ibstat)"}, "pass",
            "361.2 Gb/s measured, >= 360 expected", recorded=True,
            note="no fabric here: judged on the recorded output /srv/validation/ib_write_bw.txt, not on these nodes")),
])
def test_judge(args, kwargs, want):
    assert judge(*args, **kwargs) == want


# ---------------------------------------------------------------------------
# pairs, remix, blame
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("hosts, want", [
    ([], []),
    (["gpu1"], []),
    (["gpu2", "gpu1"], [["gpu1", "gpu2"]]),
    (["gpu10", "gpu2", "gpu1"], [["gpu1", "gpu2"], ["gpu10", "gpu1"]]),
    (["gpu4", "gpu3", "gpu10", "gpu9"], [["gpu3", "gpu4"], ["gpu9", "gpu10"]]),
    (["n%d" % i for i in range(1, 6)], [["n1", "n2"], ["n3", "n4"], ["n5", "n1"]]),
])
def test_pairs(hosts, want):
    assert pairs(hosts) == want


def result(hosts, status, check="nccl_all_reduce"):
    return {"check": check, "hosts": hosts, "status": status}


@pytest.mark.parametrize("first, want", [
    ([result(["n1", "n2"], "pass"), result(["n3", "n4"], "fail"), result(["n5", "n6"], "pass")],
     [["n3", "n1"], ["n4", "n2"]]),
    # more slow nodes than helpers: as many as there are helpers
    ([result(["n1", "n2"], "fail"), result(["n3", "n4"], "fail"), result(["n5", "n6"], "pass")],
     [["n1", "n5"], ["n2", "n6"]]),
    ([result(["n1", "n2"], "fail")], []),
    ([result(["n1", "n2"], "pass")], []),
    # a warn (nothing to compare with) is neither slow nor a helper
    ([result(["n1", "n2"], "warn"), result(["n3", "n4"], "fail")], []),
    # odd count: n1 is in a good pair and in the slow wrap-around pair, so it is no helper
    ([result(["n1", "n2"], "pass"), result(["n3", "n1"], "fail")], [["n3", "n2"]]),
    # a node in two slow pairs is re-tested once; helpers run out before n3
    ([result(["n1", "n2"], "fail"), result(["n3", "n1"], "fail"), result(["n4", "n5"], "pass")],
     [["n1", "n4"], ["n2", "n5"]]),
])
def test_remix(first, want):
    assert remix(first) == want


@pytest.mark.parametrize("second, want", [
    ([result(["n3", "n1"], "fail"), result(["n4", "n2"], "pass")],
     {"n3": "slow with n4 and again with another node"}),
    ([result(["n3", "n1"], "pass"), result(["n4", "n2"], "pass")],
     {"n3": "slow only together with n4: the path between them (cable, switch port)",
      "n4": "slow only together with n3: the path between them (cable, switch port)"}),
    ([result(["n3", "n1"], "fail"), result(["n4", "n2"], "fail")],
     {"n3": "slow with n4 and again with another node", "n4": "slow with n3 and again with another node"}),
    # not re-tested (no helper was left): no blame
    ([result(["n3", "n1"], "pass")], {}),
    ([], {}),
])
def test_blame(second, want):
    first = [result(["n1", "n2"], "pass"), result(["n3", "n4"], "fail")]
    assert blame(first, second) == want


def test_fabric_rounds_end_to_end():
    """Round one over natural pairs, round two over remix's pairs, blame the node slow twice."""
    hosts = ["gpu%d" % i for i in range(1, 7)]
    measured_1 = {("gpu1", "gpu2"): 46.2, ("gpu3", "gpu4"): 21.7, ("gpu5", "gpu6"): 45.9}
    first = [judge("nccl_all_reduce", p, measured_1[tuple(p)], NCCL_45) for p in pairs(hosts)]
    assert [r["status"] for r in first] == ["pass", "fail", "pass"]
    second_pairs = remix(first)
    assert second_pairs == [["gpu3", "gpu1"], ["gpu4", "gpu2"]]
    measured_2 = {("gpu3", "gpu1"): 22.0, ("gpu4", "gpu2"): 45.8}
    second = [judge("nccl_all_reduce", p, measured_2[tuple(p)], NCCL_45) for p in second_pairs]
    assert blame(first, second) == {"gpu3": "slow with gpu4 and again with another node"}


SLOW_AGAIN = {"status": "fail", "message": "slow with gpu1 and again with another node"}
CLEARED = {"status": "pass", "message": "slow with gpu3, which was slow again with another node"}


@pytest.mark.parametrize("first, second, want", [
    # three nodes, gpu3 slow: round one's wrap-around pair is blamed on gpu3, gpu1 is cleared
    ([result(["gpu1", "gpu2"], "pass"), result(["gpu3", "gpu1"], "fail")], [result(["gpu3", "gpu2"], "fail")],
     [dict(result(["gpu1", "gpu2"], "pass"), round=1),
      dict(result(["gpu3", "gpu1"], "fail"), round=1, blame={"gpu3": SLOW_AGAIN, "gpu1": CLEARED}),
      dict(result(["gpu3", "gpu2"], "fail"), round=2)]),
    # slow only together: the path between them, a warning for both
    ([result(["n1", "n2"], "pass"), result(["n3", "n4"], "fail")],
     [result(["n3", "n1"], "pass"), result(["n4", "n2"], "pass")],
     [dict(result(["n1", "n2"], "pass"), round=1),
      dict(result(["n3", "n4"], "fail"), round=1, blame={
          "n3": {"status": "warn", "message": "slow only together with n4: the path between them (cable, switch port)"},
          "n4": {"status": "warn", "message": "slow only together with n3: the path between them (cable, switch port)"}}),
      dict(result(["n3", "n1"], "pass"), round=2), dict(result(["n4", "n2"], "pass"), round=2)]),
    # no round two (no helper): round one stands as it is
    ([result(["n1", "n2"], "fail")], [], [dict(result(["n1", "n2"], "fail"), round=1)]),
    # checks are matched by name: the ib round two says nothing of the nccl pairs
    ([result(["n1", "n2"], "fail"), result(["n1", "n2"], "pass", "ib_write_bw")],
     [result(["n1", "n3"], "fail", "ib_write_bw")],
     [dict(result(["n1", "n2"], "pass", "ib_write_bw"), round=1),
      dict(result(["n1", "n3"], "fail", "ib_write_bw"), round=2),
      dict(result(["n1", "n2"], "fail"), round=1)]),
    ([], [], []),
])
def test_fabric_rounds(first, second, want):
    assert fabric_rounds(first, second) == want


def test_document_judges_a_slow_pair_by_its_blame():
    """The node at fault fails, its partner passes, round two's pairs count for no node."""
    nccl = {"value": 45.0, "unit": "GB/s", "source": "x"}
    first = [judge("nccl_all_reduce", ["gpu1", "gpu2"], 46.0, nccl), judge("nccl_all_reduce", ["gpu3", "gpu1"], 20.0, nccl)]
    second = [judge("nccl_all_reduce", ["gpu3", "gpu2"], 21.0, nccl)]
    doc = document(RUN, {"gpu1": [], "gpu2": [], "gpu3": []}, fabric_rounds(first, second), [], {})
    by_host = {n["host"]: n for n in doc["nodes"]}
    # gpu1 is in two pairs (odd count): one check, the worst status and its lowest figure, both messages
    assert [(c["status"], c["measured"], c["message"]) for c in by_host["gpu1"]["checks"]] == [
        ("pass", 46.0, "with gpu2: 46 GB/s measured, >= 45 expected;"
                       " with gpu3: slow with gpu3, which was slow again with another node")]
    assert [(c["status"], c["message"]) for c in by_host["gpu2"]["checks"]] == [
        ("pass", "46 GB/s measured, >= 45 expected")]
    assert [(c["status"], c["message"]) for c in by_host["gpu3"]["checks"]] == [
        ("fail", "slow with gpu1 and again with another node")]
    assert [n["verdict"] for n in doc["nodes"]] == ["pass", "pass", "fail"]
    assert doc["verdict"] == "fail"
    assert [(p["hosts"], p["round"]) for p in doc["pairs"]] == [(["gpu1", "gpu2"], 1), (["gpu3", "gpu1"], 1), (["gpu3", "gpu2"], 2)]


def test_document_merges_a_nodes_two_pairs_into_its_worst():
    """Without round two, the odd node's two results of a check: the failing one, with both messages."""
    nccl = {"value": 45.0, "unit": "GB/s", "source": "x"}
    pair_results = [judge("nccl_all_reduce", ["gpu1", "gpu2"], 46.0, nccl),
                    judge("nccl_all_reduce", ["gpu3", "gpu1"], 20.0, nccl),
                    judge("nccl_all_reduce", ["gpu4", "gpu1"], 30.0, nccl)]
    doc = document(RUN, {"gpu1": []}, pair_results, [], {})
    assert doc["nodes"][0]["checks"] == [{
        "check": "nccl_all_reduce", "kind": "active", "status": "fail", "measured": 20.0, "expected": 45.0,
        "unit": "GB/s", "source": "x", "baseline": None,
        "message": "with gpu2: 46 GB/s measured, >= 45 expected; with gpu3: 20 GB/s measured, >= 45 expected;"
                   " with gpu4: 30 GB/s measured, >= 45 expected"}]


def test_fastest_active_port():
    # the first adapter (natural order) with the fastest Active port: the CX-7 400G mlx5_0
    assert fastest_active_port(ibstat(IB_ROCE_OK)) == (400.0, "mlx5_0")
    assert fastest_active_port(ibstat(IB_AZURE)) == (200.0, "mlx5_0")
    # the same capture with mlx5_0's port Down: the next 400G CX-7, mlx5_3 (not mlx5_10)
    facts = copy.deepcopy(ibstat(IB_MIXED))
    facts["cas"][0]["ports"][0]["state"] = "Down"
    assert fastest_active_port(facts) == (400.0, "mlx5_3")
    for ca in facts["cas"]:
        for port in ca["ports"]:
            port["state"] = "Down"
    assert fastest_active_port(facts) is None
    assert fastest_active_port(None) is None
    assert fastest_active_port({"cas": []}) is None


def test_not_responding():
    """A node just resumed shows IDLE+NOT_RESPONDING until slurmctld's next ping."""
    nodes = parse_scontrol_nodes("\n".join([
        node_text(name="adev1", state="IDLE+NOT_RESPONDING", reason=""),
        node_text(name="adev2", state="IDLE", reason=""),
        node_text(name="adev3"),  # the capture's DOWN*+NOT_RESPONDING node, not asked about
    ]))
    assert not_responding(nodes, ["adev1", "adev2"]) == ["adev1"]
    assert not_responding(nodes, ["adev2"]) == []
    # a node Slurm does not know is not waited for
    assert not_responding(nodes, ["gpu9"]) == []
    assert not_responding({}, []) == []


DCGM_BASE = {"check": "dcgm_diag", "hosts": ["gpu1"], "measured": None, "expected": None, "unit": None, "series": []}


@pytest.mark.parametrize("level, capture, problem, want", [
    (2, "dcgm3.3.3-a100x8-level2-pass-empty-stress.txt", None,
     {"status": "pass", "source": "dcgmi diag -r 2", "message": "level 2: all 11 tests pass (DCGM 3.3.3)"}),
    # DCGM 2.x prints no version
    (4, "blacklist-era-level4-all-pass-memtest-pulse.txt", None,
     {"status": "pass", "source": "dcgmi diag -r 4", "message": "level 4: all 18 tests pass"}),
    (1, "blacklist-era-level1-deployment-fail-empty-sections.txt", None,
     {"status": "fail", "source": "dcgmi diag -r 1",
      "message": "level 1: failed: Deployment/Persistence Mode, Deployment/Environment Variables,"
                 " Deployment/Page Retirement, Deployment/Graphics Processes, Deployment/Inforom"}),
    (1, None, None, {"status": "skip", "source": "dcgmi diag -r 1", "message": "dcgmi is not installed on the node (DCGM)"}),
    # no host engine answers (DCGM installed, nvidia-dcgm not running): a warning, not the GPUs' fault
    (1, None, "dcgmi reported an error instead of results: Error: unable to establish a connection to the specified"
              " host: localhost / Error: Unable to connect to host engine. Host engine connection invalid/disconnected."
              " (exit 255)",
     {"status": "warn", "source": "dcgmi diag -r 1",
      "message": "dcgmi could not reach DCGM's host engine on the node (start it: systemctl enable --now nvidia-dcgm):"
                 " dcgmi reported an error instead of results: Error: unable to establish a connection to the"
                 " specified host: localhost / Error: Unable to connect to host engine. Host engine connection"
                 " invalid/disconnected. (exit 255)"}),
    (1, None, "text that is neither a dcgmi table nor JSON (exit 0)",
     {"status": "fail", "source": "dcgmi diag -r 1",
      "message": "dcgmi diag: text that is neither a dcgmi table nor JSON (exit 0)"}),
])
def test_dcgm_diag_result(level, capture, problem, want):
    parsed = parse_dcgmi_diag(read_fixture("dcgmi", capture)) if capture else None
    assert dcgm_diag_result("gpu1", level, parsed, problem) == dict(DCGM_BASE, **want)


def test_dcgm_diag_result_names_warnings_and_errors():
    """The passing DCGM 3.3.3 run with one test turned into a warning and an error row added."""
    parsed = parse_dcgmi_diag(read_fixture("dcgmi", "dcgm3.3.3-a100x8-level2-pass-empty-stress.txt"))
    parsed = dict(parsed, overall="warn", warned=["Hardware/GPU Memory"], errors=[])
    assert dcgm_diag_result("gpu1", 2, parsed, None)["message"] == "level 2: warned: Hardware/GPU Memory"
    parsed = dict(parsed, overall="fail", errors=["Persistence mode for GPU 0 is disabled"])
    assert dcgm_diag_result("gpu1", 2, parsed, None) == dict(
        DCGM_BASE, status="fail", source="dcgmi diag -r 2",
        message="level 2: errors: Persistence mode for GPU 0 is disabled; warned: Hardware/GPU Memory")


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


def test_node_actions_bad_policy():
    with pytest.raises(RuleError) as exc:
        node_actions({}, {}, {}, "drain-all", PREFIX)
    assert str(exc.value) == "validation_policy: 'drain-all' is not one of report, drain, drain-and-stop"
    assert POLICIES == ("report", "drain", "drain-and-stop")


# ---------------------------------------------------------------------------
# Kubernetes: parse_kubectl_nodes, cordon_actions
# ---------------------------------------------------------------------------

MARK = "gpucluster.core/validation-cordon"


def kube_node(name, unschedulable=None, annotations=None):
    """A Node as kubectl prints it, reduced to the fields read (spec.unschedulable is absent
    on a schedulable node)."""
    spec = {"podCIDR": "10.244.1.0/24"}
    if unschedulable is not None:
        spec["unschedulable"] = unschedulable
    meta = {"name": name, "labels": {"kubernetes.io/hostname": name}}
    if annotations is not None:
        meta["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Node", "metadata": meta, "spec": spec}


def kube_list(*nodes):
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": list(nodes), "metadata": {"resourceVersion": ""}})


def kube_view():
    """kdev1 schedulable; kdev2 cordoned by this validation; kdev3 cordoned by an admin; kdev4
    uncordoned by hand after this validation cordoned it (the mark is stale)."""
    text = kube_list(
        kube_node("kdev1", annotations={"node.alpha.kubernetes.io/ttl": "0"}),
        kube_node("kdev2", True, {MARK: "gpucluster-validation: xid"}),
        kube_node("kdev3", True, {"kubeadm.alpha.kubernetes.io/cri-socket": "/run/containerd/containerd.sock"}),
        kube_node("kdev4", False, {MARK: "gpucluster-validation: gpu_count"}),
    )
    return parse_kubectl_nodes(text, {h: h for h in ("kdev1", "kdev2", "kdev3", "kdev4")}, MARK)


def test_parse_kubectl_nodes():
    assert kube_view() == {
        "kdev1": {"node": "kdev1", "unschedulable": False, "mark": None, "stale": False, "devices": {}},
        "kdev2": {"node": "kdev2", "unschedulable": True, "mark": "gpucluster-validation: xid", "stale": False, "devices": {}},
        "kdev3": {"node": "kdev3", "unschedulable": True, "mark": None, "stale": False, "devices": {}},
        "kdev4": {"node": "kdev4", "unschedulable": False, "mark": "gpucluster-validation: gpu_count", "stale": True, "devices": {}},
    }


def test_parse_a_real_kubectl_capture():
    """kubectl get nodes --output=json from molecule/kubernetes (v1.20.2): gpu01 cordoned by the
    validation, gpu02 by an admin; then what the next run does with each."""
    text = read_fixture("kubernetes", "kubectl-get-nodes-v1.20.2-cordons.json")
    view = parse_kubectl_nodes(text, {"cp1": "cp1", "gpu01": "gpu01", "gpu02": "gpu02", "mirror": "mirror"}, MARK)
    assert view == {
        "cp1": {"node": "cp1", "unschedulable": False, "mark": None, "stale": False, "devices": {}},
        "gpu01": {"node": "gpu01", "unschedulable": True, "mark": "gpucluster-validation: gpu_count", "stale": False,
                  "devices": {"nvidia.com/gpu": 8}},
        "gpu02": {"node": "gpu02", "unschedulable": True, "mark": None, "stale": False, "devices": {}},
    }
    verdicts = {"cp1": "fail", "gpu01": "pass", "gpu02": "pass"}
    assert cordon_actions(verdicts, {"cp1": ["services"]}, view, "drain", PREFIX) == {
        "cp1": {"node": "cp1", "kind": "cordoned", "reason": "gpucluster-validation: services", "unmark": False},
        "gpu01": {"node": "gpu01", "kind": "uncordoned", "reason": "gpucluster-validation: gpu_count", "unmark": True},
        "gpu02": {"node": "gpu02", "kind": "kept cordoned (admin)", "reason": None, "unmark": False},
    }


def test_parse_kubectl_nodes_maps_inventory_names_and_leaves_out_unknown_hosts():
    text = kube_list(kube_node("gpu01.cluster.lan", True, {MARK: "gpucluster-validation: xid"}), kube_node("cp1"))
    assert parse_kubectl_nodes(text, {"gpu01": "gpu01.cluster.lan", "cp1": "cp1", "gpu02": "gpu02"}, MARK) == {
        "gpu01": {"node": "gpu01.cluster.lan", "unschedulable": True, "mark": "gpucluster-validation: xid", "stale": False, "devices": {}},
        "cp1": {"node": "cp1", "unschedulable": False, "mark": None, "stale": False, "devices": {}},
    }
    assert parse_kubectl_nodes(kube_list(), {"cp1": "cp1"}, MARK) == {}


@pytest.mark.parametrize("text, message", [
    ("error: the server doesn't have a resource type \"nodes\"", "kubectl get nodes: the output is not JSON "
     "(Expecting value: line 1 column 1 (char 0))"),
    ('{"kind": "Node", "metadata": {"name": "cp1"}}', "kubectl get nodes: the output has no items list (a NodeList)"),
    ("[]", "kubectl get nodes: the output has no items list (a NodeList)"),
    ('{"items": [{"metadata": {"name": "cp1"}}, {"metadata": {}}]}', "kubectl get nodes: item 1 has no metadata.name"),
    ('{"items": ["cp1"]}', "kubectl get nodes: item 0 has no metadata.name"),
    ('{"items": [{"metadata": {"name": "cp1"}, "spec": {"unschedulable": "true"}}]}',
     "kubectl get nodes: node cp1: spec.unschedulable is not true or false (got 'true')"),
    ('{"items": [{"metadata": {"name": "gpu1"}, "status": {"allocatable": {"cpu": "2", "nvidia.com/gpu": "8k"}}}]}',
     "kubectl get nodes: node gpu1: allocatable nvidia.com/gpu is '8k', not a whole number"),
], ids=["text", "one-node", "list", "no-name", "string-item", "string-unschedulable", "quantity"])
def test_parse_kubectl_nodes_errors(text, message):
    with pytest.raises(RuleError) as exc:
        parse_kubectl_nodes(text, {"cp1": "cp1"}, MARK)
    assert str(exc.value) == message


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


def test_cordon_actions_leave_out_nodes_kubernetes_does_not_know():
    assert cordon_actions({"gpu9": "fail", "kdev1": "pass"}, {"gpu9": ["xid"]}, kube_view(), "drain", PREFIX) == {
        "kdev1": {"node": "kdev1", "kind": "none", "reason": None, "unmark": False}}


def test_cordon_actions_bad_policy():
    with pytest.raises(RuleError) as exc:
        cordon_actions({}, {}, {}, "cordon", PREFIX)
    assert str(exc.value) == "validation_policy: 'cordon' is not one of report, drain, drain-and-stop"


# ---------------------------------------------------------------------------
# container_result
# ---------------------------------------------------------------------------

def v100_uuids():
    return sorted(gpu["uuid"] for gpu in smi(*V100)["gpus"])


def box(**changes):
    run = {"image": "registry.lab:5000/cuda:12.4.1-base", "path": "/usr/bin/docker", "pull_rc": None, "rc": 0,
           "uuids": v100_uuids(), "output": None}
    run.update(changes)
    return run


@pytest.mark.parametrize("run, node, status, measured, message", [
    (box(), "v100", "pass", 8, "the container saw the node's 8 GPUs"),
    (box(uuids=list(reversed(v100_uuids()))), "v100", "pass", 8, "the container saw the node's 8 GPUs"),
    (box(path=None, rc=None, uuids=None), "v100", "skip", None, "docker is not installed on the node"),
    (box(pull_rc="timeout after 600s", rc=None, uuids=None, output="Pulling from library/ubuntu"), "v100", "warn", None,
     "could not pull registry.lab:5000/cuda:12.4.1-base (exit timeout after 600s): Pulling from library/ubuntu; set "
     "validation_gpu_container_image to an image the nodes can pull"),
    (box(rc=125, uuids=None, output="docker: Error response from daemon: could not select device driver \"\" with "
                                    "capabilities: [[gpu]].\n"), "v100", "fail", None,
     "the container exited 125: docker: Error response from daemon: could not select device driver \"\" with "
     "capabilities: [[gpu]]."),
    (box(uuids=None, output="NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."), "v100",
     "fail", None, "nvidia-smi in the container printed no GPU list: NVIDIA-SMI has failed because it couldn't "
                   "communicate with the NVIDIA driver."),
    (box(uuids=v100_uuids()[1:]), "v100", "fail", 7, "the container saw 7 GPUs, the node has 8: missing "
     + v100_uuids()[0]),
    (box(uuids=v100_uuids()[:1] + ["GPU-232c00c4-60d0-5fdb-a8f5-d8949845a9bb"]), "v100", "fail", 2,
     "the container saw 2 GPUs, the node has 8: missing %s; not the node's: GPU-232c00c4-60d0-5fdb-a8f5-d8949845a9bb"
     % ", ".join(v100_uuids()[1:])),
    # the node's own GPUs not read (its passive checks did not run): any GPU passes, none fails
    (box(), "none", "pass", 8, "the container saw 8 GPUs (the node's own were not read)"),
    (box(uuids=[]), "none", "fail", 0, "the container saw 0 GPUs (the node's own were not read)"),
], ids=["same", "any-order", "no-docker", "pull-timeout", "no-runtime", "not-xml", "one-missing", "other-gpu",
        "unknown-node", "unknown-node-none"])
def test_container_result(run, node, status, measured, message):
    want = v100_uuids() if node == "v100" else []
    result = container_result("gpu1", run, want)
    assert (result["status"], result["measured"], result["message"]) == (status, measured, message)
    assert (result["check"], result["hosts"], result["unit"], result["source"]) == (
        "gpu_container", ["gpu1"], "GPUs", "docker run --gpus all registry.lab:5000/cuda:12.4.1-base nvidia-smi")
    assert result["expected"] == (8 if node == "v100" else None)


# ---------------------------------------------------------------------------
# document, compare_baseline, summary_lines
# ---------------------------------------------------------------------------

RUN = {"id": "20261124T1012", "baseline": "baseline.json"}
GPU_REPORT = {"jobs": [
    {"host": "gpu1", "gpus": 1, "rc": 0, "visible": 1, "usable": 1, "devices": "0",
     "output": 'GPUCLUSTER-GPU-JOB {"visible": 1, "usable": 1, "devices": "0"}\n'},
    {"host": "gpu2", "gpus": 1, "rc": 1, "visible": None, "usable": None,
     "output": "srun: error: Unable to allocate resources: Requested node configuration is not available\n"},
]}


def run_document(nccl=40.1):
    """gpu1: the healthy H100; gpu2: the T4 (x8 link); a slow pair; a recorded ib_write_bw; the GPU jobs."""
    nodes = {
        "gpu2": evaluate({"nvidia_smi": smi(*T4)}, {}),
        "gpu1": evaluate({"nvidia_smi": smi(*H100)}, {"gpu_count": {"value": 1, "source": "validation_gpu_count"}}),
    }
    pair_results = [
        judge("nccl_all_reduce", ["gpu1", "gpu2"], nccl, NCCL_45),
        judge("ib_write_bw", ["gpu1", "gpu2"], 361.2,
              {"value": 360.0, "unit": "Gb/s", "source": "0.90 x 400 Gb/s port rate (ibstat)"},
              recorded="/srv/validation/ib_write_bw.txt"),
    ]
    actions = {"gpu2": {"kind": "drained", "reason": "gpucluster-validation: pcie_link,nccl_all_reduce,slurm_gpu_job"}}
    return document(RUN, nodes, pair_results, gpu_jobs(GPU_REPORT), actions)


def test_document():
    doc = run_document()
    assert doc["schema"] == SCHEMA == "gpucluster.core/validation-result/v1"
    assert doc["run"] == RUN
    assert doc["verdict"] == "fail"
    # gpu1: 7 pass + 8 skip passive, nccl fail, GPU job pass; gpu2: 5 pass, 1 warn, 1 fail, 8 skip passive,
    # nccl fail, GPU job fail; the recorded ib_write_bw counted once
    assert doc["counts"] == {"pass": 14, "warn": 1, "fail": 4, "skip": 16}
    assert [n["host"] for n in doc["nodes"]] == ["gpu1", "gpu2"]
    gpu1, gpu2 = doc["nodes"]
    assert (gpu1["verdict"], gpu1["action"]) == ("fail", {"kind": "none", "reason": None})
    assert (gpu2["verdict"], gpu2["action"]["kind"]) == ("fail", "drained")
    assert [c["check"] for c in gpu1["checks"][15:]] == ["nccl_all_reduce", "slurm_gpu_job"]
    assert gpu1["checks"][15] == {
        "check": "nccl_all_reduce", "kind": "active", "status": "fail", "measured": 40.1, "expected": 45.0,
        "unit": "GB/s", "source": "0.90 x 400 Gb/s NIC line rate per GPU (ibstat)",
        "message": "40.1 GB/s measured, >= 45 expected", "baseline": None,
    }
    assert failing_checks(gpu2["checks"]) == ["pcie_link", "nccl_all_reduce", "slurm_gpu_job"]
    assert [p["check"] for p in doc["pairs"]] == ["nccl_all_reduce", "ib_write_bw"]
    assert [j["hosts"] for j in doc["jobs"]] == [["gpu1"], ["gpu2"]]
    json.dumps(doc)  # the document is JSON


def test_document_counts_recorded_results_once_and_keeps_them_out_of_verdicts():
    nodes = {"gpu1": evaluate({"nvidia_smi": smi(*H100)}, {})}
    recorded = judge("nccl_all_reduce", ["gpu1", "gpu2"], 12.0, NCCL_45, recorded="/srv/nccl.txt")
    doc = document(RUN, nodes, [recorded], [], {})
    assert doc["nodes"][0]["verdict"] == "pass"
    assert len(doc["nodes"][0]["checks"]) == 15
    assert doc["verdict"] == "pass"
    assert doc["counts"]["fail"] == 1


def test_document_of_nothing():
    assert document({"id": "x"}, {}, [], [], {}) == {
        "schema": SCHEMA, "run": {"id": "x"}, "verdict": "pass",
        "counts": {"pass": 0, "warn": 0, "fail": 0, "skip": 0}, "nodes": [], "pairs": [], "jobs": [],
    }


def test_compare_baseline_flags_a_slower_node():
    baseline = run_document(nccl=46.2)
    doc = compare_baseline(run_document(nccl=40.1), baseline, 0.1)
    gpu1, gpu2 = doc["nodes"]
    assert gpu1["checks"][15]["baseline"] == 46.2
    assert gpu1["checks"][16]["baseline"] == 1  # slurm_gpu_job: usable GPUs
    assert gpu1["checks"][-1] == {
        "check": "baseline", "kind": "active", "status": "warn", "measured": 1, "expected": 0, "unit": None,
        "source": "burn-in baseline baseline.json, tolerance 0.1",
        "message": "slower than its baseline: nccl_all_reduce 40.1 < 46.2 (baseline)", "baseline": None,
    }
    # gpu2's GPU job had no numeric result in either run: only the pair is compared
    assert gpu2["checks"][-1]["message"] == "slower than its baseline: nccl_all_reduce 40.1 < 46.2 (baseline)"
    assert doc["counts"] == {"pass": 14, "warn": 3, "fail": 4, "skip": 16}
    assert doc["verdict"] == "fail"


def test_compare_baseline_within_tolerance():
    doc = compare_baseline(run_document(nccl=42.0), run_document(nccl=46.2), 0.1)
    gpu1 = doc["nodes"][0]
    assert gpu1["checks"][-1]["status"] == "pass"
    assert gpu1["checks"][-1]["message"] == "2 results within 0.1 of the baseline"
    assert doc["nodes"][1]["checks"][-1]["message"] == "1 results within 0.1 of the baseline"


def test_compare_baseline_upgrades_a_passing_node_to_warn():
    nodes = {"gpu1": evaluate({"nvidia_smi": smi(*H100)}, {})}
    baseline = document(RUN, nodes, [judge("nccl_all_reduce", ["gpu1", "gpu2"], 46.2, NCCL_45)], [], {})
    doc = document(RUN, nodes, [judge("nccl_all_reduce", ["gpu1", "gpu2"], 45.5, NCCL_45)], [], {})
    assert doc["verdict"] == "pass"
    doc = compare_baseline(doc, baseline, 0.01)
    assert (doc["nodes"][0]["verdict"], doc["verdict"]) == ("warn", "warn")


def test_compare_baseline_uses_the_lowest_baseline_value():
    nodes = {"gpu1": evaluate({"nvidia_smi": smi(*H100)}, {})}
    baseline = document(RUN, nodes, [judge("nccl_all_reduce", ["gpu1", "gpu2"], 46.2, NCCL_45),
                                     judge("nccl_all_reduce", ["gpu3", "gpu1"], 44.0, NCCL_45)], [], {})
    doc = compare_baseline(document(RUN, nodes, [judge("nccl_all_reduce", ["gpu1", "gpu2"], 40.0, NCCL_45)], [], {}),
                           baseline, 0.1)
    assert doc["nodes"][0]["checks"][15]["baseline"] == 44.0
    assert doc["nodes"][0]["checks"][-1]["message"] == "1 results within 0.1 of the baseline"


def test_compare_baseline_without_baseline_or_with_the_wrong_schema():
    doc = run_document()
    assert compare_baseline(doc, None, 0.1) is doc
    assert compare_baseline(doc, {}, 0.1) is doc
    with pytest.raises(RuleError) as exc:
        compare_baseline(run_document(), {"schema": "gpucluster.core/validation-result/v0", "nodes": []}, 0.1)
    assert str(exc.value) == ("validation baseline: schema is 'gpucluster.core/validation-result/v0', "
                              "expected gpucluster.core/validation-result/v1")


def test_compare_baseline_node_not_in_baseline():
    baseline = document(RUN, {}, [], [], {})
    doc = compare_baseline(run_document(), baseline, 0.1)
    assert [c["check"] for c in doc["nodes"][0]["checks"]][-1] == "slurm_gpu_job"
    assert doc["counts"] == run_document()["counts"]


def test_summary_lines():
    lines = summary_lines(run_document())
    assert lines[0] == "validation 20261124T1012: FAIL (pass 14, warn 1, fail 4, skip 16)"
    assert lines[1] == "gpu1 FAIL - nccl_all_reduce: 40.1 GB/s measured, >= 45 expected"
    assert lines[2] == (
        "gpu2 FAIL [drained] - persistence_mode: persistence mode off on GPU0 (00000000:00:1E.0) and "
        "nvidia-persistenced is not running; pcie_link: PCIe link narrower than the device's maximum on GPU0 "
        "(00000000:00:1E.0): x8 of x16; nccl_all_reduce: 40.1 GB/s measured, >= 45 expected; slurm_gpu_job: srun "
        "exited 1: srun: error: Unable to allocate resources: Requested node configuration is not available")
    assert lines[3:] == [
        "nccl_all_reduce gpu1,gpu2 FAIL - 40.1 GB/s measured, >= 45 expected",
        "ib_write_bw gpu1,gpu2 PASS - 361.2 Gb/s measured, >= 360 expected (no fabric here: judged on the recorded "
        "output /srv/validation/ib_write_bw.txt, not on these nodes)",
        "slurm_gpu_job gpu1 PASS - the job got 1 GPUs and its devices cgroup allowed exactly those",
        "slurm_gpu_job gpu2 FAIL - srun exited 1: srun: error: Unable to allocate resources: Requested node "
        "configuration is not available",
    ]


def test_summary_lines_leave_out_passing_nodes():
    nodes = {"gpu1": evaluate({"nvidia_smi": smi(*H100)}, {}), "gpu2": evaluate({"nvidia_smi": smi(*T4)}, {})}
    lines = summary_lines(document(RUN, nodes, [], [], {}))
    assert not any(line.startswith("gpu1 ") for line in lines)


# ---------------------------------------------------------------------------
# gpu_jobs, ddp_result
# ---------------------------------------------------------------------------

def job_result(host, status, measured, want, message):
    return {"check": "slurm_gpu_job", "hosts": [host], "status": status, "measured": measured, "expected": want,
            "unit": "GPUs", "source": "the GPUs requested (--gres=gpu:%d)" % want, "message": message, "series": []}


@pytest.mark.parametrize("job, want", [
    ({"host": "gpu1", "gpus": 8, "rc": 0, "visible": 8, "usable": 8, "devices": "0,1,2,3,4,5,6,7", "output": ""},
     job_result("gpu1", "pass", 8, 8, "the job got 8 GPUs and its devices cgroup allowed exactly those")),
    # no devices cgroup (ConstrainDevices=no): the job may open every GPU of the node
    ({"host": "gpu1", "gpus": 4, "rc": 0, "visible": 4, "usable": 8, "devices": "0,1,2,3", "output": ""},
     job_result("gpu1", "fail", 8, 4,
                "the job asked for 4 GPUs, CUDA_VISIBLE_DEVICES listed 4 and its devices cgroup allowed 8")),
    ({"host": "gpu1", "gpus": 8, "rc": 0, "visible": None, "usable": None, "output": "\n"},
     job_result("gpu1", "fail", None, 8,
                "the job asked for 8 GPUs, CUDA_VISIBLE_DEVICES listed None and its devices cgroup allowed None")),
    ({"host": "gpu2", "gpus": 8, "rc": 1, "visible": None, "usable": None,
      "output": "srun: error: Unable to allocate resources: Requested node configuration is not available\n"},
     job_result("gpu2", "fail", None, 8,
                "srun exited 1: srun: error: Unable to allocate resources: Requested node configuration is not available")),
    ({"host": "gpu2", "gpus": 8, "rc": "timeout after 600s", "visible": None, "usable": None, "output": ""},
     job_result("gpu2", "fail", None, 8, "srun exited timeout after 600s: no output")),
])
def test_gpu_jobs(job, want):
    assert gpu_jobs({"jobs": [job]}) == [want]


def test_gpu_jobs_long_output_is_cut():
    out = gpu_jobs({"jobs": [{"host": "gpu1", "gpus": 1, "rc": 1, "output": "x" * 2000}]})[0]
    assert out["message"] == "srun exited 1: " + "x" * 500
    assert gpu_jobs({}) == []


def ddp_line(**fields):
    """gpucluster-ddp-smoke.py's rank-0 result line (the keys it writes, in its order)."""
    result = {
        "status": "fail", "message": "", "backend": "nccl", "device": "cuda:0 (NVIDIA H100 80GB HBM3)",
        "world_size": 16, "nodes": [], "ranks_per_node": {}, "steps": 50, "loss_first": None, "loss_last": None,
        "loss_tail_mean": None, "losses": [], "max_weight_diff": None, "weights_identical": False,
        "duration_s": 41.257, "torch_version": "2.11.0+cu130", "launcher": "slurm", "master": "gpu9:29500",
        "max_loss_ratio": 0.5,
    }
    result.update(fields)
    return DDP_MARKER + json.dumps(result)


PASSED = ddp_line(
    status="pass",
    message="16 rank(s) on 2 node(s) trained 50 steps with nccl: the mean of the last 5 losses is 0.0123 x the first "
            "(limit 0.5 x) and every rank holds identical weights.",
    nodes=["gpu10", "gpu9"], ranks_per_node={"gpu10": 8, "gpu9": 8}, loss_first=2.34567, loss_last=0.0289,
    loss_tail_mean=0.0289, losses=[{"step": 1, "loss": 2.34567}, {"step": 50, "loss": 0.0289}],
    max_weight_diff=0.0, weights_identical=True)


def test_ddp_result_pass():
    out = ddp_result("some srun noise\n" + PASSED + "\n", ["gpu9", "gpu10"], 0)
    assert out == {
        "check": "ddp_smoke", "hosts": ["gpu9", "gpu10"], "unit": None,
        "expected": "loss down, identical weights on every rank", "source": "gpucluster-ddp-smoke.py",
        "series": [{"step": 1, "loss": 2.34567}, {"step": 50, "loss": 0.0289}],
        "status": "pass",
        "measured": "loss 2.346 -> 0.0289, 16 ranks on gpu10, gpu9, nccl, weights identical",
        "message": "16 rank(s) on 2 node(s) trained 50 steps with nccl: the mean of the last 5 losses is 0.0123 x the "
                   "first (limit 0.5 x) and every rank holds identical weights.",
    }


def test_ddp_result_pass_line_but_job_failed():
    out = ddp_result(PASSED + "\n", ["gpu9", "gpu10"], 1)
    assert (out["status"], out["message"]) == ("fail", "rank 0 passed, but the job exited 1: no error output")
    out = ddp_result(PASSED + "\n", ["gpu9", "gpu10"], 1, "srun: error: gpu10: task 1: Exited with exit code 1\n")
    assert out["message"] == "rank 0 passed, but the job exited 1: srun: error: gpu10: task 1: Exited with exit code 1"


def test_ddp_result_weights_differ():
    line = ddp_line(status="fail", message="The DDP smoke test failed: the ranks' weights differ.", nodes=["gpu9"],
                    loss_first=2.3, loss_last=0.03, weights_identical=False, max_weight_diff=0.00125)
    out = ddp_result(line, ["gpu9"], 1)
    assert (out["status"], out["measured"]) == ("fail", "loss 2.3 -> 0.03, 16 ranks on gpu9, nccl, weights differ by 0.00125")


@pytest.mark.parametrize("stdout, stderr, rc, message", [
    ("", "srun: error: Unable to allocate resources: Requested node configuration is not available\n", 1,
     "the job printed 0 result lines (rc=1): srun: error: Unable to allocate resources: Requested node configuration "
     "is not available"),
    ("", "", 137, "the job printed 0 result lines (rc=137): no output"),
    (PASSED + "\n" + PASSED + "\n", "", 0, None),
    (DDP_MARKER + "{not json\n", "", 1, None),
])
def test_ddp_result_unusable_output(stdout, stderr, rc, message):
    out = ddp_result(stdout, ["gpu9", "gpu10"], rc, stderr)
    assert (out["status"], out["measured"], out["hosts"]) == ("fail", None, ["gpu9", "gpu10"])
    if message:
        assert out["message"] == message
    elif stdout.count(DDP_MARKER) == 2:
        assert out["message"].startswith("the job printed 2 result lines (rc=0): ")
    else:
        assert out["message"] == "unreadable result line: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"


def test_ddp_result_of_a_failed_rendezvous():
    """The smoke test's line when the job failed before training: no losses (null), no nodes."""
    message = ("The DDP smoke test failed: rendezvous at gpu9:29500 failed on rank 0 (gpu9): "
               "DistStoreError: Timed out after 601 seconds waiting for clients. 1/2 clients joined.")
    out = ddp_result(ddp_line(message=message) + "\n", ["gpu9", "gpu10"], 1)
    assert (out["status"], out["message"], out["hosts"], out["series"]) == ("fail", message, ["gpu9", "gpu10"], [])
    assert out["measured"] == "no training step, 16 ranks, nccl"


H200_DIR = "h200-driver580"


@pytest.mark.parametrize("stdout, stderr, rc, status, measured, message", [
    # NCCL on the H200 itself, started by hand and by torchrun
    ("ddp-nccl-1rank.txt", None, 0, "pass", "loss 1.657 -> 0.1331, 1 ranks on vm, nccl, weights identical",
     "1 rank(s) on 1 node(s) trained 50 steps with nccl: the mean of the last 5 losses is 0.083 x the first "
     "(limit 0.5 x) and every rank holds identical weights."),
    ("ddp-torchrun-1gpu.txt", None, 0, "pass", "loss 1.657 -> 0.1331, 1 ranks on vm, nccl, weights identical", None),
    ("ddp-gloo-2ranks.txt", None, 0, "pass", "loss 1.762 -> 0.1311, 2 ranks on vm, gloo, weights identical",
     "2 rank(s) on 1 node(s) trained 50 steps with gloo: the mean of the last 5 losses is 0.0698 x the first "
     "(limit 0.5 x) and every rank holds identical weights."),
    # torchrun --nproc-per-node 2 on one GPU: before the fix NCCL refused it after the rendezvous...
    ("ddp-nccl-2ranks-1gpu-before.txt", "ddp-nccl-2ranks-1gpu-before.stderr.txt", 1, "fail",
     "no training step, 2 ranks, nccl",
     "The DDP smoke test failed: the DDP job failed on rank 0 (vm): DistBackendError: NCCL error in: "
     "/pytorch/torch/csrc/distributed/c10d/NCCLUtils.cpp:93, invalid usage (run with NCCL_DEBUG=WARN for details), "
     "NCCL version 2.28.9 ncclInvalidUsage: This usually reflects invalid usage of NCCL library. Last error: "
     "Duplicate GPU detected : rank 0 and rank 1 both on CUDA device 60."),
    # ...now the script refuses it itself, and its line wins over torchrun's ChildFailedError banner
    ("ddp-nccl-2ranks-1gpu-after.txt", "ddp-nccl-2ranks-1gpu-after.stderr.txt", 1, "fail", None,
     "the job printed 0 result lines (rc=1): gpucluster-ddp-smoke: error: local rank 1 has no GPU: 1 visible "
     "(CUDA_VISIBLE_DEVICES=unset); start at most 1 process(es) per node"),
])
def test_ddp_result_of_the_runs_on_a_real_h200(stdout, stderr, rc, status, measured, message):
    """gpucluster-ddp-smoke.py's real output on a lent H200 (tests/unit/fixtures/h200-driver580)."""
    check_ddp_run(H200_DIR, stdout, stderr, rc, status, measured, message)


@pytest.mark.parametrize("stdout, stderr, rc, status, measured, message", [
    ("ddp-nccl-1rank.txt", None, 0, "pass", "loss 1.657 -> 0.1331, 1 ranks on vm, nccl, weights identical",
     "1 rank(s) on 1 node(s) trained 50 steps with nccl: the mean of the last 5 losses is 0.083 x the first "
     "(limit 0.5 x) and every rank holds identical weights."),
    ("ddp-torchrun-1gpu.txt", None, 0, "pass", "loss 1.657 -> 0.1331, 1 ranks on vm, nccl, weights identical", None),
    ("ddp-gloo-2ranks.txt", None, 0, "pass", "loss 1.762 -> 0.1311, 2 ranks on vm, gloo, weights identical", None),
    ("ddp-nccl-one-more-rank.txt", "ddp-nccl-one-more-rank.txt.stderr", 1, "fail", None,
     "the job printed 0 result lines (rc=1): gpucluster-ddp-smoke: error: local rank 1 has no GPU: 1 visible "
     "(CUDA_VISIBLE_DEVICES=unset); start at most 1 process(es) per node"),
])
def test_ddp_result_of_the_runs_on_a_real_h100(stdout, stderr, rc, status, measured, message):
    """The same runs on a lent H100 (tests/unit/fixtures/h100-80gb-hbm3-driver580-b): same seed, same losses."""
    check_ddp_run("h100-80gb-hbm3-driver580-b", stdout, stderr, rc, status, measured, message)


def check_ddp_run(capture, stdout, stderr, rc, status, measured, message):
    out = ddp_result(read_fixture(capture, stdout), ["vm"], rc, read_fixture(capture, stderr) if stderr else "")
    assert (out["status"], out["measured"], out["hosts"]) == (status, measured, ["vm"])
    if message:
        assert out["message"] == message
    assert len(out["series"]) == (50 if status == "pass" else 0)


def test_inputs_are_not_mutated():
    slurm = slurm_view()
    before = copy.deepcopy(slurm)
    node_actions({"adev2": "pass"}, {}, slurm, "drain", PREFIX)
    assert slurm == before


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
    pytest.param({"resume": {"results": [_item("gpu03", 1, "x" * 500 + " end")]}},
                 ["resume gpu03: " + ("x" * 500 + " end")[-300:]], id="long-error-tail"),
    pytest.param({"drain": {"results": [{"skipped": True, "item": {"host": "gpu04"}}]}}, [], id="skipped-item"),
])
def test_failed_actions(actions, want):
    assert failed_actions(actions) == want


# ---------------------------------------------------------------------------
# Kubernetes: a GPU pod on every GPU node. The pods as kubectl printed them on the
# kubernetes scenario's cluster (v1.20.2, gpu01 with the emulated 8x V100S; tests/unit/fixtures/
# kubernetes, SOURCES.md): the validation's pod that listed 8 GPUs, one whose image is not
# there, one asking for 9 GPUs, one given no GPU; and all namespaces while train-0 holds 2 GPUs.
# ---------------------------------------------------------------------------

PODS = read_fixture("kubernetes", "kubectl-get-pods-validation-states-v1.20.2.json")
ALL_PODS = read_fixture("kubernetes", "kubectl-get-pods-all-namespaces-gpu-held-v1.20.2.json")
POD_SETTINGS = {"run": "20261126T1600Z", "namespace": "gpucluster-validation", "image": "gpc-test.local/gpu-check:v1",
                "runtime_class": "nvidia", "resource": "nvidia.com/gpu", "timeout": 120}
POD_NAMES = ["gpucluster-validation-gpu-gpu01", "gpucluster-validation-gpu-nine", "gpucluster-validation-gpu-none",
             "gpucluster-validation-gpu-pull"]
SCHEDULER = "0/3 nodes are available: 1 Insufficient nvidia.com/gpu, 2 node(s) didn't match Pod's node affinity."


def kube_nodes(**cordons):
    """Kubernetes' view of gpu01..gpu03 (parse_kubectl_nodes' shape); cordons: host -> mark (None: an admin's)."""
    out = {}
    for host in ("gpu01", "gpu02", "gpu03"):
        cordoned = host in cordons
        out[host] = {"node": host, "unschedulable": cordoned, "mark": cordons.get(host), "stale": False,
                     "devices": {"nvidia.com/gpu": 8}}
    return out


def test_gpus_in_use_of_a_real_cluster():
    # train-0 (default) holds 2 GPUs on gpu01; the control plane, the operator's pods (not started:
    # no image) and gpc-verify-gpu02 hold none
    assert gpus_in_use(ALL_PODS, "nvidia.com/gpu") == {"gpu01": ["default/train-0 (2)"]}
    assert gpus_in_use(ALL_PODS, "nvidia.com/mig-1g.10gb") == {}
    # the validation's own pods never count
    assert gpus_in_use(PODS, "nvidia.com/gpu") == {}


def test_gpus_in_use_counts_init_containers_as_the_scheduler_does():
    pod = {"metadata": {"name": "p", "namespace": "ml"}, "spec": {"nodeName": "gpu02", "containers": [
        {"resources": {"limits": {"nvidia.com/gpu": "1"}}}, {"resources": {"requests": {"nvidia.com/gpu": "2"}}}],
        "initContainers": [{"resources": {"limits": {"nvidia.com/gpu": "4"}}}]}, "status": {"phase": "Pending"}}
    assert gpus_in_use(json.dumps({"items": [pod]}), "nvidia.com/gpu") == {"gpu02": ["ml/p (4)"]}
    pod["spec"]["initContainers"] = []
    assert gpus_in_use(json.dumps({"items": [pod]}), "nvidia.com/gpu") == {"gpu02": ["ml/p (3)"]}


@pytest.mark.parametrize("text, message", [
    ("Error from server (Forbidden)", "kubectl get pods: the output is not JSON (Expecting value: line 1 column 1 (char 0))"),
    ('{"kind": "PodList"}', "kubectl get pods: the output has no items list (a PodList)"),
    ('{"items": [{"metadata": {}}]}', "kubectl get pods: item 0 has no metadata.name"),
    ('{"items": [{"metadata": {"name": "p"}, "spec": {"nodeName": "n", "containers": [{"resources": {"limits": '
     '{"nvidia.com/gpu": "1k"}}}]}}]}', "kubectl get pods: pod p asks for '1k' nvidia.com/gpu, not a whole number"),
], ids=["not-json", "no-items", "no-name", "quantity"])
def test_gpus_in_use_errors(text, message):
    with pytest.raises(RuleError) as exc:
        gpus_in_use(text, "nvidia.com/gpu")
    assert str(exc.value) == message


def test_gpu_pod_plan_chooses_the_nodes_and_makes_the_pods():
    plan = gpu_pod_plan(["gpu03", "gpu01", "gpu02", "cpu1", "gpu10"],
                        dict(kube_nodes(gpu02=None, gpu03="gpucluster-validation: gpu_count"),
                             gpu10={"node": "gpu10.lab", "unschedulable": False, "mark": None, "stale": False,
                                    "devices": {"nvidia.com/gpu": 8}}),
                        {"gpu01": "pass", "gpu02": "pass", "gpu03": "warn", "gpu10": "fail", "cpu1": "pass"},
                        {"gpu01": 8, "gpu02": 8, "gpu03": 4, "gpu10": 8, "cpu1": 0},
                        {}, POD_SETTINGS)
    # gpu02: an admin's cordon; gpu10: passive checks failed; cpu1: no GPU (and unknown to Kubernetes).
    # gpu03, cordoned by this validation, is tested again.
    assert plan["pods"] == {"gpu01": {"name": "gpucluster-validation-gpu-gpu01", "node": "gpu01", "gpus": 8},
                            "gpu03": {"name": "gpucluster-validation-gpu-gpu03", "node": "gpu03", "gpus": 4}}
    assert plan["skipped"] == []
    namespace, pod01, pod03 = plan["manifest"]["items"]
    assert plan["manifest"]["kind"] == "List"
    assert namespace == {"apiVersion": "v1", "kind": "Namespace", "metadata": {
        "name": "gpucluster-validation", "labels": {"app.kubernetes.io/managed-by": "gpucluster-validation"}}}
    assert pod03["metadata"] == {"name": "gpucluster-validation-gpu-gpu03", "namespace": "gpucluster-validation",
                                 "labels": {"app.kubernetes.io/name": "gpu-check",
                                            "app.kubernetes.io/managed-by": "gpucluster-validation",
                                            "gpucluster.core/validation-run": "20261126T1600Z"}}
    spec = pod03["spec"]
    assert spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] == {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["gpu03"]}]}]}
    assert spec["tolerations"] == [{"operator": "Exists", "effect": "NoSchedule"}]
    assert (spec["restartPolicy"], spec["activeDeadlineSeconds"], spec["runtimeClassName"]) == ("Never", 120, "nvidia")
    assert (spec["automountServiceAccountToken"], spec["terminationGracePeriodSeconds"]) == (False, 1)
    (container,) = spec["containers"]
    assert (container["image"], container["command"], container["resources"]) == (
        "gpc-test.local/gpu-check:v1", ["nvidia-smi", "-L"], {"limits": {"nvidia.com/gpu": "4"}})
    assert container["securityContext"] == {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]},
                                            "seccompProfile": {"type": "RuntimeDefault"}}
    assert pod01["spec"]["containers"][0]["resources"] == {"limits": {"nvidia.com/gpu": "8"}}


def test_gpu_pod_plan_skips_a_busy_node_and_the_runtime_class_can_be_left_out():
    plan = gpu_pod_plan(["gpu01", "gpu02"], kube_nodes(), {"gpu01": "pass", "gpu02": "pass"}, {"gpu01": 8, "gpu02": 8},
                        gpus_in_use(ALL_PODS, "nvidia.com/gpu"), dict(POD_SETTINGS, runtime_class=""))
    assert list(plan["pods"]) == ["gpu02"]
    assert "runtimeClassName" not in plan["manifest"]["items"][1]["spec"]
    assert plan["skipped"] == [{
        "check": "kubernetes_gpu_pod", "hosts": ["gpu01"], "measured": None, "expected": 8, "unit": "GPUs",
        "source": "a pod asking for 8 nvidia.com/gpu (gpc-test.local/gpu-check:v1, nvidia-smi -L)", "series": [],
        "status": "skip", "message": "its GPUs are in use by default/train-0 (2): no GPU pod on a busy node"}]


def test_gpu_pod_plan_without_a_device_plugin_or_the_pods():
    view = kube_nodes()
    view["gpu01"]["devices"] = {}  # the device plugin not registered (yet)
    view["gpu02"]["devices"] = {"nvidia.com/gpu": 7}  # one GPU short: the pod runs, the scheduler refuses it
    plan = gpu_pod_plan(["gpu01", "gpu02", "gpu03"], view, {}, {"gpu01": 8, "gpu02": 8}, {}, POD_SETTINGS)
    # gpu03's passive checks did not run: Kubernetes' count stands in (its UUIDs are not known)
    assert {h: p["gpus"] for h, p in plan["pods"].items()} == {"gpu02": 8, "gpu03": 8}
    assert [(r["hosts"], r["status"], r["message"]) for r in plan["skipped"]] == [
        (["gpu01"], "warn", "Kubernetes advertises no nvidia.com/gpu on gpu01 (no device plugin there yet: the GPU "
                            "Operator not deployed, or its device plugin still starting): no GPU pod")]
    plan = gpu_pod_plan(["gpu01", "gpu02"], kube_nodes(), {}, {"gpu01": 8, "gpu02": 8}, None, POD_SETTINGS,
                        "kubectl exited 1: Error from server (Forbidden): pods is forbidden: User \"ops\" cannot list "
                        "resource \"pods\" in API group \"\" at the cluster scope")
    assert plan["pods"] == {}
    assert [(r["hosts"], r["status"]) for r in plan["skipped"]] == [(["gpu01"], "warn"), (["gpu02"], "warn")]
    assert plan["skipped"][0]["message"] == (
        "could not read the pods that hold GPUs (kubectl exited 1: Error from server (Forbidden): pods is forbidden: "
        "User \"ops\" cannot list resource \"pods\" in API group \"\" at the cluster scope): no GPU pod")


def test_gpu_pod_name_stays_a_dns_subdomain():
    assert gpu_pod_name("gpu01.lab.example.org") == "gpucluster-validation-gpu-gpu01.lab.example.org"
    long_name = gpu_pod_name("n" * 240)
    assert len(long_name) == 253 and long_name.startswith("gpucluster-validation-gpu-nnn")
    assert gpu_pod_name("n" * 240) != gpu_pod_name("n" * 239 + "m")
    # the cut never ends a label with a dot or a dash
    assert gpu_pod_name("n" * 217 + ".x" * 20)[:-9].endswith("n")


def test_gpu_pods_waiting_on_real_pod_states():
    # completed, failed and image not pulled: nothing to wait for; unschedulable: a minute
    assert gpu_pods_waiting(PODS, POD_NAMES, 5) == ["gpucluster-validation-gpu-nine"]
    assert gpu_pods_waiting(PODS, POD_NAMES, 60) == []
    assert gpu_pods_waiting(PODS, POD_NAMES + ["gone"], 5, schedule_wait=3) == []


def pod_plan(*hosts_names):
    return {"pods": {host: {"name": name, "node": "gpu01", "gpus": gpus} for host, name, gpus in hosts_names},
            "skipped": []}


def test_gpu_pod_results_on_real_pod_states():
    plan = pod_plan(("gpu01", "gpucluster-validation-gpu-gpu01", 8), ("gpu02", "gpucluster-validation-gpu-nine", 9),
                    ("gpu03", "gpucluster-validation-gpu-none", 1), ("gpu04", "gpucluster-validation-gpu-pull", 1),
                    ("gpu05", "gpucluster-validation-gpu-gone", 8))
    logs = {"gpucluster-validation-gpu-gpu01": {"rc": 0, "stdout": read_fixture("kubernetes", "kubectl-logs-gpu-check-v1.20.2.txt")},
            "gpucluster-validation-gpu-none": {"rc": 0, "stdout": read_fixture("kubernetes", "kubectl-logs-gpu-check-no-gpu-v1.20.2.txt")}}
    lists = {"gpucluster-validation-gpu-gpu01": v100_uuids(),
             "gpucluster-validation-gpu-none": "nvidia-smi -L: line 1 is not a GPU or MIG device line: 'No devices were found'"}
    results = gpu_pod_results(plan, {"rc": 0}, PODS, logs, {"gpu01": v100_uuids()}, lists, POD_SETTINGS)
    assert [(r["hosts"], r["status"], r["measured"], r["message"]) for r in results] == [
        (["gpu01"], "pass", 8, "the pod saw the node's 8 GPUs"),
        (["gpu02"], "fail", None, "not scheduled on gpu01: " + SCHEDULER),
        (["gpu03"], "fail", None, "the pod failed (exit 6 (Error)): No devices were found"),
        (["gpu04"], "warn", None, 'could not pull gpc-test.local/gpu-check:v1 (ImagePullBackOff: Back-off pulling image '
                                  '"gpc-test.local/absent:v1"); set validation_gpu_container_image to an image the nodes '
                                  'can pull'),
        (["gpu05"], "fail", None, "the pod gpucluster-validation-gpu-gone was gone before it ended"),
    ]
    assert results[0]["source"] == "a pod asking for 8 nvidia.com/gpu (gpc-test.local/gpu-check:v1, nvidia-smi -L)"
    assert {r["check"] for r in results} == {"kubernetes_gpu_pod"}


def test_gpu_pod_results_other_gpus_and_no_list():
    plan = pod_plan(("gpu01", "gpucluster-validation-gpu-gpu01", 8))
    other = v100_uuids()[1:] + ["GPU-8ca33e10-291f-cd98-b007-e77292564a65"]
    out = gpu_pod_results(plan, {"rc": 0}, PODS, {}, {"gpu01": v100_uuids()},
                          {"gpucluster-validation-gpu-gpu01": other}, POD_SETTINGS)
    assert (out[0]["status"], out[0]["measured"], out[0]["message"]) == (
        "fail", 8, "the pod saw 8 GPUs, the node has 8: missing %s; not the node's: "
                   "GPU-8ca33e10-291f-cd98-b007-e77292564a65" % v100_uuids()[0])
    # the pod ended but the API server could not fetch its log (kubelet not reachable): not the GPUs
    err = read_fixture("kubernetes", "kubectl-logs-gpu-check-not-pulled-v1.20.2.stderr.txt")
    out = gpu_pod_results(plan, {"rc": 0}, PODS, {"gpucluster-validation-gpu-gpu01": {"rc": 1, "stderr": err}},
                          {"gpu01": v100_uuids()}, {}, POD_SETTINGS)
    assert (out[0]["status"], out[0]["message"]) == (
        "warn", "the pod ended, but its output could not be read (kubectl logs: " + " ".join(err.split()) + ")")
    out = gpu_pod_results(plan, {"rc": 0}, PODS, {"gpucluster-validation-gpu-gpu01": {"rc": 0, "stdout": ""}},
                          {"gpu01": v100_uuids()}, {"gpucluster-validation-gpu-gpu01": "nvidia-smi -L: no GPU listed"},
                          POD_SETTINGS)
    assert (out[0]["status"], out[0]["message"]) == (
        "fail", "nvidia-smi -L in the pod printed no GPU list (nvidia-smi -L: no GPU listed): no output")


def test_gpu_pod_results_when_the_pods_could_not_be_created():
    plan = pod_plan(("gpu01", "gpucluster-validation-gpu-gpu01", 8))
    plan["skipped"] = [{"check": "kubernetes_gpu_pod", "hosts": ["gpu02"], "status": "skip", "message": "busy"}]
    err = ('Error from server (Forbidden): error when creating "STDIN": pods "gpucluster-validation-gpu-gpu01" is '
           'forbidden: pod rejected: RuntimeClass "nvidia" not found')
    out = gpu_pod_results(plan, {"rc": 1, "stderr": err}, '{"items": []}', {}, {}, {}, POD_SETTINGS)
    assert [(r["hosts"], r["status"]) for r in out] == [(["gpu01"], "warn"), (["gpu02"], "skip")]
    assert out[0]["message"] == (
        "the pod could not be created (kubectl apply exited 1: %s); check validation_kubernetes_namespace, "
        "validation_kubernetes_runtime_class and validation_gpu_container_image" % err)
    # kubectl creates what it can of a list: a pod that is there is judged as any other
    plan = pod_plan(("gpu01", "gpucluster-validation-gpu-gpu01", 8), ("gpu02", "gpucluster-validation-gpu-gpu02", 8))
    out = gpu_pod_results(plan, {"rc": 1, "stderr": err}, PODS, {}, {"gpu01": v100_uuids()},
                          {"gpucluster-validation-gpu-gpu01": v100_uuids()}, POD_SETTINGS)
    assert [(r["hosts"], r["status"]) for r in out] == [(["gpu01"], "pass"), (["gpu02"], "warn")]
    assert out[1]["message"].startswith("the pod could not be created (kubectl apply exited 1: ")


def test_gpu_pod_results_when_the_pods_could_not_be_read():
    plan = pod_plan(("gpu01", "gpucluster-validation-gpu-gpu01", 8))
    out = gpu_pod_results(plan, {"rc": 0, "read_error": "kubectl exited 1: Unable to connect to the server: EOF"},
                          None, {}, {}, {}, POD_SETTINGS)
    assert [(r["status"], r["message"]) for r in out] == [
        ("warn", "could not read the pods after the wait (kubectl exited 1: Unable to connect to the server: EOF)")]


def test_gpu_pod_results_timed_out():
    pods = json.loads(PODS)
    pending = copy.deepcopy(next(p for p in pods["items"] if p["metadata"]["name"] == "gpucluster-validation-gpu-nine"))
    pending["status"] = {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "True"}],
                         "containerStatuses": [{"state": {"waiting": {"reason": "ContainerCreating"}}}]}
    running = copy.deepcopy(pending)
    running["metadata"]["name"] = "gpucluster-validation-gpu-run"
    running["status"] = {"phase": "Running", "containerStatuses": [{"state": {"running": {}}}]}
    text = json.dumps({"items": [pending, running]})
    plan = pod_plan(("gpu01", "gpucluster-validation-gpu-nine", 9), ("gpu02", "gpucluster-validation-gpu-run", 8))
    assert gpu_pods_waiting(text, list(p["name"] for p in plan["pods"].values()), 100) == [
        "gpucluster-validation-gpu-nine", "gpucluster-validation-gpu-run"]
    out = gpu_pod_results(plan, {"rc": 0}, text, {}, {}, {}, POD_SETTINGS)
    assert [r["message"] for r in out] == ["did not start within 120s (ContainerCreating)", "still running after 120s"]


# ---------------------------------------------------------------------------
# Kubernetes: the DDP smoke test as a PyTorchJob. No training operator controller runs on these
# machines: the job states below are built from the kubeflow.org/v1 API (JobStatus conditions of
# type Created, Running, Succeeded, Failed); the rank 0 line is the script's real output (H200).
# ---------------------------------------------------------------------------

DDP_SETTINGS = dict(POD_SETTINGS, image="registry.lab/pytorch:2.5.1-cuda12.4", nodes=2, steps=50, operator_wait=60,
                    script="print('ddp')\n")


def gpu_pod(host, status):
    return {"check": "kubernetes_gpu_pod", "hosts": [host], "status": status}


def test_ddp_job_plan_prefers_gpu_nodes_whose_pod_passed():
    view = dict(kube_nodes(gpu03="gpucluster-validation: kubernetes_gpu_pod"),
                cp1={"node": "cp1", "unschedulable": False, "mark": None, "stale": False, "devices": {}},
                cp2={"node": "cp2", "unschedulable": True, "mark": None, "stale": False, "devices": {}})
    pods = [gpu_pod("gpu01", "fail"), gpu_pod("gpu02", "pass"), gpu_pod("gpu03", "pass")]
    plan = ddp_job_plan(["cp1", "cp2", "gpu01", "gpu02", "gpu03"], view, {}, pods, DDP_SETTINGS)
    # gpu01's GPU pod failed; gpu03 (cordoned by this validation) passed it again; cp2 is an admin's
    assert (plan["hosts"], plan["nodes"], plan["gpu"], plan["why"]) == (["gpu02", "gpu03"], ["gpu02", "gpu03"], True, None)
    config, job = plan["manifest"]["items"]
    assert config == {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
        "name": "gpucluster-validation-ddp", "namespace": "gpucluster-validation",
        "labels": {"app.kubernetes.io/name": "ddp-smoke", "app.kubernetes.io/managed-by": "gpucluster-validation",
                   "gpucluster.core/validation-run": "20261126T1600Z"}}, "data": {"gpucluster-ddp-smoke.py": "print('ddp')\n"}}
    assert (job["apiVersion"], job["kind"], job["metadata"]["name"]) == ("kubeflow.org/v1", "PyTorchJob",
                                                                         "gpucluster-validation-ddp")
    assert job["spec"]["runPolicy"] == {"backoffLimit": 0, "activeDeadlineSeconds": 120, "cleanPodPolicy": "None"}
    replicas = job["spec"]["pytorchReplicaSpecs"]
    assert {k: (r["replicas"], r["restartPolicy"]) for k, r in replicas.items()} == {
        "Master": (1, "Never"), "Worker": (1, "Never")}
    spec = replicas["Worker"]["template"]["spec"]
    assert spec["runtimeClassName"] == "nvidia"
    assert spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"] == [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["gpu02", "gpu03"]}]}]
    assert spec["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]["topologyKey"] == \
        "kubernetes.io/hostname"
    (container,) = spec["containers"]
    assert container["name"] == "pytorch"
    assert container["command"] == ["python3", "/opt/gpucluster/gpucluster-ddp-smoke.py", "--backend=nccl", "--steps=50",
                                    "--expect-world-size=2", "--expect-nodes=2"]
    assert container["resources"] == {"limits": {"nvidia.com/gpu": "1"}}
    assert spec["volumes"] == [{"name": "script", "configMap": {"name": "gpucluster-validation-ddp"}}]


def test_ddp_job_plan_on_the_cpu_and_with_too_few_nodes():
    view = dict(kube_nodes(), cp1={"node": "cp1", "unschedulable": False, "mark": None, "stale": False, "devices": {}})
    # a GPU node and a node without GPUs: gloo on the CPU for both, no GPU asked for
    plan = ddp_job_plan(["cp1", "gpu01"], view, {}, [gpu_pod("gpu01", "pass")], DDP_SETTINGS)
    assert (plan["hosts"], plan["gpu"]) == (["gpu01", "cp1"], False)
    spec = plan["manifest"]["items"][1]["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]
    assert "--backend=gloo" in spec["containers"][0]["command"]
    assert "resources" not in spec["containers"][0] and "runtimeClassName" not in spec
    plan = ddp_job_plan(["cp1", "gpu01"], view, {"cp1": "fail"}, [gpu_pod("gpu01", "pass")], DDP_SETTINGS)
    assert plan == {"hosts": [], "nodes": [], "gpu": False, "manifest": {},
                    "why": "1 of the 2 nodes it needs can take part (schedulable, passive checks and GPU pod passed)"}


def job(conditions=None, status=True):
    item = {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "gpucluster-validation-ddp"}}
    if status:
        item["status"] = {"conditions": [dict(c, status=c.get("status", "True")) for c in conditions or []]}
    return json.dumps(item)


CREATED = {"type": "Created", "reason": "PyTorchJobCreated", "message": "PyTorchJob gpucluster-validation-ddp is created."}
RUNNING = {"type": "Running", "reason": "PyTorchJobRunning", "message": "PyTorchJob gpucluster-validation-ddp is running."}
SUCCEEDED = {"type": "Succeeded", "reason": "PyTorchJobSucceeded",
             "message": "PyTorchJob gpucluster-validation-ddp is successfully completed."}
FAILED = {"type": "Failed", "reason": "PyTorchJobFailed",
          "message": "PyTorchJob gpucluster-validation-ddp is failed because 1 Worker replica(s) failed."}


@pytest.mark.parametrize("text, elapsed, state", [
    (job(status=False), 10, ("running", "no status yet")),
    (job(status=False), 60, ("no-operator", "no status")),
    (job([CREATED]), 600, ("running", "Created")),
    (job([CREATED, dict(RUNNING, status="False"), RUNNING]), 5, ("running", "Created, Running")),
    (job([CREATED, dict(RUNNING, status="False"), SUCCEEDED]), 5,
     ("succeeded", "PyTorchJobSucceeded PyTorchJob gpucluster-validation-ddp is successfully completed.")),
    (job([CREATED, FAILED]), 5,
     ("failed", "PyTorchJobFailed PyTorchJob gpucluster-validation-ddp is failed because 1 Worker replica(s) failed.")),
], ids=["new", "no-operator", "created", "running", "succeeded", "failed"])
def test_ddp_job_state(text, elapsed, state):
    assert ddp_job_state(text, elapsed, 60) == state


@pytest.mark.parametrize("text, message", [
    ("Error from server (NotFound)", "kubectl get pytorchjob: the output is not JSON (Expecting value: line 1 column 1 (char 0))"),
    ('{"kind": "Status"}', "kubectl get pytorchjob: the output is not a PyTorchJob"),
], ids=["not-json", "not-a-job"])
def test_ddp_job_state_errors(text, message):
    with pytest.raises(RuleError) as exc:
        ddp_job_state(text, 0, 60)
    assert str(exc.value) == message


H200_RESULT = read_fixture("h200-driver580", "ddp-gloo-2ranks.txt")
DDP_PLAN = {"hosts": ["gpu02", "gpu03"]}


@pytest.mark.parametrize("created, text, logs, status, message", [
    ({"rc": 0}, job([CREATED, SUCCEEDED]), {"rc": 0, "stdout": H200_RESULT}, "pass",
     "2 rank(s) on 1 node(s) trained 50 steps with gloo: the mean of the last 5 losses is 0.0698 x the first "
     "(limit 0.5 x) and every rank holds identical weights."),
    ({"rc": 0}, job([CREATED, FAILED]), {"rc": 0, "stdout": ""}, "fail",
     "the job printed 0 result lines (rc=1): PyTorchJobFailed PyTorchJob gpucluster-validation-ddp is failed because 1 "
     "Worker replica(s) failed."),
    ({"rc": 0}, job([CREATED, RUNNING]), {}, "fail",
     "the PyTorchJob still ran after 120s (Created, Running)"),
    ({"rc": 0}, job(status=False), {}, "warn",
     "the training operator did not take the PyTorchJob within 60s (no status): is its controller running?"),
    ({"rc": 1, "stderr": 'error: unable to recognize "STDIN": no matches for kind "PyTorchJob" in version "kubeflow.org/v1"'},
     None, {}, "warn",
     'could not submit the PyTorchJob (kubectl apply exited 1: error: unable to recognize "STDIN": no matches for kind '
     '"PyTorchJob" in version "kubeflow.org/v1"); is the training operator installed (the training_operator role)?'),
    ({"rc": 0, "read_error": "kubectl exited 1: Unable to connect to the server: EOF"}, None, {}, "warn",
     "could not read the PyTorchJob after the wait (kubectl exited 1: Unable to connect to the server: EOF)"),
    ({"rc": 0}, job([CREATED, SUCCEEDED]),
     {"rc": 1, "stderr": "Error from server: Get \"https://10.0.0.11:10250/containerLogs/...\": dial tcp "
                         "10.0.0.11:10250: i/o timeout"},
     "warn", "the PyTorchJob succeeded, but its pods' logs could not be read (kubectl logs: Error from server: Get "
             "\"https://10.0.0.11:10250/containerLogs/...\": dial tcp 10.0.0.11:10250: i/o timeout)"),
    ({"rc": 0}, job([CREATED, SUCCEEDED]), {"rc": 0, "stdout": "Traceback (most recent call last):\n"}, "fail",
     "the job printed 0 result lines (rc=0): Traceback (most recent call last):"),
], ids=["succeeded", "failed", "timeout", "no-operator", "no-crd", "unread", "no-logs", "no-result-line"])
def test_ddp_job_result(created, text, logs, status, message):
    (result,) = ddp_job_result(DDP_PLAN, created, text, logs, DDP_SETTINGS)
    assert (result["check"], result["status"], result["message"], result["hosts"]) == (
        "ddp_smoke", status, message, ["gpu02", "gpu03"])
    assert result["source"] == "gpucluster-ddp-smoke.py as a PyTorchJob (registry.lab/pytorch:2.5.1-cuda12.4)"


def test_ddp_job_result_without_nodes():
    assert ddp_job_result({"hosts": [], "why": "1 of the 2 nodes"}, {}, None, {}, DDP_SETTINGS) == []


# ---------------------------------------------------------------------------
# What the tasks run: host_plan, checks_run, kubernetes_view, cordon_patch
# ---------------------------------------------------------------------------

BOTH = ["passive", "active"]
COMPUTE = ["gpu01", "gpu02", "cpu01"]
IB_WRITE_BW = "/usr/bin/ib_write_bw"


def host_part(active, programs, ddp, fabric_tools):
    return {"active": active, "programs": programs, "ddp": ddp, "fabric_tools": fabric_tools}


@pytest.mark.parametrize("host, checks, controller, compute, ddp, perftest, want", [
    # the controller drives the GPU jobs; it is no compute node: no DDP, no fabric tools
    ("head", BOTH, "head", COMPUTE, True, IB_WRITE_BW, host_part(True, ["gpucluster-gpu-jobs"], False, False)),
    # a compute node runs ib_write_bw pairs and the DDP smoke test
    ("gpu01", BOTH, "head", COMPUTE, True, IB_WRITE_BW, host_part(True, ["gpucluster-ib-pair"], True, True)),
    # no perftest named: no ib pair program; DDP off
    ("cpu01", BOTH, "head", COMPUTE, False, "", host_part(True, [], False, True)),
    # a controller that computes too runs both programs
    ("head", BOTH, "head", ["head"], True, IB_WRITE_BW,
     host_part(True, ["gpucluster-gpu-jobs", "gpucluster-ib-pair"], True, True)),
    # a host that is neither (a login node)
    ("login", BOTH, "head", COMPUTE, True, IB_WRITE_BW, host_part(False, [], False, False)),
    # no Slurm controller ('') and a host of no group
    ("login", BOTH, "", [], True, IB_WRITE_BW, host_part(False, [], False, False)),
    # the active checks are not asked for: nothing anywhere
    ("head", ["passive"], "head", COMPUTE, True, IB_WRITE_BW, host_part(False, [], False, False)),
    ("gpu01", ["passive"], "head", COMPUTE, True, IB_WRITE_BW, host_part(False, [], False, False)),
    ("gpu01", [], "head", COMPUTE, True, IB_WRITE_BW, host_part(False, [], False, False)),
])
def test_host_plan(host, checks, controller, compute, ddp, perftest, want):
    got = host_plan(host, checks, controller, compute, ddp, perftest)
    assert got == want
    # the tasks' when: conditions take them as they are: real booleans
    assert all(isinstance(got[key], bool) for key in ("active", "ddp", "fabric_tools"))


NO_ACTIVE = ("no Slurm controller (group slurm_controller) and no Kubernetes control plane (group k8s_control_plane) in the "
             "inventory: the active checks run as Slurm jobs and Kubernetes pods")


@pytest.mark.parametrize("checks, controller, api, want", [
    (BOTH, "head", "", {"run": BOTH, "not_run": {}}),
    (BOTH, "", "cp1", {"run": BOTH, "not_run": {}}),
    (BOTH, "head", "cp1", {"run": BOTH, "not_run": {}}),
    # neither: the active checks are named as not run, with why
    (BOTH, "", "", {"run": ["passive"], "not_run": {"active": NO_ACTIVE}}),
    (["active"], "", "", {"run": [], "not_run": {"active": NO_ACTIVE}}),
    # not asked for: nothing to name
    (["passive"], "", "", {"run": ["passive"], "not_run": {}}),
    ([], "", "", {"run": [], "not_run": {}}),
])
def test_checks_run(checks, controller, api, want):
    assert checks_run(checks, controller, api, "slurm_controller", "k8s_control_plane") == want


def kubectl_read(rc, stdout="", stderr=""):
    """A registered ansible.builtin.command result of kubectl (the keys the view reads and some)."""
    return {"changed": False, "cmd": ["kubectl", "get", "nodes", "--output=json"], "rc": rc, "stdout": stdout,
            "stderr": stderr, "failed": False}


REFUSED = "The connection to the server 10.0.0.1:6443 was refused - did you specify the right host or port?"
KDEV = kube_list(kube_node("kdev1"), kube_node("kdev2", True, {MARK: "gpucluster-validation: xid"}))
KDEV_VIEW = {
    "kdev1": {"node": "kdev1", "unschedulable": False, "mark": None, "stale": False, "devices": {}},
    "kdev2": {"node": "kdev2", "unschedulable": True, "mark": "gpucluster-validation: xid", "stale": False, "devices": {}},
}


@pytest.mark.parametrize("read, api, want", [
    # read on the control plane node: its view, and the node it was read on
    (kubectl_read(0, KDEV), "cp1", {"nodes": KDEV_VIEW, "read": "cp1"}),
    # no Kubernetes: the read was skipped
    ({"changed": False, "skipped": True, "skip_reason": "Conditional result (False) was False", "false_condition": "x"}, "",
     {"nodes": {}, "read": "none"}),
    # kubectl failed: no view, the report says why (its error output, trimmed)
    (kubectl_read(1, "", "  " + REFUSED + "\n"), "cp1",
     {"nodes": {}, "read": "cp1 (kubectl get nodes failed, nothing cordoned: %s)" % REFUSED}),
    # no kubectl on the node: the module's message (there is no error output)
    ({"changed": False, "cmd": "kubectl get nodes --output=json", "failed": True, "rc": 2,
      "msg": "[Errno 2] No such file or directory: b'kubectl'"}, "cp1",
     {"nodes": {}, "read": "cp1 (kubectl get nodes failed, nothing cordoned: [Errno 2] No such file or directory: b'kubectl')"}),
    # error output present but empty: it is what is said (no message)
    (kubectl_read(1, "", ""), "cp1", {"nodes": {}, "read": "cp1 (kubectl get nodes failed, nothing cordoned: )"}),
    # at most 200 characters of it
    (kubectl_read(1, "", "x" * 250), "cp1", {"nodes": {}, "read": "cp1 (kubectl get nodes failed, nothing cordoned: %s)" % ("x" * 200)}),
    # no return code at all (the task did not run): no view
    ({"msg": "no rc"}, "cp1", {"nodes": {}, "read": "cp1 (kubectl get nodes failed, nothing cordoned: no rc)"}),
])
def test_kubernetes_view(read, api, want):
    assert kubernetes_view(read, api, {"kdev1": "kdev1", "kdev2": "kdev2", "kdev3": "kdev3"}, MARK) == want


def test_kubernetes_view_of_output_that_is_not_a_node_list():
    with pytest.raises(RuleError, match="^kubectl get nodes: the output is not JSON"):
        kubernetes_view(kubectl_read(0, "error: You must be logged in to the server (Unauthorized)"), "cp1", {}, MARK)


@pytest.mark.parametrize("cordon, reason, want", [
    (True, "gpucluster-validation: xid,gpu_count",
     '{"spec": {"unschedulable": true}, "metadata": {"annotations": {"gpucluster.core/validation-cordon": '
     '"gpucluster-validation: xid,gpu_count"}}}'),
    (False, None, '{"spec": {"unschedulable": false}, "metadata": {"annotations": {"gpucluster.core/validation-cordon": null}}}'),
    # an uncordon removes the mark whatever reason is given
    (False, "gpucluster-validation: xid",
     '{"spec": {"unschedulable": false}, "metadata": {"annotations": {"gpucluster.core/validation-cordon": null}}}'),
])
def test_cordon_patch(cordon, reason, want):
    assert cordon_patch(MARK, cordon, reason) == want
