# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The validation filters that drive the fabric rounds: round two's pairs per check, and the
adapters an ib_write_bw pair runs on (from real ibstat captures)."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpucluster.core.plugins.filter.validation import FilterModule
from ansible_collections.gpucluster.core.plugins.module_utils._ibstat import parse_ibstat, summarize
from ansible_collections.gpucluster.core.tests.unit.plugins.plugin_utils.validation.validation_helpers import node_text
from ansible_collections.gpucluster.core.tests.unit.plugins.shared_fixtures import read_fixture

# Each validation filter by its name less the prefix: V.fabric_remix is validation_fabric_remix.
V = SimpleNamespace(**{name[len("validation_"):]: func for name, func in FilterModule().filters().items()})


def ibstat(name):
    return summarize(parse_ibstat(read_fixture("ibstat", name)), "ibstat")


def result(hosts, status, check, recorded=False):
    return {"check": check, "hosts": hosts, "status": status, "recorded": recorded}


@pytest.mark.parametrize("results, want", [
    # per check; a check with nothing to re-run is left out
    ([result(["g1", "g2"], "pass", "ib_write_bw"), result(["g3", "g1"], "fail", "ib_write_bw"),
      result(["g1", "g2"], "pass", "nccl_all_reduce"), result(["g3", "g1"], "pass", "nccl_all_reduce")],
     {"ib_write_bw": [["g3", "g2"]]}),
    ([result(["g1", "g2"], "pass", "ib_write_bw"), result(["g3", "g4"], "fail", "ib_write_bw"),
      result(["g1", "g2"], "pass", "nccl_all_reduce"), result(["g3", "g4"], "fail", "nccl_all_reduce")],
     {"ib_write_bw": [["g3", "g1"], ["g4", "g2"]], "nccl_all_reduce": [["g3", "g1"], ["g4", "g2"]]}),
    # a recorded output is not of these nodes: never re-run, never a helper
    ([result(["g1", "g2"], "pass", "nccl_all_reduce", recorded=True), result(["g3", "g4"], "fail", "nccl_all_reduce")], {}),
    ([], {}),
])
def test_fabric_remix(results, want):
    assert V.fabric_remix(results) == want


def test_fabric_rounds_is_wired():
    first = [result(["g1", "g2"], "fail", "ib_write_bw")]
    assert V.fabric_rounds(first, []) == [dict(first[0], round=1)]


def test_ib_pair_args():
    hardware = {"g1": {"ibstat": ibstat("h100-12x-roce-ethernet-cx7-400g-cx6dx-100g-all-active.txt")},
                "g2": {"ibstat": None}}
    # g2 shows no HCA: perftest's default adapter there
    assert V.ib_pair_args(["g1", "g2"], hardware) == ["--server", "g1", "--device", "g1=mlx5_0"]
    assert V.ib_pair_args(["g2", "g1"], hardware) == ["--server", "g2", "--device", "g1=mlx5_0"]
    assert V.ib_pair_args(["g3", "g2"], {}) == ["--server", "g3"]


def test_bad_input_is_a_filter_error():
    with pytest.raises(AnsibleFilterError, match="validation_fabric_remix"):
        V.fabric_remix([{"hosts": ["g1"]}])


def gpu_job(host, dcgmi):
    return {"host": host, "gpus": 8, "rc": 0, "visible": 8, "usable": 8, "devices": "0,1,2,3,4,5,6,7",
            "output": "", "dcgmi": dcgmi}


