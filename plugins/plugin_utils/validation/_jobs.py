# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The validation role's jobs on the controller (pure, no Ansible imports).

* the Slurm GPU job per node (gpucluster-gpu-jobs: the GPUs it got, dcgmi diag, a GPU container
  inside it) and the DDP smoke test, judged;
* Kubernetes: a GPU pod on every GPU node (the plan and the objects, the wait, the results);
* Kubernetes: the DDP smoke test as a Kubeflow PyTorchJob (the plan, its state, its result).
"""

from __future__ import annotations

import json
import re
import zlib
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from ansible_collections.gpucluster.core.plugins.plugin_utils.common._rules import RuleError
from ansible_collections.gpucluster.core.plugins.plugin_utils.validation._plan import (
    _section,
    list_items,
    module_message,
    natural_key,
    output_tail,
)

# dcgmi's own errors when no host engine (nv-hostengine) answers on the node.
_DCGM_NO_ENGINE_RE = re.compile(r"connect to host engine|establish a connection to the specified host", re.I)


# ---------------------------------------------------------------------------
# Jobs: a Slurm GPU job per node, the DDP smoke test
# ---------------------------------------------------------------------------

DDP_MARKER = "GPUCLUSTER-DDP-RESULT "
DDP_PROG = "gpucluster-ddp-smoke: "  # the script's own error lines on stderr


def gpu_jobs(report: Mapping[str, Any]) -> List[Dict[str, Any]]:
    """One result per node from gpucluster-gpu-jobs' JSON: the job ran, and saw and was allowed
    exactly the GPUs it asked for (CUDA_VISIBLE_DEVICES and the devices cgroup agree)."""
    out = []
    for job in report.get("jobs", []):
        want = job["gpus"]
        seen, usable = job.get("visible"), job.get("usable")
        if job.get("rc") != 0:
            status, message = "fail", "srun exited %s: %s" % (job.get("rc"), (job.get("output") or "no output").strip()[:500])
        elif seen == want and usable == want:
            status, message = "pass", "the job got %d GPUs and its devices cgroup allowed exactly those" % want
        else:
            status, message = "fail", ("the job asked for %d GPUs, CUDA_VISIBLE_DEVICES listed %s and its devices "
                                       "cgroup allowed %s" % (want, seen, usable))
        out.append({"check": "slurm_gpu_job", "hosts": [job["host"]], "status": status,
                    "measured": usable, "expected": want, "unit": "GPUs",
                    "source": "the GPUs requested (--gres=gpu:%d)" % want, "message": message, "series": []})
    return out


def dcgm_diag_result(host: str, level: int, parsed: Optional[Mapping[str, Any]], problem: Optional[str]) -> Dict[str, Any]:
    """A node's ``dcgmi diag -r LEVEL`` run judged: ``parsed`` is what the dcgmi parser read, or None
    with ``problem`` (dcgmi missing: skip; output that cannot be read, or dcgmi's own error: fail).
    A failed test or an error row fails, a warning warns; each names the tests."""
    result: Dict[str, Any] = {"check": "dcgm_diag", "hosts": [host], "measured": None, "expected": None, "unit": None,
                              "source": "dcgmi diag -r %d" % level, "series": []}
    if parsed is None:
        if problem is None:
            return dict(result, status="skip", message="dcgmi is not installed on the node (DCGM)")
        if _DCGM_NO_ENGINE_RE.search(problem):
            # DCGM installed without its host engine running (the exporter embeds its own): not the GPUs' fault.
            return dict(result, status="warn", message="dcgmi could not reach DCGM's host engine on the node (start it: "
                        "systemctl enable --now nvidia-dcgm): %s" % problem)
        return dict(result, status="fail", message="dcgmi diag: %s" % problem)
    tests = [t for t in parsed["tests"] if t["result"] != "skip"]
    if parsed["overall"] == "pass":
        version = " (DCGM %s)" % parsed["dcgm_version"] if parsed.get("dcgm_version") else ""
        message = "level %d: all %d tests pass%s" % (level, len(tests), version)
    else:
        parts = (["failed: %s" % ", ".join(parsed["failed"])] if parsed["failed"] else []) \
            + (["errors: %s" % "; ".join(parsed["errors"])] if parsed["errors"] else []) \
            + (["warned: %s" % ", ".join(parsed["warned"])] if parsed["warned"] else [])
        message = "level %d: %s" % (level, "; ".join(parts))
    return dict(result, status=parsed["overall"], message=message)


def container_result(host: str, run: Mapping[str, Any], node_uuids: Sequence[str]) -> Dict[str, Any]:
    """A node's GPU container (``docker run --gpus all IMAGE nvidia-smi -q -x`` inside its GPU job,
    gpucluster-gpu-jobs' ``container``: image, path, pull_rc, rc, uuids, output) judged against the
    GPUs the node itself showed (``node_uuids``, its passive checks' read).

    No docker on the node: skip. The image could not be pulled: warn (the site's registry or
    ``validation_gpu_container_image``, not the node). The container failed, listed no GPU, or
    saw other GPUs than the node's: fail.
    """
    image = run.get("image") or ""
    want = sorted(node_uuids)
    result: Dict[str, Any] = {"check": "gpu_container", "hosts": [host], "measured": None,
                              "expected": len(want) or None, "unit": "GPUs",
                              "source": "docker run --gpus all %s nvidia-smi" % image, "series": []}
    if not run.get("path"):
        return dict(result, status="skip", message="docker is not installed on the node")
    if run.get("pull_rc") not in (None, 0):
        return dict(result, status="warn", message="could not pull %s (exit %s): %s; set validation_gpu_container_image "
                    "to an image the nodes can pull" % (image, run["pull_rc"], output_tail(run.get("output"), 400)))
    if run.get("rc") != 0:
        return dict(result, status="fail", message="the container exited %s: %s" % (run.get("rc"), output_tail(run.get("output"), 400)))
    seen = run.get("uuids")
    if seen is None:
        return dict(result, status="fail", message="nvidia-smi in the container printed no GPU list: %s"
                    % output_tail(run.get("output"), 400))
    return _saw_gpus(result, "the container", seen, want)


def _saw_gpus(result: Dict[str, Any], who: str, seen: Sequence[str], want: Sequence[str]) -> Dict[str, Any]:
    """``result`` judged by the GPU UUIDs ``who`` saw against the node's own (``want``, sorted;
    empty when the node's GPUs were not read: any GPU passes, none fails)."""
    seen = sorted(seen)
    result = dict(result, measured=len(seen))
    if not want:
        return dict(result, status="pass" if seen else "fail",
                    message="%s saw %d GPUs (the node's own were not read)" % (who, len(seen)))
    if seen == list(want):
        return dict(result, status="pass", message="%s saw the node's %d GPUs" % (who, len(want)))
    missing = [u for u in want if u not in seen]
    extra = [u for u in seen if u not in want]
    parts = (["missing %s" % ", ".join(missing)] if missing else []) + (["not the node's: %s" % ", ".join(extra)] if extra else [])
    return dict(result, status="fail", message="%s saw %d GPUs, the node has %d: %s"
                % (who, len(seen), len(want), "; ".join(parts)))


def ddp_result(stdout: str, hosts: Sequence[str], rc: int, stderr: str = "") -> Dict[str, Any]:
    """The DDP smoke test's job result from rank 0's ``GPUCLUSTER-DDP-RESULT {json}`` line."""
    base: Dict[str, Any] = {"check": "ddp_smoke", "hosts": list(hosts), "unit": None,
                            "expected": "loss down, identical weights on every rank",
                            "source": "gpucluster-ddp-smoke.py", "series": []}
    lines = [line for line in (stdout or "").splitlines() if line.startswith(DDP_MARKER)]
    if len(lines) != 1:
        # The script's own one-line errors name the cause; a launcher's summary (torchrun's
        # ChildFailedError banner, srun's exit codes) printed after them does not.
        own = list(dict.fromkeys(line.strip() for line in (stderr or "").splitlines() if line.startswith(DDP_PROG)))
        tail = output_tail(" ".join(own) if own else (stderr or "") + " " + (stdout or ""))
        return dict(base, status="fail", measured=None,
                    message="the job printed %d result lines (rc=%s): %s" % (len(lines), rc, tail))
    try:
        result = json.loads(lines[0][len(DDP_MARKER):])
    except ValueError as exc:
        return dict(base, status="fail", measured=None, message="unreadable result line: %s" % exc)
    status = "pass" if result.get("status") == "pass" and rc == 0 else "fail"
    message = result.get("message") or ""
    if result.get("status") == "pass" and rc != 0:
        message = "rank 0 passed, but the job exited %s: %s" % (rc, output_tail(stderr, empty="no error output"))

    def number(key: str) -> float:
        value = result.get(key)
        return float("nan") if value is None else float(value)

    if result.get("loss_first") is None:  # failed before the first step
        measured = "no training step, %d ranks, %s" % (result.get("world_size") or 0, result.get("backend"))
    else:
        measured = "loss %.4g -> %.4g, %d ranks on %s, %s, weights %s" % (
            number("loss_first"), number("loss_last"), result.get("world_size") or 0,
            ", ".join(result.get("nodes", [])), result.get("backend"),
            "identical" if result.get("weights_identical") else (
                "differ by %s" % result["max_weight_diff"] if result.get("max_weight_diff") is not None
                else "not compared"))
    return dict(base, status=status, measured=measured, message=message,
                hosts=sorted(result.get("nodes") or hosts, key=natural_key),
                series=[{"step": p["step"], "loss": p["loss"]} for p in result.get("losses", [])])


# ---------------------------------------------------------------------------
# Kubernetes: a GPU pod on every GPU node
# ---------------------------------------------------------------------------

POD_MANAGER = "gpucluster-validation"  # app.kubernetes.io/managed-by of the validation's pods
POD_RUN_LABEL = "gpucluster.core/validation-run"
POD_CONTAINER = "gpu-check"
_POD_PREFIX = "gpucluster-validation-gpu-"
_POD_ENDED = ("Succeeded", "Failed")
# A container waiting for one of these will not start by waiting longer.
_POD_PULL_ERRORS = ("ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull")
_POD_START_ERRORS = ("CreateContainerConfigError", "CreateContainerError", "RunContainerError")


def pod_items(text: Any, what: str = "kubectl get pods") -> List[Mapping[str, Any]]:
    """The pods of a read (kubernetes.core.k8s_info's registered result with kind Pod, or kubectl's
    JSON: list_items), each with its metadata.name."""
    items = list_items(text, what, "PodList")
    for index, item in enumerate(items):
        if not isinstance(_section(item, "metadata").get("name"), str):
            raise RuleError("%s: item %d has no metadata.name" % (what, index))
    return items


def _pod_gpus(pod: Mapping[str, Any], resource: str, what: str) -> int:
    """The GPUs a pod holds: its containers' ``resource`` (limits, else requests) added up, or its
    largest init container's, whichever is more (the scheduler's own rule)."""
    spec = _section(pod, "spec")

    def counts(key: str) -> List[int]:
        out = []
        for container in spec.get(key) or []:
            resources = _section(container, "resources")
            value = _section(resources, "limits").get(resource, _section(resources, "requests").get(resource, 0))
            try:
                out.append(int(str(value)))
            except ValueError:
                raise RuleError("%s: pod %s asks for %r %s, not a whole number"
                                % (what, pod["metadata"]["name"], value, resource))
        return out

    return max([sum(counts("containers"))] + counts("initContainers"))


def gpus_in_use(text: Any, resource: str) -> Dict[str, List[str]]:
    """The pods of every namespace (pod_items) -> {node name: ["namespace/pod (N)", ...]}:
    the pods that have not ended and hold ``resource`` on each node (the validation's own left out)."""
    what = "kubectl get pods"
    out: Dict[str, List[str]] = {}
    for pod in pod_items(text, what):
        meta = pod["metadata"]
        node = _section(pod, "spec").get("nodeName")
        if (_section(meta, "labels").get("app.kubernetes.io/managed-by") == POD_MANAGER or not node
                or _section(pod, "status").get("phase") in _POD_ENDED):
            continue
        gpus = _pod_gpus(pod, resource, what)
        if gpus:
            out.setdefault(str(node), []).append("%s/%s (%d)" % (meta.get("namespace", "default"), meta["name"], gpus))
    return out


def gpu_pod_name(node: str) -> str:
    """The validation's GPU pod on ``node``: a DNS subdomain of at most 253 characters."""
    name = _POD_PREFIX + node
    if len(name) > 253:
        name = "%s-%08x" % (name[:244].rstrip(".-"), zlib.crc32(node.encode("utf-8")) & 0xFFFFFFFF)
    return name


def _labels(name: str, settings: Mapping[str, Any]) -> Dict[str, str]:
    """The labels of the validation's pods and objects: what they are, whose, which run."""
    return {"app.kubernetes.io/name": name, "app.kubernetes.io/managed-by": POD_MANAGER, POD_RUN_LABEL: settings["run"]}


def _pod_spec(nodes: Sequence[str], container: Mapping[str, Any], settings: Mapping[str, Any],
              gpus: bool) -> Dict[str, Any]:
    """What the validation's pods share. Placed by the scheduler (so the nodes' allocatable GPUs
    decide) on ``nodes`` only, as a DaemonSet's pods are; they tolerate the nodes' NoSchedule taints
    (a GPU taint, the cordon of an earlier validation: a node this validation cordoned is tested
    again); no service account token, a container without privileges; the RuntimeClass of the
    nvidia runtime when the pod gets GPUs."""
    spec: Dict[str, Any] = {
        "terminationGracePeriodSeconds": 1,
        "automountServiceAccountToken": False,
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": list(nodes)}]}]}}},
        "tolerations": [{"operator": "Exists", "effect": "NoSchedule"}],
        "containers": [dict(container, imagePullPolicy="IfNotPresent", securityContext={
            "allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]},
            "seccompProfile": {"type": "RuntimeDefault"}})],
    }
    if gpus and settings.get("runtime_class"):
        spec["runtimeClassName"] = settings["runtime_class"]
    return spec


def _gpu_pod(name: str, node: str, gpus: int, settings: Mapping[str, Any]) -> Dict[str, Any]:
    spec = _pod_spec([node], {
        "name": POD_CONTAINER,
        "image": settings["image"],
        # The NVIDIA Container Toolkit mounts the node's nvidia-smi into any image.
        "command": ["nvidia-smi", "-L"],
        "env": [{"name": "NVIDIA_DRIVER_CAPABILITIES", "value": "utility"}],
        "resources": {"limits": {settings["resource"]: str(gpus)}},
    }, settings, True)
    spec.update(restartPolicy="Never", activeDeadlineSeconds=int(settings["timeout"]), enableServiceLinks=False)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": name, "namespace": settings["namespace"], "labels": _labels("gpu-check", settings)}, "spec": spec}


def _pod_node(host: str, kubernetes: Mapping[str, Mapping[str, Any]],
              verdicts: Mapping[str, Optional[str]]) -> Optional[Mapping[str, Any]]:
    """The Kubernetes node of ``host`` when it may run the validation's pods: Kubernetes knows it,
    its passive checks did not fail, and nobody else cordoned it (an admin's cordon is left alone; a
    node this validation cordoned is tested again). None otherwise."""
    node = kubernetes.get(host)
    if not node or verdicts.get(host) == "fail" or (node.get("unschedulable") and node.get("mark") is None):
        return None
    return node


def gpu_pod_plan(hosts: Sequence[str], kubernetes: Mapping[str, Mapping[str, Any]],
                 verdicts: Mapping[str, Optional[str]], gpu_counts: Mapping[str, Optional[int]],
                 in_use: Optional[Mapping[str, Sequence[str]]], settings: Mapping[str, Any],
                 pods_error: Optional[str] = None) -> Dict[str, Any]:
    """Which GPU nodes run a GPU pod, and the objects to apply.

    A node takes part when Kubernetes knows it, it has GPUs (``gpu_counts``: the passive checks'
    read, else what Kubernetes advertises), its passive checks did not fail (``verdicts``) and
    nobody else cordoned it (an admin's cordon is left alone; a node this validation cordoned is
    tested again). The pod asks for all the node's GPUs, so a node whose GPUs other pods hold now
    gets a ``skip`` result naming them instead. A node where Kubernetes advertises none of the
    resource (no device plugin yet: the GPU Operator not deployed, or its plugin still starting
    after a reboot) gets a ``warn`` instead of a pod that could never be scheduled; fewer than the
    node's GPUs still runs the pod, which the scheduler then refuses (a fail: GPUs missing).
    ``in_use`` None with ``pods_error``: the pods could not be read, each node warns.
    ``settings``: run (the run id), namespace, image, runtime_class, resource, timeout.
    Returns {pods: {host: {name, node, gpus}}, manifest: a v1 List of the namespace and the pods
    (the namespace first), leftovers: the pods as the names an interrupted run may have left (their
    removal's definitions), skipped: [results]}.
    """
    pods: Dict[str, Dict[str, Any]] = {}
    skipped = []
    items: List[Dict[str, Any]] = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {
        "name": settings["namespace"], "labels": {"app.kubernetes.io/managed-by": POD_MANAGER}}}]
    for host in sorted(hosts, key=natural_key):
        node = _pod_node(host, kubernetes, verdicts)
        advertised = (node.get("devices") or {}).get(settings["resource"], 0) if node else 0
        gpus = gpu_counts.get(host) or advertised
        if not node or not gpus:
            continue
        why = None
        if in_use is None:
            why = "warn", "could not read the pods that hold GPUs (%s): no GPU pod" % output_tail(pods_error, 300)
        elif in_use.get(node["node"]):
            why = "skip", "its GPUs are in use by %s: no GPU pod on a busy node" % ", ".join(in_use[node["node"]])
        elif not advertised:
            why = "warn", ("Kubernetes advertises no %s on %s (no device plugin there yet: the GPU Operator not "
                           "deployed, or its device plugin still starting): no GPU pod" % (settings["resource"], node["node"]))
        if why:
            skipped.append(dict(_gpu_pod_result(host, gpus, settings), status=why[0], message=why[1]))
            continue
        name = gpu_pod_name(node["node"])
        pods[host] = {"name": name, "node": node["node"], "gpus": gpus}
        items.append(_gpu_pod(name, node["node"], gpus, settings))
    leftovers = [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": pod["name"], "namespace": settings["namespace"]}}
                 for pod in pods.values()]
    return {"pods": pods, "manifest": {"apiVersion": "v1", "kind": "List", "items": items}, "leftovers": leftovers,
            "skipped": skipped}


