# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The nvidia-smi parsers, sysfs scan and gres over our own H100 capture.

tests/unit/fixtures/h100-80gb-hbm3-driver580/ was taken on 2026-11-22 on a lent VM with one
NVIDIA H100 80GB HBM3, driver 580.159.04 (open), CUDA 13.0, 16 CPUs (see SOURCES.md there).
Every expected value below is read off those files by hand, not off the parsers. The
architecture filter's test over the same capture is tests/unit/plugins/filter/test_h100_capture_arch.py.
"""

from __future__ import annotations

import csv
import io

from ansible_collections.gpucluster.core.plugins.module_utils._gres import build_gres
from ansible_collections.gpucluster.core.plugins.module_utils._nvidia_smi import (
    merge_topology,
    parse_topology,
    parse_xml,
    scan_pci,
)
from ansible_collections.gpucluster.core.tests.unit.plugins.shared_fixtures import read_fixture

KIND = "h100-80gb-hbm3-driver580"
UUID = "GPU-232c00c4-60d0-5fdb-a8f5-d8949845a9bb"
BUS_ID = "00000000:00:06.0"
CORES = list(range(16))
GRES_LINE = "Name=gpu Type=nvidia_h100_80gb_hbm3 File=/dev/nvidia0 Cores=0-15"
LEGEND = {
    "X": "Self",
    "SYS": "Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)",
    "NODE": "Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node",
    "PHB": "Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)",
    "PXB": "Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)",
    "PIX": "Connection traversing at most a single PCIe bridge",
    "NV#": "Connection traversing a bonded set of # NVLinks",
}


def facts():
    result = parse_xml(read_fixture(KIND, "nvidia-smi-q.xml"))
    merge_topology(result, parse_topology(read_fixture(KIND, "nvidia-smi-topo-m.txt")))
    return result


def csv_row(name):
    rows = list(csv.reader(io.StringIO(read_fixture(KIND, name)), skipinitialspace=True))
    assert len(rows) == 2
    return dict(zip(rows[0], rows[1]))


def test_xml_top_level():
    result = parse_xml(read_fixture(KIND, "nvidia-smi-q.xml"))
    assert {k: v for k, v in result.items() if k != "gpus"} == {
        "driver_version": "580.159.04",
        "cuda_version": "13.0",
        "attached_gpus": 1,
        "gpu_count": 1,
    }


def test_xml_gpu():
    gpu = parse_xml(read_fixture(KIND, "nvidia-smi-q.xml"))["gpus"][0]
    assert gpu == {
        "index": 0,
        "minor_number": 0,
        "device_file": "/dev/nvidia0",
        "uuid": UUID,
        "name": "NVIDIA H100 80GB HBM3",
        "brand": "NVIDIA",
        "architecture": "Hopper",
        "pci_bus_id": BUS_ID,
        "pci_device_id": "233010DE",
        "memory_total_mib": 81559,
        "persistence_mode": "Enabled",
        "compute_mode": "Default",
        "driver_model": {"current": None, "pending": None},
        "ecc_mode": {"current": "Enabled", "pending": "Enabled"},
        "power_limit_w": 700.0,
        "default_power_limit_w": 700.0,
        "min_power_limit_w": 200.0,
        "max_power_limit_w": 700.0,
        "mig_mode": {"current": "Disabled", "pending": "Disabled"},
        "mig_devices": [],
        "serial": "1752624015159",
        "vbios_version": "96.00.DA.00.0C",
    }


def test_topology():
    topo = parse_topology(read_fixture(KIND, "nvidia-smi-topo-m.txt"))
    assert topo == {
        "columns": ["GPU0"],
        "devices": {"GPU0": {"links": {}, "cpu_affinity": CORES, "numa_node": 0, "gpu_numa_id": None}},
        "nics": {},
        "legend": LEGEND,
    }


def test_merged_facts():
    gpu = facts()["gpus"][0]
    assert gpu["cpu_affinity"] == CORES
    assert gpu["numa_node"] == 0
    assert gpu["links"] == {}


def test_gres():
    assert build_gres(facts()) == {
        "content": GRES_LINE + "\n",
        "lines": [GRES_LINE],
        "gres": "gpu:nvidia_h100_80gb_hbm3:1",
        "devices": ["/dev/nvidia0"],
        "gpu_count": 1,
        "types": ["nvidia_h100_80gb_hbm3"],
    }


def test_gres_matches_the_module_run_on_the_machine():
    evidence = read_fixture(KIND, "module-gres_conf.txt")
    assert "        - %s\n" % GRES_LINE in evidence
    assert "        gres: gpu:nvidia_h100_80gb_hbm3:1\n" in evidence


def test_scan_pci_from_sysfs_capture(tmp_path):
    """Rebuild the captured sysfs attributes as a tree; numa_node is -1 there (a VM)."""
    for line in read_fixture(KIND, "sysfs-nvidia.txt").splitlines():
        address, attribute, value = line.split(" ", 2)
        device = tmp_path / "bus" / "pci" / "devices" / address
        device.mkdir(parents=True, exist_ok=True)
        (device / attribute).write_text(value + "\n")
    assert scan_pci(str(tmp_path)) == {
        "gpus": [
            {"pci_address": "0000:00:06.0", "device_id": "0x2330", "class": "0x030200", "driver": None, "numa_node": -1},
        ],
        "gpu_count": 1,
        "nvswitches": [],
        "nvswitch_count": 0,
        "fabric_manager_required": False,
    }


def test_csv_agrees_with_xml():
    gpu = facts()["gpus"][0]
    row = csv_row("nvidia-smi-query-all.csv")
    assert row["name"] == gpu["name"]
    assert row["uuid"] == gpu["uuid"]
    assert row["serial"] == gpu["serial"]
    assert row["pci.bus_id"] == gpu["pci_bus_id"]
    assert row["pci.device_id"] == "0x" + gpu["pci_device_id"]
    assert row["memory.total [MiB]"] == "%d MiB" % gpu["memory_total_mib"]
    assert row["driver_version"] == "580.159.04"
    assert row["mig.mode.current"] == "Disabled"
    assert row["count"] == "1"


def test_csv_health_header_renames_throttle_reasons():
    query = read_fixture(KIND, "nvidia-smi-query-health.query.txt")
    assert "clocks_throttle_reasons.active" in query
    assert csv_row("nvidia-smi-query-health.csv") == {
        "index": "0",
        "name": "NVIDIA H100 80GB HBM3",
        "pci.bus_id": BUS_ID,
        "driver_version": "580.159.04",
        "persistence_mode": "Enabled",
        "ecc.mode.current": "Enabled",
        "retired_pages.pending": "[N/A]",
        "remapped_rows.pending": "No",
        "remapped_rows.failure": "No",
        "pcie.link.gen.current": "5",
        "pcie.link.gen.max": "5",
        "pcie.link.width.current": "16",
        "pcie.link.width.max": "16",
        "clocks_event_reasons.active": "0x0000000000000001",
    }


def test_driver_version_file_agrees():
    first = read_fixture(KIND, "driver-version.txt").splitlines()[0]
    assert "NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build" in first


def test_no_xid_in_kernel_log():
    lines = read_fixture(KIND, "dmesg-xid.txt").splitlines()
    assert len(lines) == 3
    assert all("NVRM: " in line for line in lines)
    assert not any("Xid" in line for line in lines)


def test_no_nvlink():
    assert read_fixture(KIND, "nvidia-smi-nvlink-s.txt") == ""
