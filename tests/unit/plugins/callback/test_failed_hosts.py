# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import json
import os

import pytest

from ansible import constants as C

from ansible_collections.gpucluster.core.plugins.callback.failed_hosts import (
    HIDDEN,
    CallbackModule,
    build_summary,
    format_location,
    format_report,
    make_record,
    natural_key,
    one_line,
    select_record,
    summarize_message,
    task_label,
    write_json_atomic,
)

PLAY1 = "Base operating system on every cluster node"
PLAY2 = "Slurm on the controller, accounting, compute and login nodes"


# fakes ----------------------------------------------------------------------------------------


class FakeNamed:
    """A host, role or play: a name and get_name()."""

    def __init__(self, name):
        self.name = name

    def get_name(self):
        return self.name


class FakeTask:
    def __init__(self, name, role=None, no_log=False, ignore_unreachable=False):
        self.name = name
        self._role = FakeNamed(role) if role else None
        self.no_log = no_log
        self.ignore_unreachable = ignore_unreachable

    def get_name(self):
        return "%s : %s" % (self._role.get_name(), self.name) if self._role else self.name


class FakeResult:
    """ansible-core 2.19 shape: host, task, result."""

    def __init__(self, host, task, result):
        self.host = FakeNamed(host)
        self.task = task
        self.result = result


class FakeOldResult:
    """ansible-core 2.16-2.18 shape: _host, _task, _result."""

    def __init__(self, host, task, result):
        self._host = FakeNamed(host)
        self._task = task
        self._result = result


class FakePlaybook:
    def __init__(self, file_name):
        self._file_name = file_name


class FakeStats:
    def __init__(self, counts):
        self.counts = counts
        self.processed = dict.fromkeys(counts, 1)

    def summarize(self, host):
        summary = dict(ok=0, failures=0, unreachable=0, changed=0, skipped=0, rescued=0, ignored=0)
        summary.update(self.counts.get(host, {}))
        return summary


class FakeDisplay:
    verbosity = 0

    def __init__(self):
        self.lines = []
        self.warnings = []

    def display(self, msg, color=None, **kwargs):
        self.lines.append((msg, color))

    def warning(self, msg, **kwargs):
        self.warnings.append(msg)


def make_callback(summary_path=None):
    cb = CallbackModule(display=FakeDisplay())
    options = {"summary_path": summary_path}
    cb.get_option = lambda name, hostvars=None: options[name]
    return cb


def printed(cb):
    return [msg for msg, dummy in cb._display.lines]


# pure functions -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "names, expected",
    [
        (["worker10", "worker2", "worker1"], ["worker1", "worker2", "worker10"]),
        (["gpu-b1", "gpu-a10", "gpu-a9"], ["gpu-a9", "gpu-a10", "gpu-b1"]),
        (["r2n10", "r2n9", "r10n1", "login1"], ["login1", "r2n9", "r2n10", "r10n1"]),
        (["n01", "n1", "n001"], ["n01", "n1", "n001"]),  # equal numbers keep their order
    ],
)
def test_natural_key(names, expected):
    assert sorted(names, key=natural_key) == expected


@pytest.mark.parametrize(
    "text, limit, expected",
    [
        ("  a\n\tb   c  ", 300, "a b c"),
        ("x" * 300, 300, "x" * 300),
        ("x" * 301, 300, "x" * 297 + "..."),
        ("abcdefgh", 5, "ab..."),
        ("", 300, ""),
    ],
)
def test_one_line(text, limit, expected):
    assert one_line(text, limit) == expected


