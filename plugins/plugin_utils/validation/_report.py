# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The report of playbooks/validate.yml, controller side, pure, no Ansible imports.

The playbook writes one results document (schema ``gpucluster.core/validation-result/v1``):
the run, the verdict and its counts, each node's checks and the action taken on it, the
host-pair benchmarks (NCCL, InfiniBand) with their message-size sweeps, and the jobs (DDP smoke
test, Slurm GPU job, container). This module builds it and renders it:

- ``document``: the document from the nodes' checks, the pairs, the jobs and the node actions;
  ``compare_baseline`` flags the nodes slower than the burn-in baseline; ``summary_lines``: a
  few lines of it for the console;
- ``validate_document``: raises ``RuleError`` naming every path that is not of the schema
  (keys that the schema does not name are ignored);
- ``render_markdown``: the run, a node table (one row per host, one column per check), the
  failures and warnings, the pairs and the jobs;
- ``render_html``: the same as one self-contained page (inline CSS, no script, nothing
  fetched), statuses colour-coded and spelled out, with inline SVG charts: each pair check's
  sweep (value vs message size, log2 axis) with the expected value as a dashed line, pairs that
  did not pass drawn thick and labelled, and each job's loss vs step.

Host names, messages and every other string come from users and machines: the Markdown escapes
its markup characters, the HTML escapes everything, and control characters become U+FFFD.
Hosts sort naturally (node2 before node10), checks keep their first-seen order.
"""

from __future__ import annotations

import html
import math
import re
from datetime import datetime
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from ansible_collections.gpucluster.core.plugins.plugin_utils.common._rules import RuleError
from ansible_collections.gpucluster.core.plugins.plugin_utils.validation._checks import CORDON_KINDS, HELD, KEPT_FLAPPING
from ansible_collections.gpucluster.core.plugins.plugin_utils.validation._quarantine import KEPT, RMA
from ansible_collections.gpucluster.core.plugins.plugin_utils.validation._plan import (
    POLICIES,
    SCHEMA,
    STATUSES,
    natural_key,
)

VERDICTS = ("pass", "warn", "fail")
CHECK_KINDS = ("passive", "active")
ACTIONS = ("drained", "resumed", "none", "kept drained (admin)", "kept drained (not judged)", "would drain (report only)",
           "would resume (report only)", HELD, KEPT_FLAPPING, RMA, KEPT)
COUNT_ORDER = ("fail", "warn", "pass", "skip")
_SEVERITY = {"fail": 0, "warn": 1, "skip": 2, "pass": 3}
_MAX_PROBLEMS = 20


# ----------------------------------------------------------------------------- the results document

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
    lines.extend("quarantine %s" % " - ".join(row) for row in _quarantine_rows(doc))
    return lines


_QUARANTINE_HEADER = ["Host", "Decision", "Slurm reason", "Note", "GPUs (serial numbers)", "Evidence"]


def _quarantine_rows(doc: Mapping[str, Any]) -> List[List[str]]:
    """playbooks/quarantine.yml's section: per node its decision (resumed, rma, kept in quarantine,
    waiting for its jobs, left alone), the Slurm reason it now has, why, its GPUs' serial numbers
    (rma) and the evidence; none without a quarantine section."""
    section = doc.get("quarantine") or {}
    rows = []
    for node in section.get("nodes") or []:
        gpus = ", ".join("GPU%s %s (%s)" % (gpu.get("index"), gpu.get("serial") or "serial unknown", gpu.get("pci_bus_id") or "?")
                         for gpu in node.get("gpus") or [])
        rows.append([node["host"], node["decision"], node.get("reason") or "none (in service)", node.get("note") or "",
                     gpus, "; ".join(node.get("evidence") or [])])
    for key, decision in (("waiting", "waiting"), ("left", "left alone")):
        for node in section.get(key) or []:
            rows.append([node["host"], decision, node.get("reason") or "", node.get("why") or "", "", ""])
    return rows


# ----------------------------------------------------------------------------- schema check

_VALUE = "a number, a string, a list of those or null"
_TEXT = "a non-empty string"
_TEXT_OR_NULL = "a string or null"


def _one_of(values: Sequence[str]) -> str:
    return "one of " + ", ".join(values)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _is_text(value: Any) -> bool:
    return isinstance(value, str) and value != ""


def _is_text_or_null(value: Any) -> bool:
    return value is None or isinstance(value, str)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_finite(value: Any) -> bool:
    return _is_number(value) and math.isfinite(value)


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _is_scalar(value: Any) -> bool:
    return value is None or isinstance(value, (str, bool, int, float))


def _is_value(value: Any) -> bool:
    return _is_scalar(value) or (isinstance(value, list) and all(_is_scalar(v) for v in value))


def _is_hosts(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(_is_text(v) for v in value)


def _is_list_or_null(value: Any) -> bool:
    return value is None or isinstance(value, list)


def _member(values: Sequence[str]) -> Callable[[Any], bool]:
    return lambda value: isinstance(value, str) and value in values


class _Checker:
    """Collects ``<path> is <value>, expected <what>`` and ``<path> is missing`` messages."""

    def __init__(self) -> None:
        self.messages: List[str] = []

    def bad(self, path: str, value: Any, expected: str) -> None:
        self.messages.append("%s is %s, expected %s" % (path, _short(value), expected))

    def mapping(self, path: str, value: Any) -> bool:
        if isinstance(value, Mapping):
            return True
        self.bad(path, value, "a mapping")
        return False

    def field(self, obj: Mapping[str, Any], path: str, key: str, good: Callable[[Any], bool], expected: str,
              optional: bool = False) -> bool:
        """True when ``obj[key]`` is good (or absent and optional)."""
        where = "%s.%s" % (path, key) if path else key
        if key not in obj:
            if not optional:
                self.messages.append("%s is missing" % where)
            return optional
        if good(obj[key]):
            return True
        self.bad(where, obj[key], expected)
        return False

    def items(self, obj: Mapping[str, Any], path: str, key: str, optional: bool = False) -> List[Tuple[str, Any]]:
        """(path, item) of each item of the list ``obj[key]`` (null or absent too when optional)."""
        good = _is_list_or_null if optional else (lambda v: isinstance(v, list))
        if not self.field(obj, path, key, good, "a list or null" if optional else "a list", optional):
            return []
        where = "%s.%s" % (path, key) if path else key
        return [("%s[%d]" % (where, index), item) for index, item in enumerate(obj.get(key) or [])]

    def outcome(self, obj: Mapping[str, Any], path: str) -> None:
        """The keys every check, pair and job has."""
        self.field(obj, path, "check", _is_text, _TEXT)
        self.field(obj, path, "status", _member(STATUSES), _one_of(STATUSES))
        for key in ("measured", "expected"):
            self.field(obj, path, key, _is_value, _VALUE)
        self.field(obj, path, "unit", _is_text_or_null, _TEXT_OR_NULL, optional=True)

    def series(self, obj: Mapping[str, Any], path: str, x_key: str, y_key: str,
               x_good: Callable[[Any], bool], x_what: str) -> None:
        for where, point in self.items(obj, path, "series", optional=True):
            if self.mapping(where, point):
                self.field(point, where, x_key, x_good, x_what)
                self.field(point, where, y_key, _is_finite, "a finite number")


def _check_run(c: _Checker, run: Mapping[str, Any]) -> None:
    c.field(run, "run", "id", _is_text, _TEXT)
    for key in ("started", "finished"):
        c.field(run, "run", key, _is_text, _TEXT)
    for where, kind in c.items(run, "run", "checks_run"):
        if not _member(CHECK_KINDS)(kind):
            c.bad(where, kind, _one_of(CHECK_KINDS))
    # The kinds asked for that could not run, each with why (active checks without a Slurm controller).
    if c.field(run, "run", "checks_not_run", lambda v: isinstance(v, Mapping), "a mapping", optional=True):
        for kind, why in (run.get("checks_not_run") or {}).items():
            where = "run.checks_not_run.%s" % kind
            if not _member(CHECK_KINDS)(kind):
                c.bad(where, kind, _one_of(CHECK_KINDS))
            elif not _is_text(why):
                c.bad(where, why, _TEXT)
    c.field(run, "run", "policy", _member(POLICIES), _one_of(POLICIES))
    c.field(run, "run", "controller", _is_text, _TEXT)
    c.field(run, "run", "kubernetes", _is_text, _TEXT, optional=True)
    c.field(run, "run", "baseline", _is_text_or_null, _TEXT_OR_NULL)


def _check_node(c: _Checker, path: str, node: Mapping[str, Any]) -> None:
    c.field(node, path, "host", _is_text, _TEXT)
    c.field(node, path, "verdict", _member(VERDICTS), _one_of(VERDICTS))
    if c.field(node, path, "action", lambda v: isinstance(v, Mapping), "a mapping"):
        action = node["action"]
        c.field(action, path + ".action", "kind", _member(ACTIONS), _one_of(ACTIONS))
        c.field(action, path + ".action", "reason", _is_text_or_null, _TEXT_OR_NULL)
    cordon = node.get("cordon")
    if cordon is not None and c.field(node, path, "cordon", lambda v: isinstance(v, Mapping), "a mapping or null"):
        c.field(cordon, path + ".cordon", "node", _is_text, _TEXT)
        c.field(cordon, path + ".cordon", "kind", _member(CORDON_KINDS), _one_of(CORDON_KINDS))
        c.field(cordon, path + ".cordon", "reason", _is_text_or_null, _TEXT_OR_NULL)
    seen: Dict[str, str] = {}
    for where, check in c.items(node, path, "checks"):
        if not c.mapping(where, check):
            continue
        c.outcome(check, where)
        c.field(check, where, "kind", _member(CHECK_KINDS), _one_of(CHECK_KINDS))
        for key in ("source", "message"):
            c.field(check, where, key, _is_text_or_null, _TEXT_OR_NULL)
        c.field(check, where, "baseline", lambda v: v is None or _is_number(v), "a number or null", optional=True)
        name = check.get("check")
        if _is_text(name):
            if name in seen:
                c.bad(where + ".check", name, "a check not already listed for this host (%s)" % seen[name])
            seen.setdefault(name, where)


def _check_document(c: _Checker, doc: Any) -> None:
    if not c.mapping("the document", doc):
        return
    if not c.field(doc, "", "schema", lambda v: v == SCHEMA, repr(SCHEMA)):
        return
    if c.field(doc, "", "run", lambda v: isinstance(v, Mapping), "a mapping"):
        _check_run(c, doc["run"])
    c.field(doc, "", "verdict", _member(VERDICTS), _one_of(VERDICTS))
    if c.field(doc, "", "counts", lambda v: isinstance(v, Mapping), "a mapping"):
        for status in STATUSES:
            c.field(doc["counts"], "counts", status, _is_count, "a non-negative integer")
    hosts: Dict[str, str] = {}
    for where, node in c.items(doc, "", "nodes"):
        if c.mapping(where, node):
            _check_node(c, where, node)
            host = node.get("host")
            if _is_text(host):
                if host in hosts:
                    c.bad(where + ".host", host, "a host not already listed (%s)" % hosts[host])
                hosts.setdefault(host, where)
    for where, pair in c.items(doc, "", "pairs"):
        if c.mapping(where, pair):
            c.outcome(pair, where)
            c.field(pair, where, "hosts", _is_hosts, "a non-empty list of host names")
            c.field(pair, where, "source", _is_text_or_null, _TEXT_OR_NULL)
            c.field(pair, where, "recorded", lambda v: isinstance(v, bool), "true or false")
            c.field(pair, where, "note", _is_text_or_null, _TEXT_OR_NULL, optional=True)
            c.series(pair, where, "size_bytes", "value", lambda v: _is_count(v) and v > 0, "a positive integer")
    for where, job in c.items(doc, "", "jobs"):
        if c.mapping(where, job):
            c.outcome(job, where)
            c.field(job, where, "hosts", _is_hosts, "a non-empty list of host names")
            c.field(job, where, "message", _is_text_or_null, _TEXT_OR_NULL)
            c.series(job, where, "step", "loss", _is_count, "a non-negative integer")


def validate_document(doc: Any) -> None:
    """Raise RuleError naming each path of ``doc`` that is not of the schema (the first 20)."""
    checker = _Checker()
    _check_document(checker, doc)
    if checker.messages:
        shown = checker.messages[:_MAX_PROBLEMS]
        more = len(checker.messages) - len(shown)
        raise RuleError("validation report: %s%s" % ("; ".join(shown), " (and %d more)" % more if more else ""))


# ----------------------------------------------------------------------------- text


_CONTROL_RE = re.compile(r"[\x00-\x08\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")
_SPACE_RE = re.compile(r"[\t\n\r\x0b\x0c\u2028\u2029]+")
# Markdown: backslash before markup characters; an underscore only where it could start or end
# emphasis (not between two letters or digits: gpu_count stays as it is).
_MD_RE = re.compile(r"[\\`*\[\]|~]|(?<![^\W_])_|_(?![^\W_])")
# HTML in Markdown: < as an entity (no tag can start), & where it would start an entity.
_MD_HTML_RE = re.compile(r"<|&(?=#?[0-9A-Za-z]+;)")


def _clean(text: Any) -> str:
    """One line of printable text: line breaks and tabs become spaces, control characters U+FFFD."""
    return _CONTROL_RE.sub("\ufffd", _SPACE_RE.sub(" ", str(text)))


def _md(text: Any) -> str:
    escaped = _MD_RE.sub(lambda m: "\\" + m.group(0), _clean(text))
    return _MD_HTML_RE.sub(lambda m: "&lt;" if m.group(0) == "<" else "&amp;", escaped)


def _h(text: Any) -> str:
    return html.escape(_clean(text), quote=True)


def _natural(text: str) -> Tuple[Tuple[Any, str], ...]:
    """Sort key: digit runs compare as numbers (node2 before node10)."""
    parts = re.split(r"([0-9]+)", text)
    return tuple((int(part), part) if index % 2 else (part.lower(), part) for index, part in enumerate(parts))


def _num(value: float) -> str:
    if isinstance(value, int):
        return str(value)
    if not math.isfinite(value):
        return str(value)
    text = "%.6g" % (value + 0.0)
    if "e+" in text:
        text = "%.0f" % value
    return text


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return _num(value)
    return str(value)


def _value(value: Any, unit: Optional[str] = None) -> str:
    """A measured or expected value with its unit (after numbers and lists only); "" for null."""
    if value is None:
        return ""
    if isinstance(value, list):
        text = ", ".join(_scalar(item) for item in value)
    else:
        text = _scalar(value)
    numeric = isinstance(value, list) and bool(value) or _is_number(value)
    return "%s %s" % (text, unit) if unit and numeric else text


def _word(status: str) -> str:
    """The status as written: FAIL and WARN in capitals, pass and skip in small letters."""
    return status.upper() if status in ("fail", "warn") else status


def _cell(status: str, measured: Any, unit: Optional[str]) -> str:
    return " ".join(part for part in (_word(status), _value(measured, unit)) if part)


def _counts(counts: Mapping[str, int]) -> str:
    return ", ".join("%d %s" % (counts[status], status) for status in COUNT_ORDER)


def _duration(started: str, finished: str) -> Optional[str]:
    try:
        start = datetime.fromisoformat(started.replace("Z", "+00:00"))
        end = datetime.fromisoformat(finished.replace("Z", "+00:00"))
        seconds = int((end - start).total_seconds())
    except (ValueError, TypeError):
        return None
    if seconds < 0:
        return None
    hours, rest = divmod(seconds, 3600)
    parts = ([("%d h" % hours)] if hours else []) + (["%d min" % (rest // 60)] if hours or rest >= 60 else [])
    return " ".join(parts + ["%d s" % (rest % 60)])


def _action(node: Mapping[str, Any]) -> str:
    """Slurm's action and Kubernetes' where they did something, else Slurm's (``none``)."""
    def text(action: Mapping[str, Any]) -> str:
        return "%s (%s)" % (action["kind"], action["reason"]) if action.get("reason") else action["kind"]

    taken = [node[key] for key in ("action", "cordon") if (node.get(key) or {}).get("kind", "none") != "none"]
    return "; ".join(text(action) for action in taken) if taken else text(node["action"])


