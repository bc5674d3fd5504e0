# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The quarantine loop (playbooks/quarantine.yml) on the controller (pure, no Ansible imports).

* its settings, refused before any node is touched;
* which nodes Slurm lists as drained by this system and idle (retested now), still running jobs
  (waiting: a drain never kills a job), or out of its reach (an admin's drain, an ``rma:`` node,
  a node down);
* the deep retest's own checks beside the validation role's: a GPU stress run and nccl-tests
  inside the node;
* the verdict per node: resumed, kept out for RMA (``rma: <checks>``, with its GPUs' serial
  numbers), or kept in quarantine (a check that could not run, a software fault), and the
  validation document with that verdict in it.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence

from ansible_collections.gpucluster.core.plugins.module_utils._health import RMA_REASON_PREFIX
from ansible_collections.gpucluster.core.plugins.module_utils._nccl_tests import NcclTestsError, parse_nccl_tests
from ansible_collections.gpucluster.core.plugins.plugin_utils.validation._fabric import judge, nccl_expectation
from ansible_collections.gpucluster.core.plugins.plugin_utils.validation._plan import drained, natural_key, output_tail

DCGM_LEVELS = (0, 1, 2, 3, 4)
# A failed check of these is a fault of the node's software or settings, not of its hardware: the
# node stays in quarantine (fix it; the next run resumes it), never goes to RMA.
SOFTWARE_CHECKS = ("driver_version", "cuda_version", "mounts", "services", "gpu_container", "slurm_gpu_job")
# Checks a drain may name that need other nodes (pairs, the DDP job) or Kubernetes: not retested
# inside one node; validate.yml judges them.
NOT_RETESTED = ("nccl_all_reduce", "ib_write_bw", "ddp_smoke", "kubernetes_gpu_pod", "baseline")
# The quarantine's own action kinds in the validation document (beside the role's "resumed").
RMA = "rma"
KEPT = "kept in quarantine"
FLAPPING = "flapping"


def _whole(value: Any) -> Optional[int]:
    """An integer setting (a digit string from -e accepted), else None."""
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return None


def quarantine_errors(settings: Mapping[str, Any]) -> List[str]:
    """Every error in the quarantine playbook's settings, each naming the variable."""
    errors = []
    level = _whole(settings.get("quarantine_dcgm_diag_level"))
    if level not in DCGM_LEVELS:
        errors.append("quarantine_dcgm_diag_level: must be one of 0, 1, 2, 3, 4 (dcgmi diag -r; 0 runs none) (got %r)"
                      % (settings.get("quarantine_dcgm_diag_level"),))
    command = settings.get("quarantine_stress_command")
    if not isinstance(command, list) or not all(isinstance(word, str) and word for word in command):
        errors.append("quarantine_stress_command: must be a list of words, the program first ([] runs none) (got %r)"
                      % (command,))
    timeout = _whole(settings.get("quarantine_job_timeout"))
    if timeout is None or not 60 <= timeout <= 86400:
        errors.append("quarantine_job_timeout: must be seconds within 60-86400 (got %r)" % (settings.get("quarantine_job_timeout"),))
    prefix = settings.get("validation_reason_prefix")
    if not isinstance(prefix, str) or not prefix.strip() or prefix.startswith(RMA_REASON_PREFIX):
        errors.append("validation_reason_prefix: must be a non-empty text not starting with %r (got %r)" % (RMA_REASON_PREFIX, prefix))
    return errors


def suspect_checks(reason: Optional[str], prefix: str) -> List[str]:
    """The checks a drain reason of this system names: ``<prefix> gpu_count,xid`` or the flapping hold
    ``<prefix> flapping gpu_count`` (Slurm's `` [user@time]`` tail ignored); none when not ours."""
    text = reason or ""
    if not text.startswith(prefix):
        return []
    words = text[len(prefix):].split(" [")[0].split()
    if words and words[0] == FLAPPING:
        words = words[1:]
    return [name for name in words[0].split(",") if name] if words else []


def _bare(reason: Optional[str]) -> str:
    """A Slurm reason without the `` [user@time]`` tail scontrol adds."""
    return (reason or "").split(" [")[0].strip()


