# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests of the nvidia-smi parsers against every real capture in shared/fixtures."""

from __future__ import annotations

import os

import pytest

from ansible_collections.gpucluster.core.plugins.module_utils._nvidia_smi import (
    NvidiaSmiError,
    command_error,
    merge_topology,
    parse_cpu_list,
    parse_list,
    parse_topology,
    parse_xml,
    scan_pci,
)
from ansible_collections.gpucluster.core.tests.unit.plugins.shared_fixtures import (
    list_fixtures,
    read_fixture,
)

XML = "nvidia-smi-xml"
TOPO = "nvidia-smi-topo"

GPU_KEYS = {
    "index", "minor_number", "device_file", "uuid", "name", "brand", "architecture",
    "pci_bus_id", "pci_device_id", "memory_total_mib", "persistence_mode", "compute_mode",
    "driver_model", "ecc_mode", "power_limit_w", "default_power_limit_w", "min_power_limit_w",
    "max_power_limit_w", "mig_mode", "mig_devices", "serial", "vbios_version",
}
PLACEHOLDERS = {"N/A", "[N/A]", "Requested functionality has been deprecated", "Not Supported", "None", ""}


def _walk(value):
    if isinstance(value, dict):
        for item in value.values():
            yield from _walk(item)
    elif isinstance(value, list):
        for item in value:
            yield from _walk(item)
    else:
        yield value


@pytest.mark.parametrize("name", list_fixtures(XML))
def test_every_xml_fixture_parses(name):
    facts = parse_xml(read_fixture(XML, name))
    assert facts["gpu_count"] == len(facts["gpus"]) >= 1
    assert facts["driver_version"]
    for pos, gpu in enumerate(facts["gpus"]):
        assert set(gpu) == GPU_KEYS
        assert gpu["index"] == pos
        assert gpu["uuid"].startswith("GPU-")
        assert gpu["name"]
        assert isinstance(gpu["memory_total_mib"], int)
        if gpu["minor_number"] is not None:
            assert gpu["device_file"] == "/dev/nvidia%d" % gpu["minor_number"]
    # No placeholder survives as a string.
    for leaf in _walk(facts):
        if isinstance(leaf, str):
            assert leaf.strip() not in PLACEHOLDERS


@pytest.mark.parametrize(
    "name, driver, cuda, attached, count",
    [
        ("2x-rtx-a5000-driver590-v13.xml", "590.44.01", "13.1", 2, 2),
        ("8x-tesla-v100s-pcie-32gb-driver460-v11.xml", "460.73.01", "11.2", 8, 8),
        ("a100-sxm4-80gb-mig-driver535-v12.xml", "535.54.03", "12.2", 4, 1),
        ("a10g-aws-driver515-v11.xml", "515.105.01", "11.7", 1, 1),
        ("gtx1660ti-driver418-no-doctype.xml", "418.43", "10.1", 1, 1),
        ("rtx-pro-6000-blackwell-maxq-driver590-v13.xml", "590.44.01", "13.1", 1, 1),
        ("rtx3080-driver595-v13.xml", "595.58.03", "13.2", 1, 1),
        ("rtx3080-windows-wddm-driver536-v12.xml", "536.40", "12.2", 1, 1),
        ("rtx4000-sff-ada-driver595-v13-deprecated-fields.xml", "595.84", "13.2", 1, 1),
        ("tesla-t4-driver515-v11.xml", "515.105.01", "11.7", 1, 1),
    ],
)
def test_driver_and_counts(name, driver, cuda, attached, count):
    facts = parse_xml(read_fixture(XML, name))
    assert (facts["driver_version"], facts["cuda_version"]) == (driver, cuda)
    assert (facts["attached_gpus"], facts["gpu_count"]) == (attached, count)


