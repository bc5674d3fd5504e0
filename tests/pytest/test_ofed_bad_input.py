# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""ofed: bad inventory data fails before any host is touched, with a message naming it."""

from __future__ import annotations

import pytest

from roleplay import assert_passes_validation, assert_refused_untouched, run_role

NETWORKS = [
    {"name": "management", "cidr": "192.168.1.0/24", "suffix": ""},
    {"name": "compute", "cidr": "10.0.0.0/24", "suffix": "-ib"},
]
ADDRESSES = {
    "master": {"management": "192.168.1.10", "compute": "10.0.0.10"},
    "worker1": {"management": "192.168.1.11", "compute": "10.0.0.11"},
    "worker2": {"management": "192.168.1.12", "compute": "10.0.0.12"},
}
HOSTS = list(ADDRESSES)
CHECKSUM = "sha256:" + "0" * 64


def run_ofed(tmp_path, addresses=None, host_vars=None, **group_vars):
    """The lab's shape: base_os networks and addresses, the role's defaults otherwise."""
    addresses = addresses or ADDRESSES
    host_vars = host_vars or {}
    return run_role(
        tmp_path, "gpucluster.core.ofed",
        hosts={h: {"base_os_addresses": addresses[h], **host_vars.get(h, {})} for h in addresses},
        groups={"cluster": list(addresses), "compute": list(addresses)},
        group_vars={"base_os_networks": NETWORKS, **group_vars},
    )


@pytest.mark.parametrize(
    "good",
    [
        pytest.param({}, id="inbox-defaults"),
        pytest.param({"ofed_source": "doca", "ofed_doca_version": "2.9.1"}, id="doca-pinned"),
        pytest.param({"ofed_source": "mlnx_ofed", "ofed_mlnx_ofed_version": "24.10-1.1.4.0",
                      "ofed_mlnx_ofed_checksum": CHECKSUM,
                      "ofed_mlnx_ofed_install_flags": ["--without-fw-update", "--force", "--add-kernel-support"]},
                     id="mlnx-ofed-pinned"),
        pytest.param({"ofed_expected_ports": ["mlx5_0:1", "mlx5_10:1"], "ofed_min_rate_gbps": "400"},
                     id="named-ports-and-rate"),
        pytest.param({"ofed_expected_ports": ["all"], "ofed_port_check": "warn"}, id="all-ports"),
        pytest.param({"ofed_network_manage": False, "base_os_networks": []}, id="no-network"),
        pytest.param({"ofed_nccl_settings": {"NCCL_IB_TIMEOUT": 22, "NCCL_IB_GID_INDEX": None}}, id="nccl-overrides"),
    ],
)
def test_good_data_passes_preflight_validation(tmp_path, good):
    # The control for the cases below: good data gets past the validation and only then
    # fails, at the first task that needs a host, because the hosts do not exist.
    assert_passes_validation(run_ofed(tmp_path, **good), HOSTS, "ofed")


