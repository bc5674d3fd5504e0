# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parser for NVIDIA DCGM ``dcgmi diag`` output: the result table and the ``-j`` JSON.

Private module_utils of gpucluster.core: pure functions, Python 3.6 syntax, as it runs on
the managed hosts.

The table (every DCGM version prints the same box, 27 + 48 characters wide so far, but the
widths are read from the top border, not assumed)::

    Successfully ran diagnostic for group.
    +---------------------------+------------------------------------------------+
    | Diagnostic                | Result                                         |
    +===========================+================================================+
    |-----  Metadata  ----------+------------------------------------------------|   (3.x, 4.x)
    | DCGM Version              | 3.3.3                                          |
    |-----  Deployment  --------+------------------------------------------------|
    | Persistence Mode          | Fail                                           |
    | Error                     | Persistence mode for GPU 0 is currently disab  |   (45 characters
    |                           | led. ...                                       |    a line, cut
    +-----  Hardware  ----------+------------------------------------------------+    mid-word)
    | GPU Memory                | Pass - GPUs: 1, 2, 3                           |   (2.x, 3.x)
    |                           | Fail - GPU: 0                                  |
    | memory                    | Pass                                           |   (4.x)
    |                           | GPU0: Pass                                     |
    +---------------------------+------------------------------------------------+

The JSON: ``{"DCGM GPU Diagnostic": {"test_categories": [...], "version": ...}}`` in DCGM 2.x
and 3.x (results carry ``gpu_ids`` or ``gpu_id``; ``warnings``/``info`` are strings in 2.x,
lists in 3.x; DCGM 3.1 leaves ``null`` entries in ``tests``) and ``{"DCGM Diagnostic":
{"test_categories": [...]}, "entity_groups": [...], "metadata": {"version": ...}}`` in DCGM 4.x
(results carry ``entity_group``/``entity_id``, each test a ``test_summary``).

:func:`parse_dcgmi_diag` returns::

    {"format": "table" | "json", "dcgm_version": str | None, "driver_version": str | None,
     "gpu_device_ids": [str], "level": None (neither format prints the run level),
     "tests": [{"category", "name", "result", "gpus": {gpu_index: result}, "all_gpus": bool,
                "messages": [str], "warnings": [str]}],
     "errors": [str], "overall": "pass" | "warn" | "fail", "failed": ["category/name"],
     "warned": ["category/name"]}

``result`` is one of pass, fail, warn, skip, not run. ``messages`` holds every Error,
Warning and Info text of the test (wrapped lines joined back), ``warnings`` the Error and
Warning ones. ``all_gpus`` is True for "Pass - All"-style results (the table names no GPU).
``errors`` holds Error/Warning rows printed in a section before any test. ``overall`` is
fail when a test failed or ``errors`` is not empty, warn when a test warned, else pass
(skipped tests do not count).

Anything else raises :class:`DcgmiError`: empty output, dcgmi's own ``Error: ...`` lines
(unreachable host engine, unsupported GPU, ...) quoted verbatim, a JSON ``runtime_error``,
malformed JSON, text that is neither format, a result row without a known result, a table
without its closing border, text after it, a table or document without any test.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # pylint: disable=invalid-name

import json
import re
from typing import Any, Dict, List, Optional, Set, Tuple

BANNER = "Successfully ran diagnostic for group."
RESULTS = ("pass", "fail", "warn", "skip", "not run")
# Worst first: the result of a test from its per-GPU results.
_RANK = {"fail": 4, "warn": 3, "pass": 2, "skip": 1, "not run": 0}

_WORD = r"(Pass|Fail|Warn|Skip|Not Run)"
_BORDER_RE = re.compile(r"^\+(-+)\+(-+)\+$")
_RULE_RE = re.compile(r"^\+(=+)\+(=+)\+$")
# "|-----  Deployment  --------+-----...-----|" and "+-----  Hardware  ----------+-----...-----+"
_SECTION_RE = re.compile(r"^[+|]-{2,}\s+(\S(?:.*?\S)?)\s+-+\+-+[+|]$")
_PLAIN_RE = re.compile(r"^%s$" % _WORD)
_ALL_RE = re.compile(r"^%s - All$" % _WORD)
_SOME_RE = re.compile(r"^%s - GPUs?: *(\d+(?: *, *\d+)*)$" % _WORD)
_GPU_ROW_RE = re.compile(r"^GPU(\d+): *%s$" % _WORD)
_CODE_RE = re.compile(r"^Code: \(\d+\)$")  # DCGM 2.x/3.x: "Warn - All" of the Diagnostic test
_LABELS = {"Error": True, "Warning": True, "Info": False}  # label -> is a warning
_JSON_KEYS = ("DCGM GPU Diagnostic", "DCGM Diagnostic")  # DCGM 2.x/3.x, DCGM 4.x


