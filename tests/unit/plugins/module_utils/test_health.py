# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The passive health checks (_health) and parse_health_xml, over every real capture.

Every nvidia-smi XML capture, every ibstat capture and the H100's dmesg are judged here with
exact results. Broken nodes are real captures with one field changed (a flag flipped, a
<gpu> removed) or a real-format Xid line appended.
"""

from __future__ import annotations

import json
import re

import pytest

from ansible_collections.gpucluster.core.plugins.module_utils._health import (
    ACTIONS,
    CHECKS,
    DEFAULT_SEVERITY,
    DEFAULT_XID_CODES,
    GPU_CHECKS,
    SLOWDOWN_REASONS,
    HealthError,
    action_kind,
    collect,
    cuda_toolkit_version,
    disk_usage,
    evaluate,
    hardware,
    health_metrics,
    parse_chrony_tracking,
    read_disk_space,
    read_time_sync,
    FALLBACK_PATH,
    command_environment,
    command_path,
    parse_mounts,
    reason_checks,
    tool_error,
    tooling_faults,
    unjudged,
    verdict,
    version_matches,
    xid_events,
)
from ansible_collections.gpucluster.core.plugins.module_utils._ibstat import parse_ibstat, summarize
from ansible_collections.gpucluster.core.plugins.module_utils._nvidia_smi import NvidiaSmiError, parse_health_xml
from ansible_collections.gpucluster.core.tests.unit.plugins.module_utils.test_ibstat_parser import make_ib_device
from ansible_collections.gpucluster.core.tests.unit.plugins.shared_fixtures import (
    list_fixtures,
    read_fixture,
)

XML = "nvidia-smi-xml"
IB = "ibstat"
H100_DIR = "h100-80gb-hbm3-driver580"
H100 = (H100_DIR, "nvidia-smi-q.xml")
H200_DIR = "h200-driver580"
H100B_DIR = "h100-80gb-hbm3-driver580-b"
H200 = (H200_DIR, "nvidia-smi-q.xml")
H200_BUSY = (H200_DIR, "nvidia-smi-q-busy.xml")  # 15 s into bf16 matrix products: at its power cap
V100 = (XML, "8x-tesla-v100s-pcie-32gb-driver460-v11.xml")
T4 = (XML, "tesla-t4-driver515-v11.xml")
A10G = (XML, "a10g-aws-driver515-v11.xml")
A5000 = (XML, "2x-rtx-a5000-driver590-v13.xml")
WDDM = (XML, "rtx3080-windows-wddm-driver536-v12.xml")
IB_MIXED = "h100-8x-ndr-ib-cx7-plus-4x-roce-cx6dx-3-ports-down.txt"
IB_ROCE_DOWN = "h100-12x-roce-ethernet-2-cx7-ports-down.txt"
IB_ROCE_OK = "h100-12x-roce-ethernet-cx7-400g-cx6dx-100g-all-active.txt"
IB_A100 = "a100-9x-mlx5gen-vf-mt4126-8-ib-hdr-1-ethernet.txt"
IB_AZURE = "ibstatus-azure-a100-9x-hdr-200g.txt"

# Real-format Xid lines (NVIDIA driver kernel messages as logged on real hosts):
# journalctl form, from a report in NVIDIA's own repository (NVIDIA/open-gpu-kernel-modules#1151);
XID_79 = "May 18 19:02:39 kernel: NVRM: Xid (PCI:0000:2b:00): 79, GPU has fallen off the bus."
# dmesg form, driver 3xx and older without the PCI: prefix (application-level Xid 13);
XID_13 = "[ 4909.922970] NVRM: Xid (0000:01:00): 13, 0005 00000000 0000502d 00000104 00000000 00000100"
# dmesg form with the PCI: prefix (application-level Xid 31, an MMU fault).
XID_31 = "[18296.507578] NVRM: Xid (PCI:0000:01:00): 31, Ch 00000009, engmask 00000101, intr 10000000"

# nvcc --version of CUDA 12.1 (V12.1.66), as NVIDIA's nvcc prints it.
NVCC_12_1 = (
    "nvcc: NVIDIA (R) Cuda compiler driver\n"
    "Copyright (c) 2005-2023 NVIDIA Corporation\n"
    "Built on Tue_Feb__7_19:32:13_PST_2023\n"
    "Cuda compilation tools, release 12.1, V12.1.66\n"
    "Build cuda_12.1.r12.1/compiler.32415258_0\n"
)
# The head of a real /usr/local/cuda-11.5/version.json (its first two entries, closed).
VERSION_JSON_11_5 = (
    '{\n   "cuda" : {\n      "name" : "CUDA SDK",\n      "version" : "11.5.2"\n   },\n'
    '   "cuda_cudart" : {\n      "name" : "CUDA Runtime (cudart)",\n      "version" : "11.5.117"\n   }\n}\n'
)
# version.json of a CUDA 12.6 update install (the SDK version carries the build date).
VERSION_JSON_12_6 = '{\n   "cuda" : {\n      "name" : "CUDA SDK",\n      "version" : "12.6.20241114"\n   }\n}\n'
# Jetson (JetPack) one-line form.
VERSION_JSON_JETSON = '{ "cuda" : { "name" : "CUDA SDK", "version" : "12.2.140" } }'

# nvidia-smi's answer when the driver is not loaded (it exits 9).
SMI_NO_DRIVER = ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
                 "Make sure that the latest NVIDIA driver is installed and running.\n")

# Real /proc/mounts lines: an NFSv4.2 client mount, and an autofs direct map with the NFS
# share mounted on it (the nfs4 line repeats after the autofs one, as the kernel listed it).
NFS_LINE = ("10.1.24.250:/nfs /nfs nfs4 rw,relatime,vers=4.2,rsize=1048576,wsize=1048576,namlen=255,hard,"
            "proto=tcp,timeo=600,retrans=2,sec=sys,clientaddr=10.1.24.10,local_lock=none,addr=10.1.24.250 0 0")
ROOT_LINE = "/dev/vda / ext4 rw,relatime,discard,resv_strict,resuid=65534,resgid=65534 0 0"
AUTOFS_NFS = ("192.168.1.17:/home/nfsshare /mnt nfs4 rw,relatime,vers=4.2,rsize=131072,wsize=131072,namlen=255,"
              "hard,proto=tcp,timeo=600,retrans=2,sec=sys,clientaddr=192.168.1.18,local_lock=none,addr=192.168.1.17 0 0")
AUTOFS = ("/etc/auto.mount /mnt autofs rw,relatime,fd=17,pgrp=1186,timeout=300,minproto=5,maxproto=5,direct,"
          "pipe_ino=31680 0 0")


def xml(capture):
    return read_fixture(*capture)


def smi(capture):
    return parse_health_xml(xml(capture))


def ibstat(name):
    return summarize(parse_ibstat(read_fixture(IB, name)), "ibstat")


def by_check(results):
    return {item["check"]: item for item in results}


def one(results, check):
    return by_check(results)[check]


def replace_once(text, old, new):
    """A real capture with one field changed (the first occurrence)."""
    assert old in text, old
    return text.replace(old, new, 1)


def drop_last_gpu(text):
    """A real multi-GPU capture with its last <gpu> element removed (a GPU that fell off)."""
    start = text.rindex("<gpu id=")
    end = text.index("</gpu>", start) + len("</gpu>")
    return text[:start] + text[end:]


def dmesg():
    return read_fixture(H100_DIR, "dmesg-xid.txt")


NOT_GPU = {"gpu_count": {"value": 0, "source": "not a GPU node (gpucluster_gpu_nodes)"}}
BY_MODEL = "the fastest active port of the same adapter model"


# ---------------------------------------------------------------------------
# parse_health_xml over every capture
# ---------------------------------------------------------------------------

ALL_XML = [(XML, name) for name in list_fixtures(XML)] + [H100, H200, H200_BUSY]


@pytest.mark.parametrize("capture", ALL_XML, ids=lambda c: c[1])
def test_every_capture_parses_and_evaluates(capture):
    parsed = smi(capture)
    assert set(parsed) == {"driver_version", "cuda_version", "gpus"}
    assert parsed["gpus"]
    for pos, gpu in enumerate(parsed["gpus"]):
        assert set(gpu) == {
            "index", "name", "architecture", "uuid", "pci_bus_id", "persistence_mode", "ecc_mode",
            "retired_pages", "row_remap", "uncorrectable_volatile", "uncorrectable_aggregate", "pcie",
            "clock_event_reasons", "utilization_pct",
        }
        assert gpu["index"] == pos
        assert gpu["uuid"].startswith("GPU-")
        assert re.match(r"^[0-9A-F]{8}:[0-9A-F]{2}:[0-9A-F]{2}\.[0-9]$", gpu["pci_bus_id"])
        for key in ("max_gen", "current_gen", "max_width", "current_width"):
            assert isinstance(gpu["pcie"][key], int)
        assert gpu["pcie"]["current_width"] <= gpu["pcie"]["max_width"]
    results = evaluate({"nvidia_smi": parsed}, {})
    assert [r["check"] for r in results] == list(CHECKS)
    for item in results:
        assert set(item) == {"check", "kind", "status", "measured", "expected", "unit", "source", "message"}
        assert item["kind"] == "passive"
        assert item["status"] in ("pass", "warn", "fail", "skip")
        assert item["message"]


HEALTH_FIELDS = [
    # capture, driver, cuda, GPUs, (name, architecture, bus id, persistence, ecc current, pcie of GPU0)
    (A5000, "590.44.01", "13.1", 2, ("NVIDIA RTX A5000", "Ampere", "00000000:81:00.0", "Enabled", "Disabled",
                                     {"max_gen": 4, "current_gen": 1, "max_width": 16, "current_width": 16})),
    (V100, "460.73.01", "11.2", 8, ("Tesla V100S-PCIE-32GB", None, "00000000:00:0D.0", "Disabled", "Enabled",
                                    {"max_gen": 3, "current_gen": 3, "max_width": 16, "current_width": 16})),
    ((XML, "a100-sxm4-80gb-mig-driver535-v12.xml"), "535.54.03", "12.2", 1,
     ("NVIDIA A100-SXM4-80GB", "Ampere", "00000000:01:00.0", "Disabled", "Enabled",
      {"max_gen": 4, "current_gen": 4, "max_width": 16, "current_width": 16})),
    (A10G, "515.105.01", "11.7", 1, ("NVIDIA A10G", "Ampere", "00000000:00:1E.0", "Disabled", "Enabled",
                                     {"max_gen": 4, "current_gen": 1, "max_width": 16, "current_width": 8})),
    ((XML, "gtx1660ti-driver418-no-doctype.xml"), "418.43", "10.1", 1,
     ("Graphics Device", None, "00000000:43:00.0", "Disabled", None,
      {"max_gen": 3, "current_gen": 1, "max_width": 16, "current_width": 16})),
    ((XML, "rtx-pro-6000-blackwell-maxq-driver590-v13.xml"), "590.44.01", "13.1", 1,
     ("NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition", "Blackwell", "00000000:61:00.0", "Enabled",
      "Disabled", {"max_gen": 4, "current_gen": 1, "max_width": 16, "current_width": 16})),
    ((XML, "rtx3080-driver595-v13.xml"), "595.58.03", "13.2", 1,
     ("NVIDIA GeForce RTX 3080", "Ampere", "00000000:0C:00.0", "Disabled", None,
      {"max_gen": 4, "current_gen": 4, "max_width": 16, "current_width": 16})),
    (WDDM, "536.40", "12.2", 1, ("NVIDIA GeForce RTX 3080", "Ampere", "00000000:04:00.0", None, None,
                                 {"max_gen": 4, "current_gen": 4, "max_width": 16, "current_width": 16})),
    ((XML, "rtx4000-sff-ada-driver595-v13-deprecated-fields.xml"), "595.84", "13.2", 1,
     ("NVIDIA RTX 4000 SFF Ada Generation", "Ada Lovelace", "00000000:06:00.0", "Enabled", "Disabled",
      {"max_gen": 4, "current_gen": 1, "max_width": 16, "current_width": 16})),
    (T4, "515.105.01", "11.7", 1, ("Tesla T4", "Turing", "00000000:00:1E.0", "Disabled", "Enabled",
                                   {"max_gen": 3, "current_gen": 3, "max_width": 16, "current_width": 8})),
    (H100, "580.159.04", "13.0", 1, ("NVIDIA H100 80GB HBM3", "Hopper", "00000000:00:06.0", "Enabled", "Enabled",
                                     {"max_gen": 5, "current_gen": 5, "max_width": 16, "current_width": 16})),
    (H200, "580.159.04", "13.0", 1, ("NVIDIA H200", "Hopper", "00000000:00:06.0", "Enabled", "Enabled",
                                     {"max_gen": 5, "current_gen": 5, "max_width": 16, "current_width": 16})),
    (H200_BUSY, "580.159.04", "13.0", 1, ("NVIDIA H200", "Hopper", "00000000:00:06.0", "Enabled", "Enabled",
                                          {"max_gen": 5, "current_gen": 5, "max_width": 16, "current_width": 16})),
]


def test_health_fields_table_covers_every_local_capture():
    assert sorted(c[1] for c, *dummy in HEALTH_FIELDS if c[0] == XML) == sorted(
        n for n in list_fixtures(XML) if not n.startswith("shared/"))


@pytest.mark.parametrize("capture, driver, cuda, count, gpu0", HEALTH_FIELDS, ids=[c[1] for c, *dummy in HEALTH_FIELDS])
def test_health_fields_per_capture(capture, driver, cuda, count, gpu0):
    parsed = smi(capture)
    assert (parsed["driver_version"], parsed["cuda_version"], len(parsed["gpus"])) == (driver, cuda, count)
    first = parsed["gpus"][0]
    assert (first["name"], first["architecture"], first["pci_bus_id"], first["persistence_mode"],
            first["ecc_mode"]["current"], first["pcie"]) == gpu0


def test_h100_health_fields_whole():
    assert smi(H100) == {
        "driver_version": "580.159.04",
        "cuda_version": "13.0",
        "gpus": [{
            "index": 0,
            "name": "NVIDIA H100 80GB HBM3",
            "architecture": "Hopper",
            "uuid": "GPU-232c00c4-60d0-5fdb-a8f5-d8949845a9bb",
            "pci_bus_id": "00000000:00:06.0",
            "persistence_mode": "Enabled",
            "ecc_mode": {"current": "Enabled", "pending": "Enabled"},
            # driver 580 on Hopper: page retirement is N/A, row remapping replaces it
            "retired_pages": {"single_bit": None, "double_bit": None, "pending": None},
            "row_remap": {"correctable": 0, "uncorrectable": 0, "pending": False, "failure": False},
            "uncorrectable_volatile": 0,  # sram parity + secded + dram, the v13 split
            "uncorrectable_aggregate": 0,
            "pcie": {"max_gen": 5, "current_gen": 5, "max_width": 16, "current_width": 16},
            "clock_event_reasons": ["gpu_idle"],
            "utilization_pct": 0,
        }],
    }


@pytest.mark.parametrize("capture, reasons, utilization", [
    (H200, ["gpu_idle"], 0),
    (H200_BUSY, ["sw_power_cap"], 100),
])
def test_h200_idle_and_busy(capture, reasons, utilization):
    gpu = smi(capture)["gpus"][0]
    assert (gpu["clock_event_reasons"], gpu["utilization_pct"], gpu["pcie"]) == (
        reasons, utilization, {"max_gen": 5, "current_gen": 5, "max_width": 16, "current_width": 16})


def test_v100_eight_gpus_under_load():
    gpus = smi(V100)["gpus"]
    assert [g["pci_bus_id"] for g in gpus] == [
        "00000000:00:0D.0", "00000000:00:0E.0", "00000000:00:0F.0", "00000000:00:10.0",
        "00000000:00:11.0", "00000000:00:12.0", "00000000:00:13.0", "00000000:00:14.0",
    ]
    assert [g["utilization_pct"] for g in gpus] == [97, 75, 80, 23, 98, 98, 91, 99]
    # v11 throttle reasons (clocks_throttle_reason_*): only the software power cap, on GPU3 and GPU6
    assert [g["clock_event_reasons"] for g in gpus] == [[], [], [], ["sw_power_cap"], [], [], ["sw_power_cap"], []]
    assert {json.dumps(g["retired_pages"]) for g in gpus} == {'{"single_bit": 0, "double_bit": 0, "pending": false}'}
    assert {g["uncorrectable_volatile"] for g in gpus} == {0}  # v11: ecc_errors/volatile/double_bit/total
    assert {g["row_remap"] for g in gpus} == {None}  # Volta has no row remapping


def test_a100_mig_capture_reports_no_row_remap_and_no_utilization():
    gpu = smi((XML, "a100-sxm4-80gb-mig-driver535-v12.xml"))["gpus"][0]
    assert gpu["row_remap"] is None  # <remapped_rows>N/A</remapped_rows> with MIG enabled
    assert gpu["utilization_pct"] is None  # N/A in MIG mode
    assert gpu["uncorrectable_volatile"] == 0  # v12: dram_uncorrectable + sram_uncorrectable


def test_a5000_with_ecc_off_reports_no_error_counts():
    gpu = smi(A5000)["gpus"][1]
    assert gpu["pci_bus_id"] == "00000000:C1:00.0"
    assert gpu["ecc_mode"] == {"current": "Disabled", "pending": "Disabled"}
    assert (gpu["uncorrectable_volatile"], gpu["uncorrectable_aggregate"]) == (None, None)


@pytest.mark.parametrize("text, message", [
    ("", "nvidia-smi -q -x returned no output"),
    (None, "nvidia-smi -q -x returned no output"),
    # nvidia-smi -q (text) where -q -x was meant: the real text capture
    (read_fixture(H100_DIR, "nvidia-smi-q.txt"),
     "nvidia-smi -q -x did not return XML; its output starts with: ==============NVSMI LOG=============="),
    (SMI_NO_DRIVER, "nvidia-smi -q -x did not return XML; its output starts with: " + SMI_NO_DRIVER.strip()),
    # the real H100 XML cut short
    (xml(H100)[:2000], "nvidia-smi -q -x returned malformed XML: no element found at line 57, column 1"),
])
def test_parse_health_xml_errors(text, message):
    with pytest.raises(NvidiaSmiError) as exc:
        parse_health_xml(text)
    assert str(exc.value) == message


# ---------------------------------------------------------------------------
# evaluate: every capture, nothing expected
# ---------------------------------------------------------------------------

S, P, W, F = "skip", "pass", "warn", "fail"
# gpu_count gpu_model driver cuda persistence ecc_mode ecc_errors retired_pages row_remap pcie clock_events
CAPTURE_STATUSES = [
    (A5000, (P, S, S, S, P, W, S, S, P, P, P), W),
    (V100, (P, S, S, S, W, P, P, P, S, P, P), W),
    ((XML, "a100-sxm4-80gb-mig-driver535-v12.xml"), (P, S, S, S, W, P, P, S, S, P, P), W),
    (A10G, (P, S, S, S, W, P, P, S, P, F, P), F),
    ((XML, "gtx1660ti-driver418-no-doctype.xml"), (P, S, S, S, W, S, S, S, S, P, P), W),
    ((XML, "rtx-pro-6000-blackwell-maxq-driver590-v13.xml"), (P, S, S, S, P, W, S, S, P, P, P), W),
    ((XML, "rtx3080-driver595-v13.xml"), (P, S, S, S, W, S, S, S, S, P, P), W),
    # Windows (WDDM): persistence mode is N/A, nothing to judge (see the test below)
    (WDDM, (P, S, S, S, S, S, S, S, S, P, P), P),
    ((XML, "rtx4000-sff-ada-driver595-v13-deprecated-fields.xml"), (P, S, S, S, P, W, S, S, P, P, P), W),
    (T4, (P, S, S, S, W, P, P, P, S, F, P), F),
    (H100, (P, S, S, S, P, P, P, S, P, P, P), P),
    (H200, (P, S, S, S, P, P, P, S, P, P, P), P),
    (H200_BUSY, (P, S, S, S, P, P, P, S, P, P, P), P),
]
KNOWN_BUGS = {(WDDM, "persistence_mode")}


@pytest.mark.parametrize("capture, statuses, overall", CAPTURE_STATUSES, ids=[c[1] for c, *dummy in CAPTURE_STATUSES])
def test_capture_statuses_with_nothing_expected(capture, statuses, overall):
    results = by_check(evaluate({"nvidia_smi": smi(capture)}, {}))
    want = dict(zip(GPU_CHECKS, statuses + (S,)))  # xid: no kernel log given
    want.update(hca_ports=S, mounts=S, services=S)
    for check, status in want.items():
        if (capture, check) in KNOWN_BUGS:
            continue
        assert (check, results[check]["status"]) == (check, status)
    if not any(c == capture for c, dummy in KNOWN_BUGS):
        assert verdict(list(results.values())) == overall


def test_persistence_mode_not_reported_is_not_passed_as_enabled():
    item = one(evaluate({"nvidia_smi": smi(WDDM)}, {}), "persistence_mode")
    assert item["status"] == "skip"
    assert item["measured"] != "Enabled"


CAPTURE_MESSAGES = [
    (V100, "persistence_mode", "Disabled", "Enabled", "persistence mode off on all 8 GPUs and nvidia-persistenced is not running"),
    (V100, "ecc_mode", "Enabled", "Enabled", "ECC on"),
    (V100, "ecc_errors", 0, 0, "no uncorrectable ECC errors since the driver loaded"),
    (V100, "retired_pages", 0, 0, "0 pages retired for double-bit errors, none pending"),
    (V100, "row_remap", None, None, "no GPU reports row remapping"),
    (V100, "pcie_link", "x16/x16", "full width",
     "every PCIe link at full width (an idle GPU may lower its generation)"),
    # sw_power_cap on GPU3/GPU6 is a busy GPU at its power limit, not a slowdown
    (V100, "clock_events", [], [], "no hardware or thermal slowdown"),
    (V100, "gpu_count", 8, None, "8 GPUs answer nvidia-smi"),
    (A10G, "pcie_link", "x8/x16", "full width",
     "PCIe link narrower than the device's maximum on GPU0 (00000000:00:1E.0): x8 of x16"),
    (T4, "pcie_link", "x8/x16", "full width",
     "PCIe link narrower than the device's maximum on GPU0 (00000000:00:1E.0): x8 of x16"),
    (T4, "retired_pages", 0, 0, "0 pages retired for double-bit errors, none pending"),
    (A5000, "ecc_mode", "Disabled", "Enabled", "ECC off on all 2 GPUs"),
    (A5000, "ecc_errors", None, None, "no GPU reports ECC error counts"),
    # gen 1 of 4 on an idle GPU is power saving, not a fault
    (A5000, "pcie_link", "x16/x16", "full width",
     "every PCIe link at full width (an idle GPU may lower its generation)"),
    ((XML, "gtx1660ti-driver418-no-doctype.xml"), "ecc_mode", None, None, "no GPU reports an ECC mode"),
    ((XML, "a100-sxm4-80gb-mig-driver535-v12.xml"), "retired_pages", None, None,
     "no GPU reports page retirement (row remapping replaces it)"),
    (H100, "row_remap", 0, None, "no row remapping failed or pending"),
    (H100, "persistence_mode", "Enabled", "Enabled", "persistence mode on"),
    (H100, "clock_events", [], [], "no hardware or thermal slowdown"),
    (H100, "retired_pages", None, None, "no GPU reports page retirement (row remapping replaces it)"),
    # a real H200 at 100 % and its 700 W software power cap (clocks 1455 of 1980 MHz): not a slowdown
    (H200_BUSY, "clock_events", [], [], "no hardware or thermal slowdown"),
    (H200_BUSY, "pcie_link", "x16/x16", "full width",
     "every PCIe link at full width (an idle GPU may lower its generation)"),
]


@pytest.mark.parametrize("capture, check, measured, expected, message", CAPTURE_MESSAGES)
def test_capture_messages(capture, check, measured, expected, message):
    item = one(evaluate({"nvidia_smi": smi(capture)}, {}), check)
    assert (item["measured"], item["expected"], item["message"]) == (measured, expected, message)


# ---------------------------------------------------------------------------
# evaluate: real captures with one field broken
# ---------------------------------------------------------------------------

BROKEN = [
    pytest.param(H100, "<remapped_row_pending>No", "<remapped_row_pending>Yes", "row_remap", "fail", 0,
                 "row remapping pending a GPU reset on GPU0 (00000000:00:06.0)", id="h100-row-remap-pending"),
    pytest.param(H100, "<remapped_row_failure>No", "<remapped_row_failure>Yes", "row_remap", "fail", 0,
                 "row remapping failed on GPU0 (00000000:00:06.0) (replace the GPU)", id="h100-row-remap-failure"),
    pytest.param(H100, "<dram_uncorrectable>0<", "<dram_uncorrectable>2<", "ecc_errors", "fail", 2,
                 "uncorrectable ECC errors since the driver loaded: GPU0: 2", id="h100-volatile-dbe"),
    pytest.param(H100, "<pending_ecc>Enabled", "<pending_ecc>Disabled", "ecc_mode", "warn", "Enabled",
                 "ECC mode change pending a GPU reset on GPU0 (00000000:00:06.0)", id="h100-ecc-pending-off"),
    pytest.param(H100, "<current_ecc>Enabled", "<current_ecc>Disabled", "ecc_mode", "warn", "Disabled",
                 "ECC off on GPU0 (00000000:00:06.0); ECC mode change pending a GPU reset on GPU0 (00000000:00:06.0)",
                 id="h100-ecc-off-pending-on"),
    pytest.param(H100, "<clocks_event_reason_hw_thermal_slowdown>Not Active",
                 "<clocks_event_reason_hw_thermal_slowdown>Active", "clock_events", "warn", ["hw_thermal_slowdown"],
                 "GPU0 slowed down: hw_thermal_slowdown", id="h100-thermal-slowdown"),
    pytest.param(H100, "<clocks_event_reason_sw_power_cap>Not Active", "<clocks_event_reason_sw_power_cap>Active",
                 "clock_events", "pass", [], "no hardware or thermal slowdown", id="h100-power-cap-is-not-slowdown"),
    pytest.param(H100, "<persistence_mode>Enabled", "<persistence_mode>Disabled", "persistence_mode", "warn",
                 "Disabled", "persistence mode off on GPU0 (00000000:00:06.0) and nvidia-persistenced is not running",
                 id="h100-persistence-off"),
    pytest.param(H100, "<current_link_width>16x", "<current_link_width>8x", "pcie_link", "fail", "x8/x16",
                 "PCIe link narrower than the device's maximum on GPU0 (00000000:00:06.0): x8 of x16",
                 id="h100-link-x8"),
    # idle (gpu_idle Active, 0 %): a lower generation is power saving
    pytest.param(H100, "<current_link_gen>5", "<current_link_gen>4", "pcie_link", "pass", "x16/x16",
                 "every PCIe link at full width (an idle GPU may lower its generation)", id="h100-idle-gen4"),
    # busy (97 %): gen 1 of 3 is a degraded link
    pytest.param(V100, "<current_link_gen>3", "<current_link_gen>1", "pcie_link", "warn", "x16/x16",
                 "PCIe link below its maximum generation while busy on GPU0 (00000000:00:0D.0)", id="v100-busy-gen1"),
    pytest.param(V100, "<clocks_throttle_reason_hw_slowdown>Not Active", "<clocks_throttle_reason_hw_slowdown>Active",
                 "clock_events", "warn", ["hw_slowdown"], "GPU0 slowed down: hw_slowdown", id="v100-hw-slowdown"),
    pytest.param(T4, "<pending_retirement>No", "<pending_retirement>Yes", "retired_pages", "fail", 0,
                 "page retirement pending a GPU reset on GPU0 (00000000:00:1E.0)", id="t4-retirement-pending"),
]


@pytest.mark.parametrize("capture, old, new, check, status, measured, message", BROKEN)
def test_broken_capture(capture, old, new, check, status, measured, message):
    item = one(evaluate({"nvidia_smi": parse_health_xml(replace_once(xml(capture), old, new))}, {}), check)
    assert (item["status"], item["measured"], item["message"]) == (status, measured, message)


def test_row_remap_failed_and_pending_both_reported():
    text = replace_once(replace_once(xml(H100), "<remapped_row_pending>No", "<remapped_row_pending>Yes"),
                        "<remapped_row_failure>No", "<remapped_row_failure>Yes")
    item = one(evaluate({"nvidia_smi": parse_health_xml(text)}, {}), "row_remap")
    assert item["message"] == ("row remapping failed on GPU0 (00000000:00:06.0) (replace the GPU); "
                               "row remapping pending a GPU reset on GPU0 (00000000:00:06.0)")


def test_v100_with_a_gpu_fallen_off():
    parsed = parse_health_xml(drop_last_gpu(xml(V100)))
    assert len(parsed["gpus"]) == 7
    item = one(evaluate({"nvidia_smi": parsed}, {"gpu_count": {"value": 8, "source": "Slurm's node definition (gres/gpu=8)"}}),
               "gpu_count")
    assert item == {
        "check": "gpu_count", "kind": "passive", "status": "fail", "measured": 7, "expected": 8, "unit": None,
        "source": "Slurm's node definition (gres/gpu=8)", "message": "7 GPUs answer nvidia-smi, 8 expected",
    }


@pytest.mark.parametrize("answer, status, tooling, message", [
    # systemctl answered: nvidia-persistenced is not running, a real finding (severity fail here)
    ((3, "", ""), "fail", False, "persistence mode off on GPU0 (00000000:00:1E.0) and nvidia-persistenced is not running"),
    # systemctl could not run: a tooling warn even at severity fail
    ((127, "", "/nonexistent/systemctl: No such file or directory"), "warn", True,
     "persistence mode off on GPU0 (00000000:00:1E.0), and whether nvidia-persistenced runs is unknown: "
     "systemctl rc=127: /nonexistent/systemctl: No such file or directory"),
    ((0, "", ""), "pass", False, "nvidia-persistenced is running"),
])
def test_persistence_off_when_systemctl_cannot_tell(answer, status, tooling, message):
    run = Runner({SMI_ARGV: (0, xml(A10G), ""), PERSISTENCED: answer, journal(): (0, dmesg(), "")})
    item = one(evaluate(collect(run, reader({}), {}, {}), {"severity": {"persistence_mode": "fail"}}), "persistence_mode")
    assert (item["status"], item.get("tooling", False), item["message"]) == (status, tooling, message)


def test_persistenced_running_passes_persistence_off():
    item = one(evaluate({"nvidia_smi": smi(V100), "persistenced_active": True}, {}), "persistence_mode")
    assert (item["status"], item["measured"], item["expected"], item["message"]) == (
        "pass", "nvidia-persistenced", "Enabled", "nvidia-persistenced is running")


def test_pcie_link_without_link_info_is_not_full_width():
    text = re.sub(r"<pci_gpu_link_info>.*?</pci_gpu_link_info>", "", xml(H100), flags=re.S)
    item = one(evaluate({"nvidia_smi": parse_health_xml(text)}, {}), "pcie_link")
    assert item["status"] == "skip"


# ---------------------------------------------------------------------------
# evaluate: expectations (count, model, pins)
# ---------------------------------------------------------------------------

EXPECTATIONS = [
    (H100, {"gpu_count": {"value": 1, "source": "validation_gpu_count"}}, "gpu_count",
     ("pass", 1, 1, "validation_gpu_count", "1 GPUs answer nvidia-smi, 1 expected")),
    (V100, {"gpu_count": {"value": 4, "source": "slurm_gres_expected_gpus"}}, "gpu_count",
     ("fail", 8, 4, "slurm_gres_expected_gpus", "8 GPUs answer nvidia-smi, 4 expected")),
    (H100, {"gpu_model": {"value": "h100", "source": "validation_gpu_model"}}, "gpu_model",
     ("pass", "NVIDIA H100 80GB HBM3", "h100", "validation_gpu_model", "every GPU is a h100")),
    (H100, {"gpu_model": {"value": "A100", "source": "the burn-in baseline"}}, "gpu_model",
     ("fail", "NVIDIA H100 80GB HBM3", "A100", "the burn-in baseline", "GPU0 (00000000:00:06.0) not a A100")),
    (V100, {"gpu_model": {"value": "V100S", "source": "validation_gpu_model"}}, "gpu_model",
     ("pass", "Tesla V100S-PCIE-32GB", "V100S", "validation_gpu_model", "every GPU is a V100S")),
    (H100, {"driver_version": {"value": "580.159.04", "source": "nvidia_driver_version"}}, "driver_version",
     ("pass", "580.159.04", "580.159.04", "nvidia_driver_version", "driver 580.159.04, pinned 580.159.04")),
    (H100, {"driver_version": {"value": "580", "source": "nvidia_driver_branch"}}, "driver_version",
     ("pass", "580.159.04", "580", "nvidia_driver_branch", "driver 580.159.04, pinned 580")),
    (H100, {"driver_version": {"value": "570.172.08", "source": "nvidia_driver_version"}}, "driver_version",
     ("fail", "580.159.04", "570.172.08", "nvidia_driver_version", "driver 580.159.04, pinned 570.172.08")),
    (V100, {"driver_version": {"value": "1:460.73.01-0ubuntu1", "source": "validation_driver_version"}},
     "driver_version", ("pass", "460.73.01", "1:460.73.01-0ubuntu1", "validation_driver_version",
                        "driver 460.73.01, pinned 1:460.73.01-0ubuntu1")),
]


@pytest.mark.parametrize("capture, expected, check, want", EXPECTATIONS)
def test_expectations(capture, expected, check, want):
    item = one(evaluate({"nvidia_smi": smi(capture)}, expected), check)
    assert (item["status"], item["measured"], item["expected"], item["source"], item["message"]) == want


@pytest.mark.parametrize("toolkit, status, message", [
    ("12.1", "pass", "CUDA toolkit 12.1, pinned 12.1"),
    ("12.10", "fail", "CUDA toolkit 12.10, pinned 12.1"),
    ("11.5", "fail", "CUDA toolkit 11.5, pinned 12.1"),
    (None, "fail", "CUDA toolkit not found, pinned 12.1"),
])
def test_cuda_pin(toolkit, status, message):
    item = one(evaluate({"nvidia_smi": smi(H100), "cuda_toolkit_version": toolkit},
                        {"cuda_version": {"value": "12.1", "source": "cuda_default_toolkit"}}), "cuda_version")
    assert (item["status"], item["measured"], item["expected"], item["source"], item["message"]) == (
        status, toolkit, "12.1", "cuda_default_toolkit", message)


def test_gpu_model_message_with_no_gpu():
    parsed = parse_health_xml(drop_last_gpu(xml(H100)))
    assert parsed["gpus"] == []
    item = one(evaluate({"nvidia_smi": parsed}, {"gpu_model": {"value": "H100", "source": "validation_gpu_model"}}),
               "gpu_model")
    assert item["status"] == "fail"
    assert not item["message"].startswith("every GPU is a")


# ---------------------------------------------------------------------------
# evaluate: not a GPU node, nvidia-smi did not answer
# ---------------------------------------------------------------------------

def test_not_a_gpu_node_skips_every_gpu_check():
    results = evaluate({"nvidia_smi": None}, NOT_GPU)
    for item in results[:12]:
        assert (item["status"], item["message"], item["source"]) == (
            "skip", "not a GPU node", "not a GPU node (gpucluster_gpu_nodes)")
    assert [r["check"] for r in results[:12]] == list(GPU_CHECKS)
    assert [(r["check"], r["status"], r["message"]) for r in results[12:]] == [
        ("hca_ports", "skip", "no HCA ports expected"),
        ("mounts", "skip", "no shared file system expected"),
        ("services", "skip", "no service expected"),
        ("time_sync", "skip", "no clock synchronization expected"),
        ("disk_space", "skip", "no free space expected"),
    ]
    assert verdict(results) == "pass"


def test_nvidia_smi_could_not_be_used_is_no_gpu_verdict():
    # The driver not answering: a tooling warn, never "0 GPUs, 8 expected" (issue 32).
    observed = {"nvidia_smi": None, "nvidia_smi_error": "nvidia-smi rc=9: " + SMI_NO_DRIVER.strip(),
                "kernel_log": {"text": dmesg(), "window": "the kernel ring buffer (dmesg)"}}
    results = evaluate(observed, {"gpu_count": {"value": 8, "source": "Slurm's node definition (gres/gpu=8)"}})
    first = results[0]
    assert first == {
        "check": "gpu_count", "kind": "passive", "status": "warn", "measured": None, "expected": 8, "unit": None,
        "source": "Slurm's node definition (gres/gpu=8)", "tooling": True,
        "message": "nvidia-smi could not be used, no GPU judged: nvidia-smi rc=9: NVIDIA-SMI has failed because it "
                   "couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed "
                   "and running.",
    }
    assert [(r["check"], r["status"], r["message"], r["tooling"]) for r in results[1:11]] == [
        (check, "skip", "not judged: nvidia-smi could not be used", True) for check in GPU_CHECKS[1:11]]
    xid = results[11]
    assert (xid["check"], xid["status"], xid["message"]) == (
        "xid", "pass", "no XID that needs action in the kernel ring buffer (dmesg)")
    assert "tooling" not in xid
    assert verdict(results) == "warn"
    assert tooling_faults(results) == ["gpu_count"]


def test_nvidia_smi_could_not_be_used_without_expectation_or_reason():
    first = evaluate({"nvidia_smi": None}, {})[0]
    assert (first["status"], first["measured"], first["expected"], first["source"], first["message"]) == (
        "warn", None, None, None, "nvidia-smi could not be used, no GPU judged: no output")


@pytest.mark.parametrize("severity", ["fail", "warn"])
def test_tooling_fault_warns_whatever_the_severity(severity):
    results = evaluate({"nvidia_smi": None, "nvidia_smi_error": "nvidia-smi rc=127: x"},
                       {"gpu_count": {"value": 8, "source": "s"}, "severity": {"gpu_count": severity}})
    assert (results[0]["status"], verdict(results)) == ("warn", "warn")


def test_tooling_fault_turned_off_by_severity_skips():
    results = evaluate({"nvidia_smi": None, "nvidia_smi_error": "nvidia-smi rc=127: x"},
                       {"gpu_count": {"value": 8, "source": "s"}, "severity": {"gpu_count": "skip"}})
    assert (results[0]["status"], results[0]["message"]) == (
        "skip", "turned off (severity skip): nvidia-smi could not be used, no GPU judged: nvidia-smi rc=127: x")
    assert tooling_faults(results) == []


# ---------------------------------------------------------------------------
# Xid
# ---------------------------------------------------------------------------

def test_xid_events_real_dmesg_has_none():
    assert "NVRM" in dmesg()
    assert xid_events(dmesg()) == []


@pytest.mark.parametrize("text, events", [
    (None, []),
    ("", []),
    (XID_79, [{"pci": "0000:2b:00", "code": 79, "line": XID_79}]),
    ("  " + XID_13 + "  ", [{"pci": "0000:01:00", "code": 13, "line": XID_13}]),
    (dmesg() + XID_31 + "\n" + XID_79 + "\n", [
        {"pci": "0000:01:00", "code": 31, "line": XID_31},
        {"pci": "0000:2b:00", "code": 79, "line": XID_79},
    ]),
    # the driver's other NVRM lines about a GPU are not Xid events
    ("[  269.516977] NVRM: GPU at 0000:01:00.0 has fallen off the bus.", []),
])
def test_xid_events(text, events):
    assert xid_events(text) == events


XID_CASES = [
    (dmesg(), None, "the kernel log of the last 60 minutes", "pass", [],
     "no XID that needs action in the kernel log of the last 60 minutes"),
    (dmesg(), None, None, "pass", [], "no XID that needs action in the kernel log"),
    (dmesg() + XID_79 + "\n", None, "the kernel log of the last 60 minutes", "fail", [79],
     "XID 79 on 0000:2b:00 in the kernel log of the last 60 minutes"),
    (dmesg() + XID_13 + "\n" + XID_31 + "\n", None, "the kernel ring buffer (dmesg)", "pass", [13, 31],
     "no XID that needs action in the kernel ring buffer (dmesg) (seen, application-level: 13, 31)"),
    (dmesg() + XID_13 + "\n" + XID_79 + "\n", None, "the kernel ring buffer (dmesg)", "fail", [79],
     "XID 79 on 0000:2b:00 in the kernel ring buffer (dmesg)"),
    # the site's own list: 13 needs action there, 79 does not
    (dmesg() + XID_13 + "\n" + XID_79 + "\n", [13], "the kernel ring buffer (dmesg)", "fail", [13],
     "XID 13 on 0000:01:00 in the kernel ring buffer (dmesg)"),
]


@pytest.mark.parametrize("text, codes, window, status, measured, message", XID_CASES)
def test_xid_check(text, codes, window, status, measured, message):
    log = {"text": text}
    if window:
        log["window"] = window
    expected = {"xid_codes": codes} if codes else {}
    item = one(evaluate({"nvidia_smi": smi(H100), "kernel_log": log}, expected), "xid")
    assert (item["status"], item["measured"], item["message"]) == (status, measured, message)
    assert item["expected"] == sorted(codes or DEFAULT_XID_CODES)
    assert item["source"] == "XIDs that need action"


def test_xid_default_codes():
    assert DEFAULT_XID_CODES == (48, 63, 64, 74, 79, 94, 95, 119, 120)
    assert SLOWDOWN_REASONS == ("hw_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown", "sw_thermal_slowdown")


def test_xid_kernel_log_not_read():
    item = one(evaluate({"nvidia_smi": smi(H100), "kernel_log": None}, {}), "xid")
    assert (item["status"], item["message"]) == ("skip", "the kernel log could not be read")


def test_xid_measured_lists_each_code_once():
    second = XID_79.replace("0000:2b:00", "0000:3b:00")
    item = one(evaluate({"nvidia_smi": smi(H100), "kernel_log": {"text": XID_79 + "\n" + second}}, {}), "xid")
    assert item["message"] == "XID 79 on 0000:2b:00, 79 on 0000:3b:00 in the kernel log"
    assert item["measured"] == [79]


# ---------------------------------------------------------------------------
# HCA ports over every ibstat capture
# ---------------------------------------------------------------------------

HCA_CASES = [
    (IB_MIXED, {"rate_gbps": 400, "source": "validation_hca.rate_gbps"}, "pass", "8 of 8 Active", 400,
     "validation_hca.rate_gbps", "8 ports Active at 400 Gb/s"),
    (IB_MIXED, {"rate_gbps": 400, "link_layers": ["InfiniBand", "Ethernet"], "source": "validation_hca.rate_gbps"},
     "fail", "9 of 12 Active", 400, "validation_hca.rate_gbps",
     "mlx5_1:1 at 100 Gb/s, 400 expected; mlx5_2:1 Down (Disabled); mlx5_7:1 Down (Disabled); "
     "mlx5_8:1 Down (Disabled)"),
    # no rate: each adapter model against its own fastest active port (CX-7 400, CX-6 Dx 100)
    (IB_MIXED, {"link_layers": ["InfiniBand", "Ethernet"]}, "fail", "9 of 12 Active", [100, 400], BY_MODEL,
     "mlx5_2:1 Down (Disabled); mlx5_7:1 Down (Disabled); mlx5_8:1 Down (Disabled)"),
    (IB_MIXED, {"link_layers": ["Ethernet"]}, "fail", "1 of 4 Active", [100], BY_MODEL,
     "mlx5_2:1 Down (Disabled); mlx5_7:1 Down (Disabled); mlx5_8:1 Down (Disabled)"),
    (IB_MIXED, {"rate_gbps": 400, "count": 9}, "fail", "8 of 8 Active", 400, None, "8 ports found, 9 expected"),
    (IB_ROCE_DOWN, {"rate_gbps": 400, "link_layers": ["Ethernet"]}, "fail", "10 of 12 Active", 400, None,
     "mlx5_1:1 at 100 Gb/s, 400 expected; mlx5_2:1 at 100 Gb/s, 400 expected; mlx5_5:1 Down (Disabled); "
     "mlx5_7:1 at 100 Gb/s, 400 expected; mlx5_8:1 at 100 Gb/s, 400 expected; mlx5_11:1 Down (Disabled)"),
    # the four CX-6 Dx (storage) ignored: the two CX-7 rails that are down remain
    (IB_ROCE_DOWN, {"rate_gbps": 400, "link_layers": ["Ethernet"], "ignore": ["mlx5_1", "mlx5_2", "mlx5_7", "mlx5_8"]},
     "fail", "6 of 8 Active", 400, None, "mlx5_5:1 Down (Disabled); mlx5_11:1 Down (Disabled)"),
    (IB_ROCE_DOWN, {"rate_gbps": 0, "link_layers": ["Ethernet"]}, "fail", "10 of 12 Active", [100, 400], BY_MODEL,
     "mlx5_5:1 Down (Disabled); mlx5_11:1 Down (Disabled)"),
    (IB_ROCE_OK, {"rate_gbps": 0, "link_layers": ["Ethernet"]}, "pass", "12 of 12 Active", [100, 400], BY_MODEL,
     "12 ports Active at 100 Gb/s, 400 Gb/s"),
    (IB_ROCE_OK, {"link_layers": ["Ethernet"], "ignore": ["mlx5_1:1", "mlx5_2", "mlx5_7", "mlx5_8"]}, "pass",
     "8 of 8 Active", [400], BY_MODEL, "8 ports Active at 400 Gb/s"),
    (IB_A100, {"rate_gbps": 200}, "pass", "8 of 8 Active", 200, None, "8 ports Active at 200 Gb/s"),
    (IB_A100, {"rate_gbps": 400}, "fail", "8 of 8 Active", 400, None,
     "; ".join("mlx5_%d:1 at 200 Gb/s, 400 expected" % i for i in range(1, 9))),
    (IB_AZURE, {"rate_gbps": 0, "count": 8}, "pass", "8 of 8 Active", [200], BY_MODEL, "8 ports Active at 200 Gb/s"),
    # ibstatus prints no CA type: every port is of one unknown model, the 40G Ethernet port against 200
    (IB_AZURE, {"link_layers": ["InfiniBand", "Ethernet"]}, "fail", "9 of 9 Active", [200], BY_MODEL,
     "mlx5_8:1 at 40 Gb/s, 200 expected"),
]


def test_hca_cases_cover_every_ibstat_capture():
    assert {c[0] for c in HCA_CASES} == {n for n in list_fixtures(IB) if not n.startswith("shared/")}


@pytest.mark.parametrize("name, hca, status, measured, expected, source, message", HCA_CASES)
def test_hca_ports(name, hca, status, measured, expected, source, message):
    item = one(evaluate({"ibstat": ibstat(name)}, dict(NOT_GPU, hca=hca)), "hca_ports")
    assert (item["status"], item["measured"], item["expected"], item["source"], item["unit"], item["message"]) == (
        status, measured, expected, source, "Gb/s", message)


@pytest.mark.parametrize("name", [IB_MIXED, IB_ROCE_DOWN])
def test_ports_down_captures_fail_naming_the_ports(name):
    item = one(evaluate({"ibstat": ibstat(name)}, dict(NOT_GPU, hca={"link_layers": ["InfiniBand", "Ethernet"]})),
               "hca_ports")
    assert item["status"] == "fail"
    down = {IB_MIXED: ["mlx5_2:1", "mlx5_7:1", "mlx5_8:1"], IB_ROCE_DOWN: ["mlx5_5:1", "mlx5_11:1"]}[name]
    for label in down:
        assert "%s Down (Disabled)" % label in item["message"]


def test_hca_ibstat_could_not_be_used_is_no_link_verdict():
    observed = {"ibstat": None, "ibstat_error": "ibstat rc=255: ibpanic: [4182] main: can't open UMAD port "
                                                "(0x0000000000000000): No such device"}
    item = one(evaluate(observed, dict(NOT_GPU, hca={"rate_gbps": 400, "source": "validation_hca.rate_gbps"})),
               "hca_ports")
    assert (item["status"], item["measured"], item["expected"], item["source"], item["tooling"], item["message"]) == (
        "warn", None, 400, "validation_hca.rate_gbps", True,
        "ibstat could not be used, no port judged: ibstat rc=255: ibpanic: [4182] main: can't open UMAD port "
        "(0x0000000000000000): No such device")
    item = one(evaluate({}, dict(NOT_GPU, hca={"rate_gbps": 0})), "hca_ports")
    assert (item["status"], item["message"]) == ("warn", "ibstat could not be used, no port judged: no output")


def test_hca_no_port_of_the_layer_fails():
    item = one(evaluate({"ibstat": ibstat(IB_ROCE_DOWN)}, dict(NOT_GPU, hca={"link_layers": ["InfiniBand"]})),
               "hca_ports")
    assert (item["status"], item["message"]) == ("fail", "no InfiniBand port found (is the HCA driver loaded?)")
    item = one(evaluate({"ibstat": ibstat(IB_ROCE_DOWN)}, dict(NOT_GPU, hca={"link_layers": ["InfiniBand"], "count": 8})),
               "hca_ports")
    assert (item["status"], item["measured"], item["message"]) == (
        "fail", "0 of 0 Active", "no InfiniBand port found (is the HCA driver loaded?)")


def test_hca_expected_but_none_found_fails(tmp_path):
    observed = collect(Runner({}), reader({}), {"sysfs_root": str(tmp_path)}, dict(NOT_GPU, hca={"rate_gbps": 400}))
    assert observed["ibstat"]["ca_count"] == 0
    item = one(evaluate(observed, dict(NOT_GPU, hca={"rate_gbps": 400})), "hca_ports")
    assert item["status"] == "fail"


# ---------------------------------------------------------------------------
# Mounts, services
# ---------------------------------------------------------------------------

MOUNT_CASES = [
    ([NFS_LINE, ROOT_LINE], [{"path": "/nfs", "source": "validation_mounts"}], "pass", ["/nfs"],
     "mounted: /nfs"),
    ([ROOT_LINE], [{"path": "/nfs", "source": "validation_mounts"}], "fail", [], "not mounted: /nfs (nothing)"),
    # the autofs trigger alone: the NFS share is not mounted yet
    ([AUTOFS], [{"path": "/mnt", "source": "validation_mounts"}], "fail", [], "not mounted: /mnt (autofs)"),
    ([AUTOFS_NFS, AUTOFS, AUTOFS_NFS], [{"path": "/mnt", "source": "validation_mounts"}], "pass", ["/mnt"],
     "mounted: /mnt"),
    ([NFS_LINE, ROOT_LINE], [{"path": "/nfs", "fstype": "nfs4", "source": "nfs_mounts"},
                             {"path": "/", "fstype": "ext4", "source": "nfs_mounts"}],
     "pass", ["/", "/nfs"], "mounted: /nfs, /"),
    ([NFS_LINE, ROOT_LINE], [{"path": "/", "source": "validation_mounts"},
                             {"path": "/nfs", "source": "validation_mounts"}],
     "fail", ["/nfs"], "not mounted: / (ext4)"),
]


@pytest.mark.parametrize("lines, wanted, status, measured, message", MOUNT_CASES)
def test_mounts(lines, wanted, status, measured, message):
    observed = {"mounts": parse_mounts("\n".join(lines) + "\n")}
    item = one(evaluate(observed, dict(NOT_GPU, mounts=wanted)), "mounts")
    assert (item["status"], item["measured"], item["expected"], item["source"], item["message"]) == (
        status, measured, [m["path"] for m in wanted], wanted[0]["source"], message)


@pytest.mark.parametrize("services, wanted, status, measured, message", [
    ({"munge": "active", "slurmd": "active", "docker": "active"}, ["munge", "slurmd", "docker"], "pass",
     ["munge", "slurmd", "docker"], "running: munge, slurmd, docker"),
    ({"munge": "active", "slurmd": "failed", "docker": "inactive"}, ["munge", "slurmd", "docker"], "fail",
     ["munge"], "not running: slurmd (failed), docker (inactive)"),
    ({}, ["slurmd"], "fail", [], "not running: slurmd (unknown)"),
])
def test_services(services, wanted, status, measured, message):
    item = one(evaluate({"services": services}, dict(NOT_GPU, services=wanted)), "services")
    assert (item["status"], item["measured"], item["expected"], item["source"], item["message"]) == (
        status, measured, wanted, None, message)
    assert "tooling" not in item


SYSTEMCTL_MISSING = "systemctl rc=127: /nonexistent/systemctl: No such file or directory"


@pytest.mark.parametrize("services, errors, status, measured, message", [
    # systemctl could not run for any unit: a tooling warn, no service judged down
    ({"munge": "unknown", "slurmd": "unknown"}, {"munge": SYSTEMCTL_MISSING, "slurmd": SYSTEMCTL_MISSING}, "warn", [],
     "systemctl could not be used for munge (%s), slurmd (%s)" % (SYSTEMCTL_MISSING, SYSTEMCTL_MISSING)),
    # one unit answered inactive (a real fault: it still fails), the other could not be asked
    ({"munge": "inactive", "slurmd": "unknown"}, {"slurmd": SYSTEMCTL_MISSING}, "fail", [],
     "not running: munge (inactive); systemctl could not be used for slurmd (%s)" % SYSTEMCTL_MISSING),
    ({"munge": "active", "slurmd": "unknown"}, {"slurmd": "systemctl rc=124: systemctl: timed out after 20 s"}, "warn",
     ["munge"], "systemctl could not be used for slurmd (systemctl rc=124: systemctl: timed out after 20 s)"),
])
def test_services_systemctl_could_not_be_used(services, errors, status, measured, message):
    observed = {"services": services, "services_errors": errors}
    item = one(evaluate(observed, dict(NOT_GPU, services=["munge", "slurmd"])), "services")
    assert (item["status"], item["measured"], item["expected"], item["tooling"], item["message"]) == (
        status, measured, ["munge", "slurmd"], True, message)


# ---------------------------------------------------------------------------
# Severity, verdict
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("capture, severity, check, status, message", [
    (V100, {"persistence_mode": "fail"}, "persistence_mode", "fail", None),
    (T4, {"pcie_link": "warn"}, "pcie_link", "warn", None),
    (T4, {"pcie_link": "skip"}, "pcie_link", "skip",
     "turned off (severity skip): PCIe link narrower than the device's maximum on GPU0 (00000000:00:1E.0): x8 of x16"),
    # skip turns a passing check off too
    (H100, {"ecc_mode": "skip"}, "ecc_mode", "skip", "turned off (severity skip): ECC on"),
    # fail/warn change only what a problem gives
    (H100, {"ecc_mode": "fail"}, "ecc_mode", "pass", "ECC on"),
])
def test_severity(capture, severity, check, status, message):
    item = one(evaluate({"nvidia_smi": smi(capture)}, {"severity": severity}), check)
    assert item["status"] == status
    if message:
        assert item["message"] == message


def test_severity_turns_the_verdict():
    assert verdict(evaluate({"nvidia_smi": smi(T4)}, {})) == "fail"
    assert verdict(evaluate({"nvidia_smi": smi(T4)}, {"severity": {"pcie_link": "warn"}})) == "warn"
    assert verdict(evaluate({"nvidia_smi": smi(T4)}, {"severity": {"pcie_link": "skip",
                                                                   "persistence_mode": "skip"}})) == "pass"


@pytest.mark.parametrize("severity, message", [
    ({"gpu": "warn"}, "severity: unknown check 'gpu' (checks: %s)" % ", ".join(CHECKS)),
    ({"xid": "ignore"}, "severity: xid is 'ignore', expected fail, warn or skip"),
    ({"hca_ports": None}, "severity: hca_ports is None, expected fail, warn or skip"),
])
def test_bad_severity(severity, message):
    with pytest.raises(HealthError) as exc:
        evaluate({"nvidia_smi": smi(H100)}, {"severity": severity})
    assert str(exc.value) == message


def test_default_severity():
    assert list(DEFAULT_SEVERITY.items()) == [
        ("gpu_count", "fail"), ("gpu_model", "fail"), ("driver_version", "fail"), ("cuda_version", "fail"),
        ("persistence_mode", "warn"), ("ecc_mode", "warn"), ("ecc_errors", "fail"), ("retired_pages", "fail"),
        ("row_remap", "fail"), ("pcie_link", "fail"), ("clock_events", "warn"), ("xid", "fail"),
        ("hca_ports", "fail"), ("mounts", "fail"), ("services", "fail"), ("time_sync", "fail"), ("disk_space", "fail"),
    ]


@pytest.mark.parametrize("statuses, want", [
    ([], "pass"),
    (["skip"], "pass"),
    (["pass", "skip"], "pass"),
    (["pass", "warn", "skip"], "warn"),
    (["warn", "fail", "pass"], "fail"),
    (["fail"], "fail"),
])
def test_verdict(statuses, want):
    assert verdict([{"status": s} for s in statuses]) == want


# ---------------------------------------------------------------------------
# version_matches, cuda_toolkit_version, parse_mounts
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("actual, pin, want", [
    ("580.159.04", "580.159.04", True),
    ("580.159.04", "580", True),
    ("580.159.04", "580.159", True),
    ("580.159.04", "580.15", False),
    ("580.159.04", "58", False),
    ("580.159.04", "1:580.159.04-0ubuntu1", True),
    ("580.159.04", "580.159.04+really", True),
    ("580.159.04", "570.172.08", False),
    (" 12.4\n", "12.4", True),
    ("12.4", "12.4.1", False),
    ("12.10", "12.1", False),
    ("12.1", "12.10", False),
    (None, "12.4", False),
    ("", "12.4", False),
    ("12.4", "", False),
])
def test_version_matches(actual, pin, want):
    assert version_matches(actual, pin) is want


class Runner:
    """A fake command runner: {argv tuple: (rc, stdout, stderr)}; records the calls."""

    def __init__(self, answers):
        self.answers = dict(answers)
        self.calls = []

    def __call__(self, argv):
        self.calls.append(tuple(argv))
        if tuple(argv) not in self.answers:
            raise AssertionError("unexpected command: %r" % (argv,))
        return self.answers[tuple(argv)]


NVCC = "/usr/local/cuda/bin/nvcc"


@pytest.mark.parametrize("version_json, answers, want, ran_nvcc", [
    (VERSION_JSON_11_5, {}, "11.5", False),
    (VERSION_JSON_12_6, {}, "12.6", False),
    (VERSION_JSON_JETSON, {}, "12.2", False),
    (None, {(NVCC, "--version"): (0, NVCC_12_1, "")}, "12.1", True),
    # a version.json that is not JSON, or has no cuda.version: nvcc decides
    (VERSION_JSON_11_5[:40], {(NVCC, "--version"): (0, NVCC_12_1, "")}, "12.1", True),
    ('{"cuda_cudart": {"version": "11.5.117"}}', {(NVCC, "--version"): (0, NVCC_12_1, "")}, "12.1", True),
    (None, {(NVCC, "--version"): (127, "", "/usr/local/cuda/bin/nvcc: not found")}, None, True),
    (None, {(NVCC, "--version"): (0, "", "")}, None, True),
])
def test_cuda_toolkit_version(version_json, answers, want, ran_nvcc):
    run = Runner(answers)
    assert cuda_toolkit_version(run, NVCC, version_json) == want
    assert run.calls == ([(NVCC, "--version")] if ran_nvcc else [])


def test_parse_mounts():
    text = "\n".join([ROOT_LINE, NFS_LINE, AUTOFS, "", "garbage"]) + "\n"
    assert parse_mounts(text) == [
        {"source": "/dev/vda", "path": "/", "fstype": "ext4"},
        {"source": "10.1.24.250:/nfs", "path": "/nfs", "fstype": "nfs4"},
        {"source": "/etc/auto.mount", "path": "/mnt", "fstype": "autofs"},
    ]
    assert parse_mounts("") == []


def test_parse_mounts_decodes_octal_escapes():
    # the kernel writes a blank in a mount point as \040 (the real NFS line, its mount point renamed)
    line = NFS_LINE.replace(" /nfs ", " /nfs\\040data ", 1)
    assert parse_mounts(line) == [{"source": "10.1.24.250:/nfs", "path": "/nfs data", "fstype": "nfs4"}]


# ---------------------------------------------------------------------------
# collect
# ---------------------------------------------------------------------------

SMI_ARGV = ("nvidia-smi", "-q", "-x")
PERSISTENCED = ("systemctl", "is-active", "--quiet", "nvidia-persistenced")


def journal(minutes=60):
    return ("journalctl", "--dmesg", "--no-pager", "--quiet", "--since", "-%dmin" % minutes)


def reader(files):
    def read_file(path):
        return files.get(path)
    return read_file


def test_collect_everything():
    run = Runner({
        ("/usr/bin/nvidia-smi", "-q", "-x"): (0, xml(H100), ""),
        PERSISTENCED: (3, "", ""),
        journal(30): (0, dmesg(), ""),
        ("/usr/sbin/ibstat",): (0, read_fixture(IB, IB_MIXED), ""),
        ("timeout", "10", "stat", "--", "/nfs"): (0, "", ""),
        ("systemctl", "is-active", "slurmd"): (0, "active\n", ""),
        ("systemctl", "is-active", "docker"): (3, "inactive\n", ""),
    })
    expected = {
        "gpu_count": {"value": 1, "source": "validation_gpu_count"},
        "cuda_version": {"value": "12.1", "source": "cuda_default_toolkit"},
        "hca": {"rate_gbps": 400, "source": "validation_hca.rate_gbps"},
        "mounts": [{"path": "/nfs", "source": "validation_mounts"}],
        "services": ["slurmd", "docker"],
    }
    settings = {"nvidia_smi": "/usr/bin/nvidia-smi", "cuda_home": "/usr/local/cuda-12.1", "ibstat": "/usr/sbin/ibstat",
                "kernel_log_minutes": 30}
    files = {"/usr/local/cuda-12.1/version.json": VERSION_JSON_11_5, "/proc/mounts": ROOT_LINE + "\n" + NFS_LINE + "\n"}
    observed = collect(run, reader(files), settings, expected)
    assert observed == {
        "services": {"slurmd": "active", "docker": "inactive"},
        "nvidia_smi": smi(H100),
        "cuda_toolkit_version": "11.5",
        "persistenced_active": False,
        "kernel_log": {"text": dmesg(), "window": "the kernel log of the last 30 minutes"},
        "ibstat": ibstat(IB_MIXED),
        "mounts": [{"source": "/dev/vda", "path": "/", "fstype": "ext4"},
                   {"source": "10.1.24.250:/nfs", "path": "/nfs", "fstype": "nfs4"}],
    }
    assert run.calls == [
        ("/usr/bin/nvidia-smi", "-q", "-x"), PERSISTENCED, journal(30), ("/usr/sbin/ibstat",),
        ("timeout", "10", "stat", "--", "/nfs"), ("systemctl", "is-active", "slurmd"),
        ("systemctl", "is-active", "docker"),
    ]
    results = by_check(evaluate(observed, expected))
    assert {c: r["status"] for c, r in results.items()} == {
        "gpu_count": "pass", "gpu_model": "skip", "driver_version": "skip", "cuda_version": "fail",
        "persistence_mode": "pass", "ecc_mode": "pass", "ecc_errors": "pass", "retired_pages": "skip",
        "row_remap": "pass", "pcie_link": "pass", "clock_events": "pass", "xid": "pass", "hca_ports": "pass",
        "mounts": "pass", "services": "fail", "time_sync": "skip", "disk_space": "skip",
    }
    assert results["cuda_version"]["message"] == "CUDA toolkit 11.5, pinned 12.1"
    assert results["services"]["message"] == "not running: docker (inactive)"


def test_collect_minimal_reads_only_what_is_expected():
    run = Runner({SMI_ARGV: (0, xml(T4), ""), PERSISTENCED: (0, "", ""), journal(): (0, dmesg(), "")})
    observed = collect(run, reader({}), {}, {})
    assert observed == {
        "services": {}, "nvidia_smi": smi(T4), "persistenced_active": True,
        "kernel_log": {"text": dmesg(), "window": "the kernel log of the last 60 minutes"}, "mounts": [],
    }
    assert run.calls == [SMI_ARGV, PERSISTENCED, journal()]


@pytest.mark.parametrize("journal_answer, dmesg_answer, kernel_log", [
    ((1, "", "No journal files were found.\n"), (0, dmesg(), ""),
     {"text": dmesg(), "window": "the kernel ring buffer (dmesg)"}),
    ((127, "", "journalctl: not found"), (1, "", "dmesg: read kernel buffer failed: Operation not permitted\n"), None),
])
def test_collect_kernel_log_falls_back_to_dmesg(journal_answer, dmesg_answer, kernel_log):
    run = Runner({SMI_ARGV: (0, xml(H100), ""), PERSISTENCED: (0, "", ""), journal(): journal_answer,
                  ("dmesg",): dmesg_answer})
    observed = collect(run, reader({}), {}, {})
    assert observed["kernel_log"] == kernel_log
    assert run.calls == [SMI_ARGV, PERSISTENCED, journal(), ("dmesg",)]


# Every way nvidia-smi can fail to run, with the words the program's runner gives (captured by
# running gpucluster-healthcheck's run() on a missing path, a file without the execute bit, and a
# command past its timeout) or nvidia-smi's own. None is a GPU verdict: gpu_count warns with them.
SMI_TOOLING = [
    ((127, "", "/nonexistent/nvidia-smi: No such file or directory"),
     "nvidia-smi rc=127: /nonexistent/nvidia-smi: No such file or directory"),
    ((126, "", "/opt/nvidia/nvidia-smi: Permission denied"), "nvidia-smi rc=126: /opt/nvidia/nvidia-smi: Permission denied"),
    ((124, "", "nvidia-smi: timed out after 20 s"), "nvidia-smi rc=124: nvidia-smi: timed out after 20 s"),
    # the driver not answering (nvidia-smi prints it on stdout and exits 9)
    ((9, SMI_NO_DRIVER, ""), "nvidia-smi rc=9: " + SMI_NO_DRIVER.strip()),
    # the first line of stderr wins over stdout; a silent failure says so
    ((6, "ignored\n", "first\nsecond\n"), "nvidia-smi rc=6: first"),
    ((6, "", ""), "nvidia-smi rc=6: no output"),
    # ran, but not the XML asked for: unparseable output
    ((0, read_fixture(H100_DIR, "nvidia-smi-q.txt"), ""),
     "nvidia-smi -q -x did not return XML; its output starts with: ==============NVSMI LOG=============="),
    ((0, "", ""), "nvidia-smi -q -x returned no output"),
    ((0, xml(H100)[:2000], ""), "nvidia-smi -q -x returned malformed XML: no element found at line 57, column 1"),
    # killed mid-way: cut XML and an error code
    ((137, xml(H100)[:2000], ""), "nvidia-smi rc=137: <?xml version=\"1.0\" ?>"),
]


@pytest.mark.parametrize("answer, error", SMI_TOOLING)
def test_collect_nvidia_smi_tooling_faults(answer, error):
    run = Runner({SMI_ARGV: answer, PERSISTENCED: (3, "", ""), journal(): (0, dmesg(), "")})
    observed = collect(run, reader({}), {}, {})
    assert (observed["nvidia_smi"], observed["nvidia_smi_error"]) == (None, error)
    results = evaluate(observed, {"gpu_count": {"value": 8, "source": "Slurm (gres/gpu=8)"}})
    first = results[0]
    assert (first["check"], first["status"], first["measured"], first["expected"], first["tooling"], first["message"]) == (
        "gpu_count", "warn", None, 8, True, "nvidia-smi could not be used, no GPU judged: " + error)
    assert [r["status"] for r in results if r["check"] in GPU_CHECKS and r["check"] not in ("gpu_count", "xid")] == [
        "skip"] * 10
    assert (verdict(results), tooling_faults(results)) == ("warn", ["gpu_count"])


@pytest.mark.parametrize("rc", [0, 15])
def test_collect_nvidia_smi_xml_is_a_verdict_whatever_the_exit_code(rc):
    # whole XML is what the GPUs reported: 7 of 8 GPUs still fails (a real fault, not tooling)
    run = Runner({SMI_ARGV: (rc, drop_last_gpu(xml(V100)), ""), PERSISTENCED: (3, "", ""), journal(): (0, dmesg(), "")})
    observed = collect(run, reader({}), {}, {})
    assert "nvidia_smi_error" not in observed
    first = evaluate(observed, {"gpu_count": {"value": 8, "source": "Slurm (gres/gpu=8)"}})[0]
    assert (first["status"], first["measured"], first["message"]) == ("fail", 7, "7 GPUs answer nvidia-smi, 8 expected")
    assert "tooling" not in first


def test_collect_not_a_gpu_node_runs_no_gpu_command():
    run = Runner({("systemctl", "is-active", "slurmctld"): (0, "active\n", "")})
    observed = collect(run, reader({}), {}, dict(NOT_GPU, services=["slurmctld"]))
    assert observed == {"services": {"slurmctld": "active"}, "mounts": []}
    assert run.calls == [("systemctl", "is-active", "slurmctld")]


@pytest.mark.parametrize("out, want", [
    ("active\n", "active"),
    ("inactive\n", "inactive"),
    ("failed\n", "failed"),
    ("unknown\n", "unknown"),
])
def test_collect_service_states(out, want):
    run = Runner({("systemctl", "is-active", "munge"): (0 if want == "active" else 3, out, "")})
    observed = collect(run, reader({}), {}, dict(NOT_GPU, services=["munge"]))
    assert observed["services"] == {"munge": want}
    assert "services_errors" not in observed


@pytest.mark.parametrize("answer, error", [
    ((127, "", "/nonexistent/systemctl: No such file or directory"),
     "systemctl rc=127: /nonexistent/systemctl: No such file or directory"),
    ((126, "", "/bin/systemctl: Permission denied"), "systemctl rc=126: /bin/systemctl: Permission denied"),
    ((124, "", "systemctl: timed out after 20 s"), "systemctl rc=124: systemctl: timed out after 20 s"),
    ((1, "", ""), "systemctl rc=1: no output"),
])
def test_collect_service_systemctl_could_not_be_used(answer, error):
    run = Runner({("systemctl", "is-active", "munge"): answer})
    observed = collect(run, reader({}), {}, dict(NOT_GPU, services=["munge"]))
    assert (observed["services"], observed["services_errors"]) == ({"munge": "unknown"}, {"munge": error})
    item = one(evaluate(observed, dict(NOT_GPU, services=["munge"])), "services")
    assert (item["status"], item["tooling"], item["message"]) == (
        "warn", True, "systemctl could not be used for munge (%s)" % error)


def test_collect_cuda_from_nvcc_when_no_version_json():
    run = Runner({SMI_ARGV: (0, xml(H100), ""), ("/usr/local/cuda/bin/nvcc", "--version"): (0, NVCC_12_1, ""),
                  PERSISTENCED: (0, "", ""), journal(): (0, dmesg(), "")})
    observed = collect(run, reader({}), {}, {"cuda_version": {"value": "12.1", "source": "cuda_default_toolkit"}})
    assert observed["cuda_toolkit_version"] == "12.1"
    assert run.calls[1] == ("/usr/local/cuda/bin/nvcc", "--version")


def test_collect_explicit_nvcc_setting():
    run = Runner({SMI_ARGV: (0, xml(H100), ""), ("/opt/cuda/bin/nvcc", "--version"): (0, NVCC_12_1, ""),
                  PERSISTENCED: (0, "", ""), journal(): (0, dmesg(), "")})
    observed = collect(run, reader({}), {"nvcc": "/opt/cuda/bin/nvcc"},
                       {"cuda_version": {"value": "12.1", "source": "cuda_default_toolkit"}})
    assert observed["cuda_toolkit_version"] == "12.1"


@pytest.mark.parametrize("answer, error", [
    ((255, "", "ibpanic: [4182] main: can't open UMAD port (0x0000000000000000): No such device\n"),
     "/usr/sbin/ibstat rc=255: ibpanic: [4182] main: can't open UMAD port (0x0000000000000000): No such device"),
    ((127, "", "/usr/sbin/ibstat: No such file or directory"),
     "/usr/sbin/ibstat rc=127: /usr/sbin/ibstat: No such file or directory"),
    ((126, "", "/usr/sbin/ibstat: Permission denied"), "/usr/sbin/ibstat rc=126: /usr/sbin/ibstat: Permission denied"),
    ((124, "", "/usr/sbin/ibstat: timed out after 20 s"), "/usr/sbin/ibstat rc=124: /usr/sbin/ibstat: timed out after 20 s"),
    # the real a100 capture cut after its first port's rate line
    ((0, "\n".join(read_fixture(IB, IB_A100).splitlines()[:12]), ""),
     "/usr/sbin/ibstat: ibstat output is incomplete: mlx5_0 port 1 has no link_layer"),
])
def test_collect_ibstat_tooling_faults(answer, error):
    run = Runner({("/usr/sbin/ibstat",): answer})
    observed = collect(run, reader({}), {"ibstat": "/usr/sbin/ibstat"}, dict(NOT_GPU, hca={"rate_gbps": 200}))
    assert (observed["ibstat"], observed["ibstat_error"]) == (None, error)
    item = one(evaluate(observed, dict(NOT_GPU, hca={"rate_gbps": 200})), "hca_ports")
    assert (item["status"], item["measured"], item["tooling"], item["message"]) == (
        "warn", None, True, "ibstat could not be used, no port judged: " + error)


def test_collect_ibstat_ports_down_still_fails():
    # ibstat ran and reported ports down (the real capture): a link verdict, not tooling
    run = Runner({("/usr/sbin/ibstat",): (0, read_fixture(IB, IB_ROCE_DOWN), "")})
    hca = {"rate_gbps": 0, "link_layers": ["Ethernet"]}
    observed = collect(run, reader({}), {"ibstat": "/usr/sbin/ibstat"}, dict(NOT_GPU, hca=hca))
    item = one(evaluate(observed, dict(NOT_GPU, hca=hca)), "hca_ports")
    assert (item["status"], "tooling" in item) == ("fail", False)


@pytest.mark.parametrize("journal_answer, dmesg_answer, error", [
    ((127, "", "/nonexistent/journalctl: No such file or directory"),
     (1, "", "dmesg: read kernel buffer failed: Operation not permitted\n"),
     "journalctl rc=127: /nonexistent/journalctl: No such file or directory; "
     "dmesg rc=1: dmesg: read kernel buffer failed: Operation not permitted"),
    ((1, "", "No journal files were found.\n"), (126, "", "/bin/dmesg: Permission denied"),
     "journalctl rc=1: No journal files were found.; dmesg rc=126: /bin/dmesg: Permission denied"),
])
def test_collect_kernel_log_tooling_fault(journal_answer, dmesg_answer, error):
    run = Runner({SMI_ARGV: (0, xml(H100), ""), PERSISTENCED: (0, "", ""), journal(): journal_answer,
                  ("dmesg",): dmesg_answer})
    observed = collect(run, reader({}), {}, {})
    assert (observed["kernel_log"], observed["kernel_log_error"]) == (None, error)
    item = one(evaluate(observed, {}), "xid")
    assert (item["status"], item["measured"], item["expected"], item["tooling"], item["message"]) == (
        "warn", None, list(DEFAULT_XID_CODES), True, "the kernel log could not be read: " + error)


def test_collect_hca_from_sysfs(tmp_path):
    make_ib_device(tmp_path, "mlx5_0", "MT4129", {1: {
        "state": "4: ACTIVE", "phys_state": "5: LinkUp", "rate": "400 Gb/sec (4X NDR)", "lid": "0x4b",
        "sm_lid": "0x14e", "lid_mask_count": "0", "link_layer": "InfiniBand",
    }})
    run = Runner({})
    observed = collect(run, reader({}), {"sysfs_root": str(tmp_path)}, dict(NOT_GPU, hca={"rate_gbps": 400}))
    assert run.calls == []
    assert observed["ibstat"]["source"] == "sysfs"
    assert observed["ibstat"]["active_ib_ports"] == ["mlx5_0:1"]
    item = one(evaluate(observed, dict(NOT_GPU, hca={"rate_gbps": 400})), "hca_ports")
    assert (item["status"], item["message"]) == ("pass", "1 ports Active at 400 Gb/s")


# ---------------------------------------------------------------------------
# hardware
# ---------------------------------------------------------------------------

V100_UUIDS = sorted(gpu["uuid"] for gpu in smi(V100)["gpus"])


@pytest.mark.parametrize("observed, want", [
    ({"nvidia_smi": smi(H100)},
     {"gpu_count": 1, "gpu_names": ["NVIDIA H100 80GB HBM3"], "gpu_uuids": ["GPU-232c00c4-60d0-5fdb-a8f5-d8949845a9bb"],
      "architecture": "Hopper", "pcie_max_gen": 5, "ibstat": None}),
    ({"nvidia_smi": smi(V100), "ibstat": ibstat(IB_AZURE)},
     {"gpu_count": 8, "gpu_names": ["Tesla V100S-PCIE-32GB"], "gpu_uuids": V100_UUIDS, "architecture": None,
      "pcie_max_gen": 3, "ibstat": ibstat(IB_AZURE)}),
    ({"nvidia_smi": None, "nvidia_smi_error": "rc=9: x"},
     {"gpu_count": 0, "gpu_names": [], "gpu_uuids": [], "architecture": None, "pcie_max_gen": None, "ibstat": None}),
    ({}, {"gpu_count": 0, "gpu_names": [], "gpu_uuids": [], "architecture": None, "pcie_max_gen": None, "ibstat": None}),
    # two architectures on one node (GPUs of two real captures): none is reported
    ({"nvidia_smi": {"gpus": smi(A5000)["gpus"] + smi(H100)["gpus"]}},
     {"gpu_count": 3, "gpu_names": ["NVIDIA H100 80GB HBM3", "NVIDIA RTX A5000"],
      "gpu_uuids": sorted(gpu["uuid"] for gpu in smi(A5000)["gpus"] + smi(H100)["gpus"]), "architecture": None,
      "pcie_max_gen": 5, "ibstat": None}),
])
def test_hardware(observed, want):
    assert hardware(observed) == want
    assert len(want["gpu_uuids"]) == want["gpu_count"]  # every capture here has one UUID per GPU


# ---------------------------------------------------------------------------
# The lent H200's and H100's own answers replayed: collect + evaluate must give what
# gpucluster-healthcheck printed there (tests/unit/fixtures/h200-driver580, h100-80gb-hbm3-driver580-b)
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("capture, smi_capture, config, printed, verdict", [
    (H200_DIR, "nvidia-smi-q.xml", "healthcheck-config.json", "healthcheck.json", "pass"),
    (H200_DIR, "nvidia-smi-q-busy.xml", "healthcheck-config.json", "healthcheck-busy.json", "pass"),
    # the lent H100 of 2026-11-26 (tests/unit/fixtures/h100-80gb-hbm3-driver580-b)
    (H100B_DIR, "nvidia-smi-q.xml", "healthcheck-config.json", "healthcheck.json", "pass"),
    (H100B_DIR, "nvidia-smi-q-busy.xml", "healthcheck-config.json", "healthcheck-busy.json", "pass"),
], ids=["h200", "h200-busy", "h100", "h100-busy"])
def test_lent_machines_healthcheck_runs_replayed(capture, smi_capture, config, printed, verdict):
    run = Runner({
        SMI_ARGV: (0, read_fixture(capture, smi_capture), ""),
        ("/usr/local/cuda/bin/nvcc", "--version"): (0, read_fixture(capture, "nvcc-version.txt"), ""),
        PERSISTENCED: (127, "", "systemctl: not found"),
        journal(): (127, "", "journalctl: not found"),  # the machines have none (their commands logs)
        ("dmesg",): (0, read_fixture(capture, "dmesg-xid.txt"), ""),
    })
    config = json.loads(read_fixture(capture, config))
    observed = collect(run, reader({}), config["settings"], config["expected"])
    document = json.loads(read_fixture(capture, printed))
    assert (document["node"], document["verdict"]) == ("lent", verdict)
    results = evaluate(observed, config["expected"])
    # recorded before time_sync and disk_space were checks: the config expects neither, both skip
    assert results[:len(document["checks"])] == document["checks"]
    assert [(r["check"], r["status"]) for r in results[len(document["checks"]):]] == [
        ("time_sync", "skip"), ("disk_space", "skip")]


# ---------------------------------------------------------------------------
# Tooling: the program's tools and what a drain reason names
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("rc, out, err, want", [
    (9, SMI_NO_DRIVER, "", "nvidia-smi rc=9: " + SMI_NO_DRIVER.strip()),
    (1, "out\n", "\n  err line \nmore\n", "nvidia-smi rc=1: err line"),
    (1, "\n\n", "", "nvidia-smi rc=1: no output"),
])
def test_tool_error(rc, out, err, want):
    assert tool_error("nvidia-smi", rc, out, err) == want


@pytest.mark.parametrize("argv, tools, want", [
    (["nvidia-smi", "-q", "-x"], {"nvidia-smi": "/usr/local/bin/nvidia-smi"}, ["/usr/local/bin/nvidia-smi", "-q", "-x"]),
    (["nvidia-smi", "-q"], {}, ["nvidia-smi", "-q"]),
    (["nvidia-smi", "-q"], None, ["nvidia-smi", "-q"]),
    # not found at install time ("-"), or not absolute: left to the search path
    (["scontrol", "show"], {"scontrol": "-"}, ["scontrol", "show"]),
    (["scontrol", "show"], {"scontrol": "bin/scontrol"}, ["scontrol", "show"]),
    (["scontrol", "show"], {"scontrol": ""}, ["scontrol", "show"]),
    # an absolute program (validation_nvidia_smi_path) is run as given
    (["/opt/nv/nvidia-smi", "-q"], {"nvidia-smi": "/usr/bin/nvidia-smi"}, ["/opt/nv/nvidia-smi", "-q"]),
])
def test_command_path(argv, tools, want):
    assert command_path(argv, tools) == want


@pytest.mark.parametrize("environ, path", [
    # Slurm's empty environment
    ({}, FALLBACK_PATH),
    ({"PATH": ""}, FALLBACK_PATH),
    ({"PATH": "/usr/bin:/bin"}, "/usr/bin:/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/sbin"),
    ({"PATH": "/opt/x/bin:/usr/local/bin", "HOME": "/root"},
     "/opt/x/bin:/usr/local/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin"),
])
def test_command_environment(environ, path):
    env = command_environment(environ)
    assert env == dict(environ, PATH=path, LC_ALL="C")
    assert "/usr/local/bin" in env["PATH"].split(":")


@pytest.mark.parametrize("reason, want", [
    ("gpucluster-validation: gpu_count [root@2026-11-27T14:03:56]", ["gpu_count"]),
    ("gpucluster-validation: gpu_count,ecc_errors", ["gpu_count", "ecc_errors"]),
    ("gpucluster-validation: flapping pcie_link,xid [root@2026-11-27T14:03:56]", ["pcie_link", "xid"]),
    ("gpucluster-validation: flapping", []),
    ("gpucluster-validation:", []),
    ("admin: bad fan", []),
    ("", []),
])
def test_reason_checks(reason, want):
    assert reason_checks(reason, "gpucluster-validation:") == want


@pytest.mark.parametrize("names, want", [
    # drained for a GPU check, nvidia-smi cannot run now: the repair is not proven
    (["gpu_count"], ["gpu_count"]),
    (["ecc_errors"], ["ecc_errors"]),
    # drained for a check that was judged again: nothing blocks the resume
    (["mounts"], []),
    ([], []),
])
def test_unjudged(names, want):
    results = evaluate({"nvidia_smi": None, "nvidia_smi_error": "nvidia-smi rc=127: x", "mounts": []},
                       {"gpu_count": {"value": 8, "source": "s"}})
    assert unjudged(results, names) == want


# ---------------------------------------------------------------------------
# time_sync: chronyc tracking, else timedatectl; disk_space: statvfs through a reader
# ---------------------------------------------------------------------------

# chronyc -n tracking as chrony 4 prints it: a worker following its head node, ...
TRACKING = (
    "Reference ID    : 0AE7010A (10.231.1.10)\n"
    "Stratum         : 11\n"
    "Ref time (UTC)  : Thu Nov 27 14:02:11 2026\n"
    "System time     : 0.000012417 seconds slow of NTP time\n"
    "Last offset     : -0.000009211 seconds\n"
    "RMS offset      : 0.000031770 seconds\n"
    "Frequency       : 4.118 ppm fast\n"
    "Residual freq   : -0.002 ppm\n"
    "Skew            : 0.091 ppm\n"
    "Root delay      : 0.000208466 seconds\n"
    "Root dispersion : 0.000367813 seconds\n"
    "Update interval : 64.4 seconds\n"
    "Leap status     : Normal\n"
)
# ... and chronyd just started, before its first source answered.
TRACKING_UNSYNCED = (
    "Reference ID    : 00000000 ()\n"
    "Stratum         : 0\n"
    "Ref time (UTC)  : Thu Jan 01 00:00:00 1970\n"
    "System time     : 0.000000000 seconds fast of NTP time\n"
    "Last offset     : +0.000000000 seconds\n"
    "RMS offset      : 0.000000000 seconds\n"
    "Frequency       : 0.000 ppm slow\n"
    "Residual freq   : +0.000 ppm\n"
    "Skew            : 0.000 ppm\n"
    "Root delay      : 1.000000000 seconds\n"
    "Root dispersion : 1.000000000 seconds\n"
    "Update interval : 0.0 seconds\n"
    "Leap status     : Not synchronised\n"
)


def tracking(system_time):
    return TRACKING.replace("0.000012417 seconds slow of NTP time", system_time)


CHRONYC = ("chronyc", "-n", "tracking")
TIMEDATECTL = ("timedatectl", "show", "-p", "NTPSynchronized", "--value")
NO_CHRONYC = (127, "", "chronyc: No such file or directory")
NO_DAEMON = (1, "506 Cannot talk to daemon\n", "")
NO_SYSTEMD = (1, "", "System has not been booted with systemd as init system (PID 1). Can't operate.\n"
              "Failed to connect to bus: Host is down\n")
TIME = {"max_offset": 0.5, "fail_offset": 60.0, "source": "validation_time_max_offset"}


@pytest.mark.parametrize("text, want", [
    (TRACKING, {"synchronized": True, "offset": -1.2417e-05}),
    (TRACKING_UNSYNCED, {"synchronized": False, "offset": 0.0}),
    (tracking("312.400000000 seconds fast of NTP time"), {"synchronized": True, "offset": 312.4}),
    (TRACKING.replace("Leap status     : Normal", "Leap status     : Insert second"), {"synchronized": True, "offset": -1.2417e-05}),
])
def test_parse_chrony_tracking(text, want):
    assert parse_chrony_tracking(text) == want


@pytest.mark.parametrize("text, message", [
    ("506 Cannot talk to daemon\n", "no Leap status and System time in its output: 506 Cannot talk to daemon"),
    ("", "no Leap status and System time in its output: no output"),
    (TRACKING.replace("Leap status     : Normal\n", ""),
     "no Leap status and System time in its output: Reference ID    : 0AE7010A (10.231.1.10)"),
])
def test_parse_chrony_tracking_refuses_other_text(text, message):
    with pytest.raises(HealthError) as exc:
        parse_chrony_tracking(text)
    assert str(exc.value) == message


@pytest.mark.parametrize("answers, observed, calls", [
    # chrony answers: timedatectl is not asked
    ({CHRONYC: (0, TRACKING, "")},
     {"time_sync": {"source": "chrony", "synchronized": True, "offset": -1.2417e-05, "note": None}}, [CHRONYC]),
    # no chrony (systemd-timesyncd): timedatectl tells, without an offset
    ({CHRONYC: NO_CHRONYC, TIMEDATECTL: (0, "yes\n", "")},
     {"time_sync": {"source": "timedatectl", "synchronized": True, "offset": None, "note": None}}, [CHRONYC, TIMEDATECTL]),
    ({CHRONYC: NO_CHRONYC, TIMEDATECTL: (0, "no\n", "")},
     {"time_sync": {"source": "timedatectl", "synchronized": False, "offset": None, "note": None}}, [CHRONYC, TIMEDATECTL]),
    # chronyd not running: the kernel's flag decides, chronyc's words noted
    ({CHRONYC: NO_DAEMON, TIMEDATECTL: (0, "yes\n", "")},
     {"time_sync": {"source": "timedatectl", "synchronized": True, "offset": None,
                    "note": "chronyc rc=1: 506 Cannot talk to daemon"}}, [CHRONYC, TIMEDATECTL]),
    # neither can tell (a container without systemd as init): the tools' own words
    ({CHRONYC: NO_CHRONYC, TIMEDATECTL: NO_SYSTEMD},
     {"time_sync": None, "time_sync_error": "chronyc rc=127: chronyc: No such file or directory; timedatectl rc=1: "
      "System has not been booted with systemd as init system (PID 1). Can't operate."}, [CHRONYC, TIMEDATECTL]),
    ({CHRONYC: (0, "garbled\n", ""), TIMEDATECTL: (0, "maybe\n", "")},
     {"time_sync": None, "time_sync_error": "chronyc tracking: no Leap status and System time in its output: garbled; "
      "timedatectl: NTPSynchronized is 'maybe', not yes or no"}, [CHRONYC, TIMEDATECTL]),
    ({CHRONYC: (124, "", "chronyc: timed out after 20 s"), TIMEDATECTL: (0, "", "")},
     {"time_sync": None, "time_sync_error": "chronyc rc=124: chronyc: timed out after 20 s; timedatectl rc=0: no output"},
     [CHRONYC, TIMEDATECTL]),
], ids=["chrony", "timesyncd-yes", "timesyncd-no", "chronyd-down", "neither", "garbled", "timeout"])
def test_read_time_sync(answers, observed, calls):
    run = Runner(answers)
    assert read_time_sync(run) == observed
    assert run.calls == calls


def time_result(answers, want=None):
    run = Runner(answers)
    return by_check(evaluate(read_time_sync(run), dict(NOT_GPU, time_sync=want or TIME)))["time_sync"]


@pytest.mark.parametrize("answers, status, measured, message", [
    ({CHRONYC: (0, TRACKING, "")}, "pass", -1.2e-05, "clock synchronized (chronyc tracking, 12 us slow)"),
    ({CHRONYC: (0, tracking("0.004100000 seconds fast of NTP time"), "")}, "pass", 0.0041,
     "clock synchronized (chronyc tracking, 4.1 ms fast)"),
    # more than max_offset: warn
    ({CHRONYC: (0, tracking("0.800000000 seconds fast of NTP time"), "")}, "warn", 0.8,
     "clock 800.0 ms fast of its time source (chronyc tracking), at most 0.5 s expected"),
    # more than fail_offset: munge's skew, fail
    ({CHRONYC: (0, tracking("312.400000000 seconds slow of NTP time"), "")}, "fail", -312.4,
     "clock 312.4 s slow of its time source (chronyc tracking), more than 60 s: munge rejects Slurm's credentials "
     "across its TTL (300 s by default)"),
    # just started (or a test container's chronyd without a source): warn, never a drain
    ({CHRONYC: (0, TRACKING_UNSYNCED, "")}, "warn", 0.0, "clock not synchronized to a time source (chronyc tracking)"),
    ({CHRONYC: NO_CHRONYC, TIMEDATECTL: (0, "yes\n", "")}, "pass", None, "clock synchronized (timedatectl)"),
    ({CHRONYC: NO_CHRONYC, TIMEDATECTL: (0, "no\n", "")}, "warn", None,
     "clock not synchronized to a time source (timedatectl)"),
    ({CHRONYC: NO_DAEMON, TIMEDATECTL: (0, "yes\n", "")}, "pass", None,
     "clock synchronized (timedatectl) (chronyc rc=1: 506 Cannot talk to daemon)"),
], ids=["synced", "ms", "over-max", "over-fail", "unsynced", "timesyncd", "timesyncd-no", "chronyd-down"])
def test_time_sync(answers, status, measured, message):
    result = time_result(answers)
    assert (result["status"], result["measured"], result["expected"], result["unit"], result["source"], result["message"]) == (
        status, measured, 0.5, "s", "validation_time_max_offset", message)
    assert "tooling" not in result


def test_time_sync_unknown_is_a_tooling_warn():
    result = time_result({CHRONYC: NO_CHRONYC, TIMEDATECTL: NO_SYSTEMD})
    assert (result["status"], result["tooling"], result["measured"], result["message"]) == (
        "warn", True, None, "whether the clock is synchronized is unknown: chronyc rc=127: chronyc: No such file or "
        "directory; timedatectl rc=1: System has not been booted with systemd as init system (PID 1). Can't operate.")


@pytest.mark.parametrize("severity, status", [("warn", "warn"), ("skip", "skip")])
def test_time_sync_severity_turns_the_skew(severity, status):
    run = Runner({CHRONYC: (0, tracking("400.000000000 seconds fast of NTP time"), "")})
    expected = dict(NOT_GPU, time_sync=TIME, severity={"time_sync": severity})
    assert by_check(evaluate(read_time_sync(run), expected))["time_sync"]["status"] == status


def test_time_sync_fail_offset_from_the_expectation():
    result = time_result({CHRONYC: (0, tracking("2.000000000 seconds fast of NTP time"), "")},
                         {"max_offset": 0.1, "fail_offset": 1, "source": "validation_time_max_offset"})
    assert (result["status"], result["message"]) == (
        "fail", "clock 2.0 s fast of its time source (chronyc tracking), more than 1 s: munge rejects Slurm's "
        "credentials across its TTL (300 s by default)")


GIB = 2 ** 30
DISK = {"paths": ["/var", "/tmp", "/var/lib/slurm"], "min_free_percent": 5.0, "min_free_bytes": 0,
        "source": "validation_disk_space_paths"}


def disk_reader(table):
    """A statvfs stand-in: {path: (size, free) | None | an OSError to raise}."""
    def disk(path):
        value = table.get(path)
        if isinstance(value, OSError):
            raise value
        return value
    return disk


def disk_result(table, want=None):
    observed = read_disk_space(disk_reader(table), (want or DISK)["paths"])
    return by_check(evaluate(observed, dict(NOT_GPU, disk_space=want or DISK)))["disk_space"]


def test_read_disk_space():
    table = {"/var": (100 * GIB, 30 * GIB), "/tmp": OSError(13, "Permission denied")}
    assert read_disk_space(disk_reader(table), ["/var", "/tmp", "/var/lib/slurm"]) == {
        "disk_space": {"/var": [100 * GIB, 30 * GIB], "/var/lib/slurm": None},
        "disk_space_errors": {"/tmp": "statvfs /tmp: Permission denied"},
    }


def test_disk_usage_reads_statvfs(tmp_path):
    size, free = disk_usage(str(tmp_path))
    assert 0 < free <= size
    assert disk_usage(str(tmp_path / "missing")) is None
    assert disk_usage(str(tmp_path / "missing" / "deeper")) is None


@pytest.mark.parametrize("table, want, status, measured, message", [
    ({"/var": (100 * GIB, 30 * GIB), "/tmp": (100 * GIB, 30 * GIB), "/var/lib/slurm": (100 * GIB, 30 * GIB)}, None,
     "pass", 30.0,
     "free space: /var 30.0% (30.0 GiB), /tmp 30.0% (30.0 GiB), /var/lib/slurm 30.0% (30.0 GiB)"),
    # Slurm's spool not there (not a Slurm node): left out, and said
    ({"/var": (100 * GIB, 30 * GIB), "/tmp": (2 * GIB, GIB // 2)}, None, "pass", 25.0,
     "free space: /var 30.0% (30.0 GiB), /tmp 25.0% (512 MiB); not present: /var/lib/slurm"),
    # a full /var fails
    ({"/var": (100 * GIB, GIB), "/tmp": (100 * GIB, GIB)}, None, "fail", 1.0,
     "low free space: /var 1.0% (1.0 GiB of 100.0 GiB), /tmp 1.0% (1.0 GiB of 100.0 GiB) free, at least 5% expected; "
     "not present: /var/lib/slurm"),
    ({"/var": (100 * GIB, 0)}, None, "fail", 0.0,
     "low free space: /var 0.0% (0 MiB of 100.0 GiB) free, at least 5% expected; not present: /tmp, /var/lib/slurm"),
    # the bytes minimum: 10 % of a small /tmp is too little
    ({"/tmp": (4 * GIB, 400 * 2 ** 20)}, dict(DISK, paths=["/tmp"], min_free_bytes=GIB), "fail", 9.8,
     "low free space: /tmp 9.8% (400 MiB of 4.0 GiB) free, at least 5% and 1.0 GiB expected"),
    # just at the minimum: enough
    ({"/var": (100 * GIB, 5 * GIB)}, dict(DISK, paths=["/var"]), "pass", 5.0, "free space: /var 5.0% (5.0 GiB)"),
], ids=["enough", "spool-absent", "full", "empty", "bytes", "at-minimum"])
def test_disk_space(table, want, status, measured, message):
    result = disk_result(table, want)
    assert (result["status"], result["measured"], result["expected"], result["unit"], result["source"], result["message"]) == (
        status, measured, 5.0, "%", "validation_disk_space_paths", message)


def test_disk_space_none_present_skips():
    result = disk_result({})
    assert (result["status"], result["message"]) == ("skip", "none of the paths exists: /var, /tmp, /var/lib/slurm")


@pytest.mark.parametrize("table, status, message", [
    ({"/var": (100 * GIB, 30 * GIB), "/tmp": OSError(5, "Input/output error")}, "warn",
     "free space: /var 30.0% (30.0 GiB); statvfs could not be used: statvfs /tmp: Input/output error; "
     "not present: /var/lib/slurm"),
    # a full /var beside it is still a verdict
    ({"/var": (100 * GIB, GIB), "/tmp": OSError(13, "Permission denied")}, "fail",
     "low free space: /var 1.0% (1.0 GiB of 100.0 GiB) free, at least 5% expected; statvfs could not be used: "
     "statvfs /tmp: Permission denied; not present: /var/lib/slurm"),
    ({"/var": OSError(13, "Permission denied"), "/tmp": OSError(13, "Permission denied"),
      "/var/lib/slurm": OSError(13, "Permission denied")}, "warn",
     "statvfs could not be used: statvfs /var: Permission denied; statvfs /tmp: Permission denied; "
     "statvfs /var/lib/slurm: Permission denied"),
], ids=["io-error", "full-beside", "all-denied"])
def test_disk_space_statvfs_could_not_be_used(table, status, message):
    result = disk_result(table)
    assert (result["status"], result["tooling"], result["message"]) == (status, True, message)


def test_disk_space_and_time_sync_not_expected_skip_and_read_nothing():
    run = Runner({})
    observed = collect(run, reader({}), {}, NOT_GPU, disk=disk_reader({}))
    assert observed == {"services": {}, "mounts": []}
    results = by_check(evaluate(observed, NOT_GPU))
    assert [(results[c]["status"], results[c]["message"]) for c in ("time_sync", "disk_space")] == [
        ("skip", "no clock synchronization expected"), ("skip", "no free space expected")]
    assert run.calls == []


def test_collect_reads_time_and_disk_when_expected():
    run = Runner({CHRONYC: (0, TRACKING, "")})
    expected = dict(NOT_GPU, time_sync=TIME, disk_space=DISK)
    observed = collect(run, reader({}), {}, expected, disk=disk_reader({"/var": (100 * GIB, 30 * GIB)}))
    assert observed == {
        "services": {}, "mounts": [],
        "time_sync": {"source": "chrony", "synchronized": True, "offset": -1.2417e-05, "note": None},
        "disk_space": {"/var": [100 * GIB, 30 * GIB], "/tmp": None, "/var/lib/slurm": None},
    }
    assert run.calls == [CHRONYC]
    assert verdict(evaluate(observed, expected)) == "pass"


@pytest.mark.parametrize("expected, message", [
    ({"time_sync": 0.5}, "time_sync: must be a dict (got 0.5)"),
    ({"disk_space": ["/var"]}, "disk_space: must be a dict (got ['/var'])"),
    ({"disk_space": {"paths": "/var"}}, "disk_space.paths: must be a list (got '/var')"),
])
def test_time_and_disk_expectations_shape(expected, message):
    with pytest.raises(HealthError) as exc:
        evaluate({}, dict(NOT_GPU, **expected))
    assert str(exc.value) == message


# ---------------------------------------------------------------------------
# The program's metrics (the node exporter's textfile collector)
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("action, kind", [
    ("drained", "drained"),
    ("held (drain budget spent: 2 of 20 nodes drained by gpucluster-validation, budget 2 (10% of 20, at least 2))", "held"),
    ("not drained: the nodes could not be read to keep the drain budget (tooling): scontrol rc=1: no output", "not_drained"),
    ("resumed", "resumed"),
    ("kept drained (not judged: gpu_count)", "kept"),
    ("none", "none"),
    (None, "none"),
    ("scontrol did not answer: no action", "unknown"),
    ("held (flapping)", "other"),
    # the flapping and confirmation words, and the Kubernetes timer's
    ("drained (flapping: pcie_link)", "drained"),
    ("kept drained (flapping: pcie_link)", "kept"),
    ("unconfirmed (pcie_link 1/2)", "unconfirmed"),
    ("cordoned", "drained"),
    ("uncordoned", "resumed"),
    ("kept cordoned (admin)", "kept"),
])
def test_action_kind(action, kind):
    assert action_kind(action) == kind
    assert kind in ACTIONS


def metric_lines(text, name):
    return [line for line in text.splitlines() if line.startswith(name + "{") or line.startswith(name + " ")]


def test_health_metrics_whole_text():
    checks = [
        {"check": "gpu_count", "status": "fail"},
        {"check": "xid", "status": "warn", "tooling": True},
        {"check": "mounts", "status": "skip", "tooling": True},  # turned off: not a tooling fault
    ]
    held = "held (drain budget spent: 2 of 20 nodes drained by gpucluster-validation, budget 2 (10% of 20, at least 2))"
    assert health_metrics(checks, held, 1795788000.25, 1.23456, 30) == (
        "# HELP gpucluster_health_check_status A passive check's result on this node: 1 for its status "
        "(pass, warn, fail, skip).\n"
        "# TYPE gpucluster_health_check_status gauge\n"
        'gpucluster_health_check_status{check="gpu_count",status="pass"} 0\n'
        'gpucluster_health_check_status{check="gpu_count",status="warn"} 0\n'
        'gpucluster_health_check_status{check="gpu_count",status="fail"} 1\n'
        'gpucluster_health_check_status{check="gpu_count",status="skip"} 0\n'
        'gpucluster_health_check_status{check="xid",status="pass"} 0\n'
        'gpucluster_health_check_status{check="xid",status="warn"} 1\n'
        'gpucluster_health_check_status{check="xid",status="fail"} 0\n'
        'gpucluster_health_check_status{check="xid",status="skip"} 0\n'
        'gpucluster_health_check_status{check="mounts",status="pass"} 0\n'
        'gpucluster_health_check_status{check="mounts",status="warn"} 0\n'
        'gpucluster_health_check_status{check="mounts",status="fail"} 0\n'
        'gpucluster_health_check_status{check="mounts",status="skip"} 1\n'
        "# HELP gpucluster_health_check_tooling 1 when the check's tool could not run: the check judged nothing.\n"
        "# TYPE gpucluster_health_check_tooling gauge\n"
        'gpucluster_health_check_tooling{check="gpu_count"} 0\n'
        'gpucluster_health_check_tooling{check="xid"} 1\n'
        'gpucluster_health_check_tooling{check="mounts"} 0\n'
        "# HELP gpucluster_health_tooling_faults How many checks' tools could not run.\n"
        "# TYPE gpucluster_health_tooling_faults gauge\n"
        "gpucluster_health_tooling_faults 1\n"
        "# HELP gpucluster_health_verdict The node's verdict: 1 for pass, warn or fail.\n"
        "# TYPE gpucluster_health_verdict gauge\n"
        'gpucluster_health_verdict{verdict="pass"} 0\n'
        'gpucluster_health_verdict{verdict="warn"} 0\n'
        'gpucluster_health_verdict{verdict="fail"} 1\n'
        "# HELP gpucluster_health_action What the health check did about the node: 1 for its action.\n"
        "# TYPE gpucluster_health_action gauge\n"
        'gpucluster_health_action{action="drained"} 0\n'
        'gpucluster_health_action{action="held"} 1\n'
        'gpucluster_health_action{action="not_drained"} 0\n'
        'gpucluster_health_action{action="unconfirmed"} 0\n'
        'gpucluster_health_action{action="resumed"} 0\n'
        'gpucluster_health_action{action="kept"} 0\n'
        'gpucluster_health_action{action="none"} 0\n'
        'gpucluster_health_action{action="unknown"} 0\n'
        'gpucluster_health_action{action="other"} 0\n'
        "# HELP gpucluster_health_drain_held 1 when a check failed but the node was not drained: the drain budget "
        "was spent, the nodes could not be read to keep it, or the scheduler refused or did not answer.\n"
        "# TYPE gpucluster_health_drain_held gauge\n"
        "gpucluster_health_drain_held 1\n"
        "# HELP gpucluster_health_interval_seconds Seconds between the health check's runs.\n"
        "# TYPE gpucluster_health_interval_seconds gauge\n"
        "gpucluster_health_interval_seconds 30\n"
        "# HELP gpucluster_health_run_duration_seconds How long the last run took.\n"
        "# TYPE gpucluster_health_run_duration_seconds gauge\n"
        "gpucluster_health_run_duration_seconds 1.235\n"
        "# HELP gpucluster_health_last_run_timestamp_seconds When the last run ended (seconds since the epoch).\n"
        "# TYPE gpucluster_health_last_run_timestamp_seconds gauge\n"
        "gpucluster_health_last_run_timestamp_seconds 1795788000.25\n"
    )


@pytest.mark.parametrize("status, action, held, kind", [
    ("fail", "drained", 0, "drained"),
    ("fail", "not drained: the nodes could not be read to keep the drain budget (tooling): scontrol rc=1: no output", 1,
     "not_drained"),
    ("fail", "not drained: scontrol rc=1: slurm_update error: Invalid node state specified", 1, "not_drained"),
    ("fail", "no action: the nodes could not be read to keep the drain budget (tooling): kubectl rc=1: Forbidden", 1,
     "not_drained"),
    ("fail", "scontrol did not answer: no action", 1, "unknown"),
    ("fail", "unconfirmed (pcie_link 1/2)", 0, "unconfirmed"),
    # nothing failed: nothing was held, whatever could not be read
    ("pass", "no action: the nodes could not be read to keep the drain budget (tooling): kubectl rc=1: Forbidden", 0,
     "not_drained"),
    ("pass", "scontrol did not answer: no action", 0, "unknown"),
    ("pass", "resumed", 0, "resumed"),
    ("pass", "none", 0, "none"),
])
def test_health_metrics_action_and_held(status, action, held, kind):
    text = health_metrics([{"check": "gpu_count", "status": status}], action, 1.0)
    assert metric_lines(text, "gpucluster_health_drain_held") == ["gpucluster_health_drain_held %d" % held]
    assert [line for line in metric_lines(text, "gpucluster_health_action") if line.endswith(" 1")] == [
        'gpucluster_health_action{action="%s"} 1' % kind]
    # no duration given: none written; no interval given: the default
    assert metric_lines(text, "gpucluster_health_run_duration_seconds") == []
    assert metric_lines(text, "gpucluster_health_interval_seconds") == ["gpucluster_health_interval_seconds 120"]
    assert metric_lines(text, "gpucluster_health_tooling_faults") == ["gpucluster_health_tooling_faults 0"]


def test_health_metrics_of_every_check():
    results = evaluate({"nvidia_smi": smi(H100)}, {})
    text = health_metrics(results, "none", 1.0, interval="120")
    assert len(metric_lines(text, "gpucluster_health_check_status")) == 4 * len(CHECKS)
    assert sum(line.endswith(" 1") for line in metric_lines(text, "gpucluster_health_check_status")) == len(CHECKS)
    assert metric_lines(text, "gpucluster_health_interval_seconds") == ["gpucluster_health_interval_seconds 120.0"]


@pytest.mark.parametrize("results, names, absent, want", [
    # a tool that could not run leaves its check unjudged either way
    ([{"check": "gpu_count", "status": "warn", "tooling": True}], ["gpu_count"], False, ["gpu_count"]),
    ([{"check": "gpu_count", "status": "warn", "tooling": True}], ["gpu_count"], True, ["gpu_count"]),
    # a check this run does not have (validate.yml's dcgm_diag, ib_bw): judged by the run that has it,
    # unjudged for the node's program, which runs the passive checks only
    ([{"check": "gpu_count", "status": "pass"}], ["dcgm_diag", "gpu_count", "ib_bw"], False, []),
    ([{"check": "gpu_count", "status": "pass"}], ["dcgm_diag", "gpu_count", "ib_bw"], True, ["dcgm_diag", "ib_bw"]),
    ([], [], True, []),
])
def test_unjudged(results, names, absent, want):
    assert unjudged(results, names, absent=absent) == want
