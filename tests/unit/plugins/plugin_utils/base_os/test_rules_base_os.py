# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""base_os_errors: the base_os role's input rules, as tables of good and bad data with exact messages."""

from __future__ import annotations

import pytest

from ansible_collections.gpucluster.core.plugins.plugin_utils.common._rules import PlayHosts, RoleInput, host_values
from ansible_collections.gpucluster.core.plugins.plugin_utils.base_os._rules import (
    base_os_errors, firewall_port, input_errors,
)

# The play's values as the run_once host (master) reads them: base_os_hostname's default is the
# host's own short name, templated there.
DEFAULTS = {
    "base_os_hostname": "master", "base_os_admin_user": "root",
    "base_os_admin_user_shell": "/bin/bash", "base_os_sysctl": {},
    "base_os_sysctl_defaults": {"net.core.rmem_max": 134217728, "net.ipv4.tcp_rmem": "4096 87380 134217728"},
    "base_os_sysctl_file": "/etc/sysctl.d/90-gpucluster.conf", "base_os_time_servers": [],
    "base_os_time_local_stratum": 10, "base_os_time_allow": [], "base_os_limits_memlock": "unlimited",
    "base_os_limits_nofile": 1048576, "base_os_limits_file": "/etc/security/limits.d/90-gpucluster.conf",
    "base_os_default_target": "multi-user.target", "base_os_firewall_extra_ports": [],
    "base_os_firewall_public_ports": ["22/tcp"], "base_os_admin_networks": [],
    "base_os_packages_extra": [], "base_os_chrony_daemon_options": None, "base_os_limits_extra": [],
}
GROUPS = {"cluster": ["master", "worker1"], "head": ["master"]}
W = "host 'worker1': "


def errors(worker=None, groups=None, hosts=("master", "worker1")):
    hostvars = {"master": {}, "worker1": dict(worker or {})}
    return base_os_errors(host_values(hostvars, hosts, DEFAULTS, DEFAULTS), hosts,
                          GROUPS if groups is None else groups, "cluster", "head")


@pytest.mark.parametrize("spec", ["8080/tcp", "1/udp", "65535/tcp", "60000-61000/udp"])
def test_good_firewall_port(spec):
    assert firewall_port(spec) is None


@pytest.mark.parametrize("spec, expected", [
    ("8080", "must be PORT/PROTO or FIRST-LAST/PROTO with proto tcp or udp, e.g. 8080/tcp (got '8080')"),
    ("8080/sctp", "must be PORT/PROTO or FIRST-LAST/PROTO with proto tcp or udp, e.g. 8080/tcp (got '8080/sctp')"),
    ("70000/tcp", "must be within 1-65535 (got 70000)"),
    ("0/tcp", "must be within 1-65535 (got 0)"),
    ("9-1/udp", "must be \"first-last\" with 1 <= first < last <= 65535 (got '9-1')"),
])
def test_bad_firewall_port(spec, expected):
    assert firewall_port(spec) == expected


@pytest.mark.parametrize("worker", [
    {},
    {"base_os_hostname": "gpu-01.cluster"},
    {"base_os_admin_user": "gpuadmin", "base_os_admin_user_shell": "/usr/bin/zsh"},
    {"base_os_sysctl": {"vm.nr_hugepages": 1024, "kernel.sched_autogroup_enabled": "0"}},
    {"base_os_sysctl": {"net.core.rmem_max": None}},  # null drops a default
    {"base_os_time_servers": ["ntp.example.org", "192.168.1.1", "fd00::1"], "base_os_time_allow": ["10.0.0.0/8", "fd00::/8"]},
    {"base_os_limits_memlock": 65536, "base_os_limits_nofile": "65536"},
    {"base_os_firewall_extra_ports": ["8080/tcp", "60000-61000/udp"], "base_os_packages_extra": ["htop", "python3-pip"]},
    {"base_os_firewall_public_ports": [], "base_os_admin_networks": ["172.16.0.0/16", "192.0.2.7/32", "fd00::/64"]},
    {"base_os_default_target": "graphical.target"},
    {"base_os_chrony_daemon_options": "-F 2 -r"}, {"base_os_chrony_daemon_options": ""},
    {"base_os_limits_extra": [{"domain": "@hpc", "type": "-", "item": "stack", "value": "unlimited"},
                              {"domain": "*", "type": "soft", "item": "nproc", "value": 4096}]},
], ids=str)
def test_good_input(worker):
    assert errors(worker) == []


