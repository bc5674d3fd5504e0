# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpucluster-healthcheck: this node's passive checks, the same code as the node_health module.

    gpucluster-healthcheck [--config /etc/gpucluster/healthcheck.json] [--json] [--slurm]

Prints one line per check (or JSON with --json) and exits 1 when a check failed. With --slurm
(as Slurm's HealthCheckProgram, which kills it after 60 s) it drains this node when a check
failed, with the reason "<prefix> <checks>", and resumes it once every check passes again if
the drain was its own (the reason starts with the prefix); any other drain is left alone.
Installed by gpucluster.core's validation role with its expectations in the config file.
"""

import argparse
import json
import os
import socket
import subprocess
import sys

sys.path.insert(0, "/usr/local/lib/gpucluster")

# pylint: disable=wrong-import-position
from ansible_collections.gpucluster.core.plugins.module_utils._health import (  # noqa: E402
    collect,
    evaluate,
    verdict,
)


def run(argv):
    try:
        proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                              timeout=20, env=dict(os.environ, LC_ALL="C"), check=False)
    except FileNotFoundError:
        return 127, "", "%s: not found" % argv[0]
    except subprocess.TimeoutExpired:
        return 124, "", "%s: timed out" % argv[0]
    return proc.returncode, proc.stdout, proc.stderr


def read(path):
    try:
        with open(path) as handle:
            return handle.read()
    except OSError:
        return None


def slurm_action(node, status, failed, prefix):
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
        run(["scontrol", "update", "nodename=" + node, "state=drain", "reason=%s %s" % (prefix, ",".join(failed))])
        return "drained"
    if status != "fail" and drained and ours:
        run(["scontrol", "update", "nodename=" + node, "state=resume"])
        return "resumed"
    return "none"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="/etc/gpucluster/healthcheck.json")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--slurm", action="store_true")
    parser.add_argument("--node", default=socket.gethostname().split(".")[0])
    args = parser.parse_args()
    config = json.loads(read(args.config) or "{}")
    expected = config.get("expected") or {}
    observed = collect(run, read, config.get("settings") or {}, expected)
    checks = evaluate(observed, expected)
    status = verdict(checks)
    failed = [c["check"] for c in checks if c["status"] == "fail"]
    action = slurm_action(args.node, status, failed, config.get("reason_prefix") or "gpucluster-validation:") \
        if args.slurm else None
    if args.json:
        json.dump({"node": args.node, "verdict": status, "checks": checks, "action": action}, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        for check in checks:
            print("%-5s %-16s %s" % (check["status"].upper(), check["check"], check["message"]))
        print("%s: %s%s" % (args.node, status, " (%s)" % action if action else ""))
    return 1 if status == "fail" else 0


if __name__ == "__main__":
    sys.exit(main())
