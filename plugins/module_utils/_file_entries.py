# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The argument spec of one file, directory or absent path, as gpucluster.core.files takes it
and gpucluster.core.packages takes it for the files it writes before installing."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # pylint: disable=invalid-name

FILE_ENTRY_OPTIONS = {
    "dest": {"type": "path", "required": True},
    "state": {"type": "str", "default": "file", "choices": ["file", "directory", "absent"]},
    "content": {"type": "raw"},
    "owner": {"type": "str"},
    "group": {"type": "str"},
    "mode": {"type": "raw"},
}
