#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # pylint: disable=invalid-name

DOCUMENTATION = r"""
---
module: containerd_cri
short_description: Merge settings into containerd's CRI plugin, keeping the nvidia runtime
version_added: 0.1.0
description:
  - Reads containerd's version (C(containerd --version)) and its O(path) (C(config.toml)), parsed as TOML, and
    merges O(settings) into the CRI plugin's section (C(plugins."io.containerd.grpc.v1.cri")) key by key.
  - Only when a setting differs is O(path) written again, from its merged parsed content (comments in it are not
    kept then; a file that already holds every setting is left as it is). A missing O(path) is created.
  - The nvidia runtime that M(gpucluster.core.containerd_nvidia_runtime) keeps in a marked block of O(path) stays
    there; when O(settings) sets runc's C(SystemdCgroup), the block's C(SystemdCgroup) follows it, as that module
    sets it.
  - "containerd 1.x replaces a plugin's whole section with an imported file's (containerd issue 5837): every file
    O(path) imports that sets the CRI plugin gets O(settings) merged in too."
  - Fails, writing nothing, with every reason at once, when containerd is not installed, a file is not valid
    TOML, O(path) is a version 1 or 3 file, disables the CRI plugin, or has C(registry.mirrors) beside a
    C(registry.config_path) setting.
author:
  - gpucluster.core developers (@gpucluster)
options:
  settings:
    description:
      - "The CRI plugin's settings, as nested tables (version 2 names), for example
        C({sandbox_image: registry.k8s.io/pause:3.10, containerd: {runtimes: {runc: {options: {SystemdCgroup: true}}}}})."
    type: dict
    required: true
extends_documentation_fragment:
  - gpucluster.core.containerd
  - gpucluster.core.attributes.writes
"""

EXAMPLES = r"""
- name: Put Kubernetes' CRI settings into containerd's configuration
  gpucluster.core.containerd_cri:
    settings:
      sandbox_image: registry.k8s.io/pause:3.10
      registry:
        config_path: /etc/containerd/certs.d
      containerd:
        runtimes:
          runc:
            runtime_type: io.containerd.runc.v2
            options:
              SystemdCgroup: true
  notify: Restart containerd
"""

RETURN = r"""
changes:
  description: What was changed (or would be, in check mode), in words; empty when nothing was.
  returned: success
  type: list
  elements: str
  sample: ["merged the CRI settings into /etc/containerd/config.toml"]
containerd_version:
  description: containerd's version, from C(containerd --version); empty when it names none.
  returned: when containerd is installed
  type: str
  sample: 1.6.20
"""

import glob
import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpucluster.core.plugins.module_utils._textfile import TextFileError, apply_files, read_text
from ansible_collections.gpucluster.core.plugins.module_utils._containerd_host import installed_version
from ansible_collections.gpucluster.core.plugins.module_utils._containerd_toml import ContainerdTomlError, require_toml, split_block, _loads
from ansible_collections.gpucluster.core.plugins.module_utils._containerd_cri import ContainerdCriError, plan


def _imported(path, text):
    """{path: text} of the files config.toml imports (its imports globs, relative to its folder)."""
    if text is None:
        return {}
    try:
        imports = _loads(split_block(text)[0]).get("imports", [])
    except ValueError:
        return {}
    files = {}
    for pattern in imports if isinstance(imports, list) else []:
        if not isinstance(pattern, str):
            continue
        pattern = pattern if os.path.isabs(pattern) else os.path.join(os.path.dirname(path), pattern)
        for name in sorted(glob.glob(pattern)):
            body = read_text(name)
            if body is not None:
                files[name] = body
    return files


def main():
    module = AnsibleModule(
        argument_spec=dict(
            path=dict(type="path", default="/etc/containerd/config.toml"),
            settings=dict(type="dict", required=True),
        ),
        supports_check_mode=True,
    )
    path = module.params["path"]
    version, major = installed_version(module)
    try:
        require_toml()
        before = read_text(path)
        dropins = _imported(path, before)
        wanted = plan(path, before, major, module.params["settings"], dropins)
    except (ContainerdTomlError, ContainerdCriError, TextFileError) as exc:
        module.fail_json(msg=str(exc), containerd_version=version or "")
    files = [(path, before, wanted["config"])] + [(name, dropins[name], text) for name, text in wanted["dropins"].items()]
    result = dict(changes=wanted["changes"], containerd_version=version or "")
    apply_files(module, files, result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
