# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import os

import pytest

from ansible_collections.gpucluster.core.plugins.module_utils import _textfile
from ansible_collections.gpucluster.core.plugins.module_utils._textfile import TextFileError, apply_files, read_text


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


class Failed(Exception):
    """fail_json was called."""


class ModuleStub:
    """What apply_files uses of AnsibleModule: diff and check mode, a temporary folder, the atomic move,
    the mode of a new file and fail_json."""

    def __init__(self, tmpdir, check_mode=False, diff=False):
        self._diff = diff
        self.check_mode = check_mode
        self.tmpdir = str(tmpdir)
        self.modes = []

    def atomic_move(self, src, dest):
        os.rename(src, dest)

    def set_mode_if_different(self, path, mode, changed):
        self.modes.append((os.path.basename(path), mode))
        os.chmod(path, int(mode, 8))
        return changed

    def fail_json(self, msg, **result):
        raise Failed(dict(result, msg=msg))


@pytest.fixture
def tree(tmp_path):
    """A folder with a.toml (kept), b.toml (changed), c.toml (removed); d.toml is new."""
    (tmp_path / "tmp").mkdir()
    folder = tmp_path / "etc"
    folder.mkdir()
    for name in ("a", "b", "c"):
        (folder / ("%s.toml" % name)).write_text("%s = 1\n" % name)
    (folder / "b.toml").chmod(0o600)
    files = [(str(folder / "a.toml"), "a = 1\n", "a = 1\n"), (str(folder / "b.toml"), "b = 1\n", "b = 2\n"),
             (str(folder / "c.toml"), "c = 1\n", None), (str(folder / "d.toml"), None, "d = 1\n")]
    return tmp_path, folder, files


def _contents(folder):
    return {path.name: (path.read_text(), oct(path.stat().st_mode & 0o777)) for path in sorted(folder.iterdir())}


def test_apply_files_writes_removes_and_gives_new_files_0644(tree):
    tmp_path, folder, files = tree
    module = ModuleStub(tmp_path / "tmp")
    result = {"changes": ["x"]}
    apply_files(module, files, result)
    assert result == {"changes": ["x"], "changed": True}
    assert module.modes == [("d.toml", "0644")]
    assert _contents(folder) == {"a.toml": ("a = 1\n", "0o644"), "b.toml": ("b = 2\n", "0o600"),
                                 "d.toml": ("d = 1\n", "0o644")}


def test_apply_files_in_check_mode_shows_the_diff_and_writes_nothing(tree):
    tmp_path, folder, files = tree
    before = _contents(folder)
    result = {}
    apply_files(ModuleStub(tmp_path / "tmp", check_mode=True, diff=True), files, result)
    assert result == {"changed": True, "diff": [
        {"before_header": files[1][0], "after_header": files[1][0], "before": "b = 1\n", "after": "b = 2\n"},
        {"before_header": files[2][0], "after_header": files[2][0], "before": "c = 1\n", "after": ""},
        {"before_header": files[3][0], "after_header": files[3][0], "before": "", "after": "d = 1\n"},
    ]}
    assert _contents(folder) == before


def test_apply_files_with_nothing_to_change(tree):
    tmp_path, folder, files = tree
    result = {}
    apply_files(ModuleStub(tmp_path / "tmp", diff=True), files[:1], result)
    assert result == {"changed": False}


@pytest.mark.parametrize("fail_at, action, changed", [(0, "written", False), (1, "removed", True)],
                         ids=["first-file", "after-a-written-file"])
def test_apply_files_fails_naming_the_file(tree, monkeypatch, fail_at, action, changed):
    tmp_path, folder, files = tree
    failing = files[1 + fail_at][0]
    real_remove = os.remove

    def remove(path):
        if path == failing:
            raise OSError(13, "Permission denied")
        real_remove(path)

    def write(module, path, text):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "remove", remove)
    if fail_at == 0:
        monkeypatch.setattr(_textfile, "write_text", write)
    with pytest.raises(Failed) as exc:
        apply_files(ModuleStub(tmp_path / "tmp"), files, {"changes": []})
    error = "[Errno 28] No space left on device" if fail_at == 0 else "[Errno 13] Permission denied"
    assert exc.value.args[0] == {"changes": [], "changed": changed, "msg": "%s cannot be %s: %s" % (failing, action, error)}
