# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpucluster-healthcheck: this node's passive checks, the same code as the node_health module.

    gpucluster-healthcheck [--config /etc/gpucluster/healthcheck.json] [--json] [--slurm | --kubernetes]

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
With --slurm or --kubernetes it keeps this node's verdicts of the last runs in the config's state_file (default
/var/lib/gpucluster/healthcheck-state.json: one line of JSON, written to a temporary file and
renamed over it). A failure of a reading that can be transient (pcie_link, clock_events,
hca_ports: _health.TRANSIENT_CHECKS) drains only once it failed in confirm_runs consecutive runs
(default 2; runs that could not judge it do not count); before that the check still fails and the
action says "unconfirmed (pcie_link 1/2)". Any other failure drains at once. A check whose last
flapping.window runs (default 10) hold flapping.threshold (default 3) separate spells of failure
(fail, pass, fail...) drains the node with the reason "<prefix> flapping <checks>", within the
drain budget, and this program never resumes that drain: an admin or the quarantine loop does,
and once it is lifted the node's history starts afresh. A state file that cannot be read, is not
this node's history or cannot be written is a note (output, syslog): the run goes on as a first
run and never drains for it. Without either (a person running it) the history is neither read
nor written, so a manual run never counts towards a drain. With --json the run's decision is
under "history" ({confirmed, unconfirmed, flapping, confirm_runs}) and the notes under "notes".
Installed by gpucluster.core's validation role with its expectations in the config file and
the absolute paths of its tools (settings.tools, found on the node at install time); it also
searches a fixed PATH after its own, so it runs in Slurm's empty environment.
It finishes inside Slurm's 60 s: its checks' tools get 40 s in all (settings.checks_deadline
lowers it: the Kubernetes timer's unit stops it sooner), each at most 20; a tool the time left does
not allow is not run, a tooling fault; the Slurm or Kubernetes reads and updates get 15 s more.
A drain or resume Slurm refuses is said so ("not drained: scontrol rc=1: ..."), never reported done.
With --kubernetes (a systemd timer runs it on Kubernetes nodes without Slurm) it does the same
with a cordon: the node (the config's kubernetes.node) is cordoned and annotated with the reason
(kubernetes.mark: gpucluster.core/validation-cordon), within the same drain budget counted over
the nodes `kubectl get nodes` lists (those cordoned with the prefix in the annotation), and
uncordoned once every check its annotation names passed again; a node cordoned without the
annotation is never touched, and when the nodes cannot be read nothing is done. kubectl reads
the nodes with kubernetes.read_kubeconfig (a ServiceAccount that may get and list nodes) and
patches its own node with kubernetes.kubeconfig (the kubelet's: NodeRestriction lets a node
change its own spec.unschedulable and annotations, never its taints or another node).
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
    CORDON_MARK,
    DRAIN_BUDGET_FRACTION,
    DRAIN_BUDGET_MIN_NODES,
    METRICS_DIR,
    METRICS_FILE,
    HealthError,
    advance_history,
    budget_split,
    collect,
    command_environment,
    command_path,
    drained_by,
    evaluate,
    flapping_drain,
    flapping_reason,
    health_metrics,
    history_decision,
    history_from_text,
    history_settings,
    history_text,
    kubectl_nodes,
    kubernetes_decision,
    kubernetes_patch,
    reason_checks,
    scontrol_nodes,
    tool_error,
    tooling_faults,
    unconfirmed_action,
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
LIMITS = {"checks": CHECKS_DEADLINE, "actions": ACTIONS_DEADLINE}
# What kubectl says when the API server refused a patch for a resourceVersion that is no longer the node's.
CONFLICT = "the object has been modified"
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
    return run(argv, LIMITS["actions"])


def update(node, *settings):
    """``scontrol update nodename=<node> <settings>``; None when Slurm took it, else why not."""
    rc, out, err = act(["scontrol", "update", "nodename=" + node] + list(settings))
    return tool_error("scontrol", rc, out, err) if rc != 0 else None


def read(path):
    try:
        with open(path) as handle:
            return handle.read()
    except OSError:
        return None


class History(object):
    """This node's verdicts of the last runs, in the config's state_file (the logic is _health's:
    history_from_text, advance_history, history_decision). A state file that cannot be read or
    written, or bad settings, give a note (warned, syslog), never an error: the run goes on afresh."""

    def __init__(self, config, node):
        self.notes = []
        try:
            self.settings = history_settings(config)
        except HealthError as exc:
            self.settings = history_settings({})
            self.note("history settings: %s: the defaults are used" % exc)
        self.path = self.settings["state_file"]
        text, why = None, None
        try:
            with open(self.path) as handle:
                text = handle.read()
        except FileNotFoundError:
            pass  # the first run
        except OSError as exc:
            why = exc.strerror or str(exc)
        except UnicodeDecodeError as exc:
            why = str(exc)
        self.state, bad = history_from_text(text, node)
        why = why or bad
        if why:
            self.note("the state file %s could not be used, started afresh: %s" % (self.path, why))
        self.decision = None

    def note(self, text):
        self.notes.append(text)
        syslog.syslog(syslog.LOG_WARNING, "gpucluster-healthcheck: " + text)

    def advance(self, checks, flapping_now):
        """Add this run (``flapping_now``: see _health.advance_history) and decide what its failures may do."""
        keep = max(self.settings["window"], self.settings["confirm_runs"])
        self.state = advance_history(self.state, checks, flapping_now, keep)
        self.decision = history_decision(self.state, checks, self.settings["confirm_runs"], self.settings["window"],
                                         self.settings["threshold"])
        return self.decision

    def save(self):
        """Write the state file atomically (a temporary file beside it, renamed over it)."""
        tmp = "%s.tmp.%d" % (self.path, os.getpid())
        try:
            os.makedirs(os.path.dirname(self.path), mode=0o755, exist_ok=True)
            with open(tmp, "w") as handle:
                handle.write(history_text(self.state))
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, self.path)
        except OSError as exc:
            self.note("the state file %s could not be written, transient readings cannot be confirmed: %s"
                      % (self.path, exc.strerror or exc))
            try:
                os.unlink(tmp)
            except OSError:
                pass


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


def slurm_action(node, checks, prefix, budget=None, history=None):
    """Drain on a failed check, within the drain budget (``budget``: {fraction, min_nodes}); resume
    this program's own drain once nothing fails and every check its reason names was judged again
    (not left unjudged by a tool that could not run). With ``history`` (a History), a transient
    reading drains once confirmed, a flapping check drains with the flapping reason, and a drain for
    flapping is never resumed here; without it every failure drains at once."""
    status = verdict(checks)
    failed = [c["check"] for c in checks if c["status"] == "fail"]
    rc, out, _err = act(["scontrol", "show", "node", node])
    if rc != 0:
        if history:
            history.advance(checks, None)
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
    flapping = flapping_drain(reason, prefix) if drained else []
    decision = history.advance(checks, flapping) if history else {"confirmed": failed, "flapping": []}
    if decision["flapping"] and not flapping and (ours or not drained):
        held = None if drained else budget_hold(node, prefix, budget or {})
        if held:
            syslog.syslog(syslog.LOG_WARNING, "gpucluster-healthcheck: %s flapping (%s), %s" % (
                node, ",".join(decision["flapping"]), held))
            return held
        refused = update(node, "state=drain", "reason=" + flapping_reason(prefix, decision["flapping"]))
        return "not drained: %s" % refused if refused else "drained (flapping: %s)" % ",".join(decision["flapping"])
    if status == "fail" and not drained and not decision["confirmed"]:
        return unconfirmed_action(decision)
    if status == "fail" and not drained:
        failed = decision["confirmed"]
        held = budget_hold(node, prefix, budget or {})
        if held:
            syslog.syslog(syslog.LOG_WARNING, "gpucluster-healthcheck: %s failed (%s), %s" % (node, ",".join(failed), held))
            return held
        refused = update(node, "state=drain", "reason=%s %s" % (prefix, ",".join(failed)))
        return "not drained: %s" % refused if refused else "drained"
    if flapping:
        return "kept drained (flapping: %s)" % ",".join(flapping) if status != "fail" else "none"
    blind = unjudged(checks, reason_checks(reason, prefix), absent=True)
    if status != "fail" and drained and blind:
        return "kept drained (not judged: %s)" % ",".join(blind)
    if status != "fail" and drained and ours:
        refused = update(node, "state=resume")
        return "not resumed: %s" % refused if refused else "resumed"
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


def kubernetes_action(checks, kube, prefix, budget=None, history=None):
    """Cordon this node (``kube``: the config's kubernetes: node, kubeconfig, read_kubeconfig, mark)
    on a failed check within the drain budget, uncordon this program's own cordon once every check it
    names passed again (kubernetes_decision); nothing when the nodes cannot be read (fail safe). With
    ``history`` (a History), a transient reading cordons once confirmed, as in Slurm (a cordon for
    flapping is Slurm's only, for now). The patch names the node's resourceVersion as read: when the
    node changed in between (the node controller's unschedulable taint after a cordon, an admin), the
    API server refuses it and the nodes are read and judged once more."""
    budget = budget or {}
    node = kube.get("node") or ""
    mark = kube.get("mark") or CORDON_MARK
    reader = kube.get("read_kubeconfig") or kube.get("kubeconfig")
    confirmation = None
    for attempt in (1, 2):
        rc, out, err = act(["kubectl", "--kubeconfig", reader, "get", "nodes", "--output=json"] if reader
                           else ["kubectl", "get", "nodes", "--output=json"])
        try:
            if rc != 0:
                raise HealthError(tool_error("kubectl", rc, out, err))
            nodes = kubectl_nodes(out, mark)
        except HealthError as exc:
            if history and confirmation is None:
                history.advance(checks, None)
            return "no action: the nodes could not be read to keep the drain budget (tooling): %s" % exc
        if history and confirmation is None:
            confirmation = history.advance(checks, [])
        if (confirmation and verdict(checks) == "fail" and not confirmation["confirmed"]
                and not (nodes.get(node) or {}).get("unschedulable")):
            return unconfirmed_action(confirmation)
        decision = kubernetes_decision(node, nodes, checks, prefix, float(budget.get("fraction", DRAIN_BUDGET_FRACTION)),
                                       int(budget.get("min_nodes", DRAIN_BUDGET_MIN_NODES)))
        action = decision["action"]
        if decision["held"]:
            failed = ",".join(c["check"] for c in checks if c["status"] == "fail")
            syslog.syslog(syslog.LOG_WARNING, "gpucluster-healthcheck: %s failed (%s), %s" % (node, failed, action))
        patch = kubernetes_patch(mark, action, decision["reason"], nodes[node]["resource_version"] if node in nodes else None)
        if patch is None:
            return action
        writer = kube.get("kubeconfig")
        rc, out, err = act(["kubectl"] + (["--kubeconfig", writer] if writer else [])
                           + ["patch", "node", node, "--type=merge", "--patch=" + json.dumps(patch, sort_keys=True)])
        if rc != 0 and attempt == 1 and CONFLICT in out + err:
            continue
        if rc != 0:
            action = "not %s: %s" % (action, tool_error("kubectl", rc, out, err))
        syslog.syslog(syslog.LOG_WARNING if rc else syslog.LOG_NOTICE, "gpucluster-healthcheck: %s %s%s" % (
            node, action, " (%s)" % decision["reason"] if decision["reason"] else ""))
        return action
    return "none"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="/etc/gpucluster/healthcheck.json")
    parser.add_argument("--json", action="store_true")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--slurm", action="store_true")
    mode.add_argument("--kubernetes", action="store_true")
    # slurmd gives its HealthCheckProgram the node's Slurm name (NodeName may differ from the host name)
    parser.add_argument("--node", default=os.environ.get("SLURMD_NODENAME") or socket.gethostname().split(".")[0])
    args = parser.parse_args()
    started = time.time()
    config = json.loads(read(args.config) or "{}")
    expected = config.get("expected") or {}
    settings = config.get("settings") or {}
    TOOLS.update(settings.get("tools") or {})
    LIMITS["checks"] = min(CHECKS_DEADLINE, float(settings.get("checks_deadline") or CHECKS_DEADLINE))
    LIMITS["actions"] = LIMITS["checks"] + (ACTIONS_DEADLINE - CHECKS_DEADLINE)
    observed = collect(run, read, settings, expected)
    checks = evaluate(observed, expected)
    status = verdict(checks)
    tooling = tooling_faults(checks)
    # Only the --slurm and --kubernetes runs keep and read the history: a person's run never counts
    # towards a drain.
    history = History(config, args.node) if args.slurm or args.kubernetes else None
    action = slurm_action(args.node, checks, config.get("reason_prefix") or "gpucluster-validation:",
                          config.get("drain_budget") or {}, history) if args.slurm else None
    if args.kubernetes:
        kube = dict(config.get("kubernetes") or {})
        kube.setdefault("node", args.node)
        action = kubernetes_action(checks, kube, config.get("reason_prefix") or "gpucluster-validation:",
                                   config.get("drain_budget") or {}, history)
    if history:
        history.save()
    notes = history.notes if history else []
    if args.json:
        json.dump({"node": args.node, "verdict": status, "checks": checks, "tooling": tooling, "action": action,
                   "history": history.decision if history else None, "notes": notes}, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        for check in checks:
            print("%-5s %-16s %s" % (check["status"].upper(), check["check"], check["message"]))
        for note in notes:
            print("NOTE  %s" % note)
        print("%s: %s%s%s" % (args.node, status, " (tooling: %s)" % ",".join(tooling) if tooling else "",
                              " (%s)" % action if action else ""))
    if action is not None:  # the program watches the node (--slurm, --kubernetes): Prometheus hears of it
        note = write_metrics(config, checks, action, started)
        if note:
            sys.stderr.write(note + "\n")
    return 1 if status == "fail" else 0


if __name__ == "__main__":
    sys.exit(main())
