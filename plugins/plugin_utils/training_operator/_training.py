# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The training_operator role's logic (controller side, pure, no Ansible imports): the training jobs'
input rules and their manifests, a Kubeflow PyTorchJob (kubeflow.org/v1, the training operator) or a
TrainJob (trainer.kubeflow.org/v1alpha1, Kubeflow Trainer v2), from the job as data: image, command,
nodes, GPUs per node, the NFS share mounted."""

from __future__ import annotations

import re
from typing import Any, Dict, List, Mapping

from ansible_collections.gpucluster.core.plugins.plugin_utils.common._input_types import describe
from ansible_collections.gpucluster.core.plugins.plugin_utils.kubernetes._kubernetes import _IMAGE_REF_RE, _LABEL_RE
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._rules import (
    Errors, RoleInput, abs_path, boolean, hostname, int_range, matches, pip_env, url)

KINDS = ("PyTorchJob", "TrainJob")
JOB_KEYS = ("name", "namespace", "kind", "image", "command", "nodes", "gpus_per_node", "nfs", "env", "runtime")
NFS_KEYS = ("server", "path", "mount_path", "read_only")
GPU = "nvidia.com/gpu"
# The container name the operator expects in a PyTorchJob, and the trainer's job and container in
# Kubeflow Trainer's torch-distributed runtime.
PYTORCH_CONTAINER = "pytorch"
TRAINER_NODE = "node"
_ENV_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_VOLUME = "gpc-nfs"


def _check_job(errors: Errors, where: str, job: Any) -> None:
    if not isinstance(job, Mapping):
        errors.add(where, "must be a dict with name, image, command and nodes (got %r)" % (job,))
        return
    unknown = sorted(set(job) - set(JOB_KEYS))
    if unknown:
        errors.add(where, "has unknown keys %s (known: %s)" % (", ".join(map(str, unknown)), ", ".join(JOB_KEYS)))
    errors.check(where + ".name", matches(job.get("name"), _LABEL_RE, "a DNS label (lowercase letters, digits and -)"))
    errors.check(where + ".namespace", matches(job.get("namespace", "default"), _LABEL_RE, "a namespace name (a DNS label)"))
    if job.get("kind", "PyTorchJob") not in KINDS:
        errors.add(where + ".kind", "must be PyTorchJob or TrainJob (got %r)" % (job.get("kind"),))
    errors.check(where + ".image", matches(job.get("image"), _IMAGE_REF_RE, "an image reference"))
    command = job.get("command")
    if not isinstance(command, list) or not command or not all(isinstance(c, str) and c for c in command):
        errors.add(where + ".command", "must be a non-empty list of strings (got %r)" % (command,))
    errors.check(where + ".nodes", int_range(job.get("nodes"), 1, 1024))
    errors.check(where + ".gpus_per_node", int_range(job.get("gpus_per_node", 0), 0, 64))
    env = job.get("env", {})
    if not isinstance(env, Mapping) or not all(isinstance(k, str) and _ENV_RE.match(k) and isinstance(v, str)
                                               for k, v in env.items()):
        errors.add(where + ".env", "must be a dict of variable names to strings (got %r)" % (env,))
    if "runtime" in job and job.get("kind", "PyTorchJob") != "TrainJob":
        errors.add(where + ".runtime", "names a Kubeflow Trainer runtime: only for kind TrainJob")
    elif "runtime" in job:
        errors.check(where + ".runtime", matches(job["runtime"], _LABEL_RE, "a runtime name (a DNS label)"))
    nfs = job.get("nfs")
    if nfs is not None:
        if not isinstance(nfs, Mapping) or set(nfs) - set(NFS_KEYS):
            errors.add(where + ".nfs", "must be a dict of %s (got %r)" % (", ".join(NFS_KEYS), nfs))
            return
        errors.check(where + ".nfs.server", hostname(nfs.get("server")))
        errors.check(where + ".nfs.path", abs_path(nfs.get("path")))
        if "mount_path" in nfs:
            errors.check(where + ".nfs.mount_path", abs_path(nfs.get("mount_path")))
        errors.check(where + ".nfs.read_only", boolean(nfs.get("read_only", False)))


def training_operator_errors(values: Mapping[str, Any]) -> List[str]:
    """Every error in the role's values; each job's messages name its index and name."""
    errors = Errors()
    manifest = values.get("training_operator_manifest")
    if not isinstance(manifest, str) or re.search(r"\s", manifest):
        errors.add("training_operator_manifest", "must be empty (none), a URL, a path or a kustomize remote"
                   " (github.com/...?ref=...) without blanks (got %r)" % (manifest,))
    elif manifest and values.get("training_operator_manifest_kustomize", True) is False \
            and url(manifest, ("http", "https")) and abs_path(manifest):
        # kubectl apply -f reads anything without a scheme as a file on the control plane node.
        errors.add("training_operator_manifest", "must be an http:// or https:// URL or an absolute path to a manifest"
                   " file with training_operator_manifest_kustomize false (got %r)" % (manifest,))
    for name in ("training_operator_manifest_kustomize", "training_operator_server_side_apply"):
        errors.check(name, boolean(values.get(name, True)))
    jobs = values.get("training_operator_jobs")
    if not isinstance(jobs, list):
        errors.add("training_operator_jobs", "must be a list of jobs (got %s)" % describe(jobs))
        return errors.messages
    seen: Dict[Any, int] = {}
    for index, job in enumerate(jobs):
        name = job.get("name") if isinstance(job, Mapping) else None
        where = "training_operator_jobs[%d]%s" % (index, " (%s)" % name if isinstance(name, str) else "")
        _check_job(errors, where, job)
        if isinstance(job, Mapping):
            key = (job.get("namespace", "default"), job.get("kind", "PyTorchJob"), name)
            if key in seen:
                errors.add(where, "has the same kind, namespace and name as training_operator_jobs[%d]" % seen[key])
            seen.setdefault(key, index)
    errors.check("training_operator_control_plane_group", matches(values.get("training_operator_control_plane_group"),
                                                                  re.compile(r"^[A-Za-z0-9_-]+$"), "a group name"))
    pip_env(errors, "training_operator_kubernetes_client_pip_env", values.get("training_operator_kubernetes_client_pip_env"))
    return errors.messages


def input_errors(given: RoleInput) -> List[str]:
    """The rules over the play's values (the role runs on one host, the first control plane node)."""
    return training_operator_errors(given.shared)