def test_jobs_judge_the_dcgmi_runs_inside_the_gpu_jobs():
    report = {"jobs": [
        gpu_job("g1", {"level": 2, "path": "/usr/bin/dcgmi", "rc": 0,
                       "output": read_fixture("dcgmi", "dcgm3.3.3-a100x8-level2-pass-empty-stress.txt")}),
        gpu_job("g2", {"level": 1, "path": "/usr/bin/dcgmi", "rc": 1,
                       "output": read_fixture("dcgmi", "blacklist-era-level1-deployment-fail-empty-sections.txt")}),
        gpu_job("g3", {"level": 1, "path": None, "rc": None, "output": None}),
        gpu_job("g4", {"level": 1, "path": "/usr/bin/dcgmi", "rc": 1, "output": "no table here\n"}),
        gpu_job("g5", None),
    ]}
    got = [(j["check"], j["hosts"], j["status"]) for j in V.jobs(report, {})]
    assert got == [("slurm_gpu_job", ["g%d" % n], "pass") for n in range(1, 6)] + [
        ("dcgm_diag", ["g1"], "pass"), ("dcgm_diag", ["g2"], "fail"), ("dcgm_diag", ["g3"], "skip"),
        ("dcgm_diag", ["g4"], "fail")]
    assert V.jobs(report, {})[8]["message"].startswith("dcgmi diag: ")
    assert V.jobs(report, {})[8]["message"].endswith("(exit 1)")


def test_bench_runs_judge_ib_write_bw_against_the_slower_nodes_fastest_port():
    """A real client sweep (100G RoCE, peak average 52.52 Gb/s) between a 400G CX-7 node and a 200G HDR node."""
    hardware = {"g1": {"ibstat": ibstat("h100-12x-roce-ethernet-cx7-400g-cx6dx-100g-all-active.txt")},
                "g2": {"ibstat": ibstat("ibstatus-azure-a100-9x-hdr-200g.txt")}}
    run = {"item": ["g1", "g2"], "rc": 0, "stdout": read_fixture("perftest", "cns-ib-write-bw-roce-all-sizes-gbits-client.txt")}
    settings = {"validation_nccl_inter_fraction": 0.9, "validation_ib_bw_fraction": 0.9}
    got = V.bench_runs([run], "ib_write_bw", hardware, settings)[0]
    assert (got["status"], got["measured"], got["expected"], got["source"], got["message"]) == (
        "fail", 52.52, 180.0, "0.90 x 200 Gb/s port rate (ibstat)", "52.52 Gb/s measured, >= 180 expected")
    # no ibstat known for either node: nothing to compare with
    assert V.bench_runs([run], "ib_write_bw", {}, settings)[0]["status"] == "warn"


BENCH_SETTINGS = {"validation_nccl_inter_fraction": 0.9, "validation_ib_bw_fraction": 0.9}
SRUN_REFUSED = "srun: error: Unable to allocate resources: Requested node configuration is not available"


def bench_hardware():
    return {"g1": {"gpu_count": 8, "ibstat": ibstat("h100-12x-roce-ethernet-cx7-400g-cx6dx-100g-all-active.txt")},
            "g2": {"gpu_count": 8, "ibstat": ibstat("ibstatus-azure-a100-9x-hdr-200g.txt")}}


def test_bench_round_judges_each_checks_runs_that_have_an_output():
    """The registered loops of fabric.yml: a real nccl-tests run (AWS p5, two nodes) and a real
    ib_write_bw client sweep; a run srun refused is judged, a run without an output (no srun on
    the controller) and a skipped item are not."""
    nccl = {"changed": False, "results": [
        {"item": ["g1", "g2"], "rc": 0, "stderr": "",
         "stdout": read_fixture("nccl-tests", "awsome-p5x2-allreduce-srun-label-table-only.txt")}]}
    ib = {"changed": False, "results": [
        {"item": ["g1", "g2"], "rc": 0, "stderr": "",
         "stdout": read_fixture("perftest", "cns-ib-write-bw-roce-all-sizes-gbits-client.txt")},
        {"item": ["g2", "g1"], "rc": 1, "stdout": "", "stderr": SRUN_REFUSED},
        {"item": ["g3", "g4"], "rc": 2, "failed": True, "msg": "[Errno 2] No such file or directory: b'srun'"},
        {"item": ["g5", "g6"], "skipped": True, "changed": False}]}
    got = V.bench_round({"nccl_all_reduce": nccl, "ib_write_bw": ib}, bench_hardware(), BENCH_SETTINGS)
    assert [(r["check"], r["hosts"], r["status"], r["measured"], r["message"]) for r in got] == [
        ("nccl_all_reduce", ["g1", "g2"], "pass", 487.09, "487.09 GB/s measured, >= 22.5 expected"),
        ("ib_write_bw", ["g1", "g2"], "fail", 52.52, "52.52 Gb/s measured, >= 180 expected"),
        ("ib_write_bw", ["g2", "g1"], "fail", None, "exited 1: " + SRUN_REFUSED),
    ]
    # the same as judging each check's runs with an output on its own, in the order given
    assert got == (V.bench_runs(nccl["results"], "nccl_all_reduce", bench_hardware(), BENCH_SETTINGS)
                   + V.bench_runs(ib["results"][:2], "ib_write_bw", bench_hardware(), BENCH_SETTINGS))
    reversed_order = V.bench_round({"ib_write_bw": ib, "nccl_all_reduce": nccl}, bench_hardware(), BENCH_SETTINGS)
    assert [r["check"] for r in reversed_order] == ["ib_write_bw", "ib_write_bw", "nccl_all_reduce"]


