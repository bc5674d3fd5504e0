# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""slurm_errors: every error in the slurm role's input, at once."""

from __future__ import annotations

DOCUMENTATION = r"""
name: slurm_errors
author: gpucluster.core contributors
version_added: 0.1.0
short_description: Check the slurm role's variables and return every error
description:
  - Internal to the collection's roles and not a public interface; it may change in any release.
  - Checks the group counts (one or two controllers, at least one compute node, at most one slurmdbd
    host), the host names that go into slurm.conf, the partitions, C(slurm_srun_port_range), the site
    repository, the munge key and the slurmdbd password (their messages never show them), the keys
    and values of C(slurm_config) and C(slurm_cgroup_config), each compute node's values that go
    into its NodeName line, and the names of the accounting QoS, accounts and users.
  - Returns every error at once as a list of messages, each naming the variable (and the host for
    per-host values); an empty list when all is good. The rules live in
    plugins/plugin_utils/_rules_slurm.py.
  - Runs on the controller only; the role's preflight fails with these messages before any host is touched.
options:
  _input:
    description: The values every host shares, by variable name (C(slurm_cluster_name), C(slurm_partitions), ...).
    type: dict
    required: true
  hostvars:
    description: The play's C(hostvars).
    type: dict
    required: true
  hosts:
    description: The compute nodes whose per-host values are checked.
    type: list
    elements: str
    required: true
  defaults:
    description: The role's values of the per-host variables, for hosts that do not set their own.
    type: dict
    required: true
  groups:
    description: The inventory groups (C(groups)).
    type: dict
    required: true
"""

EXAMPLES = r"""
- name: Check the role's variables
  ansible.builtin.assert:
    that: __errors | length == 0
    fail_msg: "{{ __errors }}"
  vars:
    __errors: >-
      {{ {'slurm_cluster_name': slurm_cluster_name, 'slurm_partitions': slurm_partitions}
         | gpucluster.core.slurm_errors(hostvars=hostvars, hosts=groups['slurm_compute'],
                                        defaults={'slurm_node_features': []}, groups=groups) }}
"""

RETURN = r"""
_value:
  description: The error messages, empty when the input is good.
  type: list
  elements: str
"""

from ansible_collections.gpucluster.core.plugins.plugin_utils._filter import as_filter
from ansible_collections.gpucluster.core.plugins.plugin_utils._rules_slurm import HOST_NAMES, slurm_errors


def _slurm_errors(settings, hostvars, hosts, defaults, groups):
    """The messages: each compute node's values (its own, else the role's) and the shared ones."""
    per_host = {}
    for host in hosts:
        values = hostvars.get(host, {}) if hasattr(hostvars, "get") else {}
        per_host[host] = {name: (values[name] if name in values else defaults.get(name))
                          for name in HOST_NAMES if name in values or name in defaults}
    return slurm_errors(dict(settings), per_host, {k: list(v) for k, v in groups.items()})


class FilterModule:
    """The slurm role's input rules."""

    def filters(self):
        return {"slurm_errors": as_filter("slurm_errors", _slurm_errors)}
