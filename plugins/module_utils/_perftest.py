# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parser for the stdout of the perftest tools (ib_write_bw, ib_read_lat, ib_send_bw ...).

Private module_utils of gpucluster.core: pure functions, no Ansible imports. Python 3.6
syntax, as it runs on the managed hosts.

Client or server side, bandwidth or latency. The parts read:

* the title line (``RDMA_Write BW Test``, ``Send Latency Test``) gives ``test`` and
  ``kind`` (``bw`` / ``lat``);
* the ``Key : value`` lines of the settings block (``Device : mlx5_0``,
  ``Link type : IB``, ``Mtu : 4096[B]``, two pairs per line in places) give ``settings``,
  with ``device``, ``link_type``, ``connection`` and ``mtu`` lifted out;
* the results header (``#bytes  #iterations  BW peak[MB/sec] ...`` or ``#bytes #iterations
  t_min[usec] ...``) names the columns: names may hold spaces (``BW peak[Gb/sec]``,
  ``99% percentile[usec]``) and end at their ``[unit]``. Columns are mapped by name, so old
  versions (no ``MsgRate``; latency with only ``t_min t_max t_typical``) and ``--duration``
  latency runs (only ``t_avg``) read the same way; unknown columns are kept under their
  normalised name;
* rows are the lines after the header whose first cell is an integer. Lines in between
  that are not rows (dashes, ``Conflicting CPU frequency values detected`` warnings, the
  ``Waiting for client`` banner, a second copy of the settings when client and server
  share one stream) are skipped; the warnings are listed in ``warnings``.

Units. perftest computes ``MB/sec`` as bytes / 0x100000 per second, that is MiB/s, and
``Gb/sec`` (``--report_gbits``) as bytes * 8 / 10^9 per second: ``print_report_bw`` in
src/perftest_resources.c sets ``format_factor = (report_fmt == MBS) ? 0x100000 :
125000000`` (the same in every version of the file we could read). ``bw_average_gbps`` and
``bw_peak_gbps`` therefore convert MB/sec with 1048576 * 8 / 10^9 (x 0.008388608) and take
Gb/sec as printed, so both read in Gbit/s (10^9), the unit link rates are sold in.

A failed run is reported in ``failures`` (``Couldn't connect``, ``Failed to ...``,
``Completion with error``); only output that cannot be read raises PerftestError.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # pylint: disable=invalid-name

import re
from typing import Any, Dict, List, Optional

from ansible_collections.gpucluster.core.plugins.module_utils._numbers import (
    leading_number as _num,  # '4096[B]' -> 4096
)
from ansible_collections.gpucluster.core.plugins.module_utils._tool_output import line_error, reported

_TITLE_RE = re.compile(r"^\s*(\S(?:.*\S)?)\s+(BW|Latency|Bandwidth) Test\s*$")
_PAIR_RE = re.compile(r"([A-Za-z][\w .*/-]*?)\s*:\s+(\S+)")
_RULE_RE = re.compile(r"^\s*-{10,}\s*$")
_FAILURE_RE = re.compile(
    r"Couldn't|Unable to|Failed to|failed to|Completion with error|Failed status|Error:|ERROR|error:"
)
_WARNING_RE = re.compile(r"Conflicting CPU frequency|Warning:|WARNING")
_UNIT_RE = re.compile(r"^(.*)\[([^\]]*)\]$")
_MIB_TO_GBIT = 1048576 * 8 / 1e9

# Column names (without their [unit]) -> row keys.
_BW_COLUMNS = {"BW peak": "bw_peak", "BW average": "bw_average", "MsgRate": "msg_rate_mpps"}
_LAT_COLUMNS = {
    "t_min": "t_min_us",
    "t_max": "t_max_us",
    "t_typical": "t_typical_us",
    "t_avg": "t_avg_us",
    "t_stdev": "t_stdev_us",
    "99% percentile": "p99_us",
    "99.9% percentile": "p999_us",
}
_BW_UNITS = ("MB/sec", "Gb/sec")


class PerftestError(Exception):
    """Raised when perftest output is empty, incomplete or not understood."""


def _key(name):
    # type: (str) -> str
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def _fail(number, line, why):
    # type: (int, str, str) -> Exception
    return line_error(PerftestError, number, line, why)


def _header_names(number, line):
    # type: (int, str) -> List[str]
    """' #bytes #iterations  BW peak[MB/sec] ...' -> ['#bytes', '#iterations', 'BW peak[MB/sec]', ...]."""
    names = []  # type: List[str]
    current = []  # type: List[str]
    for token in line.split():
        current.append(token)
        if token.startswith("#") and len(current) == 1 or token.endswith("]"):
            names.append(" ".join(current))
            current = []
    if current:
        raise _fail(number, line, "results header not understood (%r has no [unit])" % " ".join(current))
    return names


class _Header(object):
    def __init__(self, number, line):
        # type: (int, str) -> None
        self.number = number
        self.line = line.strip()
        self.names = _header_names(number, line)
        if self.names[:1] != ["#bytes"]:
            raise _fail(number, line, "results header not understood")
        self.keys = []  # type: List[str]
        self.bw_unit = None  # type: Optional[str]
        kinds = set()
        for name in self.names:
            match = _UNIT_RE.match(name)
            base, unit = (match.group(1), match.group(2)) if match else (name, None)
            if name == "#bytes":
                self.keys.append("size_bytes")
            elif name == "#iterations":
                self.keys.append("iterations")
            elif base in _BW_COLUMNS:
                key = _BW_COLUMNS[base]
                if key != "msg_rate_mpps":
                    if unit not in _BW_UNITS or self.bw_unit not in (None, unit):
                        raise _fail(number, line, "unknown or mixed bandwidth unit %r" % unit)
                    self.bw_unit = unit
                    kinds.add("bw")
                elif unit != "Mpps":
                    raise _fail(number, line, "unknown message rate unit %r" % unit)
                self.keys.append(key)
            elif base in _LAT_COLUMNS:
                if unit != "usec":
                    raise _fail(number, line, "unknown latency unit %r" % unit)
                self.keys.append(_LAT_COLUMNS[base])
                kinds.add("lat")
            else:
                self.keys.append(_key(name))
        if len(kinds) != 1 or len(set(self.keys)) != len(self.keys):
            raise _fail(number, line, "results header not understood")
        self.kind = kinds.pop()


