# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""base_os: bad inventory data fails before any host is touched, with a message naming it."""

from __future__ import annotations

import pytest

from roleplay import assert_passes_validation, assert_refused_untouched, run_role

NETWORKS = [
    {"name": "management", "cidr": "192.168.1.0/24", "suffix": ""},
    {"name": "compute", "cidr": "10.0.0.0/24", "suffix": "-ib"},
]
GOOD = {
    "master": {"management": "192.168.1.10", "compute": "10.0.0.10"},
    "worker1": {"management": "192.168.1.11", "compute": "10.0.0.11"},
    "worker2": {"management": "192.168.1.12", "compute": "10.0.0.12"},
}


def run_base_os(tmp_path, addresses, networks=None, **extra_vars):
    return run_role(
        tmp_path, "gpucluster.core.base_os",
        hosts={host: {"base_os_addresses": addrs} for host, addrs in addresses.items()},
        groups={"cluster": list(addresses), "head": ["master"]},
        group_vars={"base_os_networks": networks if networks is not None else NETWORKS, **extra_vars},
    )


def test_good_data_passes_preflight_validation(tmp_path):
    # The control for the cases below: the same inventory with good data gets past the
    # validation and only then fails, because the hosts do not exist.
    assert_passes_validation(run_base_os(tmp_path, GOOD), GOOD, "base_os_")


@pytest.mark.parametrize(
    "change, expected",
    [
        pytest.param(
            {"worker1": {"management": "192.168.1.11", "compute": "10.0.1.11"}},
            "host 'worker1': base_os_addresses.compute 10.0.1.11 is outside network 'compute' (10.0.0.0/24)",
            id="address-outside-cidr",
        ),
        pytest.param(
            {"worker2": {"management": "192.168.1.11", "compute": "10.0.0.12"}},
            "host 'worker2': base_os_addresses.management 192.168.1.11 is also the address of host 'worker1'",
            id="duplicate-address",
        ),
        pytest.param(
            {"worker2": {"management": "192.168.1.12", "compute": "10.0.0.12", "storage": "10.1.0.12"}},
            "host 'worker2': base_os_addresses names network 'storage', which base_os_networks does not "
            "define (defined: management, compute)",
            id="missing-network",
        ),
        pytest.param(
            {"worker1": {"management": "192.168.1.11"}},
            "host 'worker1': base_os_addresses has no address on network 'compute', which is required",
            id="host-without-address",
        ),
    ],
)
def test_bad_addresses_are_refused_before_any_host_is_touched(tmp_path, change, expected):
    assert_refused_untouched(run_base_os(tmp_path, {**GOOD, **change}), expected)


def test_bad_network_definition_is_refused_by_the_argument_spec(tmp_path):
    result = run_base_os(tmp_path, {"master": {"management": "192.168.1.10"}},
                         [{"name": "management", "suffix": ""}])
    assert_refused_untouched(result, "missing required arguments: cidr found in base_os_networks")


def test_bad_firewall_port_is_refused(tmp_path):
    result = run_base_os(tmp_path, GOOD, base_os_firewall_extra_ports=["8080/tcp", "70000/tcp", "9-1/udp"])
    assert_refused_untouched(result, "with ports 1-65535 and a range's first port not above its last; "
                                     "bad: 70000/tcp, 9-1/udp")
