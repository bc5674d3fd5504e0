# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpucluster-healthcheck: this node's passive checks, the same code as the node_health module.

    gpucluster-healthcheck [--config /etc/gpucluster/healthcheck.json] [--json] [--slurm]

Prints one line per check (or JSON with --json) and exits 1 when a check failed. With --slurm
(as Slurm's HealthCheckProgram, which kills it after 60 s) it drains this node when a check
failed, with the reason "<prefix> <checks>", and resumes it once every check passes again if
the drain was its own (the reason starts with the prefix); any other drain is left alone.
A check whose tool could not run (missing, not executable, timed out, the driver not answering,
output that does not parse) warns with the tool's own words and is listed under "tooling": it
never drains, and while there is one the node's own drain is not lifted either.
Before it drains, it reads every node Slurm lists (scontrol show node) and keeps to the drain
budget (the config's drain_budget: fraction, min_nodes): when the nodes drained with the prefix
already fill it, the node is held instead (the verdict stays fail, the action says why, and
syslog gets it); when the listing cannot be read, nothing is drained either (fail safe).
With --slurm it also writes each run for the node exporter's textfile collector (the config's
metrics.dir, default /var/lib/prometheus/node-exporter, file gpucluster_health.prom, replaced
atomically): every check's status, the tooling faults, the verdict, the action (a drain the budget
held included), the run's time and the interval; the monitoring role's alerts read them. Without
that folder (no node exporter on the node) it says so on stderr and goes on.
Installed by gpucluster.core's validation role with its expectations in the config file and
the absolute paths of its tools (settings.tools, found on the node at install time); it also
searches a fixed PATH after its own, so it runs in Slurm's empty environment.
It finishes inside Slurm's 60 s: its checks' tools get 40 s in all (settings.checks_deadline
lowers it), each at most 20; a tool the time left does not allow is not run, a tooling fault.
"""

import argparse
import errno
import json
import os
import socket
import subprocess
import sys
import syslog
import time

# The collection's module_utils are installed next to this file (/usr/local/lib/gpucluster).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# pylint: disable=wrong-import-position
from ansible_collections.gpucluster.core.plugins.module_utils._health import (  # noqa: E402
    DRAIN_BUDGET_FRACTION,
    DRAIN_BUDGET_MIN_NODES,
    METRICS_DIR,
    METRICS_FILE,
    HealthError,
    budget_split,
    collect,
    command_environment,
    command_path,
    drained_by,
    evaluate,
    health_metrics,
    scontrol_nodes,
    tool_error,
    reason_checks,
    tooling_faults,
    unjudged,
    verdict,
)

TIMEOUT = 20
# Slurm kills its HealthCheckProgram after 60 s. The checks' tools get CHECKS_DEADLINE seconds from
# the start in all (each at most TIMEOUT); a tool that would start later is not run (a tooling
# fault, never a verdict), so the Slurm reads and the drain or resume always have time left
# before ACTIONS_DEADLINE.
CHECKS_DEADLINE = 40  # the config's settings.checks_deadline, when set, is used instead (at most 40)
ACTIONS_DEADLINE = 55
STARTED = time.monotonic()
LIMITS = {"checks": CHECKS_DEADLINE}
TOOLS = {}  # name -> absolute path, from the config's settings.tools (main sets it)


def run(argv, deadline=None):
    """argv -> (rc, stdout, stderr); a tool that cannot be started answers 127 (not there) or
    126 (any other reason) with the system's words, one that hangs 124, and so does one that
    the time left before ``deadline`` (seconds from the program's start) does not allow."""
    argv = command_path(argv, TOOLS)
    deadline = LIMITS["checks"] if deadline is None else deadline
    timeout = min(TIMEOUT, deadline - (time.monotonic() - STARTED))
    if timeout < 1:
        return 124, "", "%s: not run, the program's %g s for its checks were spent" % (argv[0], deadline)
    try:
        proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                              timeout=timeout, env=command_environment(dict(os.environ)), check=False)
    except OSError as exc:
        return 127 if exc.errno == errno.ENOENT else 126, "", "%s: %s" % (argv[0], exc.strerror)
    except subprocess.TimeoutExpired:
        return 124, "", "%s: timed out after %.0f s" % (argv[0], timeout)
    return proc.returncode, proc.stdout, proc.stderr


def act(argv):
    """``run`` for the Slurm reads and updates, with the time kept for them."""
    return run(argv, ACTIONS_DEADLINE)


def read(path):
    try:
        with open(path) as handle:
            return handle.read()
    except OSError:
        return None


