# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""cluster_hosts_entries: the inventory's networks and addresses, validated."""

from __future__ import annotations

import pytest

from ansible.errors import AnsibleFilterError
from ansible_collections.gpucluster.core.plugins.filter.base_os import cluster_hosts_entries

LAB_NETWORKS = [
    {"name": "management", "cidr": "192.168.1.0/24", "suffix": ""},
    {"name": "compute", "cidr": "10.0.0.0/24", "suffix": "-ib"},
    {"name": "storage", "cidr": "10.1.0.0/24", "suffix": "-st", "required": False},
]
LAB_NODES = {
    "master": {"management": "192.168.1.10", "compute": "10.0.0.10", "storage": "10.1.0.10"},
    "worker1": {"management": "192.168.1.11", "compute": "10.0.0.11"},
    "worker2": {"management": "192.168.1.12", "compute": "10.0.0.12"},
}


def test_lab_entries_in_host_then_network_order():
    entries = cluster_hosts_entries(LAB_NODES, LAB_NETWORKS)
    assert [(e["host"], e["network"], e["address"], e["names"]) for e in entries] == [
        ("master", "management", "192.168.1.10", ["master"]),
        ("master", "compute", "10.0.0.10", ["master-ib"]),
        ("master", "storage", "10.1.0.10", ["master-st"]),
        ("worker1", "management", "192.168.1.11", ["worker1"]),
        ("worker1", "compute", "10.0.0.11", ["worker1-ib"]),
        ("worker2", "management", "192.168.1.12", ["worker2"]),
        ("worker2", "compute", "10.0.0.12", ["worker2-ib"]),
    ]


def test_domain_puts_fqdn_first_and_ignores_dots():
    entries = cluster_hosts_entries(
        {"gpu01": {"management": "192.168.1.21"}}, LAB_NETWORKS[:1], domain=".hpc.example.org."
    )
    assert entries[0]["names"] == ["gpu01.hpc.example.org", "gpu01"]


def test_addresses_are_normalised():
    entries = cluster_hosts_entries(
        {"n1": {"v6": "FD00:0:0:0::0A"}}, [{"name": "v6", "cidr": "fd00::/64"}]
    )
    assert entries[0]["address"] == "fd00::a"