def test_eight_v100s():
    facts = parse_xml(read_fixture(XML, "8x-tesla-v100s-pcie-32gb-driver460-v11.xml"))
    gpus = facts["gpus"]
    assert [g["minor_number"] for g in gpus] == list(range(8))
    assert [g["pci_bus_id"] for g in gpus] == [
        "00000000:00:0D.0", "00000000:00:0E.0", "00000000:00:0F.0", "00000000:00:10.0",
        "00000000:00:11.0", "00000000:00:12.0", "00000000:00:13.0", "00000000:00:14.0",
    ]
    assert gpus[0]["uuid"] == "GPU-76098dc1-d3bc-9a1b-7ea6-f7b48837829e"
    assert gpus[7]["uuid"] == "GPU-1d955959-c95b-4f40-2cac-100d3006ffe2"
    assert gpus[1]["serial"] == "1562920005886"
    for gpu in gpus:
        assert gpu["name"] == "Tesla V100S-PCIE-32GB"
        assert gpu["brand"] == "Tesla"
        assert gpu["architecture"] is None  # v11 from driver 460 has no <product_architecture>
        assert gpu["memory_total_mib"] == 32510
        assert gpu["ecc_mode"] == {"current": "Enabled", "pending": "Enabled"}
        assert gpu["power_limit_w"] == 250.0
        assert gpu["min_power_limit_w"] == 100.0
        assert gpu["mig_mode"] == {"current": None, "pending": None}
        assert gpu["mig_devices"] == []
        assert gpu["vbios_version"] == "88.00.98.00.01"
        assert gpu["persistence_mode"] == "Disabled"
        assert gpu["compute_mode"] == "Default"


def test_a100_mig_devices():
    facts = parse_xml(read_fixture(XML, "a100-sxm4-80gb-mig-driver535-v12.xml"))
    gpu = facts["gpus"][0]
    assert gpu["name"] == "NVIDIA A100-SXM4-80GB"
    assert gpu["minor_number"] == 1
    assert gpu["device_file"] == "/dev/nvidia1"
    assert gpu["memory_total_mib"] == 81920
    assert gpu["mig_mode"] == {"current": "Enabled", "pending": "Enabled"}
    assert gpu["power_limit_w"] == 500.0  # v12 <gpu_power_readings><current_power_limit>
    assert [(m["index"], m["gpu_instance_id"], m["compute_instance_id"]) for m in gpu["mig_devices"]] == [
        (0, 3, 0), (1, 4, 0), (2, 5, 0), (3, 6, 0),
    ]
    for mig in gpu["mig_devices"]:
        assert mig["memory_total_mib"] == 19968
        assert mig["multiprocessor_count"] == 14
        assert mig["profile"] is None  # this driver's XML names no profile


def test_minor_number_is_not_the_index():
    facts = parse_xml(read_fixture(XML, "2x-rtx-a5000-driver590-v13.xml"))
    assert [(g["index"], g["minor_number"], g["pci_bus_id"]) for g in facts["gpus"]] == [
        (0, 1, "00000000:81:00.0"),
        (1, 0, "00000000:C1:00.0"),
    ]
    assert facts["gpus"][0]["device_file"] == "/dev/nvidia1"


def test_windows_wddm_capture():
    gpu = parse_xml(read_fixture(XML, "rtx3080-windows-wddm-driver536-v12.xml"))["gpus"][0]
    assert gpu["minor_number"] is None
    assert gpu["device_file"] is None
    assert gpu["persistence_mode"] is None
    assert gpu["driver_model"] == {"current": "WDDM", "pending": "WDDM"}
    assert gpu["serial"] is None


def test_deprecated_fields_become_null():
    text = read_fixture(XML, "rtx4000-sff-ada-driver595-v13-deprecated-fields.xml")
    assert "<display_mode>Requested functionality has been deprecated</display_mode>" in text
    gpu = parse_xml(text)["gpus"][0]
    assert gpu["name"] == "NVIDIA RTX 4000 SFF Ada Generation"
    assert gpu["architecture"] == "Ada Lovelace"
    assert gpu["power_limit_w"] == 70.0


def test_no_doctype_old_schema():
    gpu = parse_xml(read_fixture(XML, "gtx1660ti-driver418-no-doctype.xml"))["gpus"][0]
    assert gpu["name"] == "Graphics Device"
    assert gpu["mig_mode"] == {"current": None, "pending": None}
    assert gpu["ecc_mode"] == {"current": None, "pending": None}
    assert gpu["serial"] is None
    assert gpu["power_limit_w"] == 130.0


