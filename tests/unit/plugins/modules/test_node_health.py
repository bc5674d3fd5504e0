# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The node_health module run in-process: commands answered with real captures, programs found
as executables in a temporary directory, the host's files never read."""

from __future__ import annotations

import pytest

from ansible_collections.gpucluster.core.plugins.module_utils import _health
from ansible_collections.gpucluster.core.plugins.module_utils._health import CHECKS
from ansible_collections.gpucluster.core.plugins.module_utils._ibstat import read_sysfs
from ansible_collections.gpucluster.core.plugins.modules import node_health
from ansible_collections.gpucluster.core.tests.unit.plugins.module_utils.test_health import (
    NFS_LINE,
    NVCC_12_1,
    ROOT_LINE,
    SMI_NO_DRIVER,
    VERSION_JSON_11_5,
    XID_79,
)
from ansible_collections.gpucluster.core.tests.unit.plugins.module_utils.test_ibstat_parser import make_ib_device
from ansible_collections.gpucluster.core.tests.unit.plugins.modules.module_helpers import (
    RunCommandStub,
    fail_module,
    run_module,
)
from ansible_collections.gpucluster.core.tests.unit.plugins.shared_fixtures import read_fixture

H100_DIR = "h100-80gb-hbm3-driver580"
PROGRAMS = ("nvidia-smi", "systemctl", "journalctl", "dmesg", "ibstat", "timeout", "timedatectl")


def h100():
    return read_fixture(H100_DIR, "nvidia-smi-q.xml")


def dmesg():
    return read_fixture(H100_DIR, "dmesg-xid.txt")


@pytest.fixture
def bins(tmp_path):
    """Executable stand-ins for the programs the module looks up (it checks they are executable)."""
    out = {}
    for name in PROGRAMS:
        path = tmp_path / "bin" / name
        path.parent.mkdir(exist_ok=True)
        path.write_text("")
        path.chmod(0o755)
        out[name] = str(path)
    return out


@pytest.fixture(autouse=True)
def files(monkeypatch):
    """The files the module reads (version.json, /proc/mounts); nothing of the host's."""
    content = {}
    monkeypatch.setattr(node_health, "_read", content.get)
    return content


def statuses(result):
    return {c["check"]: c["status"] for c in result["checks"]}


def test_healthy_h100(bins):
    stub = RunCommandStub(
        (0, h100(), ""),
        (3, "", ""),  # nvidia-persistenced inactive (persistence mode is on in the driver)
        (0, dmesg(), ""),
        (0, read_fixture("ibstat", "h100-8x-ndr-ib-cx7-plus-4x-roce-cx6dx-3-ports-down.txt"), ""),
        (0, "active\n", ""),
    )
    args = {
        "expected": {
            "gpu_count": {"value": 1, "source": "Slurm's node definition (gres/gpu=1)"},
            "gpu_model": {"value": "H100", "source": "validation_gpu_model"},
            "driver_version": {"value": "580.159.04", "source": "nvidia_driver_version"},
            "hca": {"rate_gbps": 400, "source": "validation_hca.rate_gbps"},
            "services": ["slurmd"],
        },
        "ibstat_path": bins["ibstat"],
        "kernel_log_minutes": 30,
    }
    result = run_module(node_health.main, args, stub, bins)
    assert stub.calls == [
        [bins["nvidia-smi"], "-q", "-x"],
        [bins["systemctl"], "is-active", "--quiet", "nvidia-persistenced"],
        [bins["journalctl"], "--dmesg", "--no-pager", "--quiet", "--since", "-30min"],
        [bins["ibstat"]],
        [bins["systemctl"], "is-active", "slurmd"],
    ]
    assert result["changed"] is False
    assert result["verdict"] == "pass"
    assert [c["check"] for c in result["checks"]] == list(CHECKS)
    assert statuses(result) == {
        "gpu_count": "pass", "gpu_model": "pass", "driver_version": "pass", "cuda_version": "skip",
        "persistence_mode": "pass", "ecc_mode": "pass", "ecc_errors": "pass", "retired_pages": "skip",
        "row_remap": "pass", "pcie_link": "pass", "clock_events": "pass", "xid": "pass", "hca_ports": "pass",
        "mounts": "skip", "services": "pass", "time_sync": "skip", "disk_space": "skip",
    }
    assert result["checks"][0] == {
        "check": "gpu_count", "kind": "passive", "status": "pass", "measured": 1, "expected": 1, "unit": None,
        "source": "Slurm's node definition (gres/gpu=1)", "message": "1 GPUs answer nvidia-smi, 1 expected",
    }
    assert result["checks"][11]["message"] == "no XID that needs action in the kernel log of the last 30 minutes"
    assert result["checks"][12]["message"] == "8 ports Active at 400 Gb/s"
    hw = result["hardware"]
    assert (hw["gpu_count"], hw["gpu_names"], hw["architecture"], hw["pcie_max_gen"]) == (
        1, ["NVIDIA H100 80GB HBM3"], "Hopper", 5)
    assert hw["ibstat"]["nccl_ib_hca"] == "mlx5_0:1,mlx5_3:1,mlx5_4:1,mlx5_5:1,mlx5_6:1,mlx5_9:1,mlx5_10:1,mlx5_11:1"