@pytest.mark.parametrize(
    "nodes, networks, message",
    [
        pytest.param(
            {"worker1": {"management": "192.168.2.11", "compute": "10.0.0.11"}},
            LAB_NETWORKS,
            "host 'worker1': base_os_addresses.management 192.168.2.11 is outside network "
            "'management' (192.168.1.0/24)",
            id="outside-cidr",
        ),
        pytest.param(
            {
                "worker1": {"management": "192.168.1.11", "compute": "10.0.0.11"},
                "worker2": {"management": "192.168.1.12", "compute": "10.0.0.11"},
            },
            LAB_NETWORKS,
            "host 'worker2': base_os_addresses.compute 10.0.0.11 is also the address of host 'worker1'",
            id="duplicate-address",
        ),
        pytest.param(
            {"worker1": {"management": "192.168.1.11", "compute": "10.0.0.11", "ipmi": "10.9.0.1"}},
            LAB_NETWORKS,
            "host 'worker1': base_os_addresses names network 'ipmi', which base_os_networks does not "
            "define (defined: management, compute, storage)",
            id="undefined-network",
        ),
        pytest.param(
            {"worker1": {"management": "192.168.1.11"}},
            LAB_NETWORKS,
            "host 'worker1': base_os_addresses has no address on network 'compute', which is required",
            id="missing-required-address",
        ),
        pytest.param(
            {"worker1": {"management": "192.168.1.311", "compute": "10.0.0.11"}},
            LAB_NETWORKS,
            "host 'worker1': base_os_addresses.management '192.168.1.311' is not an IP address",
            id="not-an-address",
        ),
        pytest.param(
            {"worker1": {"management": "192.168.1.255", "compute": "10.0.0.11"}},
            LAB_NETWORKS,
            "host 'worker1': base_os_addresses.management 192.168.1.255 is the broadcast address of "
            "'management' (192.168.1.0/24)",
            id="broadcast-address",
        ),
        pytest.param(
            {"worker1": {"management": "192.168.1.0", "compute": "10.0.0.11"}},
            LAB_NETWORKS,
            "host 'worker1': base_os_addresses.management 192.168.1.0 is the network address of "
            "'management' (192.168.1.0/24)",
            id="network-address",
        ),
        pytest.param(
            {"gpu": {"management": "192.168.1.1", "compute": "10.0.0.1"},
             "gpu-ib": {"management": "192.168.1.2", "compute": "10.0.0.2"}},
            LAB_NETWORKS,
            "host 'gpu-ib': name 'gpu-ib' on network 'management' is already the name of host 'gpu' "
            "on network 'compute'",
            id="duplicate-name",
        ),
        pytest.param(
            {"worker1": ["192.168.1.11"]},
            LAB_NETWORKS,
            "host 'worker1': base_os_addresses must be a dict of network name to address",
            id="addresses-not-a-dict",
        ),
        pytest.param(
            {}, [{"name": "management", "cidr": "192.168.1.0"}],
            "base_os_networks[0] (management): cidr '192.168.1.0' is not a network: a CIDR needs a "
            "prefix length, as in 10.0.0.0/24",
            id="cidr-without-prefix",
        ),
        pytest.param(
            {}, [{"name": "management", "cidr": "192.168.1.10/24"}],
            "base_os_networks[0] (management): cidr 192.168.1.10/24 has host bits set; the network is "
            "192.168.1.0/24",
            id="cidr-host-bits",
        ),
        pytest.param(
            {}, [{"name": "a", "cidr": "10.0.0.0/24"}, {"name": "a", "cidr": "10.0.1.0/24"}],
            "base_os_networks[1] (a): network name 'a' is defined twice",
            id="network-defined-twice",
        ),
        pytest.param(
            {}, [{"cidr": "10.0.0.0/24"}],
            "base_os_networks[0] has no name",
            id="network-without-name",
        ),
        pytest.param(
            {}, [],
            "base_os_networks must be a non-empty list of networks",
            id="no-networks",
        ),
    ],
)
def test_bad_input_is_refused_with_its_name(nodes, networks, message):
    with pytest.raises(AnsibleFilterError) as err:
        cluster_hosts_entries(nodes, networks)
    assert err.value.message == message


def test_optional_network_may_be_left_out():
    entries = cluster_hosts_entries(
        {"worker1": {"management": "192.168.1.11", "compute": "10.0.0.11", "storage": None}},
        LAB_NETWORKS,
    )
    assert [e["network"] for e in entries] == ["management", "compute"]


def test_variable_names_in_messages_follow_the_caller():
    with pytest.raises(AnsibleFilterError) as err:
        cluster_hosts_entries({"n": {"x": "1.2.3.4"}}, LAB_NETWORKS[:1],
                              addresses_var="nfs_addresses", networks_var="nfs_networks")
    assert err.value.message.startswith("host 'n': nfs_addresses names network 'x', which nfs_networks")


