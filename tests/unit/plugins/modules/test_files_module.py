# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpucluster.core.files' module: what the action plugin found different, written in one call
over a real directory tree (owner and group: the user running the tests)."""

from __future__ import annotations

import grp
import json
import os
import pwd

import pytest

from ansible_collections.gpucluster.core.plugins.modules import files
from ansible_collections.gpucluster.core.tests.unit.plugins.modules.module_helpers import fail_module, run_module

USER = pwd.getpwuid(os.getuid()).pw_name
NOBODY_UID = pwd.getpwnam("nobody").pw_uid if "nobody" in [user.pw_name for user in pwd.getpwall()] else None
NOGROUP_GID = grp.getgrnam("nogroup").gr_gid if "nogroup" in [group.gr_name for group in grp.getgrall()] else None
GROUP = grp.getgrgid(os.getgid()).gr_name
UMASK_DIR_MODE = "0755"  # a new directory's mode under the umask the tests set (022)


@pytest.fixture(autouse=True)
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


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
    assert result["diff"][1] == {"after_header": str(tmp_path / "etc" / "a.conf"), "before": "", "after": "a=1\n"}
    assert result["diff"][2] == {"before": {"path": str(tmp_path / "old.list"), "state": "file"},
                                 "after": {"path": str(tmp_path / "old.list"), "state": "absent"}}
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
    assert result["diff"][0] == {"before": {"path": str(tmp_path / "etc"), "state": "absent", "mode": UMASK_DIR_MODE},
                                 "after": {"path": str(tmp_path / "etc"), "state": "directory", "mode": "0750"}}
    assert result["diff"][1] == {"after_header": str(tmp_path / "etc" / "a.conf"), "before": "", "after": "a=1\n"}


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
    # Templates are the action plugin's to render.
    (None, {"dest": "{tmp}/a.conf", "src": "a.conf.j2"},
     "{tmp}/a.conf: src is rendered by the action plugin; the module takes content"),
])
def test_failures_name_the_path(tmp_path, make, entry, message):
    if make == "dir":
        (tmp_path / "thing").mkdir()
    elif make == "file":
        (tmp_path / "thing").write_text("x")
    entry = dict(entry, dest=entry["dest"].format(tmp=tmp_path))
    result = fail_module(files.main, {"files": [entry]})
    assert result["msg"] == message.format(tmp=tmp_path)


def _write(path, data=b"", mode_bits=0o644):
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    os.chmod(path, mode_bits)


def _hard_link(path):
    _write(path, "same\n")
    os.link(path, str(path) + ".link")


def _directory(path, mode_bits=0o755):
    path.mkdir()
    os.chmod(path, mode_bits)


def _setgid_parent(path):
    _directory(path.parent, 0o2755)


def _tree(path):
    (path / "sub").mkdir(parents=True)
    (path / "sub" / "f").write_text("y\n")


def _attrs(path, before, after, **states):
    diff = {"before": dict(before, path=path), "after": dict(after, path=path)}
    if states:
        diff["before"]["state"], diff["after"]["state"] = states["state"]
    return diff


BIG = "x" * 104449  # one byte more than ansible's MAX_FILE_SIZE_FOR_DIFF default

# name, what is at the path before (None: nothing), the entry (no dest), the diff expected for the
# path p (None: nothing changes); as ansible.builtin.copy (content) or ansible.builtin.file shows it.
DIFF_CASES = [
    ("new file", None, {"content": "a=1\n", "mode": "0640"},
     lambda p: {"before": "", "after_header": p, "after": "a=1\n"}),
    ("new empty file", None, {"content": ""}, lambda p: {"before": "", "after_header": p, "after": ""}),
    ("changed content", lambda p: _write(p, "old\n"), {"content": "new\n"},
     lambda p: {"before_header": p, "before": "old\n", "after_header": p, "after": "new\n"}),
    ("content emptied", lambda p: _write(p, "old\n"), {"content": ""},
     lambda p: {"before_header": p, "before": "old\n", "after_header": p, "after": ""}),
    ("content and mode: the content alone, as copy", lambda p: _write(p, "old\n", 0o644),
     {"content": "new\n", "mode": "0600", "owner": USER},
     lambda p: {"before_header": p, "before": "old\n", "after_header": p, "after": "new\n"}),
    ("mode only", lambda p: _write(p, "same\n", 0o644), {"content": "same\n", "mode": "0600"},
     lambda p: _attrs(p, {"mode": "0644"}, {"mode": "0600"})),
    ("mode of a hard link", _hard_link, {"content": "same\n", "mode": "0640"},
     lambda p: _attrs(p, {"mode": "0644"}, {"mode": "0640"}, state=("hard", "file"))),
    ("owner and group that are already so", lambda p: _write(p, "same\n"),
     {"content": "same\n", "owner": str(os.getuid()), "group": GROUP}, None),
    ("unchanged", lambda p: _write(p, "same\n", 0o600), {"content": "same\n", "mode": "0600"}, None),
    ("binary file replaced", lambda p: _write(p, b"\x7fELF\x00"), {"content": "text\n"},
     lambda p: {"dst_binary": 1, "after_header": p, "after": "text\n"}),
    ("large file replaced", lambda p: _write(p, BIG), {"content": "small\n"},
     lambda p: {"dst_larger": 104448, "after_header": p, "after": "small\n"}),
    ("large content", lambda p: _write(p, "small\n"), {"content": BIG},
     lambda p: {"before_header": p, "before": "small\n", "src_larger": 104448}),
    ("binary content", None, {"content": "a\x00b"}, lambda p: {"before": "", "src_binary": 1}),
    ("directory created", None, {"state": "directory", "mode": "0750"},
     lambda p: _attrs(p, {"mode": "0755"}, {"mode": "0750"}, state=("absent", "directory"))),
    ("directory created, no attributes", None, {"state": "directory"},
     lambda p: _attrs(p, {}, {}, state=("absent", "directory"))),
    ("directory created with its umask mode", None, {"state": "directory", "mode": "0755", "owner": USER, "group": GROUP},
     lambda p: _attrs(p, {}, {}, state=("absent", "directory"))),
    ("directory created under a setgid parent", _setgid_parent, {"state": "directory", "mode": "0750", "sub": "shared"},
     lambda p: _attrs(p, {"mode": "02755"}, {"mode": "0750"}, state=("absent", "directory"))),
    ("directory mode", lambda p: _directory(p, 0o755), {"state": "directory", "mode": "0700"},
     lambda p: _attrs(p, {"mode": "0755"}, {"mode": "0700"})),
    ("directory unchanged", lambda p: _directory(p, 0o700), {"state": "directory", "mode": "0700"}, None),
    ("absent file", lambda p: _write(p, "x\n"), {"state": "absent"},
     lambda p: _attrs(p, {}, {}, state=("file", "absent"))),
    ("absent hard link", _hard_link, {"state": "absent"}, lambda p: _attrs(p, {}, {}, state=("hard", "absent"))),
    ("absent directory", _tree, {"state": "absent"},
     lambda p: {"before": {"path": p, "state": "directory",
                           "path_content": {"directories": [p + "/sub"], "files": [p + "/sub/f"]}},
                "after": {"path": p, "state": "absent"}}),
    ("absent, nothing there", None, {"state": "absent"}, None),
]


def _snapshot(root):
    seen = {}
    for base, folders, names in os.walk(root):
        for name in folders + names:
            path = os.path.join(base, name)
            info = os.lstat(path)
            seen[path] = (info.st_mode, info.st_uid, info.st_gid, open(path, "rb").read() if os.path.isfile(path) else None)
    return seen


@pytest.mark.parametrize("before, entry, expected", [case[1:] for case in DIFF_CASES], ids=[case[0] for case in DIFF_CASES])
def test_the_diff_is_the_builtins_and_check_mode_shows_the_same(tmp_path, before, entry, expected):
    diffs = {}
    for run, check in (("real", False), ("check", True)):
        entry_here = dict(entry)
        base = tmp_path / run
        base.mkdir()
        path = base / entry_here.pop("sub", ".") / "target"
        if before is not None:
            before(path)
        path = str(path.resolve(strict=False))
        untouched = _snapshot(base)
        result = run_module(files.main, {"files": [dict(entry_here, dest=path)], "_ansible_diff": True,
                                         "_ansible_check_mode": check})
        if check:
            assert _snapshot(base) == untouched
        want = expected(path) if expected is not None else None
        assert result["changed"] is (want is not None)
        assert result.get("diff") == ([want] if want is not None else None)
        diffs[run] = json.loads(json.dumps(result.get("diff")).replace(str(base), "BASE"))
    assert diffs["check"] == diffs["real"]


def test_no_diff_outside_diff_mode(tmp_path):
    target = tmp_path / "c.conf"
    _write(target, "c=1\n", 0o644)
    result = run_module(files.main, {"files": [{"dest": str(target), "content": "c=1\n", "mode": "0600"}]})
    assert result["changed"] is True and "diff" not in result


@pytest.mark.skipif(os.geteuid() != 0, reason="chown needs root")
@pytest.mark.parametrize("check", [False, True])
@pytest.mark.parametrize("kind, entry, before, after", [
    ("file", {"content": "same\n", "owner": "nobody"}, {"owner": 0}, {"owner": NOBODY_UID}),
    ("file", {"content": "same\n", "owner": "nobody", "group": "nogroup"}, {"owner": 0, "group": 0},
     {"owner": NOBODY_UID, "group": NOGROUP_GID}),
    ("file", {"content": "same\n", "group": str(NOGROUP_GID)}, {"group": 0}, {"group": NOGROUP_GID}),
    ("directory", {"state": "directory", "owner": "nobody", "mode": "0700"}, {"owner": 0, "mode": "0755"},
     {"owner": NOBODY_UID, "mode": "0700"}),
    (None, {"state": "directory", "owner": "nobody", "group": "nogroup"}, {"owner": 0, "group": 0, "state": "absent"},
     {"owner": NOBODY_UID, "group": NOGROUP_GID, "state": "directory"}),
])
def test_owner_and_group_show_as_numbers_as_file_shows_them(tmp_path, check, kind, entry, before, after):
    target = tmp_path / "target"
    if kind == "file":
        _write(target, "same\n")
    elif kind == "directory":
        _directory(target)
    os.chown(tmp_path, 0, 0)
    result = run_module(files.main, {"files": [dict(entry, dest=str(target))], "_ansible_diff": True,
                                     "_ansible_check_mode": check})
    assert result["diff"] == [{"before": dict(before, path=str(target)), "after": dict(after, path=str(target))}]


def test_a_user_that_does_not_exist_fails_in_check_mode_too(tmp_path):
    entry = {"dest": str(tmp_path / "d"), "state": "directory", "owner": "no-such-user-gpucluster"}
    result = fail_module(files.main, {"files": [entry], "_ansible_check_mode": True, "_ansible_diff": True})
    assert result["msg"] == "chown failed: failed to look up user no-such-user-gpucluster"