def _pod_state(pod: Mapping[str, Any], elapsed: float, schedule_wait: float) -> Tuple[str, str]:
    """(state, detail) of a pod: ended, pull (its image), start (a container error), unschedulable
    (for ``schedule_wait`` seconds of ``elapsed``), or waiting (anything else not ended)."""
    status = _section(pod, "status")
    if status.get("phase") in _POD_ENDED:
        return "ended", status.get("phase")
    for container in status.get("containerStatuses") or []:
        waiting = _section(_section(container, "state"), "waiting")
        reason = waiting.get("reason") or ""
        detail = ("%s: %s" % (reason, waiting.get("message") or "")).rstrip(": ")
        if reason in _POD_PULL_ERRORS:
            return "pull", detail
        if reason in _POD_START_ERRORS:
            return "start", detail
        if reason:
            return "waiting", detail
    for condition in status.get("conditions") or []:
        if (isinstance(condition, Mapping) and condition.get("type") == "PodScheduled"
                and condition.get("status") == "False"):
            detail = condition.get("message") or condition.get("reason") or "not scheduled"
            return ("unschedulable" if condition.get("reason") == "Unschedulable" and elapsed >= schedule_wait
                    else "waiting"), detail
    return "waiting", status.get("phase") or "Pending"


def gpu_pods_waiting(text: Any, names: Sequence[str], elapsed: float, schedule_wait: float = 60) -> List[str]:
    """The named pods still worth waiting for (the run's pods, pod_items): not
    ended, not stopped at their image or at starting their container, and not unschedulable for
    ``schedule_wait`` seconds. A pod missing from the list is not waited for."""
    by_name = {pod["metadata"]["name"]: pod for pod in pod_items(text)}
    return [name for name in names
            if name in by_name and _pod_state(by_name[name], elapsed, schedule_wait)[0] == "waiting"]