@pytest.mark.parametrize("rounds", [
    # a loop over no pairs registers no results
    {"nccl_all_reduce": {"changed": False, "skipped": True, "skipped_reason": "No items in the list", "results": []},
     "ib_write_bw": {"changed": False, "skipped": True, "skipped_reason": "No items in the list", "results": []}},
    {"nccl_all_reduce": {}, "ib_write_bw": None},
    {},
])
def test_bench_round_without_runs(rounds):
    assert V.bench_round(rounds, bench_hardware(), BENCH_SETTINGS) == []


def test_bench_round_of_an_unknown_check_is_a_filter_error():
    run = {"item": ["g1", "g2"], "rc": 0, "stdout": "x"}
    with pytest.raises(AnsibleFilterError, match="^validation_bench: unknown check 'alltoall'"):
        V.bench_round({"alltoall": {"results": [run]}}, {}, BENCH_SETTINGS)


def test_kubernetes_view_names_the_nodes_as_the_hosts_say():
    """kubernetes_node_name where a host has one (gpu01), else the inventory name; a host
    Kubernetes does not know (head) is left out."""
    read = {"changed": False, "api_found": True, "resources": json.loads(KUBE_NODES)["items"], "failed": False}
    hostvars = {"gpu01": {"kubernetes_node_name": "gpu01.k8s.lan"}, "gpu02": {}, "gpu03": {}, "head": {}}
    view = V.kubernetes_view(read, "cp1", hostvars, ["gpu01", "gpu02", "gpu03", "head"], KUBE_MARK)
    assert view == {"read": "cp1", "nodes": {
        "gpu01": {"node": "gpu01.k8s.lan", "unschedulable": False, "mark": None, "stale": False, "devices": {}},
        "gpu02": {"node": "gpu02", "unschedulable": True, "mark": "gpucluster-validation: gpu_count", "stale": False,
                  "devices": {}},
        "gpu03": {"node": "gpu03", "unschedulable": True, "mark": None, "stale": False, "devices": {}}}}
    # kubectl's JSON of the same nodes (the scenarios read them so) gives the same view
    assert view["nodes"] == V.kubernetes_nodes(KUBE_NODES, hostvars, ["gpu01", "gpu02", "gpu03", "head"], KUBE_MARK)
    assert view["nodes"] == V.kubernetes_nodes(read, hostvars, ["gpu01", "gpu02", "gpu03", "head"], KUBE_MARK)


def test_kubernetes_view_bad_output_is_a_filter_error():
    read = {"changed": False, "resources": [{"kind": "Status"}], "failed": False}
    with pytest.raises(AnsibleFilterError, match="^kubectl get nodes: item 0 has no metadata.name"):
        V.kubernetes_view(read, "cp1", {}, ["cp1"], KUBE_MARK)


def test_plan_filters_are_wired():
    assert V.host_plan("gpu01", ["active"], "head", ["gpu01"], False, "") == {
        "active": True, "programs": [], "ddp": False, "fabric_tools": True}
    assert V.checks_run(["passive"], "", "", "slurm_controller", "k8s_control_plane") == {
        "run": ["passive"], "not_run": {}}
    # keyword arguments, as the tasks pass them
    assert V.cordon_patch("m", cordon=True, reason="r") == (
        {"spec": {"unschedulable": True}, "metadata": {"annotations": {"m": "r"}}})
    assert V.cordon_patch("m", cordon=False) == (
        {"spec": {"unschedulable": False}, "metadata": {"annotations": {"m": None}}})


