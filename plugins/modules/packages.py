#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # pylint: disable=invalid-name

DOCUMENTATION = r"""
---
module: packages
short_description: Install packages, asking apt only when a node lacks one
version_added: 0.1.0
description:
  - On apt hosts, one C(dpkg-query) (a shell command, no module) lists the installed versions of
    the requested packages; M(ansible.builtin.apt) runs only for the specs the node does not
    satisfy, with this task's options. A no-op re-run therefore never opens apt's cache, which
    costs seconds per node and task.
  - A spec is C(name) (any installed version) or C(name=version) (exactly that version; C(*) in the
    version is a wildcard, as apt reads it). A spec this module cannot judge for certain (an
    architecture qualifier, a version relation such as C(>=), a virtual package) always goes to apt.
  - On apt hosts it also holds and releases packages (O(hold), O(release)) from the same read.
  - On other hosts the names go to M(ansible.builtin.package); the apt-only options are not used
    there.
  - Runs through its action plugin; the roles of gpucluster.core install their packages with it.
author:
  - gpucluster.core developers (@gpucluster)
options:
  name:
    description: Package names or C(name=version) specs.
    type: list
    elements: str
    required: true
  state:
    description: Only C(present) (installed, at the version given).
    type: str
    default: present
    choices: [present]
  update_cache:
    description: Refresh apt's lists before installing (only when something is to install).
    type: bool
    default: false
  cache_valid_time:
    description: With O(update_cache), do not refresh lists younger than this many seconds.
    type: int
    default: 0
  allow_downgrade:
    description: Let apt install an older version than the installed one (a pin moved back).
    type: bool
    default: false
  allow_change_held_packages:
    description: Let apt change packages on hold (the roles hold what they pin).
    type: bool
    default: false
  install_recommends:
    description:
      - C(false) installs without the packages' Recommends (apt's C(--no-install-recommends)), C(true) with them.
        Unset, apt's own configuration decides (Debian and Ubuntu default to installing them). apt only.
    type: bool
  files:
    description:
      - Files, directories or absent paths, as M(gpucluster.core.files) takes them, written before apt runs
        (the apt preferences that pin the packages, say). They are read in the same call as dpkg-query and
        written in one call of the M(gpucluster.core.files) module, only where they differ, in check and diff
        modes too; on other hosts as well.
      - In diff mode each file written or removed is shown as M(gpucluster.core.files) shows it (see RV(diff)); a
        file removed (a pin file with no pins left, say) as its text before and none after.
    type: list
    elements: dict
    default: []
    suboptions:
      dest:
        description: Absolute path on the node.
        type: path
        required: true
      state:
        description: C(file) (with O(files[].content)), C(directory) or C(absent).
        type: str
        default: file
        choices: [file, directory, absent]
      content:
        description: The file's text.
        type: raw
      owner:
        description: User name or uid.
        type: str
      group:
        description: Group name or gid.
        type: str
      mode:
        description: Octal mode as quoted text, such as C("0644").
        type: raw
  hold:
    description:
      - Package names to hold (dpkg selection C(hold), which C(apt-mark showhold) and unattended-upgrades
        see), so that nothing upgrades them unplanned. Read in the same C(dpkg-query) call; one C(dpkg --set-selections)
        runs only for installed packages that are not held yet, those this task installed included.
        A name that is not installed (check mode on a fresh node) is left alone.
      - apt only; on dnf hosts the roles lock versions with versionlock instead.
    type: list
    elements: str
    default: []
  release:
    description:
      - Package names whose hold is released (selection C(install)) where they are installed and held (a
        package no longer pinned). apt only.
    type: list
    elements: str
    default: []
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
    details: The dpkg-query read runs in check mode too; apt then runs in check mode.
  diff_mode:
    support: partial
    details:
      - The O(files) written or removed (would be, in check mode), as text before and after (see RV(diff)); then
        the diff M(ansible.builtin.apt) returns when it runs. Holds and releases show in RV(held) and RV(released)
        only.
  platform:
    platforms: [debian, rhel]
notes:
  - The node needs facts C(pkg_mgr) or C(os_family) (a minimal fact gathering has them).
  - In diff mode the read of O(files) also reads the files to remove, with C(head) and C(base64) (GNU coreutils).
seealso:
  - module: ansible.builtin.apt
  - module: ansible.builtin.package
"""

