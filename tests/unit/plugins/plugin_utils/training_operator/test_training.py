# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The training_operator role's logic: the jobs' input rules (exact messages) and their manifests."""

from __future__ import annotations

import pytest

from ansible_collections.gpucluster.core.plugins.plugin_utils.training_operator import _training as t

JOB = {"name": "ddp-smoke", "image": "nvcr.io/nvidia/pytorch:24.08-py3", "command": ["torchrun", "/data/train.py"],
       "nodes": 2, "gpus_per_node": 8, "env": {"NCCL_DEBUG": "INFO"},
       "nfs": {"server": "master", "path": "/data/shared", "mount_path": "/data"}}
GOOD = {"training_operator_manifest": "github.com/kubeflow/training-operator.git/manifests/overlays/standalone?ref=v1.8.1",
        "training_operator_manifest_kustomize": True, "training_operator_jobs": [JOB],
        "training_operator_control_plane_group": "k8s_control_plane", "training_operator_kubernetes_client_pip_env": {}}


def test_good_values_have_no_error():
    assert t.training_operator_errors(GOOD) == []
    assert t.training_operator_errors(dict(GOOD, training_operator_manifest="")) == []


@pytest.mark.parametrize("change, message", [
    ({"name": "DDP_smoke"}, "training_operator_jobs[0] (DDP_smoke).name: must be a DNS label (lowercase letters, digits and -)"
                            " (got 'DDP_smoke')"),
    ({"kind": "MPIJob"}, "training_operator_jobs[0] (ddp-smoke).kind: must be PyTorchJob or TrainJob (got 'MPIJob')"),
    ({"command": "torchrun train.py"},
     "training_operator_jobs[0] (ddp-smoke).command: must be a non-empty list of strings (got 'torchrun train.py')"),
    ({"nodes": 0}, "training_operator_jobs[0] (ddp-smoke).nodes: must be within 1-1024 (got 0)"),
    ({"gpus_per_node": "8"}, "training_operator_jobs[0] (ddp-smoke).gpus_per_node: must be an integer (got '8')"),
    ({"env": {"NCCL-DEBUG": "INFO"}},
     "training_operator_jobs[0] (ddp-smoke).env: must be a dict of variable names to strings (got {'NCCL-DEBUG': 'INFO'})"),
    ({"runtime": "torch-distributed"},
     "training_operator_jobs[0] (ddp-smoke).runtime: names a Kubeflow Trainer runtime: only for kind TrainJob"),
    ({"nfs": {"server": "master", "path": "data/shared"}},
     "training_operator_jobs[0] (ddp-smoke).nfs.path: must be an absolute path (got 'data/shared')"),
    ({"gpu": 8}, "training_operator_jobs[0] (ddp-smoke): has unknown keys gpu (known: name, namespace, kind, image, command,"
                 " nodes, gpus_per_node, nfs, env, runtime)"),
], ids=["name", "kind", "command", "nodes", "gpus", "env", "runtime", "nfs-path", "unknown-key"])
def test_bad_job(change, message):
    assert t.training_operator_errors(dict(GOOD, training_operator_jobs=[dict(JOB, **change)])) == [message]


@pytest.mark.parametrize("jobs, got", [
    ({"name": "ddp-smoke"}, "a mapping"), ("ddp-smoke", "the string 'ddp-smoke'"), (None, "null")])
def test_jobs_not_a_list(jobs, got):
    assert t.training_operator_errors(dict(GOOD, training_operator_jobs=jobs)) == [
        "training_operator_jobs: must be a list of jobs (got %s)" % got]


def test_two_jobs_of_one_name_and_a_bad_manifest():
    errors = t.training_operator_errors(dict(GOOD, training_operator_manifest="a b", training_operator_jobs=[JOB, JOB]))
    assert errors == [
        "training_operator_manifest: must be empty (none), a URL, a path or a kustomize remote (github.com/...?ref=...)"
        " without blanks (got 'a b')",
        "training_operator_jobs[1] (ddp-smoke): has the same kind, namespace and name as training_operator_jobs[0]"]