def test_not_responding_is_wired():
    assert V.not_responding({"g1": {"flags": ["NOT_RESPONDING"]}, "g2": {"flags": []}}, ["g1", "g2"]) == ["g1"]


# Kubernetes' view through the filters: node names from kubernetes_node_name, the document's
# cordon per node beside Slurm's action, the summary and the report naming both.
KUBE_MARK = "gpucluster.core/validation-cordon"
KUBE_NODES = json.dumps({"apiVersion": "v1", "kind": "List", "items": [
    {"metadata": {"name": "gpu01.k8s.lan", "annotations": {}}, "spec": {}},
    {"metadata": {"name": "gpu02", "annotations": {KUBE_MARK: "gpucluster-validation: gpu_count"}},
     "spec": {"unschedulable": True}},
    {"metadata": {"name": "gpu03"}, "spec": {"unschedulable": True}},
]})
SETTINGS = {"validation_policy": "drain", "validation_reason_prefix": "gpucluster-validation:",
            "validation_baseline_tolerance": 0.1}


def passive(status, check="gpu_count"):
    return [{"check": check, "kind": "passive", "status": status, "measured": 8, "expected": 8, "unit": None,
             "source": None, "message": "%s %s" % (check, status), "baseline": None}]


def test_document_cordons_in_kubernetes_beside_slurms_drain():
    view = V.kubernetes_nodes(
        KUBE_NODES, {"gpu01": {"kubernetes_node_name": "gpu01.k8s.lan"}, "gpu02": {}, "gpu03": {}, "head": {}},
        ["gpu01", "gpu02", "gpu03", "head"], KUBE_MARK)
    assert sorted(view) == ["gpu01", "gpu02", "gpu03"]
    slurm = V.scontrol_nodes("NodeName=gpu01 State=IDLE\nNodeName=head State=IDLE\n")
    doc = V.document(
        {"id": "r1", "started": "2026-11-26T08:00:00Z", "finished": "2026-11-26T08:01:00Z", "checks_run": ["passive"],
         "policy": "drain", "controller": "head", "baseline": None, "kubernetes": "cp1"},
        {"gpu01": passive("fail", "xid"), "gpu02": passive("pass"), "gpu03": passive("fail"), "head": passive("pass")},
        {}, [], [], slurm, SETTINGS, None, view)
    by_host = {node["host"]: node for node in doc["nodes"]}
    assert by_host["gpu01"]["action"] == {"kind": "drained", "reason": "gpucluster-validation: xid"}
    assert by_host["gpu01"]["cordon"] == {"node": "gpu01.k8s.lan", "kind": "cordoned",
                                          "reason": "gpucluster-validation: xid", "unmark": False}
    assert by_host["gpu02"]["cordon"] == {"node": "gpu02", "kind": "uncordoned",
                                          "reason": "gpucluster-validation: gpu_count", "unmark": True}
    assert by_host["gpu03"]["cordon"]["kind"] == "kept cordoned (admin)"
    assert by_host["head"]["cordon"] is None
    summary = V.report(doc, "summary")
    assert summary[1:] == ["gpu01 FAIL [drained; cordoned] - xid: xid fail", "gpu02 PASS [uncordoned]",
                           "gpu03 FAIL [kept cordoned (admin)] - gpu_count: gpu_count fail"]
    markdown = V.report(doc, "markdown")
    assert "| gpu01 | FAIL | drained (gpucluster-validation: xid); cordoned (gpucluster-validation: xid) |" in markdown
    assert "- Kubernetes: cp1\n" in markdown
    html = V.report(doc, "html")
    assert "kept cordoned (admin) (gpucluster-validation: gpu_count)" in html


