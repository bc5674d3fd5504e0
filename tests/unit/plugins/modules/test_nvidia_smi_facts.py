# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import pytest

from ansible_collections.gpucluster.core.plugins.modules import nvidia_smi_facts
from ansible_collections.gpucluster.core.tests.unit.plugins.modules.module_helpers import RunCommandStub, fail_module, fake_sysfs_root, run_module
from ansible_collections.gpucluster.core.tests.unit.plugins.shared_fixtures import (
    list_fixtures,
    read_fixture,
)

SMI = "/usr/bin/nvidia-smi"
BINS = {"nvidia-smi": SMI}


@pytest.fixture(autouse=True)
def empty_sysfs(tmp_path, monkeypatch):
    """No PCI devices unless a test builds some: the host's real /sys is never read."""
    return fake_sysfs_root(nvidia_smi_facts, tmp_path, monkeypatch, "bus/pci/devices")


@pytest.mark.parametrize("name", list_fixtures("nvidia-smi-xml"))
def test_every_capture(name):
    xml = read_fixture("nvidia-smi-xml", name)
    stub = RunCommandStub((0, xml, ""))
    result = run_module(nvidia_smi_facts.main, {}, stub, BINS)
    assert stub.calls == [[SMI, "-q", "-x"]]
    facts = result["ansible_facts"]["nvidia"]
    assert result["changed"] is False
    assert facts["driver_available"] is True
    assert facts["nvidia_smi_path"] == SMI
    assert facts["gpu_count"] == len(facts["gpus"]) >= 1
    assert facts["topology"] is None


def test_v100s_with_topology_two_calls():
    xml = read_fixture("nvidia-smi-xml", "8x-tesla-v100s-pcie-32gb-driver460-v11.xml")
    topo = read_fixture("nvidia-smi-topo", "h100-8gpu-nv18-ht-cpu-affinity-spaces-expanded.txt")
    stub = RunCommandStub((0, xml, ""), (0, topo, ""))
    facts = run_module(nvidia_smi_facts.main, {"topology": True}, stub, BINS)["ansible_facts"]["nvidia"]
    assert stub.calls == [[SMI, "-q", "-x"], [SMI, "topo", "-m"]]
    assert facts["gpu_count"] == 8
    assert facts["driver_version"] == "460.73.01"
    assert [g["device_file"] for g in facts["gpus"]] == ["/dev/nvidia%d" % i for i in range(8)]
    assert facts["gpus"][5]["numa_node"] == 1
    assert facts["gpus"][5]["cpu_affinity"][:2] == [52, 53]
    assert facts["gpus"][0]["links"]["GPU7"] == "NV18"
    assert facts["topology"]["columns"][0] == "GPU0"


def test_explicit_path(tmp_path):
    binary = tmp_path / "nvidia-smi"
    binary.write_text("")
    binary.chmod(0o755)
    xml = read_fixture("nvidia-smi-xml", "tesla-t4-driver515-v11.xml")
    stub = RunCommandStub((0, xml, ""))
    facts = run_module(nvidia_smi_facts.main, {"nvidia_smi_path": str(binary)}, stub, {})["ansible_facts"]["nvidia"]
    assert stub.calls == [[str(binary), "-q", "-x"]]
    assert facts["gpus"][0]["name"] == "Tesla T4"


def test_missing_nvidia_smi_reports_no_driver(empty_sysfs):
    from ansible_collections.gpucluster.core.tests.unit.plugins.module_utils.test_nvidia_smi_parser import (
        make_pci_device,
    )
    make_pci_device(empty_sysfs, "0000:18:00.0", "0x10de", "0x030200")
    make_pci_device(empty_sysfs, "0000:05:00.0", "0x10de", "0x068000", device="0x22a3")
    stub = RunCommandStub()
    result = run_module(nvidia_smi_facts.main, {}, stub, {"nvidia-smi": None})
    facts = result["ansible_facts"]["nvidia"]
    assert stub.calls == []
    assert facts["driver_available"] is False
    assert facts["nvidia_smi_path"] is None
    assert facts["gpu_count"] == 0
    assert facts["gpus"] == []
    assert facts["pci"]["gpu_count"] == 1
    assert facts["fabric_manager_required"] is True
    assert facts["nouveau_loaded"] is False


def test_nouveau_loaded_from_sysfs(empty_sysfs):
    (empty_sysfs / "module" / "nouveau").mkdir(parents=True)
    result = run_module(nvidia_smi_facts.main, {}, RunCommandStub(), {"nvidia-smi": None})
    assert result["ansible_facts"]["nvidia"]["nouveau_loaded"] is True


def test_missing_nvidia_smi_fails_when_asked():
    result = fail_module(nvidia_smi_facts.main, {"fail_on_missing": True}, RunCommandStub(), {"nvidia-smi": None})
    assert result["msg"] == "nvidia-smi not found (looked in PATH); no NVIDIA driver installed"


def test_explicit_path_missing(tmp_path):
    path = str(tmp_path / "nope")
    result = fail_module(nvidia_smi_facts.main, {"nvidia_smi_path": path, "fail_on_missing": True}, RunCommandStub(), {})
    assert result["msg"] == "nvidia-smi not found (looked in %s); no NVIDIA driver installed" % path
    facts = run_module(nvidia_smi_facts.main, {"nvidia_smi_path": path}, RunCommandStub(), {})["ansible_facts"]["nvidia"]
    assert facts["driver_available"] is False


@pytest.mark.parametrize(
    "rc, out, message",
    [
        (
            18,
            "Failed to initialize NVML: Driver/library version mismatch\n",
            "Failed to initialize NVML: Driver/library version mismatch",
        ),
        (6, "No devices were found\n", "No devices were found"),
        (
            9,
            "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
            "Make sure that the latest NVIDIA driver is installed and running.\n\n",
            "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
            "Make sure that the latest NVIDIA driver is installed and running.",
        ),
    ],
)
def test_nvidia_smi_errors_fail(rc, out, message):
    result = fail_module(nvidia_smi_facts.main, {}, RunCommandStub((rc, out, "")), BINS)
    assert result["msg"] == "%s -q -x failed (rc=%d): %s" % (SMI, rc, message)


def test_malformed_xml_fails_with_position():
    xml = read_fixture("nvidia-smi-xml", "a100-sxm4-80gb-mig-driver535-v12.xml")
    truncated = xml[: xml.index("</mig_devices>")]
    line = truncated.count("\n") + 1
    result = fail_module(nvidia_smi_facts.main, {}, RunCommandStub((0, truncated, "")), BINS)
    assert result["msg"].startswith("nvidia-smi -q -x returned malformed XML: no element found at line %d, column " % line)


def test_topology_failure_fails():
    xml = read_fixture("nvidia-smi-xml", "tesla-t4-driver515-v11.xml")
    stub = RunCommandStub((0, xml, ""), (3, "", "Failed to initialize NVML: Unknown Error\n"))
    result = fail_module(nvidia_smi_facts.main, {"topology": True}, stub, BINS)
    assert result["msg"] == "%s topo -m failed (rc=3): Failed to initialize NVML: Unknown Error" % SMI


def test_check_mode_still_reads():
    xml = read_fixture("nvidia-smi-xml", "a10g-aws-driver515-v11.xml")
    stub = RunCommandStub((0, xml, ""))
    result = run_module(nvidia_smi_facts.main, {"_ansible_check_mode": True}, stub, BINS)
    assert result["ansible_facts"]["nvidia"]["gpus"][0]["name"] == "NVIDIA A10G"
