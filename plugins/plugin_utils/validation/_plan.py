# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The validation role's plan on the controller (pure, no Ansible imports): what runs where.

* Slurm's and Kubernetes' view of the nodes (``scontrol show node``, ``kubectl get nodes``):
  which nodes they know, drained or cordoned (and by whom), not responding, with how many GPUs;
* what each host installs and runs for the active checks, and which checks the run runs;
* what every part of the validation shares: the results document's schema, the statuses, the
  policies, the natural host order, the end of a program's output.

The other parts: _validation_checks (what each node must show, and what follows from its
verdict: drain, resume, cordon, uncordon; rolling maintenance), _validation_fabric (bandwidth
expectations, benchmark judging, pairing nodes), _validation_jobs (the GPU jobs, the GPU pods,
the DDP smoke test), _validation_report (the results document and its rendering).
"""

from __future__ import annotations

import ast
import base64
import json
import re
from typing import Any, Dict, List, Mapping, Optional, Sequence

from ansible_collections.gpucluster.core.plugins.module_utils import _health as health
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._rules import RuleError

SCHEMA = "gpucluster.core/validation-result/v1"
STATUSES = ("pass", "warn", "fail", "skip")
POLICIES = ("report", "drain", "drain-and-stop")


def natural_key(name: str) -> List[Any]:
    """node2 before node10."""
    return health.natural_key(name)


def output_tail(text: Optional[str], limit: int = 600, empty: str = "no output") -> str:
    """The end of a program's output on one line (what names the cause), ``empty`` when it printed nothing."""
    return " ".join((text or "").split())[-limit:] or empty


def _section(item: Any, key: str) -> Mapping[str, Any]:
    """``item[key]`` when both are mappings, else an empty one (kubectl's JSON, read without KeyError)."""
    value = item.get(key) if isinstance(item, Mapping) else None
    return value if isinstance(value, Mapping) else {}


# ---------------------------------------------------------------------------
# Slurm: what the scheduler says about each node
# ---------------------------------------------------------------------------

def parse_scontrol_nodes(text: str) -> Dict[str, Dict[str, Any]]:
    """``scontrol show node`` (multi-line form) -> {node: {state, flags, reason, gpus}}: the node
    program's parser (module_utils _health.scontrol_nodes), its errors as RuleError."""
    try:
        return health.scontrol_nodes(text)
    except health.HealthError as exc:
        raise RuleError(str(exc))


def not_responding(nodes: Mapping[str, Mapping[str, Any]], hosts: Sequence[str]) -> List[str]:
    """Which of ``hosts`` Slurm shows NOT_RESPONDING (a node just resumed is, until its next ping)."""
    return [host for host in hosts if "NOT_RESPONDING" in (nodes.get(host) or {}).get("flags", [])]


def drained(node: Mapping[str, Any]) -> bool:
    return health.node_drained(dict(node))


# ---------------------------------------------------------------------------
# Kubernetes: what it says about each node
# ---------------------------------------------------------------------------

def list_items(data: Any, what: str, kind: str) -> List[Any]:
    """The items of a list the API server gave: kubernetes.core.k8s_info's registered result
    (``resources``), a List as a dict (``items``), or kubectl's JSON text of one (``what`` names the
    read in the errors, ``kind`` the list's kind)."""
    if isinstance(data, str):
        try:
            data = json.loads(data)
        except ValueError as exc:
            raise RuleError("%s: the output is not JSON (%s)" % (what, exc))
    if isinstance(data, Mapping) and isinstance(data.get("resources"), list):
        return data["resources"]
    if not isinstance(data, Mapping) or not isinstance(data.get("items"), list):
        raise RuleError("%s: the output has no items list (a %s)" % (what, kind))
    return data["items"]


_STATUS_BODY_RE = re.compile(r"b'\{.*\}(\\n)?'")


