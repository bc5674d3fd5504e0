# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""ofed_errors: every error in the ofed role's input, for every host of the play at once."""

from __future__ import annotations

DOCUMENTATION = r"""
name: ofed_errors
author: gpucluster.core contributors
version_added: 0.1.0
short_description: Check the ofed role's variables of every host and return every error
description:
  - Internal to the collection's roles and not a public interface; it may change in any release.
  - Checks each host's values that end up in a repository, a download, a command line or a config
    file (the DOCA-OFED or MLNX_OFED pin, its URLs, labels, checksum, C(mlnxofedinstall) options and work
    directory, the package names, C(ofed_ibstat_path)); the expected ports (C(<ca>:<port>) with port
    1-255, or C([all]) alone, none twice) and C(ofed_min_rate_gbps) (0-10000); where
    C(ofed_network_manage) is on, the interface name, the MTU (576-65520), that C(ofed_network) is one of
    C(ofed_networks) with a CIDR that overlaps none of the host's other networks and that the host has an
    address on it; where C(ofed_nccl_conf_manage)
    is on, the nccl.conf path, C(ofed_nccl_socket_ifname), C(ofed_nccl_roce_gid_index) (0-255) and
    C(ofed_nccl_settings) (C(NCCL_*) names, one-line values).
  - Across the hosts (with Python's C(ipaddress)), each managed address lies inside its network and is
    not the network or broadcast address of an IPv4 network of /30 or larger, no two hosts share an
    address, and a network has the same CIDR on every host.
  - >-
    Returns every error at once, each reading C(host 'NAME': VARIABLE: reason); an empty list when all
    is good. The rules live in plugins/plugin_utils/_rules_ofed.py.
  - Types and choices are checked by the role's argument spec before; preflight gathers each host's
    values (the role's defaults are templated per host), calls this filter once and fails before any
    host is touched.
options:
  _input:
    description:
      - Each host of the play, by inventory name, to its values of the role's variables by name.
    type: dict
    required: true
"""

EXAMPLES = r"""
- name: Refuse bad OFED data before any host is touched
  ansible.builtin.assert:
    that: __errors | length == 0
    fail_msg: "{{ __errors | join('; ') }}"
  vars:
    __errors: >-
      {{ {'gpu01': {'ofed_source': 'doca', 'ofed_doca_version': '2.9.1',
                    'ofed_doca_base_url': 'https://linux.mellanox.com/public/repo/doca',
                    'ofed_doca_key_url': 'https://linux.mellanox.com/public/repo/doca/GPG-KEY-Mellanox.pub',
                    'ofed_expected_ports': ['mlx5_0:1'], 'ofed_min_rate_gbps': 400,
                    'ofed_network_manage': false, 'ofed_nccl_conf_manage': false}}
         | gpucluster.core.ofed_errors }}
"""

RETURN = r"""
_value:
  description: The error messages, empty when the input is good.
  type: list
  elements: str
"""

from ansible_collections.gpucluster.core.plugins.plugin_utils._filter import as_filter
from ansible_collections.gpucluster.core.plugins.plugin_utils._rules_ofed import ofed_errors


class FilterModule:
    """The ofed role's input rules."""

    def filters(self):
        return {"ofed_errors": as_filter("ofed_errors", ofed_errors)}
