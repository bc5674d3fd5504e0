# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the nvidia_driver role derives for a host (controller side, pure, no Ansible imports): the
PCI device IDs of its GPUs, and its record for playbooks/artifacts.yml.

The artifact record's input is a dict the role's tasks/artifacts.yml builds. Ansible hands a filter
a lazy dict, whose values are worked out when read: what depends on the GPUs (the chosen kernel
module flavour, the fabric manager) is read only where the hardware is known and a driver goes on."""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional

FLAVOURS = ("open", "proprietary")


def device_ids(nvidia: Optional[Mapping[str, Any]]) -> List[str]:
    """The GPUs' PCI device IDs from the ``nvidia`` facts of gpucluster.core.nvidia_smi_facts: from
    the PCI scan (no driver needed), else, where a driver answers, from nvidia-smi; empty where the
    facts are missing."""
    nvidia = nvidia or {}
    pci = nvidia.get("pci") or {}
    if (pci.get("gpu_count") or 0) > 0:
        return [gpu["device_id"] for gpu in pci["gpus"]]
    return [gpu["pci_device_id"] for gpu in nvidia.get("gpus") or []]


def artifacts(plan: Mapping[str, Any]) -> Dict[str, Any]:
    """The role's record for playbooks/artifacts.yml on one host.

    Where the GPUs are known (``known``), the driver goes on as the install decides (``wanted``),
    with its kernel module flavour (``flavour``) and the fabric manager where it decides so
    (``fabricmanager``). Where they are known nowhere, the driver goes on unless ``install`` is
    false, with the packages of both flavours where ``kernel_modules`` is auto and the fabric
    manager unless ``fabricmanager_setting`` is false, each with a warning.

    The packages (of ``packages_by_flavour``, at ``install_version``; the fabric manager
    ``fabricmanager_package`` at ``fabricmanager_version``) go into ``repository`` (with ``pins``
    on apt, ``pkg_mgr``) from NVIDIA's repository (``source`` cuda_repo), else into the
    distribution's packages, with ``initramfs_package`` (``nouveau_blacklist``) and
    ``headers_package`` (``kernel_headers``)."""
    known = bool(plan["known"])
    wanted = bool(plan["wanted"]) if known else plan["install"] is not False
    if not wanted:
        flavours: List[str] = []
    elif known:
        flavours = [plan["flavour"]]
    elif plan["kernel_modules"] == "auto":
        flavours = list(FLAVOURS)
    else:
        flavours = [plan["kernel_modules"]]
    fabricmanager = wanted and (bool(plan["fabricmanager"]) if known else plan["fabricmanager_setting"] is not False)
    by_flavour = plan["packages_by_flavour"]
    names = list(dict.fromkeys(name for flavour in flavours for name in by_flavour[flavour]))
    packages = [{"name": name, "version": plan["install_version"]} for name in names]
    if fabricmanager:
        packages.append({"name": plan["fabricmanager_package"], "version": plan["fabricmanager_version"]})
    from_repo = plan["source"] == "cuda_repo"
    repositories = []
    if wanted and from_repo:
        pins = list(plan["pins"]) if plan["pkg_mgr"] == "apt" else []
        repositories.append(dict(plan["repository"], packages=packages, pins=pins))
    distribution = [] if from_repo else [package["name"] for package in packages]
    if wanted and plan["nouveau_blacklist"]:
        distribution.append(plan["initramfs_package"])
    if wanted and plan["kernel_headers"]:
        distribution.append(plan["headers_package"])
    warnings = []
    if len(flavours) > 1:
        warnings.append("GPU hardware unknown: the packages of both kernel module flavours are listed")
    if not known and plan["fabricmanager_setting"] == "auto" and wanted:
        warnings.append("GPU hardware unknown: the fabric manager is listed (nvidia_driver_fabricmanager auto)")
    if not wanted:
        warnings.append("no driver is installed here (nvidia_driver_install: %s, NVIDIA GPUs found: %d)"
                        % (plan["install"], len(plan["device_ids"])))
    return {"role": "nvidia_driver", "supported": bool(plan["supported"]), "repositories": repositories,
            "distribution_packages": distribution, "warnings": warnings}
