# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The nvidia_driver role's derived data: the GPUs' device IDs from its facts, and what it downloads on
a host (the artifact list), where the hardware is known and where it is not."""

from __future__ import annotations

import pytest

from ansible_collections.gpucluster.core.plugins.plugin_utils.nvidia_driver._plan import artifacts, device_ids
from ansible_collections.gpucluster.core.tests.unit.plugins.plugin_utils.lazy_input import UNREAD, Unread


@pytest.mark.parametrize("nvidia, expected", [
    pytest.param({"pci": {"gpus": [{"device_id": "0x2330"}, {"device_id": "0x2331"}], "gpu_count": 2},
                  "gpus": [{"pci_device_id": "0x1df6"}]}, ["0x2330", "0x2331"], id="pci-first"),
    pytest.param({"pci": {"gpus": [], "gpu_count": 0}, "gpus": [{"pci_device_id": "0x1df6"}]}, ["0x1df6"], id="smi"),
    pytest.param({"pci": {"gpus": [], "gpu_count": 0}, "gpus": []}, [], id="no-gpu"),
    pytest.param({}, [], id="empty"),
    pytest.param(None, [], id="unknown"),
])
def test_device_ids(nvidia, expected):
    assert device_ids(nvidia) == expected


VERSION = "550.54.15-1"
REPOSITORY = {"name": "cuda", "description": "NVIDIA CUDA", "url": "https://example.com/cuda/debian12/x86_64/",
              "key_url": "https://example.com/cuda/debian12/x86_64/3bf863cc.pub"}
PINS = [{"name": "cuda-drivers*", "version": VERSION}]
BY_FLAVOUR = {"open": ["cuda-drivers-550", "nvidia-kernel-open-dkms"], "proprietary": ["cuda-drivers-550", "nvidia-kernel-dkms"]}


def host(known=True, wanted=True, flavour="open", fabricmanager=False, install="auto", kernel_modules="auto",
         fabricmanager_setting="auto", source="cuda_repo", pkg_mgr="apt", device_ids_=("0x2330",)):
    gpus = known and wanted
    return Unread(supported=True, known=known, device_ids=list(device_ids_), wanted=wanted if known else UNREAD,
                  flavour=flavour if gpus else UNREAD, fabricmanager=fabricmanager if gpus else UNREAD,
                  install=install, kernel_modules=kernel_modules, fabricmanager_setting=fabricmanager_setting,
                  source=source, nouveau_blacklist=True, kernel_headers=True,
                  packages_by_flavour=BY_FLAVOUR if source == "cuda_repo" else
                  {"open": ["nvidia-driver-550-server-open"], "proprietary": ["nvidia-driver-550-server"]},
                  install_version=VERSION if source == "cuda_repo" else "", fabricmanager_package="nvidia-fabricmanager-550",
                  fabricmanager_version=VERSION, repository=REPOSITORY, pins=PINS, pkg_mgr=pkg_mgr,
                  initramfs_package="initramfs-tools", headers_package="linux-headers-6.1.0-28-amd64")


def record(repositories=(), distribution=("initramfs-tools", "linux-headers-6.1.0-28-amd64"), warnings=()):
    return {"role": "nvidia_driver", "supported": True, "repositories": list(repositories),
            "distribution_packages": list(distribution), "warnings": list(warnings)}


OPEN = [{"name": "cuda-drivers-550", "version": VERSION}, {"name": "nvidia-kernel-open-dkms", "version": VERSION}]
FABRICMANAGER = {"name": "nvidia-fabricmanager-550", "version": VERSION}


@pytest.mark.parametrize("given, expected", [
    pytest.param(host(), record([dict(REPOSITORY, packages=OPEN, pins=PINS)]), id="known-open"),
    pytest.param(host(flavour="proprietary", fabricmanager=True),
                 record([dict(REPOSITORY, packages=[{"name": "cuda-drivers-550", "version": VERSION},
                                                    {"name": "nvidia-kernel-dkms", "version": VERSION}, FABRICMANAGER],
                              pins=PINS)]), id="known-proprietary-nvswitch"),
    # dnf: the module stream, no apt pins.
    pytest.param(host(pkg_mgr="dnf"), record([dict(REPOSITORY, packages=OPEN, pins=[])]), id="dnf"),
    pytest.param(host(source="distribution"),
                 record(distribution=["nvidia-driver-550-server-open", "initramfs-tools", "linux-headers-6.1.0-28-amd64"]),
                 id="distribution"),
    pytest.param(host(wanted=False, install="auto", device_ids_=()),
                 record(distribution=[], warnings=["no driver is installed here (nvidia_driver_install: auto, NVIDIA GPUs"
                                                   " found: 0)"]), id="known-no-gpu"),
    # Known nowhere: both flavours (auto) and the fabric manager (auto), each said.
    pytest.param(host(known=False, device_ids_=()),
                 record([dict(REPOSITORY, packages=[{"name": "cuda-drivers-550", "version": VERSION},
                                                    {"name": "nvidia-kernel-open-dkms", "version": VERSION},
                                                    {"name": "nvidia-kernel-dkms", "version": VERSION}, FABRICMANAGER],
                              pins=PINS)],
                        warnings=["GPU hardware unknown: the packages of both kernel module flavours are listed",
                                  "GPU hardware unknown: the fabric manager is listed (nvidia_driver_fabricmanager auto)"]),
                 id="unknown-auto"),
    pytest.param(host(known=False, kernel_modules="open", fabricmanager_setting=False, device_ids_=()),
                 record([dict(REPOSITORY, packages=OPEN, pins=PINS)]), id="unknown-set"),
    pytest.param(host(known=False, install=False, device_ids_=()),
                 record(distribution=[], warnings=["no driver is installed here (nvidia_driver_install: False, NVIDIA GPUs"
                                                   " found: 0)"]), id="unknown-off"),
])
def test_artifacts(given, expected):
    assert artifacts(given) == expected
