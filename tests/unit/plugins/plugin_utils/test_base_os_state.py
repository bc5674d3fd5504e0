# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""base_os derived data: ssh_known_hosts lines."""

from __future__ import annotations

import pytest

from ansible_collections.gpucluster.core.plugins.plugin_utils._base_os_state import known_hosts_lines

ED = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKq"
EC = "ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAI"
RSA = "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABgQC"
ENTRIES = [
    {"host": "master", "names": ["master"], "address": "192.168.1.10"},
    {"host": "master", "names": ["master-ib"], "address": "10.0.0.10"},
    {"host": "worker1", "names": ["worker1", "worker1-mgmt"], "address": "192.168.1.11"},
]


@pytest.mark.parametrize("host_keys, entries, expected", [
    # Every key under the inventory name, each cluster name once and each address, in that order;
    # the comment is dropped.
    ({"master": ED + " root@master\n" + EC + " root@master\n"}, ENTRIES,
     ["master,master-ib,192.168.1.10,10.0.0.10 " + ED, "master,master-ib,192.168.1.10,10.0.0.10 " + EC]),
    ({"worker1": RSA + "\n", "master": ED}, ENTRIES,
     ["worker1,worker1-mgmt,192.168.1.11 " + RSA, "master,master-ib,192.168.1.10,10.0.0.10 " + ED]),
    # A host the hosts table does not name: its inventory name alone.
    ({"login1": ED + " root@login1"}, ENTRIES, ["login1 " + ED]),
    # Lines that are not keys (cat's errors, blanks) are left out.
    ({"master": "cat: /etc/ssh/ssh_host_dsa_key.pub: No such file or directory\n\n" + ED}, ENTRIES,
     ["master,master-ib,192.168.1.10,10.0.0.10 " + ED]),
    ({"master": ""}, ENTRIES, []),
    ({}, ENTRIES, []),
])
def test_known_hosts_lines(host_keys, entries, expected):
    assert known_hosts_lines(host_keys, entries) == expected
