# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fault scoreboard (issue 32): faults injected into the running sandbox one class at a time,
judged by Slurm's own health check (gpucluster-healthcheck-slurm as HealthCheckProgram), with no
Ansible run between a fault and its drain.

    python3 benchmarks/bench_faults.py --interval 10 [--healthy-runs 50] [--out FILE]

benchmarks/bench_faults.sh brings the sandbox up for it. For each fault, on a worker in turn, it
records: the check that saw it (the drain reason, else the program's metrics file), drained or only
warned, the seconds from the fault to the drain (Slurm's state polled every 0.5 s), the seconds from
the repair to the resume. Each class starts from a fresh history (the program's state file removed
after the resume: flapping is proven by molecule/validation and the unit tests, not here). Then a
tooling fault on every node at once (nvidia-smi unusable: nothing may drain), and the false drains
and the program's run times over --healthy-runs runs of healthy nodes. Prints a Markdown table.
Numbers, not assertions: CI asserts the behaviour (molecule/validation's health_loop.yml).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from typing import Dict, List, Optional, Tuple

CONTAINER = "gpc-sandbox-%s"
MASTER = "master"
WORKERS = ("worker1", "worker2")
NODES = ("master", "worker1", "worker2")
NODE_TOOL = "/usr/local/libexec/gpc-bench/bench_faults_node.py"
METRICS = "/var/lib/prometheus/node-exporter/gpucluster_health.prom"
STATE = "/var/lib/gpucluster/healthcheck-state.json"
POLL = 0.5

# name, what it is, the check that must see it ("" where only Slurm itself can), how long to wait
FAULTS: List[Tuple[str, str, str, float]] = [
    ("gpu-gone", "a GPU fallen off the bus", "gpu_count", 60),
    ("ecc-uncorrectable", "an uncorrectable (double-bit) ECC error", "ecc_errors", 60),
    ("page-pending", "a page waiting for retirement", "retired_pages", 60),
    ("pcie-down", "a PCIe link trained down (x4 of x16)", "pcie_link", 60),
    ("hw-slowdown", "hardware slowdown (clock event)", "clock_events", 45),
    ("wrong-driver", "the wrong driver (460.32.03, 460.73.01 pinned)", "driver_version", 60),
    ("hca-port-down", "two HCA ports down (real capture)", "hca_ports", 60),
    ("hca-lower-rate", "an HCA port at a lower rate (200 of 400)", "hca_ports", 60),
    ("mount-gone", "a shared mount gone", "mounts", 60),
    ("docker-stopped", "the container runtime stopped", "services", 60),
    ("clock-skew", "the clock 120 s off", "time_sync", 60),
    ("disk-full", "a full file system (/tmp)", "disk_space", 60),
    ("munge-stopped", "munge stopped", "services", 90),
    ("slurmd-stopped", "slurmd stopped (nothing runs the program there)", "", 90),
]


def sh(node: str, *argv: str, check: bool = True) -> str:
    proc = subprocess.run(["docker", "exec", CONTAINER % node] + list(argv), capture_output=True, text=True, check=False)
    if check and proc.returncode != 0:
        raise RuntimeError("%s: %s: rc=%d %s" % (node, " ".join(argv), proc.returncode, proc.stderr.strip()))
    return proc.stdout


def slurm_states() -> Dict[str, Tuple[str, str]]:
    """Each node's Slurm state and reason (sinfo on the controller)."""
    out = sh(MASTER, "sinfo", "--noheader", "--Node", "--format=%N|%T|%E", check=False)
    states = {}
    for line in out.splitlines():
        parts = line.split("|", 2)
        if len(parts) == 3:
            states[parts[0]] = (parts[1], parts[2])
    return states


def out_of_service(state: str) -> bool:
    return "drain" in state or state.startswith("down") or state.endswith("*")


def metrics(node: str) -> Dict[str, float]:
    series = {}
    for line in sh(node, "cat", METRICS, check=False).splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            series[name] = float(value)
    return series


def check_status(series: Dict[str, float], check: str) -> Optional[str]:
    for status in ("fail", "warn", "pass", "skip"):
        if series.get('gpucluster_health_check_status{check="%s",status="%s"}' % (check, status)) == 1:
            return status
    return None


def wait(predicate, limit: float) -> Optional[float]:
    start = time.monotonic()
    while time.monotonic() - start < limit:
        if predicate():
            return round(time.monotonic() - start, 1)
        time.sleep(POLL)
    return None


def run_fault(name: str, what: str, expect: str, limit: float, node: str) -> Dict[str, str]:
    start_runs = metrics(node).get("gpucluster_health_last_run_timestamp_seconds", 0)
    sh(node, "python3", NODE_TOOL, "inject", name)
    injected = time.monotonic()
    drained = wait(lambda: out_of_service(slurm_states().get(node, ("", ""))[0]), limit)
    state, reason = slurm_states().get(node, ("?", ""))
    series = metrics(node)
    seen = check_status(series, expect) if expect else None
    ran = series.get("gpucluster_health_last_run_timestamp_seconds", 0) > start_runs
    if drained is not None and "drain" in state:
        outcome = "drained"
    elif drained is not None:
        outcome = "Slurm: %s" % state
    elif seen in ("warn", "fail"):
        outcome = "warned" if seen == "warn" else "failed, not drained"
    else:
        outcome = "not seen"
    detected = reason.split(" [")[0] if drained is not None and reason else (
        "%s (%s)" % (expect, seen) if seen in ("warn", "fail") else ("-" if ran else "no run"))
    elapsed = round(time.monotonic() - injected, 1)
    sh(node, "python3", NODE_TOOL, "repair", name)
    repaired = time.monotonic()
    resumed = wait(lambda: not out_of_service(slurm_states().get(node, ("", ""))[0]), 120) if drained is not None else None
    if drained is not None and resumed is None:
        sh(MASTER, "scontrol", "update", "nodename=" + node, "state=resume", check=False)  # an admin, so the next class starts clean
        resumed_text = "not resumed in 120 s (admin resumed)"
    else:
        resumed_text = "%s" % resumed if resumed is not None else "-"
    sh(node, "rm", "-f", STATE, check=False)
    del repaired
    return {"fault": name, "what": what, "node": node, "detected": detected, "outcome": outcome,
            "to_drain": "%s" % drained if drained is not None else "- (%s s watched)" % elapsed, "to_resume": resumed_text}


def tooling_everywhere(interval: int) -> Dict[str, str]:
    before = {node: metrics(node).get("gpucluster_health_last_run_timestamp_seconds", 0) for node in NODES}
    for node in NODES:
        sh(node, "python3", NODE_TOOL, "inject", "nvidia-smi-unusable")
    drains = set()
    end = time.monotonic() + 3 * interval + 5
    while time.monotonic() < end:
        drains |= {n for n, (state, _r) in slurm_states().items() if out_of_service(state)}
        time.sleep(POLL)
    ran = sum(1 for node in NODES if metrics(node).get("gpucluster_health_last_run_timestamp_seconds", 0) > before[node])
    tooling = [metrics(node).get("gpucluster_health_tooling_faults", 0) for node in NODES]
    for node in NODES:
        sh(node, "python3", NODE_TOOL, "repair", "nvidia-smi-unusable")
    return {"fault": "tooling-everywhere", "what": "nvidia-smi unusable on every node at once", "node": "all",
            "detected": "tooling (%s checks per node)" % ",".join("%d" % t for t in tooling),
            "outcome": "drained %d of %d (nodes that ran: %d)" % (len(drains), len(NODES), ran),
            "to_drain": "-", "to_resume": "-"}


def healthy(runs: int, interval: int) -> Dict[str, object]:
    """Watch healthy nodes until the program ran ``runs`` times in all: false drains, run times."""
    last = {node: metrics(node).get("gpucluster_health_last_run_timestamp_seconds", 0) for node in NODES}
    seen, durations, drains = 0, [], set()
    limit = time.monotonic() + runs * interval + 60
    while seen < runs and time.monotonic() < limit:
        for node in NODES:
            series = metrics(node)
            stamp = series.get("gpucluster_health_last_run_timestamp_seconds", 0)
            if stamp > last[node]:
                last[node] = stamp
                seen += 1
                durations.append(series.get("gpucluster_health_run_duration_seconds", 0))
        drains |= {n for n, (state, _r) in slurm_states().items() if out_of_service(state)}
        time.sleep(POLL)
    return {"runs": seen, "false_drains": len(drains), "drained": sorted(drains),
            "run_median": round(statistics.median(durations), 2) if durations else None,
            "run_max": round(max(durations), 2) if durations else None}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--interval", type=int, default=10)
    parser.add_argument("--healthy-runs", type=int, default=50)
    parser.add_argument("--only", help="comma-separated fault names (default: all)")
    parser.add_argument("--out")
    args = parser.parse_args()
    wanted = set(args.only.split(",")) if args.only else None
    rows = []
    for index, (name, what, expect, limit) in enumerate(FAULTS):
        if wanted and name not in wanted:
            continue
        row = run_fault(name, what, expect, limit, WORKERS[index % len(WORKERS)])
        print(row, flush=True)
        rows.append(row)
    rows.append(tooling_everywhere(args.interval))
    print(rows[-1], flush=True)
    quiet = healthy(args.healthy_runs, args.interval)
    print(quiet, flush=True)
    lines = ["| fault | injected | node | detected by | outcome | s to drain | s to resume |", "|---|---|---|---|---|---|---|"]
    lines += ["| %(fault)s | %(what)s | %(node)s | %(detected)s | %(outcome)s | %(to_drain)s | %(to_resume)s |" % row for row in rows]
    lines += ["", "Healthy runs watched: %(runs)s; false drains: %(false_drains)s %(drained)s; the program's run time: "
              "median %(run_median)s s, max %(run_max)s s (Slurm kills it at 60 s)." % quiet,
              "HealthCheckInterval %d s, HealthCheckNodeState ANY,CYCLE; not injected: an XID in the kernel log "
              "(the containers share the host's kernel ring buffer)." % args.interval]
    table = "\n".join(lines) + "\n"
    print(table)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as handle:
            handle.write(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