def _note(pair: Mapping[str, Any]) -> str:
    base = "recorded" if pair["recorded"] else "live, round 2 (slow pairs re-mixed)" if pair.get("round") == 2 else "live"
    blame = pair.get("blame") or {}
    if blame:
        base += "; " + ", ".join("%s: %s" % (host, blame[host]["message"]) for host in sorted(blame, key=_natural))
    return "%s: %s" % (base, pair["note"]) if pair.get("note") else base


# ----------------------------------------------------------------------------- what both show


def _run_lines(run: Mapping[str, Any]) -> List[Tuple[str, str]]:
    took = _duration(run["started"], run["finished"])
    return [
        ("Started", run["started"]),
        ("Finished", run["finished"] + (" (%s)" % took if took else "")),
        ("Checks run", ", ".join(run["checks_run"]) or "none"),
    ] + [
        ("Not run", "%s: %s" % (kind, why)) for kind, why in (run.get("checks_not_run") or {}).items()
    ] + [
        ("Policy", run["policy"]),
        ("Slurm controller", run["controller"]),
        ("Kubernetes", run.get("kubernetes") or "none"),
        ("Baseline", run["baseline"] or "none"),
    ]


def _nodes(doc: Mapping[str, Any]) -> Tuple[List[Mapping[str, Any]], List[str]]:
    """The nodes in natural host order and the check names in first-seen order over them."""
    nodes = sorted(doc["nodes"], key=lambda node: _natural(node["host"]))
    columns: List[str] = []
    for node in nodes:
        for check in node["checks"]:
            if check["check"] not in columns:
                columns.append(check["check"])
    return nodes, columns


