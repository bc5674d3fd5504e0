# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parser for the stdout of the NVIDIA nccl-tests binaries (all_reduce_perf, sendrecv_perf ...).

Private module_utils of gpucluster.core: pure functions, no Ansible imports. Python 3.6
syntax, as it runs on the managed hosts.

The results table is read by structure, never by fixed positions:

* the header line (``#  size  count  type  redop  root  time  algbw  busbw  #wrong ...``)
  names the columns. Its set differs between nccl-tests versions: old ones have no
  ``root`` (or, for broadcast/reduce, ``root`` and no ``redop``), all_gather/alltoall of
  some old versions neither; they call the check column ``error`` (the largest difference
  found, a float) where newer ones print ``#wrong`` (a count of wrong elements, ``%g``
  formatted, so large counts read ``1.04858e+06``); ``-R``/per-iteration runs add
  ``i_min i_max i_p99 i_cv%`` to each half; timestamps add a last ``timestamp`` column;
  ``-C`` prints ``cputime`` for ``time``.
* the units line that must follow it (``#  (B)  (elements)  (us)  (GB/s) ...``) gives
  the units of the columns that have one; times are converted to microseconds and
  bandwidths to GB/s (10^9 bytes/s, as nccl-tests computes them).
* rows are the lines whose first cell is an integer (the size). Old versions leave the
  ``redop``/``root`` cells of collectives without them blank (no cell at all), newer ones
  print ``none`` / ``-1``; a blank cell is reported as None.

Lines that are neither (NCCL_DEBUG=INFO log lines, MPI/ssh/srun chatter) are skipped, also
between rows. ``mpirun --tag-output`` (``[1,0]<stdout>:``) and ``srun -l`` (``0: ``) line
prefixes are removed first. A failed test (``Test NCCL failure`` / ``Test failure`` lines,
rows with a non-zero #wrong, an ``Out of bounds values : N FAILED`` summary) is not a parse
error: those lines are listed in ``failures`` for the caller to judge. ``complete`` says
whether the summary lines were printed (a run that died mid-table has none).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # pylint: disable=invalid-name

import math
import re
from typing import Any, Dict, List, Optional, Tuple

from ansible_collections.gpucluster.core.plugins.module_utils._tool_output import line_error, reported

# Launcher prefixes: mpirun --tag-output "[1,0]<stdout>:", srun -l "0: " / " 12: ".
_PREFIX_RE = re.compile(r"^(?:\[\d+,\d+\]<std(?:out|err)>:|\s*\d+: )")
_DEVICE_RE = re.compile(
    r"^#\s*Rank\s+(\d+)\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s+(\S+)\s+device\s+(\d+)\s+\[([^\]]*)\]\s*(.*?)\s*$"
)
_VERSION_RE = re.compile(
    r"^#\s*nccl-tests version\s+(\S+)(?:\s+\(([0-9a-f]+)\))?(?:.*?\bnccl-headers=(\d+))?(?:.*?\bnccl-library=(\d+))?"
)
_STARTING_RE = re.compile(r"^#\s*Collective test (?:starting|concluded):\s*(\S+)")
_NCCL_LIB_RE = re.compile(r"\bNCCL version (\d+\.\d+\.\d+)")
_OOB_RE = re.compile(r"^#\s*Out of bounds values\s*:\s*(\d+)\s*(\S*)")
_AVG_RE = re.compile(r"^#\s*Avg bus bandwidth\s*:\s*(\S+)\s*(\S*)")
_FAILURE_RE = re.compile(r"Test (?:NCCL |CUDA )?failure|Cuda failure")
_SETTINGS_RES = (
    ("nthreads", re.compile(r"\bnThreads?:?\s+(\d+)")),
    ("ngpus", re.compile(r"\bnGpus:?\s+(\d+)")),
    ("min_bytes", re.compile(r"\bminBytes:?\s+(\d+)")),
    ("max_bytes", re.compile(r"\bmaxBytes:?\s+(\d+)")),
    ("step", re.compile(r"\bstep:\s+(\S+)")),
    ("warmup_iters", re.compile(r"\bwarmup iters:\s+(\d+)")),
    ("iters", re.compile(r"(?<!warmup )(?<!agg )\biters:\s+(\d+)")),
    ("agg_iters", re.compile(r"\bagg iters:\s+(\d+)")),
    ("validation", re.compile(r"\bvalidation:\s+(\d+)")),
    ("graph", re.compile(r"\bgraph:\s+(\d+)")),
    ("unalign", re.compile(r"\bunalign:\s+(\d+)")),
)
_TYPE_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_INT_RE = re.compile(r"^-?\d+$")

# Columns of one half (out-of-place / in-place), in the order nccl-tests prints them.
_TIME = ("time", "cputime")
_HALF_COLUMNS = ("time", "algbw", "busbw", "check", "i_min", "i_max", "i_p99", "i_cv%")
# What may stand between 'type' and the first time column (old versions lack root, or redop, or both).
_OPTIONAL_SETS = ([], ["redop"], ["root"], ["redop", "root"])
_BLANKABLE = ("redop", "root")
# Columns that carry a unit in the units line, and the units they may have.
_TIME_UNITS = {"us": 1.0, "ms": 1000.0, "s": 1000000.0}
_BW_UNITS = {"GB/s": 1.0, "MB/s": 0.001, "GiB/s": 1.073741824, "MiB/s": 0.001048576}


class NcclTestsError(Exception):
    """Raised when nccl-tests output is empty, incomplete or not understood."""


def _fail(number, line, why):
    # type: (int, str, str) -> Exception
    return line_error(NcclTestsError, number, line, why)


def _nccl_code(code):
    # type: (Optional[str]) -> Optional[str]
    """NCCL_VERSION_CODE -> 'major.minor.patch' (22902 -> 2.29.2, 2708 -> 2.7.8)."""
    if not code:
        return None
    value = int(code)
    if value >= 10000:
        return "%d.%d.%d" % (value // 10000, (value % 10000) // 100, value % 100)
    return "%d.%d.%d" % (value // 1000, (value % 1000) // 100, value % 100)


def _number(text):
    # type: (str) -> Optional[float]
    """'12.5', '1.0e+07', '-nan' -> float; anything else -> None."""
    try:
        return float(text)
    except ValueError:
        return None


class _Header(object):
    """The column layout one header line (and its units line) describe."""

    def __init__(self, number, names):
        # type: (int, List[str]) -> None
        self.number = number
        self.names = names
        first_time = next((i for i, n in enumerate(names) if n in _TIME), None)
        if first_time is None or names[:3] != ["size", "count", "type"] or names[3:first_time] not in _OPTIONAL_SETS:
            raise NcclTestsError("line %d: results header not understood: %s" % (number, " ".join(names)))
        self.prefix = names[:first_time]
        rest = names[first_time:]
        self.timestamp = bool(rest) and rest[-1] == "timestamp"
        if self.timestamp:
            rest = rest[:-1]
        half = len(rest) // 2
        self.half = [self._half_name(n) for n in rest[:half]]
        if (
            len(rest) % 2
            or [self._half_name(n) for n in rest[half:]] != self.half
            or self.half[:4] != ["time", "algbw", "busbw", "check"]
            or any(n not in _HALF_COLUMNS for n in self.half)
        ):
            raise NcclTestsError("line %d: results header not understood: %s" % (number, " ".join(names)))
        self.check = rest[3]  # '#wrong' (count) or 'error' (largest difference, old versions)
        self.time_unit = "us"
        self.bw_unit = "GB/s"

    @staticmethod
    def _half_name(name):
        # type: (str) -> str
        if name in _TIME:
            return "time"
        if name in ("#wrong", "error"):
            return "check"
        return name

    def unit_columns(self):
        # type: () -> List[str]
        """The columns the units line gives a unit for, in order."""
        units = [n for n in self.prefix if n in ("size", "count")]
        units += [n for n in self.half if n != "check"] * 2
        return units

    def cell_range(self):
        # type: () -> Tuple[int, int]
        fixed = 2 * len(self.half) + (2 if self.timestamp else 0)
        blank = len([n for n in self.prefix if n in _BLANKABLE])
        return len(self.prefix) - blank + fixed, len(self.prefix) + fixed


def _read_units(header, number, line):
    # type: (_Header, int, str) -> None
    units = re.findall(r"\(([^)]*)\)", line)
    wanted = header.unit_columns()
    if len(units) != len(wanted):
        raise NcclTestsError(
            "line %d: the units line has %d units, the header at line %d needs %d: %r"
            % (number, len(units), header.number, len(wanted), line.strip())
        )
    times = set()
    bws = set()
    for column, unit in zip(wanted, units):
        if column == "size" and unit != "B" or column == "count" and unit != "elements":
            raise NcclTestsError("line %d: unknown unit %r for %s in the units line" % (number, unit, column))
        if column in ("time", "i_min", "i_max", "i_p99"):
            if unit not in _TIME_UNITS:
                raise NcclTestsError("line %d: unknown unit %r for %s in the units line" % (number, unit, column))
            times.add(unit)
        if column in ("algbw", "busbw"):
            if unit not in _BW_UNITS:
                raise NcclTestsError("line %d: unknown unit %r for %s in the units line" % (number, unit, column))
            bws.add(unit)
        if column == "i_cv%" and unit != "%":
            raise NcclTestsError("line %d: unknown unit %r for %s in the units line" % (number, unit, column))
    if len(times) > 1 or len(bws) > 1:
        raise NcclTestsError("line %d: mixed units in the units line: %r" % (number, line.strip()))
    header.time_unit = times.pop()
    header.bw_unit = bws.pop()


def _half(header, cells, half_name, number, line):
    # type: (_Header, List[str], str, int, str) -> Dict[str, Any]
    out = {"time_us": None, "algbw_gbs": None, "busbw_gbs": None, "wrong": None, "error": None}  # type: Dict[str, Any]
    time_factor = _TIME_UNITS[header.time_unit]
    bw_factor = _BW_UNITS[header.bw_unit]
    for name, cell in zip(header.half, cells):
        label = "%s (%s)" % (header.check if name == "check" else name, half_name)
        if name == "check":
            if cell == "N/A":
                continue
            value = _number(cell.rstrip("*"))
            if value is None or math.isnan(value):
                raise _fail(number, line, "%s %r is not a number" % (label, cell))
            if header.check == "error":
                out["error"] = value
            else:
                out["wrong"] = int(round(value))
            continue
        value = _number(cell)
        if value is None:
            raise _fail(number, line, "%s %r is not a number" % (label, cell))
        if name == "time":
            out["time_us"] = value * time_factor
        elif name in ("algbw", "busbw"):
            out[name + "_gbs"] = value * bw_factor
        elif name == "i_cv%":
            out["i_cv_pct"] = value
        else:
            out[name + "_us"] = value * time_factor
    return out


def _row(header, number, line, tokens):
    # type: (_Header, int, str, List[str]) -> Dict[str, Any]
    low, high = header.cell_range()
    if not low <= len(tokens) <= high:
        need = "%d" % high if low == high else "%d to %d" % (low, high)
        raise NcclTestsError(
            "line %d has %d cells, the header at line %d needs %s (%s): %r"
            % (number, len(tokens), header.number, need, " ".join(header.names), line.strip())
        )
    tail = 2 * len(header.half) + (2 if header.timestamp else 0)
    lead, rest = tokens[: len(tokens) - tail], tokens[len(tokens) - tail:]
    row = {"size_bytes": None, "count": None, "type": None, "redop": None, "root": None}  # type: Dict[str, Any]
    for name, cell in zip(("size", "count"), lead[:2]):
        if not cell.isdigit():
            raise _fail(number, line, "%s %r is not a number" % (name, cell))
    row["size_bytes"] = int(lead[0])
    row["count"] = int(lead[1])
    if not _TYPE_RE.match(lead[2]):
        raise _fail(number, line, "type %r is not a data type name" % lead[2])
    row["type"] = lead[2]
    optional = header.prefix[3:]
    extra = lead[3:]
    if len(extra) == len(optional):
        pairs = list(zip(optional, extra))
    else:  # some blank cells: an integer is the root, a word the reduction op
        pairs = []
        for cell in extra:
            name = "root" if _INT_RE.match(cell) else "redop"
            if name not in optional or any(p[0] == name for p in pairs):
                raise _fail(number, line, "cell %r does not fit the header at line %d" % (cell, header.number))
            pairs.append((name, cell))
    for name, cell in pairs:
        if name == "root":
            if not _INT_RE.match(cell):
                raise _fail(number, line, "root %r is not a number" % cell)
            row["root"] = int(cell)
        else:
            if not _TYPE_RE.match(cell):
                raise _fail(number, line, "redop %r is not a reduction name" % cell)
            row["redop"] = cell
    size = len(header.half)
    row["out_of_place"] = _half(header, rest[:size], "out-of-place", number, line)
    row["in_place"] = _half(header, rest[size: 2 * size], "in-place", number, line)
    if header.timestamp:
        row["timestamp"] = " ".join(rest[2 * size:])
    return row


def _is_row(tokens):
    # type: (List[str]) -> bool
    """A results row starts with the size; a second integer (the count) follows unless cut."""
    return bool(tokens) and tokens[0].isdigit() and (len(tokens) == 1 or tokens[1].isdigit())


def parse_nccl_tests(text):
    # type: (Optional[str]) -> Dict[str, Any]
    """Parse the stdout (or stdout+stderr) of one nccl-tests run; see the module docstring."""
    if not text or not text.strip():
        raise NcclTestsError("nccl-tests output is empty")
    result = {
        "test": None,
        "version": None,
        "nccl_version": None,
        "settings": {},
        "nranks": None,
        "devices": [],
        "columns": [],
        "units": {},
        "rows": [],
        "avg_busbw_gbs": None,
        "out_of_bounds": None,
        "peak_busbw_gbs": None,
        "peak_size_bytes": None,
        "wrong_total": None,
        "failures": [],
        "complete": False,
    }  # type: Dict[str, Any]
    failures = result["failures"]  # type: List[str]
    header = None  # type: Optional[_Header]
    units_done = False
    summary_line = None  # type: Optional[int]
    rows = result["rows"]  # type: List[Dict[str, Any]]

    for number, raw in enumerate(text.replace("\r\n", "\n").replace("\r", "\n").split("\n"), 1):
        line = _PREFIX_RE.sub("", raw, count=1)
        stripped = line.strip()
        if not stripped:
            continue
        if _FAILURE_RE.search(line):
            failures.append(stripped)
            continue
        match = _NCCL_LIB_RE.search(line)
        if match and not stripped.startswith("#") and result["nccl_version"] is None:
            result["nccl_version"] = match.group(1)
        tokens = stripped.split()
        if stripped.startswith("#"):
            cells = stripped[1:].split()
            if cells[:2] == ["size", "count"]:
                if header is not None:
                    raise NcclTestsError(
                        "line %d: a second results header (the first is at line %d; one run per output)"
                        % (number, header.number)
                    )
                header = _Header(number, cells)
                continue
            if header is not None and not units_done:
                if not cells or not cells[0].startswith("("):
                    raise NcclTestsError(
                        "line %d: expected the units line ('#  (B)  (elements) ...') after the header at line %d: %r"
                        % (number, header.number, stripped)
                    )
                _read_units(header, number, stripped)
                units_done = True
                continue
            _comment(result, number, stripped, failures)
            if _OOB_RE.match(stripped):
                summary_line = number
            continue
        if header is None or not _is_row(tokens):
            continue  # log lines of NCCL, MPI, ssh ... and anything before the table
        if not units_done:
            raise NcclTestsError(
                "line %d: expected the units line ('#  (B)  (elements) ...') after the header at line %d: %r"
                % (number, header.number, stripped)
            )
        if summary_line is not None:
            raise _fail(number, line, "data row after the summary at line %d" % summary_line)
        row = _row(header, number, line, tokens)
        rows.append(row)
        if any(row[h]["wrong"] for h in ("out_of_place", "in_place")):
            failures.append(stripped)

    if header is None:
        raise NcclTestsError("nccl-tests output has no results header ('#  size  count  type ...')" + reported(failures))
    if not units_done:
        raise NcclTestsError(
            "expected the units line ('#  (B)  (elements) ...') after the header at line %d, got the end of the output"
            % header.number
        )
    if not rows:
        raise NcclTestsError(
            "nccl-tests output has a results header (line %d) but no data rows" % header.number + reported(failures)
        )
    result["columns"] = list(header.names)
    result["units"] = {"size": "B", "count": "elements", "time": header.time_unit, "bw": header.bw_unit}
    result["nranks"] = len(result["devices"]) or None
    result["complete"] = result["out_of_bounds"] is not None and result["avg_busbw_gbs"] is not None
    if result["avg_busbw_gbs"] is not None:
        result["avg_busbw_gbs"] *= _BW_UNITS[header.bw_unit]
    peak = None  # type: Optional[Dict[str, Any]]
    for row in rows:
        busbw = row["out_of_place"]["busbw_gbs"]
        if busbw is not None and not math.isnan(busbw) and (peak is None or busbw > peak["out_of_place"]["busbw_gbs"]):
            peak = row
    if peak is not None:
        result["peak_busbw_gbs"] = peak["out_of_place"]["busbw_gbs"]
        result["peak_size_bytes"] = peak["size_bytes"]
    wrongs = [row[h]["wrong"] for row in rows for h in ("out_of_place", "in_place") if row[h]["wrong"] is not None]
    result["wrong_total"] = sum(wrongs) if wrongs else None
    return result


def _comment(result, number, line, failures):
    # type: (Dict[str, Any], int, str, List[str]) -> None
    """A '#' line outside the header: device list, version, settings and summary lines."""
    match = _DEVICE_RE.match(line)
    if match:
        result["devices"].append({
            "rank": int(match.group(1)),
            "host": match.group(2),
            "device": int(match.group(3)),
            "bus_id": match.group(4),
            "name": match.group(5) or None,
        })
        return
    match = _VERSION_RE.match(line)
    if match:
        result["version"] = match.group(1)
        if match.group(4):
            result["nccl_version"] = _nccl_code(match.group(4))
        return
    match = _STARTING_RE.match(line)
    if match:
        result["test"] = result["test"] or match.group(1)
        return
    match = _OOB_RE.match(line)
    if match:
        result["out_of_bounds"] = int(match.group(1))
        if match.group(2) == "FAILED" or int(match.group(1)):
            failures.append(line)
        return
    match = _AVG_RE.match(line)
    if match:
        value = _number(match.group(1))
        if value is None:
            raise _fail(number, line, "average bus bandwidth %r is not a number" % match.group(1))
        result["avg_busbw_gbs"] = value
        if match.group(2) == "FAILED":
            failures.append(line)
        return
    if re.match(r"^#\s*nThreads?\b", line):
        for key, regex in _SETTINGS_RES:
            found = regex.search(line)
            if found:
                value = found.group(1)
                result["settings"][key] = int(value) if value.isdigit() else value