EXAMPLES = r"""
- name: Install the driver at its pin (apt runs only when the node lacks it)
  gpucluster.core.packages:
    name: [cuda-drivers-550=550.54.15-1, nvidia-persistenced]
    allow_downgrade: true
    allow_change_held_packages: true

- name: Install the toolkits at their pins (apt preferences written first), hold them and release the one no longer pinned
  gpucluster.core.packages:
    name: [cuda-toolkit-12-4=12.4.1-1, libnccl2=2.21.5-1+cuda12.4]
    files:
      - "{{ [{'name': 'cuda-toolkit-12-4', 'version': '12.4.1-1'}] | gpucluster.core.apt_pin_file('cuda') }}"
    hold: [cuda-toolkit-12-4, libnccl2]
    release: [libcudnn9-cuda-12]

- name: Install the Slurm daemons without their recommended plugin packages
  gpucluster.core.packages:
    name: [munge, slurm-client, slurmd]
    install_recommends: false

- name: Install the NFS client, refreshing apt's lists first when it is missing
  gpucluster.core.packages:
    name: [nfs-common]
    update_cache: true
    cache_valid_time: 3600
"""

RETURN = r"""
changed_paths:
  description: The O(files) written, changed or removed (would be, in check mode).
  returned: always
  type: list
  elements: str
  sample: ["/etc/apt/preferences.d/gpucluster-nvidia-driver"]
pending:
  description: The specs the node did not satisfy, handed to apt (empty when none).
  returned: on apt hosts
  type: list
  elements: str
  sample: ["cuda-drivers-550=550.90.07-1"]
held:
  description: The packages put on hold (would be, in check mode).
  returned: on apt hosts
  type: list
  elements: str
  sample: ["libnccl2"]
released:
  description: The packages whose hold was released (would be, in check mode).
  returned: on apt hosts
  type: list
  elements: str
  sample: []
diff:
  description:
    - In diff mode, one item per file of O(files) written or removed (would be, in check mode), in their order, then
      the diff M(ansible.builtin.apt) returned, if any.
    - A file written with a new or changed content, as M(ansible.builtin.copy) shows it, V(before_header) and
      V(after_header) naming the file (a new file has V(before) empty and no V(before_header)); a file removed, its
      text before and V(after) empty, under the same headers; a binary file or one larger than 104448 bytes shows as
      C(dst_binary) or C(dst_larger) instead of its text.
    - A file whose content is unchanged but whose owner, group or mode differs, a directory, or a path that is a
      symbolic link, as M(gpucluster.core.files) shows it (the keys of M(ansible.builtin.file)'s diff).
  returned: changed, in diff mode
  type: list
  elements: dict
  sample:
    - before_header: /etc/apt/preferences.d/gpucluster-cuda
      before: "# Ansible managed\n\nPackage: cuda-toolkit-12-4\nPin: version 12.4.0-1\nPin-Priority: 1001\n"
      after_header: /etc/apt/preferences.d/gpucluster-cuda
      after: "# Ansible managed\n\nPackage: cuda-toolkit-12-4\nPin: version 12.4.1-1\nPin-Priority: 1001\n"
    - before_header: /etc/apt/preferences.d/gpucluster-nvidia-driver
      before: "# Ansible managed\n\nPackage: cuda-drivers-550\nPin: version 550.*\nPin-Priority: 1001\n"
      after_header: /etc/apt/preferences.d/gpucluster-nvidia-driver
      after: ""
msg:
  description: What was done (apt's own message when apt ran).
  returned: always
  type: str
  sample: every package is installed as asked
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gpucluster.core.plugins.module_utils._file_entries import FILE_ENTRY_OPTIONS

# Also the action plugin's (plugins/action/packages.py), which does the work.
ARGUMENT_SPEC = {
    "name": {"type": "list", "elements": "str", "required": True},
    "state": {"type": "str", "default": "present", "choices": ["present"]},
    "update_cache": {"type": "bool", "default": False},
    "cache_valid_time": {"type": "int", "default": 0},
    "allow_downgrade": {"type": "bool", "default": False},
    "allow_change_held_packages": {"type": "bool", "default": False},
    "install_recommends": {"type": "bool"},
    "files": {"type": "list", "elements": "dict", "default": [], "options": FILE_ENTRY_OPTIONS},
    "hold": {"type": "list", "elements": "str", "default": []},
    "release": {"type": "list", "elements": "str", "default": []},
}


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    module.fail_json(msg="gpucluster.core.packages runs through its action plugin; call it as a task")


if __name__ == "__main__":
    main()
