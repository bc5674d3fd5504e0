#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # pylint: disable=invalid-name

DOCUMENTATION = r"""
---
module: files
short_description: Write files and directories and remove paths, contacting the node once when nothing differs
version_added: 0.1.0
description:
  - One shell command (no module) reads the kind, owner, group, mode and sha1 of every path of the
    task. Then one call of this module writes the files whose content or attributes differ, makes the
    directories that are missing or differ and removes the absent paths that exist, in the task's
    order. An unchanged task therefore costs no module call, and a task with several new files one,
    where M(ansible.builtin.template) and M(ansible.builtin.copy) make two or three calls per file.
  - Files are written to a temporary file in their directory and moved over the old one (atomic); a
    file that exists keeps its owner, mode and SELinux context unless the entry gives them, a new one
    gets the umask's mode and the default context. The directory of a file must exist (list it as a
    C(directory) entry before the file), as with M(ansible.builtin.copy).
  - A file takes its text from O(files[].content) or from a template (O(files[].src)), which the action plugin
    renders on the controller as P(ansible.builtin.template#lookup) renders it; either is compared as it will be
    written (UTF-8).
  - A role that reads its node once for all its tasks can hand that read to the task in O(known). The paths it
    shows as asked for are then settled on the controller, and a task whose paths all are contacts no node at all,
    so an unchanged re-run costs what a skipped task costs. This replaces the C(when) the roles kept beside such a
    task, comparing hand-built C(owner:group:mode sha1) strings with that read, because the module is then the one
    place that compares, with the same rules (owner by name or id, mode as a number, content as it will be
    written) whether the state comes from O(known) or from its own read, and the task reads like an ordinary file
    task. A path the known state shows different, or does not hold, is read from the node as any
    other (that read decides, for a symbolic link too), so a changed run costs what it cost before.
  - Owner, group and mode are compared only where given. A path that is a symbolic link goes to
    M(ansible.builtin.copy) or M(ansible.builtin.file), which decide about the link.
  - Runs through its action plugin; the roles of gpucluster.core write their files with it.
author:
  - gpucluster.core developers (@gpucluster)
options:
  files:
    description: The files and directories, written in this order (a directory before its files).
    type: list
    elements: dict
    required: true
    suboptions:
      dest:
        description: Absolute path on the node.
        type: path
        required: true
      state:
        description:
          - C(file) (with O(files[].content) or O(files[].src)), C(directory), or C(absent) (removed where it
            exists, a directory with what it holds; no content, src, owner, group or mode).
        type: str
        default: file
        choices: [file, directory, absent]
      content:
        description:
          - The file's text (a list or dict is written as JSON, as copy does).
          - Mutually exclusive with O(files[].src); a file needs one of them.
        type: raw
      src:
        description:
          - A template, rendered on the controller with the task's variables as
            C(lookup('ansible.builtin.template', src)) renders it, which is the file's text.
          - A relative path is searched as that lookup searches it, in the C(templates/) folder of the role (and
            of the roles that include it), then of the playbook; the template's own C({% include %}) and
            C({% import %}) find their files there too.
          - C(ansible_managed) and the C(template_*) variables are the lookup's (C(template_destpath) is empty, as
            in the lookup, where M(ansible.builtin.template) sets it to the destination).
          - Mutually exclusive with O(files[].content); only for C(state=file).
        type: str
      owner:
        description: User name or uid.
        type: str
      group:
        description: Group name or gid.
        type: str
      mode:
        description: Octal mode as quoted text, such as C("0644") (a YAML number is refused).
        type: raw
  known:
    description:
      - What a read of the node earlier in the play found at some of the paths, as a dict of the path to
        C(owner:group:mode) for a directory, C(owner:group:mode sha1) for a file (the octal mode without
        a leading zero, the sha1 of its content in hex; owner and group by name, or by id where the node
        has no name for them) and an empty string for a path that does not exist. The slurm role's state read
        (C(files/slurm_node_state.py)) prints its C(paths) in this form.
      - An entry whose path the dict holds and whose state there is what the entry asks for is settled without
        a read of the node; the others are read and written as without O(known). Give only a read of this
        node made in this play, after which nothing but this task changes these paths. A stale state can
        leave a path unwritten, never wrongly written (the module compares again on the node).
      - A read that follows symbolic links (as C(stat) does) shows a link as what it points at, so a link whose
        target is as asked for stays a link.
    type: dict
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - ansible.builtin.action_common_attributes.flow
attributes:
  action:
    support: full
  async:
    support: none
  bypass_host_loop:
    support: none
  check_mode:
    support: full
    details: The read runs in check mode too; the module then reports what it would write.
  diff_mode:
    support: full
    details:
      - One diff per path changed, as the builtin module that does the same job returns it (see RV(diff)), in check mode too.
  platform:
    platforms: posix
notes:
  - The node needs C(stat) and C(sha1sum) (GNU coreutils).
seealso:
  - module: ansible.builtin.copy
  - module: ansible.builtin.file
  - module: ansible.builtin.template
  - plugin: ansible.builtin.template
    plugin_type: lookup
"""

