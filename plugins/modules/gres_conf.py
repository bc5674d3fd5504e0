#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # pylint: disable=invalid-name

DOCUMENTATION = r"""
---
module: gres_conf
short_description: Write Slurm's gres.conf from the nvidia facts
version_added: 0.1.0
description:
  - Writes Slurm's C(gres.conf) for the GPUs in the facts gathered by M(gpucluster.core.nvidia_smi_facts),
    with one C(Name=gpu Type=<type> File=/dev/nvidia<minor> Cores=<cores>) line per GPU (optionally with C(Links=)),
    one C(MultipleFiles=) line per MIG device, or C(AutoDetect=nvml).
  - Returns the matching C(Gres=) string for the node's line in C(slurm.conf), for example
    C(gpu:nvidia_h100_80gb_hbm3:8). The type in C(gres.conf) and in C(slurm.conf) must be the same,
    otherwise Slurm ignores the GPUs.
  - Type names follow Slurm's own NVML autodetect rule by default, so autodetected and written nodes can
    be mixed in one cluster. Slurm's function C(gpu_common_underscorify_tolower) lowercases the NVML device name
    and turns each space into an underscore, keeping hyphens and dots
    (C(NVIDIA H100 80GB HBM3) gives C(nvidia_h100_80gb_hbm3), C(Tesla V100S-PCIE-32GB) gives
    C(tesla_v100s-pcie-32gb)); MIG devices get C(<gpu type>_<profile>), for example C(nvidia_h100_80gb_hbm3_1g.10gb).
  - Validates before it writes; the error names the problem. Checks the GPU count against O(expected_gpus),
    that each GPU has a device file, that no device is listed twice, that the C(Cores=) lie inside the node,
    and, with O(check_devices=true), that the device files exist.
  - GPUs are never compressed into C(File=/dev/nvidia[0-3]); one line per GPU keeps each GPU's C(Cores=) and
    C(Links=) and makes a diff show exactly which GPU changed.
  - Writes atomically and only when the content differs; supports check and diff mode and O(backup).
author:
  - gpucluster.core developers (@gpucluster)
options:
  nvidia:
    description:
      - The C(nvidia) facts from M(gpucluster.core.nvidia_smi_facts), normally V({{ ansible_facts.nvidia }}).
      - C(Cores=) and C(Links=) need the facts gathered with C(topology=true).
    type: dict
    required: true
  dest:
    description: Path of the gres.conf to write.
    type: path
    default: /etc/slurm/gres.conf
  write:
    description:
      - V(false) writes nothing and reports no change; RV(lines) and RV(gres) are still computed and
        checked. For a gres.conf assembled from every node's lines (C(NodeName=) lines on the controller,
        as configless clusters need).
    type: bool
    default: true
  autodetect:
    description:
      - V(none) writes one line per GPU or MIG device.
      - V(nvml) writes C(AutoDetect=nvml) and lets slurmd find the GPUs; RV(gres) is still computed from the facts.
    type: str
    choices: [none, nvml]
    default: none
  type_style:
    description:
      - How the GRES type is derived from the product name when O(type_map) has no entry.
      - V(nvml) is Slurm's autodetect naming (C(nvidia_a100-sxm4-80gb)).
      - V(short) drops vendor words and keeps the model (C(NVIDIA A100-SXM4-80GB) gives C(a100),
        C(NVIDIA GeForce RTX 3080) gives C(rtx3080)).
      - V(none) writes untyped GPUs (C(Gres=gpu:8)).
    type: str
    choices: [nvml, short, none]
    default: nvml
  type_map:
    description:
      - Explicit types, keyed by product name (C(NVIDIA H100 80GB HBM3)) or by its NVML type name
        (C(nvidia_h100_80gb_hbm3)). Wins over O(type_style).
      - When the map is not empty, a GPU whose product name and NVML type name it does not hold is refused
        (the module fails naming both), rather than given a type derived from O(type_style).
    type: dict
    default: {}
  cores:
    description:
      - Add C(Cores=) from each GPU's CPU affinity. Slurm wants logical core indices, so CPU ids are turned
        into cores with the CPU topology in C(/sys/devices/system/cpu) (hyper-thread siblings share a core).
    type: bool
    default: true
  node_cores:
    description:
      - Number of cores Slurm sees on this node (C(Sockets) x C(CoresPerSocket)). When set, C(Cores=) outside
        C(0..node_cores-1) fail.
    type: int
  links:
    description:
      - Add C(Links=) from the NVLink matrix (C(-1) for the GPU itself, the NVLink count, or C(0)).
    type: bool
    default: false
  expected_gpus:
    description: Fail unless the facts list exactly this many GPUs.
    type: int
  check_devices:
    description: Fail when a device file named in gres.conf does not exist on the node.
    type: bool
    default: false
  extra_lines:
    description: Further gres.conf lines (for example non-GPU GRES) appended as they are.
    type: list
    elements: str
    default: []
  header:
    description: Comment written at the top of the file, each line prefixed with C(#).
    type: str
    default: "Ansible managed: gpucluster.core.gres_conf. Local changes will be overwritten."
  backup:
    description: Keep a timestamped copy of the old file when it changes.
    type: bool
    default: false
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - ansible.builtin.files
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
  platform:
    platforms: posix
notes:
  - MIG GPUs need the MIG profile name of each device; nvidia-smi C(-q -x) of older drivers does not give it,
    in which case the module fails and asks for O(autodetect=nvml).
seealso:
  - module: gpucluster.core.nvidia_smi_facts
  - name: Slurm gres.conf
    description: Slurm's gres.conf reference.
    link: https://slurm.schedmd.com/gres.conf.html
"""

