# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reading and writing the small text files the collection's modules merge into (daemon.json,
containerd's config.toml and drop-in): UTF-8 text, atomic writes, and the changed/diff/write step
the containerd modules share."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # pylint: disable=invalid-name

import os
import tempfile

from ansible.module_utils.common.text.converters import to_bytes, to_native


class TextFileError(Exception):
    """A file cannot be read as UTF-8 text."""


def read_text(path):
    """The file's text, None when it does not exist."""
    try:
        with open(path, "rb") as handle:
            return handle.read().decode("utf-8")
    except (IOError, OSError) as err:
        if not os.path.exists(path):
            return None
        raise TextFileError("%s cannot be read: %s" % (path, to_native(err)))
    except UnicodeDecodeError as err:
        raise TextFileError("%s is not UTF-8: %s" % (path, to_native(err)))


def write_text(module, path, text):
    """Write text to path atomically (a missing folder is made, 0755); True when the file is new."""
    folder = os.path.dirname(path)
    if folder and not os.path.isdir(folder):
        os.makedirs(folder)
        os.chmod(folder, 0o755)
    new = not os.path.exists(path)
    handle, tmp = tempfile.mkstemp(dir=module.tmpdir)
    with os.fdopen(handle, "wb") as out:
        out.write(to_bytes(text))
    module.atomic_move(tmp, path)
    return new


def apply_files(module, files, result):
    """Bring files, a list of (path, text now or None, wanted text or None to remove it), to the wanted text.

    Sets result's ``changed`` and, in diff mode, its ``diff`` (one entry a changed file). Outside check mode
    writes each changed file (a new one gets mode 0644; a changed one keeps its mode) or removes it; when one
    fails, fails naming it, changed only when a file before it was written."""
    changed_files = [(name, before, after) for name, before, after in files if before != after]
    result["changed"] = bool(changed_files)
    if module._diff and changed_files:  # pylint: disable=protected-access
        result["diff"] = [dict(before_header=name, after_header=name, before=before or "", after=after or "")
                          for name, before, after in changed_files]
    if module.check_mode:
        return
    written = []
    for name, dummy, after in changed_files:
        try:
            if after is None:
                os.remove(name)
            elif write_text(module, name, after):
                module.set_mode_if_different(name, "0644", False)
        except (IOError, OSError) as exc:
            action = "removed" if after is None else "written"
            result["changed"] = bool(written)
            module.fail_json(msg="%s cannot be %s: %s" % (name, action, to_native(exc)), **result)
        written.append(name)
