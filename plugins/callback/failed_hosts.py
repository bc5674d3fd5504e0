# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Aggregate callback: at the end of a run, list the hosts that did not finish.

The logic lives in small pure functions (message summary, record selection, table, JSON
summary) that the unit tests call directly; the callback class only collects events.
"""

from __future__ import annotations

DOCUMENTATION = r"""
---
name: failed_hosts
type: aggregate
short_description: List the hosts that did not finish, where they failed and what to do next
version_added: 0.1.0
description:
  - At the end of a playbook run, prints one line per host that failed or was unreachable, with the play,
    role and task where it stopped and the error message (one line, at most 300 characters), followed by
    what to do next. Hosts are sorted by name (V(worker2) before V(worker10)). Prints nothing when every
    host finished.
  - A cluster run keeps going when some nodes fail; this list is the short answer to which nodes are
    missing from the cluster and why.
  - The first failure that made the host leave the run is shown. Failures with C(ignore_errors), unreachable
    hosts with C(ignore_unreachable) and failures handled by a C(rescue) section are not.
  - >-
    For a loop, the message is that of the first failed item. For a command, the last line of its
    C(stderr) (or C(stdout)) completes C(non-zero return code). Nothing from a result with C(no_log) is
    shown; the message only says that the output is hidden.
  - With O(summary_path), the same information is written to a JSON file for scripts and monitoring.
author:
  - gpucluster.core developers (@gpucluster)
requirements:
  - Enable it in C(ansible.cfg) with C(callbacks_enabled = gpucluster.core.failed_hosts) in the
    C([defaults]) section, or with the environment variable
    E(ANSIBLE_CALLBACKS_ENABLED=gpucluster.core.failed_hosts).
options:
  summary_path:
    description:
      - Also write a JSON summary to this path at the end of every run, even when no host failed.
      - >-
        The file holds C({"hosts": {HOST: {"status": "failed" or "unreachable", "play": ..., "role": ... or null,
        "task": ..., "message": ...}}, "ok": [hosts that finished], "plays": NUMBER_OF_PLAYS}).
      - The file is written atomically (a temporary file in the same directory, then renamed); its directory
        must exist. A file that cannot be written gives a warning, not a failure.
    type: path
    ini:
      - section: callback_failed_hosts
        key: summary_path
    env:
      - name: GPUCLUSTER_FAILED_HOSTS_SUMMARY
"""

import json
import os
import re
import shlex
import tempfile
from collections.abc import Iterable, Mapping
from typing import Any, Dict, List, Optional

from ansible import constants as C
from ansible.module_utils.common.text.converters import to_text
from ansible.plugins.callback import CallbackBase

Record = Dict[str, Optional[str]]

MESSAGE_LIMIT = 300
HIDDEN = "(output hidden: no_log)"
NO_MESSAGE = "(no message)"
UNKNOWN_TASK = "(unknown)"
UNKNOWN_MESSAGE = "no failed task was reported for this host"
GENERIC_MESSAGES = frozenset(("non-zero return code",))
FAILED = "failed"
UNREACHABLE = "unreachable"


INTERPRETER_GONE_RE = re.compile(r"The module interpreter '[^']+' was not found")


def natural_key(name: str) -> List[Any]:
    """Sort key that orders worker2 before worker10."""
    return [(0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", name) if part]


def one_line(text: Any, limit: int = MESSAGE_LIMIT) -> str:
    """Collapse all whitespace to single spaces and cut to ``limit`` characters (ending in ...)."""
    line = " ".join(to_text(text, errors="surrogate_or_replace").split())
    if len(line) > limit:
        line = line[: max(limit - 3, 0)] + "..."
    return line


def _is_no_log(result: Mapping) -> bool:
    return bool(result.get("_ansible_no_log")) or "censored" in result


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, (list, tuple)):
        return "; ".join(_text(item) for item in value if _text(item))
    return to_text(value, errors="surrogate_or_replace").strip()


def _last_line(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        value = "\n".join(_text(item) for item in value)
    lines = [line for line in _text(value).splitlines() if line.strip()]
    return lines[-1].strip() if lines else ""


def summarize_message(result: Any, limit: int = MESSAGE_LIMIT) -> str:
    """One line that says why a task failed, from its result dictionary.

    ``msg``; for a loop, the first failed item's message; a command's ``non-zero return code``
    completed by the last line of stderr (or stdout); stderr or stdout alone when there is no
    ``msg``. A result with ``no_log`` gives only :data:`HIDDEN`.
    """
    if not isinstance(result, Mapping):
        return NO_MESSAGE
    if _is_no_log(result):
        return HIDDEN
    items = result.get("results")
    if isinstance(items, list):
        dicts = [item for item in items if isinstance(item, Mapping)]
        for item in dicts:
            if item.get("failed") or item.get("unreachable"):
                return summarize_message(item, limit)
        # censored items lose their "failed" key: a failed loop with one says nothing
        if any(_is_no_log(item) for item in dicts):
            return HIDDEN
    msg = _text(result.get("msg"))
    detail = _last_line(result.get("stderr")) or _last_line(result.get("stdout"))
    if msg and detail and msg in GENERIC_MESSAGES:
        msg = "%s: %s" % (msg, detail)
    text = msg or detail or _text(result.get("reason"))
    if not text and result.get("rc") not in (None, 0):
        text = "rc=%s" % result.get("rc")
    return one_line(text, limit) if text else NO_MESSAGE


def make_record(status: str, play: Optional[str], role: Optional[str], task: Optional[str], message: str) -> Record:
    """A failure record, shaped as in the JSON summary."""
    return {"status": status, "play": play, "role": role, "task": task, "message": message}


def task_label(task_name: str, role: Optional[str]) -> str:
    """The task's name without the ``role : `` prefix Task.get_name() adds (the role is shown apart)."""
    if role and task_name.startswith(role + " : "):
        return task_name[len(role) + 3:]
    return task_name


