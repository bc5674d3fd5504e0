# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""base_os_errors: every error in the base_os role's input (besides the hosts table), at once; also
base_os_known_hosts and base_os_ssh_node_state (documented in the .yml files of the same names)."""

from __future__ import annotations

DOCUMENTATION = r"""
name: base_os_errors
author: gpucluster.core contributors
version_added: 0.2.0
short_description: Check the base_os role's variables and return every error
description:
  - Checks the inventory groups (C(base_os_cluster_group) holds every host of the play, the first host of
    C(base_os_head_group) is in it) and each host's values that go into a config file or a command line
    (host name, admin user and shell, sysctl keys and values and file, time servers and allowed
    networks, limits, default target, extra firewall ports, extra packages).
  - The hosts table (C(base_os_networks), C(base_os_addresses)) is checked by
    M(gpucluster.core.cluster_hosts_entries) instead.
  - Returns every error at once as a list of messages, each naming the variable (and the host for
    per-host values); an empty list when all is good. The rules live in
    plugins/plugin_utils/_rules_base_os.py.
options:
  _input:
    description: The play's C(hostvars).
    type: dict
    required: true
  hosts:
    description: The hosts of the play whose values are checked.
    type: list
    elements: str
    required: true
  groups:
    description: The inventory groups (C(groups)).
    type: dict
    required: true
  defaults:
    description: The play's values of the role's variables, for hosts whose inventory sets none.
    type: dict
    required: true
"""

EXAMPLES = r"""
- name: Refuse bad base_os data before any host is touched
  ansible.builtin.assert:
    that: __errors | length == 0
    fail_msg: "{{ __errors | join('; ') }}"
  vars:
    __errors: >-
      {{ hostvars | gpucluster.core.base_os_errors(hosts=ansible_play_hosts, groups=groups,
                                                   defaults={'base_os_cluster_group': 'cluster',
                                                             'base_os_head_group': 'head'}) }}
"""

RETURN = r"""
_value:
  description: The error messages, empty when the input is good.
  type: list
  elements: str
"""

from ansible_collections.gpucluster.core.plugins.plugin_utils._filter import as_filter
from ansible_collections.gpucluster.core.plugins.plugin_utils._base_os_state import known_hosts_lines, ssh_node_state
from ansible_collections.gpucluster.core.plugins.plugin_utils._rules_base_os import base_os_errors, per_host


def _base_os_errors(hostvars, hosts, groups, defaults):
    """The messages over every host's values (its own, else the play's)."""
    hosts = list(hosts)
    return base_os_errors(per_host(hostvars, hosts, defaults), hosts,
                          {k: list(v) for k, v in groups.items()},
                          defaults.get("base_os_cluster_group", "cluster"),
                          defaults.get("base_os_head_group", "head"))


def _known_hosts(host_keys, entries):
    return known_hosts_lines(dict(host_keys), entries)


class FilterModule:
    """The base_os role's input rules, the parse of its SSH read and known_hosts lines."""

    def filters(self):
        return {"base_os_errors": as_filter("base_os_errors", _base_os_errors),
                "base_os_known_hosts": as_filter("base_os_known_hosts", _known_hosts),
                "base_os_ssh_node_state": as_filter("base_os_ssh_node_state", ssh_node_state)}
