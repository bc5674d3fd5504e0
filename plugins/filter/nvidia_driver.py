# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The nvidia_driver filters (each documented in plugins/filter/<filter>.yml); the logic lives in
plugins/plugin_utils/nvidia_driver/."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError
from ansible.module_utils.common.text.converters import to_native

from ansible_collections.gpucluster.core.plugins.module_utils._gpu_arch import (
    GpuArchError,
    architecture,
    kernel_module_flavour,
)
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._filter import as_filters
from ansible_collections.gpucluster.core.plugins.plugin_utils.nvidia_driver._plan import artifacts, device_ids
from ansible_collections.gpucluster.core.plugins.plugin_utils.nvidia_driver._reboot import reboot_reasons
from ansible_collections.gpucluster.core.plugins.plugin_utils.nvidia_driver._repo import cuda_repo_path


def nvidia_gpu_architecture(device_id):
    """Architecture (maxwell .. blackwell) of an NVIDIA PCI device ID."""
    try:
        return architecture(device_id)
    except GpuArchError as exc:
        raise AnsibleFilterError("nvidia_gpu_architecture: %s" % to_native(exc))


def nvidia_kernel_modules(device_ids, requested="auto"):
    """open or proprietary kernel modules for a host's GPUs (list of PCI device IDs)."""
    if isinstance(device_ids, (str, bytes)) or not isinstance(device_ids, (list, tuple)):
        raise AnsibleFilterError("nvidia_kernel_modules: expected a list of PCI device IDs, got %r" % (device_ids,))
    try:
        return kernel_module_flavour(list(device_ids), requested)
    except GpuArchError as exc:
        raise AnsibleFilterError("nvidia_kernel_modules: %s" % to_native(exc))


class FilterModule:
    """The nvidia_driver filters."""

    def filters(self):
        return {
            **as_filters({
                "nvidia_cuda_repo_path": cuda_repo_path,
                "nvidia_driver_reboot_reasons": reboot_reasons,
                "nvidia_driver_device_ids": device_ids,
                "nvidia_driver_artifacts": artifacts,
            }),
            "nvidia_gpu_architecture": nvidia_gpu_architecture,
            "nvidia_kernel_modules": nvidia_kernel_modules,
        }
