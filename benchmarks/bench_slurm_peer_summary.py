"""Summarize bench_slurm_peer.sh results: min / median / max per role and phase, ratios ours / peer.

Usage: bench_slurm_peer_summary.py RESULTS_TSV [LOG_DIR]
"""
from __future__ import annotations

import collections
import pathlib
import re
import statistics
import sys

RECAP = re.compile(r"^(\S+)\s+:\s+ok=(\d+)\s+changed=(\d+)\s+unreachable=\d+\s+failed=(\d+)\s+skipped=(\d+)")


def main(results: str, logs: str | None = None) -> int:
    rows = [line.rstrip("\n").split("\t") for line in open(results, encoding="utf-8") if line.strip()]
    times: dict[tuple[str, str], list[float]] = collections.defaultdict(list)
    nodes = ""
    bad = []
    for label, role, n, phase, value, rc in rows:
        nodes = n
        if phase == "check":
            if value != "OK":
                bad.append(f"{label}: check {value}")
            continue
        if rc != "0":
            bad.append(f"{label}: {phase} rc={rc}")
        times[(role, phase)].append(float(value))
    print(f"\nnodes: {nodes} (1 controller + {int(nodes) - 1} compute)")
    print(f"{'role':5} {'phase':9} {'n':>2} {'min':>7} {'median':>7} {'max':>7}")
    for role in ("ours", "peer"):
        for phase in ("converge", "rerun"):
            v = times.get((role, phase))
            if v:
                print(f"{role:5} {phase:9} {len(v):>2} {min(v):7.1f} {statistics.median(v):7.1f} {max(v):7.1f}")
    for phase, target in (("converge", 0.8), ("rerun", 0.6)):
        o, p = times.get(("ours", phase)), times.get(("peer", phase))
        if o and p:
            ratio = statistics.median(o) / statistics.median(p)
            print(f"ratio ours/peer {phase}: median {ratio:.2f} (min {min(o) / min(p):.2f}, "
                  f"max {max(o) / max(p):.2f}); target <= {target}")
    if logs:
        for log in sorted(pathlib.Path(logs).glob("*/rerun.log")):
            per = collections.Counter()
            for line in log.read_text(errors="replace").splitlines():
                m = RECAP.match(line)
                if m:
                    per[f"ok={m[2]} changed={m[3]} failed={m[4]} skipped={m[5]}"] += 1
            print(f"{log.parent.name:9} re-run recap: " + "; ".join(f"{k} x{c}" for k, c in per.items()))
    for line in bad:
        print("!!", line)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
