# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpucluster.core.files shows in --diff mode what ansible.builtin.copy (a file's content) and
ansible.builtin.file (attributes, directories, removals) show for the same change.

Each case is made twice in temporary directories on localhost, once for the builtin and once for
gpucluster.core.files, and one ansible-playbook run (json stdout callback, --diff) makes the same
change in both; the diffs must be equal once the two roots read the same. Run as root: the owner
and group cases give files to the user nobody. The run is repeated with --check, where the files
module must show the same diffs (the builtin file module shows no attributes of a directory it
would make in check mode; the files module does, so its check mode shows what a real run shows).

Run from the checkout: python -m pytest -q tests/playbook/test_diff_like_builtins.py"""

from __future__ import annotations

import grp
import json
import os
import pwd
import subprocess
import sys
from pathlib import Path

import pytest

from roleplay import ansible_playbook, collections_path

REPO = Path(__file__).resolve().parents[2]
ROOT = "@ROOT@"

NOBODY = pwd.getpwnam("nobody") if "nobody" in {entry.pw_name for entry in pwd.getpwall()} else None
NOBODY_GROUP = grp.getgrgid(NOBODY.pw_gid).gr_name if NOBODY else None
AS_ROOT = os.geteuid() == 0 and NOBODY is not None
BIG = "x" * 110000 + "\n"  # more than ansible's MAX_FILE_SIZE_FOR_DIFF (104448)


def _file(path: Path, data: bytes | str = b"", mode: int = 0o644) -> None:
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    os.chmod(path, mode)


def _directory(path: Path, mode: int = 0o755) -> None:
    path.mkdir()
    os.chmod(path, mode)


def _tree(path: Path) -> None:
    (path / "sub").mkdir(parents=True)
    (path / "sub" / "f").write_text("y\n")
    (path / "g").write_text("z\n")


def _hard_link(path: Path) -> None:
    _file(path, "same\n", 0o644)
    os.link(path, path.with_name(path.name + ".link"))


# name, what is at the path before (a function of the path, or None for nothing), the builtin task
# (module, arguments without the path) and the files entry (without dest); a files entry the
# builtin's arguments give: content, owner, group, mode and state as they are.
CASES = [
    ("new_file", None, ("copy", {"content": "a=1\n", "mode": "0640"})),
    ("new_file_no_mode", None, ("copy", {"content": "a=1\nb=2\n"})),
    ("new_empty_file", None, ("copy", {"content": ""})),
    ("changed_content", lambda p: _file(p, "old\n"), ("copy", {"content": "new\n"})),
    ("changed_content_to_empty", lambda p: _file(p, "old\n"), ("copy", {"content": ""})),
    ("mode_only", lambda p: _file(p, "same\n", 0o644), ("copy", {"content": "same\n", "mode": "0600"})),
    ("owner_group_only", lambda p: _file(p, "same\n"),
     ("copy", {"content": "same\n", "owner": "nobody", "group": NOBODY_GROUP})),
    ("owner_only_by_uid", lambda p: _file(p, "same\n"), ("copy", {"content": "same\n", "owner": str(NOBODY.pw_uid) if NOBODY else "65534"})),
    ("content_and_mode", lambda p: _file(p, "old\n", 0o644),
     ("copy", {"content": "new\n", "mode": "0600", "owner": "nobody"})),
    ("mode_of_a_hard_link", _hard_link, ("copy", {"content": "same\n", "mode": "0640"})),
    ("binary_file_replaced", lambda p: _file(p, b"\x7fELF\x00\x01"), ("copy", {"content": "text\n"})),
    ("large_file_replaced", lambda p: _file(p, BIG), ("copy", {"content": "small\n"})),
    ("large_content", lambda p: _file(p, "small\n"), ("copy", {"content": BIG})),
    ("directory_created", None, ("file", {"state": "directory", "mode": "0750", "owner": "nobody"})),
    ("directory_created_no_attributes", None, ("file", {"state": "directory"})),
    ("directory_created_same_mode", None, ("file", {"state": "directory", "mode": "0755"})),
    ("directory_mode", lambda p: _directory(p, 0o755), ("file", {"state": "directory", "mode": "0700"})),
    ("directory_owner_group_mode", lambda p: _directory(p, 0o755),
     ("file", {"state": "directory", "mode": "2775", "owner": "nobody", "group": NOBODY_GROUP})),
    ("absent_file", lambda p: _file(p, "x\n"), ("file", {"state": "absent"})),
    ("absent_hard_link", _hard_link, ("file", {"state": "absent"})),
    ("absent_directory", _tree, ("file", {"state": "absent"})),
    ("absent_empty_directory", _directory, ("file", {"state": "absent"})),
]
NEEDS_ROOT = {"owner_group_only", "owner_only_by_uid", "content_and_mode", "directory_created",
              "directory_owner_group_mode"}
# The builtin file module in check mode shows none of the attributes of a directory it would make.
NEW_DIRECTORIES = {name for name, before, (_module, args) in CASES if before is None and args.get("state") == "directory"}


def _cases():
    return [case for case in CASES if AS_ROOT or case[0] not in NEEDS_ROOT]


def _prepare(root: Path) -> None:
    root.mkdir(parents=True)
    for name, before, _task in _cases():
        if before is not None:
            before(root / name)


def _playbook(builtin_root: Path, files_root: Path) -> list:
    tasks = []
    for name, _before, (module, args) in _cases():
        if module == "copy":
            tasks.append({"name": "builtin " + name, "ansible.builtin.copy": dict(args, dest=str(builtin_root / name))})
        else:
            tasks.append({"name": "builtin " + name, "ansible.builtin.file": dict(args, path=str(builtin_root / name))})
        entry = dict(args, dest=str(files_root / name))
        if module == "file" and args.get("state") == "directory":
            entry["state"] = "directory"
        tasks.append({"name": "files " + name, "gpucluster.core.files": {"files": [entry]}})
    return [{"hosts": "localhost", "gather_facts": False, "tasks": tasks}]


def _run(tmp_path: Path, label: str, check: bool) -> dict:
    """{case: (builtin diff, files diff)} of one run over fresh trees, both roots read as @ROOT@."""
    base = tmp_path / label
    builtin_root, files_root = base / "builtin", base / "files"
    _prepare(builtin_root)
    _prepare(files_root)
    playbook = base / "playbook.yml"
    playbook.write_text(json.dumps(_playbook(builtin_root, files_root)))
    config = base / "ansible.cfg"
    config.write_text("[defaults]\ncollections_path = %s\nstdout_callback = json\nretry_files_enabled = false\n"
                      % collections_path())
    local_temp = base / "local-tmp"
    env = dict(os.environ, ANSIBLE_CONFIG=str(config), ANSIBLE_STDOUT_CALLBACK="json", ANSIBLE_NOCOLOR="1",
               ANSIBLE_LOCAL_TEMP=str(local_temp), ANSIBLE_REMOTE_TEMP=str(base / "remote-tmp"))
    env.pop("ANSIBLE_CALLBACKS_ENABLED", None)
    command = [ansible_playbook(), "-i", "localhost,", "-c", "local", "--diff",
               "-e", "ansible_python_interpreter=%s" % sys.executable, str(playbook)]
    if check:
        command.append("--check")
    done = subprocess.run(command, cwd=str(base), env=env, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    results = {}
    for task in json.loads(done.stdout)["plays"][0]["tasks"]:
        results[task["task"]["name"]] = task["hosts"]["localhost"]
    out = {}
    for name, _before, (module, args) in _cases():
        builtin, files = results["builtin " + name], results["files " + name]
        assert builtin.get("changed") is True and files.get("changed") is True, (name, builtin, files)
        builtin_diff = builtin.get("diff")
        # copy returns a list of one diff, file a diff; files one diff per path changed.
        if isinstance(builtin_diff, list):
            assert len(builtin_diff) == 1, (name, builtin_diff)
            builtin_diff = builtin_diff[0]
        assert isinstance(files.get("diff"), list) and len(files["diff"]) == 1, (name, files)
        files_diff = files["diff"][0]
        if module == "copy" and args.get("content") == "" and "after_header" in builtin_diff:
            # copy heads an empty content with the local temporary file it wrote it to.
            assert builtin_diff["after_header"].startswith(str(local_temp)), builtin_diff
            builtin_diff["after_header"] = str(builtin_root / name)
        out[name] = (_same_roots(builtin_diff, builtin_root), _same_roots(files_diff, files_root))
    _assert_same_trees(builtin_root, files_root)
    return out


def _same_roots(diff, root: Path):
    return json.loads(json.dumps(diff).replace(json.dumps(str(root))[1:-1], ROOT))


def _assert_same_trees(left: Path, right: Path) -> None:
    """Both runs left the same files, modes, owners and contents behind."""
    def listing(root: Path) -> dict:
        seen = {}
        for base, folders, names in os.walk(root):
            for name in folders + names:
                path = Path(base) / name
                if path.name in ("local-tmp", "remote-tmp"):
                    continue
                info = path.lstat()
                seen[str(path.relative_to(root))] = (info.st_mode, info.st_uid, info.st_gid,
                                                     path.read_bytes() if path.is_file() else None)
        return seen
    assert listing(left) == listing(right)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    if ansible_playbook() is None or collections_path() is None:
        pytest.fail("ansible-playbook or the gpucluster.core collection (under .venv/collections) is not available")
    tmp_path = tmp_path_factory.mktemp("diff-like-builtins")
    os.chmod(tmp_path, 0o755)
    return {"normal": _run(tmp_path, "normal", check=False), "check": _run(tmp_path, "check", check=True)}


@pytest.mark.parametrize("name", [case[0] for case in CASES])
def test_files_diff_is_the_builtins(runs, name):
    if name not in runs["normal"]:
        pytest.skip("needs root and the user nobody")
    builtin, files = runs["normal"][name]
    assert files == builtin


@pytest.mark.parametrize("name", [case[0] for case in CASES])
def test_check_mode_shows_the_same_diff(runs, name):
    if name not in runs["check"]:
        pytest.skip("needs root and the user nobody")
    builtin_check, files_check = runs["check"][name]
    builtin, files = runs["normal"][name]
    assert files_check == files == builtin
    if name in NEW_DIRECTORIES:
        shown = {side: {key: value for key, value in files_check[side].items() if key in ("path", "state")}
                 for side in ("before", "after")}
        assert builtin_check == shown
    else:
        assert builtin_check == files_check
