# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""ofed_errors: the ofed role's input rules, as tables of good and bad data with exact messages."""

from __future__ import annotations

import pytest

from ansible_collections.gpucluster.core.plugins.plugin_utils.common._rules import RuleError
from ansible_collections.gpucluster.core.plugins.plugin_utils.ofed._rules import checksum, network_cidr, ofed_errors

NETWORKS = [
    {"name": "management", "cidr": "192.168.1.0/24", "suffix": ""},
    {"name": "compute", "cidr": "10.0.0.0/24", "suffix": "-ib"},
]
CHECKSUM = "sha256:" + "0" * 64
# The role's defaults as a host sees them (ofed_networks / ofed_addresses are base_os's).
DEFAULTS = {
    "ofed_source": "inbox", "ofed_packages_extra": [], "ofed_allow_unsupported_os": False,
    "ofed_doca_version": "", "ofed_doca_base_url": "https://linux.mellanox.com/public/repo/doca",
    "ofed_doca_distro": "", "ofed_doca_arch": "",
    "ofed_doca_key_url": "https://linux.mellanox.com/public/repo/doca/GPG-KEY-Mellanox.pub",
    "ofed_doca_packages": ["doca-ofed"], "ofed_mlnx_ofed_version": "",
    "ofed_mlnx_ofed_base_url": "https://content.mellanox.com/ofed", "ofed_mlnx_ofed_distro": "",
    "ofed_mlnx_ofed_arch": "", "ofed_mlnx_ofed_checksum": "",
    "ofed_mlnx_ofed_install_flags": ["--without-fw-update", "--force"],
    "ofed_mlnx_ofed_work_dir": "/var/cache/gpucluster-ofed", "ofed_kernel_headers_install": True,
    "ofed_kernel_mismatch": "fail", "ofed_modules_load": True, "ofed_gpudirect_rdma": False,
    "ofed_network_manage": True, "ofed_network": "compute", "ofed_networks": NETWORKS,
    "ofed_interface": "ib0", "ofed_interface_type": "infiniband", "ofed_interface_mtu": None,
    "ofed_network_backend": "auto", "ofed_expected_ports": [], "ofed_min_rate_gbps": 0, "ofed_port_check": "fail",
    "ofed_ibstat_path": None, "ofed_nccl_conf_manage": True, "ofed_nccl_conf_path": "/etc/nccl.conf",
    "ofed_nccl_socket_ifname": "=ib0", "ofed_nccl_roce_gid_index": 3, "ofed_nccl_settings": {},
}
ADDRESSES = {
    "master": {"management": "192.168.1.10", "compute": "10.0.0.10"},
    "worker1": {"management": "192.168.1.11", "compute": "10.0.0.11"},
}
DOCA = {"ofed_source": "doca", "ofed_doca_version": "2.9.1"}
MLNX = {"ofed_source": "mlnx_ofed", "ofed_mlnx_ofed_version": "24.10-1.1.4.0", "ofed_mlnx_ofed_checksum": CHECKSUM}
W = "host 'worker1': "


def errors(worker=None, master=None, **common):
    """master and worker1 with the lab's networks and addresses; worker1's values are the ones under test."""
    hosts = {}
    for host, own in (("master", master), ("worker1", worker)):
        hosts[host] = {**DEFAULTS, "ofed_addresses": ADDRESSES[host], **common, **(own or {})}
    return ofed_errors(hosts)