def test_pytorchjob_manifest():
    manifest = t.job_manifest(JOB)
    assert manifest["apiVersion"] == "kubeflow.org/v1" and manifest["kind"] == "PyTorchJob"
    assert manifest["metadata"]["namespace"] == "default"
    spec = manifest["spec"]
    assert spec["nprocPerNode"] == "8"
    assert {k: v["replicas"] for k, v in spec["pytorchReplicaSpecs"].items()} == {"Master": 1, "Worker": 1}
    pod = spec["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]
    assert pod["volumes"] == [{"name": "gpc-nfs", "nfs": {"server": "master", "path": "/data/shared", "readOnly": False}}]
    assert pod["containers"] == [{"name": "pytorch", "image": JOB["image"], "command": JOB["command"],
                                  "resources": {"limits": {"nvidia.com/gpu": 8}},
                                  "env": [{"name": "NCCL_DEBUG", "value": "INFO"}],
                                  "volumeMounts": [{"name": "gpc-nfs", "mountPath": "/data"}]}]
    single = t.job_manifest(dict(JOB, nodes=1, gpus_per_node=0, nfs=None, env={}))
    assert list(single["spec"]["pytorchReplicaSpecs"]) == ["Master"]
    assert "nprocPerNode" not in single["spec"]


def test_trainjob_manifest():
    manifest = t.job_manifest(dict(JOB, kind="TrainJob", nodes=4))
    assert manifest["apiVersion"] == "trainer.kubeflow.org/v1alpha1"
    spec = manifest["spec"]
    assert spec["runtimeRef"] == {"name": "torch-distributed", "kind": "ClusterTrainingRuntime",
                                  "apiGroup": "trainer.kubeflow.org"}
    assert spec["trainer"]["numNodes"] == 4 and spec["trainer"]["numProcPerNode"] == 8
    assert spec["trainer"]["resourcesPerNode"] == {"limits": {"nvidia.com/gpu": 8}}
    assert spec["podSpecOverrides"][0]["targetJobs"] == [{"name": "node"}]
    assert spec["podSpecOverrides"][0]["containers"] == [{"name": "node",
                                                          "volumeMounts": [{"name": "gpc-nfs", "mountPath": "/data"}]}]


@pytest.mark.parametrize("manifest, kustomize", [
    ("/opt/gpc-test/training-operator/base/crds", True),
    ("https://github.com/kubeflow/training-operator/manifests/overlays/standalone?ref=v1.8.1", True),
    ("https://raw.githubusercontent.com/kubeflow/training-operator/v1.8.1/manifests/crds.yaml", False),
    ("http://mirror:8080/training-operator.yaml", False),
    ("/srv/manifests/training-operator.yaml", False),
    ("", False),
])
def test_good_manifest(manifest, kustomize):
    assert t.training_operator_errors(dict(GOOD, training_operator_manifest=manifest,
                                           training_operator_manifest_kustomize=kustomize)) == []


@pytest.mark.parametrize("manifest", [
    "raw.githubusercontent.com/kubeflow/training-operator/v1.8.1/manifests/crds.yaml",
    "manifests/training-operator.yaml",
    "ftp://mirror/training-operator.yaml",
])
def test_manifest_file_without_scheme(manifest):
    assert t.training_operator_errors(dict(GOOD, training_operator_manifest=manifest,
                                           training_operator_manifest_kustomize=False)) == [
        "training_operator_manifest: must be an http:// or https:// URL or an absolute path to a manifest file with"
        " training_operator_manifest_kustomize false (got %r)" % manifest]


def test_apply_switches_are_booleans():
    assert t.training_operator_errors(dict(GOOD, training_operator_server_side_apply="no")) == [
        "training_operator_server_side_apply: must be true or false (got 'no')"]


def test_client_pip_env_names_pip_variables():
    assert t.training_operator_errors(dict(GOOD, training_operator_kubernetes_client_pip_env={
        "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": "http://mirror:8080/wheels/"})) == []
    assert t.training_operator_errors(dict(GOOD, training_operator_kubernetes_client_pip_env={"index-url": "x"})) == [
        "training_operator_kubernetes_client_pip_env: 'index-url' is not a PIP_* variable name"]