def _ordered(entries: Sequence[Mapping[str, Any]]) -> List[Mapping[str, Any]]:
    """Pairs or jobs: by check (first-seen order), then hosts in natural order."""
    first: Dict[str, int] = {}
    for entry in entries:
        first.setdefault(entry["check"], len(first))
    return sorted(entries, key=lambda e: (first[e["check"]], tuple(_natural(h) for h in e["hosts"])))


def _expected(entry: Mapping[str, Any]) -> str:
    text = _value(entry["expected"], entry.get("unit"))
    if entry.get("baseline") is not None:
        text = "%s (baseline %s)" % (text or "-", _value(entry["baseline"], entry.get("unit")))
    return text


def _problems(doc: Mapping[str, Any]) -> List[Dict[str, str]]:
    """Every check, pair and job that failed or warned, each once: failures, then warnings (skips
    are in the node table, not here).

    A pair or job that a node took part in is also one of that node's active checks (as the
    document counts it): where a node lists it as failed or warned, that row is the one shown
    (with the node's own judgement and message), not the pair's or job's again. Pairs and jobs no
    node lists that way (recorded ones, round two's, a slow pair whose nodes were all cleared, hosts
    outside the run) keep their own row."""
    rows: List[Dict[str, str]] = []
    listed = set((node["host"], check["check"]) for node in doc["nodes"] for check in node["checks"]
                 if check.get("kind") == "active" and check["status"] in ("fail", "warn"))

    def under_a_node(result: Mapping[str, Any]) -> bool:
        # The results that become nodes' active checks (document, above): live, round one.
        if result.get("recorded") or result.get("round", 1) != 1:
            return False
        return any((host, result["check"]) in listed for host in result["hosts"])

    def add(status: str, hosts: str, entry: Mapping[str, Any], message: Optional[str]) -> None:
        if status in ("fail", "warn"):
            rows.append({"status": status, "hosts": hosts, "check": entry["check"],
                         "measured": _value(entry["measured"], entry.get("unit")), "expected": _expected(entry),
                         "source": entry.get("source") or "", "message": message or ""})

    for node in _nodes(doc)[0]:
        for check in node["checks"]:
            add(check["status"], node["host"], check, check["message"])
    for pair in _ordered(doc["pairs"]):
        if not under_a_node(pair):
            add(pair["status"], ", ".join(pair["hosts"]), pair,
                "; ".join(text for text in (pair.get("message"), pair.get("note")) if text))
    for job in _ordered(doc["jobs"]):
        if not under_a_node(job):
            add(job["status"], ", ".join(job["hosts"]), job, job["message"])
    return sorted(rows, key=lambda row: _SEVERITY[row["status"]])