def _gpu_pod_result(host: str, gpus: int, settings: Mapping[str, Any]) -> Dict[str, Any]:
    return {"check": "kubernetes_gpu_pod", "hosts": [host], "measured": None, "expected": gpus, "unit": "GPUs",
            "source": "a pod asking for %d %s (%s, nvidia-smi -L)" % (gpus, settings["resource"], settings["image"]),
            "series": []}


def gpu_pod_results(plan: Mapping[str, Any], created: Mapping[str, Any], pods_text: Any,
                    logs: Mapping[str, Mapping[str, Any]], node_uuids: Mapping[str, Sequence[str]],
                    lists: Mapping[str, Any], settings: Mapping[str, Any]) -> List[Dict[str, Any]]:
    """Each planned node's GPU pod judged (``plan``: gpu_pod_plan's), then the skipped nodes.

    ``created``: the apply's {error: what it could not make, None when all was made} and the error
    of the last read of the pods (read_error); ``pods_text``: the run's pods as read after the wait
    (pod_items; None: that read failed); ``logs``: {pod name: {stdout} or {error}} of the pods'
    logs; ``node_uuids``:
    each node's GPU UUIDs from its passive checks; ``lists``: {pod name: the GPU UUIDs its
    ``nvidia-smi -L`` listed, or the parser's error text}.

    Not created, its image not pulled, the pods or its log not readable: warn (a setting or the
    control plane, not the node). Not scheduled, not started in time, failed, listed no GPU, or
    other GPUs than the node's: fail.
    """
    out = []
    by_name: Dict[str, Mapping[str, Any]] = {}
    if pods_text is not None:
        by_name = {pod["metadata"]["name"]: pod for pod in pod_items(pods_text)}
    timeout = int(settings["timeout"])
    for host in sorted(plan.get("pods") or {}, key=natural_key):
        planned = plan["pods"][host]
        result = _gpu_pod_result(host, planned["gpus"], settings)
        pod = by_name.get(planned["name"])
        if pods_text is None:
            out.append(dict(result, status="warn", message="could not read the pods after the wait (%s)"
                            % output_tail(created.get("read_error"), 400)))
            continue
        if pod is None and created.get("error"):
            # The apply makes what it can of the list: only the pods that are not there warn.
            out.append(dict(result, status="warn", message="the pod could not be created (%s); "
                            "check validation_kubernetes_namespace, validation_kubernetes_runtime_class and "
                            "validation_gpu_container_image" % output_tail(created.get("error"), 400)))
            continue
        if pod is None:
            out.append(dict(result, status="fail", message="the pod %s was gone before it ended" % planned["name"]))
            continue
        state, detail = _pod_state(pod, timeout, 0)
        if state == "pull":
            out.append(dict(result, status="warn", message="could not pull %s (%s); set validation_gpu_container_image "
                            "to an image the nodes can pull" % (settings["image"], output_tail(detail, 400))))
        elif state == "unschedulable":
            out.append(dict(result, status="fail", message="not scheduled on %s: %s"
                            % (planned["node"], output_tail(detail, 400))))
        elif state == "start":
            out.append(dict(result, status="fail", message="its container did not start: %s" % output_tail(detail, 400)))
        elif state == "waiting":
            phase = _section(pod, "status").get("phase")
            out.append(dict(result, status="fail", message=(
                "still running after %ds" % timeout if phase == "Running"
                else "did not start within %ds (%s)" % (timeout, output_tail(detail, 400)))))
        else:
            out.append(_ended_pod(result, pod, logs.get(planned["name"]) or {}, lists.get(planned["name"]),
                                  sorted(node_uuids.get(host) or [])))
    return out + [dict(entry) for entry in plan.get("skipped") or []]