@pytest.mark.parametrize(
    "result, expected",
    [
        ({"msg": "No package matching 'slurmd' is available"}, "No package matching 'slurmd' is available"),
        ({"msg": "line one\n   line two\t\tend"}, "line one line two end"),
        ({"msg": ["first", "second"]}, "first; second"),
        (
            {"msg": "Failed to connect to the host via ssh: ssh: connect to host worker2 port 22: No route to host", "unreachable": True},
            "Failed to connect to the host via ssh: ssh: connect to host worker2 port 22: No route to host",
        ),
        # command: the last line of stderr completes the generic message
        (
            {"msg": "non-zero return code", "rc": 2, "stderr": "warn\nmount.nfs: access denied\n\n", "stdout": "x"},
            "non-zero return code: mount.nfs: access denied",
        ),
        ({"msg": "non-zero return code", "rc": 1, "stderr": "", "stdout": "a\nlast out"}, "non-zero return code: last out"),
        ({"msg": "non-zero return code", "rc": 1}, "non-zero return code"),
        # no msg: stderr, then stdout, then reason, then rc
        ({"stderr": "one\ntwo", "stdout": "out"}, "two"),
        ({"stderr": "", "stdout": "out1\nout2\n"}, "out2"),
        ({"stderr_lines": ["ignored"], "stderr": "  "}, "(no message)"),
        ({"reason": "Could not find or access 'x.yml' on the Ansible Controller."}, "Could not find or access 'x.yml' on the Ansible Controller."),
        ({"rc": 4}, "rc=4"),
        ({}, "(no message)"),
        (None, "(no message)"),
        # a loop: the first failed item
        (
            {
                "msg": "One or more items failed",
                "results": [
                    {"item": "a", "failed": False, "msg": "fine"},
                    {"item": "b", "failed": True, "msg": "item b broke"},
                    {"item": "c", "failed": True, "msg": "item c broke"},
                ],
            },
            "item b broke",
        ),
        (
            {"msg": "One or more items failed", "results": [{"failed": True, "msg": "non-zero return code", "stderr": "bad\n"}]},
            "non-zero return code: bad",
        ),
        ({"msg": "One or more items failed", "results": [{"failed": False}, "odd"]}, "One or more items failed"),
        # no_log: nothing from the result
        ({"_ansible_no_log": True, "msg": "password=hunter2", "stderr": "hunter2"}, HIDDEN),
        ({"censored": "the output has been hidden due to the fact that 'no_log: true' was specified for this result", "changed": False}, HIDDEN),
        ({"msg": "One or more items failed", "results": [{"failed": True, "_ansible_no_log": True, "msg": "secret"}]}, HIDDEN),
        # censored loop items lose "failed"
        ({"msg": "One or more items failed", "results": [{"changed": False}, {"censored": "hidden", "changed": False}]}, HIDDEN),
        ({"_ansible_no_log": False, "msg": "visible"}, "visible"),
    ],
)
def test_summarize_message(result, expected):
    assert summarize_message(result) == expected


def test_summarize_message_truncates():
    message = summarize_message({"msg": "word " * 100})
    assert len(message) == 300
    assert message == ("word " * 60)[:297] + "..."


@pytest.mark.parametrize(
    "name, role, expected",
    [
        ("slurm : Start slurmd", "slurm", "Start slurmd"),
        ("gpucluster.core.slurm : Start slurmd", "gpucluster.core.slurm", "Start slurmd"),
        ("Start slurmd", None, "Start slurmd"),
        ("other : Start slurmd", "slurm", "other : Start slurmd"),
        ("slurm : ansible.builtin.command", "slurm", "ansible.builtin.command"),
    ],
)
def test_task_label(name, role, expected):
    assert task_label(name, role) == expected


def _failed(task, play=PLAY1, message="m"):
    return make_record("failed", play, None, task, message)


def _unreachable(task, play=PLAY1, message="u"):
    return make_record("unreachable", play, None, task, message)