_PROBLEM_HEADER = ("Status", "Host", "Check", "Measured", "Expected", "Source", "Message")
_PAIR_HEADER = ("Hosts", "Check", "Measured", "Expected", "Source", "Status", "Note")
_JOB_HEADER = ("Hosts", "Check", "Measured", "Expected", "Status", "Message")


def _pair_row(pair: Mapping[str, Any]) -> List[str]:
    return [", ".join(pair["hosts"]), pair["check"], _value(pair["measured"], pair.get("unit")), _expected(pair),
            pair["source"] or "", _word(pair["status"]), _note(pair)]


def _job_row(job: Mapping[str, Any]) -> List[str]:
    return [", ".join(job["hosts"]), job["check"], _value(job["measured"], job.get("unit")), _expected(job),
            _word(job["status"]), job["message"] or ""]


# ----------------------------------------------------------------------------- Markdown


def _md_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> List[str]:
    lines = ["| %s |" % " | ".join(_md(cell) for cell in header), "|%s|" % "|".join(["---"] * len(header))]
    lines.extend("| %s |" % " | ".join(_md(cell) if cell else "-" for cell in row) for row in rows)
    return lines


def render_markdown(doc: Mapping[str, Any]) -> str:
    """The report as Markdown (GitHub tables), ending with a newline."""
    validate_document(doc)
    run = doc["run"]
    lines = ["# Validation %s: %s (%s)" % (_md(run["id"]), _word(doc["verdict"]), _counts(doc["counts"])), ""]
    lines.extend("- %s: %s" % (label, _md(text)) for label, text in _run_lines(run))

    lines.extend(["", "## Nodes", ""])
    nodes, columns = _nodes(doc)
    if nodes:
        rows = []
        for node in nodes:
            cells = {c["check"]: _cell(c["status"], c["measured"], c.get("unit")) for c in node["checks"]}
            rows.append([node["host"], _word(node["verdict"]), _action(node)]
                        + [cells.get(name, "") for name in columns])
        lines.extend(_md_table(["Host", "Verdict", "Action"] + columns, rows))
    else:
        lines.append("No nodes.")

    lines.extend(["", "## Failures and warnings", ""])
    problems = _problems(doc)
    if problems:
        lines.extend(_md_table(_PROBLEM_HEADER, [[_word(row["status"])] + [row[key] for key in (
            "hosts", "check", "measured", "expected", "source", "message")] for row in problems]))
    else:
        lines.append("None: every check passed.")

    lines.extend(["", "## Pairs", ""])
    if doc["pairs"]:
        lines.extend(_md_table(_PAIR_HEADER, [_pair_row(pair) for pair in _ordered(doc["pairs"])]))
    else:
        lines.append("No pair checks.")

    lines.extend(["", "## Jobs", ""])
    if doc["jobs"]:
        lines.extend(_md_table(_JOB_HEADER, [_job_row(job) for job in _ordered(doc["jobs"])]))
    else:
        lines.append("No jobs.")

    if "quarantine" in doc:
        lines.extend(["", "## Quarantine", ""])
        rows = _quarantine_rows(doc)
        lines.extend(_md_table(_QUARANTINE_HEADER, rows) if rows else ["No node in quarantine."])
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------- SVG


