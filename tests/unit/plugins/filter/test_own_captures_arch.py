# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""nvidia_gpu_architecture / nvidia_kernel_modules over our own H100 and H200 captures (driver 580).

Each capture spells its one PCI device ID three ways: XML <pci_device_id> 233010DE, CSV
pci.device_id 0x233010DE and sysfs device 0x2330 (H200: 2335); each must read as hopper.
"""

from __future__ import annotations

import csv
import io
import re

import pytest

from ansible_collections.gpucluster.core.plugins.filter.nvidia_driver import (
    nvidia_gpu_architecture,
    nvidia_kernel_modules,
)
from ansible_collections.gpucluster.core.tests.unit.plugins.shared_fixtures import read_fixture

CAPTURES = {"h100-80gb-hbm3-driver580": "2330", "h200-driver580": "2335"}
EVIDENCE = {"h100-80gb-hbm3-driver580": "module-gres_conf.txt", "h200-driver580": "module-playbook.txt"}


def _ids(kind):
    xml = re.findall(r"<pci_device_id>([0-9A-F]{8})</pci_device_id>", read_fixture(kind, "nvidia-smi-q.xml"))
    rows = list(csv.reader(io.StringIO(read_fixture(kind, "nvidia-smi-query-all.csv")), skipinitialspace=True))
    sysfs = [line.split()[2] for line in read_fixture(kind, "sysfs-nvidia.txt").splitlines() if line.split()[1] == "device"]
    return xml + [dict(zip(rows[0], rows[1]))["pci.device_id"]] + sysfs


@pytest.mark.parametrize("kind, device", CAPTURES.items())
def test_the_capture_spells_the_id_three_ways(kind, device):
    assert _ids(kind) == [device + "10DE", "0x%s10DE" % device, "0x" + device]


@pytest.mark.parametrize("device_id", [i for kind in CAPTURES for i in _ids(kind)])
def test_architecture(device_id):
    assert nvidia_gpu_architecture(device_id) == "hopper"


@pytest.mark.parametrize("kind", CAPTURES)
def test_kernel_modules(kind):
    assert nvidia_kernel_modules(_ids(kind)) == "open"


def test_matches_the_filter_run_on_the_machine():
    h100 = "h100-80gb-hbm3-driver580"
    assert "    msg:\n    - hopper\n" in read_fixture(h100, EVIDENCE[h100])
    evidence = read_fixture("h200-driver580", EVIDENCE["h200-driver580"])
    assert "        architectures:\n        - hopper\n        kernel_modules: open\n" in evidence
