# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The validation role's logic on the controller (pure, no Ansible imports).

* what each node is expected to show, and where that expectation came from;
* bandwidth expectations from the hardware (NIC line rate per GPU, NVLink or PCIe generation);
* judging benchmark results (nccl-tests, perftest) against them;
* pairing nodes for the fabric tests, and re-mixing slow pairs to find the node at fault;
* what to do with each node in Slurm (drain, resume, leave an admin's drain alone) and in
  Kubernetes (cordon, uncordon, leave an admin's cordon alone);
* the run's results document (schema ``gpucluster.core/validation-result/v1``) and the
  comparison with a baseline kept from the burn-in.
"""

from __future__ import annotations

import json
import re
import zlib
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from ansible_collections.gpucluster.core.plugins.plugin_utils._rules import RuleError

SCHEMA = "gpucluster.core/validation-result/v1"
STATUSES = ("pass", "warn", "fail", "skip")
POLICIES = ("report", "drain", "drain-and-stop")

# Unidirectional NVLink bandwidth per GPU (GB/s) by architecture (NVIDIA's data sheets: V100
# 300 GB/s, A100 600 GB/s, H100/H200 900 GB/s, B200 1.8 TB/s, counted both ways).
NVLINK_GBS = {"Volta": 150.0, "Ampere": 300.0, "Hopper": 450.0, "Blackwell": 900.0}
# PCIe x16 payload bandwidth one way (GB/s) by generation.
PCIE_X16_GBS = {3: 15.75, 4: 31.5, 5: 63.0, 6: 121.0}

_NODE_RE = re.compile(r"^NodeName=(\S+)")
_GRES_GPU_RE = re.compile(r"(?:^|,)gpu(?::[^:,()]+)?:(\d+)")
_NATURAL_RE = re.compile(r"(\d+)")
# dcgmi's own errors when no host engine (nv-hostengine) answers on the node.
_DCGM_NO_ENGINE_RE = re.compile(r"connect to host engine|establish a connection to the specified host", re.I)


def natural_key(name: str) -> List[Any]:
    """node2 before node10."""
    return [int(part) if part.isdigit() else part for part in _NATURAL_RE.split(name)]


# ---------------------------------------------------------------------------
# Slurm: what the scheduler says about each node
# ---------------------------------------------------------------------------

def parse_scontrol_nodes(text: str) -> Dict[str, Dict[str, Any]]:
    """``scontrol show node`` (multi-line form) -> {node: {state, flags, reason, gpus}}.

    ``state`` is the base state (IDLE, MIXED, ALLOCATED, DOWN...), ``flags`` the ``+`` flags
    (DRAIN, NOT_RESPONDING...), ``reason`` the whole Reason line (it may hold blanks) or None,
    ``gpus`` the configured ``gpu`` GRES count (``Gres=gpu:8``, ``gpu:h100:8(S:0-1)``) or None.
    """
    nodes: Dict[str, Dict[str, Any]] = {}
    current: Optional[Dict[str, Any]] = None
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        match = _NODE_RE.match(line)
        if match:
            current = {"state": None, "flags": [], "reason": None, "gpus": None}
            nodes[match.group(1)] = current
        elif current is None:
            raise RuleError("scontrol show node: line %d comes before any NodeName= line: %s" % (number, line))
        if line.startswith("Reason="):
            current["reason"] = line[len("Reason="):].strip() or None
            continue
        for field in line.split():
            key, dummy, value = field.partition("=")
            if key == "State":
                parts = value.split("+")
                current["state"] = parts[0].rstrip("*")
                current["flags"] = parts[1:]
            elif key == "Gres":
                found = _GRES_GPU_RE.findall(value)
                current["gpus"] = sum(int(count) for count in found) if found else None
    for name, node in nodes.items():
        if node["state"] is None:
            raise RuleError("scontrol show node: node %s has no State= field" % name)
    return nodes


def not_responding(nodes: Mapping[str, Mapping[str, Any]], hosts: Sequence[str]) -> List[str]:
    """Which of ``hosts`` Slurm shows NOT_RESPONDING (a node just resumed is, until its next ping)."""
    return [host for host in hosts if "NOT_RESPONDING" in (nodes.get(host) or {}).get("flags", [])]


def drained(node: Mapping[str, Any]) -> bool:
    return "DRAIN" in node["flags"] or node["state"] in ("DRAINED", "DRAINING")


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
    ``validation_services``, ``validation_xid_codes``, ``validation_severity``).
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
    if settings.get("validation_severity"):
        expected["severity"] = dict(settings["validation_severity"])
    return expected


# ---------------------------------------------------------------------------
# Bandwidth expectations from the hardware
# ---------------------------------------------------------------------------

def nic_rate_per_gpu(ibstat: Optional[Mapping[str, Any]], gpu_count: int,
                     link_layers: Sequence[str] = ("InfiniBand", "Ethernet")) -> Optional[float]:
    """Gb/s of Active compute-fabric ports per GPU (the rails NCCL uses): the sum of the active
    ports' rates of the adapter model with the most ports, divided by the GPU count (at most one
    port per GPU counts: 8 rails for 8 GPUs)."""
    if not ibstat or not gpu_count:
        return None
    layers = set(layer.lower() for layer in link_layers)
    by_model: Dict[str, List[float]] = {}
    for ca in ibstat.get("cas", []):
        for port in ca["ports"]:
            if port["state"] == "Active" and (port["link_layer"] or "InfiniBand").lower() in layers:
                by_model.setdefault(ca.get("type") or "?", []).append(float(port["rate_gbps"] or 0))
    if not by_model:
        return None
    rates = max(by_model.values(), key=lambda r: (len(r), sum(r)))
    rates = sorted(rates, reverse=True)[:gpu_count]
    return sum(rates) / gpu_count


def fastest_active_port(ibstat: Optional[Mapping[str, Any]]) -> Optional[Tuple[float, str]]:
    """(rate in Gb/s, adapter) of the node's fastest Active port: the adapter ib_write_bw runs on
    and the rate its result is judged against; the first such adapter by name on a tie; None
    without an Active port."""
    best: Optional[Tuple[float, str]] = None
    for ca in sorted((ibstat or {}).get("cas", []), key=lambda c: natural_key(c["name"])):
        for port in ca["ports"]:
            rate = float(port["rate_gbps"] or 0)
            if port["state"] == "Active" and (best is None or rate > best[0]):
                best = (rate, ca["name"])
    return best


def nccl_expectation(scope: str, fraction: float, *, nic_gbps_per_gpu: Optional[float] = None,
                     architecture: Optional[str] = None, nvlink: bool = False,
                     pcie_gen: Optional[int] = None) -> Optional[Dict[str, Any]]:
    """Expected all_reduce peak out-of-place bus bandwidth (GB/s) with where it came from.

    ``inter`` (across nodes): ``fraction`` x the per-GPU NIC line rate (NVIDIA's guidance:
    46-48 GB/s per 400G NDR NIC, 0.9 x 50). ``intra`` (within a node): ``fraction`` x the
    one-way NVLink bandwidth of the GPU generation, or of the PCIe x16 link without NVLink.
    None when the hardware does not tell.
    """
    if scope == "inter":
        if not nic_gbps_per_gpu:
            return None
        line = nic_gbps_per_gpu / 8.0
        return {"value": round(fraction * line, 2), "unit": "GB/s",
                "source": "%.2f x %g Gb/s NIC line rate per GPU (ibstat)" % (fraction, nic_gbps_per_gpu)}
    if nvlink and architecture in NVLINK_GBS:
        line = NVLINK_GBS[architecture]
        return {"value": round(fraction * line, 2), "unit": "GB/s",
                "source": "%.2f x %g GB/s %s NVLink per GPU" % (fraction, line, architecture)}
    if pcie_gen in PCIE_X16_GBS:
        line = PCIE_X16_GBS[pcie_gen]
        return {"value": round(fraction * line, 2), "unit": "GB/s",
                "source": "%.2f x %g GB/s PCIe gen%d x16" % (fraction, line, pcie_gen)}
    return None


def judge(check: str, hosts: Sequence[str], measured: Optional[float], expected: Optional[Mapping[str, Any]],
          *, series: Optional[List[Dict[str, Any]]] = None, recorded: Optional[str] = None,
          errors: Optional[str] = None, higher_is_better: bool = True) -> Dict[str, Any]:
    """One benchmark result (a pair or a node) judged against its expectation."""
    result: Dict[str, Any] = {
        "check": check, "hosts": list(hosts), "measured": measured,
        "expected": expected["value"] if expected else None,
        "unit": expected["unit"] if expected else None,
        "source": expected["source"] if expected else None,
        "recorded": bool(recorded), "series": series or [],
        "note": ("no fabric here: judged on the recorded output %s, not on these nodes" % recorded)
        if recorded else None,
    }
    if errors:
        result.update(status="fail", message=errors)
    elif measured is None:
        result.update(status="fail", message="no result")
    elif not expected:
        result.update(status="warn", message="%s: %g measured, nothing to compare with" % (check, measured))
    else:
        ok = measured >= expected["value"] if higher_is_better else measured <= expected["value"]
        result.update(status="pass" if ok else "fail",
                      message="%g %s measured, %s %g expected" % (
                          measured, expected["unit"], ">=" if higher_is_better else "<=", expected["value"]))
    return result


# ---------------------------------------------------------------------------
# Pairing nodes for the fabric tests
# ---------------------------------------------------------------------------

def pairs(hosts: Sequence[str]) -> List[List[str]]:
    """Neighbours in natural order: (1,2), (3,4)...; an odd last node pairs with the first."""
    ordered = sorted(hosts, key=natural_key)
    out = [ordered[i:i + 2] for i in range(0, len(ordered) - 1, 2)]
    if len(ordered) % 2 and len(ordered) > 1:
        out.append([ordered[-1], ordered[0]])
    return out


def remix(results: Sequence[Mapping[str, Any]]) -> List[List[str]]:
    """Second-round pairs for the slow (failed) pairs: each node of a slow pair with a node that
    was only in good pairs, so that a node slow again is the one at fault. A node of a slow pair
    never helps (with an odd node count one node is in two pairs), and is re-tested once."""
    slow = [r["hosts"] for r in results if r["status"] == "fail"]
    suspects = set(h for pair in slow for h in pair)
    good: List[str] = []
    for r in results:
        if r["status"] == "pass":
            good.extend(h for h in r["hosts"] if h not in suspects and h not in good)
    out: List[List[str]] = []
    helpers = iter(good)
    for pair in slow:
        for host in pair:
            if any(host == again[0] for again in out):
                continue
            partner = next(helpers, None)
            if partner is None:
                return out
            out.append([host, partner])
    return out


def blame(first: Sequence[Mapping[str, Any]], second: Sequence[Mapping[str, Any]]) -> Dict[str, str]:
    """Nodes at fault: slow in round one and again with a good partner in round two.
    {host: message}; a slow pair whose nodes were both fine with others is blamed on the link."""
    slow_again = {r["hosts"][0] for r in second if r["status"] == "fail"}
    fine_again = {r["hosts"][0] for r in second if r["status"] == "pass"}
    out: Dict[str, str] = {}
    for result in first:
        if result["status"] != "fail":
            continue
        for host in result["hosts"]:
            if host in slow_again:
                out[host] = "slow with %s and again with another node" % " and ".join(
                    h for h in result["hosts"] if h != host)
        if all(h in fine_again for h in result["hosts"]):
            for host in result["hosts"]:
                out.setdefault(host, "slow only together with %s: the path between them (cable, switch port)"
                               % " and ".join(h for h in result["hosts"] if h != host))
    return out


def fabric_rounds(first: Sequence[Mapping[str, Any]], second: Sequence[Mapping[str, Any]]) -> List[Dict[str, Any]]:
    """Round one's pair results with what round two (remix's pairs) found, then round two's own.

    Each result gets ``round`` (1 or 2). A failed pair of round one gets ``blame``, per host,
    where round two tells who is at fault (see blame): ``fail`` for a node slow again with a good
    partner, ``pass`` for its partner, ``warn`` for both nodes of a pair slow only together (the
    path between them: no node to drain). Round two's results count for no node: a good helper
    paired with the bad node is not at fault. Checks are matched by name."""
    out: List[Dict[str, Any]] = []
    for check in sorted(set(r["check"] for r in first)):
        ones = [r for r in first if r["check"] == check]
        twos = [r for r in second if r["check"] == check]
        at_fault = blame(ones, twos)
        slow_again = set(r["hosts"][0] for r in twos if r["status"] == "fail")
        for result in ones:
            result = dict(result, round=1)
            if result["status"] == "fail" and any(h in at_fault for h in result["hosts"]):
                culprits = [h for h in result["hosts"] if h in at_fault and h in slow_again]
                per_host: Dict[str, Dict[str, str]] = {}
                for host in result["hosts"]:
                    if host in at_fault:
                        per_host[host] = {"status": "fail" if host in slow_again else "warn", "message": at_fault[host]}
                    else:
                        per_host[host] = {"status": "pass", "message": "slow with %s, which was slow again with another node"
                                          % " and ".join(culprits)}
                result["blame"] = per_host
            out.append(result)
        out.extend(dict(r, round=2) for r in twos)
    return out


# ---------------------------------------------------------------------------
# Drain and resume
# ---------------------------------------------------------------------------

def _check_policy(policy: str) -> None:
    if policy not in POLICIES:
        raise RuleError("validation_policy: %r is not one of %s" % (policy, ", ".join(POLICIES)))


def resumable(hosts: Sequence[str], health: Mapping[str, Optional[Mapping[str, Any]]],
              slurm: Mapping[str, Mapping[str, Any]], prefix: str) -> List[str]:
    """Nodes this validation drained (reason starts with ``prefix``) whose passive checks do not
    fail now: resumed before the active checks so that the jobs test them again."""
    out = []
    for host in sorted(hosts, key=natural_key):
        node = slurm.get(host)
        verdict = (health.get(host) or {}).get("verdict")
        if node and drained(node) and (node.get("reason") or "").startswith(prefix) and verdict in ("pass", "warn"):
            out.append(host)
    return out


def node_actions(verdicts: Mapping[str, str], failing: Mapping[str, Sequence[str]],
                 slurm: Mapping[str, Mapping[str, Any]], policy: str, prefix: str,
                 resumed_early: Sequence[str] = ()) -> Dict[str, Dict[str, Any]]:
    """What to do in Slurm with each judged node.

    A failing node is drained with the reason ``<prefix> <checks>``; a node this validation
    drained (its reason starts with ``prefix``) is resumed when it passes (or only warns);
    a node drained for any other reason (an admin's) is never touched. ``report`` only says
    what it would do. Nodes Slurm does not know get nothing. ``resumed_early``: the nodes
    resumed before the active checks (see resumable), drained again if they failed them.
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
        if verdict == "fail":
            reason = "%s %s" % (prefix, ",".join(failing.get(host) or ["unknown"]))
            if is_drained and not ours:
                out[host] = {"kind": "kept drained (admin)", "reason": node.get("reason")}
            elif is_drained and (node.get("reason") or "").split(" [")[0] == reason:
                out[host] = {"kind": "none", "reason": node.get("reason")}
            elif policy == "report":
                out[host] = {"kind": "would drain (report only)", "reason": reason}
            else:
                out[host] = {"kind": "drained", "reason": reason}
        elif is_drained and ours:
            out[host] = {"kind": "would resume (report only)" if policy == "report" else "resumed",
                         "reason": node.get("reason")}
        elif is_drained:
            out[host] = {"kind": "kept drained (admin)", "reason": node.get("reason")}
        else:
            out[host] = {"kind": "none", "reason": None}
    return out


# ---------------------------------------------------------------------------
# Kubernetes: cordon and uncordon
# ---------------------------------------------------------------------------

CORDON_KINDS = ("cordoned", "uncordoned", "none", "kept cordoned (admin)", "would cordon (report only)",
                "would uncordon (report only)")


def parse_kubectl_nodes(text: str, names: Mapping[str, str], mark: str) -> Dict[str, Dict[str, Any]]:
    """``kubectl get nodes --output=json`` -> {inventory host: {node, unschedulable, mark, stale, devices}}.

    ``names`` maps each inventory host to its Kubernetes node name; hosts Kubernetes does not
    know are left out. ``mark`` is the annotation the validation puts on the nodes it cordons:
    its value (the reason) or None. ``stale``: the mark is there but the node is schedulable
    (someone uncordoned it by hand), so the mark no longer says who cordoned it. ``devices``: the
    node's allocatable extended resources (those a device plugin advertises, ``nvidia.com/gpu``),
    as numbers.
    """
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise RuleError("kubectl get nodes: the output is not JSON (%s)" % exc)
    if not isinstance(data, Mapping) or not isinstance(data.get("items"), list):
        raise RuleError("kubectl get nodes: the output has no items list (a NodeList)")
    by_name: Dict[str, Dict[str, Any]] = {}
    for index, item in enumerate(data["items"]):
        meta = item.get("metadata") if isinstance(item, Mapping) else None
        name = meta.get("name") if isinstance(meta, Mapping) else None
        if not isinstance(name, str) or not name:
            raise RuleError("kubectl get nodes: item %d has no metadata.name" % index)
        spec = item.get("spec")
        unschedulable = spec.get("unschedulable", False) if isinstance(spec, Mapping) else False
        if not isinstance(unschedulable, bool):
            raise RuleError("kubectl get nodes: node %s: spec.unschedulable is not true or false (got %r)"
                            % (name, unschedulable))
        annotations = meta.get("annotations")
        value = annotations.get(mark) if isinstance(annotations, Mapping) else None
        value = value if isinstance(value, str) else None
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


def cordon_actions(verdicts: Mapping[str, str], failing: Mapping[str, Sequence[str]],
                   kubernetes: Mapping[str, Mapping[str, Any]], policy: str,
                   prefix: str) -> Dict[str, Dict[str, Any]]:
    """What to do in Kubernetes with each judged node it knows.

    A failing node is cordoned and marked with the reason ``<prefix> <checks>`` (the same words
    as its Slurm drain); a node the validation cordoned (unschedulable with the mark) is
    uncordoned when it passes or only warns; a node cordoned without the mark (an admin's) is
    never touched. Cordoning keeps the pods that run (as Slurm's drain keeps its jobs) and stops
    new ones. ``report`` only says what it would do. ``unmark``: the mark is to be removed.
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
        elif ours:
            kind = "would uncordon (report only)" if policy == "report" else "uncordoned"
        elif node["unschedulable"]:
            kind = "kept cordoned (admin)"
        # The mark goes with the cordon, and from a node someone uncordoned by hand (else a later
        # admin cordon of it would read as the validation's).
        unmark = policy != "report" and (kind == "uncordoned" or (node.get("stale", False) and verdict != "fail"))
        out[host] = {"node": node["node"], "kind": kind, "reason": reason, "unmark": unmark}
    return out


# ---------------------------------------------------------------------------
# The results document
# ---------------------------------------------------------------------------

def _worst(statuses: Iterable[str]) -> str:
    seen = set(statuses)
    for status in ("fail", "warn"):
        if status in seen:
            return status
    return "pass"


def _one_check(entries: Sequence[Tuple[List[str], Dict[str, Any]]]) -> Dict[str, Any]:
    """A node's results of one check (a node in two pairs, with an odd node count) as one: the
    worst status, the lowest figure of that status, every partner's message."""
    if len(entries) == 1:
        return entries[0][1]
    worst = _worst(entry["status"] for dummy, entry in entries)
    pick = min((entry for dummy, entry in entries if entry["status"] == worst),
               key=lambda entry: (entry["measured"] is None, entry["measured"] or 0))
    return dict(pick, message="; ".join("with %s: %s" % (" and ".join(partners), entry["message"])
                                        for partners, entry in entries))


def document(run: Mapping[str, Any], nodes: Mapping[str, List[Mapping[str, Any]]],
             pair_results: Sequence[Mapping[str, Any]], jobs: Sequence[Mapping[str, Any]],
             actions: Mapping[str, Mapping[str, Any]],
             cordons: Optional[Mapping[str, Mapping[str, Any]]] = None) -> Dict[str, Any]:
    """The run's results: per node its checks (passive, and the active results it took part in,
    recorded ones and round two's re-mixed pairs left out of its verdict, a slow pair's result as
    its ``blame`` judges this node), the pairs, the jobs, the counts and the verdict."""
    node_list = []
    for host in sorted(nodes, key=natural_key):
        checks = list(nodes[host])
        active: Dict[str, List[Tuple[List[str], Dict[str, Any]]]] = {}
        for result in list(pair_results) + list(jobs):
            if host not in result["hosts"] or result.get("recorded") or result.get("round", 1) != 1:
                continue
            judged = (result.get("blame") or {}).get(host) or result
            # A node cleared by round two keeps none of the slow pair's figure (nor a baseline warning).
            cleared = judged is not result and judged["status"] == "pass"
            active.setdefault(result["check"], []).append(([h for h in result["hosts"] if h != host], {
                "check": result["check"], "kind": "active", "status": judged["status"],
                "measured": None if cleared else result.get("measured"), "expected": result.get("expected"),
                "unit": result.get("unit"), "source": result.get("source"),
                "message": judged.get("message"), "baseline": None}))
        checks.extend(_one_check(entries) for entries in active.values())
        node_list.append({
            "host": host, "verdict": _worst(c["status"] for c in checks),
            "action": dict(actions.get(host) or {"kind": "none", "reason": None}),
            "cordon": dict(cordons[host]) if cordons and host in cordons else None, "checks": checks,
        })
    counts = dict((status, 0) for status in STATUSES)
    for node in node_list:
        for check in node["checks"]:
            counts[check["status"]] += 1
    for result in list(pair_results) + list(jobs):
        if result.get("recorded"):
            counts[result["status"]] += 1
    return {
        "schema": SCHEMA,
        "run": dict(run),
        "verdict": _worst([n["verdict"] for n in node_list]
                          + [r["status"] for r in list(pair_results) + list(jobs) if not r.get("recorded")]),
        "counts": counts,
        "nodes": node_list,
        "pairs": [dict(p) for p in pair_results],
        "jobs": [dict(j) for j in jobs],
    }


def failing_checks(checks: Sequence[Mapping[str, Any]]) -> List[str]:
    return [c["check"] for c in checks if c["status"] == "fail"]


def compare_baseline(doc: Dict[str, Any], baseline: Optional[Mapping[str, Any]], tolerance: float) -> Dict[str, Any]:
    """Flag (warn) each node whose active results got slower than its own baseline by more than
    ``tolerance`` (a fraction): each numeric active check of the node against the same check in
    the baseline. Adds ``baseline`` to those checks and a ``baseline`` check per node compared."""
    if not baseline:
        return doc
    if baseline.get("schema") != SCHEMA:
        raise RuleError("validation baseline: schema is %r, expected %s" % (baseline.get("schema"), SCHEMA))
    before: Dict[Tuple[str, str], float] = {}
    for node in baseline.get("nodes", []):
        for check in node.get("checks", []):
            if check.get("kind") == "active" and isinstance(check.get("measured"), (int, float)):
                key = (node["host"], check["check"])
                before[key] = min(before.get(key, check["measured"]), check["measured"])
    for node in doc["nodes"]:
        slower = []
        compared = 0
        for check in node["checks"]:
            key = (node["host"], check["check"])
            if check["kind"] != "active" or key not in before or not isinstance(check.get("measured"), (int, float)):
                continue
            check["baseline"] = before[key]
            compared += 1
            if check["measured"] < (1 - tolerance) * before[key]:
                slower.append("%s %g < %g (baseline)" % (check["check"], check["measured"], before[key]))
        if compared:
            node["checks"].append({
                "check": "baseline", "kind": "active", "status": "warn" if slower else "pass",
                "measured": len(slower), "expected": 0, "unit": None,
                "source": "burn-in baseline %s, tolerance %g" % (doc["run"].get("baseline") or "", tolerance),
                "message": "slower than its baseline: %s" % "; ".join(slower) if slower
                else "%d results within %g of the baseline" % (compared, tolerance),
                "baseline": None,
            })
            doc["counts"]["warn" if slower else "pass"] += 1
            node["verdict"] = _worst([node["verdict"], "warn" if slower else "pass"])
    doc["verdict"] = _worst([doc["verdict"]] + [n["verdict"] for n in doc["nodes"]])
    return doc


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


def output_tail(text: Optional[str], limit: int = 600, empty: str = "no output") -> str:
    """The end of a program's output on one line (what names the cause), ``empty`` when it printed nothing."""
    return " ".join((text or "").split())[-limit:] or empty


def failed_actions(actions: Mapping[str, Any]) -> List[str]:
    """The node actions that failed, ``<action> <host>: <the end of the command's error>``, from the
    registered loop results of the action tasks by action name (``{"drain": result, ...}``), in
    that order. Each loop item is a node of the results document (``host``). A task that did not
    run (skipped, no item) contributes nothing."""
    failures = []
    for action, result in actions.items():
        for item in (result or {}).get("results") or []:
            if item.get("skipped") or not (item.get("failed") or item.get("rc") not in (None, 0)):
                continue
            host = (item.get("item") or {}).get("host", "?")
            why = output_tail(item.get("stderr") or item.get("msg"), 300, "no message")
            failures.append("%s %s: %s" % (action, host, why))
    return failures


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


def _section(item: Any, key: str) -> Mapping[str, Any]:
    value = item.get(key) if isinstance(item, Mapping) else None
    return value if isinstance(value, Mapping) else {}


def pod_items(text: str, what: str = "kubectl get pods") -> List[Mapping[str, Any]]:
    """A PodList from kubectl's JSON, each item with its metadata.name."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise RuleError("%s: the output is not JSON (%s)" % (what, exc))
    if not isinstance(data, Mapping) or not isinstance(data.get("items"), list):
        raise RuleError("%s: the output has no items list (a PodList)" % what)
    for index, item in enumerate(data["items"]):
        if not isinstance(_section(item, "metadata").get("name"), str):
            raise RuleError("%s: item %d has no metadata.name" % (what, index))
    return data["items"]


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


def gpus_in_use(text: str, resource: str) -> Dict[str, List[str]]:
    """``kubectl get pods --all-namespaces --output=json`` -> {node name: ["namespace/pod (N)", ...]}:
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
    Returns {pods: {host: {name, node, gpus}}, manifest: a v1 List of the namespace and the pods,
    skipped: [results]}.
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
    return {"pods": pods, "manifest": {"apiVersion": "v1", "kind": "List", "items": items}, "skipped": skipped}


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


def gpu_pods_waiting(text: str, names: Sequence[str], elapsed: float, schedule_wait: float = 60) -> List[str]:
    """The named pods still worth waiting for (``kubectl get pods --output=json`` of the run): not
    ended, not stopped at their image or at starting their container, and not unschedulable for
    ``schedule_wait`` seconds. A pod missing from the list is not waited for."""
    by_name = {pod["metadata"]["name"]: pod for pod in pod_items(text)}
    return [name for name in names
            if name in by_name and _pod_state(by_name[name], elapsed, schedule_wait)[0] == "waiting"]


def _gpu_pod_result(host: str, gpus: int, settings: Mapping[str, Any]) -> Dict[str, Any]:
    return {"check": "kubernetes_gpu_pod", "hosts": [host], "measured": None, "expected": gpus, "unit": "GPUs",
            "source": "a pod asking for %d %s (%s, nvidia-smi -L)" % (gpus, settings["resource"], settings["image"]),
            "series": []}


def gpu_pod_results(plan: Mapping[str, Any], created: Mapping[str, Any], pods_text: Optional[str],
                    logs: Mapping[str, Mapping[str, Any]], node_uuids: Mapping[str, Sequence[str]],
                    lists: Mapping[str, Any], settings: Mapping[str, Any]) -> List[Dict[str, Any]]:
    """Each planned node's GPU pod judged (``plan``: gpu_pod_plan's), then the skipped nodes.

    ``created``: kubectl apply's {rc, stderr} and the error of the last read of the pods
    (read_error); ``pods_text``: the run's pods as kubectl got them after the wait (None: that read
    failed); ``logs``: {pod name: {rc, stdout, stderr}} of ``kubectl logs``; ``node_uuids``:
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
        if pod is None and created.get("rc") != 0:
            # kubectl apply creates what it can of a List: only the pods that are not there warn.
            out.append(dict(result, status="warn", message="the pod could not be created (kubectl apply exited %s: %s); "
                            "check validation_kubernetes_namespace, validation_kubernetes_runtime_class and "
                            "validation_gpu_container_image" % (created.get("rc"), output_tail(created.get("stderr"), 400))))
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
    output = log.get("stdout") if log.get("rc") == 0 else log.get("stderr") or log.get("msg")
    if status.get("phase") == "Failed":
        exits = ["exit %s%s" % (term.get("exitCode"), " (%s)" % term["reason"] if term.get("reason") else "")
                 for term in (_section(_section(c, "state"), "terminated") for c in status.get("containerStatuses") or [])
                 if term]
        why = "; ".join(part for part in [" ".join(x for x in (status.get("reason"), status.get("message")) if x)]
                        + exits if part)
        return dict(result, status="fail",
                    message="the pod failed (%s): %s" % (why or "no reason given", output_tail(output)))
    if log.get("rc") not in (None, 0) or (listed is None and not log):
        # The pod ran to its end; the API server could not fetch its log from kubelet: not the GPUs.
        return dict(result, status="warn", message="the pod ended, but its output could not be read (kubectl logs: %s)"
                    % output_tail(output, 400, "not run"))
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
    Returns {hosts, nodes (Kubernetes names), gpu, manifest (a v1 List), or hosts [] and why}.
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
    return {"hosts": chosen, "nodes": names, "gpu": gpu, "why": None,
            "manifest": {"apiVersion": "v1", "kind": "List", "items": [config, job]}}


def _job_conditions(job: Mapping[str, Any]) -> Dict[str, Mapping[str, Any]]:
    return {c.get("type"): c for c in _section(job, "status").get("conditions") or []
            if isinstance(c, Mapping) and c.get("status") == "True"}


def ddp_job_state(text: str, elapsed: float, operator_wait: float) -> Tuple[str, str]:
    """(state, detail) of the PyTorchJob from ``kubectl get pytorchjob --output=json``: succeeded,
    failed, running, or no-operator (no status ``operator_wait`` seconds after it was made: the
    training operator's controller did not take it)."""
    try:
        job = json.loads(text)
    except ValueError as exc:
        raise RuleError("kubectl get pytorchjob: the output is not JSON (%s)" % exc)
    if not isinstance(job, Mapping) or job.get("kind") != "PyTorchJob":
        raise RuleError("kubectl get pytorchjob: the output is not a PyTorchJob")
    conditions = _job_conditions(job)
    for kind, state in (("Succeeded", "succeeded"), ("Failed", "failed")):
        if kind in conditions:
            return state, " ".join(x for x in (conditions[kind].get("reason"), conditions[kind].get("message")) if x)
    if not _section(job, "status") and elapsed >= operator_wait:
        return "no-operator", "no status"
    return "running", ", ".join(sorted(conditions)) or "no status yet"


def ddp_job_result(plan: Mapping[str, Any], created: Mapping[str, Any], job_text: Optional[str],
                   logs: Mapping[str, Any], settings: Mapping[str, Any]) -> List[Dict[str, Any]]:
    """The PyTorchJob's ``ddp_smoke`` result (none when it had too few nodes to run): ``created`` is
    kubectl apply's {rc, stderr}; ``job_text`` the job as kubectl got it after the wait (None: that
    read failed, ``created["read_error"]`` says why); ``logs`` the registered ``kubectl logs`` of
    its pods (rank 0 prints the result line). Not submitted (no training operator CRDs) or not
    taken (no controller running), or unreadable: warn; failed, or still running at the timeout:
    fail; succeeded: rank 0's line decides, as for the Slurm job."""
    if not plan.get("hosts"):
        return []
    source = "gpucluster-ddp-smoke.py as a PyTorchJob (%s)" % settings["image"]
    base: Dict[str, Any] = {"check": "ddp_smoke", "hosts": list(plan["hosts"]), "unit": None, "measured": None,
                            "expected": "loss down, identical weights on every rank", "source": source, "series": []}
    if created.get("rc") != 0:
        return [dict(base, status="warn", message="could not submit the PyTorchJob (kubectl apply exited %s: %s); is the "
                     "training operator installed (the training_operator role)?"
                     % (created.get("rc"), output_tail(created.get("stderr"), 400)))]
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
    if state == "succeeded" and logs.get("rc") not in (None, 0):
        # The API server could not fetch the pods' logs from kubelet: not the nodes' training.
        return [dict(base, status="warn", message="the PyTorchJob succeeded, but its pods' logs could not be read "
                     "(kubectl logs: %s)" % output_tail(logs.get("stderr"), 400))]
    stdout = logs.get("stdout") if logs.get("rc") == 0 else ""
    result = ddp_result(stdout or "", plan["hosts"], 0 if state == "succeeded" else 1,
                        detail if state == "failed" else "")
    # The ranks name their pods, not the nodes: the nodes are the plan's.
    return [dict(result, hosts=list(plan["hosts"]), source=source)]


def node_action_kinds(node: Mapping[str, Any]) -> List[str]:
    """The actions taken on a node, Slurm's then Kubernetes' (``none`` left out)."""
    out = []
    for key in ("action", "cordon"):
        kind = (node.get(key) or {}).get("kind", "none")
        if kind != "none":
            out.append(kind)
    return out


def summary_lines(doc: Mapping[str, Any]) -> List[str]:
    """A few lines for the console: the verdict and counts, then each node that did not pass (or
    had an action) with what failed or warned and the action taken, then the jobs and pairs."""
    counts = doc["counts"]
    lines = ["validation %s: %s (pass %d, warn %d, fail %d, skip %d)" % (
        doc["run"].get("id", ""), doc["verdict"].upper(), counts["pass"], counts["warn"], counts["fail"], counts["skip"])]
    for node in doc["nodes"]:
        actions = node_action_kinds(node)
        if node["verdict"] == "pass" and not actions:
            continue
        bad = ["%s: %s" % (c["check"], c["message"]) for c in node["checks"] if c["status"] in ("fail", "warn")]
        lines.append("%s %s%s%s" % (node["host"], node["verdict"].upper(),
                                    " [%s]" % "; ".join(actions) if actions else "",
                                    (" - " + "; ".join(bad)) if bad else ""))
    for result in list(doc["pairs"]) + list(doc["jobs"]):
        lines.append("%s %s %s - %s%s" % (result["check"], ",".join(result["hosts"]), result["status"].upper(),
                                          result.get("message") or "", " (%s)" % result["note"] if result.get("note") else ""))
    return lines


# ---------------------------------------------------------------------------
# What the tasks run: this host's part, the checks that run, Kubernetes' view, the node patches
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
    """Kubernetes' view of the nodes from the registered ``kubectl get nodes --output=json`` run on
    ``api`` (the control plane node, '' without Kubernetes, when the read was skipped).

    ``nodes``: parse_kubectl_nodes of its output, empty when kubectl failed or did not run;
    ``read``: what the report says of it: ``none`` without Kubernetes, else the node kubectl
    ran on, with kubectl's error (200 characters at most) when it failed.
    """
    ok = read.get("rc", 1) == 0
    nodes = parse_kubectl_nodes(read["stdout"], names, mark) if ok else {}
    if not api:
        said = "none"
    elif ok:
        said = api
    else:
        error = read["stderr"] if "stderr" in read else read.get("msg", "")
        said = "%s (kubectl get nodes failed, nothing cordoned: %s)" % (api, str(error).strip()[:200])
    return {"nodes": nodes, "read": said}


def cordon_patch(mark: str, cordon: bool, reason: Optional[str] = None) -> str:
    """The strategic merge patch (JSON) that cordons a node with ``mark`` set to ``reason``, or
    uncordons it and removes ``mark`` (``cordon`` false: ``reason`` is not used)."""
    return json.dumps({"spec": {"unschedulable": cordon},
                       "metadata": {"annotations": {mark: reason if cordon else None}}})


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