def select_record(events: Iterable[Record], counts: Mapping[str, int]) -> Optional[Record]:
    """The failure that made a host leave the run, or None when the host finished.

    ``events`` are the host's recorded failures in the order they happened; ``counts`` is
    ``stats.summarize(host)``. Each ``rescued`` count stands for one failed event a rescue section
    handled, and rescues come before the failure that ends the host's run, so the first
    ``rescued`` failed events are skipped. A host the stats count as failed without any event
    gets a record with task :data:`UNKNOWN_TASK`.
    """
    failures = int(counts.get("failures", 0) or 0)
    unreachable = int(counts.get("unreachable", 0) or 0)
    rescued = int(counts.get("rescued", 0) or 0)
    if not failures and not unreachable:
        return None
    failed_seen = []
    for event in events:
        if event["status"] == UNREACHABLE and unreachable:
            return dict(event)
        if event["status"] == FAILED:
            failed_seen.append(event)
            if failures and len(failed_seen) > rescued:
                return dict(event)
    if failures and failed_seen:
        return dict(failed_seen[-1])
    return make_record(FAILED if failures else UNREACHABLE, None, None, UNKNOWN_TASK, UNKNOWN_MESSAGE)


def format_location(record: Mapping[str, Optional[str]]) -> str:
    """``play "P", role R, task "T"`` with the parts the record has."""
    parts = []
    if record.get("play"):
        parts.append('play "%s"' % record["play"])
    if record.get("role"):
        parts.append("role %s" % record["role"])
    parts.append('task "%s"' % (record.get("task") or UNKNOWN_TASK))
    return ", ".join(parts)


def _limit_pattern(hosts: List[str]) -> str:
    """hosts joined for --limit, in single quotes for the shell."""
    return "'%s'" % ",".join(hosts).replace("'", "'\"'\"'")


def format_report(records: Mapping[str, Record], total: int, playbook: str = "site.yml") -> List[str]:
    """The lines to print: header, one aligned row per host, then what to do. Empty when no host failed."""
    if not records:
        return []
    hosts = sorted(records, key=natural_key)
    host_width = max(len(host) for host in hosts)
    status_width = max(len(records[host]["status"] or "") for host in hosts)
    total = max(total, len(hosts))
    if len(hosts) < total:
        header = "FAILED HOSTS (%d of %d did not finish; the others completed):" % (len(hosts), total)
    else:
        header = "FAILED HOSTS (%d of %d did not finish):" % (len(hosts), total)
    lines = [header]
    for host in hosts:
        record = records[host]
        lines.append(
            "  %s  %s  %s: %s"
            % (host.ljust(host_width), (record["status"] or "").ljust(status_width), format_location(record), record.get("message") or NO_MESSAGE)
        )
    unreachable = [host for host in hosts if records[host]["status"] == UNREACHABLE]
    failed = [host for host in hosts if records[host]["status"] != UNREACHABLE]
    lines.append("What to do:")
    if unreachable:
        lines.append(
            "  - unreachable hosts: check power, network and SSH (`ansible %s -m ping`), then re-run %s; the other hosts keep "
            "their configuration and the scheduler keeps the hosts' last known definitions." % (shlex.quote(",".join(unreachable)), playbook)
        )
    if failed:
        lines.append(
            "  - failed hosts: fix the cause above, then re-run %s (or with --limit %s when only %s; roles that "
            "need the controllers say so)." % (playbook, _limit_pattern(failed), "that host needs it" if len(failed) == 1 else "these hosts need it")
        )
    # The Python the fact cache recorded is gone (the host's OS was reinstalled or upgraded).
    stale = [host for host in failed if INTERPRETER_GONE_RE.search(records[host].get("message") or "")]
    if stale:
        lines.append(
            "  - %s: the Python interpreter the fact cache recorded is gone (OS reinstalled or upgraded): delete %s "
            "fact cache entry (ansible.cfg's fact_caching_connection, .cache/facts/HOST in a checkout), or re-run once "
            "with --flush-cache when every host is reachable." % (", ".join(stale), "its" if len(stale) == 1 else "their")
        )
    return lines


