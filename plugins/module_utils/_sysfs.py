# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read files the modules look at on the host (sysfs/procfs values, gres.conf, version.json).
Private module_utils of gpucluster.core.

Runs on the managed hosts, so the code keeps to Python 3.6 syntax.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # pylint: disable=invalid-name

from typing import Optional


def read_file(path):
    # type: (str) -> Optional[str]
    """The content of ``path`` (bytes that are not UTF-8 replaced), or None when it cannot be read."""
    try:
        with open(path, "rb") as handle:
            return handle.read().decode("utf-8", "replace")
    except (IOError, OSError):
        return None


def read_text(path):
    # type: (str) -> Optional[str]
    """The stripped content of ``path``, or None when it cannot be read."""
    text = read_file(path)
    return None if text is None else text.strip()
