# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""_validation_jobs: the Slurm GPU job, dcgmi diag and the GPU container judged, the DDP smoke test's
result, the GPU pods in Kubernetes and the DDP smoke test as a PyTorchJob.

Inputs are real captures (dcgmi diag, nvidia-smi XML, the DDP smoke test's output on a lent H200
and H100, kubectl's pods of the kubernetes scenario) or, where a test needs a state the captures
do not show, a real capture with one field changed.
"""

from __future__ import annotations

import copy
import json

import pytest

from ansible_collections.gpucluster.core.plugins.module_utils._dcgmi import parse_dcgmi_diag
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._rules import RuleError
from ansible_collections.gpucluster.core.plugins.plugin_utils.validation._jobs import (
    DDP_MARKER,
    container_result,
    dcgm_diag_result,
    ddp_job_plan,
    ddp_job_result,
    ddp_job_state,
    ddp_result,
    gpu_jobs,
    gpu_pod_name,
    gpu_pod_plan,
    gpu_pod_results,
    gpu_pods_waiting,
    gpus_in_use,
)
from ansible_collections.gpucluster.core.tests.unit.plugins.plugin_utils.validation.validation_helpers import (
    V100,
    smi,
)
from ansible_collections.gpucluster.core.tests.unit.plugins.shared_fixtures import read_fixture


# ---------------------------------------------------------------------------
# dcgm_diag_result
# ---------------------------------------------------------------------------

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
    # what an interrupted run may have left under these names goes first
    assert plan["leftovers"] == [
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "gpucluster-validation-gpu-gpu01", "namespace": "gpucluster-validation"}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "gpucluster-validation-gpu-gpu03", "namespace": "gpucluster-validation"}}]
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
    out = gpu_pod_results(plan, {"error": None}, PODS, {}, {"gpu01": v100_uuids()},
                          {"gpucluster-validation-gpu-gpu01": other}, POD_SETTINGS)
    assert (out[0]["status"], out[0]["measured"], out[0]["message"]) == (
        "fail", 8, "the pod saw 8 GPUs, the node has 8: missing %s; not the node's: "
                   "GPU-8ca33e10-291f-cd98-b007-e77292564a65" % v100_uuids()[0])
    # the pod ended but the API server could not fetch its log (kubelet not reachable): not the GPUs
    err = read_fixture("kubernetes", "kubectl-logs-gpu-check-not-pulled-v1.20.2.stderr.txt")
    out = gpu_pod_results(plan, {"error": None}, PODS, {"gpucluster-validation-gpu-gpu01": {"error": err}},
                          {"gpu01": v100_uuids()}, {}, POD_SETTINGS)
    assert (out[0]["status"], out[0]["message"]) == (
        "warn", "the pod ended, but its output could not be read (its log: " + " ".join(err.split()) + ")")
    out = gpu_pod_results(plan, {"error": None}, PODS, {"gpucluster-validation-gpu-gpu01": {"stdout": ""}},
                          {"gpu01": v100_uuids()}, {"gpucluster-validation-gpu-gpu01": "nvidia-smi -L: no GPU listed"},
                          POD_SETTINGS)
    assert (out[0]["status"], out[0]["message"]) == (
        "fail", "nvidia-smi -L in the pod printed no GPU list (nvidia-smi -L: no GPU listed): no output")


def test_gpu_pod_results_when_the_pods_could_not_be_created():
    plan = pod_plan(("gpu01", "gpucluster-validation-gpu-gpu01", 8))
    plan["skipped"] = [{"check": "kubernetes_gpu_pod", "hosts": ["gpu02"], "status": "skip", "message": "busy"}]
    err = ('Failed to apply object: b\'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":'
           '"pods \\"gpucluster-validation-gpu-gpu01\\" is forbidden: pod rejected: RuntimeClass \\"nvidia\\" not found",'
           '"reason":"Forbidden","details":{"name":"gpucluster-validation-gpu-gpu01","kind":"pods"},"code":403}\\n\'')
    out = gpu_pod_results(plan, {"error": err}, {"resources": []}, {}, {}, {}, POD_SETTINGS)
    assert [(r["hosts"], r["status"]) for r in out] == [(["gpu01"], "warn"), (["gpu02"], "skip")]
    assert out[0]["message"] == (
        "the pod could not be created (%s); check validation_kubernetes_namespace, "
        "validation_kubernetes_runtime_class and validation_gpu_container_image" % err)
    # the apply makes what it can of a list: a pod that is there is judged as any other
    plan = pod_plan(("gpu01", "gpucluster-validation-gpu-gpu01", 8), ("gpu02", "gpucluster-validation-gpu-gpu02", 8))
    out = gpu_pod_results(plan, {"error": err}, PODS, {}, {"gpu01": v100_uuids()},
                          {"gpucluster-validation-gpu-gpu01": v100_uuids()}, POD_SETTINGS)
    assert [(r["hosts"], r["status"]) for r in out] == [(["gpu01"], "pass"), (["gpu02"], "warn")]
    assert out[1]["message"].startswith("the pod could not be created (Failed to apply object: ")


def test_gpu_pod_results_when_the_pods_could_not_be_read():
    plan = pod_plan(("gpu01", "gpucluster-validation-gpu-gpu01", 8))
    out = gpu_pod_results(plan, {"error": None, "read_error": "the read failed: Failed to get client due to "
                                 "HTTPSConnectionPool(host='cp1', port=6443)"}, None, {}, {}, {}, POD_SETTINGS)
    assert [(r["status"], r["message"]) for r in out] == [
        ("warn", "could not read the pods after the wait (the read failed: Failed to get client due to "
                 "HTTPSConnectionPool(host='cp1', port=6443))")]


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
    # removed job first, then its script; rank 0's pod as the training operator names it
    assert plan["leftovers"] == [
        {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
         "metadata": {"name": "gpucluster-validation-ddp", "namespace": "gpucluster-validation"}},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "gpucluster-validation-ddp", "namespace": "gpucluster-validation"}}]
    assert plan["master_pod"] == "gpucluster-validation-ddp-master-0"
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


def test_ddp_job_state_from_k8s_info():
    """kubernetes.core.k8s_info's registered read of the job by its name (the role's): the job, or none found."""
    read = {"changed": False, "api_found": True, "resources": [json.loads(job([CREATED, SUCCEEDED]))], "failed": False}
    assert ddp_job_state(read, 5, 60) == (
        "succeeded", "PyTorchJobSucceeded PyTorchJob gpucluster-validation-ddp is successfully completed.")
    with pytest.raises(RuleError, match=r"^the PyTorchJob is not there \(none found\)$"):
        ddp_job_state({"api_found": True, "resources": []}, 5, 60)
    # no training operator CRDs: the module finds no API for the kind (no failure)
    with pytest.raises(RuleError, match=r'^the PyTorchJob is not there \(Failed to find API for resource with apiVersion '
                       r'"kubeflow.org/v1" and kind "PyTorchJob"\)$'):
        ddp_job_state({"api_found": False, "resources": [],
                       "msg": 'Failed to find API for resource with apiVersion "kubeflow.org/v1" and kind "PyTorchJob"'}, 5, 60)


H200_RESULT = read_fixture("h200-driver580", "ddp-gloo-2ranks.txt")
DDP_PLAN = {"hosts": ["gpu02", "gpu03"]}


@pytest.mark.parametrize("created, text, logs, status, message", [
    ({"error": None}, job([CREATED, SUCCEEDED]), {"stdout": H200_RESULT}, "pass",
     "2 rank(s) on 1 node(s) trained 50 steps with gloo: the mean of the last 5 losses is 0.0698 x the first "
     "(limit 0.5 x) and every rank holds identical weights."),
    ({"error": None}, job([CREATED, FAILED]), {"stdout": ""}, "fail",
     "the job printed 0 result lines (rc=1): PyTorchJobFailed PyTorchJob gpucluster-validation-ddp is failed because 1 "
     "Worker replica(s) failed."),
    ({"error": None}, job([CREATED, RUNNING]), {}, "fail",
     "the PyTorchJob still ran after 120s (Created, Running)"),
    ({"error": None}, job(status=False), {}, "warn",
     "the training operator did not take the PyTorchJob within 60s (no status): is its controller running?"),
    ({"error": "Failed to find exact match for kubeflow.org/v1.PyTorchJob by [kind, name, singularName, shortNames]"},
     None, {}, "warn",
     "could not submit the PyTorchJob (Failed to find exact match for kubeflow.org/v1.PyTorchJob by [kind, name, "
     "singularName, shortNames]); is the training operator installed (the training_operator role)?"),
    ({"error": None, "read_error": "the read failed: Failed to get client due to HTTPSConnectionPool(host='cp1', port=6443)"},
     None, {}, "warn",
     "could not read the PyTorchJob after the wait (the read failed: Failed to get client due to "
     "HTTPSConnectionPool(host='cp1', port=6443))"),
    ({"error": None}, job([CREATED, SUCCEEDED]),
     {"error": "Unable to retrieve log from Pod due to: Get \"https://10.0.0.11:10250/containerLogs/...\": dial tcp "
               "10.0.0.11:10250: i/o timeout"},
     "warn", "the PyTorchJob succeeded, but rank 0's log could not be read (Unable to retrieve log from Pod due to: Get "
             "\"https://10.0.0.11:10250/containerLogs/...\": dial tcp 10.0.0.11:10250: i/o timeout)"),
    ({"error": None}, job([CREATED, SUCCEEDED]), {"stdout": "Traceback (most recent call last):\n"}, "fail",
     "the job printed 0 result lines (rc=0): Traceback (most recent call last):"),
], ids=["succeeded", "failed", "timeout", "no-operator", "no-crd", "unread", "no-logs", "no-result-line"])
def test_ddp_job_result(created, text, logs, status, message):
    (result,) = ddp_job_result(DDP_PLAN, created, text, logs, DDP_SETTINGS)
    assert (result["check"], result["status"], result["message"], result["hosts"]) == (
        "ddp_smoke", status, message, ["gpu02", "gpu03"])
    assert result["source"] == "gpucluster-ddp-smoke.py as a PyTorchJob (registry.lab/pytorch:2.5.1-cuda12.4)"


def test_ddp_job_result_without_nodes():
    assert ddp_job_result({"hosts": [], "why": "1 of the 2 nodes"}, {}, None, {}, DDP_SETTINGS) == []
