#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # pylint: disable=invalid-name

DOCUMENTATION = r"""
---
module: containerd_nvidia_runtime
short_description: Add the nvidia runtime to containerd's CRI plugin, in a drop-in or in config.toml
version_added: 0.1.0
description:
  - Reads containerd's version (C(containerd --version)) and its O(path) (C(config.toml)), parsed as TOML,
    and puts the runtime O(runtime_name) (C(runtime_type = "io.containerd.runc.v2"), C(BinaryName) O(binary),
    C(SystemdCgroup) as the C(runc) runtime has it in O(path)) into the CRI plugin.
  - Preferred is a drop-in, O(dropin), that O(path) imports (the drop-in's folder C(*.toml) is added to the
    top-level C(imports) list, or an C(imports) line is put before the first table; a version 1 file holding
    only comments gets C(version = 2); a missing O(path) is created with both lines).
  - "containerd 1.x replaces a plugin's whole section with an imported file's (containerd issue 5837; 2.0 merges
    key by key), so on containerd 1.x whose O(path) has CRI settings of its own the runtime goes into O(path)
    itself, in a block between C(# BEGIN/END gpucluster.core container_toolkit: nvidia runtime) lines, and
    O(dropin) is removed. On containerd 2.x the block is taken out again and the drop-in written."
  - Nothing else in O(path) is touched, its layout and comments stay. Every new text is parsed again before it
    is written. O(dropin) is rewritten only when its parsed content differs.
  - Fails, writing nothing, with every reason at once, when containerd is not installed, O(path) is not valid
    TOML, is a version 1 file with settings, disables the CRI plugin, or (block case) defines the runtime's
    table already.
  - A new file gets mode C(0644) (a new folder C(0755)), owned by the user the module runs as; a changed
    O(path) keeps its mode and owner.
author:
  - gpucluster.core developers (@gpucluster)
options:
  dropin:
    description:
      - The drop-in that holds the runtime. O(path) imports every C(*.toml) of its folder.
    type: path
    default: /etc/containerd/conf.d/99-nvidia.toml
  runtime_name:
    description: The runtime's name (the handler of a Kubernetes RuntimeClass).
    type: str
    default: nvidia
  binary:
    description: The runtime's executable (C(BinaryName)).
    type: path
    default: /usr/bin/nvidia-container-runtime
extends_documentation_fragment:
  - gpucluster.core.containerd
  - gpucluster.core.attributes.writes
"""

EXAMPLES = r"""
- name: Add the nvidia runtime to containerd's CRI plugin
  gpucluster.core.containerd_nvidia_runtime:
  register: containerd_runtime

- name: Apply it
  ansible.builtin.service:
    name: containerd
    state: restarted
  when: containerd_runtime is changed
"""

RETURN = r"""
mode:
  description: Where the runtime is, C(drop-in) (O(dropin)) or C(config.toml) (the marked block in O(path)).
  returned: success
  type: str
  sample: drop-in
changes:
  description: What was changed (or would be, in check mode), in words; empty when nothing was.
  returned: success
  type: list
  elements: str
  sample: ["added /etc/containerd/conf.d/*.toml to the imports of /etc/containerd/config.toml"]
systemd_cgroup:
  description: The runtime's C(SystemdCgroup), copied from the runc runtime in O(path).
  returned: success
  type: bool
  sample: true
containerd_version:
  description: containerd's version, from C(containerd --version); empty when it names none.
  returned: when containerd is installed
  type: str
  sample: 1.7.27
containerd_found:
  description: Whether containerd is installed (false only in the failure that says it is not).
  returned: always
  type: bool
  sample: true
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpucluster.core.plugins.module_utils._textfile import TextFileError, apply_files, read_text
from ansible_collections.gpucluster.core.plugins.module_utils._containerd_host import installed_version
from ansible_collections.gpucluster.core.plugins.module_utils._containerd_toml import ContainerdTomlError, plan, require_toml


def main():
    module = AnsibleModule(
        argument_spec=dict(
            path=dict(type="path", default="/etc/containerd/config.toml"),
            dropin=dict(type="path", default="/etc/containerd/conf.d/99-nvidia.toml"),
            runtime_name=dict(type="str", default="nvidia"),
            binary=dict(type="path", default="/usr/bin/nvidia-container-runtime"),
        ),
        supports_check_mode=True,
    )
    path = module.params["path"]
    dropin = module.params["dropin"]
    version, major = installed_version(module, report_found=True)
    try:
        require_toml()
        config_before = read_text(path)
        dropin_before = read_text(dropin)
        wanted = plan(path, config_before, dropin, dropin_before, major, module.params["runtime_name"],
                      module.params["binary"])
    except (ContainerdTomlError, TextFileError) as exc:
        module.fail_json(msg=str(exc), containerd_found=True, containerd_version=version or "")
    files = [(path, config_before, wanted["config"]), (dropin, dropin_before, wanted["dropin"])]
    result = dict(
        mode=wanted["mode"],
        changes=wanted["changes"],
        systemd_cgroup=wanted["systemd_cgroup"],
        containerd_version=version or "",
        containerd_found=True,
    )
    apply_files(module, files, result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
