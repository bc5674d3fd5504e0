# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ofed role's derived data: the port check, nccl.conf's lines and the kernel check, over the
real ibstat captures (parsed as ibstat_facts parses them) and small synthetic facts."""

from __future__ import annotations

import pytest

from ansible_collections.gpucluster.core.plugins.module_utils._ibstat import parse_ibstat, summarize
from ansible_collections.gpucluster.core.plugins.plugin_utils.ofed._state import (
    artifacts, bad_ports, built_kernels, dkms_lines, expected_labels, kernel_report, loaded_module, nccl_conf_lines,
    nccl_settings, port_problem, port_table, source_names,
)
from ansible_collections.gpucluster.core.tests.unit.plugins.shared_fixtures import read_fixture
from ansible_collections.gpucluster.core.tests.unit.plugins.plugin_utils.lazy_input import UNREAD, Unread

IB = "ibstat"
# The captures molecule/ofed's ib and roce nodes print through the ibstat double.
MIXED = "h100-8x-ndr-ib-cx7-plus-4x-roce-cx6dx-3-ports-down.txt"
ROCE = "h100-12x-roce-ethernet-2-cx7-ports-down.txt"
ROCE_ALL = "h100-12x-roce-ethernet-cx7-400g-cx6dx-100g-all-active.txt"
A100 = "a100-9x-mlx5gen-vf-mt4126-8-ib-hdr-1-ethernet.txt"
AZURE = "ibstatus-azure-a100-9x-hdr-200g.txt"
NDR_RAILS = ["mlx5_0:1", "mlx5_3:1", "mlx5_4:1", "mlx5_5:1", "mlx5_6:1", "mlx5_9:1", "mlx5_10:1", "mlx5_11:1"]
NO_HCA = summarize([], "ibstat")


def facts(name):
    return summarize(parse_ibstat(read_fixture(IB, name)), "ibstat")


def port(number, state="Active", physical_state="LinkUp", rate=400, link_layer="InfiniBand"):
    return {"port": number, "state": state, "physical_state": physical_state, "rate_gbps": rate,
            "link_layer": link_layer}


def hcas(*cas):
    """Facts of the HCAs given as (name, [ports])."""
    return {"source": "sysfs", "ca_count": len(cas), "cas": [{"name": name, "ports": ports} for name, ports in cas]}


def lines(infiniband, expected=(), rate=0, ifname="=ib0", gid=3, settings=None):
    return nccl_conf_lines(nccl_settings(infiniband, list(expected), rate, ifname, gid, settings or {}))


def labels(*numbers):
    return ",".join("mlx5_%d:1" % n for n in numbers)


# --- molecule/ofed, the same inputs and the messages and files it asserts ----------------------------

def test_scenario_plain_no_hca():
    assert port_problem(NO_HCA, ["mlx5_0:1", "mlx5_1:1"], 0, "plain") == (
        "ofed: 2 of 2 expected ports on plain are not Active and LinkUp: mlx5_0:1 (not found); mlx5_1:1 (not found)."
        " ibstat found 0 HCAs.")
    assert port_problem(NO_HCA, ["all"], 0, "plain") == "ofed: ofed_expected_ports is all, but ibstat found no HCA on plain."
    assert port_problem(NO_HCA, [], 0, "plain") == ""
    assert lines(NO_HCA) == ["NCCL_SOCKET_IFNAME==ib0"]


def test_scenario_ib():
    ib = facts(MIXED)
    assert port_problem(ib, NDR_RAILS, 400, "ib") == ""
    assert lines(ib, NDR_RAILS, 400, settings={"NCCL_IB_TIMEOUT": 22, "NCCL_SOCKET_IFNAME": "=eth0"}) == [
        "NCCL_IB_HCA==" + labels(0, 3, 4, 5, 6, 9, 10, 11), "NCCL_IB_TIMEOUT=22", "NCCL_SOCKET_IFNAME==eth0"]
    # side_effect.yml: every port expected at 400 Gb/s.
    assert port_problem(ib, ["all"], 400.0, "ib") == (
        "ofed: 4 of 12 expected ports on ib are not Active and LinkUp at 400 Gb/s or more:"
        " mlx5_1:1 (state Active, physical state LinkUp, rate 100 Gb/s);"
        " mlx5_2:1 (state Down, physical state Disabled, rate 40 Gb/s);"
        " mlx5_7:1 (state Down, physical state Disabled, rate 40 Gb/s);"
        " mlx5_8:1 (state Down, physical state Disabled, rate 40 Gb/s). ibstat found 12 HCAs.")
    # ...and with warn the role goes on to write the same nccl.conf.
    assert lines(ib, ["all"], 400, settings={"NCCL_IB_TIMEOUT": 22, "NCCL_SOCKET_IFNAME": "=eth0"}) == lines(
        ib, NDR_RAILS, 400, settings={"NCCL_IB_TIMEOUT": 22, "NCCL_SOCKET_IFNAME": "=eth0"})


def test_scenario_roce():
    roce = facts(ROCE)
    assert port_problem(roce, [], 400, "roce") == ""
    assert lines(roce, [], 400, settings={"NCCL_IB_TC": 106, "NCCL_SOCKET_IFNAME": None}) == [
        "NCCL_IB_GID_INDEX=3", "NCCL_IB_HCA==" + labels(0, 3, 4, 6, 9, 10), "NCCL_IB_TC=106"]


# --- every capture ----------------------------------------------------------------------------------

@pytest.mark.parametrize("name, expected, rate, problem", [
    (MIXED, ["all"], 0, "ofed: 3 of 12 expected ports on gpu01 are not Active and LinkUp:"
                        " mlx5_2:1 (state Down, physical state Disabled, rate 40 Gb/s);"
                        " mlx5_7:1 (state Down, physical state Disabled, rate 40 Gb/s);"
                        " mlx5_8:1 (state Down, physical state Disabled, rate 40 Gb/s). ibstat found 12 HCAs."),
    (MIXED, ["mlx5_1:1"], 100, ""),
    (MIXED, ["mlx5_1:1"], 100.5, "ofed: 1 of 1 expected ports on gpu01 are not Active and LinkUp at 100.5 Gb/s or"
                                 " more: mlx5_1:1 (state Active, physical state LinkUp, rate 100 Gb/s)."
                                 " ibstat found 12 HCAs."),
    (ROCE, ["all"], 0, "ofed: 2 of 12 expected ports on gpu01 are not Active and LinkUp:"
                       " mlx5_5:1 (state Down, physical state Disabled, rate 40 Gb/s);"
                       " mlx5_11:1 (state Down, physical state Disabled, rate 40 Gb/s). ibstat found 12 HCAs."),
    (ROCE_ALL, ["all"], 0, ""),
    (ROCE_ALL, ["all"], 400, "ofed: 4 of 12 expected ports on gpu01 are not Active and LinkUp at 400 Gb/s or more:"
                             " mlx5_1:1 (state Active, physical state LinkUp, rate 100 Gb/s);"
                             " mlx5_2:1 (state Active, physical state LinkUp, rate 100 Gb/s);"
                             " mlx5_7:1 (state Active, physical state LinkUp, rate 100 Gb/s);"
                             " mlx5_8:1 (state Active, physical state LinkUp, rate 100 Gb/s). ibstat found 12 HCAs."),
    (A100, ["all"], 200, ""),
    (A100, ["mlx5_1:1", "mlx5_9:1", "mlx5_0:2"], "200",
     "ofed: 2 of 3 expected ports on gpu01 are not Active and LinkUp at 200 Gb/s or more:"
     " mlx5_9:1 (not found); mlx5_0:2 (not found). ibstat found 9 HCAs."),
    (AZURE, ["all"], 0, ""),
    (AZURE, ["mlx5_8:1"], 200, "ofed: 1 of 1 expected ports on gpu01 are not Active and LinkUp at 200 Gb/s or more:"
                               " mlx5_8:1 (state Active, physical state LinkUp, rate 40 Gb/s). ibstat found 9 HCAs."),
])
def test_port_problem_of_captures(name, expected, rate, problem):
    assert port_problem(facts(name), expected, rate, "gpu01") == problem


@pytest.mark.parametrize("name, rate, expected_lines", [
    # InfiniBand rails when any is good; the Active RoCE port is left out.
    (MIXED, 0, ["NCCL_IB_HCA==" + labels(0, 3, 4, 5, 6, 9, 10, 11), "NCCL_SOCKET_IFNAME==ib0"]),
    # RoCE only: every Active port at 0, the 400 Gb/s ones at 400, with the GID index.
    (ROCE, 0, ["NCCL_IB_GID_INDEX=3", "NCCL_IB_HCA==" + labels(0, 1, 2, 3, 4, 6, 7, 8, 9, 10), "NCCL_SOCKET_IFNAME==ib0"]),
    (ROCE_ALL, 400, ["NCCL_IB_GID_INDEX=3", "NCCL_IB_HCA==" + labels(0, 3, 4, 5, 6, 9, 10, 11),
                     "NCCL_SOCKET_IFNAME==ib0"]),
    # The A100 VM's Ethernet port is left out while its HDR ports are good...
    (A100, 0, ["NCCL_IB_HCA==" + labels(1, 2, 3, 4, 5, 6, 7, 8), "NCCL_SOCKET_IFNAME==ib0"]),
    (AZURE, 200, ["NCCL_IB_HCA==" + labels(0, 1, 2, 3, 4, 5, 6, 7), "NCCL_SOCKET_IFNAME==ib0"]),
    # ...and at 400 Gb/s no port is good: no NCCL_IB_HCA, no GID index.
    (A100, 400, ["NCCL_SOCKET_IFNAME==ib0"]),
    (AZURE, 400, ["NCCL_SOCKET_IFNAME==ib0"]),
])
def test_nccl_of_captures(name, rate, expected_lines):
    assert lines(facts(name), [], rate) == expected_lines
    assert lines(facts(name), ["all"], rate) == expected_lines


# --- synthetic facts: every branch --------------------------------------------------------------------

EDGES = hcas(
    ("mlx5_0", [port(1), port(2, rate=2.5)]),
    ("mlx5_1", [port(1, state="Initializing"), port(2, physical_state="Polling"), port(3, rate=100, link_layer="Ethernet")]),
    # sysfs facts may lack a value: it reads as None, and a missing rate as 0.
    ("mlx5_10", [port(1, state=None, physical_state=None, rate=None)]),
)


@pytest.mark.parametrize("rate, good", [
    (0, ["mlx5_0:1", "mlx5_0:2", "mlx5_1:3"]),
    ("0", ["mlx5_0:1", "mlx5_0:2", "mlx5_1:3"]),
    (2.5, ["mlx5_0:1", "mlx5_0:2", "mlx5_1:3"]),
    (2.6, ["mlx5_0:1", "mlx5_1:3"]),
    ("100", ["mlx5_0:1", "mlx5_1:3"]),
    (400.0, ["mlx5_0:1"]),
    (401, []),
    # Not a number: 0, as Jinja's float filter read it (the rules refuse it first).
    ("fast", ["mlx5_0:1", "mlx5_0:2", "mlx5_1:3"]),
])
def test_port_table_good(rate, good):
    table = port_table(EDGES, rate)
    assert [p["label"] for p in table] == ["mlx5_0:1", "mlx5_0:2", "mlx5_1:1", "mlx5_1:2", "mlx5_1:3", "mlx5_10:1"]
    assert [p["label"] for p in table if p["good"]] == good


def test_port_table_entry():
    assert port_table(EDGES, 0)[4] == {"label": "mlx5_1:3", "state": "Active", "physical_state": "LinkUp", "rate": 100,
                                       "link_layer": "Ethernet", "good": True}


@pytest.mark.parametrize("expected, result", [
    ([], (False, [])),
    (None, (False, [])),
    (["all"], (True, ["mlx5_0:1", "mlx5_0:2", "mlx5_1:1", "mlx5_1:2", "mlx5_1:3", "mlx5_10:1"])),
    (["mlx5_1:3", "mlx5_0:1"], (False, ["mlx5_1:3", "mlx5_0:1"])),
])
def test_expected_labels(expected, result):
    assert expected_labels(port_table(EDGES, 0), expected) == result


def test_bad_ports_in_the_expected_order():
    assert bad_ports(port_table(EDGES, 2.6), ["mlx5_10:1", "mlx5_0:2", "mlx5_0:1", "mlx5_1:1", "mlx5_1:2", "mlx5_2:1"]) == [
        "mlx5_10:1 (state None, physical state None, rate 0 Gb/s)",
        "mlx5_0:2 (state Active, physical state LinkUp, rate 2.5 Gb/s)",
        "mlx5_1:1 (state Initializing, physical state LinkUp, rate 400 Gb/s)",
        "mlx5_1:2 (state Active, physical state Polling, rate 400 Gb/s)",
        "mlx5_2:1 (not found)",
    ]


def test_bad_ports_first_port_of_a_label_counts():
    table = port_table(hcas(("mlx5_0", [port(1)]), ("mlx5_0", [port(1, state="Down")])), 0)
    assert bad_ports(table, ["mlx5_0:1"]) == []


@pytest.mark.parametrize("infiniband, expected, rate, problem", [
    # An HCA without ports: every port expected means none at all.
    (hcas(("mlx5_0", [])), ["all"], 0, "ofed: ofed_expected_ports is all, but ibstat found no HCA on gpu01."),
    (hcas(("mlx5_0", [])), ["mlx5_0:1"], 0,
     "ofed: 1 of 1 expected ports on gpu01 are not Active and LinkUp: mlx5_0:1 (not found). ibstat found 1 HCAs."),
    # The minimum rate as %g: 2.5 stays, 400.0 and "400" read 400.
    (EDGES, ["mlx5_0:2"], 2.6, "ofed: 1 of 1 expected ports on gpu01 are not Active and LinkUp at 2.6 Gb/s or more:"
                               " mlx5_0:2 (state Active, physical state LinkUp, rate 2.5 Gb/s). ibstat found 3 HCAs."),
    (EDGES, ["mlx5_0:2"], "400", "ofed: 1 of 1 expected ports on gpu01 are not Active and LinkUp at 400 Gb/s or more:"
                                 " mlx5_0:2 (state Active, physical state LinkUp, rate 2.5 Gb/s). ibstat found 3 HCAs."),
    (EDGES, ["mlx5_0:1", "mlx5_0:2"], 2.5, ""),
    (EDGES, [], 10000, ""),
    (EDGES, ["all"], 0,
     "ofed: 3 of 6 expected ports on gpu01 are not Active and LinkUp:"
     " mlx5_1:1 (state Initializing, physical state LinkUp, rate 400 Gb/s);"
     " mlx5_1:2 (state Active, physical state Polling, rate 400 Gb/s);"
     " mlx5_10:1 (state None, physical state None, rate 0 Gb/s). ibstat found 3 HCAs."),
])
def test_port_problem(infiniband, expected, rate, problem):
    assert port_problem(infiniband, expected, rate, "gpu01") == problem


MIXED_SMALL = hcas(("mlx5_0", [port(1, rate=200)]), ("mlx5_1", [port(1, link_layer="Ethernet")]),
                   ("mlx5_2", [port(1, rate=200)]), ("mlx5_3", [port(1, state="Down", link_layer="Ethernet")]))


@pytest.mark.parametrize("infiniband, expected, rate, ifname, gid, settings, result", [
    # InfiniBand wins over RoCE; at 400 Gb/s only the RoCE port is good, with its GID index.
    (MIXED_SMALL, [], 0, "=ib0", 3, {}, ["NCCL_IB_HCA==mlx5_0:1,mlx5_2:1", "NCCL_SOCKET_IFNAME==ib0"]),
    (MIXED_SMALL, [], 400, "=ib0", 3, {}, ["NCCL_IB_GID_INDEX=3", "NCCL_IB_HCA==mlx5_1:1", "NCCL_SOCKET_IFNAME==ib0"]),
    # Named ports: only those, in the facts' order; a named RoCE port alone makes it RoCE.
    (MIXED_SMALL, ["mlx5_2:1", "mlx5_0:1"], 0, "=ib0", 3, {}, ["NCCL_IB_HCA==mlx5_0:1,mlx5_2:1",
                                                               "NCCL_SOCKET_IFNAME==ib0"]),
    (MIXED_SMALL, ["mlx5_1:1", "mlx5_3:1"], 0, "=ib0", 0, {}, ["NCCL_IB_GID_INDEX=0", "NCCL_IB_HCA==mlx5_1:1",
                                                               "NCCL_SOCKET_IFNAME==ib0"]),
    # A Down port is never listed, even named; a named port that does not exist is left out.
    (MIXED_SMALL, ["mlx5_3:1", "mlx5_9:1"], 0, "=ib0", 3, {}, ["NCCL_SOCKET_IFNAME==ib0"]),
    # The GID index as given; only null leaves it out (the rules let "" through: it is written empty).
    (MIXED_SMALL, [], 400, "=ib0", "3", {}, ["NCCL_IB_GID_INDEX=3", "NCCL_IB_HCA==mlx5_1:1", "NCCL_SOCKET_IFNAME==ib0"]),
    (MIXED_SMALL, [], 400, "=ib0", None, {}, ["NCCL_IB_HCA==mlx5_1:1", "NCCL_SOCKET_IFNAME==ib0"]),
    (MIXED_SMALL, [], 400, "=ib0", "", {}, ["NCCL_IB_GID_INDEX=", "NCCL_IB_HCA==mlx5_1:1", "NCCL_SOCKET_IFNAME==ib0"]),
    # No GID index with InfiniBand; an empty NCCL_SOCKET_IFNAME is left out.
    (MIXED_SMALL, [], 0, "", 3, {}, ["NCCL_IB_HCA==mlx5_0:1,mlx5_2:1"]),
    (NO_HCA, [], 0, "", 3, {}, []),
    (NO_HCA, [], 0, "", 3, None, []),
    # Settings win, null removes one (computed or not), booleans are 1/0, the rest as written.
    (MIXED_SMALL, [], 0, "=ib0", 3,
     {"NCCL_IB_HCA": None, "NCCL_SOCKET_IFNAME": "=eth0", "NCCL_P2P_DISABLE": True, "NCCL_IBEXT_DISABLE": False,
      "NCCL_DEBUG": "INFO", "NCCL_IB_TIMEOUT": 22, "NCCL_X": 1.5, "NCCL_IB_GID_INDEX": None, "NCCL_ALGO": "Ring,Tree "},
     ["NCCL_ALGO=Ring,Tree ", "NCCL_DEBUG=INFO", "NCCL_IB_TIMEOUT=22", "NCCL_IBEXT_DISABLE=0", "NCCL_P2P_DISABLE=1",
      "NCCL_SOCKET_IFNAME==eth0", "NCCL_X=1.5"]),
    (MIXED_SMALL, [], 0, "=ib0", 3, {"NCCL_IB_HCA": "^mlx5_2"}, ["NCCL_IB_HCA=^mlx5_2", "NCCL_SOCKET_IFNAME==ib0"]),
])
def test_nccl(infiniband, expected, rate, ifname, gid, settings, result):
    assert nccl_conf_lines(nccl_settings(infiniband, expected, rate, ifname, gid, settings)) == result


def test_nccl_conf_lines_sort_keys_without_case():
    # As Jinja's dictsort: NCCL_IB_HCA ("_" before "e" in lower case) before NCCL_IBEXT_DISABLE.
    assert nccl_conf_lines({"NCCL_IBEXT_DISABLE": 1, "NCCL_IB_HCA": "=mlx5_0:1", "NCCL_ALGO": "Ring"}) == [
        "NCCL_ALGO=Ring", "NCCL_IB_HCA==mlx5_0:1", "NCCL_IBEXT_DISABLE=1"]
    assert nccl_conf_lines({}) == []


# --- the kernel check ---------------------------------------------------------------------------------

KERNEL = "6.1.0-18-amd64"
OFED_MODULE = {"rc": 0, "stdout": "/lib/modules/6.1.0-18-amd64/updates/dkms/mlx5_core.ko\n"}
DISTRO_MODULE = {"rc": 0, "stdout": "/lib/modules/6.1.0-18-amd64/kernel/drivers/net/ethernet/mellanox/mlx5/core/mlx5_core.ko"}
BUILDS = {"files": [{"path": "/lib/modules/6.1.0-17-amd64/updates/dkms/mlx5_core.ko"},
                    {"path": "/lib/modules/6.1.0-18-amd64/kernel/drivers/net/ethernet/mellanox/mlx5/core/mlx5_core.ko"},
                    {"path": "/lib/modules/5.10.0-28-amd64/updates/dkms/mlx5_core.ko"},
                    {"path": "/lib/modules/6.1.0-17-amd64/updates/mlx5_core.ko.xz"}]}
DKMS = {"stdout_lines": ["mlnx-ofed-kernel/24.10.OFED.24.10.1.1.4.1, 6.1.0-17-amd64, x86_64: installed",
                         "nvidia/550.90.07, 6.1.0-18-amd64, x86_64: installed",
                         "knem/1.1.4.90mlnx3, 6.1.0-17-amd64, x86_64: installed"]}


@pytest.mark.parametrize("kernel, modinfo, match", [
    (KERNEL, OFED_MODULE, True),
    (KERNEL, {"rc": 0, "stdout": "/lib/modules/6.1.0-18-amd64/updates/mlx5_core.ko"}, True),
    ("5.14.0-427.el9.x86_64",
     {"rc": 0, "stdout": "/lib/modules/5.14.0-427.el9.x86_64/extra/mlnx-ofa_kernel/drivers/net/mlx5_core.ko.xz"}, True),
    ("5.14.0-427.el9.x86_64", {"rc": 0, "stdout": "/lib/modules/5.14.0-427.el9.x86_64/weak-updates/mlx5_core.ko"}, True),
    (KERNEL, DISTRO_MODULE, False),
    # Another kernel's module, and a kernel name whose "." and "+" must match themselves.
    (KERNEL, {"rc": 0, "stdout": "/lib/modules/6.1.0-17-amd64/updates/dkms/mlx5_core.ko"}, False),
    ("6.8.0-45-generic+rt", {"rc": 0, "stdout": "/lib/modules/6.8.0-45-generic+rt/updates/mlx5_core.ko"}, True),
    ("6.1.0.18", {"rc": 0, "stdout": "/lib/modules/6x1x0x18/updates/mlx5_core.ko"}, False),
    # modinfo found nothing.
    (KERNEL, {"rc": 1, "stdout": "", "stderr": "modinfo: ERROR: Module mlx5_core not found."}, False),
    (KERNEL, {"rc": 1, "stdout": "/lib/modules/6.1.0-18-amd64/updates/dkms/mlx5_core.ko"}, False),
    (KERNEL, {}, False),
])
def test_kernel_match(kernel, modinfo, match):
    assert kernel_report(kernel, "doca", modinfo, BUILDS, DKMS, "linux-headers-" + kernel, "gpu01")["match"] is match


def test_kernel_message_doca():
    assert kernel_report(KERNEL, "doca", DISTRO_MODULE, BUILDS, DKMS, "linux-headers-6.1.0-18-amd64", "gpu01") == {
        "match": False,
        "message": "ofed: the DOCA-OFED kernel modules are not built for the running kernel 6.1.0-18-amd64 on gpu01:"
                   " it would load /lib/modules/6.1.0-18-amd64/kernel/drivers/net/ethernet/mellanox/mlx5/core/mlx5_core.ko,"
                   " the distribution's mlx5_core; OFED's mlx5_core is built for 5.10.0-28-amd64, 6.1.0-17-amd64."
                   " dkms status: mlnx-ofed-kernel/24.10.OFED.24.10.1.1.4.1, 6.1.0-17-amd64, x86_64: installed;"
                   " knem/1.1.4.90mlnx3, 6.1.0-17-amd64, x86_64: installed."
                   " Install the headers of 6.1.0-18-amd64 (linux-headers-6.1.0-18-amd64) and rebuild (dkms autoinstall),"
                   " or boot a kernel the modules were built for.",
    }


def test_kernel_message_mlnx_ofed_nothing_found():
    assert kernel_report("5.14.0-427.el9.x86_64", "mlnx_ofed", {"rc": 1, "stdout": ""}, {"files": []},
                         {"rc": 2, "stdout_lines": []}, "kernel-devel-5.14.0-427.el9.x86_64", "gpu02") == {
        "match": False,
        "message": "ofed: the MLNX_OFED kernel modules are not built for the running kernel 5.14.0-427.el9.x86_64 on"
                   " gpu02: it would load no mlx5_core at all; OFED's mlx5_core is built for no kernel."
                   " Install the headers of 5.14.0-427.el9.x86_64 (kernel-devel-5.14.0-427.el9.x86_64) and rebuild"
                   " (mlnxofedinstall with --add-kernel-support), or boot a kernel the modules were built for.",
    }


def test_kernel_report_needs_an_ofed_stack():
    with pytest.raises(ValueError, match="ofed_source must be doca or mlnx_ofed for the kernel check"):
        kernel_report(KERNEL, "inbox", OFED_MODULE, BUILDS, DKMS, "linux-headers-" + KERNEL, "gpu01")


@pytest.mark.parametrize("modinfo, module", [
    (OFED_MODULE, "/lib/modules/6.1.0-18-amd64/updates/dkms/mlx5_core.ko"),
    ({"rc": 0, "stdout": "  /lib/modules/x/kernel/mlx5_core.ko \n"}, "/lib/modules/x/kernel/mlx5_core.ko"),
    ({"rc": 0}, ""),
    ({"rc": 1, "stdout": "/lib/modules/x/updates/mlx5_core.ko"}, ""),
    ({"stdout": "/lib/modules/x/updates/mlx5_core.ko"}, ""),
])
def test_loaded_module(modinfo, module):
    assert loaded_module(modinfo) == module


@pytest.mark.parametrize("builds, kernels", [
    (BUILDS, ["5.10.0-28-amd64", "6.1.0-17-amd64"]),
    ({}, []),
    ({"files": []}, []),
    # Only OFED's directories; /usr/lib/modules is not /lib/modules; one of names equal but for case, sorted so.
    ({"files": [{"path": "/usr/lib/modules/6.1.0-19-amd64/updates/mlx5_core.ko"},
                {"path": "/lib/modules/B-kernel/extra/mlx5_core.ko"},
                {"path": "/lib/modules/a-kernel/weak-updates/mlx5_core.ko"},
                {"path": "/lib/modules/b-KERNEL/updates/mlx5_core.ko"},
                {"path": "/lib/modules/6.1.0-18-amd64/kernel/mlx5_core.ko"}]}, ["a-kernel", "B-kernel"]),
])
def test_built_kernels(builds, kernels):
    assert built_kernels(builds) == kernels


@pytest.mark.parametrize("dkms, result", [
    (DKMS, [DKMS["stdout_lines"][0], DKMS["stdout_lines"][2]]),
    ({"stdout_lines": ["MLX_stuff: built", "srp-OFED/1: added", "iser/24.10: installed", "nvidia/550: installed"]},
     ["MLX_stuff: built", "srp-OFED/1: added"]),
    ({}, []),
    ({"rc": 2, "msg": "[Errno 2] No such file or directory: b'dkms'"}, []),
])
def test_dkms_lines(dkms, result):
    assert dkms_lines(dkms) == result


def names_input(distribution, version, architecture, **names):
    return Unread({"doca_distro": "", "doca_arch": "", "mlnx_ofed_distro": "", "mlnx_ofed_arch": "", **names,
                   "distribution": distribution, "distribution_version": version,
                   "distribution_major_version": version.split(".")[0], "architecture": architecture})


@pytest.mark.parametrize("given, expected", [
    pytest.param(names_input("Debian", "12.5", "x86_64"),
                 {"doca_distro": "debian12", "doca_arch": "x86_64", "mlnx_ofed_distro": "debian12.5",
                  "mlnx_ofed_arch": "x86_64"}, id="debian"),
    pytest.param(names_input("Ubuntu", "22.04", "aarch64"),
                 {"doca_distro": "ubuntu22.04", "doca_arch": "arm64-sbsa", "mlnx_ofed_distro": "ubuntu22.04",
                  "mlnx_ofed_arch": "aarch64"}, id="ubuntu-arm"),
    pytest.param(names_input("Rocky", "9.4", "ppc64le"),
                 {"doca_distro": "rhel9", "doca_arch": "ppc64le", "mlnx_ofed_distro": "rhel9.4", "mlnx_ofed_arch": "ppc64le"},
                 id="el"),
    # Set by the role's variables: no fact is read.
    pytest.param(Unread(doca_distro="ubuntu24.04", doca_arch="x86_64", mlnx_ofed_distro="rhel9.2", mlnx_ofed_arch="aarch64",
                        distribution=UNREAD, distribution_version=UNREAD, distribution_major_version=UNREAD,
                        architecture=UNREAD),
                 {"doca_distro": "ubuntu24.04", "doca_arch": "x86_64", "mlnx_ofed_distro": "rhel9.2",
                  "mlnx_ofed_arch": "aarch64"}, id="set"),
])
def test_source_names(given, expected):
    assert source_names(given) == expected


DOCA_REPOSITORY = {"name": "gpucluster-doca", "url": "https://linux.mellanox.com/public/repo/doca/2.9.1/debian12/x86_64/"}
ARCHIVE = "https://content.mellanox.com/ofed/MLNX_OFED-24.10/MLNX_OFED_LINUX-24.10-debian12.5-x86_64.tgz"


def artifacts_input(source, ifupdown=False, os_family="Debian"):
    return Unread(supported=True, source=source,
                  inbox_install=["rdma-core", "ibverbs-utils"] if source == "inbox" else UNREAD,
                  doca_repository=DOCA_REPOSITORY if source == "doca" else UNREAD,
                  doca_repo_packages=["doca-ofed"] if source == "doca" else UNREAD,
                  headers=["linux-headers-6.1.0-28-amd64"] if source == "doca" else UNREAD,
                  mlnx_ofed_url=ARCHIVE if source == "mlnx_ofed" else UNREAD,
                  mlnx_ofed_checksum="sha256:ab" if source == "mlnx_ofed" else UNREAD,
                  mlnx_ofed_install=["perl", "linux-headers-6.1.0-28-amd64"] if source == "mlnx_ofed" else UNREAD,
                  network_manage=ifupdown, network_backend="ifupdown" if ifupdown else UNREAD, os_family=os_family,
                  ifupdown_package="ifupdown")


@pytest.mark.parametrize("given, expected", [
    pytest.param(artifacts_input("inbox"), {"role": "ofed", "supported": True, "repositories": [], "files": [],
                                            "distribution_packages": ["rdma-core", "ibverbs-utils"]}, id="inbox"),
    pytest.param(artifacts_input("doca", ifupdown=True),
                 {"role": "ofed", "supported": True, "repositories": [dict(DOCA_REPOSITORY, packages=[{"name": "doca-ofed"}])],
                  "files": [], "distribution_packages": ["linux-headers-6.1.0-28-amd64", "ifupdown"]}, id="doca-ifupdown"),
    pytest.param(artifacts_input("mlnx_ofed", ifupdown=True, os_family="RedHat"),
                 {"role": "ofed", "supported": True, "repositories": [], "files": [{"url": ARCHIVE, "checksum": "sha256:ab"}],
                  "distribution_packages": ["perl", "linux-headers-6.1.0-28-amd64"]}, id="mlnx-ofed-el"),
])
def test_artifacts(given, expected):
    assert artifacts(given) == expected
