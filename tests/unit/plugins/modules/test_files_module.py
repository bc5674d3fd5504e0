# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpucluster.core.files' module: what the action plugin found different, written in one call
over a real directory tree (owner and group: the user running the tests)."""

from __future__ import annotations

import grp
import os
import pwd

import pytest

from ansible_collections.gpucluster.core.plugins.modules import files
from ansible_collections.gpucluster.core.tests.unit.plugins.modules.module_helpers import fail_module, run_module

USER = pwd.getpwuid(os.getuid()).pw_name
GROUP = grp.getgrgid(os.getgid()).gr_name


def entries(tmp_path, **extra):
    return [
        {"dest": str(tmp_path / "etc"), "state": "directory", "owner": USER, "group": GROUP, "mode": "0750"},
        {"dest": str(tmp_path / "etc" / "a.conf"), "state": "file", "content": "a=1\n", "owner": USER,
         "group": GROUP, "mode": "0640", **extra},
        {"dest": str(tmp_path / "old.list"), "state": "absent"},
    ]


def mode(path):
    return oct(os.stat(path).st_mode & 0o7777)


def test_writes_makes_and_removes_in_order(tmp_path):
    (tmp_path / "old.list").write_text("deb http://x/ ./\n")
    result = run_module(files.main, {"files": entries(tmp_path), "_ansible_diff": True})
    assert result["changed"] is True
    assert result["changed_paths"] == [str(tmp_path / "etc"), str(tmp_path / "etc" / "a.conf"),
                                       str(tmp_path / "old.list")]
    assert (tmp_path / "etc" / "a.conf").read_text() == "a=1\n"
    assert mode(tmp_path / "etc") == "0o750" and mode(tmp_path / "etc" / "a.conf") == "0o640"
    assert not (tmp_path / "old.list").exists()
    assert result["diff"][1] == {"before_header": str(tmp_path / "etc" / "a.conf"),
                                 "after_header": str(tmp_path / "etc" / "a.conf"), "before": "", "after": "a=1\n"}
    assert [entry for entry in os.listdir(tmp_path / "etc") if entry.startswith(".gpucluster-")] == []


def test_a_second_call_changes_nothing(tmp_path):
    run_module(files.main, {"files": entries(tmp_path)})
    result = run_module(files.main, {"files": entries(tmp_path)})
    assert result["changed"] is False and result["changed_paths"] == []


def test_new_content_keeps_the_old_files_mode_when_none_is_given(tmp_path):
    target = tmp_path / "b.conf"
    target.write_text("b=1\n")
    os.chmod(target, 0o600)
    result = run_module(files.main, {"files": [{"dest": str(target), "content": "b=2\n"}], "_ansible_diff": True})
    assert result["changed_paths"] == [str(target)] and target.read_text() == "b=2\n" and mode(target) == "0o600"
    assert result["diff"][0]["before"] == "b=1\n" and result["diff"][0]["after"] == "b=2\n"


def test_only_the_mode_differs(tmp_path):
    target = tmp_path / "c.conf"
    target.write_text("c=1\n")
    os.chmod(target, 0o644)
    result = run_module(files.main, {"files": [{"dest": str(target), "content": "c=1\n", "mode": "0600"}]})
    assert result["changed_paths"] == [str(target)] and mode(target) == "0o600"


def test_check_mode_writes_nothing_and_shows_the_diff(tmp_path):
    (tmp_path / "old.list").write_text("x\n")
    result = run_module(files.main, {"files": entries(tmp_path), "_ansible_check_mode": True, "_ansible_diff": True})
    assert result["changed"] is True and len(result["changed_paths"]) == 3
    assert not (tmp_path / "etc").exists() and (tmp_path / "old.list").exists()
    assert result["diff"][0] == {"before": {"path": str(tmp_path / "etc"), "state": "absent"},
                                 "after": {"path": str(tmp_path / "etc"), "state": "directory"}}


def test_a_directory_is_removed_with_what_it_holds(tmp_path):
    (tmp_path / "d" / "e").mkdir(parents=True)
    (tmp_path / "d" / "e" / "f").write_text("x")
    result = run_module(files.main, {"files": [{"dest": str(tmp_path / "d"), "state": "absent"}]})
    assert result["changed_paths"] == [str(tmp_path / "d")] and not (tmp_path / "d").exists()


@pytest.mark.parametrize("make, entry, message", [
    (None, {"dest": "{tmp}/missing/a.conf", "content": "x"},
     "{tmp}/missing/a.conf: destination directory {tmp}/missing does not exist"),
    ("dir", {"dest": "{tmp}/thing", "content": "x"}, "{tmp}/thing is a directory, not a file"),
    ("file", {"dest": "{tmp}/thing", "state": "directory"}, "{tmp}/thing is a file, not a directory"),
    (None, {"dest": "{tmp}/a.conf"}, "{tmp}/a.conf: a file needs content"),
])
def test_failures_name_the_path(tmp_path, make, entry, message):
    if make == "dir":
        (tmp_path / "thing").mkdir()
    elif make == "file":
        (tmp_path / "thing").write_text("x")
    entry = dict(entry, dest=entry["dest"].format(tmp=tmp_path))
    result = fail_module(files.main, {"files": [entry]})
    assert result["msg"] == message.format(tmp=tmp_path)