@pytest.mark.parametrize("worker", [
    {},
    DOCA,
    {**DOCA, "ofed_doca_version": "3.1.0", "ofed_doca_distro": "rhel9.2", "ofed_doca_arch": "arm64-sbsa",
     "ofed_doca_base_url": "file:///srv/mirror/doca", "ofed_doca_packages": ["doca-roce", "doca-networking"]},
    MLNX,
    {**MLNX, "ofed_mlnx_ofed_checksum": "sha512:" + "aB" * 64, "ofed_mlnx_ofed_distro": "debian12.5",
     "ofed_mlnx_ofed_install_flags": ["--without-fw-update", "--force", "--add-kernel-support", "-q",
                                      "--kernel-sources=/usr/src/linux-headers-6.1.0-18-amd64"]},
    # The pins are only read for their own source.
    {"ofed_doca_version": "latest", "ofed_mlnx_ofed_checksum": "md5:1", "ofed_mlnx_ofed_install_flags": ["x y"]},
    {"ofed_packages_extra": ["ibutils2", "mstflint=4.26.0-1", "python3-pyverbs"], "ofed_ibstat_path": "/usr/local/bin/ibstat"},
    {"ofed_expected_ports": ["mlx5_0:1", "mlx5_10:1", "mlx5_bond_0:2"], "ofed_min_rate_gbps": "400"},
    {"ofed_expected_ports": ["all"], "ofed_min_rate_gbps": 12.5},
    {"ofed_expected_ports": ["mlx5_0:255"], "ofed_min_rate_gbps": 10000},
    {"ofed_interface": "ibp12s0.8001", "ofed_interface_mtu": 65520},
    {"ofed_interface": "enp12s0np0", "ofed_interface_mtu": "9000", "ofed_interface_type": "ethernet"},
    {"ofed_interface_mtu": 576, "ofed_nccl_roce_gid_index": None},
    {"ofed_nccl_roce_gid_index": 0, "ofed_nccl_socket_ifname": ""},
    {"ofed_nccl_roce_gid_index": "255", "ofed_nccl_socket_ifname": "^docker,lo"},
    {"ofed_nccl_settings": {"NCCL_IB_TIMEOUT": 22, "NCCL_IB_GID_INDEX": None, "NCCL_IB_HCA": "=mlx5_0:1,mlx5_3:1",
                            "NCCL_DEBUG_SUBSYS": "INIT,NET", "NCCL_IB_PCI_RELAXED_ORDERING": True}},
    {"ofed_nccl_settings": None},
    # Switched off, the network and nccl.conf values are not read.
    {"ofed_network_manage": False, "ofed_networks": [], "ofed_addresses": {}, "ofed_interface": "ib 0"},
    {"ofed_network_manage": "false", "ofed_network": "storage"},
    {"ofed_nccl_conf_manage": False, "ofed_nccl_conf_path": "nccl.conf", "ofed_nccl_settings": {"X": "y"}},
    {"ofed_network": "management", "ofed_interface": "eth1"},
    {"ofed_addresses": {"compute": "10.0.0.254"}},
    # Networks next to each other, of the other IP version, or a badly written other network (base_os's to name).
    {"ofed_networks": [{"name": "management", "cidr": "10.0.1.0/24"}, NETWORKS[1],
                       {"name": "storage", "cidr": "fd00::/8"}, {"name": "bmc", "cidr": None}]},
], ids=str)
def test_good_host(worker):
    assert errors(worker) == []


@pytest.mark.parametrize("common", [
    {"ofed_networks": [{"name": "compute", "cidr": "fd00:10::/64"}]},
    {"ofed_networks": [{"name": "compute", "cidr": "10.0.0.0/31"}]},
    {"ofed_networks": [{"name": "compute", "cidr": "10.0.0.8/29"}]},
], ids=str)
def test_good_networks(common):
    addresses = {"fd00:10::/64": ("fd00:10::a", "fd00:10::b"), "10.0.0.0/31": ("10.0.0.0", "10.0.0.1"),
                 "10.0.0.8/29": ("10.0.0.9", "10.0.0.14")}[common["ofed_networks"][0]["cidr"]]
    assert errors({"ofed_addresses": {"compute": addresses[1]}}, {"ofed_addresses": {"compute": addresses[0]}},
                  **common) == []


def _compute_address(address, reason):
    """A row of test_bad_host: the host's compute address, and the message that names it."""
    return {"ofed_addresses": {"compute": address}}, ["ofed_addresses.compute: " + reason]