def test_broken_node_is_reported_not_failed(bins):
    """A node with a GPU off the bus (Xid 79) and RoCE rails down: the module succeeds, the verdict fails."""
    stub = RunCommandStub(
        (0, h100(), ""),
        (0, "", ""),
        (0, dmesg() + XID_79 + "\n", ""),
        (0, read_fixture("ibstat", "h100-12x-roce-ethernet-2-cx7-ports-down.txt"), ""),
    )
    args = {"expected": {"hca": {"rate_gbps": 400, "link_layers": ["Ethernet"],
                                 "ignore": ["mlx5_1", "mlx5_2", "mlx5_7", "mlx5_8"]}},
            "ibstat_path": bins["ibstat"]}
    result = run_module(node_health.main, args, stub, bins)
    assert result["verdict"] == "fail"
    checks = {c["check"]: c for c in result["checks"]}
    assert (checks["xid"]["status"], checks["xid"]["message"]) == (
        "fail", "XID 79 on 0000:2b:00 in the kernel log of the last 60 minutes")
    assert (checks["hca_ports"]["status"], checks["hca_ports"]["message"]) == (
        "fail", "mlx5_5:1 Down (Disabled); mlx5_11:1 Down (Disabled)")


def test_nvidia_smi_fails(bins):
    stub = RunCommandStub((9, SMI_NO_DRIVER, ""), (3, "", ""), (0, dmesg(), ""))
    result = run_module(node_health.main, {"expected": {"gpu_count": {"value": 8, "source": "validation_gpu_count"}}},
                        stub, bins)
    # the driver not answering is a tooling fault: a warn, never "0 GPUs, 8 expected" (issue 32)
    assert result["verdict"] == "warn"
    first = result["checks"][0]
    assert (first["status"], first["measured"], first["tooling"], first["message"]) == (
        "warn", None, True,
        "nvidia-smi could not be used, no GPU judged: nvidia-smi rc=9: NVIDIA-SMI has failed because it couldn't "
        "communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.")
    assert result["hardware"] == {"gpu_count": 0, "gpu_names": [], "gpu_uuids": [], "architecture": None,
                                  "pcie_max_gen": None, "ibstat": None}


def test_programs_not_found(bins):
    """Neither nvidia-smi nor journalctl on the PATH: 127 without running them; dmesg is the fallback."""
    found = {k: v for k, v in bins.items() if k not in ("nvidia-smi", "journalctl")}
    stub = RunCommandStub((0, "", ""), (0, dmesg(), ""))
    result = run_module(node_health.main, {"expected": {}}, stub, found)
    assert stub.calls == [[bins["systemctl"], "is-active", "--quiet", "nvidia-persistenced"], [bins["dmesg"]]]
    checks = {c["check"]: c for c in result["checks"]}
    assert (checks["gpu_count"]["status"], checks["gpu_count"]["message"]) == (
        "warn", "nvidia-smi could not be used, no GPU judged: nvidia-smi rc=127: nvidia-smi: not found")
    assert checks["xid"]["message"] == "no XID that needs action in the kernel ring buffer (dmesg)"