def test_garbage_before_xml_keeps_line_numbers():
    text = read_fixture(XML, "tesla-t4-driver515-v11.xml")
    lines = text.splitlines(True)
    broken = "WARNING: something\n" + "".join(lines[:10]) + "<bad\n"
    with pytest.raises(NvidiaSmiError) as exc:
        parse_xml(broken)
    assert "malformed XML" in str(exc.value)
    assert "at line 12," in str(exc.value)


def test_command_error_message():
    msg = command_error(
        ["/usr/bin/nvidia-smi", "-q", "-x"], 9,
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
        "Make sure that the latest NVIDIA driver is installed and running.\n\n", "",
    )
    assert msg == (
        "/usr/bin/nvidia-smi -q -x failed (rc=9): NVIDIA-SMI has failed because it couldn't "
        "communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running."
    )
    assert command_error(["nvidia-smi"], 6, "", "") == "nvidia-smi failed (rc=6): no output"


# ----------------------------------------------------------------------------- topo -m

@pytest.mark.parametrize("name", list_fixtures(TOPO))
def test_every_topo_fixture_parses(name):
    topo = parse_topology(read_fixture(TOPO, name))
    assert topo["columns"]
    assert set(topo["devices"]) >= set(c for c in topo["columns"] if c.startswith("GPU"))
    for label, row in topo["devices"].items():
        assert label not in row["links"]
        assert set(row["links"]) <= set(topo["columns"])
        assert row["cpu_affinity"] is None or all(isinstance(c, int) for c in row["cpu_affinity"])


def test_topo_h100_eight_gpus_nv18():
    topo = parse_topology(read_fixture(TOPO, "h100-8gpu-nv18-ht-cpu-affinity-spaces-expanded.txt"))
    assert topo["columns"] == ["GPU%d" % i for i in range(8)]
    assert topo["legend"] == {}
    assert topo["nics"] == {}
    node0 = list(range(0, 52)) + list(range(104, 156))
    node1 = list(range(52, 104)) + list(range(156, 208))
    for i in range(8):
        row = topo["devices"]["GPU%d" % i]
        assert row["links"] == {"GPU%d" % j: "NV18" for j in range(8) if j != i}
        assert row["cpu_affinity"] == (node0 if i < 4 else node1)
        assert row["numa_node"] == (0 if i < 4 else 1)


def test_topo_ansi_escapes_and_legend():
    topo = parse_topology(read_fixture(TOPO, "h100-single-gpu-vm-ansi-escapes-driver590.txt"))
    assert topo["columns"] == ["GPU0"]
    assert topo["devices"] == {
        "GPU0": {"links": {}, "cpu_affinity": list(range(20)), "numa_node": 0, "gpu_numa_id": None},
    }
    assert topo["legend"]["X"] == "Self"
    assert topo["legend"]["NV#"] == "Connection traversing a bonded set of # NVLinks"
    assert set(topo["legend"]) == {"X", "SYS", "NODE", "PHB", "PXB", "PIX", "NV#"}


def test_topo_windows_empty_affinity():
    topo = parse_topology(read_fixture(TOPO, "rtx2080super-windows-empty-affinity-driver610.txt"))
    assert topo["devices"]["GPU0"] == {"links": {}, "cpu_affinity": None, "numa_node": None, "gpu_numa_id": None}


def test_merge_topology_by_index():
    facts = parse_xml(read_fixture(XML, "rtx-pro-6000-blackwell-maxq-driver590-v13.xml"))
    topo = parse_topology(read_fixture(TOPO, "h100-single-gpu-vm-ansi-escapes-driver590.txt"))
    merge_topology(facts, topo)
    assert facts["gpus"][0]["cpu_affinity"] == list(range(20))
    assert facts["gpus"][0]["numa_node"] == 0
    assert facts["gpus"][0]["links"] == {}
    assert facts["topology"] is topo


@pytest.mark.parametrize(
    "value, expected",
    [
        ("0-3,8", [0, 1, 2, 3, 8]),
        ("5", [5]),
        ("N/A", None),
        ("", None),
        (None, None),
    ],
)
def test_parse_cpu_list(value, expected):
    assert parse_cpu_list(value) == expected


# ----------------------------------------------------------------------------- sysfs


