#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # pylint: disable=invalid-name

DOCUMENTATION = r"""
---
module: services
short_description: Start and enable systemd units, contacting the node once when nothing differs
version_added: 0.1.0
description:
  - One C(systemctl show) (a shell command, no module) reads the load, active and unit file state
    of every unit of the task. M(ansible.builtin.systemd_service) runs only for the units that are
    not as asked, with its own check mode. A unit that is already started and enabled therefore
    costs no module call, where M(ansible.builtin.service) makes one per unit and run, with
    several C(systemctl) calls in it.
  - The comparison is the builtin module's own. A unit that is active or activating is started;
    one that is active, activating or deactivating is not stopped; the unit file states
    C(enabled), C(enabled-runtime) and C(static) are enabled, C(disabled) is not. A unit that is
    not loaded, or whose unit file state is anything else (generated, alias, indirect, masked),
    always goes to the builtin module, which decides or fails with its own message.
  - Only the idempotent states. Restarts and reloads stay handlers with
    M(ansible.builtin.systemd_service), which always acts.
  - Runs through its action plugin; the roles of gpucluster.core start their services with it.
author:
  - gpucluster.core developers (@gpucluster)
options:
  services:
    description: The units, handled in this order.
    type: list
    elements: dict
    required: true
    suboptions:
      name:
        description: One unit name; without a unit type it is a service (C(ssh) is C(ssh.service)).
        type: str
        required: true
      state:
        description: C(started) or C(stopped); left alone when not given.
        type: str
        choices: [started, stopped]
      enabled:
        description: Whether the unit starts at boot; left alone when not given.
        type: bool
  daemon_reload:
    description:
      - Run C(systemctl daemon-reload) before the read (a unit file changed), through the builtin
        module, in check mode too as it does.
    type: bool
    default: false
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
    details: The read runs in check mode too; the builtin module then runs in check mode.
  diff_mode:
    support: none
  platform:
    platforms: posix
notes:
  - The node runs systemd.
seealso:
  - module: ansible.builtin.systemd_service
"""

EXAMPLES = r"""
- name: Start Prometheus and Alertmanager and enable them at boot (one read when they run)
  gpucluster.core.services:
    services:
      - {name: prometheus, state: started, enabled: true}
      - {name: prometheus-alertmanager, state: started, enabled: true}

- name: Enable the NFS server without starting it, after its unit changed
  gpucluster.core.services:
    services:
      - {name: nfs-server, enabled: true}
    daemon_reload: true
"""

RETURN = r"""
changed_services:
  description: The units started, stopped, enabled or disabled (would be, in check mode), in the task's order.
  returned: always
  type: list
  elements: str
  sample: ["chrony"]
"""

from ansible.module_utils.basic import AnsibleModule

# Also the action plugin's (plugins/action/services.py), which does the work.
ARGUMENT_SPEC = {
    "services": {
        "type": "list",
        "elements": "dict",
        "required": True,
        "options": {
            "name": {"type": "str", "required": True},
            "state": {"type": "str", "choices": ["started", "stopped"]},
            "enabled": {"type": "bool"},
        },
    },
    "daemon_reload": {"type": "bool", "default": False},
}


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    module.fail_json(msg="gpucluster.core.services runs through its action plugin; call it as a task")


if __name__ == "__main__":
    main()