@pytest.mark.parametrize("worker, messages", [
    # DOCA-OFED
    ({"ofed_source": "doca"},
     ["ofed_doca_version: must pin a DOCA release such as 2.9.1, as ofed_source is doca (got '')"]),
    ({**DOCA, "ofed_doca_version": "latest"},
     ["ofed_doca_version: must pin a DOCA release such as 2.9.1, as ofed_source is doca (got 'latest')"]),
    ({**DOCA, "ofed_doca_version": "2.9.1.0.1"},
     ["ofed_doca_version: must pin a DOCA release such as 2.9.1, as ofed_source is doca (got '2.9.1.0.1')"]),
    ({**DOCA, "ofed_doca_key_url": "GPG-KEY-Mellanox.pub", "ofed_doca_base_url": "ftp://mirror/doca"},
     ["ofed_doca_base_url: must be a http:// or https:// or file:// URL (got 'ftp://mirror/doca')",
      "ofed_doca_key_url: must be a http:// or https:// or file:// URL (got 'GPG-KEY-Mellanox.pub')"]),
    ({**DOCA, "ofed_doca_distro": "ubuntu 22.04", "ofed_doca_arch": "../x86_64"},
     ["ofed_doca_distro: must be empty (derived from the facts) or one label of letters, digits, ., _ and -,"
      " such as ubuntu22.04 or rhel9.2 (got 'ubuntu 22.04')",
      "ofed_doca_arch: must be empty (derived from the facts) or one label of letters, digits, ., _ and -,"
      " such as x86_64 or arm64-sbsa (got '../x86_64')"]),
    ({**DOCA, "ofed_doca_packages": []},
     ["ofed_doca_packages: must name the DOCA-Host profile to install, such as doca-ofed (got [])"]),
    ({**DOCA, "ofed_doca_packages": ["doca-ofed", "doca-roce; reboot"]},
     ["ofed_doca_packages[1]: must be a package name (got 'doca-roce; reboot')"]),
    ({**DOCA, "ofed_doca_packages": "doca-ofed"},
     ["ofed_doca_packages: must be a list (got 'doca-ofed')"]),
    # MLNX_OFED
    ({"ofed_source": "mlnx_ofed", "ofed_mlnx_ofed_checksum": CHECKSUM},
     ["ofed_mlnx_ofed_version: must pin a release such as 24.10-1.1.4.0, as ofed_source is mlnx_ofed (got '')"]),
    ({**MLNX, "ofed_mlnx_ofed_version": "24.10"},
     ["ofed_mlnx_ofed_version: must pin a release such as 24.10-1.1.4.0, as ofed_source is mlnx_ofed"
      " (got '24.10')"]),
    ({**MLNX, "ofed_mlnx_ofed_checksum": ""},
     ["ofed_mlnx_ofed_checksum: must be the archive's checksum as sha256:<64 hex digits> (or sha384:<96>,"
      " sha512:<128>), from NVIDIA's download page (got '')"]),
    ({**MLNX, "ofed_mlnx_ofed_base_url": "content.mellanox.com/ofed"},
     ["ofed_mlnx_ofed_base_url: must be a http:// or https:// or file:// URL (got 'content.mellanox.com/ofed')"]),
    ({**MLNX, "ofed_mlnx_ofed_distro": "debian/12", "ofed_mlnx_ofed_arch": "x86 64"},
     ["ofed_mlnx_ofed_distro: must be empty (derived from the facts) or one label of letters, digits, ., _ and -,"
      " such as ubuntu22.04 or rhel9.4 (got 'debian/12')",
      "ofed_mlnx_ofed_arch: must be empty (derived from the facts) or one label of letters, digits, ., _ and -,"
      " such as x86_64 or aarch64 (got 'x86 64')"]),
    ({**MLNX, "ofed_mlnx_ofed_install_flags": ["--force; reboot", "--force", "without-fw-update", "--with nvmf"]},
     ["ofed_mlnx_ofed_install_flags[0]: must be one mlnxofedinstall option: one per item, starting with -,"
      " no blanks or shell characters (got '--force; reboot')",
      "ofed_mlnx_ofed_install_flags[2]: must be one mlnxofedinstall option: one per item, starting with -,"
      " no blanks or shell characters (got 'without-fw-update')",
      "ofed_mlnx_ofed_install_flags[3]: must be one mlnxofedinstall option: one per item, starting with -,"
      " no blanks or shell characters (got '--with nvmf')"]),
    ({**MLNX, "ofed_mlnx_ofed_install_flags": "--force"},
     ["ofed_mlnx_ofed_install_flags: must be a list (got '--force')"]),
    ({**MLNX, "ofed_mlnx_ofed_work_dir": "/"},
     ["ofed_mlnx_ofed_work_dir: must be an absolute directory other than / (got '/')"]),
    ({**MLNX, "ofed_mlnx_ofed_work_dir": "var/cache/ofed"},
     ["ofed_mlnx_ofed_work_dir: must be an absolute path (got 'var/cache/ofed')"]),
    ({**MLNX, "ofed_mlnx_ofed_work_dir": "/var/cache/../ofed"},
     ["ofed_mlnx_ofed_work_dir: must have no trailing slash and no empty, . or .. parts (got '/var/cache/../ofed')"]),
    ({**MLNX, "ofed_mlnx_ofed_work_dir": "/var/cache/gpu ofed"},
     ["ofed_mlnx_ofed_work_dir: must not contain blanks (got '/var/cache/gpu ofed')"]),
    # Every source
    ({"ofed_packages_extra": ["htop", "-y", "a b"]},
     ["ofed_packages_extra[1]: must be a package name (got '-y')",
      "ofed_packages_extra[2]: must be a package name (got 'a b')"]),
    ({"ofed_ibstat_path": "ibstat"}, ["ofed_ibstat_path: must be an absolute path (got 'ibstat')"]),
    ({"ofed_ibstat_path": "/"}, ["ofed_ibstat_path: must be an absolute file path other than / (got '/')"]),
    # Ports and rate
    ({"ofed_expected_ports": ["mlx5_0", "mlx5_1:x", "mlx5_2:1", "mlx5_3:0", "mlx5_4:256", "mlx 5:1"]},
     ["ofed_expected_ports[0]: must be <ca>:<port> with port 1-255, such as mlx5_0:1, or the single entry all"
      " (got 'mlx5_0')",
      "ofed_expected_ports[1]: must be <ca>:<port> with port 1-255, such as mlx5_0:1, or the single entry all"
      " (got 'mlx5_1:x')",
      "ofed_expected_ports[3]: must be <ca>:<port> with port 1-255, such as mlx5_0:1, or the single entry all"
      " (got 'mlx5_3:0')",
      "ofed_expected_ports[4]: must be <ca>:<port> with port 1-255, such as mlx5_0:1, or the single entry all"
      " (got 'mlx5_4:256')",
      "ofed_expected_ports[5]: must be <ca>:<port> with port 1-255, such as mlx5_0:1, or the single entry all"
      " (got 'mlx 5:1')"]),
    ({"ofed_expected_ports": ["all", "mlx5_0:1"]},
     ["ofed_expected_ports: all stands alone (every port of every HCA), not beside named ports"]),
    ({"ofed_expected_ports": ["all", "all"]},
     ["ofed_expected_ports: all stands alone (every port of every HCA), not beside named ports",
      "ofed_expected_ports: lists all more than once"]),
    ({"ofed_expected_ports": ["mlx5_0:1", "mlx5_1:1", "mlx5_0:1", "mlx5_0:1"]},
     ["ofed_expected_ports: lists mlx5_0:1 more than once"]),
    ({"ofed_expected_ports": "mlx5_0:1"}, ["ofed_expected_ports: must be a list (got 'mlx5_0:1')"]),
    ({"ofed_min_rate_gbps": -100}, ["ofed_min_rate_gbps: must be a rate in Gb/s within 0-10000, 0 for any (got -100)"]),
    ({"ofed_min_rate_gbps": 400000},
     ["ofed_min_rate_gbps: must be a rate in Gb/s within 0-10000, 0 for any (got 400000)"]),
    ({"ofed_min_rate_gbps": "fast"},
     ["ofed_min_rate_gbps: must be a rate in Gb/s within 0-10000, 0 for any (got 'fast')"]),
    ({"ofed_min_rate_gbps": "nan"},
     ["ofed_min_rate_gbps: must be a rate in Gb/s within 0-10000, 0 for any (got 'nan')"]),
    ({"ofed_min_rate_gbps": True},
     ["ofed_min_rate_gbps: must be a rate in Gb/s within 0-10000, 0 for any (got True)"]),
    # Interface and network
    ({"ofed_interface": "ib 0"}, ["ofed_interface: must be an interface name: 1 to 15 letters, digits, _ . : -"
                                  " (got 'ib 0')"]),
    ({"ofed_interface": "ibp12s0f0np0.8001"},
     ["ofed_interface: must be an interface name: 1 to 15 letters, digits, _ . : - (got 'ibp12s0f0np0.8001')"]),
    ({"ofed_interface": ".."}, ["ofed_interface: must be an interface name: 1 to 15 letters, digits, _ . : -"
                                " (got '..')"]),
    ({"ofed_interface": ""}, ["ofed_interface: must be an interface name: 1 to 15 letters, digits, _ . : -"
                              " (got '')"]),
    ({"ofed_interface_mtu": 100}, ["ofed_interface_mtu: must be within 576-65520 (got 100)"]),
    ({"ofed_interface_mtu": 65521}, ["ofed_interface_mtu: must be within 576-65520 (got 65521)"]),
    ({"ofed_interface_mtu": "jumbo"}, ["ofed_interface_mtu: must be an integer (got 'jumbo')"]),
    ({"ofed_network": "storage"},
     ["ofed_network: 'storage' is not one of ofed_networks (defined: management, compute; ofed_networks defaults"
      " to base_os_networks)"]),
    ({"ofed_networks": [], "ofed_addresses": {}},
     ["ofed_network: 'compute' is not one of ofed_networks (defined: none; ofed_networks defaults"
      " to base_os_networks)"]),
    ({"ofed_networks": [{"cidr": "10.0.0.0/24"}, "compute"]},
     ["ofed_network: 'compute' is not one of ofed_networks (defined: ?, ?; ofed_networks defaults"
      " to base_os_networks)"]),
    ({"ofed_networks": {"compute": "10.0.0.0/24"}}, ["ofed_networks: must be a list (got {'compute': '10.0.0.0/24'})"]),
    ({"ofed_networks": NETWORKS + [{"name": "compute", "cidr": "10.0.0.0/24"}]},
     ["ofed_networks: network 'compute' is defined 2 times"]),
    ({"ofed_addresses": {"management": "192.168.1.11"}},
     ["ofed_addresses: has no address on network 'compute' (ofed_addresses defaults to base_os_addresses);"
      " give one, or set ofed_network_manage: false for this host"]),
    ({"ofed_addresses": {"compute": None}},
     ["ofed_addresses: has no address on network 'compute' (ofed_addresses defaults to base_os_addresses);"
      " give one, or set ofed_network_manage: false for this host"]),
    ({"ofed_addresses": ["10.0.0.11"]},
     ["ofed_addresses: must be a dict of network name to address (got ['10.0.0.11'])"]),
    _compute_address("10.0.0.011", "must be an IPv4 or IPv6 address (got '10.0.0.011')"),
    _compute_address("10.0.0", "must be an IPv4 or IPv6 address (got '10.0.0')"),
    _compute_address(167772171, "must be an IPv4 or IPv6 address (got 167772171)"),
    _compute_address("fe80::1%ib0", "must be an IPv4 or IPv6 address (got 'fe80::1%ib0')"),
    _compute_address("10.0.1.11", "10.0.1.11 is outside network 'compute' (10.0.0.0/24)"),
    _compute_address("fd00::11", "fd00::11 is outside network 'compute' (10.0.0.0/24)"),
    _compute_address("10.0.0.0", "10.0.0.0 is the network address of 'compute' (10.0.0.0/24)"),
    _compute_address("10.0.0.255", "10.0.0.255 is the broadcast address of 'compute' (10.0.0.0/24)"),
    _compute_address("10.0.0.10", "10.0.0.10 is also the address of host 'master'"),
    ({"ofed_networks": [{"name": "compute", "cidr": "10.0.0.0/16"}]},
     ["ofed_networks: network 'compute' is 10.0.0.0/16 here, but 10.0.0.0/24 on host 'master'"]),
    ({"ofed_networks": [{"name": "compute", "cidr": "10.0.0.1/24"}]},
     ["ofed_networks[0].cidr: must be a network in CIDR notation with no host bits set, such as 10.0.0.0/24"
      " (got '10.0.0.1/24': 10.0.0.1/24 has host bits set)"]),
    ({"ofed_networks": [NETWORKS[0], {"name": "compute", "cidr": "10.0.0.0"}]},
     ["ofed_networks[1].cidr: must be a network in CIDR notation with no host bits set, such as 10.0.0.0/24"
      " (got '10.0.0.0': no prefix length)"]),
    ({"ofed_networks": [{"name": "management", "cidr": "10.0.0.0/16"}, NETWORKS[1]]},
     ["ofed_networks[1].cidr: 10.0.0.0/24 overlaps network 'management' (10.0.0.0/16): the fabric's network must not"
      " share addresses with the host's other networks"]),
    ({"ofed_networks": [NETWORKS[1], {"name": "storage", "cidr": "10.0.0.128/25"}, {"name": "bmc", "cidr": "10.0.0.7"}]},
     ["ofed_networks[0].cidr: 10.0.0.0/24 overlaps network 'storage' (10.0.0.128/25): the fabric's network must not"
      " share addresses with the host's other networks",
      "ofed_networks[0].cidr: 10.0.0.0/24 overlaps network 'bmc' (10.0.0.7): the fabric's network must not"
      " share addresses with the host's other networks"]),
    ({"ofed_networks": [{"name": "compute"}]},
     ["ofed_networks[0].cidr: must be a network in CIDR notation with no host bits set, such as 10.0.0.0/24"
      " (got None: no prefix length)"]),
    # nccl.conf
    ({"ofed_nccl_conf_path": "nccl.conf"}, ["ofed_nccl_conf_path: must be an absolute path (got 'nccl.conf')"]),
    ({"ofed_nccl_conf_path": "/"}, ["ofed_nccl_conf_path: must be an absolute file path other than / (got '/')"]),
    ({"ofed_nccl_socket_ifname": "=ib0 =ib1"},
     ["ofed_nccl_socket_ifname: must be one word without blanks, such as =ib0, or empty (got '=ib0 =ib1')"]),
    ({"ofed_nccl_socket_ifname": None},
     ["ofed_nccl_socket_ifname: must be one word without blanks, such as =ib0, or empty (got None)"]),
    ({"ofed_nccl_roce_gid_index": -1},
     ["ofed_nccl_roce_gid_index: must be a GID index within 0-255, or null to leave it to NCCL (got -1)"]),
    ({"ofed_nccl_roce_gid_index": 256},
     ["ofed_nccl_roce_gid_index: must be a GID index within 0-255, or null to leave it to NCCL (got 256)"]),
    ({"ofed_nccl_roce_gid_index": "three"},
     ["ofed_nccl_roce_gid_index: must be a GID index within 0-255, or null to leave it to NCCL (got 'three')"]),
    ({"ofed_nccl_settings": {"IB_HCA": "mlx5", "nccl_debug": "INFO", 1: 2}},
     ["ofed_nccl_settings: 'IB_HCA' is not an NCCL variable name (NCCL_...)",
      "ofed_nccl_settings: 'nccl_debug' is not an NCCL variable name (NCCL_...)",
      "ofed_nccl_settings: 1 is not an NCCL variable name (NCCL_...)"]),
    ({"ofed_nccl_settings": {"NCCL_DEBUG": "INFO\nNCCL_IB_DISABLE=1", "NCCL_IB_HCA": ["mlx5_0"],
                             "NCCL_X": {"a": 1}}},
     ["ofed_nccl_settings.NCCL_DEBUG: must be one line of text or a number, or null (got 'INFO\\nNCCL_IB_DISABLE=1')",
      "ofed_nccl_settings.NCCL_IB_HCA: must be one line of text or a number, or null (got ['mlx5_0'])",
      "ofed_nccl_settings.NCCL_X: must be one line of text or a number, or null (got {'a': 1})"]),
    ({"ofed_nccl_settings": ["NCCL_DEBUG=INFO"]},
     ["ofed_nccl_settings: must be a dict of NCCL variables (got ['NCCL_DEBUG=INFO'])"]),
], ids=str)
def test_bad_host(worker, messages):
    assert errors(worker) == [W + m for m in messages]