def test_document_keeps_a_drain_and_cordon_whose_check_could_not_be_judged():
    """gpu02 was drained and cordoned for gpu_count; this run's nvidia-smi could not run there (a
    tooling warn): the repair is not proven, so neither is lifted. gpu01's drain for gpu_count is
    lifted: its GPUs were counted and passed."""
    view = V.kubernetes_nodes(KUBE_NODES, {"gpu01": {"kubernetes_node_name": "gpu01.k8s.lan"}, "gpu02": {}},
                              ["gpu01", "gpu02"], KUBE_MARK)
    reason = "gpucluster-validation: gpu_count [root@06/02-14:01:24]"
    slurm = V.scontrol_nodes(node_text(name="gpu01", state="IDLE+DRAIN", reason=reason) + "\n"
                             + node_text(name="gpu02", state="IDLE+DRAIN", reason=reason))
    tooling = [dict(passive("warn")[0], measured=None, tooling=True,
                    message="nvidia-smi could not be used, no GPU judged: nvidia-smi rc=127: No such file or directory")]
    doc = V.document(
        {"id": "r1", "started": "2026-11-26T08:00:00Z", "finished": "2026-11-26T08:01:00Z", "checks_run": ["passive"],
         "policy": "drain", "controller": "head", "baseline": None, "kubernetes": "cp1"},
        {"gpu01": passive("pass"), "gpu02": tooling}, {}, [], [], slurm, SETTINGS, None, view)
    by_host = {node["host"]: node for node in doc["nodes"]}
    assert by_host["gpu02"]["verdict"] == "warn"
    assert by_host["gpu02"]["action"] == {"kind": "kept drained (not judged)", "reason": reason}
    assert by_host["gpu02"]["cordon"] == {"node": "gpu02", "kind": "kept cordoned (not judged)",
                                          "reason": "gpucluster-validation: gpu_count", "unmark": False}
    assert by_host["gpu01"]["action"] == {"kind": "resumed", "reason": reason}
    assert V.report(doc, "summary")[1:] == [
        "gpu01 PASS [resumed]",
        "gpu02 WARN [kept drained (not judged); kept cordoned (not judged)] - gpu_count: nvidia-smi could not be used, "
        "no GPU judged: nvidia-smi rc=127: No such file or directory"]


def test_document_holds_drains_past_the_drain_budget():
    """Four nodes Slurm lists, budget 25 % at least 1 (one node): gpu01 is drained, gpu02 and gpu10
    are held with the reason saying why; the verdict stays fail, and the summary and report say it."""
    slurm = V.scontrol_nodes("\n".join(node_text(name=name, state="IDLE", reason="") for name in ("gpu01", "gpu02", "gpu10", "head")))
    settings = dict(SETTINGS, validation_drain_budget_fraction=0.25, validation_drain_budget_min_nodes=1)
    doc = V.document(
        {"id": "r1", "started": "2026-11-26T08:00:00Z", "finished": "2026-11-26T08:01:00Z", "checks_run": ["passive"],
         "policy": "drain-and-stop", "controller": "head", "baseline": None, "kubernetes": "none"},
        {"gpu10": passive("fail", "xid"), "gpu02": passive("fail", "xid"), "gpu01": passive("fail", "xid"),
         "head": passive("pass")}, {}, [], [], slurm, settings, None, {})
    why = ("gpucluster-validation: xid (not drained: drain budget spent: 1 of 4 nodes drained by gpucluster-validation, "
           "budget 1 (25% of 4, at least 1))")
    by_host = {node["host"]: node for node in doc["nodes"]}
    assert doc["verdict"] == "fail"
    assert by_host["gpu01"]["action"] == {"kind": "drained", "reason": "gpucluster-validation: xid"}
    assert by_host["gpu02"]["action"] == by_host["gpu10"]["action"] == {"kind": "held (drain budget)", "reason": why}
    assert V.report(doc, "summary")[1:] == ["gpu01 FAIL [drained] - xid: xid fail", "gpu02 FAIL [held (drain budget)] - xid: xid fail",
                                            "gpu10 FAIL [held (drain budget)] - xid: xid fail"]
    assert "| gpu02 | FAIL | held (drain budget) (%s) |" % why in V.report(doc, "markdown")
    # without the settings (an older caller): the defaults, 10 % at least 2
    doc = V.document(doc["run"], {"gpu10": passive("fail", "xid"), "gpu02": passive("fail", "xid"),
                                  "gpu01": passive("fail", "xid")}, {}, [], [], slurm, SETTINGS, None, {})
    assert [node["action"]["kind"] for node in doc["nodes"]] == ["drained", "drained", "held (drain budget)"]


