# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The validation role's node checks on the controller (pure, no Ansible imports).

* what each node is expected to show (the ``expected`` of the node_health module: GPU count and
  model, driver and CUDA versions, the HCA, mounts, services, Xid codes, clock, free space), and where each
  expectation came from;
* what follows from a node's verdict in Slurm (drain, resume, leave an admin's drain alone) and
  in Kubernetes (cordon, uncordon, leave an admin's cordon alone), and which of those failed;
* rolling maintenance (playbooks/maintenance.yml): its settings, the nodes to drain.
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from ansible_collections.gpucluster.core.plugins.module_utils._health import (
    DRAIN_BUDGET_FRACTION,
    DRAIN_BUDGET_MIN_NODES,
    DISK_MIN_FREE_PERCENT,
    TIME_FAIL_OFFSET,
    budget_split,
    drained_by,
    flapping_drain,
    reason_checks,
    unjudged,
)
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._rules import RuleError
from ansible_collections.gpucluster.core.plugins.plugin_utils.validation._plan import (
    POLICIES,
    drained,
    module_message,
    natural_key,
    output_tail,
)


# ---------------------------------------------------------------------------
# What each node is expected to show
# ---------------------------------------------------------------------------

def _value(value: Any, source: str) -> Dict[str, Any]:
    return {"value": value, "source": source}


def node_expectations(settings: Mapping[str, Any], slurm_node: Optional[Mapping[str, Any]],
                      baseline_node: Optional[Mapping[str, Any]], gpu_node: bool) -> Dict[str, Any]:
    """The ``expected`` dict of the node_health module for one node.

    ``settings``: the host's variables the role passes in (``validation_gpu_count``,
    ``validation_gpu_model``, ``validation_driver_version``, ``validation_cuda_version``,
    ``nvidia_driver_version``, ``nvidia_driver_branch``, ``cuda_default_toolkit``,
    ``slurm_gres_expected_gpus``, ``validation_hca``, ``validation_mounts``,
    ``validation_services``, ``validation_xid_codes``, ``validation_severity``,
    ``validation_time_max_offset``, ``validation_time_fail_offset`` (time_sync; 0 or unset: none),
    ``validation_disk_space_paths``, ``validation_disk_space_min_free_percent``,
    ``validation_disk_space_min_free_mib`` (disk_space; no paths: none)).
    First source wins: the variable set for the node, the scheduler's definition, the
    burn-in baseline, the software roles' pins.
    """
    expected: Dict[str, Any] = {}
    base_checks = {c["check"]: c for c in (baseline_node or {}).get("checks", [])}

    if not gpu_node:
        expected["gpu_count"] = _value(0, "not a GPU node (gpucluster_gpu_nodes)")
    elif settings.get("validation_gpu_count"):
        expected["gpu_count"] = _value(int(settings["validation_gpu_count"]), "validation_gpu_count")
    elif slurm_node and slurm_node.get("gpus"):
        expected["gpu_count"] = _value(slurm_node["gpus"], "Slurm's node definition (gres/gpu=%d)" % slurm_node["gpus"])
    elif settings.get("slurm_gres_expected_gpus"):
        expected["gpu_count"] = _value(int(settings["slurm_gres_expected_gpus"]), "slurm_gres_expected_gpus")
    elif base_checks.get("gpu_count", {}).get("measured"):
        expected["gpu_count"] = _value(base_checks["gpu_count"]["measured"], "the burn-in baseline")

    if settings.get("validation_gpu_model"):
        expected["gpu_model"] = _value(settings["validation_gpu_model"], "validation_gpu_model")
    elif base_checks.get("gpu_model", {}).get("measured"):
        expected["gpu_model"] = _value(base_checks["gpu_model"]["measured"], "the burn-in baseline")

    for check, names in (("driver_version", ("validation_driver_version", "nvidia_driver_version",
                                             "nvidia_driver_branch")),
                         ("cuda_version", ("validation_cuda_version", "cuda_default_toolkit"))):
        for name in names:
            if settings.get(name):
                expected[check] = _value(str(settings[name]), name)
                break

    hca = settings.get("validation_hca")
    if hca:
        expected["hca"] = dict(hca, source=hca.get("source") or (
            "validation_hca.rate_gbps" if hca.get("rate_gbps") else "the fastest active port of the same adapter model"))
    if settings.get("validation_mounts"):
        expected["mounts"] = [dict(m, source="validation_mounts") for m in settings["validation_mounts"]]
    if settings.get("validation_services"):
        expected["services"] = list(settings["validation_services"])
    if settings.get("validation_xid_codes"):
        expected["xid_codes"] = [int(code) for code in settings["validation_xid_codes"]]
    if settings.get("validation_time_max_offset"):
        expected["time_sync"] = {"max_offset": float(settings["validation_time_max_offset"]),
                                 "fail_offset": float(settings.get("validation_time_fail_offset") or TIME_FAIL_OFFSET),
                                 "source": "validation_time_max_offset"}
    if settings.get("validation_disk_space_paths"):
        expected["disk_space"] = {
            "paths": list(settings["validation_disk_space_paths"]),
            "min_free_percent": float(settings.get("validation_disk_space_min_free_percent", DISK_MIN_FREE_PERCENT)),
            "min_free_bytes": int(settings.get("validation_disk_space_min_free_mib") or 0) * 2 ** 20,
            "source": "validation_disk_space_paths"}
    if settings.get("validation_severity"):
        expected["severity"] = dict(settings["validation_severity"])
    return expected


# ---------------------------------------------------------------------------
# Drain and resume
# ---------------------------------------------------------------------------

def _check_policy(policy: str) -> None:
    if policy not in POLICIES:
        raise RuleError("validation_policy: %r is not one of %s" % (policy, ", ".join(POLICIES)))


def failing_checks(checks: Sequence[Mapping[str, Any]]) -> List[str]:
    """The names of a node's failed checks, in order: the reason of its drain and its cordon."""
    return [c["check"] for c in checks if c["status"] == "fail"]


def not_judged(checks: Sequence[Mapping[str, Any]], reason: Optional[str], prefix: str) -> List[str]:
    """Those of the checks a drain or cordon reason of this validation names (``<prefix> gpu_count,xid``)
    that this run could not judge: their tool could not run (``tooling``, a warn). The repair is not
    proven, so the node stays out of service; none when the reason is not this validation's."""
    return unjudged(list(checks), reason_checks(reason or "", prefix))


def resumable(hosts: Sequence[str], health: Mapping[str, Optional[Mapping[str, Any]]],
              slurm: Mapping[str, Mapping[str, Any]], prefix: str) -> List[str]:
    """Nodes this validation drained (reason starts with ``prefix``) whose passive checks do not
    fail now, and judged every check the drain names: resumed before the active checks so that the
    jobs test them again."""
    out = []
    for host in sorted(hosts, key=natural_key):
        node = slurm.get(host)
        result = health.get(host) or {}
        if (node and drained(node) and (node.get("reason") or "").startswith(prefix)
                and not flapping_drain(node.get("reason") or "", prefix)
                and result.get("verdict") in ("pass", "warn")
                and not not_judged(result.get("checks") or [], node.get("reason"), prefix)):
            out.append(host)
    return out


# What a node that wants a drain (or cordon) past the drain budget gets instead.
HELD = "held (drain budget)"
# A node gpucluster-healthcheck drained for flapping, passing now: kept (quarantine.yml retests it).
KEPT_FLAPPING = "kept drained (flapping)"
DEFAULT_BUDGET = (DRAIN_BUDGET_FRACTION, DRAIN_BUDGET_MIN_NODES)


def _hold(out: Dict[str, Dict[str, Any]], kinds: Sequence[str], total: int, ours: Sequence[str],
          budget: Tuple[float, int], prefix: str, verb: str) -> None:
    """Turn the new drains (cordons) of ``out`` (those of ``kinds``) past the drain budget into
    HELD, their reason saying why (module_utils _health.budget_split); ``ours``: the nodes this
    validation keeps drained (cordoned) after this run's resumes."""
    wanted = [host for host, action in out.items() if action["kind"] in kinds]
    split = budget_split(total, list(ours), wanted, budget[0], budget[1], prefix, verb)
    for host in split["held"]:
        out[host] = dict(out[host], kind=HELD, reason="%s (not %s: %s)" % (out[host]["reason"], verb, split["why"]))


def node_actions(verdicts: Mapping[str, str], failing: Mapping[str, Sequence[str]],
                 slurm: Mapping[str, Mapping[str, Any]], policy: str, prefix: str,
                 resumed_early: Sequence[str] = (),
                 checks: Optional[Mapping[str, Sequence[Mapping[str, Any]]]] = None,
                 budget: Tuple[float, int] = DEFAULT_BUDGET) -> Dict[str, Dict[str, Any]]:
    """What to do in Slurm with each judged node.

    A failing node is drained with the reason ``<prefix> <checks>``; a node this validation
    drained (its reason starts with ``prefix``) is resumed when it passes (or only warns), unless
    a check its reason names could not be judged (``checks``: each node's results; see
    not_judged): then it is kept drained. A node drained for any other reason (an admin's) is never
    touched. ``report`` only says what it would do. Nodes Slurm does not know get nothing.
    ``resumed_early``: the nodes resumed before the active checks (see resumable), drained again if
    they failed them.
    ``budget``: (fraction, minimum nodes), the drain budget: this validation keeps at most that many
    of the nodes Slurm lists drained at once (after this run's resumes); a new drain past it is
    HELD, in natural host order. A node it drained already, failing again, spends nothing; an
    admin's drains are not counted.
    """
    _check_policy(policy)
    out: Dict[str, Dict[str, Any]] = {}
    for host, verdict in verdicts.items():
        node = slurm.get(host)
        if node is None:
            out[host] = {"kind": "none", "reason": None}
            continue
        if host in resumed_early:
            # Resumed before the active checks (its passive checks passed): kept so, or drained again.
            if verdict == "fail":
                out[host] = {"kind": "drained", "reason": "%s %s" % (prefix, ",".join(failing.get(host) or ["unknown"]))}
            else:
                out[host] = {"kind": "resumed", "reason": node.get("reason")}
            continue
        ours = (node.get("reason") or "").startswith(prefix)
        is_drained = drained(node)
        if is_drained and ours and flapping_drain(node.get("reason") or "", prefix):
            # gpucluster-healthcheck drained it for flapping: kept, failing or passing (a new reason would
            # make it an ordinary drain the program lifts at its next pass); the quarantine retests it
            out[host] = {"kind": KEPT_FLAPPING, "reason": node.get("reason")}
        elif verdict == "fail":
            reason = "%s %s" % (prefix, ",".join(failing.get(host) or ["unknown"]))
            if is_drained and not ours:
                out[host] = {"kind": "kept drained (admin)", "reason": node.get("reason")}
            elif is_drained and (node.get("reason") or "").split(" [")[0] == reason:
                out[host] = {"kind": "none", "reason": node.get("reason")}
            elif policy == "report":
                out[host] = {"kind": "would drain (report only)", "reason": reason}
            else:
                out[host] = {"kind": "drained", "reason": reason}
        elif is_drained and ours and not_judged((checks or {}).get(host) or [], node.get("reason"), prefix):
            out[host] = {"kind": "kept drained (not judged)", "reason": node.get("reason")}
        elif is_drained and ours:
            out[host] = {"kind": "would resume (report only)" if policy == "report" else "resumed",
                         "reason": node.get("reason")}
        elif is_drained:
            out[host] = {"kind": "kept drained (admin)", "reason": node.get("reason")}
        else:
            out[host] = {"kind": "none", "reason": None}
    ours = [host for host in drained_by(dict(slurm), prefix)
            if out.get(host, {}).get("kind") not in ("resumed", "would resume (report only)")]
    _hold(out, ("drained", "would drain (report only)"), len(slurm), ours, budget, prefix, "drained")
    return out


# ---------------------------------------------------------------------------
# Kubernetes: cordon and uncordon
# ---------------------------------------------------------------------------

CORDON_KINDS = ("cordoned", "uncordoned", "none", "kept cordoned (admin)", "kept cordoned (not judged)",
                "would cordon (report only)",
                "would uncordon (report only)", HELD)


def cordon_actions(verdicts: Mapping[str, str], failing: Mapping[str, Sequence[str]],
                   kubernetes: Mapping[str, Mapping[str, Any]], policy: str,
                   prefix: str,
                   checks: Optional[Mapping[str, Sequence[Mapping[str, Any]]]] = None,
                   budget: Tuple[float, int] = DEFAULT_BUDGET) -> Dict[str, Dict[str, Any]]:
    """What to do in Kubernetes with each judged node it knows.

    A failing node is cordoned and marked with the reason ``<prefix> <checks>`` (the same words
    as its Slurm drain); a node the validation cordoned (unschedulable with the mark) is
    uncordoned when it passes or only warns, unless a check its mark names could not be judged
    (``checks``, as in node_actions); a node cordoned without the mark (an admin's) is
    never touched. Cordoning keeps the pods that run (as Slurm's drain keeps its jobs) and stops
    new ones. ``report`` only says what it would do. ``unmark``: the mark is to be removed.
    ``budget``: the drain budget as in node_actions, over the nodes ``kubernetes`` holds and those
    cordoned with the mark.
    """
    _check_policy(policy)
    out: Dict[str, Dict[str, Any]] = {}
    for host, verdict in verdicts.items():
        node = kubernetes.get(host)
        if node is None:
            continue
        ours = node["unschedulable"] and node.get("mark") is not None
        kind = "none"
        reason = node.get("mark") if ours else None
        if verdict == "fail":
            wanted = "%s %s" % (prefix, ",".join(failing.get(host) or ["unknown"]))
            if node["unschedulable"] and not ours:
                kind = "kept cordoned (admin)"
            elif not (ours and node.get("mark") == wanted):
                kind = "would cordon (report only)" if policy == "report" else "cordoned"
            reason = wanted
        elif ours and not_judged((checks or {}).get(host) or [], node.get("mark"), prefix):
            kind = "kept cordoned (not judged)"
        elif ours:
            kind = "would uncordon (report only)" if policy == "report" else "uncordoned"
        elif node["unschedulable"]:
            kind = "kept cordoned (admin)"
        # The mark goes with the cordon, and from a node someone uncordoned by hand (else a later
        # admin cordon of it would read as the validation's).
        unmark = policy != "report" and (kind == "uncordoned" or (node.get("stale", False) and verdict != "fail"))
        out[host] = {"node": node["node"], "kind": kind, "reason": reason, "unmark": unmark}
    ours = [host for host, node in kubernetes.items() if node["unschedulable"] and node.get("mark") is not None
            and out.get(host, {}).get("kind") not in ("uncordoned", "would uncordon (report only)")]
    _hold(out, ("cordoned", "would cordon (report only)"), len(kubernetes), ours, budget, prefix, "cordoned")
    return out


def cordon_patch(mark: str, cordon: bool, reason: Optional[str] = None) -> Dict[str, Any]:
    """The strategic merge patch that cordons a node with ``mark`` set to ``reason``, or uncordons it
    and removes ``mark`` (``cordon`` false: ``reason`` is not used), for kubernetes.core.k8s
    ``state: patched``."""
    return {"spec": {"unschedulable": cordon}, "metadata": {"annotations": {mark: reason if cordon else None}}}


# ---------------------------------------------------------------------------
# The node actions that failed
# ---------------------------------------------------------------------------

def failed_actions(actions: Mapping[str, Any]) -> List[str]:
    """The node actions that failed, ``<action> <host>: <the end of the command's error>``, from the
    registered loop results of the action tasks by action name (``{"drain": result, ...}``), in
    that order. Each loop item is a node of the results document (``host``). A task that did not
    run (skipped, no item) contributes nothing. A kubernetes.core.k8s patch of a node the API server
    no longer has only warns and returns no object: it failed too."""
    failures = []
    for action, result in actions.items():
        for item in (result or {}).get("results") or []:
            gone = isinstance(item.get("result"), Mapping) and not item["result"] and "method" not in item
            if item.get("skipped") or not (item.get("failed") or item.get("rc") not in (None, 0) or gone):
                continue
            host = (item.get("item") or {}).get("host", "?")
            why = output_tail(item.get("stderr") or module_message(item.get("msg")) or
                              ("the node is not in Kubernetes (nothing patched)" if gone else ""), 300, "no message")
            failures.append("%s %s: %s" % (action, host, why))
    return failures


# ---------------------------------------------------------------------------
# Rolling maintenance (playbooks/maintenance.yml)
# ---------------------------------------------------------------------------

MAINTENANCE_ROLES = ("nvidia_driver", "cuda", "ofed", "container_toolkit", "slurm")
_BATCH_RE = re.compile(r"^([1-9][0-9]?|100)%$")


def maintenance_errors(settings: Mapping[str, Any]) -> List[str]:
    """Every error in the maintenance playbook's settings, each naming the variable."""
    errors = []
    roles = settings.get("maintenance_roles")
    if not isinstance(roles, list) or any(role not in MAINTENANCE_ROLES for role in roles):
        errors.append("maintenance_roles: must be a list of %s (got %r)" % (", ".join(MAINTENANCE_ROLES), roles))
    batch = settings.get("maintenance_batch")
    if isinstance(batch, str) and batch.isdigit():
        batch = int(batch)
    if not ((isinstance(batch, int) and not isinstance(batch, bool) and batch >= 1)
            or (isinstance(batch, str) and _BATCH_RE.match(batch))):
        errors.append("maintenance_batch: must be a number of nodes (1 or more) or a percentage (1%%-100%%) (got %r)"
                      % (batch,))
    timeout = settings.get("maintenance_drain_timeout")
    if isinstance(timeout, str) and timeout.isdigit():
        timeout = int(timeout)
    if not isinstance(timeout, int) or isinstance(timeout, bool) or not 60 <= timeout <= 604800:
        errors.append("maintenance_drain_timeout: must be seconds within 60-604800 (got %r)" % (timeout,))
    return errors


def maintenance_to_drain(slurm: Mapping[str, Mapping[str, Any]], hosts: Sequence[str]) -> List[str]:
    """The batch's nodes to drain: those Slurm knows that are not drained already (an admin's
    drain keeps its reason; a node a failed maintenance drained stays as it is)."""
    return [host for host in sorted(hosts, key=natural_key) if host in slurm and not drained(slurm[host])]
