#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # pylint: disable=invalid-name

DOCUMENTATION = r"""
---
module: node_health
short_description: Run a GPU node's passive health checks against what is expected of it
version_added: 0.1.0
description:
  - Reads the node in seconds, safe on a busy node (nothing is loaded, no GPU is touched beyond C(nvidia-smi -q -x)),
    and judges each check against the expectations given, which say where they came from.
  - "Checks, in report order: C(gpu_count), C(gpu_model), C(driver_version) (the running driver against the pin),
    C(cuda_version) (the default toolkit against the pin), C(persistence_mode) (or C(nvidia-persistenced) running),
    C(ecc_mode) (on, and no change pending a reset), C(ecc_errors) (uncorrectable since the driver loaded),
    C(retired_pages) (pending retirement), C(row_remap) (failed or pending), C(pcie_link) (narrower than the
    device's maximum; a lower generation only counts while the GPU is busy), C(clock_events) (hardware, thermal or
    power-brake slowdown), C(xid) (XIDs that need action in the kernel log window), C(hca_ports) (Active at the
    expected rate), C(mounts) (the shared file systems mounted), C(services) (running), C(time_sync) (the clock
    synchronized: C(chronyc -n tracking), else C(timedatectl)'s NTPSynchronized; off by more than I(expected.time_sync.max_offset)
    or not synchronized warns, off by more than its C(fail_offset) fails) and C(disk_space) (free space on the file
    systems of I(expected.disk_space.paths), read with statvfs; a path that does not exist is left out)."
  - Each result is C(pass), C(warn), C(fail) or C(skip) (nothing to judge, or turned off by I(severity)).
    The module itself never fails on a bad node; it fails only when its input is unusable.
  - "A tool that cannot run (not found, not executable, the driver not answering, output that does not parse) is a tooling
    fault, never a hardware verdict: its check warns with the command's own words (never C(0) GPUs or a port down) and
    the checks that need its output skip. Whole C(nvidia-smi -q -x) XML is judged whatever nvidia-smi's exit code."
  - The same checks run as Slurm's C(HealthCheckProgram) through the validation role's C(gpucluster-healthcheck).
author:
  - gpucluster.core developers (@gpucluster)
options:
  expected:
    description:
      - What the node should show. Keys (all optional) C(gpu_count), C(gpu_model), C(driver_version),
        C(cuda_version) (each a dict with C(value) and C(source)); C(gpu_count) with value 0 makes the GPU checks skip.
      - C(hca) (dict with C(rate_gbps) (0 or null means the fastest active port of the node), C(link_layers)
        (default C([InfiniBand])), C(ignore) (CA or CA:port names), C(count), C(source)); C(mounts) (list of dicts
        with C(path), C(fstype) (default a type starting with C(nfs)), C(source)); C(services) (unit names);
        C(xid_codes) (XIDs that need action); C(severity) (check name to C(fail), C(warn) or C(skip)).
      - C(time_sync) (dict with C(max_offset) (seconds, default 0.5), C(fail_offset) (seconds, default 60), C(source));
        C(disk_space) (dict with C(paths) (list), C(min_free_percent) (default 5), C(min_free_bytes) (default 0), C(source)).
        Each is judged only when given.
    type: dict
    required: true
  nvidia_smi_path:
    description: C(nvidia-smi) to run.
    type: str
    default: nvidia-smi
  cuda_home:
    description: The default CUDA toolkit's directory (its C(version.json), else C(bin/nvcc), tells the version).
    type: path
    default: /usr/local/cuda
  ibstat_path:
    description: C(ibstat) to run for the HCA check; empty reads C(/sys/class/infiniband) instead.
    type: str
    default: ""
  kernel_log_minutes:
    description: How far back the kernel log is searched for XIDs (C(journalctl --dmesg), else the whole C(dmesg)).
    type: int
    default: 60
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - gpucluster.core.attributes.reads
seealso:
  - module: gpucluster.core.nvidia_smi_facts
  - module: gpucluster.core.ibstat_facts
"""

EXAMPLES = r"""
- name: Check the node against its Slurm definition and the pins
  gpucluster.core.node_health:
    expected:
      gpu_count: {value: 8, source: "Slurm (gres/gpu=8)"}
      driver_version: {value: "550.54.15", source: nvidia_driver_version}
      hca: {rate_gbps: 400, source: "NDR, validation_hca_rate_gbps"}
      mounts: [{path: /data/shared, source: nfs_mounts}]
      services: [slurmd, docker]
      time_sync: {max_offset: 0.5, fail_offset: 60, source: validation_time_max_offset}
      disk_space: {paths: [/var, /tmp], min_free_percent: 5, source: validation_disk_space_paths}
  register: health

- name: Show what failed
  ansible.builtin.debug:
    msg: "{{ health.checks | selectattr('status', 'eq', 'fail') | map(attribute='message') }}"
"""