def _ended_pod(result: Dict[str, Any], pod: Mapping[str, Any], log: Mapping[str, Any], listed: Any,
               want: Sequence[str]) -> Dict[str, Any]:
    status = _section(pod, "status")
    output = log.get("error") or log.get("stdout")
    if status.get("phase") == "Failed":
        exits = ["exit %s%s" % (term.get("exitCode"), " (%s)" % term["reason"] if term.get("reason") else "")
                 for term in (_section(_section(c, "state"), "terminated") for c in status.get("containerStatuses") or [])
                 if term]
        why = "; ".join(part for part in [" ".join(x for x in (status.get("reason"), status.get("message")) if x)]
                        + exits if part)
        return dict(result, status="fail",
                    message="the pod failed (%s): %s" % (why or "no reason given", output_tail(output)))
    if log.get("error") or (listed is None and not log):
        # The pod ran to its end; the API server could not fetch its log from kubelet: not the GPUs.
        return dict(result, status="warn", message="the pod ended, but its output could not be read (its log: %s)"
                    % output_tail(output, 400, "not read"))
    if not isinstance(listed, list):
        return dict(result, status="fail", message="nvidia-smi -L in the pod printed no GPU list (%s): %s"
                    % (listed or "no output", output_tail(output, 400)))
    return _saw_gpus(result, "the pod", listed, want)