@pytest.mark.parametrize("worker, expected", [
    ({"base_os_hostname": "gpu 01"},
     [W + "base_os_hostname: must be a host name (letters, digits, - and _ in dot-separated labels) (got 'gpu 01')"]),
    ({"base_os_admin_user": "Admin"},
     [W + "base_os_admin_user: must be a user/group name: a lowercase letter or _, then up to 31 lowercase "
      "letters, digits, _ or - (got 'Admin')"]),
    ({"base_os_admin_user_shell": "bash"}, [W + "base_os_admin_user_shell: must be an absolute path (got 'bash')"]),
    ({"base_os_sysctl": {"net core": 1}},
     [W + "base_os_sysctl: key 'net core' is not a sysctl key such as net.core.rmem_max"]),
    ({"base_os_sysctl": {"vm.swappiness": "10\nkernel.x = 1"}},
     [W + "base_os_sysctl[vm.swappiness]: must be a number or text on one line (got '10\\nkernel.x = 1')"]),
    ({"base_os_sysctl": {"vm.swappiness": ""}},
     [W + "base_os_sysctl[vm.swappiness]: must be a number or text on one line (got '')"]),
    ({"base_os_sysctl": [1]}, [W + "base_os_sysctl: must map sysctl keys to values (got [1])"]),
    ({"base_os_sysctl_file": "/etc/sysctl.conf"},
     [W + "base_os_sysctl_file: must be /etc/sysctl.d/<name>.conf, the only files read there (got '/etc/sysctl.conf')"]),
    ({"base_os_limits_file": "/etc/security/limits.d/x"},
     [W + "base_os_limits_file: must be /etc/security/limits.d/<name>.conf, the only files read there"
      " (got '/etc/security/limits.d/x')"]),
    ({"base_os_time_servers": ["ntp server"]},
     [W + "base_os_time_servers[0]: must be a host name or an IP address (got 'ntp server')"]),
    ({"base_os_time_local_stratum": 16}, [W + "base_os_time_local_stratum: must be within 1-15 (got 16)"]),
    ({"base_os_time_allow": ["10.0.0.1/8"]},
     [W + "base_os_time_allow[0]: must be a network in CIDR notation or an address (got '10.0.0.1/8')"]),
    ({"base_os_limits_memlock": "lots"},
     [W + "base_os_limits_memlock: must be an integer (got 'lots') or 'unlimited'"]),
    ({"base_os_limits_nofile": "unlimited"}, [W + "base_os_limits_nofile: must be an integer (got 'unlimited')"]),
    ({"base_os_limits_nofile": 0}, [W + "base_os_limits_nofile: must be within 1-1073741816 (got 0)"]),
    ({"base_os_default_target": "multi-user"},
     [W + "base_os_default_target: must be a systemd target such as multi-user.target (got 'multi-user')"]),
    ({"base_os_firewall_extra_ports": ["8080/tcp", "70000/tcp", "9-1/udp"]},
     [W + "base_os_firewall_extra_ports[1]: must be within 1-65535 (got 70000)",
      W + "base_os_firewall_extra_ports[2]: must be \"first-last\" with 1 <= first < last <= 65535 (got '9-1')"]),
    ({"base_os_firewall_public_ports": ["ssh"]},
     [W + "base_os_firewall_public_ports[0]: must be PORT/PROTO or FIRST-LAST/PROTO with proto tcp or udp, e.g. 8080/tcp"
      " (got 'ssh')"]),
    ({"base_os_admin_networks": ["172.16.0.0/16", "192.0.2.7", "10.1.1.1/24"]},
     [W + "base_os_admin_networks[1]: must be a network in CIDR notation with its prefix length, such as 10.0.0.0/24"
      " (got '192.0.2.7')",
      W + "base_os_admin_networks[2]: must be a network in CIDR notation (got '10.1.1.1/24': 10.1.1.1/24 has host bits set)"]),
    ({"base_os_chrony_daemon_options": "-F 1\nEVIL=1"},
     [W + "base_os_chrony_daemon_options: must be text on one line (got '-F 1\\nEVIL=1')"]),
    ({"base_os_chrony_daemon_options": '-F 1" -x "'},
     [W + "base_os_chrony_daemon_options: must not hold quotes, \\, $ or ` (it is written inside double quotes into"
      " chrony's environment file) (got '-F 1\" -x \"')"]),
    ({"base_os_chrony_daemon_options": "$(reboot)"},
     [W + "base_os_chrony_daemon_options: must not hold quotes, \\, $ or ` (it is written inside double quotes into"
      " chrony's environment file) (got '$(reboot)')"]),
    ({"base_os_limits_extra": [{"domain": "*", "type": "soft", "item": "stack", "value": "8192\n* hard core 0"},
                               {"domain": "hpc users", "type": "-", "item": "nproc", "value": 10}]},
     [W + "base_os_limits_extra[0].value: must be one word without blanks, quotes, #, \\, comma or = "
      "(got '8192\\n* hard core 0')",
      W + "base_os_limits_extra[1].domain: must be one word without blanks, quotes, #, \\, comma or = "
      "(got 'hpc users')"]),
    ({"base_os_limits_extra": ["* soft stack 8192"]},
     [W + "base_os_limits_extra[0]: must be a dict with domain, type, item and value (got '* soft stack 8192')"]),
    ({"base_os_packages_extra": ["htop; rm -rf /"]},
     [W + "base_os_packages_extra[0]: must be a package name (got 'htop; rm -rf /')"]),
], ids=str)
def test_bad_input(worker, expected):
    assert errors(worker) == expected


@pytest.mark.parametrize("groups, hosts, expected", [
    ({"head": ["master"]}, ("master",),
     ["base_os_cluster_group: inventory group 'cluster' must exist and hold every node"]),
    ({"cluster": ["master"]}, ("master",),
     ["base_os_head_group: inventory group 'head' must exist and hold the head node"]),
    ({"cluster": ["worker1"], "head": ["master"]}, ("worker1",),
     ["base_os_head_group: the first host of 'head' (master) must be in base_os_cluster_group 'cluster'"]),
    ({"cluster": ["master"], "head": ["master"]}, ("master", "worker1"),
     ["host 'worker1': base_os_cluster_group: the host must be in inventory group 'cluster'"]),
], ids=str)
def test_bad_groups(groups, hosts, expected):
    assert errors(groups=groups, hosts=hosts) == expected


def test_the_groups_come_from_the_plays_values():
    # The common input check's entry: the play's hosts with their values, the group names from the
    # play's values (shared), the inventory's groups.
    given = RoleInput(hosts={"gpu1": DEFAULTS}, shared=dict(DEFAULTS, base_os_cluster_group="nodes"),
                      groups={"nodes": ["master"], "head": ["master"]}, play=PlayHosts(hosts=("gpu1",)))
    assert input_errors(given) == ["host 'gpu1': base_os_cluster_group: the host must be in inventory group 'nodes'"]