def make_pci_device(root, address, vendor, pci_class, device="0x2330", driver=None, numa="0"):
    """Build one <root>/bus/pci/devices/<address> directory like the kernel's."""
    dev = root / "bus" / "pci" / "devices" / address
    dev.mkdir(parents=True)
    (dev / "vendor").write_text(vendor + "\n")
    (dev / "class").write_text(pci_class + "\n")
    (dev / "device").write_text(device + "\n")
    (dev / "numa_node").write_text(numa + "\n")
    if driver:
        drv = root / "bus" / "pci" / "drivers" / driver
        drv.mkdir(parents=True, exist_ok=True)
        os.symlink(str(drv), str(dev / "driver"))
    return dev


def test_scan_pci_gpus_and_nvswitches(tmp_path):
    make_pci_device(tmp_path, "0000:18:00.0", "0x10de", "0x030200", driver="nvidia")
    make_pci_device(tmp_path, "0000:2a:00.0", "0x10de", "0x030200", numa="1")
    make_pci_device(tmp_path, "0000:05:00.0", "0x10de", "0x068000", device="0x22a3")
    make_pci_device(tmp_path, "0000:03:00.0", "0x10de", "0x030000", device="0x1eb8")
    make_pci_device(tmp_path, "0000:03:00.1", "0x10de", "0x040300")  # HDMI audio function
    make_pci_device(tmp_path, "0000:00:1f.6", "0x8086", "0x020000")  # Intel NIC
    pci = scan_pci(str(tmp_path))
    assert [g["pci_address"] for g in pci["gpus"]] == ["0000:03:00.0", "0000:18:00.0", "0000:2a:00.0"]
    assert pci["gpus"][1] == {
        "pci_address": "0000:18:00.0", "device_id": "0x2330", "class": "0x030200",
        "driver": "nvidia", "numa_node": 0,
    }
    assert pci["gpus"][2]["driver"] is None
    assert pci["gpus"][2]["numa_node"] == 1
    assert pci["gpu_count"] == 3
    assert [s["pci_address"] for s in pci["nvswitches"]] == ["0000:05:00.0"]
    assert pci["nvswitch_count"] == 1
    assert pci["fabric_manager_required"] is True


def test_scan_pci_cpu_node(tmp_path):
    make_pci_device(tmp_path, "0000:00:1f.6", "0x8086", "0x020000")
    assert scan_pci(str(tmp_path)) == {
        "gpus": [], "gpu_count": 0, "nvswitches": [], "nvswitch_count": 0, "fabric_manager_required": False,
    }


def test_scan_pci_no_sysfs(tmp_path):
    assert scan_pci(str(tmp_path / "missing"))["gpu_count"] == 0


# ---------------------------------------------------------------------------
# nvidia-smi -L
# ---------------------------------------------------------------------------

H200_LIST = read_fixture("h200-driver580", "nvidia-smi-L.txt")
H200_LINE = "GPU 0: NVIDIA H200 (UUID: GPU-0d427690-ef55-14cc-625c-7cef66684e67)"
# MIG device lines in the layout NVIDIA's MIG user guide prints under a GPU in MIG mode (no MIG
# capture of ours: the lent machines' MIG mode stays as it is), under our H200's line.
MIG_LINES = ("  MIG 1g.18gb     Device  0: (UUID: MIG-ffda444c-c706-57c6-98c9-67c441a0b109)\n"
             "  MIG 3g.71gb     Device  1: (UUID: MIG-fe9bc608-60f5-5479-8cc4-1827021d27a9)\n")


def test_list_h200_capture():
    assert H200_LIST == H200_LINE + "\n"
    assert parse_list(H200_LIST) == [{"index": 0, "name": "NVIDIA H200",
                                      "uuid": "GPU-0d427690-ef55-14cc-625c-7cef66684e67", "mig": []}]


def test_list_h100_capture():
    assert parse_list(read_fixture("h100-80gb-hbm3-driver580-b", "nvidia-smi-L.txt")) == [
        {"index": 0, "name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-8ca33e10-291f-cd98-b007-e77292564a65", "mig": []}]


