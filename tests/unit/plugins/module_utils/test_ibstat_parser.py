# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import pytest

from ansible_collections.gpucluster.core.plugins.module_utils._ibstat import (
    IbstatError,
    parse_ibstat,
    read_sysfs,
    summarize,
)
from ansible_collections.gpucluster.core.tests.unit.plugins.shared_fixtures import (
    list_fixtures,
    read_fixture,
)

IB = "ibstat"
MIXED = "h100-8x-ndr-ib-cx7-plus-4x-roce-cx6dx-3-ports-down.txt"


def facts_of(name):
    return summarize(parse_ibstat(read_fixture(IB, name)), "ibstat")


@pytest.mark.parametrize("name", list_fixtures(IB))
def test_every_fixture(name):
    facts = facts_of(name)
    assert facts["ca_count"] == len(facts["cas"]) > 0
    for ca in facts["cas"]:
        assert ca["name"].startswith("mlx5_")
        assert ca["ports"]
        for port in ca["ports"]:
            assert port["state"] in ("Active", "Down", "Initializing", "Armed")
            assert port["physical_state"] in ("LinkUp", "Disabled", "Polling")
            assert isinstance(port["rate_gbps"], (int, float))
            assert port["link_layer"] in ("InfiniBand", "Ethernet")
    assert facts["nccl_ib_hca"] == ",".join(facts["active_ib_ports"] or facts["active_roce_ports"])


@pytest.mark.parametrize(
    "name, count, ib, roce",
    [
        ("a100-9x-mlx5gen-vf-mt4126-8-ib-hdr-1-ethernet.txt", 9, ["mlx5_%d:1" % i for i in range(1, 9)], ["mlx5_0:1"]),
        ("h100-12x-roce-ethernet-2-cx7-ports-down.txt", 12, [],
         ["mlx5_%d:1" % i for i in (0, 1, 2, 3, 4, 6, 7, 8, 9, 10)]),
        ("h100-12x-roce-ethernet-cx7-400g-cx6dx-100g-all-active.txt", 12, [], ["mlx5_%d:1" % i for i in range(12)]),
        (MIXED, 12, ["mlx5_%d:1" % i for i in (0, 3, 4, 5, 6, 9, 10, 11)], ["mlx5_1:1"]),
        ("ibstatus-azure-a100-9x-hdr-200g.txt", 9, ["mlx5_%d:1" % i for i in range(8)], ["mlx5_8:1"]),
    ],
)
def test_active_ports(name, count, ib, roce):
    facts = facts_of(name)
    assert facts["ca_count"] == count
    assert facts["active_ib_ports"] == ib
    assert facts["active_roce_ports"] == roce


def test_mixed_node_details():
    facts = facts_of(MIXED)
    cas = {ca["name"]: ca for ca in facts["cas"]}
    assert [ca["name"] for ca in facts["cas"]][:3] == ["mlx5_0", "mlx5_1", "mlx5_2"]  # natural order
    assert facts["cas"][-1]["name"] == "mlx5_11"
    mlx5_0 = cas["mlx5_0"]
    assert mlx5_0 == {
        "name": "mlx5_0", "type": "MT4129", "number_of_ports": 1, "firmware_version": "28.39.1002",
        "hardware_version": "0", "node_guid": "0x946dae0300cde72c", "system_image_guid": "0x946dae0300cde72c",
        "ports": [{
            "port": 1, "state": "Active", "physical_state": "LinkUp", "rate_gbps": 400, "base_lid": 75,
            "sm_lid": 334, "lmc": 0, "port_guid": "0x946dae0300cde72c", "link_layer": "InfiniBand",
        }],
    }
    assert cas["mlx5_1"]["type"] == "MT4125"
    assert cas["mlx5_1"]["ports"][0]["link_layer"] == "Ethernet"
    for down in ("mlx5_2", "mlx5_7", "mlx5_8"):
        port = cas[down]["ports"][0]
        assert (port["state"], port["physical_state"], port["rate_gbps"]) == ("Down", "Disabled", 40)
    assert facts["nccl_ib_hca"] == "mlx5_0:1,mlx5_3:1,mlx5_4:1,mlx5_5:1,mlx5_6:1,mlx5_9:1,mlx5_10:1,mlx5_11:1"


def test_zero_guids_kept():
    cas = {ca["name"]: ca for ca in facts_of("h100-12x-roce-ethernet-2-cx7-ports-down.txt")["cas"]}
    assert cas["mlx5_5"]["ports"][0]["port_guid"] == "0x0000000000000000"
    assert cas["mlx5_5"]["ports"][0]["state"] == "Down"


def test_ibstatus_format():
    facts = facts_of("ibstatus-azure-a100-9x-hdr-200g.txt")
    first = facts["cas"][0]
    assert first["type"] is None and first["node_guid"] is None
    assert first["ports"][0] == {
        "port": 1, "state": "Active", "physical_state": "LinkUp", "rate_gbps": 200, "base_lid": 0x33BF,
        "sm_lid": 1, "lmc": None, "port_guid": "0x00155dfffd3411eb", "link_layer": "InfiniBand",
    }
    last = facts["cas"][-1]["ports"][0]
    assert (last["link_layer"], last["rate_gbps"], last["port_guid"]) == ("Ethernet", 40, None)