# Chart geometry: the SVG's size and the plot area inside it.
WIDTH, HEIGHT = 760, 360
PLOT_LEFT, PLOT_RIGHT, PLOT_TOP, PLOT_BOTTOM = 72, 740, 24, 300
# Pairs that passed share cool colours; warn and fail are reserved and drawn thicker, on top.
PASS_COLOURS = ("#0969da", "#8250df", "#1b7c83", "#57606a", "#0550ae", "#6f42c1", "#3192aa", "#424a53")
STATUS_STROKE = {"fail": ("#cf222e", 3.5), "warn": ("#bc4c00", 2.5), "skip": ("#8c959f", 1.5)}
# A white outline under a label keeps it readable where it crosses a curve.
_HALO = ' stroke="#fff" stroke-width="3" paint-order="stroke"'
BYTE_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")


class _Scale:
    """A linear map of the data interval [low, high] onto the pixels [start, end], after ``transform``
    (math.log10 for a log scale, whose low and high are then logarithms too)."""

    def __init__(self, low: float, high: float, start: float, end: float,
                 transform: Optional[Callable[[float], float]] = None) -> None:
        self.low, self.high, self.start, self.end = low, high, start, end
        self.transform = transform

    def __call__(self, value: float) -> float:
        if self.transform is not None:
            value = self.transform(value)
        return self.start + (value - self.low) * (self.end - self.start) / (self.high - self.low)


def nice_ticks(low: float, high: float, count: int = 5) -> List[float]:
    """Round tick values (1, 2, 2.5 or 5 times a power of ten apart) from at or below ``low`` to at
    or above ``high``, about ``count`` steps."""
    if high <= low:
        low, high = (low - 1, high + 1) if low == 0 else (low - abs(low) / 2, high + abs(high) / 2)
    raw = (high - low) / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw * (1 - 1e-9))
    first = math.floor(low / step + 1e-9)
    last = math.ceil(high / step - 1e-9)
    return [round(i * step, 12) for i in range(first, last + 1)]


def log2_ticks(low: float, high: float, most: int = 8) -> List[int]:
    """Exponents of the whole powers of two in [low, high], every 1st, 2nd, 5th, 10th or 20th, at most ``most``."""
    exponents = range(math.ceil(low - 1e-9), math.floor(high + 1e-9) + 1)
    for step in (1, 2, 5, 10, 20):
        ticks = [e for e in exponents if e % step == 0]
        if len(ticks) <= most:
            return ticks
    return ticks


def log10_ticks(low: float, high: float) -> List[float]:
    """Powers of ten from at or below ``low`` to at or above ``high`` (both > 0), with 2 and 5 times
    each between them when that spans fewer than three decades."""
    first, last = math.floor(math.log10(low) + 1e-9), math.ceil(math.log10(high) - 1e-9)
    last = max(last, first + 1)
    ticks = [10.0 ** e for e in range(first, last + 1)]
    if last - first < 3:
        ticks = sorted(ticks + [m * 10.0 ** e for e in range(first, last) for m in (2, 5)])
    return [float("%.12g" % tick) for tick in ticks]