def _row(header, number, line):
    # type: (_Header, int, str) -> Dict[str, Any]
    cells = line.split()
    if len(cells) != len(header.keys):
        raise PerftestError(
            "line %d has %d cells, the header at line %d needs %d (%s): %r"
            % (number, len(cells), header.number, len(header.keys), ", ".join(header.names), line.strip())
        )
    if header.kind == "bw":
        row = {"size_bytes": None, "iterations": None, "bw_peak": None, "bw_average": None, "msg_rate_mpps": None}
    else:
        row = {k: None for k in ["size_bytes", "iterations"] + sorted(_LAT_COLUMNS.values())}
    for name, key, cell in zip(header.names, header.keys, cells):
        if key in ("size_bytes", "iterations"):
            if not cell.isdigit():
                raise _fail(number, line, "%s %r is not a number" % (name, cell))
            row[key] = int(cell)
            continue
        try:
            row[key] = float(cell)
        except ValueError:
            raise _fail(number, line, "%s %r is not a number" % (name, cell))
    if header.kind == "bw":
        factor = _MIB_TO_GBIT if header.bw_unit == "MB/sec" else 1.0
        row["bw_peak_gbps"] = None if row["bw_peak"] is None else row["bw_peak"] * factor
        row["bw_average_gbps"] = None if row["bw_average"] is None else row["bw_average"] * factor
    return row


def parse_perftest(text):
    # type: (Optional[str]) -> Dict[str, Any]
    """Parse the stdout of one perftest run (ib_{write,read,send}_{bw,lat}); see the module docstring."""
    if not text or not text.strip():
        raise PerftestError("perftest output is empty")
    result = {
        "test": None,
        "kind": None,
        "device": None,
        "link_type": None,
        "connection": None,
        "mtu": None,
        "settings": {},
        "columns": [],
        "bw_unit": None,
        "rows": [],
        "peak_bw_average_gbps": None,
        "peak_size_bytes": None,
        "min_t_typical_us": None,
        "failures": [],
        "warnings": [],
    }  # type: Dict[str, Any]
    settings = result["settings"]  # type: Dict[str, str]
    header = None  # type: Optional[_Header]
    title_kind = None  # type: Optional[str]
    in_settings = False
    rows = result["rows"]  # type: List[Dict[str, Any]]

    for number, line in enumerate(text.replace("\r\n", "\n").replace("\r", "\n").split("\n"), 1):
        stripped = line.strip()
        if not stripped:
            continue
        if _WARNING_RE.search(line):
            result["warnings"].append(stripped)
            continue
        if _FAILURE_RE.search(line):
            result["failures"].append(stripped)
            continue
        match = _TITLE_RE.match(line)
        if match and not stripped.startswith("#"):
            title = "%s %s Test" % (match.group(1), match.group(2))
            if result["test"] not in (None, title):
                raise _fail(number, line, "a second, different test (the first is %r)" % result["test"])
            result["test"] = title
            title_kind = "lat" if match.group(2) == "Latency" else "bw"
            in_settings = True
            continue
        if _RULE_RE.match(line):
            in_settings = False
            continue
        if stripped.startswith("#bytes"):
            current = _Header(number, line)
            if header is not None and current.names != header.names:
                raise _fail(number, line, "a second, different results header (the first is at line %d)"
                            % header.number)
            header = header or current
            in_settings = False
            continue
        if in_settings:
            for key, value in _PAIR_RE.findall(stripped):
                settings.setdefault(_key(key), value)
            continue
        tokens = stripped.split()
        if header is None or not tokens[0].isdigit():
            continue
        rows.append(_row(header, number, line))

    if header is None:
        raise PerftestError("perftest output has no results header ('#bytes  #iterations ...')"
                            + reported(result["failures"]))
    if not rows:
        raise PerftestError("perftest output has a results header (line %d) but no data rows" % header.number
                            + reported(result["failures"]))
    if title_kind is not None and title_kind != header.kind:
        raise PerftestError("the results header (line %d) is for a %s test, the title says %r"
                            % (header.number, header.kind, result["test"]))
    result["kind"] = header.kind
    result["columns"] = list(header.names)
    result["bw_unit"] = header.bw_unit
    result["device"] = settings.get("device")
    result["link_type"] = settings.get("link_type")
    result["connection"] = settings.get("connection_type")
    result["mtu"] = _num(settings.get("mtu"))
    if header.kind == "bw":
        best = None  # type: Optional[Dict[str, Any]]
        for row in rows:
            if row["bw_average_gbps"] is not None and (best is None or row["bw_average_gbps"] > best["bw_average_gbps"]):
                best = row
        if best is not None:
            result["peak_bw_average_gbps"] = best["bw_average_gbps"]
            result["peak_size_bytes"] = best["size_bytes"]
    else:
        typical = [row["t_typical_us"] for row in rows if row["t_typical_us"] is not None]
        result["min_t_typical_us"] = min(typical) if typical else None
    return result
