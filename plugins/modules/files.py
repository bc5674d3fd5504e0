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
  - Render templates in the task with P(ansible.builtin.template#lookup); the content is compared as
    it will be written (UTF-8).
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
          - C(file) (with O(files[].content)), C(directory), or C(absent) (removed where it exists,
            a directory with what it holds; no content, owner, group or mode).
        type: str
        default: file
        choices: [file, directory, absent]
      content:
        description: The file's text (a list or dict is written as JSON, as copy does).
        type: raw
      owner:
        description: User name or uid.
        type: str
      group:
        description: Group name or gid.
        type: str
      mode:
        description: Octal mode as quoted text, such as C("0644") (a YAML number is refused).
        type: raw
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
    details: Before and after of each file written (large or binary files are not shown), and the state of each directory made or path removed.
  platform:
    platforms: posix
notes:
  - The node needs C(stat) and C(sha1sum) (GNU coreutils).
seealso:
  - module: ansible.builtin.copy
  - module: ansible.builtin.file
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
        content: "{{ lookup('ansible.builtin.template', 'dcgm-exporter.service.j2') }}"
        owner: root
        group: root
        mode: "0644"
  register: exporter_files
  notify: Restart the DCGM exporter
"""

RETURN = r"""
changed_paths:
  description: The paths written, changed or removed (would be, in check mode), in the task's order.
  returned: always
  type: list
  elements: str
  sample: ["/etc/systemd/system/dcgm-exporter.service"]
"""

import os
import shutil
import tempfile

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_bytes, to_native
from ansible_collections.gpucluster.core.plugins.module_utils._file_entries import FILE_ENTRY_OPTIONS

# Also the action plugin's (plugins/action/files.py), which validates the task with it.
ARGUMENT_SPEC = {
    "files": {
        "type": "list",
        "elements": "dict",
        "required": True,
        "options": FILE_ENTRY_OPTIONS,
    },
}

# A file larger than this shows as "(not shown)" in a diff, as a binary one does.
_DIFF_MAX_BYTES = 104448


def _kind(path):
    if os.path.islink(path):
        return "link"
    if os.path.isdir(path):
        return "directory"
    if os.path.exists(path):
        return "file"
    return "absent"


def _diff_text(data):
    """The bytes as text for a diff, or "(not shown)" when they are binary or large."""
    if len(data) > _DIFF_MAX_BYTES:
        return "(not shown)\n"
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return "(not shown)\n"


def _attributes(module, path, entry, changed):
    """Owner, group and mode where given (each call says whether it changed anything)."""
    if entry.get("owner") is not None:
        changed = module.set_owner_if_different(path, entry["owner"], changed)
    if entry.get("group") is not None:
        changed = module.set_group_if_different(path, entry["group"], changed)
    if entry.get("mode") is not None:
        changed = module.set_mode_if_different(path, entry["mode"], changed)
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
    old = b""
    if kind == "file":
        with open(dest, "rb") as handle:
            old = handle.read()
    same = kind == "file" and old == content
    diff = {"before_header": dest, "after_header": dest,
            "before": _diff_text(old) if kind == "file" else ("" if kind == "absent" else "(not shown)\n"),
            "after": _diff_text(content)}
    if same:
        changed = _attributes(module, dest, entry, False)
        return changed, (diff if changed else None)
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


def _write_directory(module, entry, made):
    dest = entry["dest"]
    kind = _kind(dest)
    if kind == "file":
        module.fail_json(msg="%s is a file, not a directory" % dest)
    diff = {"before": {"path": dest, "state": kind}, "after": {"path": dest, "state": "directory"}}
    if kind == "absent":
        made.add(dest.rstrip("/"))
        if module.check_mode:
            return True, diff
        os.makedirs(dest)
        _attributes(module, dest, entry, True)
        return True, diff
    changed = _attributes(module, dest, entry, False)
    return changed, (diff if changed else None)


def _remove(module, entry, made):  # pylint: disable=unused-argument
    dest = entry["dest"]
    kind = _kind(dest)
    if kind == "absent":
        return False, None
    diff = {"before": {"path": dest, "state": kind}, "after": {"path": dest, "state": "absent"}}
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
