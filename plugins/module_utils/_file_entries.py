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

# ansible's MAX_FILE_SIZE_FOR_DIFF default: copy shows a larger file as dst_larger or src_larger.
DIFF_MAX_BYTES = 104448
# The first bytes the file module's _diff_peek reads to tell a binary file (one with a NUL byte).
_PEEK_BYTES = 8192


def _text(data):
    return data.decode("utf-8", "replace")


def content_diff(dest, before, after):
    """The diff ansible.builtin.copy returns for a file's content (an item of its ``diff`` list):
    ``before`` is the old bytes or None where there was no file (``before`` empty, no header),
    ``after`` the new bytes, or None for a file removed (``after`` empty under the path's header).
    A binary old file shows as ``dst_binary``, a large one as ``dst_larger``; a large or binary new
    content as ``src_larger`` or ``src_binary``, as copy shows them."""
    diff = {}
    if before is None:
        diff["before"] = ""
    elif b"\x00" in before[:_PEEK_BYTES]:
        diff["dst_binary"] = 1
    elif len(before) > DIFF_MAX_BYTES:
        diff["dst_larger"] = DIFF_MAX_BYTES
    else:
        diff["before_header"] = dest
        diff["before"] = _text(before)
    if after is None:
        diff["after_header"] = dest
        diff["after"] = ""
    elif len(after) > DIFF_MAX_BYTES:
        diff["src_larger"] = DIFF_MAX_BYTES
    elif b"\x00" in after:
        diff["src_binary"] = 1
    else:
        diff["after_header"] = dest
        diff["after"] = _text(after)
    return diff


def path_diff(path, state=None, prev_state=None):
    """The diff ansible.builtin.file starts from (its initial_diff): the path before and after, and
    its states where they differ; attributes are added as AnsibleModule.set_*_if_different add them
    (``owner`` and ``group`` as numbers, ``mode`` as octal text)."""
    diff = {"before": {"path": path}, "after": {"path": path}}
    if state is not None and state != prev_state:
        diff["before"]["state"] = prev_state
        diff["after"]["state"] = state
    return diff