@pytest.mark.parametrize(
    "events, counts, expected",
    [
        ([], {"ok": 5}, None),
        ([_failed("t1")], {"failures": 1}, _failed("t1")),
        ([_failed("t1"), _failed("t2")], {"failures": 1}, _failed("t1")),  # first failure only
        ([_failed("t1")], {"rescued": 1}, None),  # rescued: the host finished
        ([_failed("t1"), _failed("t2")], {"failures": 1, "rescued": 1}, _failed("t2")),  # the rescued one is skipped
        ([_failed("t1")], {"failures": 1, "rescued": 1}, _failed("t1")),  # fewer events than counted: the last one
        ([_unreachable("t1")], {"unreachable": 1}, _unreachable("t1")),
        ([_failed("t1"), _unreachable("t2")], {"unreachable": 1, "rescued": 1}, _unreachable("t2")),
        ([_unreachable("t1")], {"unreachable": 0, "ok": 3}, None),  # ignore_unreachable
        ([], {"failures": 1}, make_record("failed", None, None, "(unknown)", "no failed task was reported for this host")),
        ([], {"unreachable": 1}, make_record("unreachable", None, None, "(unknown)", "no failed task was reported for this host")),
    ],
)
def test_select_record(events, counts, expected):
    assert select_record(events, counts) == expected


@pytest.mark.parametrize(
    "record, expected",
    [
        (make_record("failed", "P", "gpucluster.core.slurm", "Start slurmd", "m"), 'play "P", role gpucluster.core.slurm, task "Start slurmd"'),
        (make_record("failed", "P", None, "Start slurmd", "m"), 'play "P", task "Start slurmd"'),
        (make_record("failed", None, None, "(unknown)", "m"), 'task "(unknown)"'),
        (make_record("failed", None, None, None, "m"), 'task "(unknown)"'),
    ],
)
def test_format_location(record, expected):
    assert format_location(record) == expected


REPORT_MIXED = [
    "FAILED HOSTS (2 of 5 did not finish; the others completed):",
    '  worker2  unreachable  play "Base operating system on every cluster node", task "Start the SSH server": '
    "Failed to connect to the host via ssh",
    '  worker3  failed       play "Slurm on the controller, accounting, compute and login nodes", '
    'role gpucluster.core.slurm, task "Start slurmd": slurmd failed',
    "What to do:",
    "  - unreachable hosts: check power, network and SSH (`ansible worker2 -m ping`), then re-run site.yml; "
    "the other hosts keep their configuration and the scheduler keeps the hosts' last known definitions.",
    "  - failed hosts: fix the cause above, then re-run site.yml (or with --limit 'worker3' when only that host needs it; "
    "roles that need the controllers say so).",
]

REPORT_FAILED_ONLY = [
    "FAILED HOSTS (3 of 3 did not finish):",
    '  gpu9    failed  play "P", task "t": a',
    '  gpu10   failed  play "P", role r, task "t": b',
    "  login1  failed  task \"(unknown)\": no failed task was reported for this host",
    "What to do:",
    "  - failed hosts: fix the cause above, then re-run cluster.yml (or with --limit 'gpu9,gpu10,login1' when only these hosts "
    "need it; roles that need the controllers say so).",
]

REPORT_UNREACHABLE_ONLY = [
    "FAILED HOSTS (2 of 300 did not finish; the others completed):",
    '  worker10   unreachable  play "P", task "Gathering Facts": x',
    '  worker100  unreachable  play "P", task "Gathering Facts": y',
    "What to do:",
    "  - unreachable hosts: check power, network and SSH (`ansible worker10,worker100 -m ping`), then re-run site.yml; "
    "the other hosts keep their configuration and the scheduler keeps the hosts' last known definitions.",
]


REPORT_INTERPRETER_GONE = [
    "FAILED HOSTS (2 of 3 did not finish; the others completed):",
    '  worker1  failed  play "P", task "Gathering Facts": The module interpreter \'/usr/bin/python3.11\' was not found.',
    '  worker2  failed  play "P", task "t": b',
    "What to do:",
    "  - failed hosts: fix the cause above, then re-run site.yml (or with --limit 'worker1,worker2' when only these hosts "
    "need it; roles that need the controllers say so).",
    "  - worker1: the Python interpreter the fact cache recorded is gone (OS reinstalled or upgraded): delete its fact "
    "cache entry (ansible.cfg's fact_caching_connection, .cache/facts/HOST in a checkout), or re-run once with "
    "--flush-cache when every host is reachable.",
]


