# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The files action plugin's decisions: the entries' rules, the state read and what differs."""

from __future__ import annotations

import hashlib
import os
import subprocess

import pytest

from ansible_collections.gpucluster.core.plugins.plugin_utils.common._files import (
    FilesError,
    Observed,
    check_entries,
    content_sha1,
    differs,
    known_state,
    parse_state,
    parse_texts,
    removal_text_diffs,
    state_command,
    text_command,
    unsettled,
)
from ansible_collections.gpucluster.core.tests.unit.plugins.plugin_utils.failures import message_of

SHA_HELLO = hashlib.sha1(b"hello\n").hexdigest()


@pytest.mark.parametrize("entries, problems", [
    ([{"dest": "/etc/a.conf", "content": "x", "mode": "0644"}, {"dest": "/etc/d", "state": "directory"}], []),
    ([{"dest": "etc/a.conf", "content": "x"}], ["files[0] (etc/a.conf): dest must be an absolute path on one line"]),
    ([{"dest": "/etc/a\nb", "content": "x"}], ["files[0] (/etc/a\nb): dest must be an absolute path on one line"]),
    ([{"dest": "/etc/a", "content": "x"}, {"dest": "/etc/a/", "state": "directory"}],
     ["files[1] (/etc/a/): dest appears more than once"]),
    ([{"dest": "/etc/a"}], ["files[0] (/etc/a): a file needs content or src"]),
    ([{"dest": "/etc/a", "src": "a.j2"}], []),
    ([{"dest": "/etc/a", "src": "a.j2", "content": "x"}], ["files[0] (/etc/a): content and src are mutually exclusive"]),
    ([{"dest": "/etc/d", "state": "directory", "content": "x"}], ["files[0] (/etc/d): a directory takes no content or src"]),
    ([{"dest": "/etc/d", "state": "directory", "src": "d.j2"}], ["files[0] (/etc/d): a directory takes no content or src"]),
    ([{"dest": "/etc/a.list", "state": "absent"}], []),
    ([{"dest": "/etc/a.list", "state": "absent", "mode": "0644"}],
     ["files[0] (/etc/a.list): an absent path takes no content, src, owner, group or mode"]),
    ([{"dest": "/etc/a.list", "state": "absent", "src": "a.j2"}],
     ["files[0] (/etc/a.list): an absent path takes no content, src, owner, group or mode"]),
    ([{"dest": "/etc/a", "content": "x", "mode": 420}],
     ["files[0] (/etc/a): mode must be quoted octal digits such as \"0644\", not 420"]),
    ([{"dest": "/etc/a", "content": "x", "mode": "u+rw"}, {"dest": "", "content": "y"}],
     ["files[0] (/etc/a): mode must be quoted octal digits such as \"0644\", not 'u+rw'",
      "files[1] (no dest): dest must be an absolute path on one line"]),
])
def test_check_entries(entries, problems):
    assert check_entries(entries) == problems


def test_state_command_reads_a_real_tree(tmp_path):
    (tmp_path / "d").mkdir(mode=0o750)
    (tmp_path / "d").chmod(0o750)
    (tmp_path / "f").write_text("hello\n", encoding="utf-8")
    (tmp_path / "f").chmod(0o640)
    (tmp_path / "l").symlink_to(tmp_path / "f")
    paths = [str(tmp_path / name) for name in ("d", "f", "l", "missing", "it's")]
    out = subprocess.run(["sh", "-c", state_command(paths)], capture_output=True, text=True, check=True).stdout
    seen = parse_state(out, len(paths))
    uid, gid = str(os.getuid()), str(os.getgid())
    assert [item.kind for item in seen] == ["directory", "file", "link", "absent", "absent"]
    assert (seen[0].mode, seen[0].uid, seen[0].gid, seen[0].sha1) == ("750", uid, gid, "")
    assert (seen[1].mode, seen[1].sha1) == ("640", SHA_HELLO)


@pytest.mark.parametrize("text, count, message", [
    ("0 file root:root:644:0:0\n", 1, "unexpected line in the state read: '0 file root:root:644:0:0'"),
    ("0 directory\n", 1, "unexpected line in the state read: '0 directory'"),
    ("0 absent\n1 absent\n", 1, "unexpected line in the state read: '1 absent'"),
    ("0 absent\n0 absent\n", 1, "unexpected line in the state read: '0 absent'"),
    ("stat: cannot stat\n", 1, "unexpected line in the state read: 'stat: cannot stat'"),
    ("0 absent\n", 3, "the state read said nothing about path 1, 2"),
])
def test_parse_state_is_strict(text, count, message):
    assert message_of(FilesError, parse_state, text, count) == message