def test_explicit_nvidia_smi_path_must_be_executable(bins, tmp_path):
    stub = RunCommandStub((3, "", ""), (0, dmesg(), ""))
    missing = str(tmp_path / "opt" / "nvidia-smi")
    result = run_module(node_health.main, {"expected": {}, "nvidia_smi_path": missing}, stub, bins)
    assert (result["checks"][0]["status"], result["checks"][0]["message"]) == (
        "warn", "nvidia-smi could not be used, no GPU judged: %s rc=127: %s: not found" % (missing, missing))


def test_cuda_from_version_json(bins, tmp_path, files):
    home = tmp_path / "cuda-11.5"
    files[str(home) + "/version.json"] = VERSION_JSON_11_5
    stub = RunCommandStub((0, h100(), ""), (0, "", ""), (0, dmesg(), ""))
    result = run_module(node_health.main, {"cuda_home": str(home),
                                           "expected": {"cuda_version": {"value": "12.1",
                                                                         "source": "cuda_default_toolkit"}}},
                        stub, bins)
    assert len(stub.calls) == 3  # no nvcc
    check = result["checks"][3]
    assert (check["check"], check["status"], check["message"]) == (
        "cuda_version", "fail", "CUDA toolkit 11.5, pinned 12.1")


def test_cuda_from_nvcc(bins, tmp_path):
    nvcc = tmp_path / "cuda-12.1" / "bin" / "nvcc"
    nvcc.parent.mkdir(parents=True)
    nvcc.write_text("")
    nvcc.chmod(0o755)
    stub = RunCommandStub((0, h100(), ""), (0, NVCC_12_1, ""), (0, "", ""), (0, dmesg(), ""))
    result = run_module(node_health.main, {"cuda_home": str(tmp_path / "cuda-12.1"),
                                           "expected": {"cuda_version": {"value": "12.1",
                                                                         "source": "cuda_default_toolkit"}}},
                        stub, bins)
    assert stub.calls[1] == [str(nvcc), "--version"]
    assert (result["checks"][3]["status"], result["checks"][3]["message"]) == ("pass", "CUDA toolkit 12.1, pinned 12.1")


def test_mounts(bins, files):
    files["/proc/mounts"] = ROOT_LINE + "\n" + NFS_LINE + "\n"
    stub = RunCommandStub((0, "", ""), (0, "", ""))
    args = {"expected": {"gpu_count": {"value": 0, "source": "not a GPU node (gpucluster_gpu_nodes)"},
                         "mounts": [{"path": "/nfs", "source": "nfs_mounts"},
                                    {"path": "/data/shared", "source": "nfs_mounts"}]}}
    result = run_module(node_health.main, args, stub, bins)
    assert stub.calls == [[bins["timeout"], "10", "stat", "--", "/nfs"],
                          [bins["timeout"], "10", "stat", "--", "/data/shared"]]
    check = result["checks"][13]
    assert (check["check"], check["status"], check["measured"], check["message"]) == (
        "mounts", "fail", ["/nfs"], "not mounted: /data/shared (nothing)")