class DcgmiError(Exception):
    """Raised when dcgmi diag output reports an error instead of results, or is not understood."""


def _fail_line(number, line, why):
    # type: (int, str, str) -> DcgmiError
    return DcgmiError("dcgmi diag output not understood at line %d: %s: %r" % (number, why, line.strip()))


def _norm(word):
    # type: (Any) -> Optional[str]
    """'Pass', 'PASS', 'Not Run', 'not_run' -> 'pass', 'not run'; None when not a result word."""
    if not isinstance(word, str):
        return None
    value = re.sub(r"[\s_]+", " ", word.strip().lower())
    return value if value in _RANK else None


def _worst(results):
    # type: (List[str]) -> str
    return max(results, key=lambda r: _RANK[r])


def _new_test(category, name, result):
    # type: (str, str, str) -> Dict[str, Any]
    return {
        "category": category,
        "name": name,
        "result": result,
        "gpus": {},
        "all_gpus": False,
        "messages": [],
        "warnings": [],
    }


def _summary(fmt, tests, errors, dcgm_version, driver_version, device_ids):
    # type: (str, List[Dict[str, Any]], List[str], Optional[str], Optional[str], List[str]) -> Dict[str, Any]
    failed = ["%s/%s" % (t["category"], t["name"]) for t in tests if t["result"] == "fail"]
    warned = ["%s/%s" % (t["category"], t["name"]) for t in tests if t["result"] == "warn"]
    if failed or errors:
        overall = "fail"
    elif warned:
        overall = "warn"
    else:
        overall = "pass"
    return {
        "format": fmt,
        "dcgm_version": dcgm_version,
        "driver_version": driver_version,
        "gpu_device_ids": device_ids,
        "level": None,
        "tests": tests,
        "errors": errors,
        "overall": overall,
        "failed": failed,
        "warned": warned,
    }


def parse_dcgmi_diag(text):
    # type: (str) -> Dict[str, Any]
    """Parse ``dcgmi diag -r N`` (table) or ``dcgmi diag -r N -j`` (JSON) output (see module docs)."""
    text = (text or "").replace("\r\n", "\n").replace("\r", "\n")
    if not text.strip():
        raise DcgmiError("dcgmi diag output is empty")
    # dcgmi prints its own failures ("Error: unable to establish a connection to the specified
    # host: localhost", "Error: Unable to connect to host engine. ...") on stdout, alone or
    # before an empty document: they are the answer, whatever else is there.
    errors = [line.strip() for line in text.split("\n") if line.strip().startswith("Error:")]
    if errors:
        raise DcgmiError("dcgmi reported an error instead of results: %s" % " / ".join(errors))
    if text.lstrip().startswith("{"):
        return _parse_json(text)
    return _parse_table(text)


# --- table ---------------------------------------------------------------------------------


def _cells(line, first_width):
    # type: (str, int) -> Optional[Tuple[str, str]]
    """'| name | value |' -> (name cell, value cell), split where the borders put the column."""
    row = line.strip()
    if len(row) < first_width + 3 or row[0] != "|" or row[-1] != "|" or row[first_width + 1] != "|":
        return None
    return row[1:first_width + 1], row[first_width + 2:-1]


def _continued_gpus(value):
    # type: (str) -> Dict[int, str]
    """'GPU0: Pass' (4.x) or 'Fail - GPU: 0' / 'Skip - GPUs: 1, 2' (2.x, 3.x) -> {gpu: result}."""
    match = _GPU_ROW_RE.match(value)
    if match:
        return {int(match.group(1)): _norm(match.group(2)) or ""}
    match = _SOME_RE.match(value)
    if match:
        return dict((int(gpu), _norm(match.group(1)) or "") for gpu in match.group(2).split(","))
    return {}