# ---------------------------------------------------------------------------
# Kubernetes: the DDP smoke test as a Kubeflow PyTorchJob
# ---------------------------------------------------------------------------

DDP_JOB = "gpucluster-validation-ddp"
DDP_SCRIPT_DIR = "/opt/gpucluster"
DDP_SCRIPT = "gpucluster-ddp-smoke.py"
# The training operator names a PyTorchJob's pods <job>-<replica type>-<index>: rank 0 is the Master.
DDP_MASTER_POD = DDP_JOB + "-master-0"


def ddp_job_plan(hosts: Sequence[str], kubernetes: Mapping[str, Mapping[str, Any]],
                 verdicts: Mapping[str, Optional[str]], gpu_pods: Sequence[Mapping[str, Any]],
                 settings: Mapping[str, Any]) -> Dict[str, Any]:
    """The nodes of the DDP PyTorchJob and the objects to apply.

    The nodes: those Kubernetes knows whose passive checks did not fail and that nobody else
    cordoned, the GPU nodes whose GPU pod passed first (natural order), then nodes without GPUs;
    a GPU node whose GPU pod did not pass takes no part. ``settings["nodes"]`` of them (none when
    there are fewer): one pod each (pod anti-affinity), one GPU each and NCCL when every chosen
    node has GPUs, else gloo on the CPU (as the Slurm job does). The script comes in a ConfigMap
    (``settings["script"]``: its text). ``settings``: run, namespace, image, runtime_class,
    resource, timeout, nodes, steps, script.
    Returns {hosts, nodes (Kubernetes names), gpu, manifest (a v1 List), leftovers (the job and the
    ConfigMap, their removal's definitions), master_pod (rank 0's pod, as the training operator names
    it: <job>-master-0), or hosts [] and why}.
    """
    by_check = {tuple(r["hosts"]): r["status"] for r in gpu_pods}
    gpu_hosts, cpu_hosts = [], []
    for host in sorted(hosts, key=natural_key):
        node = _pod_node(host, kubernetes, verdicts)
        if not node:
            continue
        pod = by_check.get((host,))
        if (node.get("devices") or {}).get(settings["resource"]):
            if pod == "pass":
                gpu_hosts.append(host)
        elif pod is None:
            cpu_hosts.append(host)
    chosen = (gpu_hosts + cpu_hosts)[:int(settings["nodes"])]
    if len(chosen) < int(settings["nodes"]):
        return {"hosts": [], "nodes": [], "gpu": False, "manifest": {},
                "why": "%d of the %d nodes it needs can take part (schedulable, passive checks and GPU pod passed)"
                       % (len(chosen), int(settings["nodes"]))}
    gpu = all(host in gpu_hosts for host in chosen)
    names = [kubernetes[host]["node"] for host in chosen]
    labels = _labels("ddp-smoke", settings)
    container: Dict[str, Any] = {
        "name": "pytorch",  # the name the training operator looks for
        "image": settings["image"],
        "command": ["python3", "%s/%s" % (DDP_SCRIPT_DIR, DDP_SCRIPT), "--backend=%s" % ("nccl" if gpu else "gloo"),
                    "--steps=%d" % int(settings["steps"]), "--expect-world-size=%d" % len(chosen),
                    "--expect-nodes=%d" % len(chosen)],
        "volumeMounts": [{"name": "script", "mountPath": DDP_SCRIPT_DIR, "readOnly": True}],
    }
    if gpu:
        container["env"] = [{"name": "NVIDIA_DRIVER_CAPABILITIES", "value": "compute,utility"}]
        container["resources"] = {"limits": {settings["resource"]: "1"}}
    pod_spec = _pod_spec(names, container, settings, gpu)
    # one rank per node: the job must cross the nodes' network
    pod_spec["affinity"]["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {POD_RUN_LABEL: settings["run"], "app.kubernetes.io/name": "ddp-smoke"}},
         "topologyKey": "kubernetes.io/hostname"}]}
    pod_spec["volumes"] = [{"name": "script", "configMap": {"name": DDP_JOB}}]

    def replica(count: int) -> Dict[str, Any]:
        template = {"metadata": {"labels": dict(labels)}, "spec": pod_spec}
        return {"replicas": count, "restartPolicy": "Never", "template": template}

    meta = {"namespace": settings["namespace"], "labels": dict(labels)}
    job = {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": dict(meta, name=DDP_JOB), "spec": {
        "runPolicy": {"backoffLimit": 0, "activeDeadlineSeconds": int(settings["timeout"]), "cleanPodPolicy": "None"},
        "pytorchReplicaSpecs": {"Master": replica(1), "Worker": replica(len(chosen) - 1)}}}
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": dict(meta, name=DDP_JOB),
              "data": {DDP_SCRIPT: settings["script"]}}
    leftovers = [{"apiVersion": item["apiVersion"], "kind": item["kind"],
                  "metadata": {"name": DDP_JOB, "namespace": settings["namespace"]}} for item in (job, config)]
    return {"hosts": chosen, "nodes": names, "gpu": gpu, "why": None,
            "manifest": {"apiVersion": "v1", "kind": "List", "items": [config, job]}, "leftovers": leftovers,
            "master_pod": DDP_MASTER_POD}