def test_every_error_at_once_host_by_host():
    # Each host's errors in the order of the hosts, every rule of a host in one pass.
    result = errors(
        worker={"ofed_source": "doca", "ofed_expected_ports": ["mlx5_0"], "ofed_interface_mtu": 1,
                "ofed_addresses": {"compute": "10.0.0.10"}, "ofed_nccl_settings": {"DEBUG": "INFO"}},
        master={"ofed_min_rate_gbps": -1})
    assert result == [
        "host 'master': ofed_min_rate_gbps: must be a rate in Gb/s within 0-10000, 0 for any (got -1)",
        W + "ofed_doca_version: must pin a DOCA release such as 2.9.1, as ofed_source is doca (got '')",
        W + "ofed_expected_ports[0]: must be <ca>:<port> with port 1-255, such as mlx5_0:1, or the single entry all"
            " (got 'mlx5_0')",
        W + "ofed_interface_mtu: must be within 576-65520 (got 1)",
        W + "ofed_addresses.compute: 10.0.0.10 is also the address of host 'master'",
        W + "ofed_nccl_settings: 'DEBUG' is not an NCCL variable name (NCCL_...)",
    ]


def test_address_clash_with_a_host_that_does_not_manage_its_network_is_no_clash():
    assert errors({"ofed_addresses": {"compute": "10.0.0.10"}}, {"ofed_network_manage": False}) == []


