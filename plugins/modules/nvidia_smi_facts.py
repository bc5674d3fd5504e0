#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # pylint: disable=invalid-name

DOCUMENTATION = r"""
---
module: nvidia_smi_facts
short_description: Gather NVIDIA GPU facts from nvidia-smi and sysfs
version_added: 0.1.0
description:
  - Runs C(nvidia-smi -q -x) once (and C(nvidia-smi topo -m) once when O(topology=true)) and
    returns the driver, CUDA version and every GPU as the C(nvidia) fact.
  - Also lists the NVIDIA PCI devices found in C(/sys/bus/pci/devices) (vendor C(0x10de)), so
    that a bare machine without any driver can still be told apart from a CPU-only node, and
    NVSwitches (which need C(nvidia-fabricmanager)) can be detected.
  - Fields that nvidia-smi reports as C(N/A), C([N/A]), C(Not Supported) or
    C(Requested functionality has been deprecated) are returned as V(null).
  - When C(nvidia-smi) is not installed, the facts say so (C(driver_available=false))
    without failing, unless O(fail_on_missing=true).
  - When C(nvidia-smi) fails (driver/library version mismatch, no devices, NVML error), the module
    fails with the message nvidia-smi printed. Malformed XML fails with the parser's line and column.
author:
  - gpucluster.core developers (@gpucluster)
options:
  nvidia_smi_path:
    description:
      - Path to the C(nvidia-smi) binary.
      - By default it is looked up on E(PATH) (and C(/usr/bin), C(/usr/local/bin), C(/usr/local/nvidia/bin), C(/opt/nvidia/bin)).
    type: path
  topology:
    description:
      - Also run C(nvidia-smi topo -m) and return, per GPU, the CPU affinity, NUMA node and the link
        to every other GPU and NIC, plus the NIC legend.
    type: bool
    default: false
  fail_on_missing:
    description:
      - Fail when C(nvidia-smi) cannot be found, instead of reporting that there is no driver.
    type: bool
    default: false
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - ansible.builtin.action_common_attributes.facts
  - gpucluster.core.attributes.reads
  - gpucluster.core.attributes.facts
attributes:
  check_mode:
    details: Only reads; runs the same commands in check mode.
notes:
  - The GPU O(topology) matrix rows are matched to GPUs by C(GPU<index>), where index is the
    position of the GPU in C(nvidia-smi -q -x), which is nvidia-smi's own index order.
  - The device file of a GPU is C(/dev/nvidia<minor_number>); the minor number is not the index.
seealso:
  - module: gpucluster.core.gres_conf
  - module: gpucluster.core.ibstat_facts
"""

EXAMPLES = r"""
- name: Read the GPUs
  gpucluster.core.nvidia_smi_facts:

- name: Read the GPUs with their CPU/NUMA affinity and NVLink/PCIe topology
  gpucluster.core.nvidia_smi_facts:
    topology: true

- name: Stop on nodes that should have a driver but do not
  gpucluster.core.nvidia_smi_facts:
    fail_on_missing: true

- name: A bare node with NVIDIA GPUs but no driver yet
  ansible.builtin.debug:
    msg: "{{ ansible_facts.nvidia.pci.gpu_count }} NVIDIA GPUs, driver needed"
  when:
    - not ansible_facts.nvidia.driver_available
    - ansible_facts.nvidia.pci.gpu_count > 0
"""

