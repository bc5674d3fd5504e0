# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""nvidia_gpu_architecture / nvidia_kernel_modules over our own H100 capture (driver 580).

The capture spells the one PCI device ID three ways: XML <pci_device_id> 233010DE, CSV
pci.device_id 0x233010DE and sysfs device 0x2330; each must read as hopper.
"""

from __future__ import annotations

import csv
import io
import re

import pytest

from ansible_collections.gpucluster.core.plugins.filter.nvidia_gpu import (
    nvidia_gpu_architecture,
    nvidia_kernel_modules,
)
from ansible_collections.gpucluster.core.tests.unit.plugins.shared_fixtures import read_fixture

KIND = "h100-80gb-hbm3-driver580"


def _ids():
    xml = re.findall(r"<pci_device_id>([0-9A-F]{8})</pci_device_id>", read_fixture(KIND, "nvidia-smi-q.xml"))
    rows = list(csv.reader(io.StringIO(read_fixture(KIND, "nvidia-smi-query-all.csv")), skipinitialspace=True))
    sysfs = [line.split()[2] for line in read_fixture(KIND, "sysfs-nvidia.txt").splitlines() if line.split()[1] == "device"]
    return xml + [dict(zip(rows[0], rows[1]))["pci.device_id"]] + sysfs


def test_the_capture_spells_the_id_three_ways():
    assert _ids() == ["233010DE", "0x233010DE", "0x2330"]


@pytest.mark.parametrize("device_id", _ids())
def test_architecture(device_id):
    assert nvidia_gpu_architecture(device_id) == "hopper"


def test_kernel_modules():
    assert nvidia_kernel_modules(_ids()) == "open"


def test_matches_the_filter_run_on_the_machine():
    assert "    msg:\n    - hopper\n" in read_fixture(KIND, "module-gres_conf.txt")