def quarantine_candidates(nodes: Mapping[str, Mapping[str, Any]], prefix: str, hosts: Sequence[str]) -> Dict[str, Any]:
    """The nodes of ``scontrol show node`` (scontrol_nodes) the quarantine looks at, in natural order.

    ``retest``: drained by this system (the reason starts with ``prefix``, the flapping hold
    included), idle (Slurm's DRAINED: no job, none completing) and in the inventory (``hosts``);
    ``reasons``: their drain reasons. ``waiting``: drained by this system but still running jobs
    (DRAINING: the jobs end first, a drain never kills them). ``left``: the drained nodes it never
    touches, with why: an admin's drain (any other reason), an ``rma:`` node, a node down or not
    responding, a node outside the inventory. Nodes that are not drained are not listed.
    """
    out: Dict[str, Any] = {"retest": [], "reasons": {}, "waiting": [], "left": []}
    known = set(hosts)
    for host in sorted(nodes, key=natural_key):
        node = nodes[host]
        if not drained(node):
            continue
        reason = node.get("reason")
        entry = {"host": host, "reason": reason}
        if reason and reason.startswith(RMA_REASON_PREFIX):
            out["left"].append(dict(entry, why="kept out for RMA: repair or replace it, then resume it by hand"))
        elif not (reason or "").startswith(prefix):
            out["left"].append(dict(entry, why="drained by an admin: never touched"))
        elif node["state"] in ("DOWN", "FUTURE") or "NOT_RESPONDING" in node["flags"]:
            out["left"].append(dict(entry, why="down or not responding: retested once Slurm hears from it"))
        elif host not in known:
            out["left"].append(dict(entry, why="not in the inventory: cannot be retested"))
        elif node["state"] != "IDLE" or "COMPLETING" in node["flags"]:
            out["waiting"].append(dict(entry, why="jobs still running (%s): retested once they end"
                                       % "+".join([node["state"]] + list(node["flags"]))))
        else:
            out["retest"].append(host)
            out["reasons"][host] = reason
    return out


# ---------------------------------------------------------------------------
# The quarantine's own checks
# ---------------------------------------------------------------------------

def _check(name: str, status: str, message: str, measured: Any = None, expected: Any = None, unit: Optional[str] = None,
           source: Optional[str] = None) -> Dict[str, Any]:
    return {"check": name, "kind": "active", "status": status, "measured": measured, "expected": expected, "unit": unit,
            "source": source, "message": message, "baseline": None}


def stress_result(host: str, command: Sequence[str], found: Optional[Mapping[str, Any]],
                  run: Optional[Mapping[str, Any]]) -> Dict[str, Any]:
    """The GPU stress run's check (``gpu_stress``) from the registered lookup of its program on the
    node (``found``: ``command -v``) and the registered run (``timeout`` around the command)."""
    if not command:
        return _check("gpu_stress", "skip", "no GPU stress command set (quarantine_stress_command)")
    if not found or found.get("skipped") or found.get("rc") != 0:
        return _check("gpu_stress", "skip", "%s is not installed on %s: no stress run" % (command[0], host))
    shown = " ".join(command)
    rc = (run or {}).get("rc")
    tail = output_tail(((run or {}).get("stdout") or "") + " " + ((run or {}).get("stderr") or ""), 300)
    if rc == 0:
        return _check("gpu_stress", "pass", "%s exited 0: %s" % (shown, tail), 0, 0, source=shown)
    if rc == 124:
        out = _check("gpu_stress", "warn", "%s did not finish within the timeout: not judged" % shown, source=shown)
        out["tooling"] = True
        return out
    return _check("gpu_stress", "fail", "%s exited %s: %s" % (shown, rc, tail), rc, 0, source=shown)


