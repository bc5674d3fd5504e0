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
    task. M(ansible.builtin.copy) writes only the files whose content or attributes differ and
    M(ansible.builtin.file) makes only the directories that are missing or differ, each with its own
    check and diff modes; M(ansible.builtin.file) removes only the absent paths that exist. An
    unchanged file therefore costs no module call, where
    M(ansible.builtin.template) and M(ansible.builtin.copy) make two per file and run.
  - Render templates in the task with P(ansible.builtin.template#lookup); the content is compared as
    it will be written (UTF-8).
  - Owner, group and mode are compared only where given; a path that is a symbolic link always goes
    to copy or file, which decide.
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
    details: The read runs in check mode too; copy and file then run in check mode.
  diff_mode:
    support: full
    details: The diffs of the paths written, as copy and file give them.
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

from ansible.module_utils.basic import AnsibleModule

# Also the action plugin's (plugins/action/files.py), which does the work.
ARGUMENT_SPEC = {
    "files": {
        "type": "list",
        "elements": "dict",
        "required": True,
        "options": {
            "dest": {"type": "path", "required": True},
            "state": {"type": "str", "default": "file", "choices": ["file", "directory", "absent"]},
            "content": {"type": "raw"},
            "owner": {"type": "str"},
            "group": {"type": "str"},
            "mode": {"type": "raw"},
        },
    },
}


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    module.fail_json(msg="gpucluster.core.files runs through its action plugin; call it as a task")


if __name__ == "__main__":
    main()