def test_kubernetes_nodes_bad_output_is_a_filter_error():
    with pytest.raises(AnsibleFilterError) as exc:
        V.kubernetes_nodes("The connection to the server was refused", {}, ["cp1"], KUBE_MARK)
    assert "kubectl get nodes: the output is not JSON" in str(exc.value)


# The GPU pods in Kubernetes, through the filters as the role calls them: the plan from hostvars and
# the pods read (kubernetes.core.k8s_info), then the registered apply (k8s), read and logs (k8s_log)
# results judged with the node's UUIDs. The pods are kubectl's captures (the same objects).
POD_SETTINGS = {"run": "20261126T1600Z", "namespace": "gpucluster-validation", "image": "gpc-test.local/gpu-check:v1",
                "runtime_class": "nvidia", "resource": "nvidia.com/gpu", "timeout": 120}
GPU01_LOG = read_fixture("kubernetes", "kubectl-logs-gpu-check-v1.20.2.txt")
GPU01_UUIDS = sorted(line.split("(UUID: ")[1].rstrip(")") for line in GPU01_LOG.splitlines())


def pods_read(fixture, **result):
    """A registered kubernetes.core.k8s_info read of kind Pod holding a kubectl capture's pods."""
    return dict({"changed": False, "api_found": True, "failed": False,
                 "resources": json.loads(read_fixture("kubernetes", fixture))["items"]}, **result)


def failed(msg):
    """A failed module as ignore_errors keeps it (ansible-core 2.19 frames the message)."""
    return {"changed": False, "failed": True, "exception": "(traceback unavailable)", "msg": "Task failed: Module failed: " + msg}


def applied(*errors):
    """A registered kubernetes.core.k8s apply of a list with continue_on_error: one item per object."""
    items = [{"changed": True, "method": "apply", "result": {"kind": "Namespace"}}]
    items += [{"changed": False, "result": {}, "error": {"msg": error}} if error else
              {"changed": True, "method": "apply", "result": {"kind": "Pod"}} for error in errors]
    return {"changed": True, "result": {"results": items}, "failed": False}


def test_gpu_pods_through_the_filters():
    hostvars = {"gpu01": {"__validation_health": {"verdict": "pass", "hardware": {"gpu_count": 8, "gpu_uuids": GPU01_UUIDS}}},
                "gpu02": {"__validation_health": {"verdict": "pass", "hardware": {"gpu_count": 8}}}}
    view = {"gpu01": {"node": "gpu01", "unschedulable": False, "mark": None, "devices": {"nvidia.com/gpu": 8}},
            "gpu02": {"node": "gpu02", "unschedulable": False, "mark": None, "devices": {"nvidia.com/gpu": 8}}}
    all_pods = pods_read("kubectl-get-pods-all-namespaces-gpu-held-v1.20.2.json")
    plan = V.gpu_pod_plan(["gpu01", "gpu02"], hostvars, view, all_pods, POD_SETTINGS)
    # train-0 holds 2 of gpu01's GPUs in that capture
    assert list(plan["pods"]) == ["gpu02"] and [r["hosts"] for r in plan["skipped"]] == [["gpu01"]]
    plan = V.gpu_pod_plan(["gpu01", "gpu02"], hostvars, view, {"changed": False, "api_found": True, "resources": []}, POD_SETTINGS)
    assert list(plan["pods"]) == ["gpu01", "gpu02"]
    pods = pods_read("kubectl-get-pods-validation-states-v1.20.2.json", attempts=4)
    assert V.gpu_pods_waiting(pods, ["gpucluster-validation-gpu-gpu01"], 3.0) == []
    run = {"plan": {"pods": {"gpu01": plan["pods"]["gpu01"]}, "skipped": []},
           "created": applied(None), "pods": pods, "settings": POD_SETTINGS,
           "logs": {"results": [{"item": "gpucluster-validation-gpu-gpu01", "changed": False, "log": GPU01_LOG,
                                 "log_lines": GPU01_LOG.split("\n")},
                                {"item": "gpucluster-validation-gpu-gpu02", "skipped": True}]}}
    hardware = {host: values["__validation_health"]["hardware"] for host, values in hostvars.items()}
    (result,) = V.jobs({}, {}, hardware, run)
    assert (result["check"], result["status"], result["measured"], result["message"]) == (
        "kubernetes_gpu_pod", "pass", 8, "the pod saw the node's 8 GPUs")
    # the same log read as no list: nvidia-smi's own words are reported
    run["logs"]["results"][0]["log"] = read_fixture("kubernetes", "kubectl-logs-gpu-check-no-gpu-v1.20.2.txt")
    (result,) = V.jobs({}, {}, hardware, run)
    assert (result["status"], result["message"]) == (
        "fail", "nvidia-smi -L in the pod printed no GPU list (nvidia-smi -L: line 1 is not a GPU or MIG device line: "
                "'No devices were found'): No devices were found")