EXAMPLES = r"""
- name: Write the exporter's folder, unit and settings (one read of the node when nothing differs)
  gpucluster.core.files:
    files:
      - dest: /etc/dcgm-exporter
        state: directory
        owner: root
        group: root
        mode: "0755"
      - dest: /etc/systemd/system/dcgm-exporter.service
        src: dcgm-exporter.service.j2
        owner: root
        group: root
        mode: "0644"
  register: exporter_files
  notify: Restart the DCGM exporter

- name: Write the settings from a template, compared with the state the role read before (no read when unchanged)
  gpucluster.core.files:
    files:
      - dest: /etc/slurm/gres.conf
        src: gres.conf.j2
        owner: root
        group: root
        mode: "0644"
    # {"/etc/slurm/gres.conf": "root:root:644 5d41402abc4b2a76b9719d911017c592a35b7c17", ...}
    known: "{{ node_state.paths }}"
"""

RETURN = r"""
changed_paths:
  description: The paths written, changed or removed (would be, in check mode), in the task's order.
  returned: always
  type: list
  elements: str
  sample: ["/etc/systemd/system/dcgm-exporter.service"]
diff:
  description:
    - In diff mode, one item per path changed (would be, in check mode), in the task's order, with the keys and
      values M(ansible.builtin.copy) (a file's content) or M(ansible.builtin.file) (attributes, directories,
      removals) return for the same change.
    - A new or changed content, as copy shows it (the content alone, not the attributes set with it);
      V(before_header) and V(after_header) are the path, V(before) is empty for a new file (with no
      V(before_header)). An old file that is binary (a NUL byte in its first 8192 bytes) or larger than 104448
      bytes (ansible's default C(MAX_FILE_SIZE_FOR_DIFF)) shows as C(dst_binary) or C(dst_larger) instead of
      V(before); a new content, as C(src_binary) or C(src_larger) instead of V(after).
    - An unchanged content with an owner, group or mode that differs, as file shows it, V(before) and V(after)
      being dicts with the path and the attributes that change (C(owner) and C(group) as numeric ids, C(mode) as
      octal text such as C("0644")); a file with several hard links has C(state) C(hard) before and C(file)
      after, as in file's diff.
    - A directory made, as file shows it, with C(state) C(absent) before and C(directory) after, and the attributes
      the new directory gets from the entry (in check mode too, where file itself shows none); a directory whose
      attributes differ, with these attributes.
    - A path removed, as file shows it, with its C(state) before (C(file), C(hard) or C(directory)) and
      C(absent) after; a directory's before also lists what it held (C(path_content) with C(directories) and
      C(files)).
    - A path that is a symbolic link is written by copy or file, whose diffs are returned as they are.
  returned: changed, in diff mode
  type: list
  elements: dict
  sample:
    - before: ""
      after: "a=1\n"
      after_header: /etc/dcgm-exporter/a.conf
    - before_header: /etc/systemd/system/dcgm-exporter.service
      before: "[Unit]\n"
      after_header: /etc/systemd/system/dcgm-exporter.service
      after: "[Unit]\nDescription=DCGM exporter\n"
    - before: {path: /etc/dcgm-exporter/counters.csv, mode: "0600", owner: 0}
      after: {path: /etc/dcgm-exporter/counters.csv, mode: "0644", owner: 65534}
    - before: {path: /etc/dcgm-exporter, state: absent, mode: "0755"}
      after: {path: /etc/dcgm-exporter, state: directory, mode: "0750"}
    - before: {path: /etc/dcgm-exporter/old.csv, state: file}
      after: {path: /etc/dcgm-exporter/old.csv, state: absent}
"""