def build_summary(records: Mapping[str, Record], ok: Iterable[str], plays: int) -> Dict[str, Any]:
    """The JSON summary: failed and unreachable hosts, the hosts that finished, the number of plays."""
    return {
        "hosts": {host: dict(records[host]) for host in sorted(records, key=natural_key)},
        "ok": sorted(ok, key=natural_key),
        "plays": plays,
    }


def write_json_atomic(path: str, data: Any) -> None:
    """Write ``data`` as JSON to ``path`` through a temporary file in the same directory and os.replace."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".%s." % os.path.basename(path), suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=2, ensure_ascii=False)
            handle.write("\n")
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _get(obj: Any, public: str, private: str) -> Any:
    """ansible-core 2.19 names the result's parts host/task/result; older versions _host/_task/_result."""
    value = getattr(obj, public, None)
    return value if value is not None else getattr(obj, private, None)


class CallbackModule(CallbackBase):
    """List the failed and unreachable hosts at the end of the run."""

    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "gpucluster.core.failed_hosts"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self, display=None, options=None):
        super().__init__(display=display, options=options)
        self._play_name: Optional[str] = None
        self._plays = 0
        self._playbook = "site.yml"
        self._events: Dict[str, List[Record]] = {}

    # events -----------------------------------------------------------------------------------

    def v2_playbook_on_start(self, playbook):
        name = getattr(playbook, "_file_name", None)
        if name:
            self._playbook = os.path.basename(to_text(name))

    def v2_playbook_on_play_start(self, play):
        self._plays += 1
        self._play_name = _text(play.get_name()) or None

    def v2_runner_on_failed(self, result, ignore_errors=False):
        if ignore_errors:
            return
        self._record(result, FAILED)

    def v2_runner_on_unreachable(self, result):
        task = _get(result, "task", "_task")
        if task is not None and getattr(task, "ignore_unreachable", False) is True:
            return
        self._record(result, UNREACHABLE)

    def _record(self, result: Any, status: str) -> None:
        host = _get(result, "host", "_host")
        task = _get(result, "task", "_task")
        data = _get(result, "result", "_result")
        if host is None:
            return
        role = None
        task_name = UNKNOWN_TASK
        if task is not None:
            role_obj = getattr(task, "_role", None)
            if role_obj is not None:
                role = _text(role_obj.get_name()) or None
            task_name = task_label(_text(task.get_name()), role) or UNKNOWN_TASK
            if getattr(task, "no_log", False) is True:
                data = {"_ansible_no_log": True}
        record = make_record(status, self._play_name, role, task_name, summarize_message(data))
        self._events.setdefault(host.get_name(), []).append(record)

    # end of the run ---------------------------------------------------------------------------

    def v2_playbook_on_stats(self, stats):
        processed = list(getattr(stats, "processed", {}) or {})
        records: Dict[str, Record] = {}
        ok: List[str] = []
        for host in processed + [host for host in self._events if host not in processed]:
            if host in processed:
                counts = stats.summarize(host)
            else:
                statuses = {event["status"] for event in self._events[host]}
                counts = {"failures": int(FAILED in statuses), "unreachable": int(UNREACHABLE in statuses)}
            record = select_record(self._events.get(host, []), counts)
            if record is None:
                ok.append(host)
            else:
                records[host] = record

        lines = format_report(records, len(processed) or len(records), self._playbook)
        if lines:
            self._display.display("")
            self._display.display(lines[0], color=C.COLOR_ERROR)
            for line in lines[1:]:
                self._display.display(line)

        path = self.get_option("summary_path")
        if path:
            try:
                write_json_atomic(path, build_summary(records, ok, self._plays))
            except (OSError, TypeError, ValueError) as exc:
                self._display.warning("gpucluster.core.failed_hosts: could not write %s: %s" % (path, to_text(exc)))
