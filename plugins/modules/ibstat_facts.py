#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # pylint: disable=invalid-name

DOCUMENTATION = r"""
---
module: ibstat_facts
short_description: Gather InfiniBand and RoCE adapter facts from ibstat or sysfs
version_added: 0.1.0
description:
  - Reads every channel adapter (CA) with C(ibstat) or from C(/sys/class/infiniband) and returns them as
    the C(infiniband) fact, with the active InfiniBand ports, the active RoCE (link layer Ethernet) ports
    and an C(NCCL_IB_HCA) style list.
  - Understands C(ibstat) and C(ibstatus) output, tab or space indentation, bonded devices such as C(mlx5_bond_0)
    and zero GUIDs.
  - Output that stops part way or carries an error line (C(ibpanic), C(ibwarn)), and a non-zero exit, fail the
    module with the reason instead of returning part of the adapters as if they were all.
  - A host without adapters gives an empty, valid result.
author:
  - gpucluster.core developers (@gpucluster)
options:
  ibstat_path:
    description:
      - Path to C(ibstat) (or C(ibstatus), whose output is also understood). By default C(ibstat) is looked up on E(PATH) (and C(/usr/sbin), C(/sbin)).
    type: path
  source:
    description:
      - V(auto) runs C(ibstat) when it is installed and reads C(/sys/class/infiniband) otherwise.
      - V(ibstat) requires C(ibstat); V(sysfs) reads only sysfs.
    type: str
    choices: [auto, ibstat, sysfs]
    default: auto
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - ansible.builtin.action_common_attributes.facts
  - gpucluster.core.attributes.reads
  - gpucluster.core.attributes.facts
seealso:
  - module: gpucluster.core.nvidia_smi_facts
"""

EXAMPLES = r"""
- name: Read the HCAs
  gpucluster.core.ibstat_facts:

- name: Use the active InfiniBand ports for NCCL
  ansible.builtin.lineinfile:
    path: /etc/nccl.conf
    regexp: '^NCCL_IB_HCA='
    line: "NCCL_IB_HCA={{ ansible_facts.infiniband.nccl_ib_hca }}"
  when: ansible_facts.infiniband.nccl_ib_hca | length > 0

- name: Fail when a rail is down
  ansible.builtin.assert:
    that: ansible_facts.infiniband.active_ib_ports | length == 8
"""

RETURN = r"""
ansible_facts:
  description: Facts to add to ansible_facts.
  returned: always
  type: complex
  contains:
    infiniband:
      description: The host's InfiniBand/RoCE channel adapters.
      returned: always
      type: complex
      contains:
        source:
          description: Where the data came from, V(ibstat), V(sysfs), or V(null) when neither exists.
          type: str
          returned: always
          sample: ibstat
        ca_count:
          description: Number of CAs.
          type: int
          returned: always
          sample: 12
        cas:
          description:
            - The CAs in natural name order (C(mlx5_2) before C(mlx5_10)). Each has C(name), C(type) (for example
              C(MT4129)), C(number_of_ports), C(firmware_version), C(hardware_version), C(node_guid),
              C(system_image_guid) and C(ports).
            - Each port has C(port) (number), C(state) (C(Active), C(Down), C(Initializing), C(Armed)...),
              C(physical_state) (C(LinkUp), C(Disabled), C(Polling)...), C(rate_gbps) (number), C(base_lid),
              C(sm_lid), C(lmc), C(port_guid) and C(link_layer) (C(InfiniBand), or C(Ethernet) for RoCE).
            - C(ibstatus) gives no CA type, firmware or GUIDs; those are V(null) then.
          type: list
          elements: dict
          returned: always
          sample:
            - name: mlx5_0
              type: MT4129
              number_of_ports: 1
              firmware_version: 28.39.1002
              hardware_version: "0"
              node_guid: "0x946dae0300cde72c"
              system_image_guid: "0x946dae0300cde72c"
              ports:
                - port: 1
                  state: Active
                  physical_state: LinkUp
                  rate_gbps: 400
                  base_lid: 75
                  sm_lid: 334
                  lmc: 0
                  port_guid: "0x946dae0300cde72c"
                  link_layer: InfiniBand
        active_ib_ports:
          description: Active ports with link layer InfiniBand, as C(<ca>:<port>).
          type: list
          elements: str
          returned: always
          sample: ["mlx5_0:1", "mlx5_3:1"]
        active_roce_ports:
          description: Active ports with link layer Ethernet (RoCE), as C(<ca>:<port>).
          type: list
          elements: str
          returned: always
          sample: ["mlx5_1:1"]
        nccl_ib_hca:
          description:
            - Value for C(NCCL_IB_HCA), the active InfiniBand ports joined by commas, or the active RoCE ports when
              no InfiniBand port is active. Empty when no port is active.
          type: str
          returned: always
          sample: "mlx5_0:1,mlx5_3:1"
"""

from ansible_collections.gpucluster.core.plugins.module_utils._facts import facts_main, find_program
from ansible_collections.gpucluster.core.plugins.module_utils._ibstat import (
    IbstatError,
    parse_ibstat,
    read_sysfs,
    summarize,
)

_SYSFS_ROOT = "/sys"  # unit tests point this at a fake tree


def gather(module, sysfs_root):
    """Return (facts, error message or None)."""
    source = module.params["source"]
    path = module.params["ibstat_path"]
    if source != "sysfs":
        found = find_program(module, path, "ibstat", ["/usr/sbin", "/sbin"])
        if found:
            args = [found]
            rc, out, err = module.run_command(args, environ_update={"LC_ALL": "C"})
            if rc != 0:
                text = " ".join(line.strip() for line in (out + "\n" + err).splitlines() if line.strip())
                return None, "%s failed (rc=%d): %s" % (found, rc, text or "no output")
            try:
                cas = parse_ibstat(out)
            except IbstatError as exc:
                return None, "%s: %s" % (found, exc)
            return summarize(cas, "ibstat"), None
        if source == "ibstat":
            return None, "ibstat not found (%s); install infiniband-diags or use source=sysfs" % (path or "looked in PATH")
    cas = read_sysfs(sysfs_root)
    return summarize(cas, "sysfs" if cas else None), None


def main():
    argument_spec = dict(
        ibstat_path=dict(type="path"),
        source=dict(type="str", choices=["auto", "ibstat", "sysfs"], default="auto"),
    )
    facts_main(argument_spec, gather, "infiniband", _SYSFS_ROOT)


if __name__ == "__main__":
    main()