def test_time_sync_and_disk_space(bins, monkeypatch):
    # chronyc not installed: timedatectl tells; statvfs replaced (the host's disks are never read)
    monkeypatch.setattr(node_health, "_disk", {"/var": (100 * 2 ** 30, 3 * 2 ** 30), "/tmp": (2 ** 30, 2 ** 29)}.get)
    stub = RunCommandStub((0, "yes\n", ""))
    args = {"expected": {"gpu_count": {"value": 0, "source": "not a GPU node (gpucluster_gpu_nodes)"},
                         "time_sync": {"max_offset": 0.5, "fail_offset": 60, "source": "validation_time_max_offset"},
                         "disk_space": {"paths": ["/var", "/tmp", "/var/lib/slurm"], "min_free_percent": 5,
                                        "source": "validation_disk_space_paths"}}}
    result = run_module(node_health.main, args, stub, bins)
    assert stub.calls == [[bins["timedatectl"], "show", "-p", "NTPSynchronized", "--value"]]
    assert [(c["check"], c["status"], c["measured"], c["message"]) for c in result["checks"][15:]] == [
        ("time_sync", "pass", None, "clock synchronized (timedatectl)"),
        ("disk_space", "fail", 3.0,
         "low free space: /var 3.0% (3.0 GiB of 100.0 GiB) free, at least 5% expected; not present: /var/lib/slurm"),
    ]
    assert result["verdict"] == "fail"


def test_not_a_gpu_node_runs_no_gpu_command(bins):
    stub = RunCommandStub((0, "active\n", ""), (3, "inactive\n", ""))
    args = {"expected": {"gpu_count": {"value": 0, "source": "not a GPU node (gpucluster_gpu_nodes)"},
                         "services": ["munge", "slurmctld"]}}
    result = run_module(node_health.main, args, stub, bins)
    assert stub.calls == [[bins["systemctl"], "is-active", "munge"], [bins["systemctl"], "is-active", "slurmctld"]]
    assert result["verdict"] == "fail"
    assert result["checks"][14]["message"] == "not running: slurmctld (inactive)"
    assert {c["status"] for c in result["checks"][:12]} == {"skip"}


def test_hca_from_sysfs_when_no_ibstat(bins, tmp_path, monkeypatch):
    make_ib_device(tmp_path, "mlx5_0", "MT4129", {1: {
        "state": "4: ACTIVE", "phys_state": "5: LinkUp", "rate": "400 Gb/sec (4X NDR)", "lid": "0x4b",
        "sm_lid": "0x14e", "lid_mask_count": "0", "link_layer": "InfiniBand",
    }})
    roots = []

    def fake_read_sysfs(root):
        roots.append(root)
        return read_sysfs(str(tmp_path))
    monkeypatch.setattr(_health, "read_sysfs", fake_read_sysfs)
    stub = RunCommandStub()
    args = {"expected": {"gpu_count": {"value": 0, "source": "x"}, "hca": {"rate_gbps": 400}}}
    result = run_module(node_health.main, args, stub, bins)
    assert roots == ["/sys"]
    assert stub.calls == []
    assert result["checks"][12]["message"] == "1 ports Active at 400 Gb/s"
    assert result["hardware"]["ibstat"]["source"] == "sysfs"


def test_check_mode_runs_the_same_reads(bins):
    stub = RunCommandStub((0, h100(), ""), (0, "", ""), (0, dmesg(), ""))
    result = run_module(node_health.main, {"expected": {}, "_ansible_check_mode": True}, stub, bins)
    assert (result["changed"], result["verdict"]) == (False, "pass")
    assert len(stub.calls) == 3


@pytest.mark.parametrize("expected, message", [
    ({"severity": {"gpu": "warn"}}, "expected: severity: unknown check 'gpu' (checks: %s)" % ", ".join(CHECKS)),
    ({"severity": {"xid": "ignore"}}, "expected: severity: xid is 'ignore', expected fail, warn or skip"),
])
def test_unusable_expectation_fails(bins, expected, message):
    args = {"expected": dict(expected, gpu_count={"value": 0, "source": "x"})}
    result = fail_module(node_health.main, args, RunCommandStub(), bins)
    assert result["msg"] == message


def test_expected_is_required(bins):
    result = fail_module(node_health.main, {}, RunCommandStub(), bins)
    assert result["msg"] == "missing required arguments: expected"


def test_bare_gpu_count_fails_cleanly(bins):
    stub = RunCommandStub((0, h100(), ""), (0, "", ""), (0, dmesg(), ""))
    result = fail_module(node_health.main, {"expected": {"gpu_count": 8}}, stub, bins)
    assert result["msg"].startswith("expected: gpu_count")
