# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The nvidia-smi parsers, sysfs scan and gres over our own captures of lent GPU machines.

tests/unit/fixtures/h100-80gb-hbm3-driver580/ was taken on 2026-11-22 on a lent VM with one
NVIDIA H100 80GB HBM3, h200-driver580/ on 2026-11-26 on one with an NVIDIA H200; both driver
580.159.04 (open), CUDA 13.0, 16 CPUs (see tests/unit/fixtures/SOURCES.md). Every expected
value below is read off those files by hand, not off the parsers. The architecture filter's
test over the same captures is tests/unit/plugins/filter/test_own_captures_arch.py.
"""

from __future__ import annotations

import csv
import io
from typing import NamedTuple

import pytest

from ansible_collections.gpucluster.core.plugins.module_utils._gres import build_gres
from ansible_collections.gpucluster.core.plugins.module_utils._nvidia_smi import (
    merge_topology,
    parse_topology,
    parse_xml,
    scan_pci,
)
from ansible_collections.gpucluster.core.tests.unit.plugins.shared_fixtures import read_fixture


class Capture(NamedTuple):
    kind: str
    name: str
    uuid: str
    serial: str
    vbios: str
    device_id: str  # sysfs spelling
    memory_mib: int
    gres_type: str
    evidence: str  # the playbook run there with gres_conf and the architecture filter


H100 = Capture("h100-80gb-hbm3-driver580", "NVIDIA H100 80GB HBM3", "GPU-232c00c4-60d0-5fdb-a8f5-d8949845a9bb",
               "1752624015159", "96.00.DA.00.0C", "0x2330", 81559, "nvidia_h100_80gb_hbm3", "module-gres_conf.txt")
H200 = Capture("h200-driver580", "NVIDIA H200", "GPU-0d427690-ef55-14cc-625c-7cef66684e67",
               "1653824016140", "96.00.A5.00.1A", "0x2335", 143771, "nvidia_h200", "module-playbook.txt")
CAPTURES = [pytest.param(c, id=c.kind) for c in (H100, H200)]
BUS_ID = "00000000:00:06.0"
CORES = list(range(16))
LEGEND = {
    "X": "Self",
    "SYS": "Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)",
    "NODE": "Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node",
    "PHB": "Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)",
    "PXB": "Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)",
    "PIX": "Connection traversing at most a single PCIe bridge",
    "NV#": "Connection traversing a bonded set of # NVLinks",
}


def facts(cap):
    result = parse_xml(read_fixture(cap.kind, "nvidia-smi-q.xml"))
    merge_topology(result, parse_topology(read_fixture(cap.kind, "nvidia-smi-topo-m.txt")))
    return result


def csv_row(cap, name):
    rows = list(csv.reader(io.StringIO(read_fixture(cap.kind, name)), skipinitialspace=True))
    assert len(rows) == 2
    return dict(zip(rows[0], rows[1]))


def gres_line(cap):
    return "Name=gpu Type=%s File=/dev/nvidia0 Cores=0-15" % cap.gres_type


@pytest.mark.parametrize("cap", CAPTURES)
def test_xml_top_level(cap):
    result = parse_xml(read_fixture(cap.kind, "nvidia-smi-q.xml"))
    assert {k: v for k, v in result.items() if k != "gpus"} == {
        "driver_version": "580.159.04",
        "cuda_version": "13.0",
        "attached_gpus": 1,
        "gpu_count": 1,
    }


@pytest.mark.parametrize("cap", CAPTURES)
def test_xml_gpu(cap):
    gpu = parse_xml(read_fixture(cap.kind, "nvidia-smi-q.xml"))["gpus"][0]
    assert gpu == {
        "index": 0,
        "minor_number": 0,
        "device_file": "/dev/nvidia0",
        "uuid": cap.uuid,
        "name": cap.name,
        "brand": "NVIDIA",
        "architecture": "Hopper",
        "pci_bus_id": BUS_ID,
        "pci_device_id": cap.device_id[2:] + "10DE",
        "memory_total_mib": cap.memory_mib,
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
        "serial": cap.serial,
        "vbios_version": cap.vbios,
    }


@pytest.mark.parametrize("cap", CAPTURES)
def test_topology(cap):
    topo = parse_topology(read_fixture(cap.kind, "nvidia-smi-topo-m.txt"))
    assert topo == {
        "columns": ["GPU0"],
        "devices": {"GPU0": {"links": {}, "cpu_affinity": CORES, "numa_node": 0, "gpu_numa_id": None}},
        "nics": {},
        "legend": LEGEND,
    }


@pytest.mark.parametrize("cap", CAPTURES)
def test_merged_facts(cap):
    gpu = facts(cap)["gpus"][0]
    assert gpu["cpu_affinity"] == CORES
    assert gpu["numa_node"] == 0
    assert gpu["links"] == {}


@pytest.mark.parametrize("cap", CAPTURES)
def test_gres(cap):
    assert build_gres(facts(cap)) == {
        "content": gres_line(cap) + "\n",
        "lines": [gres_line(cap)],
        "gres": "gpu:%s:1" % cap.gres_type,
        "devices": ["/dev/nvidia0"],
        "gpu_count": 1,
        "types": [cap.gres_type],
    }


@pytest.mark.parametrize("cap", CAPTURES)
def test_gres_matches_the_module_run_on_the_machine(cap):
    evidence = read_fixture(cap.kind, cap.evidence)
    assert "        - %s\n" % gres_line(cap) in evidence
    assert "        gres: gpu:%s:1\n" % cap.gres_type in evidence


@pytest.mark.parametrize("cap", CAPTURES)
def test_scan_pci_from_sysfs_capture(cap, tmp_path):
    """Rebuild the captured sysfs attributes as a tree; numa_node is -1 there (a VM)."""
    for line in read_fixture(cap.kind, "sysfs-nvidia.txt").splitlines():
        address, attribute, value = line.split(" ", 2)
        device = tmp_path / "bus" / "pci" / "devices" / address
        device.mkdir(parents=True, exist_ok=True)
        (device / attribute).write_text(value + "\n")
    assert scan_pci(str(tmp_path)) == {
        "gpus": [
            {"pci_address": "0000:00:06.0", "device_id": cap.device_id, "class": "0x030200", "driver": None,
             "numa_node": -1},
        ],
        "gpu_count": 1,
        "nvswitches": [],
        "nvswitch_count": 0,
        "fabric_manager_required": False,
    }


@pytest.mark.parametrize("cap", CAPTURES)
def test_csv_agrees_with_xml(cap):
    gpu = facts(cap)["gpus"][0]
    row = csv_row(cap, "nvidia-smi-query-all.csv")
    assert row["name"] == gpu["name"]
    assert row["uuid"] == gpu["uuid"]
    assert row["serial"] == gpu["serial"]
    assert row["pci.bus_id"] == gpu["pci_bus_id"]
    assert row["pci.device_id"] == "0x" + gpu["pci_device_id"]
    assert row["memory.total [MiB]"] == "%d MiB" % gpu["memory_total_mib"]
    assert row["driver_version"] == "580.159.04"
    assert row["mig.mode.current"] == "Disabled"
    assert row["count"] == "1"


def health_row(cap, active):
    return {
        "index": "0",
        "name": cap.name,
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
        "clocks_event_reasons.active": active,
    }


@pytest.mark.parametrize("cap", CAPTURES)
def test_csv_health_header_renames_throttle_reasons(cap):
    query = read_fixture(cap.kind, "nvidia-smi-query-health.query.txt")
    assert "clocks_throttle_reasons.active" in query
    assert csv_row(cap, "nvidia-smi-query-health.csv") == health_row(cap, "0x0000000000000001")  # GPU idle


def test_csv_health_busy_h200_at_its_power_cap():
    """Read 15 s into 40 s of bf16 matrix products: software power cap (0x4), still PCIe 5.0 x16."""
    assert csv_row(H200, "nvidia-smi-query-health-busy.csv") == health_row(H200, "0x0000000000000004")


@pytest.mark.parametrize("cap", CAPTURES)
def test_driver_version_file_agrees(cap):
    first = read_fixture(cap.kind, "driver-version.txt").splitlines()[0]
    assert "NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build" in first


@pytest.mark.parametrize("cap", CAPTURES)
def test_no_xid_in_kernel_log(cap):
    lines = read_fixture(cap.kind, "dmesg-xid.txt").splitlines()
    assert len(lines) == 3
    assert all("NVRM: " in line for line in lines)
    assert not any("Xid" in line for line in lines)


@pytest.mark.parametrize("cap", CAPTURES)
def test_no_nvlink(cap):
    assert read_fixture(cap.kind, "nvidia-smi-nvlink-s.txt") == ""
