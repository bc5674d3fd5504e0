# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""nvidia_gpu_architecture / nvidia_kernel_modules against the real captures."""

from __future__ import annotations

import csv
import io
import re

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpucluster.core.plugins.filter.nvidia_driver import (
    nvidia_gpu_architecture,
    nvidia_kernel_modules,
)
from ansible_collections.gpucluster.core.tests.unit.plugins.shared_fixtures import list_fixtures, read_fixture

# nvidia-smi's own names, and the compute capability each architecture has.
XML_NAMES = {"Turing": "turing", "Ampere": "ampere", "Ada Lovelace": "ada", "Hopper": "hopper", "Blackwell": "blackwell"}
COMPUTE_CAP = {"7.0": "volta", "7.5": "turing", "8.0": "ampere", "8.6": "ampere", "8.7": "ampere", "8.9": "ada",
               "9.0": "hopper", "10.0": "blackwell", "12.0": "blackwell"}


def _xml_cases():
    for name in list_fixtures("nvidia-smi-xml"):
        text = read_fixture("nvidia-smi-xml", name)
        ids = re.findall(r"<pci_device_id>([0-9A-Fa-f]{8})</pci_device_id>", text)
        archs = re.findall(r"<product_architecture>([^<]+)</product_architecture>", text)
        if ids and archs and archs[0] in XML_NAMES and not ids[0].startswith("0000"):
            yield pytest.param(ids[0], XML_NAMES[archs[0]], id=name)


def _csv_cases():
    for name in list_fixtures("nvidia-smi-csv"):
        if not name.endswith(".csv"):
            continue
        rows = list(csv.DictReader(io.StringIO(read_fixture("nvidia-smi-csv", name)), skipinitialspace=True))
        for row in rows:
            yield pytest.param(row["pci.device_id"], COMPUTE_CAP[row["compute_cap"]], id=name)


@pytest.mark.parametrize("device_id, expected", list(_xml_cases()) + list(_csv_cases()))
def test_architecture_agrees_with_nvidia_smi(device_id, expected):
    assert nvidia_gpu_architecture(device_id) == expected


def test_every_capture_kind_is_covered():
    found = set(p.values[1] for p in list(_xml_cases()) + list(_csv_cases()))
    assert found >= {"turing", "ampere", "ada", "hopper", "blackwell"}


@pytest.mark.parametrize("device_id, expected", [
    ("0x1db4", "volta"), ("1DF6", "volta"), (0x15F8, "pascal"), ("0x1b06", "pascal"), ("0x13c2", "maxwell"),
    ("0x2184", "turing"), ("0x20b2", "ampere"), ("0x2342", "hopper"), ("0x2901", "blackwell"), ("0x3100", "blackwell"),
])
def test_architecture_blocks(device_id, expected):
    assert nvidia_gpu_architecture(device_id) == expected


@pytest.mark.parametrize("device_id, message", [
    ("0x0ff2", "nvidia_gpu_architecture: PCI device ID 0x0ff2 is older than Maxwell or not an NVIDIA GPU: "
               "current drivers do not support it"),
    ("0x12345", "nvidia_gpu_architecture: PCI device ID '0x12345' is not a 16-bit hex number"),
    ("gpu", "nvidia_gpu_architecture: PCI device ID 'gpu' is not a 16-bit hex number"),
    (True, "nvidia_gpu_architecture: PCI device ID must be hex text or an integer, got True"),
    (None, "nvidia_gpu_architecture: PCI device ID must be hex text or an integer, got None"),
])
def test_architecture_errors(device_id, message):
    with pytest.raises(AnsibleFilterError) as exc:
        nvidia_gpu_architecture(device_id)
    assert str(exc.value) == message


@pytest.mark.parametrize("ids, requested, expected", [
    (["0x2330"] * 8, "auto", "open"),
    (["0x1df6"] * 8, "auto", "proprietary"),
    (["0x1eb8", "0x1df6"], "auto", "proprietary"),
    (["0x2bb4"], "auto", "open"),
    (["0x2bb4", "0x2330"], "open", "open"),
    (["0x2330"], "proprietary", "proprietary"),
    ([], "auto", "open"),
])
def test_kernel_modules(ids, requested, expected):
    assert nvidia_kernel_modules(ids, requested) == expected


@pytest.mark.parametrize("ids, requested, message", [
    (["0x2bb4", "0x1df6"], "auto", "this host mixes GPUs that need the open kernel modules (blackwell) with GPUs "
                                   "that need the proprietary ones (volta): no single driver serves both"),
    (["0x1df6", "0x15f8"], "open", "open kernel modules were asked for, but pascal, volta GPUs need the proprietary ones"),
    (["0x2bb4"], "proprietary", "proprietary kernel modules were asked for, but blackwell GPUs need the open ones"),
    (["0x2330"], "closed", "kernel module flavour must be one of auto, open, proprietary, got 'closed'"),
])
def test_kernel_modules_errors(ids, requested, message):
    with pytest.raises(AnsibleFilterError) as exc:
        nvidia_kernel_modules(ids, requested)
    assert str(exc.value) == "nvidia_kernel_modules: " + message


def test_kernel_modules_needs_a_list():
    with pytest.raises(AnsibleFilterError) as exc:
        nvidia_kernel_modules("0x2330")
    assert str(exc.value) == "nvidia_kernel_modules: expected a list of PCI device IDs, got '0x2330'"


def test_the_driver_plans_are_filters():
    from ansible_collections.gpucluster.core.plugins.filter.nvidia_driver import FilterModule

    filters = FilterModule().filters()
    assert filters["nvidia_driver_device_ids"]({"pci": {"gpu_count": 1, "gpus": [{"device_id": "0x2330"}]}}) == ["0x2330"]
    with pytest.raises(AnsibleFilterError, match=r"^nvidia_driver_artifacts: the input is not of the expected shape"
                                                 r" \(KeyError: 'known'\)$"):
        filters["nvidia_driver_artifacts"]({})