import grp
import os
import pwd
import shutil
import stat
import tempfile

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_bytes, to_native
from ansible_collections.gpucluster.core.plugins.module_utils._file_entries import (
    FILE_ENTRY_OPTIONS,
    content_diff,
    path_diff,
)

# Also the action plugin's (plugins/action/files.py), which validates the task with it.
# src and known are the action plugin's: it renders the templates and settles the known paths, and
# hands the module only the entries left to write, each with its content.
ARGUMENT_SPEC = {
    "files": {
        "type": "list",
        "elements": "dict",
        "required": True,
        "options": dict(FILE_ENTRY_OPTIONS, src={"type": "str"}),
    },
    "known": {"type": "dict"},
}


def _kind(path):
    if os.path.islink(path):
        return "link"
    if os.path.isdir(path):
        return "directory"
    if os.path.exists(path):
        return "file"
    return "absent"


def _file_state(path):
    """The state ansible.builtin.file names in its diff (its get_state): a file with more than
    one hard link is C(hard)."""
    kind = _kind(path)
    if kind == "file" and os.stat(path).st_nlink > 1:
        return "hard"
    return kind


def _attributes(module, path, entry, changed, diff=None):
    """Owner, group and mode where given (each call says whether it changed anything; with a
    diff, the values before and after go into it as ansible.builtin.file shows them)."""
    if entry.get("owner") is not None:
        changed = module.set_owner_if_different(path, entry["owner"], changed, diff)
    if entry.get("group") is not None:
        changed = module.set_group_if_different(path, entry["group"], changed, diff)
    if entry.get("mode") is not None:
        changed = module.set_mode_if_different(path, entry["mode"], changed, diff)
    return changed


def _write_file(module, entry, made):
    dest = entry["dest"]
    content = to_bytes(entry["content"], errors="surrogate_or_strict")
    kind = _kind(dest)
    if kind == "directory":
        module.fail_json(msg="%s is a directory, not a file" % dest)
    parent = os.path.dirname(dest) or "/"
    if not os.path.isdir(parent) and parent not in made:
        module.fail_json(msg="%s: destination directory %s does not exist" % (dest, parent))
    old = None
    if kind == "file":
        with open(dest, "rb") as handle:
            old = handle.read()
    if old == content:
        # copy hands an unchanged content to ansible.builtin.file, whose diff names the path and
        # the attributes that change.
        diff = path_diff(dest, "file", _file_state(dest))
        changed = _attributes(module, dest, entry, False, diff)
        return changed, (diff if changed else None)
    # A new or changed content: copy's diff of the content alone (it sets the attributes it is
    # given without showing them).
    diff = content_diff(dest, old, content)
    if module.check_mode:
        return True, diff
    handle, temp = tempfile.mkstemp(prefix=".gpucluster-", dir=parent)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(content)
        # atomic_move gives the new file the old one's owner, mode and SELinux context (a new
        # file: the umask's mode and the default context); the entry's attributes go on after.
        module.atomic_move(temp, dest, unsafe_writes=False)
    finally:
        if os.path.exists(temp):
            os.unlink(temp)
    _attributes(module, dest, entry, True)
    return True, diff


def _lookup(module, dest, value, database, what):
    try:
        return int(value)
    except ValueError:
        try:
            return database(value)
        except KeyError:
            module.fail_json(path=dest, msg="%s failed: failed to look up %s %s" % (
                "chown" if what == "user" else "chgrp", what, value))


