# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The quarantine loop (playbooks/quarantine.yml, issue 32 item 5): its settings, the nodes it
retests from Slurm's real ``scontrol show node`` format, its own checks, and the verdict per node
(resume, RMA with the GPUs' serial numbers, keep in quarantine) in the validation document."""

from __future__ import annotations

import pytest

from ansible_collections.gpucluster.core.plugins.filter.quarantine import FilterModule
from ansible_collections.gpucluster.core.plugins.plugin_utils.validation._plan import parse_scontrol_nodes
from ansible_collections.gpucluster.core.plugins.plugin_utils.validation._quarantine import (
    decide,
    gpu_serials,
    nccl_node_result,
    node_checks,
    quarantine_candidates,
    quarantine_errors,
    stress_result,
    suspect_checks,
    verdict,
)
from ansible_collections.gpucluster.core.plugins.plugin_utils.validation._report import (
    render_html,
    render_markdown,
    summary_lines,
    validate_document,
)
from ansible_collections.gpucluster.core.tests.unit.plugins.plugin_utils.validation.validation_helpers import (
    PREFIX,
    node_text,
)

GOOD = {"quarantine_dcgm_diag_level": 3, "quarantine_stress_command": [], "quarantine_job_timeout": 3600,
        "validation_reason_prefix": PREFIX}


# ---------------------------------------------------------------------------
# Settings
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("change, want", [
    ({}, []),
    ({"quarantine_dcgm_diag_level": "4", "quarantine_stress_command": ["gpu_burn", "-d", "60"],
      "quarantine_job_timeout": "60"}, []),
    ({"quarantine_dcgm_diag_level": 5},
     ["quarantine_dcgm_diag_level: must be one of 0, 1, 2, 3, 4 (dcgmi diag -r; 0 runs none) (got 5)"]),
    ({"quarantine_dcgm_diag_level": "three"},
     ["quarantine_dcgm_diag_level: must be one of 0, 1, 2, 3, 4 (dcgmi diag -r; 0 runs none) (got 'three')"]),
    ({"quarantine_dcgm_diag_level": True},
     ["quarantine_dcgm_diag_level: must be one of 0, 1, 2, 3, 4 (dcgmi diag -r; 0 runs none) (got True)"]),
    ({"quarantine_stress_command": "gpu_burn 60"},
     ["quarantine_stress_command: must be a list of words, the program first ([] runs none) (got 'gpu_burn 60')"]),
    ({"quarantine_stress_command": ["gpu_burn", ""]},
     ["quarantine_stress_command: must be a list of words, the program first ([] runs none) (got ['gpu_burn', ''])"]),
    ({"quarantine_job_timeout": 59}, ["quarantine_job_timeout: must be seconds within 60-86400 (got 59)"]),
    ({"validation_reason_prefix": "rma:"},
     ["validation_reason_prefix: must be a non-empty text not starting with 'rma:' (got 'rma:')"]),
    ({"quarantine_dcgm_diag_level": -1, "quarantine_job_timeout": None, "validation_reason_prefix": " "},
     ["quarantine_dcgm_diag_level: must be one of 0, 1, 2, 3, 4 (dcgmi diag -r; 0 runs none) (got -1)",
      "quarantine_job_timeout: must be seconds within 60-86400 (got None)",
      "validation_reason_prefix: must be a non-empty text not starting with 'rma:' (got ' ')"]),
])
def test_quarantine_errors(change, want):
    assert quarantine_errors(dict(GOOD, **change)) == want


# ---------------------------------------------------------------------------
# The nodes to retest
# ---------------------------------------------------------------------------

def cluster():
    """Slurm's listing: every kind of drained node the quarantine meets, and two in service."""
    return parse_scontrol_nodes("\n".join([
        node_text(name="gpu1", state="IDLE+DRAIN", reason="gpucluster-validation: gpu_count [root@06/02-14:01:24]"),
        node_text(name="gpu2", state="MIXED+DRAIN", reason="gpucluster-validation: xid [slurm@06/02-14:01:24]"),
        node_text(name="gpu3", state="IDLE+DRAIN", reason="admin-maintenance [root@06/02-14:01:24]"),
        node_text(name="gpu4", state="IDLE+DRAIN", reason="rma: dcgm_diag [root@06/02-14:01:24]"),
        node_text(name="gpu5", state="DOWN+DRAIN+NOT_RESPONDING", reason="gpucluster-validation: xid [root@06/02-14:01:24]"),
        node_text(name="gpu6", state="IDLE+DRAIN", reason="gpucluster-validation: flapping gpu_count,xid [root@06/02-14:01:24]"),
        node_text(name="gpu7", state="IDLE+DRAIN+COMPLETING", reason="gpucluster-validation: xid [root@06/02-14:01:24]"),
        node_text(name="gpu8", state="IDLE", reason=""),
        node_text(name="gpu9", state="ALLOCATED", reason=""),
        node_text(name="gpu10", state="IDLE+DRAIN", reason="gpucluster-validation: pcie_link [root@06/02-14:01:24]"),
        node_text(name="gpu11", state="IDLE+DRAIN", reason="gpucluster-validation: xid [root@06/02-14:01:24]"),
    ]))


HOSTS = ["gpu%d" % i for i in range(1, 11)]


def test_quarantine_candidates():
    assert quarantine_candidates(cluster(), PREFIX, HOSTS) == {
        "retest": ["gpu1", "gpu6", "gpu10"],
        "reasons": {"gpu1": "gpucluster-validation: gpu_count [root@06/02-14:01:24]",
                    "gpu6": "gpucluster-validation: flapping gpu_count,xid [root@06/02-14:01:24]",
                    "gpu10": "gpucluster-validation: pcie_link [root@06/02-14:01:24]"},
        "waiting": [
            {"host": "gpu2", "reason": "gpucluster-validation: xid [slurm@06/02-14:01:24]",
             "why": "jobs still running (MIXED+DRAIN): retested once they end"},
            {"host": "gpu7", "reason": "gpucluster-validation: xid [root@06/02-14:01:24]",
             "why": "jobs still running (IDLE+DRAIN+COMPLETING): retested once they end"}],
        "left": [
            {"host": "gpu3", "reason": "admin-maintenance [root@06/02-14:01:24]", "why": "drained by an admin: never touched"},
            {"host": "gpu4", "reason": "rma: dcgm_diag [root@06/02-14:01:24]",
             "why": "kept out for RMA: repair or replace it, then resume it by hand"},
            {"host": "gpu5", "reason": "gpucluster-validation: xid [root@06/02-14:01:24]",
             "why": "down or not responding: retested once Slurm hears from it"},
            {"host": "gpu11", "reason": "gpucluster-validation: xid [root@06/02-14:01:24]",
             "why": "not in the inventory: cannot be retested"}],
    }


def test_quarantine_candidates_other_prefix():
    """A maintenance prefix: validation's drains are then not its own."""
    plan = quarantine_candidates(cluster(), "gpucluster-maintenance:", HOSTS)
    assert plan["retest"] == [] and plan["waiting"] == []
    assert [entry["host"] for entry in plan["left"]] == ["gpu1", "gpu2", "gpu3", "gpu4", "gpu5", "gpu6", "gpu7", "gpu10", "gpu11"]


@pytest.mark.parametrize("reason, want", [
    ("gpucluster-validation: gpu_count,xid [root@06/02-14:01:24]", ["gpu_count", "xid"]),
    ("gpucluster-validation: flapping gpu_count [root@06/02-14:01:24]", ["gpu_count"]),
    ("gpucluster-validation: flapping", []),
    ("gpucluster-validation:", []),
    ("admin-maintenance", []),
    (None, []),
])
def test_suspect_checks(reason, want):
    assert suspect_checks(reason, PREFIX) == want


# ---------------------------------------------------------------------------
# The quarantine's own checks
# ---------------------------------------------------------------------------

def _active(check, status, message, measured=None, expected=None, unit=None, source=None):
    return {"check": check, "kind": "active", "status": status, "measured": measured, "expected": expected, "unit": unit,
            "source": source, "message": message, "baseline": None}


FOUND = {"rc": 0, "stdout": "/usr/local/bin/gpu_burn"}
MISSING = {"rc": 1, "stdout": ""}
BURN = ["gpu_burn", "-d", "60"]


@pytest.mark.parametrize("command, found, run, want", [
    ([], None, None, _active("gpu_stress", "skip", "no GPU stress command set (quarantine_stress_command)")),
    (BURN, MISSING, None, _active("gpu_stress", "skip", "gpu_burn is not installed on gpu1: no stress run")),
    (BURN, {"skipped": True}, None, _active("gpu_stress", "skip", "gpu_burn is not installed on gpu1: no stress run")),
    (BURN, FOUND, {"rc": 0, "stdout": "GPU 0: OK\nGPU 1: OK\n", "stderr": ""},
     _active("gpu_stress", "pass", "gpu_burn -d 60 exited 0: GPU 0: OK GPU 1: OK", 0, 0, source="gpu_burn -d 60")),
    (BURN, FOUND, {"rc": 1, "stdout": "GPU 0: OK\nGPU 1: FAULTY\n", "stderr": ""},
     _active("gpu_stress", "fail", "gpu_burn -d 60 exited 1: GPU 0: OK GPU 1: FAULTY", 1, 0, source="gpu_burn -d 60")),
    (BURN, FOUND, {"rc": 124, "stdout": "", "stderr": ""},
     dict(_active("gpu_stress", "warn", "gpu_burn -d 60 did not finish within the timeout: not judged",
                  source="gpu_burn -d 60"), tooling=True)),
])
def test_stress_result(command, found, run, want):
    assert stress_result("gpu1", command, found, run) == want


def _nccl_stdout(peak):
    """A single-node all_reduce_perf run as nccl-tests prints it (the header and two sizes)."""
    return "\n".join([
        "# nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 "
        "validation: 1 graph: 0",
        "#",
        "# Using devices",
        "#  Rank  0 Group  0 Pid   1234 on      gpu1 device  0 [0x3b] Tesla V100S-PCIE-32GB",
        "#  Rank  1 Group  0 Pid   1235 on      gpu1 device  1 [0x5e] Tesla V100S-PCIE-32GB",
        "#",
        "#                                                              out-of-place                       in-place          ",
        "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong",
        "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       ",
        "           8             2     float     sum      -1    20.00    0.00    0.00      0    20.00    0.00    0.00      0",
        "  8589934592    2147483648     float     sum      -1   700000  %6.2f  %6.2f      0   700000  %6.2f  %6.2f      0"
        % (peak, peak, peak, peak),
        "# Out of bounds values : 0 OK",
        "# Avg bus bandwidth    : %g " % (peak / 2),
        "#",
    ]) + "\n"


V100S_HW = {"pcie_max_gen": 3}
EXISTS = {"stat": {"exists": True}}


@pytest.mark.parametrize("nccl_dir, found, run, want", [
    ("", None, None, _active("nccl_in_node", "skip", "nccl-tests not installed (validation_nccl_tests_dir is empty)")),
    ("/opt/nccl-tests/build", {"stat": {"exists": False}}, None,
     _active("nccl_in_node", "skip", "/opt/nccl-tests/build/all_reduce_perf is not installed on gpu1")),
    ("/opt/nccl-tests/build", EXISTS, {"rc": 1, "stdout": "", "stderr": "srun: error: Unable to allocate resources"},
     _active("nccl_in_node", "fail", "all_reduce_perf exited 1: srun: error: Unable to allocate resources")),
    ("/opt/nccl-tests/build", EXISTS, {"rc": 0, "stdout": _nccl_stdout(11.5), "stderr": ""},
     _active("nccl_in_node", "pass", "11.5 GB/s measured, >= 11.02 expected", 11.5, 11.02, "GB/s",
             "0.70 x 15.75 GB/s PCIe gen3 x16")),
    ("/opt/nccl-tests/build", EXISTS, {"rc": 0, "stdout": _nccl_stdout(4.0), "stderr": ""},
     _active("nccl_in_node", "fail", "4 GB/s measured, >= 11.02 expected", 4.0, 11.02, "GB/s",
             "0.70 x 15.75 GB/s PCIe gen3 x16")),
])
def test_nccl_node_result(nccl_dir, found, run, want):
    assert nccl_node_result("gpu1", nccl_dir, found, run, V100S_HW, 0.7) == want


def test_nccl_node_result_refuses_output_that_is_not_nccl_tests():
    got = nccl_node_result("gpu1", "/opt/nccl-tests/build", EXISTS, {"rc": 0, "stdout": "hello\n"}, V100S_HW, 0.7)
    assert got["status"] == "fail" and got["message"].startswith("nccl-tests output: ")


def test_node_checks_through_the_filter():
    checks = FilterModule().filters()["quarantine_node_checks"](
        {"stress_found": MISSING, "nccl_found": {"skipped": True}}, "gpu1", V100S_HW,
        {"quarantine_stress_command": BURN, "validation_nccl_tests_dir": "/opt/nccl-tests/build",
         "validation_nccl_intra_fraction": "0.7"})
    assert checks == node_checks({"stress_found": MISSING}, "gpu1", V100S_HW, {
        "quarantine_stress_command": BURN, "validation_nccl_tests_dir": "/opt/nccl-tests/build",
        "validation_nccl_intra_fraction": 0.7}) == [
        _active("gpu_stress", "skip", "gpu_burn is not installed on gpu1: no stress run"),
        _active("nccl_in_node", "skip", "/opt/nccl-tests/build/all_reduce_perf is not installed on gpu1")]


# ---------------------------------------------------------------------------
# The verdict
# ---------------------------------------------------------------------------

def _passive(check, status, message, tooling=False):
    out = {"check": check, "kind": "passive", "status": status, "measured": None, "expected": None, "unit": None,
           "source": None, "message": message}
    if tooling:
        out["tooling"] = True
    return out


COUNT_OK = _passive("gpu_count", "pass", "8 GPUs answer nvidia-smi, 8 expected")
COUNT_BAD = _passive("gpu_count", "fail", "7 GPUs answer nvidia-smi, 8 expected")
XID_OK = _passive("xid", "pass", "no XID in the kernel log")
DCGM_OK = _active("dcgm_diag", "pass", "dcgmi diag -r 3: every test passed")
DCGM_BAD = _active("dcgm_diag", "fail", "dcgmi diag -r 3: Deployment failed")
STRESS_SKIP = _active("gpu_stress", "skip", "no GPU stress command set (quarantine_stress_command)")
SERVICES_BAD = _passive("services", "fail", "munge is inactive")
SMI_TOOL = _passive("gpu_count", "warn", "nvidia-smi could not be used, no GPU judged: nvidia-smi rc=127", tooling=True)
REASON = "gpucluster-validation: gpu_count [root@06/02-14:01:24]"


@pytest.mark.parametrize("checks, reason, decision, new_reason, note, evidence", [
    ([COUNT_OK, XID_OK, DCGM_OK, STRESS_SKIP], REASON, "resumed", None, "passed the deep retest",
     ["dcgm_diag pass: dcgmi diag -r 3: every test passed"]),
    ([COUNT_BAD, XID_OK, DCGM_BAD, STRESS_SKIP], REASON, "rma", "rma: gpu_count,dcgm_diag",
     "failed the deep retest: gpu_count, dcgm_diag",
     ["gpu_count fail: 7 GPUs answer nvidia-smi, 8 expected", "dcgm_diag fail: dcgmi diag -r 3: Deployment failed"]),
    # hardware and software both: RMA for the hardware, the software named beside it
    ([COUNT_OK, SERVICES_BAD, DCGM_BAD], REASON, "rma", "rma: dcgm_diag",
     "failed the deep retest: dcgm_diag; also services (software)",
     ["services fail: munge is inactive", "dcgm_diag fail: dcgmi diag -r 3: Deployment failed"]),
    # software only: kept in quarantine under this system's prefix, never RMA
    ([COUNT_OK, SERVICES_BAD, DCGM_OK], REASON, "kept", "gpucluster-validation: services",
     "services failed: software or settings, not hardware; fix it and the next run resumes the node",
     ["services fail: munge is inactive", "dcgm_diag pass: dcgmi diag -r 3: every test passed"]),
    # a tool that could not run is not an RMA verdict
    ([SMI_TOOL, XID_OK, DCGM_OK], REASON, "kept", "gpucluster-validation: gpu_count",
     "could not run: gpu_count; not judged again: gpu_count; not an RMA verdict, kept in quarantine",
     ["gpu_count warn: nvidia-smi could not be used, no GPU judged: nvidia-smi rc=127",
      "dcgm_diag pass: dcgmi diag -r 3: every test passed"]),
    # the drain named dcgm_diag and dcgmi is not installed now: not proven repaired
    ([COUNT_OK, _active("dcgm_diag", "skip", "dcgmi not installed")], "gpucluster-validation: dcgm_diag", "kept",
     "gpucluster-validation: dcgm_diag", "not judged again: dcgm_diag; not an RMA verdict, kept in quarantine", []),
    # a pair check is retested by validate.yml, not inside one node
    ([COUNT_OK, DCGM_OK], "gpucluster-validation: ib_write_bw [root@06/02-14:01:24]", "kept",
     "gpucluster-validation: ib_write_bw",
     "retested across nodes by validate.yml, not here: ib_write_bw; not an RMA verdict, kept in quarantine",
     ["dcgm_diag pass: dcgmi diag -r 3: every test passed"]),
    # the flapping hold: the checks after the word
    ([COUNT_OK, XID_OK, DCGM_OK], "gpucluster-validation: flapping gpu_count,xid [root@06/02-14:01:24]", "resumed", None,
     "passed the deep retest", ["dcgm_diag pass: dcgmi diag -r 3: every test passed"]),
    # did not answer
    (None, REASON, "kept", "gpucluster-validation: gpu_count", "did not answer: not retested", []),
    ([_passive("reachable", "fail", "did not answer: unreachable, or failed earlier in this run")], REASON, "kept",
     "gpucluster-validation: gpu_count",
     "did not answer: not retested (did not answer: unreachable, or failed earlier in this run)", []),
])
def test_decide(checks, reason, decision, new_reason, note, evidence):
    got = decide("gpu1", checks, reason, PREFIX)
    assert (got["decision"], got["reason"], got["note"], got["evidence"]) == (decision, new_reason, note, evidence)
    assert got["was"] == reason.split(" [")[0]


SMI_FACTS = {"ansible_facts": {"nvidia": {"gpus": [
    {"index": 0, "serial": "1562920006088", "uuid": "GPU-aaaa", "pci_bus_id": "00000000:3B:00.0", "name": "Tesla V100S"},
    {"index": 1, "serial": None, "uuid": "GPU-bbbb", "pci_bus_id": "00000000:5E:00.0", "name": "Tesla V100S"}]}}}


@pytest.mark.parametrize("facts, want", [
    (SMI_FACTS, [{"index": 0, "serial": "1562920006088", "uuid": "GPU-aaaa", "pci_bus_id": "00000000:3B:00.0"},
                 {"index": 1, "serial": None, "uuid": "GPU-bbbb", "pci_bus_id": "00000000:5E:00.0"}]),
    ({"failed": True, "msg": "nvidia-smi failed"}, []),
    (None, []),
])
def test_gpu_serials(facts, want):
    assert gpu_serials(facts) == want


def _document():
    """The validation role's document of a retest of gpu1 (a GPU missing) and gpu6 (healed), policy report."""
    def node(host, checks):
        statuses = set(c["status"] for c in checks)
        return {"host": host, "verdict": "fail" if "fail" in statuses else "pass",
                "action": {"kind": "would drain (report only)" if "fail" in statuses else "none", "reason": None},
                "cordon": None, "checks": checks}
    return {"schema": "gpucluster.core/validation-result/v1",
            "run": {"id": "20260101T000000Z", "started": "2026-01-01T00:00:00Z", "finished": "2026-01-01T00:30:00Z",
                    "checks_run": ["passive", "active"], "checks_not_run": {}, "policy": "report",
                    "controller": "ctl", "kubernetes": "none", "baseline": None},
            "verdict": "fail", "counts": {"pass": 5, "warn": 0, "fail": 1, "skip": 0},
            "nodes": [node("gpu1", [COUNT_BAD, XID_OK]), node("gpu6", [COUNT_OK, XID_OK, DCGM_OK])],
            "pairs": [], "jobs": []}


def test_verdict_document_and_actions():
    plan = quarantine_candidates(cluster(), PREFIX, HOSTS)
    plan["retest"] = ["gpu1", "gpu6"]
    extra = {"gpu1": [STRESS_SKIP], "gpu6": [STRESS_SKIP]}
    out = FilterModule().filters()["quarantine_verdict"](_document(), extra, plan, {"gpu1": SMI_FACTS, "gpu6": SMI_FACTS},
                                                         PREFIX, {"quarantine_dcgm_diag_level": 3})
    assert out["actions"] == [{"host": "gpu1", "decision": "rma", "reason": "rma: gpu_count"}]
    doc = out["document"]
    validate_document(doc)
    assert [(n["host"], n["verdict"], n["action"]) for n in doc["nodes"]] == [
        ("gpu1", "fail", {"kind": "rma", "reason": "rma: gpu_count"}),
        ("gpu6", "pass", {"kind": "resumed", "reason": None})]
    assert doc["counts"] == {"pass": 5, "warn": 0, "fail": 1, "skip": 2}
    assert [c["check"] for c in doc["nodes"][1]["checks"]] == ["gpu_count", "xid", "dcgm_diag", "gpu_stress"]
    quarantine = doc["quarantine"]
    assert quarantine["settings"] == {"quarantine_dcgm_diag_level": 3}
    assert [(n["host"], n["decision"], n["gpus"]) for n in quarantine["nodes"]] == [
        ("gpu1", "rma", gpu_serials(SMI_FACTS)), ("gpu6", "resumed", [])]
    assert [n["host"] for n in quarantine["waiting"]] == ["gpu2", "gpu7"]
    assert [n["host"] for n in quarantine["left"]] == ["gpu3", "gpu4", "gpu5", "gpu11"]
    # the input document is not changed
    assert _document()["nodes"][0]["action"]["kind"] == "would drain (report only)"


def test_verdict_rendered():
    plan = {"retest": ["gpu1"], "reasons": {"gpu1": REASON}, "waiting": [],
            "left": [{"host": "gpu3", "reason": "admin-maintenance", "why": "drained by an admin: never touched"}]}
    doc = verdict(_document(), {"gpu1": []}, plan, {"gpu1": gpu_serials(SMI_FACTS)}, PREFIX, {})["document"]
    markdown = render_markdown(doc)
    assert "\n## Quarantine\n\n| Host | Decision | Slurm reason | Note | GPUs (serial numbers) | Evidence |\n" in markdown
    assert ("| gpu1 | rma | rma: gpu_count | failed the deep retest: gpu_count | GPU0 1562920006088 (00000000:3B:00.0), "
            "GPU1 serial unknown (00000000:5E:00.0) | gpu_count fail: 7 GPUs answer nvidia-smi, 8 expected |") in markdown
    assert "| gpu3 | left alone | admin-maintenance | drained by an admin: never touched | - | - |" in markdown
    assert '<section id="quarantine"><h2>Quarantine</h2>' in render_html(doc)
    assert summary_lines(doc)[-2:] == [
        "quarantine gpu1 - rma - rma: gpu_count - failed the deep retest: gpu_count - GPU0 1562920006088 (00000000:3B:00.0), "
        "GPU1 serial unknown (00000000:5E:00.0) - gpu_count fail: 7 GPUs answer nvidia-smi, 8 expected",
        "quarantine gpu3 - left alone - admin-maintenance - drained by an admin: never touched -  - "]


def test_report_without_quarantine_is_unchanged():
    assert "Quarantine" not in render_markdown(_document())


def test_a_node_lost_after_the_role_is_kept_never_resumed():
    # gpu6 passed the role's checks, then its stress run took it away (unreachable: no quarantine checks for it):
    # the retest did not finish, so it is kept in quarantine with its old reason, never put back into service
    plan = quarantine_candidates(cluster(), PREFIX, HOSTS)
    plan["retest"] = ["gpu6"]
    out = FilterModule().filters()["quarantine_verdict"](_document(), {}, plan, {"gpu6": SMI_FACTS}, PREFIX, {})
    assert [(a["host"], a["decision"]) for a in out["actions"]] == [("gpu6", "kept")]
    assert out["document"]["quarantine"]["nodes"][0]["decision"] == "kept"