def _job_conditions(job: Mapping[str, Any]) -> Dict[str, Mapping[str, Any]]:
    return {c.get("type"): c for c in _section(job, "status").get("conditions") or []
            if isinstance(c, Mapping) and c.get("status") == "True"}


def ddp_job_state(text: Any, elapsed: float, operator_wait: float) -> Tuple[str, str]:
    """(state, detail) of the PyTorchJob (kubernetes.core.k8s_info's registered result with its name,
    the job as a dict, or ``kubectl get pytorchjob --output=json``): succeeded, failed, running, or
    no-operator (no status ``operator_wait`` seconds after it was made: the training operator's
    controller did not take it)."""
    job = text
    if isinstance(text, str):
        try:
            job = json.loads(text)
        except ValueError as exc:
            raise RuleError("kubectl get pytorchjob: the output is not JSON (%s)" % exc)
    if isinstance(job, Mapping) and isinstance(job.get("resources"), list):
        if not job["resources"]:
            raise RuleError("the PyTorchJob is not there (%s)" % (module_message(job.get("msg")) or "none found"))
        job = job["resources"][0]
    if not isinstance(job, Mapping) or job.get("kind") != "PyTorchJob":
        raise RuleError("kubectl get pytorchjob: the output is not a PyTorchJob")
    conditions = _job_conditions(job)
    for kind, state in (("Succeeded", "succeeded"), ("Failed", "failed")):
        if kind in conditions:
            return state, " ".join(x for x in (conditions[kind].get("reason"), conditions[kind].get("message")) if x)
    if not _section(job, "status") and elapsed >= operator_wait:
        return "no-operator", "no status"
    return "running", ", ".join(sorted(conditions)) or "no status yet"