def _volumes(job: Mapping[str, Any]):
    nfs = job.get("nfs")
    if not nfs:
        return [], []
    volume = {"name": _VOLUME, "nfs": {"server": nfs["server"], "path": nfs["path"],
                                       "readOnly": bool(nfs.get("read_only", False))}}
    mount = {"name": _VOLUME, "mountPath": nfs.get("mount_path", nfs["path"])}
    return [volume], [mount]


def _env(job: Mapping[str, Any]) -> List[Dict[str, str]]:
    return [{"name": k, "value": v} for k, v in sorted((job.get("env") or {}).items())]


def job_manifest(job: Mapping[str, Any]) -> Dict[str, Any]:
    """The job's manifest: a PyTorchJob (one Master, nodes - 1 Workers, each with gpus_per_node GPUs and
    torchrun's processes per node) or a TrainJob on a Trainer runtime (numNodes, resourcesPerNode)."""
    gpus = int(job.get("gpus_per_node", 0))
    volumes, mounts = _volumes(job)
    metadata = {"name": job["name"], "namespace": job.get("namespace", "default"),
                "labels": {"app.kubernetes.io/managed-by": "gpucluster.core"}}
    if job.get("kind", "PyTorchJob") == "TrainJob":
        trainer: Dict[str, Any] = {"image": job["image"], "command": list(job["command"]), "numNodes": int(job["nodes"])}
        if gpus:
            trainer["resourcesPerNode"] = {"limits": {GPU: gpus}}
            trainer["numProcPerNode"] = gpus
        if job.get("env"):
            trainer["env"] = _env(job)
        spec: Dict[str, Any] = {"runtimeRef": {"name": job.get("runtime", "torch-distributed"),
                                               "kind": "ClusterTrainingRuntime", "apiGroup": "trainer.kubeflow.org"},
                                "trainer": trainer}
        if volumes:
            spec["podSpecOverrides"] = [{"targetJobs": [{"name": TRAINER_NODE}], "volumes": volumes,
                                         "containers": [{"name": TRAINER_NODE, "volumeMounts": mounts}]}]
        return {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "metadata": metadata, "spec": spec}
    container: Dict[str, Any] = {"name": PYTORCH_CONTAINER, "image": job["image"], "command": list(job["command"])}
    if gpus:
        container["resources"] = {"limits": {GPU: gpus}}
    if job.get("env"):
        container["env"] = _env(job)
    if mounts:
        container["volumeMounts"] = mounts
    pod: Dict[str, Any] = {"containers": [container]}
    if volumes:
        pod["volumes"] = volumes

    def replica(count: int) -> Dict[str, Any]:
        return {"replicas": count, "restartPolicy": "OnFailure", "template": {"spec": pod}}

    replicas = {"Master": replica(1)}
    if int(job["nodes"]) > 1:
        replicas["Worker"] = replica(int(job["nodes"]) - 1)
    spec = {"pytorchReplicaSpecs": replicas}
    if gpus:
        spec["nprocPerNode"] = str(gpus)
    return {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": metadata, "spec": spec}
