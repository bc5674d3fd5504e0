# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read the number a tool printed: ``0x``-prefixed hex, or the number a value starts with.

Private module_utils of gpucluster.core, shared by the ibstat and nvidia-smi parsers:
pure functions, no Ansible imports. Runs on the managed hosts, so the code keeps to
Python 3.6 syntax (type comments, no dataclasses, no walrus).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # pylint: disable=invalid-name

import re
from typing import Optional, Union

_UNSIGNED_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)")
_SIGNED_RE = re.compile(r"^\s*(-?\d+(?:\.\d+)?)")


def leading_number(value, signed=False):
    # type: (Optional[str], bool) -> Optional[Union[int, float]]
    """The number ``value`` holds, or None.

    A value that starts with ``0x`` (any case, after blanks) is read whole as hex:
    ``'0x33bf'`` -> 13247, and ``'0x33bf MiB'`` -> None. Otherwise the decimal number
    the value starts with is read and the rest ignored: ``'400'`` -> 400,
    ``'2.5'`` -> 2.5, ``'200 Gb/sec (4X HDR)'`` -> 200, ``'7.0'`` -> 7 (an int when it
    has no fraction). A leading minus sign counts only when ``signed`` is true.
    None, and values that start with no number, give None.
    """
    if value is None:
        return None
    value = value.strip()
    if value.lower().startswith("0x"):
        try:
            return int(value, 16)
        except ValueError:
            return None
    match = (_SIGNED_RE if signed else _UNSIGNED_RE).match(value)
    if not match:
        return None
    number = float(match.group(1))
    return int(number) if number.is_integer() else number


def leading_int(value, signed=True):
    # type: (Optional[str], bool) -> Optional[int]
    """As leading_number, with any fraction dropped (toward zero): ``'32510.9 MiB'`` -> 32510.

    Negative numbers are read unless ``signed`` is false: ``'-1'`` -> -1.
    """
    number = leading_number(value, signed)
    if number is None:
        return None
    return int(number)