def nccl_node_result(host: str, nccl_dir: str, found: Optional[Mapping[str, Any]], run: Optional[Mapping[str, Any]],
                     hardware: Optional[Mapping[str, Any]], fraction: float) -> Dict[str, Any]:
    """nccl-tests' all_reduce_perf on every GPU of one node (``nccl_in_node``), judged on the peak
    out-of-place bus bandwidth against ``fraction`` x the PCIe x16 rate of the GPUs' generation
    (_fabric.nccl_expectation ``intra``). ``found``: the registered stat of all_reduce_perf."""
    if not nccl_dir:
        return _check("nccl_in_node", "skip", "nccl-tests not installed (validation_nccl_tests_dir is empty)")
    if not found or found.get("skipped") or not (found.get("stat") or {}).get("exists"):
        return _check("nccl_in_node", "skip", "%s/all_reduce_perf is not installed on %s" % (nccl_dir, host))
    run = run or {}
    if run.get("rc") != 0:
        tail = output_tail((run.get("stderr") or "") + " " + (run.get("stdout") or ""), 300)
        return _check("nccl_in_node", "fail", "all_reduce_perf exited %s: %s" % (run.get("rc"), tail))
    try:
        parsed = parse_nccl_tests(run.get("stdout") or "")
    except NcclTestsError as exc:
        return _check("nccl_in_node", "fail", "nccl-tests output: %s" % exc)
    expected = nccl_expectation("intra", fraction, pcie_gen=(hardware or {}).get("pcie_max_gen"))
    problems = list(parsed.get("failures") or [])
    if parsed.get("wrong_total"):
        problems.insert(0, "%d wrong results (#wrong)" % parsed["wrong_total"])
    result = judge("nccl_in_node", [host], parsed["peak_busbw_gbs"], expected, errors="; ".join(problems) or None)
    return _check("nccl_in_node", result["status"], result["message"], result["measured"], result["expected"],
                  result["unit"], result["source"])


def node_checks(runs: Mapping[str, Any], host: str, hardware: Optional[Mapping[str, Any]],
                settings: Mapping[str, Any]) -> List[Dict[str, Any]]:
    """A node's quarantine checks from its registered runs (``stress_found``, ``stress``,
    ``nccl_found``, ``nccl``) and the settings (``quarantine_stress_command``,
    ``validation_nccl_tests_dir``, ``validation_nccl_intra_fraction``)."""
    return [
        stress_result(host, settings["quarantine_stress_command"], runs.get("stress_found"), runs.get("stress")),
        nccl_node_result(host, settings["validation_nccl_tests_dir"], runs.get("nccl_found"), runs.get("nccl"), hardware,
                         float(settings["validation_nccl_intra_fraction"])),
    ]


# ---------------------------------------------------------------------------
# The verdict: resume, RMA, or keep in quarantine
# ---------------------------------------------------------------------------

def gpu_serials(facts: Optional[Mapping[str, Any]]) -> List[Dict[str, Any]]:
    """The GPUs' serial numbers from a registered gpucluster.core.nvidia_smi_facts read (its
    ``ansible_facts.nvidia.gpus``): ``[{index, serial, uuid, pci_bus_id}]``, none when it failed."""
    gpus = (((facts or {}).get("ansible_facts") or {}).get("nvidia") or {}).get("gpus") or []
    return [{"index": gpu.get("index"), "serial": gpu.get("serial"), "uuid": gpu.get("uuid"),
             "pci_bus_id": gpu.get("pci_bus_id")} for gpu in gpus]


def _evidence(checks: Sequence[Mapping[str, Any]]) -> List[str]:
    """What the verdict rests on: every check that failed or warned, and the active checks that ran."""
    return ["%s %s: %s" % (c["check"], c["status"], c.get("message") or "") for c in checks
            if c["status"] in ("fail", "warn") or (c["kind"] == "active" and c["status"] != "skip")]