def size_label(exponent: int) -> str:
    """2**exponent bytes: 8 B, 1 KiB, 256 MiB, 1 GiB."""
    index = min(exponent // 10, len(BYTE_UNITS) - 1)
    return "%d %s" % (2 ** (exponent - 10 * index), BYTE_UNITS[index])


def _f(value: float) -> str:
    return "%.1f" % value


def _polyline(x: _Scale, y: _Scale, points: Sequence[Tuple[float, float]]) -> str:
    return " ".join("%s,%s" % (_f(x(px)), _f(y(py))) for px, py in points)


def _spread(labels: List[Tuple[float, Any]], gap: float = 14) -> List[Tuple[float, Any]]:
    """Move labels (y, payload) down so that none is closer than ``gap`` to the one above it."""
    out: List[Tuple[float, Any]] = []
    for ypos, payload in sorted(labels, key=lambda item: item[0]):
        if out and ypos < out[-1][0] + gap:
            ypos = out[-1][0] + gap
        out.append((ypos, payload))
    return out


def _svg(label: str, x: _Scale, y: _Scale, xticks: Sequence[Tuple[float, str]],
         yticks: Sequence[Tuple[float, str]], xtitle: str, ytitle: str, marks: Sequence[str]) -> str:
    """An SVG chart: gridlines, tick labels, axis titles, then the marks (already SVG)."""
    middle = (PLOT_TOP + PLOT_BOTTOM) / 2
    parts = ['<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="%d" height="%d" role="img" '
             'aria-label="%s" font-family="system-ui, sans-serif" font-size="12" fill="#1f2328">'
             % (WIDTH, HEIGHT, WIDTH, HEIGHT, _h(label)),
             "<title>%s</title>" % _h(label), '<g class="y-ticks">']
    for value, text in yticks:
        parts.append('<line class="grid" x1="%d" x2="%d" y1="%s" y2="%s" stroke="#d0d7de"/>'
                     '<text x="%d" y="%s" text-anchor="end" dominant-baseline="middle">%s</text>'
                     % (PLOT_LEFT, PLOT_RIGHT, _f(y(value)), _f(y(value)), PLOT_LEFT - 6, _f(y(value)), _h(text)))
    parts.append('</g><g class="x-ticks">')
    for value, text in xticks:
        parts.append('<line class="grid" x1="%s" x2="%s" y1="%d" y2="%d" stroke="#eaeef2"/>'
                     '<text x="%s" y="%d" text-anchor="middle">%s</text>'
                     % (_f(x(value)), _f(x(value)), PLOT_TOP, PLOT_BOTTOM + 5, _f(x(value)), PLOT_BOTTOM + 20,
                        _h(text)))
    parts.append("</g>")
    parts.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#8c959f"/>'
                 % (PLOT_LEFT, PLOT_TOP, PLOT_RIGHT - PLOT_LEFT, PLOT_BOTTOM - PLOT_TOP))
    parts.append('<text class="x-title" x="%s" y="%d" text-anchor="middle" font-size="13">%s</text>'
                 % (_f((PLOT_LEFT + PLOT_RIGHT) / 2), HEIGHT - 14, _h(xtitle)))
    parts.append('<text class="y-title" x="16" y="%s" text-anchor="middle" font-size="13" '
                 'transform="rotate(-90 16 %s)">%s</text>' % (_f(middle), _f(middle), _h(ytitle)))
    parts.extend(marks)
    parts.append("</svg>")
    return "\n".join(parts)


def _quantity(check: str, unit: Optional[str]) -> str:
    if check.startswith("nccl"):
        return "bus bandwidth"
    if unit and unit.endswith("/s"):
        return "bandwidth"
    if unit in ("ns", "us", "\u00b5s", "ms", "s"):
        return "latency"
    return "value"


def _pair_chart(check: str, unit: Optional[str], pairs: Sequence[Mapping[str, Any]]) -> Tuple[str, List[str]]:
    """The sweep chart of one pair check (SVG) and its legend (HTML list items)."""
    curves = [(pair, sorted((math.log2(p["size_bytes"]), p["value"]) for p in pair["series"])) for pair in pairs]
    every = [point for pair_points in curves for point in pair_points[1]]
    expected: Dict[float, str] = {}
    for pair in pairs:
        if _is_finite(pair["expected"]):
            expected.setdefault(pair["expected"], pair["source"] or "")
    values = [point[1] for point in every] + list(expected)
    xlow, xhigh = min(point[0] for point in every), max(point[0] for point in every)
    if xlow == xhigh:
        xlow, xhigh = xlow - 1, xhigh + 1
    quantity = _quantity(check, unit)
    # A latency sweep spans decades (2 B to 8 MiB): a log scale keeps the small messages readable.
    log_y = quantity == "latency" and min(values) > 0 and max(values) >= 20 * min(values)
    if log_y:
        yticks = log10_ticks(min(values), max(values))
        y = _Scale(math.log10(yticks[0]), math.log10(yticks[-1]), PLOT_BOTTOM, PLOT_TOP, math.log10)
    else:
        yticks = nice_ticks(min(values + [0]), max(values + [0]))
        y = _Scale(yticks[0], yticks[-1], PLOT_BOTTOM, PLOT_TOP)
    x = _Scale(xlow, xhigh, PLOT_LEFT, PLOT_RIGHT)
    marks: List[str] = []
    for value, source in sorted(expected.items()):
        text = "expected %s" % _value(value, unit) + (" (%s)" % source if source else "")
        marks.append('<line class="expected" x1="%d" x2="%d" y1="%s" y2="%s" stroke="#1f2328" stroke-width="1.5" '
                     'stroke-dasharray="6 4"/>' % (PLOT_LEFT, PLOT_RIGHT, _f(y(value)), _f(y(value))))
        marks.append('<text class="expected-label" x="%d" y="%s"%s>%s</text>'
                     % (PLOT_LEFT + 6, _f(y(value) - 5), _HALO, _h(text)))
    legend: List[Tuple[int, str]] = []
    labels: List[Tuple[float, Tuple[float, str, str]]] = []
    drawn = sorted(enumerate(curves), key=lambda item: -_SEVERITY[item[1][0]["status"]])
    for index, (pair, points) in drawn:
        hosts = ", ".join(pair["hosts"])
        colour, width = STATUS_STROKE.get(pair["status"], (PASS_COLOURS[index % len(PASS_COLOURS)], 1.5))
        what = "%s: %s %s" % (hosts, _word(pair["status"]), _value(pair["measured"], unit))
        marks.append('<polyline class="series s-%s" points="%s" fill="none" stroke="%s" stroke-width="%s" '
                     'stroke-linejoin="round"><title>%s</title></polyline>'
                     % (pair["status"], _polyline(x, y, points), colour, width, _h(what)))
        if pair["status"] in ("fail", "warn"):
            last_x, last_y = points[-1]
            labels.append((y(last_y) - 8, (x(last_x) - 4, colour, what)))
        legend.append((index, '<li><span class="swatch" style="background:%s;height:%dpx"></span>%s</li>'
                       % (colour, max(3, int(width)), _html_status_text(hosts, pair, unit))))
    marks.extend('<text class="pair-label" x="%s" y="%s" text-anchor="end" fill="%s" font-weight="bold"%s>%s</text>'
                 % (_f(xpos), _f(ypos), colour, _HALO, _h(text)) for ypos, (xpos, colour, text) in _spread(labels))
    title = "%s: %s vs message size" % (check, quantity)
    ytitle = ", ".join(([unit] if unit else []) + (["log scale"] if log_y else []))
    svg = _svg(title, x, y, [(e, size_label(e)) for e in log2_ticks(xlow, xhigh)],
               [(v, _num(v)) for v in yticks], "message size (log2 scale)",
               "%s (%s)" % (quantity, ytitle) if ytitle else quantity, marks)
    return svg, [item[1] for item in sorted(legend)]