RETURN = r"""
verdict:
  description: C(fail) when a check failed, else C(warn) when one warned, else C(pass).
  returned: always
  type: str
  sample: fail
checks:
  description: One result per check, in report order.
  returned: always
  type: list
  elements: dict
  contains:
    check: {description: The check's name., type: str, sample: gpu_count}
    kind: {description: Always C(passive)., type: str}
    status: {description: "C(pass), C(warn), C(fail) or C(skip).", type: str}
    measured: {description: What the node showed., type: raw, sample: 7}
    expected: {description: What was expected., type: raw, sample: 8}
    unit: {description: "The unit of measured and expected, or null.", type: str}
    source: {description: Where the expectation came from., type: str, sample: "Slurm (gres/gpu=8)"}
    message: {description: One sentence for the report., type: str, sample: "7 GPUs answer nvidia-smi, 8 expected"}
    tooling:
      description: C(true) on a check whose tool could not run (it warns with the tool's own words and measures nothing)
        and on the checks left unjudged for it (they skip). Absent otherwise.
      type: bool
      returned: when a tool could not run
  sample:
    - check: gpu_count
      kind: passive
      status: fail
      measured: 7
      expected: 8
      unit: null
      source: "Slurm (gres/gpu=8)"
      message: "7 GPUs answer nvidia-smi, 8 expected"
hardware:
  description: What bandwidth expectations (and the GPU container check) are derived from.
  returned: always
  type: dict
  contains:
    gpu_count: {description: GPUs that answer nvidia-smi., type: int}
    gpu_names: {description: Their product names., type: list, elements: str}
    gpu_uuids: {description: Their UUIDs (what a GPU container must see)., type: list, elements: str}
    architecture: {description: Their architecture (C(Hopper)) when they share one., type: str}
    pcie_max_gen: {description: The highest PCIe generation a GPU's link supports., type: int}
    ibstat: {description: "The HCAs as read (the ibstat_facts layout) when I(expected.hca) was given, else null.", type: dict}
  sample: {gpu_count: 1, gpu_names: [NVIDIA H100 80GB HBM3], gpu_uuids: [GPU-232c00c4-60d0-5fdb-a8f5-d8949845a9bb],
           architecture: Hopper, pcie_max_gen: 5, ibstat: null}
"""

import os

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gpucluster.core.plugins.module_utils._health import (
    HealthError,
    collect,
    disk_usage,
    evaluate,
    hardware,
    verdict,
)
from ansible_collections.gpucluster.core.plugins.module_utils._sysfs import read_file

_read = read_file  # unit tests replace them
_disk = disk_usage


def _runner(module):
    def run(argv):
        program = argv[0]
        if not os.path.isabs(program):
            program = module.get_bin_path(program, opt_dirs=["/usr/sbin", "/sbin", "/usr/local/bin"])
        if not program or not os.access(program, os.X_OK):
            return 127, "", "%s: not found" % argv[0]
        rc, out, err = module.run_command([program] + list(argv[1:]), environ_update={"LC_ALL": "C"})
        return rc, out, err
    return run


def main():
    module = AnsibleModule(
        argument_spec=dict(
            expected=dict(type="dict", required=True),
            nvidia_smi_path=dict(type="str", default="nvidia-smi"),
            cuda_home=dict(type="path", default="/usr/local/cuda"),
            ibstat_path=dict(type="str", default=""),
            kernel_log_minutes=dict(type="int", default=60),
        ),
        supports_check_mode=True,
    )
    params = module.params
    settings = {
        "nvidia_smi": params["nvidia_smi_path"],
        "cuda_home": params["cuda_home"],
        "ibstat": params["ibstat_path"],
        "kernel_log_minutes": params["kernel_log_minutes"],
    }
    try:
        observed = collect(_runner(module), _read, settings, params["expected"], disk=_disk)
        checks = evaluate(observed, params["expected"])
    except HealthError as exc:
        module.fail_json(msg="expected: %s" % exc)
    module.exit_json(changed=False, verdict=verdict(checks), checks=checks, hardware=hardware(observed))


if __name__ == "__main__":
    main()