FILE = Observed("file", "root", "root", "644", "0", "0", SHA_HELLO)
DIRECTORY = Observed("directory", "root", "adm", "755", "0", "4")


@pytest.mark.parametrize("entry, observed, expected", [
    ({"dest": "/a", "content": "hello\n"}, FILE, False),
    ({"dest": "/a", "content": "hello\n", "owner": "root", "group": "root", "mode": "0644"}, FILE, False),
    ({"dest": "/a", "content": "hello\n", "owner": "0", "group": "0", "mode": "644"}, FILE, False),
    ({"dest": "/a", "content": "hello"}, FILE, True),
    ({"dest": "/a", "content": "hello\n", "mode": "0600"}, FILE, True),
    ({"dest": "/a", "content": "hello\n", "owner": "slurm"}, FILE, True),
    ({"dest": "/a", "content": "hello\n", "group": "adm"}, FILE, True),
    ({"dest": "/a", "content": "hello\n"}, Observed("absent"), True),
    ({"dest": "/a", "content": "hello\n"}, Observed("link"), True),
    ({"dest": "/a", "content": "hello\n"}, DIRECTORY, True),
    ({"dest": "/d", "state": "directory", "group": "adm", "mode": "0755"}, DIRECTORY, False),
    ({"dest": "/d", "state": "directory", "group": "4"}, DIRECTORY, False),
    ({"dest": "/d", "state": "directory", "mode": "1777"}, DIRECTORY, True),
    ({"dest": "/d", "state": "directory"}, FILE, True),
    ({"dest": "/a", "state": "absent"}, Observed("absent"), False),
    ({"dest": "/a", "state": "absent"}, FILE, True),
    ({"dest": "/a", "state": "absent"}, DIRECTORY, True),
    ({"dest": "/a", "state": "absent"}, Observed("link"), True),
])
def test_differs(entry, observed, expected):
    assert differs(entry, observed) is expected


@pytest.mark.parametrize("text, observed", [
    ("", Observed("absent")),
    ("root:root:755", Observed("directory", "root", "root", "755")),
    ("slurm:slurm:2750", Observed("directory", "slurm", "slurm", "2750")),
    ("root:root:644 " + SHA_HELLO, Observed("file", "root", "root", "644", sha1=SHA_HELLO)),
    # No name on the node for the owner or group: their ids.
    ("1001:4:600 " + SHA_HELLO, Observed("file", "1001", "4", "600", "1001", "4", SHA_HELLO)),
])
def test_known_state_reads_the_roles_state_strings(text, observed):
    assert known_state("/p", text) == observed


@pytest.mark.parametrize("text", [None, 644, "root:root", "root:root:644 xyz", "root:root:rw-", "root:root:644  " + SHA_HELLO,
                                  "root root:644", "root:root:644 " + SHA_HELLO + " extra"])
def test_known_state_refuses_other_text(text):
    assert message_of(FilesError, known_state, "/p", text) == (
        "known[/p]: %r is not \"owner:group:mode\" (a directory), \"owner:group:mode sha1\" (a file) or \"\" (no path)" % (text,))


# The slurm role's entries and what its state read printed for them.
DIR = {"dest": "/etc/slurm", "state": "directory", "owner": "root", "group": "root", "mode": "0755"}
CONF = {"dest": "/etc/slurm/slurm.conf", "content": "hello\n", "owner": "root", "group": "root", "mode": "0644"}
STALE = {"dest": "/etc/slurm/slurm-nodes.conf", "state": "absent"}
ENV = {"dest": "/etc/default/slurmd", "content": "SLURMD_OPTIONS=\n"}
AS_ASKED = {"/etc/slurm": "root:root:755", "/etc/slurm/slurm.conf": "root:root:644 " + SHA_HELLO,
            "/etc/slurm/slurm-nodes.conf": ""}


