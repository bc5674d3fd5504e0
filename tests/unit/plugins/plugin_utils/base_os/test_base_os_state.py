# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""base_os derived data: the role's node read and ssh_known_hosts lines."""

from __future__ import annotations

import pytest

from ansible_collections.gpucluster.core.plugins.plugin_utils.base_os._state import known_hosts_lines, node_state
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._rules import RuleError

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


@pytest.mark.parametrize("entries, expected", [
    # A host's entries apart in the table, another host's between them: its names in the table's
    # order, then its addresses in the table's order.
    ([{"host": "master", "names": ["master"], "address": "192.168.1.10"},
      {"host": "worker1", "names": ["worker1"], "address": "192.168.1.11"},
      {"host": "master", "names": ["master-ib"], "address": "10.0.0.10"}],
     ["master,master-ib,192.168.1.10,10.0.0.10 " + ED, "worker1,192.168.1.11 " + ED]),
    # A name or address given twice is said once, where it first comes.
    ([{"host": "master", "names": ["master", "head"], "address": "192.168.1.10"},
      {"host": "worker1", "names": ["worker1"], "address": "192.168.1.11"},
      {"host": "master", "names": ["head"], "address": "192.168.1.10"}],
     ["master,head,192.168.1.10 " + ED, "worker1,192.168.1.11 " + ED]),
])
def test_known_hosts_lines_entries_apart(entries, expected):
    assert known_hosts_lines({"master": ED, "worker1": ED}, entries) == expected


def test_known_hosts_lines_thousand_hosts():
    # What a 1,000-node cluster renders on every host (benchmarks/bench_controller_scale.sh).
    hosts = ["gpu%04d" % i for i in range(1000)]
    entries = [entry for i, host in enumerate(hosts) for entry in (
        {"host": host, "names": [host], "address": "10.232.%d.%d" % (i // 200, 10 + i % 200)},
        {"host": host, "names": [host + "-ib"], "address": "10.233.%d.%d" % (i // 200, 10 + i % 200)})]
    lines = known_hosts_lines({host: ED + "\n" + EC for host in hosts}, entries)
    assert len(lines) == 2000
    assert lines[-1] == "gpu0999,gpu0999-ib,10.232.4.209,10.233.4.209 " + EC


# The SSH read on the sandbox's head node (Debian 12) once the admin key pair exists.
SSH_READ = """[passwd]
admin:x:1000:1000::/home/admin:/bin/bash
[admin_key]
%s admin@cluster (gpucluster.core)
[authorized_keys]
%s admin@cluster (gpucluster.core)
[host_keys]
%s root@master
%s root@master
[known_hosts]
root:root:644
master,192.168.1.10 %s
""" % (ED, ED, EC, ED, ED)


SSH = ["ssh"]
ALL = ["hostname", "default_target", "swaps", "ssh"]
OTHERS = """[hostname]
static=gpu01
running=gpu01.cluster
[default_target]
multi-user.target
[swaps]
Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority
/dev/sda3                               partition\t8388604\t\t0\t\t-2
"""
NONE = {"hostname": None, "default_target": None, "swap_areas": None, "ssh": None}


def ssh_node_state(text):
    return node_state(text, SSH)["ssh"]


def test_node_state_reads_every_section():
    assert node_state(OTHERS + SSH_READ, ALL) == {
        "hostname": {"static": "gpu01", "running": "gpu01.cluster"},
        "default_target": "multi-user.target",
        "swap_areas": 1,
        "ssh": ssh_node_state(SSH_READ),
    }


@pytest.mark.parametrize("text, sections, want", [
    ("", [], NONE),
    ("[hostname]\nstatic=\nrunning=localhost\n", ["hostname"], dict(NONE, hostname={"static": "", "running": "localhost"})),
    ("[swaps]\nFilename\tType\tSize\tUsed\tPriority\n", ["swaps"], dict(NONE, swap_areas=0)),
    ("[default_target]\ngraphical.target\n", ["default_target"], dict(NONE, default_target="graphical.target")),
])
def test_node_state_reads_only_the_sections_asked_for(text, sections, want):
    assert node_state(text, sections) == want


def test_ssh_node_state_reads_the_user_and_the_keys():
    assert ssh_node_state(SSH_READ) == {
        "admin_user_exists": True,
        "admin_key": ED + " admin@cluster (gpucluster.core)",
        "authorized_keys": [ED + " admin@cluster (gpucluster.core)"],
        "host_keys": "%s root@master\n%s root@master" % (EC, ED),
        "known_hosts_attributes": "root:root:644",
        "known_hosts_block": ["master,192.168.1.10 " + ED],
    }


def test_ssh_node_state_of_a_fresh_node():
    assert ssh_node_state("[passwd]\n[admin_key]\n[authorized_keys]\n[host_keys]\n[known_hosts]\nabsent\n") == {
        "admin_user_exists": False, "admin_key": "", "authorized_keys": [], "host_keys": "",
        "known_hosts_attributes": "absent", "known_hosts_block": []}


@pytest.mark.parametrize("text, sections, message", [
    (SSH_READ.replace("[admin_key]\n", "[admin_key]\n%s x\n" % RSA), SSH,
     "base_os_node_state: more than one admin_key line in the node read"),
    (SSH_READ.replace("[host_keys]\n", "[host_keys]\ncat: /etc/ssh/ssh_host_rsa_key.pub: No such file\n"), SSH,
     "base_os_node_state: not an SSH public key line: 'cat: /etc/ssh/ssh_host_rsa_key.pub: No such file'"),
    (SSH_READ.replace("root:root:644\n", ""), SSH,
     "base_os_node_state: the known_hosts section must start with owner:group:mode or absent"),
    ("[passwd]\n[admin_key]\n[authorized_keys]\n[host_keys]\n", SSH, "base_os_node_state: the node read lacks known_hosts"),
    ("admin\n" + SSH_READ, SSH, "base_os_node_state: a line before any section in the node read: 'admin'"),
    (OTHERS + SSH_READ, ["hostname"], "base_os_node_state: unexpected section '[default_target]' in the node read"),
    ("[passwd]\n", ["passwd"], "base_os_node_state: unknown steps asked for: passwd"),
    ("", ["motd"], "base_os_node_state: unknown steps asked for: motd"),
    ("[hostname]\ngpu01\ngpu01\n", ["hostname"],
     "base_os_node_state: the hostname section must be one static= and one running= line, not ['gpu01', 'gpu01']"),
    ("[hostname]\nrunning=gpu01\n", ["hostname"],
     "base_os_node_state: the hostname section must be one static= and one running= line, not ['running=gpu01']"),
    ("[default_target]\n", ["default_target"], "base_os_node_state: the default_target section must be one line, not []"),
    ("[swaps]\n/dev/sda3 partition 8388604 0 -2\n", ["swaps"],
     "base_os_node_state: the swaps section must start with /proc/swaps' header, not ['/dev/sda3 partition 8388604 0 -2']"),
])
def test_node_state_is_strict(text, sections, message):
    with pytest.raises(RuleError) as err:
        node_state(text, sections)
    assert str(err.value) == message
