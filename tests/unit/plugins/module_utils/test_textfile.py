# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import pytest

from ansible_collections.gpucluster.core.plugins.module_utils._textfile import TextFileError, read_text


def test_read_text(tmp_path):
    path = tmp_path / "daemon.json"
    assert read_text(str(path)) is None
    path.write_text('{"a": 1}\n', encoding="utf-8")
    assert read_text(str(path)) == '{"a": 1}\n'


def test_read_text_refuses_what_is_not_utf8(tmp_path):
    path = tmp_path / "config.toml"
    path.write_bytes(b"version = 2\n\xff\n")
    with pytest.raises(TextFileError) as exc:
        read_text(str(path))
    assert str(exc.value) == ("%s is not UTF-8: 'utf-8' codec can't decode byte 0xff in position 12: invalid start byte"
                              % path)


def test_read_text_refuses_a_folder(tmp_path):
    with pytest.raises(TextFileError) as exc:
        read_text(str(tmp_path))
    assert str(exc.value) == "%s cannot be read: [Errno 21] Is a directory: '%s'" % (tmp_path, tmp_path)
