# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""ofed: bad input is refused before any host is touched.

One playbook-level test proves the ordering (every host's errors at once, no host contacted);
every rule is a unit test of plugins/plugin_utils/ofed/_rules.py
(tests/unit/plugins/plugin_utils/ofed/test_rules_ofed.py)."""

from __future__ import annotations

from roleplay import LAB_ADDRESSES as ADDRESSES
from roleplay import LAB_NETWORKS as NETWORKS
from roleplay import assert_passes_validation, assert_refused_untouched, run_role

HOSTS = list(ADDRESSES)


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


def test_good_data_passes_preflight_validation(tmp_path):
    # The control: good data (a null NCCL setting among the numbers) gets past the validation and only then fails, at the first task that
    # needs a host, because the hosts do not exist.
    result = run_ofed(tmp_path, ofed_source="mlnx_ofed", ofed_mlnx_ofed_version="24.10-1.1.4.0",
                      ofed_mlnx_ofed_checksum="sha256:" + "0" * 64, ofed_expected_ports=["mlx5_0:1", "mlx5_10:1"],
                      ofed_min_rate_gbps=400, ofed_nccl_settings={"NCCL_IB_TIMEOUT": 22, "NCCL_IB_GID_INDEX": None},
                      host_vars={"worker2": {"ofed_interface": "ibp12s0", "ofed_interface_mtu": 65520}})
    assert_passes_validation(result, HOSTS, "ofed")


def test_bad_data_is_refused_all_at_once_before_any_host_is_touched(tmp_path):
    # A group value wrong on every host, a host's own bad interface (which its templated
    # NCCL_SOCKET_IFNAME default inherits) and an address clash across hosts: one refusal
    # naming them all, with zero hosts contacted.
    addresses = {**ADDRESSES, "worker2": {"management": "192.168.1.12", "compute": "10.0.0.11"}}
    result = run_ofed(tmp_path, addresses=addresses, host_vars={"worker2": {"ofed_interface": "ib 0"}},
                      ofed_source="doca")
    version = "ofed_doca_version: must pin a DOCA release such as 2.9.1, as ofed_source is doca (got '')"
    assert_refused_untouched(
        result,
        "ofed: bad input, no host was changed: "
        f"host 'master': {version}; "
        f"host 'worker1': {version}; "
        f"host 'worker2': {version}; "
        "host 'worker2': ofed_interface: must be an interface name: 1 to 15 letters, digits, _ . : - (got 'ib 0'); "
        "host 'worker2': ofed_addresses.compute: 10.0.0.11 is also the address of host 'worker1'; "
        "host 'worker2': ofed_nccl_socket_ifname: must be one word without blanks, such as =ib0, or empty"
        " (got '=ib 0')",
    )