def decide(host: str, checks: Optional[Sequence[Mapping[str, Any]]], reason: Optional[str], prefix: str) -> Dict[str, Any]:
    """One retested node's verdict: ``{host, decision, reason, was, checks, note, evidence}``.

    ``decision``: ``rma`` when a check of its hardware failed (reason ``rma: <checks>``, replacing
    this system's); ``kept`` (in quarantine, its reason as it was or naming the software checks that
    failed) when a software or setting check failed, a check could not run (a tooling fault is
    not a hardware verdict), a check its drain names was not judged again, or the node did not
    answer (``checks`` None, or the role's ``reachable`` check failed); ``resumed`` when everything ran and passed (or only warned).
    """
    was = _bare(reason)
    out: Dict[str, Any] = {"host": host, "was": was, "checks": [], "evidence": []}
    silent = [c for c in checks or [] if c["check"] == "reachable" and c["status"] == "fail"]
    if checks is None or silent:
        note = "did not answer: not retested" + (" (%s)" % silent[0].get("message") if silent else "")
        return dict(out, decision="kept", reason=was, note=note)
    failed = [c["check"] for c in checks if c["status"] == "fail"]
    hardware = [name for name in failed if name not in SOFTWARE_CHECKS]
    software = [name for name in failed if name in SOFTWARE_CHECKS]
    tooling = [c["check"] for c in checks if c.get("tooling") and c["status"] != "skip"]
    judged = set(c["check"] for c in checks if c["status"] != "skip" and not c.get("tooling"))
    suspects = suspect_checks(reason, prefix)
    elsewhere = [name for name in suspects if name in NOT_RETESTED]
    unjudged = [name for name in suspects if name not in judged and name not in NOT_RETESTED]
    out["evidence"] = _evidence(checks)
    if hardware:
        note = "failed the deep retest: %s" % ", ".join(hardware)
        if software:
            note += "; also %s (software)" % ", ".join(software)
        return dict(out, decision="rma", reason="%s %s" % (RMA_REASON_PREFIX, ",".join(hardware)), checks=hardware, note=note)
    if software:
        return dict(out, decision="kept", reason="%s %s" % (prefix, ",".join(software)), checks=software,
                    note="%s failed: software or settings, not hardware; fix it and the next run resumes the node"
                    % ", ".join(software))
    if tooling or unjudged or elsewhere:
        why = []
        if tooling:
            why.append("could not run: %s" % ", ".join(tooling))
        if unjudged:
            why.append("not judged again: %s" % ", ".join(unjudged))
        if elsewhere:
            why.append("retested across nodes by validate.yml, not here: %s" % ", ".join(elsewhere))
        return dict(out, decision="kept", reason=was, checks=tooling + unjudged + elsewhere,
                    note="%s; not an RMA verdict, kept in quarantine" % "; ".join(why))
    return dict(out, decision="resumed", reason=None, note="passed the deep retest")


_ACTION = {"resumed": "resumed", "rma": RMA, "kept": KEPT}


def verdict(doc: Mapping[str, Any], extra: Mapping[str, Sequence[Mapping[str, Any]]], candidates: Mapping[str, Any],
            gpus: Mapping[str, Sequence[Mapping[str, Any]]], prefix: str, settings: Mapping[str, Any]) -> Dict[str, Any]:
    """The validation document of the retest (the role's, policy ``report``) with the quarantine in it.

    ``extra``: each node's quarantine checks (node_checks), added to its checks; ``candidates``:
    quarantine_candidates; ``gpus``: each node's gpu_serials. Each retested node gets its decision
    as its ``action`` (``resumed``, ``rma``, ``kept in quarantine``, with the new Slurm reason),
    and the document a ``quarantine`` section: ``settings``, ``nodes`` (each decision with its note,
    evidence and, for ``rma``, its GPUs' serial numbers), ``waiting`` and ``left``.
    Returns ``{document, actions}``: ``actions`` the Slurm drains to make (rma and kept nodes,
    natural order), each ``{host, decision, reason}``.
    """
    out = dict(doc)
    nodes = {node["host"]: dict(node) for node in doc["nodes"]}
    counts = dict(doc["counts"])
    decisions = []
    for host in sorted(candidates["retest"], key=natural_key):
        node = nodes.get(host)
        checks = None
        if node is not None and host in extra:
            added = [dict(c) for c in extra.get(host) or []]
            for check in added:
                counts[check["status"]] = counts.get(check["status"], 0) + 1
            checks = list(node["checks"]) + added
            statuses = set(c["status"] for c in checks)
            node["checks"] = checks
            node["verdict"] = "fail" if "fail" in statuses else "warn" if "warn" in statuses else "pass"
        one = decide(host, checks, candidates["reasons"].get(host), prefix)
        one["gpus"] = list(gpus.get(host) or []) if one["decision"] == "rma" else []
        if node is not None:
            node["action"] = {"kind": _ACTION[one["decision"]], "reason": one["reason"]}
        decisions.append(one)
    out["nodes"] = [nodes[node["host"]] for node in doc["nodes"]]
    out["counts"] = counts
    statuses = set(n["verdict"] for n in out["nodes"]) | set(r["status"] for r in list(doc["pairs"]) + list(doc["jobs"])
                                                             if not r.get("recorded"))
    out["verdict"] = "fail" if "fail" in statuses else "warn" if "warn" in statuses else "pass"
    out["quarantine"] = {"settings": dict(settings), "nodes": decisions, "waiting": list(candidates["waiting"]),
                         "left": list(candidates["left"])}
    actions = [{"host": d["host"], "decision": d["decision"], "reason": d["reason"]}
               for d in decisions if d["decision"] != "resumed"]
    return {"document": out, "actions": actions}