@pytest.mark.parametrize(
    "nodes, networks, domain, message",
    [
        pytest.param(
            {"gpu1": {"management": "192.168.1.1"}, "GPU1": {"management": "192.168.1.2"}},
            LAB_NETWORKS[:1], "",
            "host 'GPU1': name 'GPU1' on network 'management' is already the name of host 'gpu1' "
            "on network 'management'",
            id="duplicate-name-in-other-case",
        ),
        pytest.param(
            {"gpu1": {"management": "192.168.1.1"}},
            [{"name": "management", "cidr": "192.168.1.0/24", "suffix": " ib"}], "",
            "host 'gpu1': name 'gpu1 ib' on network 'management' is not a valid host name (letters, "
            "digits, '-' and '_' in dot-separated labels); check the host name, the suffix in "
            "base_os_networks and the domain",
            id="suffix-with-a-blank",
        ),
        pytest.param(
            {"gpu1": {"management": "192.168.1.1"}},
            LAB_NETWORKS[:1], "hpc..example.org",
            "host 'gpu1': name 'gpu1.hpc..example.org' on network 'management' is not a valid host "
            "name (letters, digits, '-' and '_' in dot-separated labels); check the host name, the "
            "suffix in base_os_networks and the domain",
            id="domain-with-an-empty-label",
        ),
        pytest.param(
            {"gpu1": {"management": "192.168.1.1"}},
            [{"name": "management", "cidr": "192.168.1.0/24", "suffix": "#ib"}], "",
            "host 'gpu1': name 'gpu1#ib' on network 'management' is not a valid host name (letters, "
            "digits, '-' and '_' in dot-separated labels); check the host name, the suffix in "
            "base_os_networks and the domain",
            id="suffix-with-a-comment-sign",
        ),
    ],
)
def test_bad_names_are_refused(nodes, networks, domain, message):
    with pytest.raises(AnsibleFilterError) as err:
        cluster_hosts_entries(nodes, networks, domain=domain)
    assert err.value.message == message


def test_names_may_carry_digits_underscores_and_dotted_hosts():
    entries = cluster_hosts_entries(
        {"gpu_01": {"m": "10.0.0.1"}, "10.9.0.2": {"m": "10.0.0.2"}},
        [{"name": "m", "cidr": "10.0.0.0/24", "suffix": "-m1"}], domain="hpc.example.org",
    )
    assert [e["names"] for e in entries] == [
        ["gpu_01-m1.hpc.example.org", "gpu_01-m1"],
        ["10.9.0.2-m1.hpc.example.org", "10.9.0.2-m1"],
    ]


@pytest.mark.parametrize("cidr, addresses", [
    pytest.param("10.0.0.0/31", ["10.0.0.0", "10.0.0.1"], id="ipv4-31-both-addresses"),
    pytest.param("10.0.0.7/32", ["10.0.0.7"], id="ipv4-32-the-one-address"),
    pytest.param("fd00::/127", ["fd00::", "fd00::1"], id="ipv6-127"),
    pytest.param("fd00::/64", ["fd00::1", "fd00::ffff:ffff:ffff:ffff"], id="ipv6-no-broadcast"),
])
def test_point_to_point_and_ipv6_networks_use_every_address(cidr, addresses):
    nodes = {f"n{i}": {"p2p": address} for i, address in enumerate(addresses)}
    entries = cluster_hosts_entries(nodes, [{"name": "p2p", "cidr": cidr}])
    assert [e["address"] for e in entries] == addresses


def test_ipv4_address_is_outside_an_ipv6_network():
    with pytest.raises(AnsibleFilterError) as err:
        cluster_hosts_entries({"n1": {"v6": "10.0.0.1"}}, [{"name": "v6", "cidr": "fd00::/64"}])
    assert err.value.message == "host 'n1': base_os_addresses.v6 10.0.0.1 is outside network 'v6' (fd00::/64)"


def test_required_must_be_a_real_boolean():
    with pytest.raises(AnsibleFilterError) as err:
        cluster_hosts_entries({}, [{"name": "m", "cidr": "10.0.0.0/24", "required": "maybe"}])
    assert err.value.message == "base_os_networks[0] (m): required must be true or false, not 'maybe'"


def test_required_accepts_yaml_style_strings():
    entries = cluster_hosts_entries(
        {"n": {"m": "10.0.0.1"}}, [{"name": "m", "cidr": "10.0.0.0/24"},
                                   {"name": "s", "cidr": "10.1.0.0/24", "required": "false"}])
    assert [e["network"] for e in entries] == ["m"]


def test_short_ipv4_forms_are_not_addresses():
    with pytest.raises(AnsibleFilterError) as err:
        cluster_hosts_entries({"n": {"m": "10.1"}}, [{"name": "m", "cidr": "10.0.0.0/8"}])
    assert err.value.message == "host 'n': base_os_addresses.m '10.1' is not an IP address"