def _new_directory_attributes(module, dest, entry, diff):
    """In check mode, the attributes ansible.builtin.file would report after making the directory
    (its check mode shows none): the new directory's owner (this user), group (this user's, or the
    setgid parent's) and mode (the umask's) before, the entry's after, where they differ."""
    parent = os.path.dirname(dest.rstrip("/")) or "/"
    while not os.path.isdir(parent) and parent != "/":
        parent = os.path.dirname(parent) or "/"
    inherit = os.stat(parent).st_mode & stat.S_ISGID
    umask = os.umask(0)
    os.umask(umask)
    before = {"owner": os.geteuid(), "group": os.stat(parent).st_gid if inherit else os.getegid(),
              "mode": (0o777 & ~umask) | inherit}
    after = {}
    if entry.get("owner") is not None:
        after["owner"] = _lookup(module, dest, entry["owner"], lambda name: pwd.getpwnam(name).pw_uid, "user")
    if entry.get("group") is not None:
        after["group"] = _lookup(module, dest, entry["group"], lambda name: grp.getgrnam(name).gr_gid, "group")
    if entry.get("mode") is not None:
        after["mode"] = int(str(entry["mode"]), 8)
    for key in ("owner", "group", "mode"):
        if key in after and after[key] != before[key]:
            # As set_mode_if_different shows a mode: octal text.
            diff["before"][key] = "0%03o" % before[key] if key == "mode" else before[key]
            diff["after"][key] = "0%03o" % after[key] if key == "mode" else after[key]


def _write_directory(module, entry, made):
    dest = entry["dest"]
    kind = _kind(dest)
    if kind == "file":
        module.fail_json(msg="%s is a file, not a directory" % dest)
    # ansible.builtin.file's diff: the state when the directory is new, the attributes that change.
    diff = path_diff(dest, "directory", kind)
    if kind == "absent":
        made.add(dest.rstrip("/"))
        if module.check_mode:
            _new_directory_attributes(module, dest, entry, diff)
            return True, diff
        os.makedirs(dest)
        _attributes(module, dest, entry, True, diff)
        return True, diff
    changed = _attributes(module, dest, entry, False, diff)
    return changed, (diff if changed else None)


def _remove(module, entry, made):  # pylint: disable=unused-argument
    dest = entry["dest"]
    kind = _kind(dest)
    if kind == "absent":
        return False, None
    # ansible.builtin.file's diff of a removal: the state before, and what a directory held.
    diff = path_diff(dest, "absent", _file_state(dest))
    if kind == "directory":
        held = {"directories": [], "files": []}
        for base, folders, names in os.walk(dest):
            held["directories"].extend(os.path.join(base, folder) for folder in folders)
            held["files"].extend(os.path.join(base, name) for name in names)
        diff["before"]["path_content"] = held
    if not module.check_mode:
        if kind == "directory":
            shutil.rmtree(dest)
        else:
            os.unlink(dest)
    return True, diff


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    changed_paths, diffs = [], []
    made = set()  # directories this call makes (would make, in check mode)
    writers = {"file": _write_file, "directory": _write_directory, "absent": _remove}
    for entry in module.params["files"]:
        if entry.get("src") is not None:
            module.fail_json(msg="%s: src is rendered by the action plugin; the module takes content" % entry["dest"],
                             changed_paths=changed_paths)
        if entry["state"] == "file" and entry.get("content") is None:
            module.fail_json(msg="%s: a file needs content" % entry["dest"], changed_paths=changed_paths)
        try:
            changed, diff = writers[entry["state"]](module, entry, made)
        except (OSError, IOError) as exc:
            module.fail_json(msg="%s: %s" % (entry["dest"], to_native(exc)), changed_paths=changed_paths)
        if changed:
            changed_paths.append(entry["dest"])
            if diff is not None:
                diffs.append(diff)
    result = {"changed": bool(changed_paths), "changed_paths": changed_paths}
    if module._diff and diffs:
        result["diff"] = diffs
    module.exit_json(**result)


if __name__ == "__main__":
    main()
