# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Slurm hostlist expressions: expand ``gpu[01-08,10]`` and compress host names back.

Private module_utils of gpucluster.core, used by the slurm_hostlist_* filters. Pure
functions, Python 3.6 syntax.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # pylint: disable=invalid-name

import re
from typing import Dict, Iterable, List, Tuple

MAX_HOSTS = 1000000
_LAST_NUMBER_RE = re.compile(r"^(.*?)(\d+)(\D*)$")


class HostlistError(Exception):
    """Raised for a hostlist expression that cannot be read."""


def _split_top(expr):
    # type: (str) -> List[str]
    """Split on commas that are not inside brackets."""
    parts = []  # type: List[str]
    depth = 0
    current = []  # type: List[str]
    for ch in expr:
        if ch == "[":
            if depth:
                raise HostlistError("nested '[' in hostlist %r" % expr)
            depth += 1
        elif ch == "]":
            if not depth:
                raise HostlistError("unbalanced ']' in hostlist %r" % expr)
            depth -= 1
        if ch == "," and not depth:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    if depth:
        raise HostlistError("unbalanced '[' in hostlist %r" % expr)
    parts.append("".join(current))
    return [p.strip() for p in parts if p.strip()]


def _expand_range(body, expr):
    # type: (str, str) -> List[str]
    values = []  # type: List[str]
    for item in body.split(","):
        item = item.strip()
        match = re.match(r"^(\d+)(?:-(\d+))?$", item)
        if not match:
            raise HostlistError("bad range %r in hostlist %r" % (item, expr))
        low, high = match.group(1), match.group(2)
        if high is None:
            values.append(low)
            continue
        if int(high) < int(low):
            raise HostlistError("range %r runs backwards in hostlist %r" % (item, expr))
        if int(high) - int(low) >= MAX_HOSTS:
            raise HostlistError("range %r in hostlist %r is too large" % (item, expr))
        width = len(low) if low.startswith("0") and len(low) > 1 else 0
        for number in range(int(low), int(high) + 1):
            values.append("%0*d" % (width, number))
    return values


def expand(expr):
    # type: (str) -> List[str]
    """'gpu[01-03,10],login1' -> ['gpu01', 'gpu02', 'gpu03', 'gpu10', 'login1'].

    Several bracket groups in one name expand as a product ('r[1-2]n[1-2]' -> r1n1, r1n2,
    r2n1, r2n2). Zero padding follows the lower bound of each range, as in Slurm.
    """
    hosts = []  # type: List[str]
    for part in _split_top(expr):
        names = [""]
        for piece in re.split(r"(\[[^\]]*\])", part):
            if piece.startswith("[") and piece.endswith("]"):
                values = _expand_range(piece[1:-1], expr)
                names = [n + v for n in names for v in values]
            else:
                names = [n + piece for n in names]
            if len(names) + len(hosts) > MAX_HOSTS:
                raise HostlistError("hostlist %r expands to more than %d hosts" % (expr, MAX_HOSTS))
        hosts.extend(names)
    return hosts


def _ranges(numbers, width):
    # type: (List[int], int) -> List[str]
    out = []  # type: List[str]
    start = prev = numbers[0]
    for number in list(numbers[1:]) + [None]:
        if number is not None and number == prev + 1:
            prev = number
            continue
        if start == prev:
            out.append("%0*d" % (width, start))
        else:
            out.append("%0*d-%0*d" % (width, start, width, prev))
        if number is not None:
            start = prev = number
    return out


def compress(hosts):
    # type: (Iterable[str]) -> str
    """['gpu01', 'gpu02', 'gpu03', 'gpu10'] -> 'gpu[01-03,10]'.

    Host names are grouped by the text around their last number and by its zero padding;
    duplicates are dropped and each group is sorted numerically. Groups appear in the order
    of their first host. Names without a number are kept as they are.
    """
    order = []  # type: List[Tuple[str, str, int]]
    groups = {}  # type: Dict[Tuple[str, str, int], List[int]]
    for host in hosts:
        host = host.strip()
        if not host:
            continue
        match = _LAST_NUMBER_RE.match(host)
        if match:
            prefix, digits, suffix = match.groups()
            width = len(digits) if digits.startswith("0") and len(digits) > 1 else 0
            key = (prefix, suffix, width)
            number = int(digits)
        else:
            key = (host, "", -1)
            number = -1
        if key not in groups:
            order.append(key)
            groups[key] = []
        if number not in groups[key]:
            groups[key].append(number)
    # An unpadded number as long as a padded group's width (gpu10 beside gpu09) joins it.
    for key in list(order):
        prefix, suffix, width = key
        if width != 0:
            continue
        for other in order:
            if other[0] == prefix and other[1] == suffix and other[2] > 0:
                moved = [n for n in groups[key] if len(str(n)) == other[2]]
                for number in moved:
                    groups[key].remove(number)
                    if number not in groups[other]:
                        groups[other].append(number)
        if not groups[key]:
            order.remove(key)
    parts = []  # type: List[str]
    for key in order:
        prefix, suffix, width = key
        if width < 0:
            parts.append(prefix)
            continue
        numbers = sorted(groups[key])
        ranges = _ranges(numbers, width)
        if len(ranges) == 1 and "-" not in ranges[0]:
            parts.append("%s%s%s" % (prefix, ranges[0], suffix))
        else:
            parts.append("%s[%s]%s" % (prefix, ",".join(ranges), suffix))
    return ",".join(parts)