@pytest.mark.parametrize(
    "records, total, playbook, expected",
    [
        ({}, 5, "site.yml", []),
        (
            {
                "worker1": make_record("failed", "P", None, "Gathering Facts",
                                       "The module interpreter '/usr/bin/python3.11' was not found."),
                "worker2": make_record("failed", "P", None, "t", "b"),
            },
            3,
            "site.yml",
            REPORT_INTERPRETER_GONE,
        ),
        (
            {
                "worker3": make_record("failed", PLAY2, "gpucluster.core.slurm", "Start slurmd", "slurmd failed"),
                "worker2": make_record("unreachable", PLAY1, None, "Start the SSH server", "Failed to connect to the host via ssh"),
            },
            5,
            "site.yml",
            REPORT_MIXED,
        ),
        (
            {
                "login1": make_record("failed", None, None, "(unknown)", "no failed task was reported for this host"),
                "gpu10": make_record("failed", "P", "r", "t", "b"),
                "gpu9": make_record("failed", "P", None, "t", "a"),
            },
            2,  # never fewer than the hosts listed
            "cluster.yml",
            REPORT_FAILED_ONLY,
        ),
        (
            {
                "worker100": make_record("unreachable", "P", None, "Gathering Facts", "y"),
                "worker10": make_record("unreachable", "P", None, "Gathering Facts", "x"),
            },
            300,
            "site.yml",
            REPORT_UNREACHABLE_ONLY,
        ),
    ],
)
def test_format_report(records, total, playbook, expected):
    assert format_report(records, total, playbook) == expected


def test_format_report_quotes_odd_names():
    lines = format_report({"it's": make_record("failed", "P", None, "t", "m")}, 1)
    assert lines[-1].startswith("  - failed hosts: fix the cause above, then re-run site.yml (or with --limit 'it'\"'\"'s' when")


def test_build_summary():
    records = {"worker10": _failed("t"), "worker9": _unreachable("u")}
    assert build_summary(records, ["worker11", "worker1"], 4) == {
        "hosts": {"worker9": _unreachable("u"), "worker10": _failed("t")},
        "ok": ["worker1", "worker11"],
        "plays": 4,
    }
    assert list(build_summary(records, [], 1)["hosts"]) == ["worker9", "worker10"]


def test_write_json_atomic(tmp_path):
    path = tmp_path / "summary.json"
    path.write_text("old")
    write_json_atomic(str(path), {"hosts": {}, "ok": ["ä"], "plays": 1})
    assert json.loads(path.read_text(encoding="utf-8")) == {"hosts": {}, "ok": ["ä"], "plays": 1}
    assert path.read_text(encoding="utf-8").endswith("}\n")
    assert os.listdir(str(tmp_path)) == ["summary.json"]


def test_write_json_atomic_cleans_up(tmp_path):
    path = tmp_path / "summary.json"
    with pytest.raises(TypeError):
        write_json_atomic(str(path), {"bad": object()})
    assert os.listdir(str(tmp_path)) == []


# the callback ---------------------------------------------------------------------------------


def run(cb, events, counts, plays=(PLAY1,), playbook="/srv/cluster/site.yml"):
    """Feed the callback: playbook, plays, then (method, result, kwargs) events, then the stats."""
    cb.v2_playbook_on_start(FakePlaybook(playbook))
    for play in plays:
        cb.v2_playbook_on_play_start(FakeNamed(play))
    for method, result, kwargs in events:
        getattr(cb, method)(result, **kwargs)
    cb.v2_playbook_on_stats(FakeStats(counts))
    return cb


def test_callback_attributes():
    assert CallbackModule.CALLBACK_VERSION == 2.0
    assert CallbackModule.CALLBACK_TYPE == "aggregate"
    assert CallbackModule.CALLBACK_NAME == "gpucluster.core.failed_hosts"
    assert CallbackModule.CALLBACK_NEEDS_ENABLED is True