def ddp_job_result(plan: Mapping[str, Any], created: Mapping[str, Any], job_text: Any,
                   logs: Mapping[str, Any], settings: Mapping[str, Any]) -> List[Dict[str, Any]]:
    """The PyTorchJob's ``ddp_smoke`` result (none when it had too few nodes to run): ``created`` is
    the apply's {error: None when it was made}; ``job_text`` the job as read after the wait
    (ddp_job_state; None: that read failed, ``created["read_error"]`` says why); ``logs`` rank 0's
    log, {stdout} or {error} (rank 0 prints the result line). Not submitted (no training operator CRDs) or not
    taken (no controller running), or unreadable: warn; failed, or still running at the timeout:
    fail; succeeded: rank 0's line decides, as for the Slurm job."""
    if not plan.get("hosts"):
        return []
    source = "gpucluster-ddp-smoke.py as a PyTorchJob (%s)" % settings["image"]
    base: Dict[str, Any] = {"check": "ddp_smoke", "hosts": list(plan["hosts"]), "unit": None, "measured": None,
                            "expected": "loss down, identical weights on every rank", "source": source, "series": []}
    if created.get("error"):
        return [dict(base, status="warn", message="could not submit the PyTorchJob (%s); is the "
                     "training operator installed (the training_operator role)?" % output_tail(created.get("error"), 400))]
    if job_text is None:
        return [dict(base, status="warn", message="could not read the PyTorchJob after the wait (%s)"
                     % output_tail(created.get("read_error"), 400))]
    state, detail = ddp_job_state(job_text, float(settings["timeout"]), float(settings["operator_wait"]))
    if state == "no-operator":
        return [dict(base, status="warn", message="the training operator did not take the PyTorchJob within %ds (no "
                     "status): is its controller running?" % int(settings["operator_wait"]))]
    if state == "running":
        return [dict(base, status="fail", message="the PyTorchJob still ran after %ds (%s)"
                     % (int(settings["timeout"]), detail))]
    if state == "succeeded" and logs.get("error"):
        # The API server could not fetch rank 0's log from kubelet: not the nodes' training.
        return [dict(base, status="warn", message="the PyTorchJob succeeded, but rank 0's log could not be read "
                     "(%s)" % output_tail(logs.get("error"), 400))]
    stdout = logs.get("stdout") or ""
    result = ddp_result(stdout or "", plan["hosts"], 0 if state == "succeeded" else 1,
                        detail if state == "failed" else "")
    # The ranks name their pods, not the nodes: the nodes are the plan's.
    return [dict(result, hosts=list(plan["hosts"]), source=source)]
