# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import os

import pytest

from ansible_collections.gpucluster.core.plugins.module_utils._nvidia_smi import (
    merge_topology,
    parse_topology,
    parse_xml,
)
from ansible_collections.gpucluster.core.plugins.modules import gres_conf
from ansible_collections.gpucluster.core.tests.unit.plugins.modules.module_helpers import fail_module, fake_sysfs_root, run_module
from ansible_collections.gpucluster.core.tests.unit.plugins.shared_fixtures import read_fixture

V100S = "8x-tesla-v100s-pcie-32gb-driver460-v11.xml"


@pytest.fixture(autouse=True)
def no_host_state(tmp_path, monkeypatch):
    """Never read the host's CPU topology or mig-minors."""
    fake_sysfs_root(gres_conf, tmp_path, monkeypatch)
    monkeypatch.setattr(gres_conf, "_MIG_MINORS", str(tmp_path / "mig-minors"))


def facts(name=V100S, topo=None):
    result = parse_xml(read_fixture("nvidia-smi-xml", name))
    if topo:
        merge_topology(result, parse_topology(read_fixture("nvidia-smi-topo", topo)))
    return result


def test_writes_then_unchanged(tmp_path):
    dest = tmp_path / "gres.conf"
    args = {"nvidia": facts(), "dest": str(dest), "expected_gpus": 8, "header": "managed by test"}
    first = run_module(gres_conf.main, args)
    assert first["changed"] is True
    assert first["gres"] == "gpu:tesla_v100s-pcie-32gb:8"
    assert first["gpu_count"] == 8
    text = dest.read_text()
    assert text.splitlines()[0] == "# managed by test"
    assert text.splitlines()[1:] == ["Name=gpu Type=tesla_v100s-pcie-32gb File=/dev/nvidia%d" % i for i in range(8)]
    mtime = os.stat(str(dest)).st_mtime_ns
    second = run_module(gres_conf.main, args)
    assert second["changed"] is False
    assert os.stat(str(dest)).st_mtime_ns == mtime


def test_check_mode_and_diff(tmp_path):
    dest = tmp_path / "gres.conf"
    dest.write_text("AutoDetect=nvml\n")
    args = {"nvidia": facts(), "dest": str(dest), "_ansible_check_mode": True, "_ansible_diff": True}
    result = run_module(gres_conf.main, args)
    assert result["changed"] is True
    assert result["diff"]["before"] == "AutoDetect=nvml\n"
    assert "File=/dev/nvidia7" in result["diff"]["after"]
    assert dest.read_text() == "AutoDetect=nvml\n"


def test_write_false_computes_without_touching_dest(tmp_path):
    dest = tmp_path / "gres.conf"
    dest.write_text("AutoDetect=nvml\n")
    result = run_module(gres_conf.main, {"nvidia": facts(), "dest": str(dest), "write": False, "expected_gpus": 8})
    assert result["changed"] is False
    assert result["gres"] == "gpu:tesla_v100s-pcie-32gb:8"
    assert result["lines"] == ["Name=gpu Type=tesla_v100s-pcie-32gb File=/dev/nvidia%d" % i for i in range(8)]
    assert "dest" not in result
    assert dest.read_text() == "AutoDetect=nvml\n"


def test_write_false_still_checks(tmp_path):
    result = fail_module(gres_conf.main, {"nvidia": facts(), "write": False, "expected_gpus": 4})
    assert result["msg"].startswith("expected 4 GPUs")


def test_backup(tmp_path):
    dest = tmp_path / "gres.conf"
    dest.write_text("AutoDetect=nvml\n")
    result = run_module(gres_conf.main, {"nvidia": facts(), "dest": str(dest), "backup": True})
    assert result["changed"] is True
    with open(result["backup_file"]) as handle:
        assert handle.read() == "AutoDetect=nvml\n"


def test_autodetect_with_extra_lines(tmp_path):
    dest = tmp_path / "gres.conf"
    result = run_module(gres_conf.main, {
        "nvidia": facts("tesla-t4-driver515-v11.xml"), "dest": str(dest), "autodetect": "nvml",
        "extra_lines": ["Name=shard Count=8"], "header": "",
    })
    assert dest.read_text() == "AutoDetect=nvml\nName=shard Count=8\n"
    assert result["gres"] == "gpu:tesla_t4:1"


def test_links_and_cores(tmp_path):
    dest = tmp_path / "gres.conf"
    result = run_module(gres_conf.main, {
        "nvidia": facts(topo="h100-8gpu-nv18-ht-cpu-affinity-spaces-expanded.txt"),
        "dest": str(dest), "links": True, "type_style": "short",
    })
    assert result["lines"][4] == "Name=gpu Type=v100s File=/dev/nvidia4 Cores=52-103,156-207 Links=18,18,18,18,-1,18,18,18"


@pytest.mark.parametrize(
    "args, message",
    [
        ({"expected_gpus": 4}, "expected 4 GPUs, the nvidia facts list 8"),
        ({"check_devices": True}, "device files missing on this node: " + ", ".join("/dev/nvidia%d" % i for i in range(8))),
        ({"links": True}, "links=true needs the NVLink matrix: gather the facts with nvidia_smi_facts topology=true"),
    ],
)
def test_validation_errors(tmp_path, args, message):
    dest = tmp_path / "gres.conf"
    args = dict(args, nvidia=facts(), dest=str(dest))
    result = fail_module(gres_conf.main, args)
    assert result["msg"] == message
    assert not dest.exists()


def test_mig_capture_fails_clearly(tmp_path):
    result = fail_module(gres_conf.main, {"nvidia": facts("a100-sxm4-80gb-mig-driver535-v12.xml"), "dest": str(tmp_path / "g")})
    assert result["msg"].startswith("GPU 0 MIG device 0 (GPU instance 3) has no profile name")


def test_missing_directory(tmp_path):
    dest = tmp_path / "nope" / "gres.conf"
    result = fail_module(gres_conf.main, {"nvidia": facts(), "dest": str(dest)})
    assert result["msg"] == "directory %s of dest does not exist" % (tmp_path / "nope")
    assert result["changed"] is False


def test_failed_temporary_file_is_not_changed(tmp_path, monkeypatch):
    dest = tmp_path / "gres.conf"

    def full_disk(fd, *args, **kwargs):
        os.close(fd)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(gres_conf.os, "fdopen", full_disk)
    result = fail_module(gres_conf.main, {"nvidia": facts(), "dest": str(dest)})
    assert result["msg"] == "cannot write temporary file: [Errno 28] No space left on device"
    assert result["changed"] is False
    assert not dest.exists()