def module_message(text: Any) -> str:
    """A failed module's message without the frame ansible-core 2.19 puts around it, and with the API
    server's Status body that kubernetes.core quotes (``Failed to apply object: b'{"kind":"Status",...}'``)
    read down to its message, as kubectl prints it."""
    text = re.sub(r"^Task failed: (Module|Action) failed: ", "", str(text or "")).strip()
    match = _STATUS_BODY_RE.search(text)
    if match:
        try:
            body = json.loads(ast.literal_eval(match.group(0)))
        except (ValueError, SyntaxError):
            body = None
        if isinstance(body, Mapping) and isinstance(body.get("message"), str):
            text = text[:match.start()] + body["message"] + text[match.end():]
    return text


def parse_kubectl_nodes(text: Any, names: Mapping[str, str], mark: str) -> Dict[str, Dict[str, Any]]:
    """The nodes (kubernetes.core.k8s_info's registered result with kind Node, or ``kubectl get nodes
    --output=json``: list_items) -> {inventory host: {node, unschedulable, mark, stale, devices}}.

    ``names`` maps each inventory host to its Kubernetes node name; hosts Kubernetes does not
    know are left out. ``mark`` is the annotation the validation puts on the nodes it cordons:
    its value (the reason) or None. ``stale``: the mark is there but the node is schedulable
    (someone uncordoned it by hand), so the mark no longer says who cordoned it. ``devices``: the
    node's allocatable extended resources (those a device plugin advertises, ``nvidia.com/gpu``),
    as numbers.
    """
    by_name: Dict[str, Dict[str, Any]] = {}
    for index, item in enumerate(list_items(text, "kubectl get nodes", "NodeList")):
        try:
            name, unschedulable, value, _meta = health.kubectl_node(item, index, mark)
        except health.HealthError as exc:
            raise RuleError(str(exc))
        devices = {}
        allocatable = _section(_section(item, "status"), "allocatable")
        for resource, quantity in allocatable.items():
            if "/" in str(resource):
                try:
                    devices[str(resource)] = int(str(quantity))
                except ValueError:
                    raise RuleError("kubectl get nodes: node %s: allocatable %s is %r, not a whole number"
                                    % (name, resource, quantity))
        by_name[name] = {"node": name, "unschedulable": unschedulable, "mark": value,
                         "stale": value is not None and not unschedulable, "devices": devices}
    return {host: dict(by_name[name]) for host, name in names.items() if name in by_name}


# ---------------------------------------------------------------------------
# What the tasks run: this host's part, the checks that run, Kubernetes' view
# ---------------------------------------------------------------------------

ACTIVE_PROGRAMS = ("gpucluster-gpu-jobs", "gpucluster-ib-pair")


def host_plan(host: str, checks: Sequence[str], controller: str, compute: Sequence[str], ddp: bool,
              perftest_path: str) -> Dict[str, Any]:
    """What ``host`` installs for the active checks (``checks``: validation_checks; ``controller``:
    the Slurm controller, '' without one; ``compute``: the Slurm compute group's hosts).

    ``active``: it takes part (the controller drives the jobs, the compute nodes run them);
    ``programs``: the active checks' programs it runs (gpucluster-gpu-jobs on the controller,
    gpucluster-ib-pair on a compute node when ``perftest_path`` names ib_write_bw); ``ddp``: a
    compute node with the DDP smoke test on; ``fabric_tools``: a compute node (perftest, nccl-tests).
    """
    active_checks = "active" in checks
    computes = host in compute
    active = active_checks and (host == controller or computes)
    programs = []
    if active and host == controller:
        programs.append(ACTIVE_PROGRAMS[0])
    if active and perftest_path and computes:
        programs.append(ACTIVE_PROGRAMS[1])
    return {"active": active, "programs": programs, "ddp": bool(active_checks and ddp and computes),
            "fabric_tools": active_checks and computes}


