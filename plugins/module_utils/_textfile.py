# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reading and writing the small text files the collection's modules merge into (daemon.json,
containerd's config.toml and drop-in): UTF-8 text, atomic writes."""

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