@pytest.mark.parametrize("known, left", [
    # Nothing known: every entry is read.
    (None, [DIR, CONF, STALE, ENV]),
    ({}, [DIR, CONF, STALE, ENV]),
    # As asked: only the path the state does not hold.
    (AS_ASKED, [ENV]),
    # A trailing slash on either side names the same path.
    ({"/etc/slurm/": "root:root:755", "/etc/slurm/slurm.conf": AS_ASKED["/etc/slurm/slurm.conf"],
      "/etc/slurm/slurm-nodes.conf": ""}, [ENV]),
    # What differs is read, in the task's order.
    (dict(AS_ASKED, **{"/etc/slurm": "slurm:slurm:755"}), [DIR, ENV]),
    (dict(AS_ASKED, **{"/etc/slurm": "root:root:2755"}), [DIR, ENV]),
    (dict(AS_ASKED, **{"/etc/slurm/slurm.conf": "root:root:644 " + "0" * 40}), [CONF, ENV]),
    (dict(AS_ASKED, **{"/etc/slurm/slurm.conf": "root:root:600 " + SHA_HELLO}), [CONF, ENV]),
    (dict(AS_ASKED, **{"/etc/slurm/slurm.conf": ""}), [CONF, ENV]),
    (dict(AS_ASKED, **{"/etc/slurm/slurm.conf": "root:root:755"}), [CONF, ENV]),
    (dict(AS_ASKED, **{"/etc/slurm/slurm-nodes.conf": "root:root:644 " + SHA_HELLO}), [STALE, ENV]),
    (dict(AS_ASKED, **{"/etc/default/slurmd": "root:root:644 " + SHA_HELLO}), [ENV]),
])
def test_unsettled_leaves_what_the_known_state_shows_as_asked(known, left):
    assert unsettled([DIR, CONF, STALE, ENV], known) == left


def test_unsettled_names_a_bad_known_state():
    assert message_of(FilesError, unsettled, [DIR], {"/etc/slurm": "drwxr-xr-x"}).startswith("known[/etc/slurm]: 'drwxr-xr-x' is not")


def test_content_sha1_is_what_sha1sum_prints_for_utf8():
    assert content_sha1("é\n") == hashlib.sha1("é\n".encode("utf-8")).hexdigest()


def test_the_text_read_runs_in_sh_and_reads_back(tmp_path):
    (tmp_path / "f").write_bytes(b"Package: cuda\n")
    (tmp_path / "empty").write_bytes(b"")
    (tmp_path / "big").write_bytes(b"x" * 200000)
    (tmp_path / "l").symlink_to(tmp_path / "f")
    (tmp_path / "d").mkdir()
    paths = [str(tmp_path / name) for name in ("f", "empty", "big", "l", "d", "missing", "it's")]
    out = subprocess.run(["sh", "-c", text_command(paths)], capture_output=True, text=True, check=True).stdout
    texts = parse_texts(out, paths)
    assert texts == {paths[0]: b"Package: cuda\n", paths[1]: b"", paths[2]: b"x" * 104449}


def test_no_paths_read_nothing():
    assert subprocess.run(["sh", "-c", text_command([])], capture_output=True, text=True, check=True).stdout == ""


@pytest.mark.parametrize("text, message", [
    ("aGVsbG8K\n", "unexpected line in the read of the files to remove: 'aGVsbG8K'"),
    ("@@text 1\n", "unexpected line in the read of the files to remove: '@@text 1'"),
    ("@@text 0\nnot base64!\n", "the read of the files to remove printed no base64 for /a"),
])
def test_a_bad_text_read_is_named(text, message):
    assert message_of(FilesError, parse_texts, text, ["/a"]) == message


REMOVED = {"before": {"path": "/p", "state": "file"}, "after": {"path": "/p", "state": "absent"}}


@pytest.mark.parametrize("diff, texts, shown", [
    (REMOVED, {"/p": b"Pin: 1\n"}, {"before_header": "/p", "before": "Pin: 1\n", "after_header": "/p", "after": ""}),
    (REMOVED, {"/p": b"\x00\x01"}, {"dst_binary": 1, "after_header": "/p", "after": ""}),
    (REMOVED, {"/p": b"x" * 104449}, {"dst_larger": 104448, "after_header": "/p", "after": ""}),
    (REMOVED, {}, REMOVED),
    ({"before": {"path": "/p", "state": "directory", "path_content": {"directories": [], "files": []}},
      "after": {"path": "/p", "state": "absent"}}, {},
     {"before": {"path": "/p", "state": "directory", "path_content": {"directories": [], "files": []}},
      "after": {"path": "/p", "state": "absent"}}),
    ({"before": "", "after_header": "/p", "after": "x\n"}, {"/p": b"old"}, {"before": "", "after_header": "/p", "after": "x\n"}),
    ({"before": {"path": "/p", "mode": "0600"}, "after": {"path": "/p", "mode": "0644"}}, {"/p": b"old"},
     {"before": {"path": "/p", "mode": "0600"}, "after": {"path": "/p", "mode": "0644"}}),
])
def test_removals_show_their_text(diff, texts, shown):
    assert removal_text_diffs([diff], texts) == [shown]