def test_list_two_gpus_with_mig_devices():
    text = H200_LIST + MIG_LINES + H200_LINE.replace("GPU 0", "GPU 1").replace("0d427690", "1d427690") + "\n"
    gpus = parse_list(text)
    assert [(g["index"], g["uuid"]) for g in gpus] == [
        (0, "GPU-0d427690-ef55-14cc-625c-7cef66684e67"), (1, "GPU-1d427690-ef55-14cc-625c-7cef66684e67")]
    assert gpus[0]["mig"] == [
        {"profile": "1g.18gb", "index": 0, "uuid": "MIG-ffda444c-c706-57c6-98c9-67c441a0b109"},
        {"profile": "3g.71gb", "index": 1, "uuid": "MIG-fe9bc608-60f5-5479-8cc4-1827021d27a9"}]
    assert gpus[1]["mig"] == []


T4_XML = read_fixture(XML, "tesla-t4-driver515-v11.xml")
H100_TOPO_LINES = read_fixture(TOPO, "h100-8gpu-nv18-ht-cpu-affinity-spaces-expanded.txt").splitlines()


@pytest.mark.parametrize("parse, output, message", [
    (parse_xml, "", "nvidia-smi -q -x returned no output"),
    (parse_xml, "Failed to initialize NVML: Driver/library version mismatch\n",
     "nvidia-smi -q -x did not return XML; its output starts with: Failed to initialize NVML: Driver/library version mismatch"),
    (parse_xml, "No devices were found\n",
     "nvidia-smi -q -x did not return XML; its output starts with: No devices were found"),
    (parse_xml, '<?xml version="1.0" ?>\n<other/>\n',
     "nvidia-smi -q -x returned XML whose root element is <other>, not <nvidia_smi_log>"),
    (parse_xml, "".join(T4_XML.splitlines(True)[:50]),
     "nvidia-smi -q -x returned malformed XML: no element found at line 51, column 0"),
    (parse_xml, T4_XML.replace('"nvsmi_device_v11.dtd">', '"nvsmi_device_v11.dtd" [<!ENTITY a "aaaaaaaaaa">]>', 1),
     "nvidia-smi -q -x output declares XML entities; refusing to parse it"),
    (parse_topology, "", "nvidia-smi topo -m returned no output"),
    (parse_topology, "No devices were found\n", "nvidia-smi topo -m output has no matrix header (a line naming GPU0...)"),
    # The GPU2 row cut after two cells.
    (parse_topology, "\n".join(H100_TOPO_LINES[:3] + [H100_TOPO_LINES[3][:20]] + H100_TOPO_LINES[4:]),
     "nvidia-smi topo -m: row GPU2 has 2 link cells, the header names 8 devices"),
    (parse_cpu_list, "0-x", "cannot read CPU list '0-x'"),
    (parse_cpu_list, "3-1", "cannot read CPU list '3-1'"),
    (parse_cpu_list, "a", "cannot read CPU list 'a'"),
    (parse_list, "", "nvidia-smi -L: no GPU listed"),
    (parse_list, "No devices were found\n", "nvidia-smi -L: line 1 is not a GPU or MIG device line: 'No devices were found'"),
    (parse_list, "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest "
     "NVIDIA driver is installed and running.\n",
     "nvidia-smi -L: line 1 is not a GPU or MIG device line: \"NVIDIA-SMI has failed because it couldn't communicate "
     "with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.\""),
    (parse_list, MIG_LINES, "nvidia-smi -L: line 1 is not a GPU or MIG device line: "
                            "'MIG 1g.18gb     Device  0: (UUID: MIG-ffda444c-c706-57c6-98c9-67c441a0b109)'"),
    (parse_list, H200_LIST + "GPU 1: NVIDIA H200 (UUID: 0d427690)\n",
     "nvidia-smi -L: line 2 is not a GPU or MIG device line: 'GPU 1: NVIDIA H200 (UUID: 0d427690)'"),
], ids=["xml-empty", "xml-nvml-mismatch", "xml-no-devices", "xml-other-root", "xml-truncated", "xml-entities",
        "topo-empty", "topo-no-devices", "topo-cut-row", "cpu-list-letter", "cpu-list-backwards", "cpu-list-word",
        "list-empty", "list-no-devices", "list-no-driver", "list-mig-without-gpu", "list-uuid-without-prefix"])
def test_errors(parse, output, message):
    with pytest.raises(NvidiaSmiError) as exc:
        parse(output)
    assert str(exc.value) == message