def _html_status_text(hosts: str, entry: Mapping[str, Any], unit: Optional[str]) -> str:
    return '%s <span class="st s-%s">%s</span> %s' % (_h(hosts), entry["status"], _word(entry["status"]),
                                                      _h(_value(entry["measured"], unit)))


def _loss_chart(job: Mapping[str, Any]) -> str:
    points = sorted((p["step"], p["loss"]) for p in job["series"])
    xticks = nice_ticks(points[0][0], points[-1][0])
    yticks = nice_ticks(min(p[1] for p in points), max(p[1] for p in points))
    x = _Scale(xticks[0], xticks[-1], PLOT_LEFT, PLOT_RIGHT)
    y = _Scale(yticks[0], yticks[-1], PLOT_BOTTOM, PLOT_TOP)
    colour = STATUS_STROKE.get(job["status"], ("#0969da", 2))[0]
    marks = ['<polyline class="loss" points="%s" fill="none" stroke="%s" stroke-width="2" stroke-linejoin="round"/>'
             % (_polyline(x, y, points), colour)]
    if len(points) <= 60:
        marks.extend('<circle cx="%s" cy="%s" r="2.5" fill="%s"><title>step %d: loss %s</title></circle>'
                     % (_f(x(px)), _f(y(py)), colour, px, _num(py)) for px, py in points)
    title = "%s on %s: loss vs step" % (job["check"], ", ".join(job["hosts"]))
    return _svg(title, x, y, [(v, _num(v)) for v in xticks], [(v, _num(v)) for v in yticks], "step", "loss", marks)


# ----------------------------------------------------------------------------- HTML


_CSS = """
body{margin:0;background:#fff;color:#1f2328;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
main{max-width:1200px;margin:0 auto;padding:20px 24px 48px}
h1{font-size:22px;margin:0 0 4px}
h2{font-size:18px;margin:32px 0 10px;padding-bottom:4px;border-bottom:1px solid #d0d7de}
h3{font-size:15px;margin:0 0 6px}
.banner{padding:14px 18px;border-radius:8px;border-left:10px solid #8c959f}
.banner.s-pass{background:#f0fbf3}.banner.s-warn{background:#fffbe6}.banner.s-fail{background:#fff0ee}
.banner.s-pass{border-color:#1a7f37}.banner.s-warn{border-color:#bf8700}.banner.s-fail{border-color:#cf222e}
.verdict{font-size:28px;font-weight:700;margin:2px 0 6px}
.counts span{margin-right:6px;padding:2px 8px;border-radius:10px;border:1px solid currentColor}
dl.run{display:grid;grid-template-columns:max-content auto;gap:2px 14px;margin:14px 0}
dl.run dt{color:#57606a}dl.run dd{margin:0}
.scroll{overflow-x:auto}
table{border-collapse:collapse;font-size:13px}
th,td{border:1px solid #d0d7de;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f6f8fa;font-weight:600}
td.host,td.action{white-space:nowrap}td.host{font-weight:600}
.st{font-weight:600;white-space:nowrap}
.s-pass{background:#dafbe1;color:#116329}
.s-warn{background:#fff1b3;color:#7d4e00}
.s-fail{background:#ffd8d3;color:#a40e26;font-weight:700}
.s-skip{background:#eaeef2;color:#57606a;font-weight:400}
.na{color:#8c959f;text-align:center}
table.heat td.s-pass{background:#effbf2;font-weight:400}table.heat td.s-skip{background:#f6f8fa}
figure{margin:18px 0 26px}
svg{max-width:100%;height:auto}
ul.legend{list-style:none;padding:0;margin:6px 0 0;display:flex;flex-wrap:wrap;gap:4px 18px;font-size:13px}
.swatch{display:inline-block;width:22px;vertical-align:middle;margin-right:6px}
p.none{color:#57606a}
footer{margin-top:36px;color:#57606a;font-size:12px}
"""


def _html_table(header: Sequence[str], rows: Sequence[Sequence[Tuple[str, str]]], css: str = "") -> List[str]:
    """A table from escaped cells given as (markup, class)."""
    out = ['<div class="scroll"><table%s>' % (' class="%s"' % css if css else ""),
           "<thead><tr>%s</tr></thead>" % "".join("<th>%s</th>" % _h(cell) for cell in header), "<tbody>"]
    for row in rows:
        out.append("<tr>%s</tr>" % "".join(
            ('<td class="%s">%s</td>' % (klass, markup)) if klass else "<td>%s</td>" % markup
            for markup, klass in row))
    out.append("</tbody></table></div>")
    return out