@pytest.mark.parametrize("result_class", [FakeResult, FakeOldResult])
def test_callback_report(result_class, tmp_path):
    path = tmp_path / "failed.json"
    cb = make_callback(str(path))
    cb.v2_playbook_on_start(FakePlaybook("/srv/cluster/site.yml"))
    cb.v2_playbook_on_play_start(FakeNamed(PLAY1))
    cb.v2_runner_on_unreachable(
        result_class("worker2", FakeTask("Start the SSH server", role="base_os"), {"unreachable": True, "msg": "Failed to connect to the host via ssh"})
    )
    cb.v2_runner_on_failed(result_class("worker1", FakeTask("Ignored"), {"msg": "ignored"}), ignore_errors=True)
    cb.v2_playbook_on_play_start(FakeNamed(PLAY2))
    cb.v2_runner_on_failed(
        result_class("worker3", FakeTask("Start slurmd", role="gpucluster.core.slurm"), {"msg": "non-zero return code", "stderr": "slurmd: fatal"})
    )
    cb.v2_runner_on_failed(result_class("worker3", FakeTask("Later"), {"msg": "later"}))
    cb.v2_playbook_on_stats(
        FakeStats({"worker1": {"ok": 9, "ignored": 1}, "worker2": {"unreachable": 1}, "worker3": {"failures": 1}, "worker10": {"ok": 9}, "worker4": {"ok": 9}})
    )

    assert cb._display.lines == [
        ("", None),
        ("FAILED HOSTS (2 of 5 did not finish; the others completed):", C.COLOR_ERROR),
        ('  worker2  unreachable  play "%s", role base_os, task "Start the SSH server": Failed to connect to the host via ssh' % PLAY1, None),
        ('  worker3  failed       play "%s", role gpucluster.core.slurm, task "Start slurmd": non-zero return code: slurmd: fatal' % PLAY2, None),
        ("What to do:", None),
        (
            "  - unreachable hosts: check power, network and SSH (`ansible worker2 -m ping`), then re-run site.yml; "
            "the other hosts keep their configuration and the scheduler keeps the hosts' last known definitions.",
            None,
        ),
        (
            "  - failed hosts: fix the cause above, then re-run site.yml (or with --limit 'worker3' when only that host needs it; "
            "roles that need the controllers say so).",
            None,
        ),
    ]
    assert json.loads(path.read_text()) == {
        "hosts": {
            "worker2": {
                "status": "unreachable",
                "play": PLAY1,
                "role": "base_os",
                "task": "Start the SSH server",
                "message": "Failed to connect to the host via ssh",
            },
            "worker3": {
                "status": "failed",
                "play": PLAY2,
                "role": "gpucluster.core.slurm",
                "task": "Start slurmd",
                "message": "non-zero return code: slurmd: fatal",
            },
        },
        "ok": ["worker1", "worker4", "worker10"],
        "plays": 2,
    }
    assert cb._display.warnings == []


