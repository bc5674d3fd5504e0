# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where a host's packages sit in NVIDIA's CUDA repository (controller side, pure): the
<distro>/<arch> part of https://developer.download.nvidia.com/compute/cuda/repos/<distro>/<arch>/,
which the nvidia_driver and cuda roles both write as the `cuda` source."""

from __future__ import annotations

from typing import Any, Mapping


def cuda_repo_path(facts: Mapping[str, Any]) -> str:
    """``<distro>/<arch>`` from a host's facts: ``debian12/x86_64``, ``ubuntu2404/sbsa``, ``rhel9/x86_64``.

    NVIDIA names Ubuntu by its full version without the dot, every other distribution by its
    major version; RHEL and Rocky both use ``rhel``; aarch64 servers are ``sbsa``. A fact that
    is missing (before preflight gathered them) counts as empty."""
    distribution = str(facts.get("distribution", ""))
    name = distribution.lower().replace("redhat", "rhel").replace("rocky", "rhel")
    if distribution == "Ubuntu":
        version = str(facts.get("distribution_version", "")).replace(".", "")
    else:
        version = str(facts.get("distribution_major_version", ""))
    architecture = str(facts.get("architecture", ""))
    return "%s%s/%s" % (name, version, "sbsa" if architecture == "aarch64" else architecture)
