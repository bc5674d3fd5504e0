# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the files action plugin decides on the controller (pure, no Ansible imports): the shell
command that reads, in one call, the state of every file and directory a task writes, the parse
of its output, which entries differ from what the task asks for, and the text of the files to
remove that gpucluster.core.packages shows in diff mode (no Ansible imports: the diff's shape
comes from the collection's module_utils/_file_entries.py).

An entry is ``{"dest": absolute path, "state": "file" | "directory" | "absent", "content": text
(files), "owner", "group", "mode" (octal text)}``; owner, group and mode are compared only when
given, as ansible.builtin.copy and ansible.builtin.file leave them alone when they are not. An
absent entry takes none of them. A file of gpucluster.core.files may name a template (``src``)
instead of its content; the action plugin renders it before it compares.

A task may also hand over what a state read of its own found at some paths (``known``: path ->
``owner:group:mode`` for a directory, ``owner:group:mode sha1`` for a file, empty for no path):
the entries that state shows as asked for are left out without contacting the node."""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
import shlex
from dataclasses import dataclass

from ansible_collections.gpucluster.core.plugins.module_utils._file_entries import DIFF_MAX_BYTES, content_diff
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._rules import keyed_entries

_MODE = re.compile(r"^[0-7]{3,4}$")
_TEXT_LINE = re.compile(r"^@@text (\d+)$")
_KNOWN = re.compile(r"^([^:\s]+):([^:\s]+):([0-7]+)(?: ([0-9a-f]{40}))?$")
_LINE = re.compile(r"^(\d+) (absent|link|directory|file)(?: (\S+):(\S+):([0-7]+):(\d+):(\d+))?(?: ([0-9a-f]{40}))?$")


class FilesError(Exception):
    """An entry or a state listing of the wrong shape."""


@dataclass(frozen=True)
class Observed:
    """What the node has at one path."""

    kind: str  # absent, link, directory or file
    owner: str = ""
    group: str = ""
    mode: str = ""
    uid: str = ""
    gid: str = ""
    sha1: str = ""


def normalize_entry(item: dict) -> dict:
    """The entry without unset options; content as copy would write it (lists and dicts as JSON)."""
    entry = {key: value for key, value in item.items() if value is not None}
    content = entry.get("content")
    if content is not None and not isinstance(content, str):
        entry["content"] = json.dumps(content)
    return entry


def _bad_dest(dest: str) -> str | None:
    return None if dest.startswith("/") and "\n" not in dest else "dest must be an absolute path on one line"


def check_entries(entries: list[dict]) -> list[str]:
    """Every problem of the entries at once, each naming the entry by its place and path."""
    problems: list[str] = []
    for where, entry in keyed_entries(entries, "files", "dest", problems, _bad_dest, "dest appears more than once",
                                      lambda dest: dest.rstrip("/")):
        state = entry.get("state") or "file"
        has_content, has_src = entry.get("content") is not None, entry.get("src") is not None
        if state == "file" and not has_content and not has_src:
            problems.append("%s: a file needs content or src" % where)
        if state == "file" and has_content and has_src:
            problems.append("%s: content and src are mutually exclusive" % where)
        if state == "directory" and (has_content or has_src):
            problems.append("%s: a directory takes no content or src" % where)
        if state == "absent" and any(entry.get(key) is not None for key in ("content", "src", "owner", "group", "mode")):
            problems.append("%s: an absent path takes no content, src, owner, group or mode" % where)
        mode = entry.get("mode")
        if mode is not None and not (isinstance(mode, str) and _MODE.match(mode)):
            problems.append("%s: mode must be quoted octal digits such as \"0644\", not %r" % (where, mode))
    return problems


def state_command(paths: list[str]) -> str:
    """One POSIX shell command printing ``<index> <kind>[ <owner>:<group>:<mode>:<uid>:<gid>][ <sha1>]``
    for each path, in order: read-only, so it runs in check mode too."""
    parts = []
    for index, path in enumerate(paths):
        quoted = shlex.quote(path)
        parts.append(
            "p=%s; if [ -L \"$p\" ]; then echo '%d link'; "
            "elif [ -d \"$p\" ]; then echo \"%d directory $(stat -c %%U:%%G:%%a:%%u:%%g -- \"$p\")\"; "
            "elif [ -f \"$p\" ]; then echo \"%d file $(stat -c %%U:%%G:%%a:%%u:%%g -- \"$p\") "
            "$(sha1sum < \"$p\" | cut -d' ' -f1)\"; "
            "else echo '%d absent'; fi" % (quoted, index, index, index, index))
    return "; ".join(parts)


def parse_state(text: str, count: int) -> list[Observed]:
    """The state_command output for ``count`` paths, in their order."""
    found: dict[int, Observed] = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        match = _LINE.match(line.strip())
        if not match:
            raise FilesError("unexpected line in the state read: %r" % line)
        index, kind = int(match[1]), match[2]
        if index >= count or index in found:
            raise FilesError("unexpected line in the state read: %r" % line)
        has_owner = match[3] is not None
        if kind in ("directory", "file") and not has_owner or kind == "file" and not match[8]:
            raise FilesError("unexpected line in the state read: %r" % line)
        found[index] = Observed(kind, *(match.group(3, 4, 5, 6, 7) if has_owner else ("",) * 5), sha1=match[8] or "")
    missing = [str(index) for index in range(count) if index not in found]
    if missing:
        raise FilesError("the state read said nothing about path %s" % ", ".join(missing))
    return [found[index] for index in range(count)]


def known_state(dest: str, text: object) -> Observed:
    """What a state read of the task's own (``known``) says about ``dest``: ``owner:group:mode``
    for a directory, ``owner:group:mode sha1`` (sha1 in hex) for a file, empty text for no path.
    Owner and group are names, or numeric ids where the node has no name for them. Such a read
    follows symbolic links, so a link counts as what it points at."""
    if text == "":
        return Observed("absent")
    match = _KNOWN.match(text) if isinstance(text, str) else None
    if not match:
        raise FilesError("known[%s]: %r is not \"owner:group:mode\" (a directory), \"owner:group:mode sha1\" (a file) "
                         "or \"\" (no path)" % (dest, text))
    owner, group, mode, sha1 = match.groups()
    return Observed("file" if sha1 else "directory", owner, group, mode, owner if owner.isdigit() else "",
                    group if group.isdigit() else "", sha1 or "")


def _known_key(path: str) -> str:
    return path.rstrip("/") or "/"


def unsettled(entries: list[dict], known: dict | None) -> list[dict]:
    """The entries the node must be read for, in order: those whose path ``known`` does not hold,
    and those whose known state differs from the entry (their read decides, as for any path)."""
    if not known:
        return list(entries)
    states = {_known_key(path): text for path, text in known.items()}
    return [entry for entry in entries if _known_key(entry["dest"]) not in states
            or differs(entry, known_state(entry["dest"], states[_known_key(entry["dest"])]))]


def content_sha1(content: str) -> str:
    """The sha1 sha1sum prints for the text, as it will be written (UTF-8)."""
    return hashlib.sha1(content.encode("utf-8")).hexdigest()


def differs(entry: dict, observed: Observed) -> bool:
    """Whether the node's path differs from the entry (a link always does: copy and file decide)."""
    state = entry.get("state") or "file"
    if state == "absent":
        return observed.kind != "absent"
    if observed.kind != state:
        return True
    if state == "file" and observed.sha1 != content_sha1(entry["content"]):
        return True
    if entry.get("mode") is not None and int(str(entry["mode"]), 8) != int(observed.mode, 8):
        return True
    for key, name, number in (("owner", observed.owner, observed.uid), ("group", observed.group, observed.gid)):
        wanted = entry.get(key)
        if wanted is not None and str(wanted) not in (name, number):
            return True
    return False


def text_command(paths: list[str]) -> str:
    """One POSIX shell command printing, for each path that is a regular file (not a link), a line
    ``@@text <index>`` and the file's first DIFF_MAX_BYTES + 1 bytes in base64 (enough to tell a
    file too large for a diff): the text a diff shows of a file removed. Read-only; prints nothing
    for no paths."""
    parts = []
    for index, path in enumerate(paths):
        parts.append("p=%s; if [ -f \"$p\" ] && [ ! -L \"$p\" ]; then echo '@@text %d'; head -c %d < \"$p\" | base64; fi"
                     % (shlex.quote(path), index, DIFF_MAX_BYTES + 1))
    return "; ".join(parts) or ":"


def parse_texts(text: str, paths: list[str]) -> dict[str, bytes]:
    """``{path: bytes}`` of the text_command output for ``paths``."""
    found: dict[str, bytes] = {}
    index, chunks = None, []

    def keep():
        if index is not None:
            try:
                found[paths[index]] = base64.b64decode("".join(chunks), validate=True)
            except (binascii.Error, ValueError):
                raise FilesError("the read of the files to remove printed no base64 for %s" % paths[index]) from None

    for line in text.splitlines():
        match = _TEXT_LINE.match(line.strip())
        if match:
            keep()
            index, chunks = int(match[1]), []
            if index >= len(paths):
                raise FilesError("unexpected line in the read of the files to remove: %r" % line)
        elif line.strip():
            if index is None:
                raise FilesError("unexpected line in the read of the files to remove: %r" % line)
            chunks.append(line.strip())
    keep()
    return found


def removal_text_diffs(diffs: list, texts: dict[str, bytes]) -> list:
    """The diffs, each removal of a file whose text was read (``texts``, parse_texts) shown as
    ansible.builtin.copy shows a content: the file's text before under its path, nothing after
    (a binary or large file as copy shows it). Other diffs stay as they are."""
    shown = []
    for diff in diffs:
        after = diff.get("after") if isinstance(diff, dict) else None
        if isinstance(after, dict) and after.get("state") == "absent" and after.get("path") in texts:
            diff = content_diff(after["path"], texts[after["path"]], None)
        shown.append(diff)
    return shown
