# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Benchmark nvidia_smi_facts on the real 8x Tesla V100S capture.

Runs the module's gather() with a counting stub of run_command that returns the real
capture (shared/fixtures/nvidia-smi-xml/8x-tesla-v100s-pcie-32gb-driver460-v11.xml, plus
the real 8x H100 topo -m capture for the topology run) and prints the parse time per run
and the number of nvidia-smi calls per run. Targets: < 50 ms, <= 2 calls.

    PYTHONPATH=.venv/collections .venv/bin/python benchmarks/bench_nvidia_smi_facts.py
"""

from __future__ import annotations

import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
SHARED = os.path.normpath(os.path.join(ROOT, "..", "shared", "fixtures"))
XML = os.path.join(SHARED, "nvidia-smi-xml", "8x-tesla-v100s-pcie-32gb-driver460-v11.xml")
TOPO = os.path.join(SHARED, "nvidia-smi-topo", "h100-8gpu-nv18-ht-cpu-affinity-spaces-expanded.txt")
TARGET_MS = 50.0
MAX_CALLS = 2


def _import_module():
    try:
        from ansible_collections.gpucluster.core.plugins.modules import nvidia_smi_facts
    except ImportError:
        sys.path.insert(0, os.path.join(ROOT, ".venv", "collections"))
        from ansible_collections.gpucluster.core.plugins.modules import nvidia_smi_facts
    return nvidia_smi_facts


class StubModule:
    """Just enough of AnsibleModule for gather(): params, get_bin_path, counting run_command."""

    def __init__(self, topology, xml, topo):
        self.params = {"nvidia_smi_path": None, "topology": topology, "fail_on_missing": False}
        self.calls = 0
        self._xml, self._topo = xml, topo

    def get_bin_path(self, name, required=False, opt_dirs=None):  # pylint: disable=unused-argument
        return "/usr/bin/nvidia-smi"

    def run_command(self, args, **kwargs):  # pylint: disable=unused-argument
        self.calls += 1
        return 0, (self._topo if "topo" in args else self._xml), ""


def bench(mod, topology, xml, topo, runs):
    times, calls = [], set()
    mod.gather(StubModule(topology, xml, topo), "/nonexistent-sysfs")  # warm-up, not timed
    for dummy in range(runs):  # pylint: disable=unused-variable
        stub = StubModule(topology, xml, topo)
        start = time.perf_counter()
        facts, error = mod.gather(stub, "/nonexistent-sysfs")
        times.append((time.perf_counter() - start) * 1000.0)
        if error or facts["gpu_count"] != 8:
            raise SystemExit("unexpected result: %s" % (error or facts["gpu_count"]))
        calls.add(stub.calls)
    return statistics.median(times), max(times), max(calls)


def main():
    mod = _import_module()
    with open(XML, encoding="utf-8") as handle:
        xml = handle.read()
    with open(TOPO, encoding="utf-8") as handle:
        topo = handle.read()
    runs = int(os.environ.get("BENCH_RUNS", "50"))
    ok = True
    print("capture: %s (%d bytes), %d runs" % (os.path.basename(XML), len(xml), runs))
    for topology in (False, True):
        median, worst, calls = bench(mod, topology, xml, topo, runs)
        ok = ok and median < TARGET_MS and calls <= MAX_CALLS
        print("topology=%-5s parse median %.2f ms, max %.2f ms (target < %.0f ms); nvidia-smi calls per run: %d (max %d)"
              % (topology, median, worst, TARGET_MS, calls, MAX_CALLS))
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