@pytest.mark.parametrize("read, why", [
    ({"changed": False, "resources": [{"kind": "Status"}]}, "kubectl get pods: item 0 has no metadata.name"),
    (failed("Failed to get client due to HTTPSConnectionPool(host='cp1', port=6443): Max retries exceeded"),
     "the read failed: Failed to get client due to HTTPSConnectionPool(host='cp1', port=6443): Max retries exceeded"),
    ({"skipped": True}, "not read"),
], ids=["not-a-pod-list", "api-down", "skipped"])
def test_gpu_pods_when_the_read_fails(read, why):
    """A failed read warns the nodes it concerns; it never stops the run (the verdict and node actions follow)."""
    hostvars = {"gpu01": {"__validation_health": {"verdict": "pass", "hardware": {"gpu_count": 8}}}}
    view = {"gpu01": {"node": "gpu01", "unschedulable": False, "mark": None, "devices": {"nvidia.com/gpu": 8}}}
    plan = V.gpu_pod_plan(["gpu01"], hostvars, view, read, POD_SETTINGS)
    assert plan["pods"] == {}
    assert [(r["status"], r["message"]) for r in plan["skipped"]] == [
        ("warn", "could not read the pods that hold GPUs (%s): no GPU pod" % why)]
    run = {"plan": {"pods": {"gpu01": {"name": "gpucluster-validation-gpu-gpu01", "node": "gpu01", "gpus": 8}}},
           "created": applied(None), "pods": read, "logs": {}, "settings": POD_SETTINGS}
    (result,) = V.jobs({}, {}, {}, run)
    assert (result["status"], result["message"]) == ("warn", "could not read the pods after the wait (%s)" % why)


def test_gpu_pods_partly_applied():
    """With continue_on_error the apply makes what it can: a pod not made warns with its object's error; the
    module failing as a whole (the API server down) names its message; the until of the task reads the same."""
    hostvars = {h: {"__validation_health": {"verdict": "pass", "hardware": {"gpu_count": 8}}} for h in ("gpu01", "gpu02")}
    view = {h: {"node": h, "unschedulable": False, "mark": None, "devices": {"nvidia.com/gpu": 8}} for h in hostvars}
    plan = V.gpu_pod_plan(["gpu01", "gpu02"], hostvars, view, {"resources": []}, POD_SETTINGS)
    refused = "Failed to apply object: b'pods \"gpucluster-validation-gpu-gpu02\" is forbidden: RuntimeClass \"nvidia\" not found'"
    assert V.apply_errors(applied(None, None)) == []
    assert V.apply_errors(applied(None, refused)) == [refused]
    assert V.apply_errors(failed("Failed to get client due to EOF")) == ["Failed to get client due to EOF"]
    assert V.apply_errors({"skipped": True}) == ["not run"]
    # one object: the module returns it alone, not in a list
    assert V.apply_errors({"changed": False, "result": {}, "error": {"msg": refused}}) == [refused]
    pods = {"changed": False, "resources": [{"metadata": {"name": "gpucluster-validation-gpu-gpu01"},
                                             "status": {"phase": "Pending"}}]}
    run = {"plan": plan, "created": applied(None, refused), "pods": pods, "logs": {}, "settings": POD_SETTINGS}
    results = V.jobs({}, {}, {}, run)
    assert [(r["hosts"], r["status"]) for r in results] == [(["gpu01"], "fail"), (["gpu02"], "warn")]
    assert results[1]["message"] == ("the pod could not be created (%s); check validation_kubernetes_namespace, "
                                     "validation_kubernetes_runtime_class and validation_gpu_container_image" % refused)


