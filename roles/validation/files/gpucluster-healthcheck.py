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
Installed by gpucluster.core's validation role with its expectations in the config file and
the absolute paths of its tools (settings.tools, found on the node at install time); it also
searches a fixed PATH after its own, so it runs in Slurm's empty environment.
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

# The collection's module_utils are installed next to this file (/usr/local/lib/gpucluster).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# pylint: disable=wrong-import-position
from ansible_collections.gpucluster.core.plugins.module_utils._health import (  # noqa: E402
    DRAIN_BUDGET_FRACTION,
    DRAIN_BUDGET_MIN_NODES,
    CORDON_MARK,
    HealthError,
    budget_split,
    collect,
    command_environment,
    command_path,
    drained_by,
    evaluate,
    kubectl_nodes,
    kubernetes_decision,
    kubernetes_patch,
    scontrol_nodes,
    tool_error,
    reason_checks,
    tooling_faults,
    unjudged,
    verdict,
)

TIMEOUT = 20
TOOLS = {}  # name -> absolute path, from the config's settings.tools (main sets it)


def run(argv):
    """argv -> (rc, stdout, stderr); a tool that cannot be started answers 127 (not there) or
    126 (any other reason) with the system's words, one that hangs 124."""
    argv = command_path(argv, TOOLS)
    try:
        proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                              timeout=TIMEOUT, env=command_environment(dict(os.environ)), check=False)
    except OSError as exc:
        return 127 if exc.errno == errno.ENOENT else 126, "", "%s: %s" % (argv[0], exc.strerror)
    except subprocess.TimeoutExpired:
        return 124, "", "%s: timed out after %d s" % (argv[0], TIMEOUT)
    return proc.returncode, proc.stdout, proc.stderr


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
    rc, out, err = run(["scontrol", "show", "node"])
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
    rc, out, _err = run(["scontrol", "show", "node", node])
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
        run(["scontrol", "update", "nodename=" + node, "state=drain", "reason=%s %s" % (prefix, ",".join(failed))])
        return "drained"
    blind = unjudged(checks, reason_checks(reason, prefix))
    if status != "fail" and drained and blind:
        return "kept drained (not judged: %s)" % ",".join(blind)
    if status != "fail" and drained and ours:
        run(["scontrol", "update", "nodename=" + node, "state=resume"])
        return "resumed"
    return "none"


def kubernetes_action(checks, kube, prefix, budget=None):
    """Cordon this node (``kube``: the config's kubernetes: node, kubeconfig, read_kubeconfig, mark)
    on a failed check within the drain budget, uncordon this program's own cordon once every check it
    names passed again (kubernetes_decision); nothing when the nodes cannot be read (fail safe)."""
    budget = budget or {}
    node = kube.get("node") or ""
    mark = kube.get("mark") or CORDON_MARK
    reader = kube.get("read_kubeconfig") or kube.get("kubeconfig")
    rc, out, err = run(["kubectl", "--kubeconfig", reader, "get", "nodes", "--output=json"] if reader
                       else ["kubectl", "get", "nodes", "--output=json"])
    try:
        if rc != 0:
            raise HealthError(tool_error("kubectl", rc, out, err))
        nodes = kubectl_nodes(out, mark)
    except HealthError as exc:
        return "no action: the nodes could not be read to keep the drain budget (tooling): %s" % exc
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
    rc, out, err = run(["kubectl"] + (["--kubeconfig", writer] if writer else [])
                       + ["patch", "node", node, "--type=merge", "--patch=" + json.dumps(patch, sort_keys=True)])
    if rc != 0:
        action = "not %s: %s" % (action, tool_error("kubectl", rc, out, err))
    syslog.syslog(syslog.LOG_WARNING if rc else syslog.LOG_NOTICE, "gpucluster-healthcheck: %s %s%s" % (
        node, action, " (%s)" % decision["reason"] if decision["reason"] else ""))
    return action


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="/etc/gpucluster/healthcheck.json")
    parser.add_argument("--json", action="store_true")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--slurm", action="store_true")
    mode.add_argument("--kubernetes", action="store_true")
    parser.add_argument("--node", default=socket.gethostname().split(".")[0])
    args = parser.parse_args()
    config = json.loads(read(args.config) or "{}")
    expected = config.get("expected") or {}
    settings = config.get("settings") or {}
    TOOLS.update(settings.get("tools") or {})
    observed = collect(run, read, settings, expected)
    checks = evaluate(observed, expected)
    status = verdict(checks)
    tooling = tooling_faults(checks)
    action = slurm_action(args.node, checks, config.get("reason_prefix") or "gpucluster-validation:",
                          config.get("drain_budget") or {}) if args.slurm else None
    if args.kubernetes:
        kube = dict(config.get("kubernetes") or {})
        kube.setdefault("node", args.node)
        action = kubernetes_action(checks, kube, config.get("reason_prefix") or "gpucluster-validation:",
                                   config.get("drain_budget") or {})
    if args.json:
        json.dump({"node": args.node, "verdict": status, "checks": checks, "tooling": tooling, "action": action},
                  sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        for check in checks:
            print("%-5s %-16s %s" % (check["status"].upper(), check["check"], check["message"]))
        print("%s: %s%s%s" % (args.node, status, " (tooling: %s)" % ",".join(tooling) if tooling else "",
                              " (%s)" % action if action else ""))
    return 1 if status == "fail" else 0


if __name__ == "__main__":
    sys.exit(main())