def test_spaces_instead_of_tabs():
    text = read_fixture(IB, MIXED).replace("\t", "    ")
    assert facts_of(MIXED) == summarize(parse_ibstat(text), "ibstat")


def test_error_line_after_partial_output():
    text = read_fixture(IB, MIXED)
    lines = text.splitlines()
    partial = "\n".join(lines[:20]) + "\nibpanic: [12345] main: stat of IB device 'mlx5_10' failed: No such file or directory\n"
    with pytest.raises(IbstatError) as exc:
        parse_ibstat(partial)
    assert str(exc.value) == (
        "ibstat output not understood at line 21: "
        "\"ibpanic: [12345] main: stat of IB device 'mlx5_10' failed: No such file or directory\""
    )


def test_truncated_port():
    lines = read_fixture(IB, MIXED).splitlines()
    with pytest.raises(IbstatError) as exc:
        parse_ibstat("\n".join(lines[:9]))  # stops after "State: Active" of mlx5_0
    assert str(exc.value) == "ibstat output is incomplete: mlx5_0 port 1 has no physical_state, rate_gbps, link_layer"


def test_truncated_ca():
    lines = read_fixture(IB, MIXED).splitlines()
    with pytest.raises(IbstatError) as exc:
        parse_ibstat("\n".join(lines[:7]))  # CA header lines only, no Port 1:
    assert str(exc.value) == "ibstat output is incomplete: CA mlx5_0 reports 1 ports, the output lists 0"


def test_empty_output_is_no_hca():
    assert parse_ibstat("") == []
    assert summarize([], None) == {
        "source": None, "ca_count": 0, "cas": [], "active_ib_ports": [], "active_roce_ports": [], "nccl_ib_hca": "",
    }


def make_ib_device(root, name, hca_type, ports):
    """Lay out <root>/class/infiniband/<name> as the kernel does; ports: {n: {file: text}}."""
    dev = root / "class" / "infiniband" / name
    (dev / "ports").mkdir(parents=True)
    (dev / "hca_type").write_text(hca_type + "\n")
    (dev / "fw_ver").write_text("28.39.1002\n")
    (dev / "hw_rev").write_text("0x0\n")
    (dev / "node_guid").write_text("946d:ae03:00cd:e72c\n")
    (dev / "sys_image_guid").write_text("946d:ae03:00cd:e72c\n")
    for number, files in ports.items():
        pdir = dev / "ports" / str(number)
        (pdir / "gids").mkdir(parents=True)
        for fname, text in files.items():
            (pdir / fname).write_text(text + "\n")


def test_sysfs(tmp_path):
    make_ib_device(tmp_path, "mlx5_10", "MT4129", {1: {
        "state": "4: ACTIVE", "phys_state": "5: LinkUp", "rate": "400 Gb/sec (4X NDR)", "lid": "0x4b",
        "sm_lid": "0x14e", "lid_mask_count": "0", "link_layer": "InfiniBand",
        "gids/0": "fe80:0000:0000:0000:946d:ae03:00cd:e72c",
    }})
    make_ib_device(tmp_path, "mlx5_bond_0", "MT4125", {1: {
        "state": "1: DOWN", "phys_state": "3: Disabled", "rate": "40 Gb/sec (4X QDR)", "lid": "0x0",
        "sm_lid": "0x0", "lid_mask_count": "0", "link_layer": "Ethernet",
    }})
    make_ib_device(tmp_path, "mlx5_2", "MT4129", {1: {
        "state": "4: ACTIVE", "phys_state": "5: LinkUp", "rate": "400 Gb/sec (4X NDR)", "lid": "0x5",
        "sm_lid": "0x14e", "lid_mask_count": "0", "link_layer": "InfiniBand",
    }})
    facts = summarize(read_sysfs(str(tmp_path)), "sysfs")
    assert [ca["name"] for ca in facts["cas"]] == ["mlx5_2", "mlx5_10", "mlx5_bond_0"]
    ca = facts["cas"][1]
    assert ca["node_guid"] == "0x946dae0300cde72c"
    assert ca["ports"][0] == {
        "port": 1, "state": "Active", "physical_state": "LinkUp", "rate_gbps": 400, "base_lid": 75,
        "sm_lid": 334, "lmc": 0, "port_guid": "0x946dae0300cde72c", "link_layer": "InfiniBand",
    }
    bond = facts["cas"][2]["ports"][0]
    assert (bond["state"], bond["physical_state"], bond["link_layer"]) == ("Down", "Disabled", "Ethernet")
    assert facts["nccl_ib_hca"] == "mlx5_2:1,mlx5_10:1"
    assert read_sysfs(str(tmp_path / "none")) == []