RETURN = r"""
ansible_facts:
  description: Facts to add to ansible_facts.
  returned: always
  type: complex
  contains:
    nvidia:
      description: NVIDIA driver, GPUs and PCI devices of the host.
      returned: always
      type: complex
      contains:
        driver_available:
          description: Whether C(nvidia-smi) was found and ran successfully.
          type: bool
          returned: always
          sample: true
        nvidia_smi_path:
          description: The C(nvidia-smi) binary used, V(null) when none was found.
          type: str
          returned: always
          sample: /usr/bin/nvidia-smi
        driver_version:
          description: Driver version, V(null) without driver.
          type: str
          returned: always
          sample: "535.54.03"
        cuda_version:
          description: Highest CUDA version the driver supports, V(null) without driver.
          type: str
          returned: always
          sample: "12.2"
        attached_gpus:
          description: The C(attached_gpus) count nvidia-smi reports (may differ from C(gpu_count) in a trimmed capture).
          type: int
          returned: always
          sample: 8
        gpu_count:
          description: Number of GPUs listed by nvidia-smi (0 without driver).
          type: int
          returned: always
          sample: 8
        gpus:
          description:
            - One entry per GPU, in nvidia-smi index order.
            - Keys are C(index), C(minor_number), C(device_file) (C(/dev/nvidia<minor>)), C(uuid), C(name)
              (product name), C(brand), C(architecture), C(pci_bus_id), C(pci_device_id), C(memory_total_mib),
              C(persistence_mode), C(compute_mode), C(driver_model) (C(current)/C(pending)), C(ecc_mode)
              (C(current)/C(pending)), C(power_limit_w), C(default_power_limit_w), C(min_power_limit_w),
              C(max_power_limit_w), C(mig_mode) (C(current)/C(pending)), C(mig_devices), C(serial), C(vbios_version).
            - Each MIG device has C(index), C(gpu_instance_id), C(compute_instance_id), C(uuid), C(profile),
              C(multiprocessor_count) and C(memory_total_mib) (V(null) where nvidia-smi does not give them).
            - With O(topology=true) each GPU also has C(cpu_affinity) (list of CPU ids), C(numa_node) and
              C(links) (other GPU or NIC label to connection code such as C(NV18), C(PIX), C(PXB), C(PHB), C(NODE), C(SYS)).
          type: list
          elements: dict
          returned: always
          sample:
            - index: 0
              minor_number: 0
              device_file: /dev/nvidia0
              uuid: GPU-76098dc1-d3bc-9a1b-7ea6-f7b48837829e
              name: Tesla V100S-PCIE-32GB
              brand: Tesla
              architecture: null
              pci_bus_id: "00000000:00:0D.0"
              pci_device_id: 1DF610DE
              memory_total_mib: 32510
              persistence_mode: Disabled
              compute_mode: Default
              driver_model: {current: null, pending: null}
              ecc_mode: {current: Enabled, pending: Enabled}
              power_limit_w: 250.0
              default_power_limit_w: 250.0
              min_power_limit_w: 100.0
              max_power_limit_w: 250.0
              mig_mode: {current: null, pending: null}
              mig_devices: []
              serial: "1562920006088"
              vbios_version: 88.00.98.00.01
        pci:
          description:
            - NVIDIA PCI devices from sysfs, present with or without a driver.
            - C(gpus) are class C(0x0300xx)/C(0x0302xx) devices, C(nvswitches) class C(0x0680xx); each
              has C(pci_address), C(device_id), C(class), C(driver) (bound kernel driver or V(null)) and C(numa_node).
          type: dict
          returned: always
          sample:
            gpus: [{pci_address: "0000:17:00.0", device_id: "0x2330", class: "0x030200", driver: null, numa_node: 0}]
            gpu_count: 1
            nvswitches: []
            nvswitch_count: 0
            fabric_manager_required: false
        fabric_manager_required:
          description: NVSwitches were found on the PCI bus, so C(nvidia-fabricmanager) must run.
          type: bool
          returned: always
          sample: false
        nouveau_loaded:
          description: The nouveau kernel module is loaded (C(/sys/module/nouveau) exists); the NVIDIA driver cannot load beside it.
          type: bool
          returned: always
          sample: false
        topology:
          description:
            - The parsed C(nvidia-smi topo -m) matrix. C(columns) lists the device columns, C(devices) maps
              each row label (C(GPU0), C(NIC0)...) to C(links), C(cpu_affinity), C(numa_node) and any further
              column, C(nics) maps C(NICn) to its device name (e.g. C(mlx5_0)), C(legend) maps codes to meanings.
            - V(null) unless O(topology=true) and a driver is available.
          type: dict
          returned: always
          sample:
            columns: [GPU0]
            devices:
              GPU0: {links: {}, cpu_affinity: [0, 1, 2, 3], numa_node: 0, gpu_numa_id: null}
            nics: {}
            legend:
              X: Self
              "NV#": Connection traversing a bonded set of NVLinks
"""

import os

from ansible_collections.gpucluster.core.plugins.module_utils._facts import facts_main, find_program
from ansible_collections.gpucluster.core.plugins.module_utils._nvidia_smi import (
    NvidiaSmiError,
    command_error,
    merge_topology,
    parse_topology,
    parse_xml,
    scan_pci,
)

_SYSFS_ROOT = "/sys"  # unit tests point this at a fake tree
_EXTRA_DIRS = ["/usr/bin", "/usr/local/bin", "/usr/local/nvidia/bin", "/opt/nvidia/bin"]


def _empty_facts(path, pci, nouveau_loaded):
    return {
        "driver_available": False,
        "nvidia_smi_path": path,
        "driver_version": None,
        "cuda_version": None,
        "attached_gpus": 0,
        "gpu_count": 0,
        "gpus": [],
        "pci": pci,
        "fabric_manager_required": pci["fabric_manager_required"],
        "nouveau_loaded": nouveau_loaded,
        "topology": None,
    }


def gather(module, sysfs_root):
    """Return (facts, error message or None). sysfs_root is for tests only."""
    params = module.params
    pci = scan_pci(sysfs_root)
    nouveau = os.path.isdir(os.path.join(sysfs_root, "module", "nouveau"))

    path = find_program(module, params["nvidia_smi_path"], "nvidia-smi", _EXTRA_DIRS)
    if not path:
        if params["fail_on_missing"]:
            where = params["nvidia_smi_path"] or "PATH"
            return None, "nvidia-smi not found (looked in %s); no NVIDIA driver installed" % where
        return _empty_facts(None, pci, nouveau), None

    args = [path, "-q", "-x"]
    rc, out, err = module.run_command(args, environ_update={"LC_ALL": "C"})
    if rc != 0:
        return None, command_error(args, rc, out, err)
    try:
        parsed = parse_xml(out)
    except NvidiaSmiError as exc:
        return None, str(exc)

    facts = _empty_facts(path, pci, nouveau)
    facts.update(parsed)
    facts["driver_available"] = True

    if params["topology"]:
        targs = [path, "topo", "-m"]
        rc, out, err = module.run_command(targs, environ_update={"LC_ALL": "C"})
        if rc != 0:
            return None, command_error(targs, rc, out, err)
        try:
            merge_topology(facts, parse_topology(out))
        except NvidiaSmiError as exc:
            return None, str(exc)
    return facts, None


def main():
    argument_spec = dict(
        nvidia_smi_path=dict(type="path"),
        topology=dict(type="bool", default=False),
        fail_on_missing=dict(type="bool", default=False),
    )
    facts_main(argument_spec, gather, "nvidia", _SYSFS_ROOT)


if __name__ == "__main__":
    main()
