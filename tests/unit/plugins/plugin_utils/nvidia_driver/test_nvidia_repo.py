# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where a host's packages sit in NVIDIA's CUDA repository (both the nvidia_driver and cuda roles)."""

from __future__ import annotations

import pytest

from ansible_collections.gpucluster.core.plugins.filter.nvidia_driver import FilterModule
from ansible_collections.gpucluster.core.plugins.plugin_utils.nvidia_driver._repo import cuda_repo_path


def facts(distribution, version, major, architecture="x86_64"):
    return {"distribution": distribution, "distribution_version": version,
            "distribution_major_version": major, "architecture": architecture}


@pytest.mark.parametrize("host, expected", [
    (facts("Debian", "12.8", "12"), "debian12/x86_64"),
    (facts("Debian", "13.1", "13"), "debian13/x86_64"),
    (facts("Ubuntu", "24.04", "24"), "ubuntu2404/x86_64"),
    (facts("Ubuntu", "22.04", "22", "aarch64"), "ubuntu2204/sbsa"),
    (facts("RedHat", "9.4", "9"), "rhel9/x86_64"),
    (facts("Rocky", "8.10", "8"), "rhel8/x86_64"),
    # Before preflight gathered the facts: empty, never an error.
    ({}, "/"),
])
def test_cuda_repo_path(host, expected):
    assert cuda_repo_path(host) == expected


def test_filter_is_registered():
    assert FilterModule().filters()["nvidia_cuda_repo_path"](facts("Debian", "12.8", "12")) == "debian12/x86_64"