def _parse_table(text):
    # type: (str) -> Dict[str, Any]
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # the newline that ends the last line
    index = 0
    while index < len(lines) and lines[index].strip() in ("", BANNER):
        index += 1
    if index == len(lines):
        raise DcgmiError("dcgmi diag output is incomplete: no result table after line %d" % len(lines))
    border = _BORDER_RE.match(lines[index].strip())
    if border is None:
        raise _fail_line(
            index + 1, lines[index],
            "expected the result table (its '+----+----+' top border) or a JSON document",
        )
    first_width, second_width = len(border.group(1)), len(border.group(2))
    chunk = second_width - 3  # dcgmi cuts messages into 45-character pieces: '| ' piece pad ' |'

    header_at, rule_at = index + 1, index + 2
    if rule_at >= len(lines):
        raise DcgmiError("dcgmi diag output is incomplete: the result table ends at line %d" % len(lines))
    header = _cells(lines[header_at], first_width)
    if header is None or (header[0].strip(), header[1].strip()) != ("Diagnostic", "Result"):
        raise _fail_line(header_at + 1, lines[header_at], "expected the header row '| Diagnostic | Result |'")
    if not _RULE_RE.match(lines[rule_at].strip()):
        raise _fail_line(rule_at + 1, lines[rule_at], "expected the '+====+====+' rule under the header")

    metadata = {}  # type: Dict[str, str]
    tests = []  # type: List[Dict[str, Any]]
    errors = []  # type: List[str]
    # Each message: [test or None, is_warning, [pieces]], joined once the table is read.
    messages = []  # type: List[List[Any]]
    category = None  # type: Optional[str]
    test = None  # type: Optional[Dict[str, Any]]
    message = None  # type: Optional[List[Any]]
    partial = set()  # type: Set[int]
    closed_at = None  # type: Optional[int]

    for index in range(rule_at + 1, len(lines)):
        number, line = index + 1, lines[index]
        stripped = line.strip()
        if _BORDER_RE.match(stripped):
            closed_at = index
            break
        section = _SECTION_RE.match(stripped)
        if section:
            category, test, message = section.group(1), None, None
            continue
        cells = _cells(line, first_width)
        if cells is None:
            raise _fail_line(number, line, "expected a '| name | result |' row, a section header or the closing border")
        name, value = cells[0].strip(), cells[1].strip()
        if category is None:
            raise _fail_line(number, line, "row before any section header")
        if category == "Metadata":
            if not name:
                raise _fail_line(number, line, "metadata row without a name")
            metadata[name] = value
            continue
        if name in _LABELS:
            message = [test, _LABELS[name], [cells[1][1:1 + chunk]]]
            messages.append(message)
            continue
        if not name:
            gpus = _continued_gpus(value)
            if test is not None and gpus:
                test["gpus"].update(gpus)
                message = None
            elif message is not None:
                message[2].append(cells[1][1:1 + chunk])
            elif test is not None and _CODE_RE.match(value):
                messages.append([test, True, [value]])
            else:
                raise _fail_line(number, line, "continuation row with no message or per-GPU result to continue")
            continue
        # A test row: "| name | Pass |", "| name | Pass - All |", "| name | Pass - GPUs: 1, 2 |".
        message = None
        if not value:
            raise _fail_line(number, line, "test %r in section %s has no result" % (name, category))
        plain, every, some = _PLAIN_RE.match(value), _ALL_RE.match(value), _SOME_RE.match(value)
        match = plain or every or some
        if match is None:
            raise _fail_line(number, line, "test %r in section %s has an unknown result %r" % (name, category, value))
        test = _new_test(category, name, _norm(match.group(1)) or "")
        tests.append(test)
        if every:
            test["all_gpus"] = True
        if some:
            partial.add(id(test))
            test["gpus"].update(_continued_gpus(value))

    if closed_at is None:
        raise DcgmiError(
            "dcgmi diag output is incomplete: the result table has no closing border (it ends at line %d)"
            % len(lines)
        )
    for index in range(closed_at + 1, len(lines)):
        if lines[index].strip():
            raise _fail_line(index + 1, lines[index], "unexpected text after the result table")
    if not tests:
        raise DcgmiError("dcgmi diag result table lists no tests")

    for owner, is_warning, pieces in messages:
        text = "".join(pieces).strip()
        if owner is None:
            errors.append(text)
            continue
        owner["messages"].append(text)
        if is_warning:
            owner["warnings"].append(text)
    for test in tests:
        if id(test) in partial:
            test["result"] = _worst(list(test["gpus"].values()))

    ids = [d.strip() for d in metadata.get("GPU Device IDs Detected", "").split(",") if d.strip()]
    return _summary(
        "table", tests, errors, metadata.get("DCGM Version"), metadata.get("Driver Version Detected"), ids
    )


# --- JSON ----------------------------------------------------------------------------------