@pytest.mark.parametrize(
    "events, counts, expected",
    [
        # failed with msg
        (
            [("v2_runner_on_failed", FakeResult("n1", FakeTask("Install"), {"msg": "No package"}), {})],
            {"n1": {"failures": 1}},
            {"n1": make_record("failed", PLAY1, None, "Install", "No package")},
        ),
        # ignore_errors is not a failure
        (
            [("v2_runner_on_failed", FakeResult("n1", FakeTask("Probe"), {"msg": "x"}), {"ignore_errors": True})],
            {"n1": {"ok": 1, "ignored": 1}},
            {},
        ),
        # ignore_unreachable is not a failure
        (
            [("v2_runner_on_unreachable", FakeResult("n1", FakeTask("Probe", ignore_unreachable=True), {"msg": "x"}), {})],
            {"n1": {"ok": 1, "ignored": 1}},
            {},
        ),
        # loop: first failed item
        (
            [
                (
                    "v2_runner_on_failed",
                    FakeResult(
                        "n1",
                        FakeTask("Mount", role="nfs"),
                        {"msg": "One or more items failed", "results": [{"failed": False}, {"failed": True, "msg": "mount /home failed"}]},
                    ),
                    {},
                )
            ],
            {"n1": {"failures": 1}},
            {"n1": make_record("failed", PLAY1, "nfs", "Mount", "mount /home failed")},
        ),
        # no_log on the result, and on the task (older ansible-core)
        (
            [
                ("v2_runner_on_failed", FakeResult("n1", FakeTask("Key"), {"_ansible_no_log": True, "msg": "key=abc"}), {}),
                ("v2_runner_on_failed", FakeResult("n2", FakeTask("Key", no_log=True), {"msg": "key=abc"}), {}),
            ],
            {"n1": {"failures": 1}, "n2": {"failures": 1}},
            {"n1": make_record("failed", PLAY1, None, "Key", HIDDEN), "n2": make_record("failed", PLAY1, None, "Key", HIDDEN)},
        ),
        # first failure only
        (
            [
                ("v2_runner_on_failed", FakeResult("n1", FakeTask("First"), {"msg": "one"}), {}),
                ("v2_runner_on_failed", FakeResult("n1", FakeTask("Second"), {"msg": "two"}), {}),
            ],
            {"n1": {"failures": 2}},
            {"n1": make_record("failed", PLAY1, None, "First", "one")},
        ),
        # a rescued failure is skipped; the host's real failure is shown
        (
            [
                ("v2_runner_on_failed", FakeResult("n1", FakeTask("Try"), {"msg": "rescued"}), {}),
                ("v2_runner_on_failed", FakeResult("n1", FakeTask("Explain"), {"msg": "real"}), {}),
                ("v2_runner_on_failed", FakeResult("n2", FakeTask("Try"), {"msg": "rescued"}), {}),
            ],
            {"n1": {"failures": 1, "rescued": 1}, "n2": {"ok": 4, "rescued": 1}},
            {"n1": make_record("failed", PLAY1, None, "Explain", "real")},
        ),
        # the stats say failed but no result came
        (
            [],
            {"n1": {"failures": 1}, "n2": {"ok": 1}},
            {"n1": make_record("failed", None, None, "(unknown)", "no failed task was reported for this host")},
        ),
    ],
)
def test_callback_records(events, counts, expected, tmp_path):
    path = tmp_path / "s.json"
    run(make_callback(str(path)), events, counts)
    summary = json.loads(path.read_text())
    assert summary["hosts"] == expected
    assert summary["ok"] == sorted(set(counts) - set(expected))
    assert summary["plays"] == 1


def test_callback_no_failures(tmp_path):
    path = tmp_path / "s.json"
    cb = run(make_callback(str(path)), [], {"worker10": {"ok": 3}, "worker2": {"ok": 3}}, plays=(PLAY1, PLAY2))
    assert cb._display.lines == []
    assert json.loads(path.read_text()) == {"hosts": {}, "ok": ["worker2", "worker10"], "plays": 2}


def test_callback_without_summary_path(tmp_path):
    cb = run(make_callback(None), [("v2_runner_on_failed", FakeResult("n1", FakeTask("t"), {"msg": "m"}), {})], {"n1": {"failures": 1}})
    assert printed(cb)[1] == "FAILED HOSTS (1 of 1 did not finish):"
    assert cb._display.warnings == []


def test_callback_summary_write_error(tmp_path):
    path = tmp_path / "missing" / "s.json"
    cb = run(make_callback(str(path)), [], {"n1": {"ok": 1}})
    assert cb._display.lines == []
    assert len(cb._display.warnings) == 1
    assert cb._display.warnings[0].startswith("gpucluster.core.failed_hosts: could not write %s: " % path)
    assert not path.exists()


def test_callback_loads_with_options(monkeypatch, tmp_path):
    """The documented option reaches the plugin through the plugin loader and its environment variable."""
    from ansible.plugins.loader import callback_loader

    path = tmp_path / "env.json"
    monkeypatch.setenv("GPUCLUSTER_FAILED_HOSTS_SUMMARY", str(path))
    cb = callback_loader.get("gpucluster.core.failed_hosts")
    assert cb is not None
    cb.set_options()
    assert cb.get_option("summary_path") == str(path)