@pytest.mark.parametrize(
    "bad, expected",
    [
        pytest.param(
            {"ofed_source": "rocm"},
            "value of ofed_source must be one of: inbox, doca, mlnx_ofed, got: rocm",
            id="bad-source",
        ),
        pytest.param(
            {"ofed_source": "doca"},
            "host 'worker1': ofed_source is doca, so ofed_doca_version must pin a DOCA release such as 2.9.1 (got '')",
            id="doca-without-version",
        ),
        pytest.param(
            {"ofed_source": "doca", "ofed_doca_version": "latest"},
            "host 'master': ofed_source is doca, so ofed_doca_version must pin a DOCA release such as 2.9.1 "
            "(got 'latest')",
            id="doca-latest-is-not-a-pin",
        ),
        pytest.param(
            {"ofed_source": "doca", "ofed_doca_version": "2.9.1", "ofed_doca_key_url": "GPG-KEY-Mellanox.pub"},
            "host 'master': ofed_doca_key_url must be an http(s):// or file:// URL (got 'GPG-KEY-Mellanox.pub')",
            id="doca-key-not-a-url",
        ),
        pytest.param(
            {"ofed_source": "mlnx_ofed", "ofed_mlnx_ofed_checksum": CHECKSUM},
            "host 'worker2': ofed_source is mlnx_ofed, so ofed_mlnx_ofed_version must pin a release such as "
            "24.10-1.1.4.0 (got '')",
            id="mlnx-ofed-without-version",
        ),
        pytest.param(
            {"ofed_source": "mlnx_ofed", "ofed_mlnx_ofed_version": "24.10-1.1.4.0"},
            "host 'master': ofed_mlnx_ofed_checksum must be the archive's checksum as sha256:<hex> "
            "(from NVIDIA's download page; got '')",
            id="mlnx-ofed-without-checksum",
        ),
        pytest.param(
            {"ofed_source": "mlnx_ofed", "ofed_mlnx_ofed_version": "24.10-1.1.4.0", "ofed_mlnx_ofed_checksum": CHECKSUM,
             "ofed_mlnx_ofed_install_flags": ["--force; reboot"]},
            "host 'master': ofed_mlnx_ofed_install_flags: '--force; reboot' is not one mlnxofedinstall option "
            "(one per item, starting with -, no spaces)",
            id="mlnx-ofed-flag-with-shell",
        ),
        pytest.param(
            {"ofed_expected_ports": ["mlx5_0", "mlx5_1:x", "mlx5_2:1"]},
            "host 'master': ofed_expected_ports entries must be <ca>:<port> such as mlx5_0:1, or the single "
            "entry all; bad: mlx5_0, mlx5_1:x",
            id="malformed-expected-ports",
        ),
        pytest.param(
            {"ofed_expected_ports": ["all", "mlx5_0:1"]},
            "host 'master': ofed_expected_ports: all stands alone (every port of every HCA), not beside named ports",
            id="all-beside-named-ports",
        ),
        pytest.param(
            {"ofed_expected_ports": ["mlx5_0:1", "mlx5_0:1"]},
            "host 'worker1': ofed_expected_ports lists mlx5_0:1 more than once",
            id="duplicate-expected-port",
        ),
        pytest.param(
            {"ofed_min_rate_gbps": "fast"},
            "argument 'ofed_min_rate_gbps' is of type str and we were unable to convert to float",
            id="rate-not-a-number",
        ),
        pytest.param(
            {"ofed_min_rate_gbps": -100},
            "host 'master': ofed_min_rate_gbps must be a rate in Gb/s, 0 or more (got -100",
            id="negative-rate",
        ),
        pytest.param(
            {"ofed_network": "storage"},
            "host 'master': ofed_network 'storage' is not one of ofed_networks (defined: management, compute; "
            "ofed_networks defaults to base_os_networks)",
            id="unknown-network",
        ),
        pytest.param(
            {"ofed_nccl_settings": {"IB_HCA": "mlx5"}},
            "host 'master': ofed_nccl_settings: 'IB_HCA' is not an NCCL variable name (NCCL_...)",
            id="nccl-setting-not-nccl",
        ),
        pytest.param(
            {"ofed_port_check": "ignore"},
            "value of ofed_port_check must be one of: fail, warn, skip, got: ignore",
            id="bad-port-policy",
        ),
    ],
)
def test_bad_group_data_is_refused_before_any_host_is_touched(tmp_path, bad, expected):
    assert_refused_untouched(run_ofed(tmp_path, **bad), expected)


def test_address_outside_the_network_is_refused(tmp_path):
    addresses = {**ADDRESSES, "worker2": {"management": "192.168.1.12", "compute": "10.0.1.12"}}
    assert_refused_untouched(
        run_ofed(tmp_path, addresses=addresses),
        "host 'worker2': ofed_addresses.compute 10.0.1.12 is outside network 'compute' (10.0.0.0/24)",
    )


def test_duplicate_address_is_refused(tmp_path):
    addresses = {**ADDRESSES, "worker2": {"management": "192.168.1.12", "compute": "10.0.0.11"}}
    assert_refused_untouched(
        run_ofed(tmp_path, addresses=addresses),
        "host 'worker2': ofed_addresses.compute 10.0.0.11 is also the address of host 'worker1'",
    )


def test_host_without_address_is_refused(tmp_path):
    addresses = {**ADDRESSES, "worker1": {"management": "192.168.1.11"}}
    assert_refused_untouched(
        run_ofed(tmp_path, addresses=addresses),
        "host 'worker1': ofed_addresses has no address on network 'compute' (ofed_addresses defaults to "
        "base_os_addresses); give one, or set ofed_network_manage: false for this host",
    )


def test_bad_interface_on_one_host_stops_every_host(tmp_path):
    result = run_ofed(tmp_path, host_vars={"worker2": {"ofed_interface": "ib 0"}})
    assert_refused_untouched(
        result, "host 'worker2': ofed_interface 'ib 0' is not an interface name (1 to 15 letters, digits, _ . : -)")


def test_wrong_type_on_one_host_stops_every_host(tmp_path):
    # Ansible's own argument check drops only worker1; the role checks it again and stops all.
    result = run_ofed(tmp_path, host_vars={"worker1": {"ofed_interface_mtu": "jumbo"}})
    assert_refused_untouched(result, "ofed_interface_mtu")