EXAMPLES = r"""
- name: Read the GPUs and their topology
  gpucluster.core.nvidia_smi_facts:
    topology: true

- name: Write gres.conf
  gpucluster.core.gres_conf:
    nvidia: "{{ ansible_facts.nvidia }}"
    expected_gpus: 8
    links: true
    check_devices: true
    owner: root
    group: root
    mode: "0644"
    backup: true
  register: gres

- name: Use the matching Gres= in slurm.conf
  ansible.builtin.set_fact:
    slurm_node_gres: "{{ gres.gres }}"

- name: Let slurmd detect the GPUs, still get the Gres= string
  gpucluster.core.gres_conf:
    nvidia: "{{ ansible_facts.nvidia }}"
    autodetect: nvml
    extra_lines:
      - Name=shard Count=16
"""

RETURN = r"""
gres:
  description: The C(Gres=) value for this node in slurm.conf, types in first-seen order.
  returned: always
  type: str
  sample: gpu:nvidia_h100_80gb_hbm3:8
gpu_count:
  description: Number of GPUs in the facts.
  returned: always
  type: int
  sample: 8
types:
  description: The GRES types used.
  returned: always
  type: list
  elements: str
  sample: [nvidia_h100_80gb_hbm3]
lines:
  description: The gres.conf lines, without the header.
  returned: always
  type: list
  elements: str
  sample: ["Name=gpu Type=tesla_t4 File=/dev/nvidia0"]
dest:
  description: The file written.
  returned: when O(write=true)
  type: str
  sample: /etc/slurm/gres.conf
backup_file:
  description: The backup copy, when O(backup=true) and the file changed.
  returned: changed and backup made
  type: str
  sample: /etc/slurm/gres.conf.12345.2026-01-01@00:00:00~
"""

import os
import tempfile

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_bytes, to_native

from ansible_collections.gpucluster.core.plugins.module_utils._gres import (
    GresError,
    build_gres,
    read_cpu_cores,
    read_mig_minors,
)
from ansible_collections.gpucluster.core.plugins.module_utils._sysfs import read_file

_SYSFS_ROOT = "/sys"  # unit tests point these at fake trees
_MIG_MINORS = "/proc/driver/nvidia-caps/mig-minors"


def main():
    module = AnsibleModule(
        argument_spec=dict(
            nvidia=dict(type="dict", required=True),
            dest=dict(type="path", default="/etc/slurm/gres.conf"),
            write=dict(type="bool", default=True),
            autodetect=dict(type="str", choices=["none", "nvml"], default="none"),
            type_style=dict(type="str", choices=["nvml", "short", "none"], default="nvml"),
            type_map=dict(type="dict", default={}),
            cores=dict(type="bool", default=True),
            node_cores=dict(type="int"),
            links=dict(type="bool", default=False),
            expected_gpus=dict(type="int"),
            check_devices=dict(type="bool", default=False),
            extra_lines=dict(type="list", elements="str", default=[]),
            header=dict(type="str", default="Ansible managed: gpucluster.core.gres_conf. Local changes will be overwritten."),
            backup=dict(type="bool", default=False),
        ),
        add_file_common_args=True,
        supports_check_mode=True,
    )
    params = module.params
    dest = params["dest"]
    uses_mig = any(
        (gpu.get("mig_mode") or {}).get("current") == "Enabled"
        for gpu in (params["nvidia"].get("gpus") or [])
    )
    try:
        result = build_gres(
            params["nvidia"],
            autodetect=params["autodetect"],
            type_style=params["type_style"],
            type_map=dict((str(k), str(v)) for k, v in params["type_map"].items()),
            links=params["links"],
            cores=params["cores"],
            expected_gpus=params["expected_gpus"],
            cpu_cores=read_cpu_cores(_SYSFS_ROOT) if params["cores"] else {},
            node_cores=params["node_cores"],
            mig_minors=read_mig_minors(_MIG_MINORS) if uses_mig and params["autodetect"] == "none" else {},
            extra_lines=params["extra_lines"],
            header=params["header"],
        )
    except GresError as exc:
        module.fail_json(msg=to_native(exc))

    if params["check_devices"]:
        missing = [path for path in result["devices"] if not os.path.exists(path)]
        if missing:
            module.fail_json(msg="device files missing on this node: %s" % ", ".join(missing))

    content = result["content"]
    if not params["write"]:
        module.exit_json(
            changed=False,
            gres=result["gres"],
            gpu_count=result["gpu_count"],
            types=result["types"],
            lines=result["lines"],
        )
    old = read_file(dest)
    changed = old != content
    ret = dict(
        changed=changed,
        dest=dest,
        gres=result["gres"],
        gpu_count=result["gpu_count"],
        types=result["types"],
        lines=result["lines"],
    )
    if module._diff:
        ret["diff"] = dict(before=old or "", after=content, before_header=dest, after_header=dest)

    if changed and not module.check_mode:
        directory = os.path.dirname(dest) or "."
        if not os.path.isdir(directory):
            # Nothing was written: not changed.
            ret["changed"] = False
            module.fail_json(msg="directory %s of dest does not exist" % directory, **ret)
        if params["backup"] and old is not None:
            ret["backup_file"] = module.backup_local(dest)
        fd, tmp = tempfile.mkstemp(prefix=".gres.conf.", dir=module.tmpdir)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(to_bytes(content))
        except (IOError, OSError) as exc:
            ret["changed"] = False
            module.fail_json(msg="cannot write temporary file: %s" % to_native(exc), **ret)
        module.atomic_move(tmp, dest, unsafe_writes=params["unsafe_writes"])

    if not module.check_mode and os.path.exists(dest):
        file_args = module.load_file_common_arguments(params, path=dest)
        ret["changed"] = module.set_fs_attributes_if_different(file_args, ret["changed"])
    module.exit_json(**ret)


if __name__ == "__main__":
    main()