def _text_cell(text: str) -> Tuple[str, str]:
    return (_h(text), "") if text else ("-", "na")


def _status_cell(status: str, text: Optional[str] = None) -> Tuple[str, str]:
    return _h(text if text is not None else _word(status)), "st s-%s" % status


def _tooltip(check: Mapping[str, Any]) -> str:
    parts = []
    expected = _expected(check)
    if expected:
        parts.append("expected %s" % expected + (" (%s)" % check["source"] if check["source"] else ""))
    if check["message"]:
        parts.append(check["message"])
    return "; ".join(parts)


def render_html(doc: Mapping[str, Any]) -> str:
    """The report as one self-contained HTML page (inline CSS and SVG, no script, nothing fetched)."""
    validate_document(doc)
    run = doc["run"]
    verdict = doc["verdict"]
    title = "Validation %s: %s" % (run["id"], _word(verdict))
    out = ["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8"/>',
           '<meta name="viewport" content="width=device-width, initial-scale=1"/>',
           "<title>%s</title>" % _h(title), "<style>%s</style>" % _CSS, "</head>", "<body>", "<main>"]
    out.append('<header class="banner s-%s"><h1>Validation %s</h1><p class="verdict">%s</p><p class="counts">%s</p>'
               "</header>" % (verdict, _h(run["id"]), _word(verdict), " ".join(
                   '<span class="st s-%s">%d %s</span>' % (s, doc["counts"][s], s) for s in COUNT_ORDER)))
    out.append('<dl class="run">%s</dl>' % "".join(
        "<dt>%s</dt><dd>%s</dd>" % (_h(label), _h(text)) for label, text in _run_lines(run)))

    out.append('<section id="nodes"><h2>Nodes</h2>')
    nodes, columns = _nodes(doc)
    if nodes:
        rows = []
        for node in nodes:
            checks = {check["check"]: check for check in node["checks"]}
            row = [(_h(node["host"]), "host"), _status_cell(node["verdict"]), (_h(_action(node)), "action")]
            for name in columns:
                check = checks.get(name)
                if check is None:
                    row.append(("-", "na"))
                    continue
                markup, klass = _status_cell(check["status"], _cell(check["status"], check["measured"],
                                                                    check.get("unit")))
                tip = _tooltip(check)
                row.append(('<span title="%s">%s</span>' % (_h(tip), markup) if tip else markup, klass))
            rows.append(row)
        out.extend(_html_table(["Host", "Verdict", "Action"] + columns, rows, "heat"))
    else:
        out.append('<p class="none">No nodes.</p>')
    out.append("</section>")

    out.append('<section id="problems"><h2>Failures and warnings</h2>')
    problems = _problems(doc)
    if problems:
        out.extend(_html_table(_PROBLEM_HEADER, [[_status_cell(row["status"])] + [_text_cell(row[key]) for key in (
            "hosts", "check", "measured", "expected", "source", "message")] for row in problems]))
    else:
        out.append('<p class="none">None: every check passed.</p>')
    out.append("</section>")

    out.append('<section id="pairs"><h2>Pairs</h2>')
    pairs = _ordered(doc["pairs"])
    groups: Dict[Tuple[str, Optional[str]], List[Mapping[str, Any]]] = {}
    for pair in pairs:
        if pair.get("series"):
            groups.setdefault((pair["check"], pair.get("unit")), []).append(pair)
    for (check, unit), members in groups.items():
        svg, legend = _pair_chart(check, unit, members)
        out.append('<figure class="chart"><h3>%s</h3>' % _h("%s: %s vs message size, %d pair%s" % (
            check, _quantity(check, unit), len(members), "" if len(members) == 1 else "s")))
        out.extend([svg, '<ul class="legend">%s</ul></figure>' % "".join(legend)])
    if pairs:
        out.extend(_html_table(_PAIR_HEADER, [
            [_text_cell(text) for text in row[:5]] + [_status_cell(pair["status"]), _text_cell(row[6])]
            for pair, row in ((pair, _pair_row(pair)) for pair in pairs)]))
    else:
        out.append('<p class="none">No pair checks.</p>')
    out.append("</section>")

    out.append('<section id="jobs"><h2>Jobs</h2>')
    jobs = _ordered(doc["jobs"])
    if jobs:
        out.extend(_html_table(_JOB_HEADER, [
            [_text_cell(text) for text in row[:4]] + [_status_cell(job["status"]), _text_cell(row[5])]
            for job, row in ((job, _job_row(job)) for job in jobs)]))
        for job in jobs:
            if job.get("series"):
                out.append('<figure class="chart"><h3>%s</h3>%s</figure>' % (
                    _h("%s on %s: loss vs step" % (job["check"], ", ".join(job["hosts"]))), _loss_chart(job)))
    else:
        out.append('<p class="none">No jobs.</p>')
    out.append("</section>")
    if "quarantine" in doc:
        out.append('<section id="quarantine"><h2>Quarantine</h2>')
        rows = _quarantine_rows(doc)
        if rows:
            out.extend(_html_table(_QUARANTINE_HEADER, [[_text_cell(text) for text in row] for row in rows]))
        else:
            out.append('<p class="none">No node in quarantine.</p>')
        out.append("</section>")
    out.append("<footer>%s</footer>" % _h("%s, rendered by gpucluster.core" % SCHEMA))
    out.extend(["</main>", "</body>", "</html>"])
    return "\n".join(out) + "\n"
