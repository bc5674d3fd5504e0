#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # pylint: disable=invalid-name

DOCUMENTATION = r"""
---
module: docker_daemon_json
short_description: Merge a container runtime and settings into Docker's daemon.json
version_added: 0.1.0
description:
  - Reads Docker's C(daemon.json) on the host, merges O(settings) and the runtime O(runtime_name) into it,
    and writes the file only when its parsed content changes (key order and layout do not count).
    Keys the module is not asked about (for example C(storage-driver)) stay.
  - A C(null) value in O(settings) removes that top-level key.
  - Returns whether dockerd can apply the change with a reload (SIGHUP) or needs a restart.
  - Fails, writing nothing, when the file is not a JSON object.
  - A new or rewritten file gets mode C(0644), owned by the user the module runs as; a missing folder
    (C(/etc/docker) before Docker is installed) is made with mode C(0755).
author:
  - gpucluster.core developers (@gpucluster)
options:
  path:
    description: The daemon.json file.
    type: path
    default: /etc/docker/daemon.json
  settings:
    description: Keys merged into the file (dictionaries recursively); C(null) removes a top-level key.
    type: dict
    default: {}
  runtime_name:
    description: The name of the runtime under C(runtimes).
    type: str
    default: nvidia
  runtime:
    description: The runtime's definition (C(path), C(args)).
    type: dict
    default: {path: nvidia-container-runtime, args: []}
  default_runtime:
    description:
      - Make O(runtime_name) the C(default-runtime).
      - When false, a C(default-runtime) naming O(runtime_name) is removed.
    type: bool
    default: false
  backup:
    description: Keep a copy of the file before it is changed.
    type: bool
    default: false
extends_documentation_fragment:
  - gpucluster.core.attributes.writes
"""

EXAMPLES = r"""
- name: Add the nvidia runtime to daemon.json
  gpucluster.core.docker_daemon_json:
    settings:
      log-driver: journald
  register: daemon_json

- name: Apply it
  ansible.builtin.service:
    name: docker
    state: "{{ 'reloaded' if daemon_json.reload else 'restarted' }}"
  when: daemon_json is changed
"""

RETURN = r"""
content:
  description: The merged daemon.json object.
  returned: success
  type: dict
  sample: {"runtimes": {"nvidia": {"path": "nvidia-container-runtime", "args": []}}}
changed_keys:
  description: The top-level keys added, changed or removed, sorted.
  returned: success
  type: list
  elements: str
  sample: [runtimes]
reload:
  description: True when dockerd applies every change on reload (SIGHUP); false when it needs a restart.
  returned: success
  type: bool
  sample: true
backup_file:
  description: The copy of the former file.
  returned: changed and O(backup=true) and the file existed
  type: str
"""

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpucluster.core.plugins.module_utils._textfile import TextFileError, read_text, write_text
from ansible_collections.gpucluster.core.plugins.module_utils._daemon_json import (
    DaemonJsonError,
    changed_keys,
    merge,
    parse,
    reload_suffices,
    render,
)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            path=dict(type="path", default="/etc/docker/daemon.json"),
            settings=dict(type="dict", default={}),
            runtime_name=dict(type="str", default="nvidia"),
            runtime=dict(type="dict", default={"path": "nvidia-container-runtime", "args": []}),
            default_runtime=dict(type="bool", default=False),
            backup=dict(type="bool", default=False),
        ),
        supports_check_mode=True,
    )
    path = module.params["path"]
    try:
        before = read_text(path) or ""
        current = parse(before, path)
    except (DaemonJsonError, TextFileError) as err:
        module.fail_json(msg=str(err))
    wanted = merge(current, module.params["settings"], module.params["runtime_name"],
                   module.params["runtime"], module.params["default_runtime"])
    result = dict(
        changed=wanted != current,
        content=wanted,
        changed_keys=changed_keys(current, wanted),
        reload=reload_suffices(current, wanted),
    )
    if result["changed"]:
        after = render(wanted)
        if module._diff:  # pylint: disable=protected-access
            result["diff"] = dict(before_header=path, after_header=path, before=before, after=after)
        if not module.check_mode:
            if module.params["backup"] and os.path.exists(path):
                result["backup_file"] = module.backup_local(path)
            write_text(module, path, after)
            module.set_mode_if_different(path, "0644", False)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