def test_ddp_job_through_the_filters():
    """The PyTorchJob as the role drives it: the plan from the GPU pods' results, the wait's state from the
    registered reads (a failed read or none found reads as 'unread': waited on, never raised), the result."""
    hostvars = {"gpu01": {"__validation_health": {"verdict": "pass"}}, "gpu02": {"__validation_health": {"verdict": "pass"}}}
    view = {h: {"node": h, "unschedulable": False, "mark": None, "devices": {"nvidia.com/gpu": 8}} for h in hostvars}
    results = [{"check": "kubernetes_gpu_pod", "hosts": ["gpu01"], "status": "pass"},
               {"check": "kubernetes_gpu_pod", "hosts": ["gpu02"], "status": "pass"},
               {"check": "slurm_gpu_job", "hosts": ["gpu02"], "status": "fail"}]
    settings = dict(POD_SETTINGS, nodes=2, steps=50, operator_wait=60, script="")
    plan = V.ddp_job_plan(["gpu01", "gpu02"], hostvars, view, results, settings)
    assert (plan["hosts"], plan["gpu"]) == (["gpu01", "gpu02"], True)
    no_status = {"changed": False, "api_found": True,
                 "resources": [{"kind": "PyTorchJob", "metadata": {"name": "gpucluster-validation-ddp"}}]}
    assert V.ddp_job_state(no_status, 3.0, 60) == "running"
    assert V.ddp_job_state(no_status, 61.0, 60) == "no-operator"
    assert V.ddp_job_state(failed("Failed to get client due to EOF"), 3.0, 60) == "unread"
    assert V.ddp_job_state({"api_found": True, "resources": []}, 3.0, 60) == "unread"
    assert V.ddp_job_state({"resources": [{"kind": "Status"}]}, 3.0, 60) == "unread"
    assert V.ddp_job_state({"skipped": True}, 3.0, 60) == "unread"
    (result,) = V.ddp_job_result(plan, {"changed": False, "result": {"results": []}}, no_status, {"skipped": True}, settings)
    assert (result["status"], result["hosts"]) == ("warn", ["gpu01", "gpu02"])
    (result,) = V.ddp_job_result(plan, {"changed": False, "result": {"results": []}}, {"api_found": True, "resources": []}, {},
                                 settings)
    assert result["message"] == "could not read the PyTorchJob after the wait (the PyTorchJob is not there (none found))"
    # no training operator CRDs: the apply fails as a whole, the job was not submitted
    no_crd = "Failed to find exact match for kubeflow.org/v1.PyTorchJob by [kind, name, singularName, shortNames]"
    (result,) = V.ddp_job_result(plan, failed(no_crd), {"skipped": True}, {"skipped": True}, settings)
    assert result["message"] == ("could not submit the PyTorchJob (%s); is the training operator installed (the "
                                 "training_operator role)?" % no_crd)
    # rank 0's log read by k8s_log decides a succeeded job; a log that cannot be read warns
    done = {"resources": [{"kind": "PyTorchJob", "status": {"conditions": [{"type": "Succeeded", "status": "True"}]}}]}
    (result,) = V.ddp_job_result(plan, {"result": {"results": []}}, done, failed("Pod gpucluster-validation/x not found."), settings)
    assert (result["status"], result["message"]) == (
        "warn", "the PyTorchJob succeeded, but rank 0's log could not be read (Pod gpucluster-validation/x not found.)")
    (result,) = V.ddp_job_result(plan, {"result": {"results": []}}, done, {"log": "no result line\n"}, settings)
    assert (result["status"], result["message"]) == ("fail", "the job printed 0 result lines (rc=0): no result line")
