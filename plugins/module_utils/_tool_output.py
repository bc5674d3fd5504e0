# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the parsers of the benchmark tools' output (nccl-tests, perftest) share: the error that names
a line, and the tool's own failure lines added to a message.

Private module_utils of gpucluster.core: pure functions, no Ansible imports. Python 3.6 syntax.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # pylint: disable=invalid-name

from typing import List, Type


def line_error(error, number, line, why):
    # type: (Type[Exception], int, str, str) -> Exception
    """error('line <number>: <why>: <the line, stripped and quoted>')."""
    return error("line %d: %s: %r" % (number, why, line.strip()))


def reported(failures):
    # type: (List[str]) -> str
    """'; it reports: <line> | <line>' for the failure lines the tool printed, '' when none."""
    return "; it reports: %s" % " | ".join(failures) if failures else ""