def checks_run(checks: Sequence[str], controller: str, kubernetes_api: str, controller_group: str,
               control_plane_group: str) -> Dict[str, Any]:
    """The checks this run runs (``run``) and those it names as not run, with why (``not_run``):
    the active checks run as Slurm jobs and Kubernetes pods, so without a Slurm ``controller`` and
    a Kubernetes control plane node (``kubernetes_api``), both '' when the inventory has none,
    they do not run. The groups name where the inventory would hold them."""
    if controller or kubernetes_api or "active" not in checks:
        return {"run": list(checks), "not_run": {}}
    why = ("no Slurm controller (group %s) and no Kubernetes control plane (group %s) in the inventory: "
           "the active checks run as Slurm jobs and Kubernetes pods" % (controller_group, control_plane_group))
    return {"run": [check for check in checks if check != "active"], "not_run": {"active": why}}


def kubernetes_view(read: Mapping[str, Any], api: str, names: Mapping[str, str], mark: str) -> Dict[str, Any]:
    """Kubernetes' view of the nodes from the registered kubernetes.core.k8s_info read of kind Node on
    ``api`` (the control plane node, '' without Kubernetes, when the read was skipped).

    ``nodes``: parse_kubectl_nodes of its resources, empty when the read failed or did not run;
    ``read``: what the report says of it: ``none`` without Kubernetes, else the node that read
    them, with the module's error (200 characters at most) when it failed.
    """
    ok = not read.get("failed") and isinstance(read.get("resources"), list)
    nodes = parse_kubectl_nodes(read, names, mark) if ok else {}
    if not api:
        said = "none"
    elif ok:
        said = api
    else:
        said = "%s (reading the nodes failed, nothing cordoned: %s)" % (api, module_message(read.get("msg"))[:200])
    return {"nodes": nodes, "read": said}


def reader_kubeconfig(node_config: Any, read: Mapping[str, Any], user: str) -> Dict[str, Any]:
    """The kubeconfig with which the health check program reads the nodes (``kubectl get nodes``) as
    ``user``, a ServiceAccount that may only get and list them: the API server's address from the node's
    own kubeconfig (``node_config``, the kubelet's, as YAML read: the cluster of its current context, else
    its first), the cluster's CA and the token from ``read``, the registered kubernetes.core.k8s_info read
    of the ServiceAccount's token Secret (its data in base64, as the API server gives it).

    Why not the kubelet's own credentials for the read: the Node authorizer lets a node list every node
    up to Kubernetes 1.31, but with AuthorizeNodeWithSelectors (on by default from 1.32) a node may read
    only its own Node object, and the drain budget needs them all. The cordon itself is the kubelet's
    (NodeRestriction lets a node patch its own spec.unschedulable and annotations, never its taints).
    """
    if not isinstance(node_config, Mapping):
        raise RuleError("the node's kubeconfig is not a kubeconfig (got %s)" % type(node_config).__name__)
    clusters = [c for c in node_config.get("clusters") or [] if isinstance(c, Mapping)]
    contexts = dict((c.get("name"), c.get("context") or {}) for c in node_config.get("contexts") or [] if isinstance(c, Mapping))
    wanted = (contexts.get(node_config.get("current-context")) or {}).get("cluster")
    chosen = next((c for c in clusters if c.get("name") == wanted), clusters[0] if clusters else None)
    server = ((chosen or {}).get("cluster") or {}).get("server")
    if not isinstance(server, str) or not server.startswith("https://"):
        raise RuleError("the node's kubeconfig names no https:// API server (got %r)" % (server,))
    resources = read.get("resources") if isinstance(read, Mapping) else None
    data = (resources[0].get("data") if resources and isinstance(resources[0], Mapping) else None) or {}
    if not data.get("token") or not data.get("ca.crt"):
        raise RuleError("the ServiceAccount token Secret has no token and ca.crt yet (the token controller fills them in)")
    try:
        token = base64.b64decode(str(data["token"]), validate=True).decode("ascii")
    except (ValueError, UnicodeDecodeError):
        raise RuleError("the ServiceAccount token Secret's token is not base64 text")
    return {
        "apiVersion": "v1", "kind": "Config", "current-context": user, "preferences": {},
        "clusters": [{"name": "kubernetes", "cluster": {"server": server, "certificate-authority-data": str(data["ca.crt"])}}],
        "users": [{"name": user, "user": {"token": token}}],
        "contexts": [{"name": user, "context": {"cluster": "kubernetes", "user": user}}],
    }