def test_addresses_are_compared_normalised():
    assert errors({"ofed_addresses": {"compute": "fd00:10:0::0a"}}, {"ofed_addresses": {"compute": "fd00:10::a"}},
                  ofed_networks=[{"name": "compute", "cidr": "fd00:10::/64"}]) == [
        W + "ofed_addresses.compute: fd00:10::a is also the address of host 'master'"]


@pytest.mark.parametrize("value", ["sha256:" + "0" * 64, "sha384:" + "f" * 96, "sha512:" + "F" * 128])
def test_good_checksum(value):
    assert checksum(value) is None


@pytest.mark.parametrize("value", [
    "sha256:" + "0" * 63, "sha512:" + "0" * 64, "md5:" + "0" * 32, "sha256:" + "g" * 64, "0" * 64,
    "sha256: " + "0" * 64, None,
])
def test_bad_checksum(value):
    assert checksum(value) == ("must be the archive's checksum as sha256:<64 hex digits> (or sha384:<96>,"
                               " sha512:<128>), from NVIDIA's download page (got %r)" % (value,))


@pytest.mark.parametrize("value, network", [
    ("10.0.0.0/24", "10.0.0.0/24"), ("10.0.0.7/32", "10.0.0.7/32"), ("fd00::/8", "fd00::/8"), ("0.0.0.0/0", "0.0.0.0/0"),
])
def test_good_network_cidr(value, network):
    net, reason = network_cidr(value)
    assert (str(net), reason) == (network, None)