def budget_hold(node, prefix, budget):
    """Why this node must not be drained now (None: it may): the drain budget is spent by the nodes
    Slurm lists as drained with ``prefix``, or the listing could not be read (a tooling fault:
    fail safe, no drain)."""
    rc, out, err = act(["scontrol", "show", "node"])
    try:
        if rc != 0:
            raise HealthError(tool_error("scontrol", rc, out, err))
        nodes = scontrol_nodes(out)
    except HealthError as exc:
        return "not drained: the nodes could not be read to keep the drain budget (tooling): %s" % exc
    split = budget_split(len(nodes), drained_by(nodes, prefix), [node], float(budget.get("fraction", DRAIN_BUDGET_FRACTION)),
                         int(budget.get("min_nodes", DRAIN_BUDGET_MIN_NODES)), prefix)
    return "held (%s)" % split["why"] if split["held"] else None


def slurm_action(node, checks, prefix, budget=None):
    """Drain on a failed check, within the drain budget (``budget``: {fraction, min_nodes}); resume
    this program's own drain once nothing fails and every check its reason names was judged again
    (not left unjudged by a tool that could not run)."""
    status = verdict(checks)
    failed = [c["check"] for c in checks if c["status"] == "fail"]
    rc, out, _err = act(["scontrol", "show", "node", node])
    if rc != 0:
        return "scontrol did not answer: no action"
    reason = ""
    drained = False
    for line in out.splitlines():
        line = line.strip()
        if line.startswith("Reason="):
            reason = line[len("Reason="):]
        for field in line.split():
            if field.startswith("State="):
                drained = "DRAIN" in field
    ours = reason.startswith(prefix)
    if status == "fail" and not drained:
        held = budget_hold(node, prefix, budget or {})
        if held:
            syslog.syslog(syslog.LOG_WARNING, "gpucluster-healthcheck: %s failed (%s), %s" % (node, ",".join(failed), held))
            return held
        act(["scontrol", "update", "nodename=" + node, "state=drain", "reason=%s %s" % (prefix, ",".join(failed))])
        return "drained"
    blind = unjudged(checks, reason_checks(reason, prefix))
    if status != "fail" and drained and blind:
        return "kept drained (not judged: %s)" % ",".join(blind)
    if status != "fail" and drained and ours:
        act(["scontrol", "update", "nodename=" + node, "state=resume"])
        return "resumed"
    return "none"


def write_metrics(config, checks, action, started):
    """This run as the node exporter's textfile (the config's metrics: dir, "" for none, and interval):
    a temporary file in the same folder renamed over METRICS_FILE, so the collector never reads half
    a file. Returns why nothing was written (no such folder: no node exporter here), else None."""
    metrics = config.get("metrics") or {}
    folder = metrics.get("dir", METRICS_DIR)
    if not folder:
        return None
    if not os.path.isdir(folder):
        return "metrics not written: %s is not a directory" % folder
    now = time.time()
    text = health_metrics(checks, action, now, now - started, metrics.get("interval"))
    path = os.path.join(folder, METRICS_FILE)
    tmp = "%s.%d.tmp" % (path, os.getpid())  # the collector reads *.prom only
    try:
        with open(tmp, "w") as handle:
            handle.write(text)
        os.chmod(tmp, 0o644)
        os.rename(tmp, path)
    except OSError as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return "metrics not written: %s: %s" % (path, exc.strerror)
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="/etc/gpucluster/healthcheck.json")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--slurm", action="store_true")
    parser.add_argument("--node", default=socket.gethostname().split(".")[0])
    args = parser.parse_args()
    started = time.time()
    config = json.loads(read(args.config) or "{}")
    expected = config.get("expected") or {}
    settings = config.get("settings") or {}
    TOOLS.update(settings.get("tools") or {})
    LIMITS["checks"] = min(CHECKS_DEADLINE, float(settings.get("checks_deadline") or CHECKS_DEADLINE))
    observed = collect(run, read, settings, expected)
    checks = evaluate(observed, expected)
    status = verdict(checks)
    tooling = tooling_faults(checks)
    action = slurm_action(args.node, checks, config.get("reason_prefix") or "gpucluster-validation:",
                          config.get("drain_budget") or {}) if args.slurm else None
    if args.json:
        json.dump({"node": args.node, "verdict": status, "checks": checks, "tooling": tooling, "action": action},
                  sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        for check in checks:
            print("%-5s %-16s %s" % (check["status"].upper(), check["check"], check["message"]))
        print("%s: %s%s%s" % (args.node, status, " (tooling: %s)" % ",".join(tooling) if tooling else "",
                              " (%s)" % action if action else ""))
    if action is not None:  # the program watches the node (--slurm): Prometheus hears of it
        note = write_metrics(config, checks, action, started)
        if note:
            sys.stderr.write(note + "\n")
    return 1 if status == "fail" else 0


if __name__ == "__main__":
    sys.exit(main())