def _texts(value, where):
    # type: (Any, str) -> List[str]
    """warnings/info: a string (2.x), a list of strings, or of {"warning": ...} objects (3.x, 4.x)."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value.strip()] if value.strip() else []
    if isinstance(value, list):
        found = []  # type: List[str]
        for item in value:
            if isinstance(item, dict):
                item = item.get("warning", item.get("message"))
            if not isinstance(item, str):
                raise DcgmiError("dcgmi diag JSON output not understood: %s has a message that is not text" % where)
            if item.strip():
                found.append(item.strip())
        return found
    raise DcgmiError("dcgmi diag JSON output not understood: %s has messages that are not text" % where)


def _gpu_ids(result):
    # type: (Dict[str, Any]) -> List[int]
    """gpu_ids "0,1,2" / 3, gpu_id "0" (3.x) or entity_group GPU + entity_id (4.x); [] when none."""
    if "entity_id" in result:
        if result.get("entity_group", "GPU") != "GPU":
            return []
        raw = result["entity_id"]  # type: Any
    else:
        raw = result.get("gpu_ids", result.get("gpu_id"))
    if raw is None or raw == "":
        return []
    if isinstance(raw, int) and not isinstance(raw, bool):
        return [raw]
    if isinstance(raw, str) and re.match(r"^\d+(?: *, *\d+)*$", raw.strip()):
        return [int(part) for part in raw.split(",")]
    raise DcgmiError("dcgmi diag JSON output not understood: GPU ids %r" % (raw,))


def _parse_json(text):
    # type: (str) -> Dict[str, Any]
    try:
        document = json.loads(text)
    except ValueError as exc:
        raise DcgmiError(
            "dcgmi diag JSON output is malformed at line %s column %s: %s"
            % (getattr(exc, "lineno", "?"), getattr(exc, "colno", "?"), getattr(exc, "msg", exc))
        )
    key = next((k for k in _JSON_KEYS if isinstance(document, dict) and k in document), None)
    if key is None:
        found = sorted(document) if isinstance(document, dict) else type(document).__name__
        raise DcgmiError(
            "dcgmi diag JSON output has no 'DCGM GPU Diagnostic' (DCGM 2.x, 3.x) or 'DCGM Diagnostic' "
            "(DCGM 4.x) object; found %s" % (found,)
        )
    diag = document[key]
    if not isinstance(diag, dict):
        raise DcgmiError("dcgmi diag JSON output not understood: %r is not an object" % key)
    if diag.get("runtime_error"):
        raise DcgmiError("dcgmi diag reported an error instead of results: %s" % str(diag["runtime_error"]).strip())
    categories = diag.get("test_categories")
    if not isinstance(categories, list):
        raise DcgmiError("dcgmi diag JSON output has no test_categories list under %r" % key)
    metadata = document.get("metadata") if isinstance(document.get("metadata"), dict) else {}

    tests = []  # type: List[Dict[str, Any]]
    for category in categories:
        if not isinstance(category, dict) or not isinstance(category.get("tests"), list):
            raise DcgmiError("dcgmi diag JSON output not understood: test category %r" % (category,))
        name_of_category = str(category.get("category", ""))
        for entry in category["tests"]:
            if entry is None:  # DCGM 3.1 leaves null entries between the tests
                continue
            if not isinstance(entry, dict) or not entry.get("name"):
                raise DcgmiError(
                    "dcgmi diag JSON output not understood: a test without a name in %s" % name_of_category
                )
            where = "test %r in %s" % (entry["name"], name_of_category)
            test = _new_test(name_of_category, str(entry["name"]), "")
            statuses = []  # type: List[str]
            results = entry.get("results") or []
            for result in results:
                if not isinstance(result, dict):
                    raise DcgmiError("dcgmi diag JSON output not understood: %s has a result %r" % (where, result))
                status = _norm(result.get("status"))
                if status is None:
                    raise DcgmiError(
                        "dcgmi diag JSON output not understood: %s has a result with status %r"
                        % (where, result.get("status"))
                    )
                statuses.append(status)
                for gpu in _gpu_ids(result):
                    test["gpus"][gpu] = status
                warnings = _texts(result.get("warnings"), where)
                test["warnings"].extend(warnings)
                test["messages"].extend(warnings + _texts(result.get("info"), where))
            summary = entry.get("test_summary")
            if isinstance(summary, dict):
                test["messages"].extend(_texts(summary.get("info"), where))
                status = _norm(summary.get("status"))
                if status is None:
                    raise DcgmiError(
                        "dcgmi diag JSON output not understood: %s has test_summary status %r"
                        % (where, summary.get("status"))
                    )
                test["result"] = status
            elif statuses:
                test["result"] = _worst(statuses)
            else:
                raise DcgmiError("dcgmi diag JSON output not understood: %s has no result" % where)
            tests.append(test)
    if not tests:
        raise DcgmiError("dcgmi diag JSON output lists no tests")

    device_ids = []  # type: List[str]
    for group in document.get("entity_groups") or []:
        if isinstance(group, dict) and group.get("entity_group") == "GPU":
            device_ids.extend(str(e.get("device_id")) for e in group.get("entities") or [] if isinstance(e, dict))
    version = diag.get("version", metadata.get("version"))
    driver = diag.get("Driver Version Detected", metadata.get("Driver Version Detected"))
    return _summary(
        "json", tests, [],
        str(version) if version is not None else None,
        str(driver) if driver is not None else None,
        device_ids,
    )
