# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Each play's wall time, one TSV line per play (benchmarks/bench_controller_scale.sh)."""

from __future__ import annotations

import os
import time

from ansible.plugins.callback import CallbackBase

DOCUMENTATION = r"""
name: bench_play_times
type: aggregate
short_description: each play's seconds into $BENCH_TIMES_FILE (step, hosts, seconds)
description:
  - For benchmarks/bench_controller_scale.sh only; not part of the collection.
requirements:
  - enabled in the benchmark's generated ansible.cfg
"""


class CallbackModule(CallbackBase):
    """Writes ``<play name>\\t<BENCH_HOSTS>\\t<seconds>`` per play."""

    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "bench_play_times"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self):
        super().__init__()
        self._play = None
        self._start = 0.0

    def _close(self):
        path = os.environ.get("BENCH_TIMES_FILE")
        if self._play is None or not path:
            return
        with open(path, "a", encoding="utf-8") as handle:
            handle.write("%s\t%s\t%.3f\n" % (self._play, os.environ.get("BENCH_HOSTS", ""), time.monotonic() - self._start))
        self._play = None

    def v2_playbook_on_play_start(self, play):
        self._close()
        self._play = play.get_name().strip()
        self._start = time.monotonic()

    def v2_playbook_on_stats(self, stats):
        self._close()