@pytest.mark.parametrize("value, why", [
    ("10.0.0.0", "no prefix length"),
    (24, "no prefix length"),
    ("10.0.0.0/33", "'33' is not a valid netmask"),
    ("10.0.0/24", "Expected 4 octets in '10.0.0'"),
    ("fd00::1/8", "fd00::1/8 has host bits set"),
    ("fd00::/129", "'129' is not a valid netmask"),
])
def test_bad_network_cidr(value, why):
    assert network_cidr(value) == (None, "must be a network in CIDR notation with no host bits set, such as"
                                         " 10.0.0.0/24 (got %r: %s)" % (value, why))


def test_address_clash_on_the_management_network():
    # Both hosts configure the management network: the address is checked there.
    assert errors({"ofed_network": "management", "ofed_addresses": {"management": "192.168.1.10"}},
                  {"ofed_network": "management"}) == [
        W + "ofed_addresses.management: 192.168.1.10 is also the address of host 'master'"]


@pytest.mark.parametrize("values, message", [
    (["master"], "ofed_errors: the input must be a dict of host name to the host's ofed variables"),
    ({"master": "ofed_source=inbox"}, "ofed_errors: the values of host 'master' must be a dict of the role's variables"),
])
def test_wrong_shape(values, message):
    with pytest.raises(RuleError) as exc:
        ofed_errors(values)
    assert str(exc.value) == message
