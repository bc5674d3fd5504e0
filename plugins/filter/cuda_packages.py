# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""cuda_packages: the packages the cuda role installs, with their pinned versions."""

from __future__ import annotations

DOCUMENTATION = r"""
name: cuda_packages
author: gpucluster.core contributors
version_added: 0.1.0
short_description: The packages the cuda role installs, each with its pinned version
description:
  - Internal to the collection's roles and not a public interface; it may change in any release.
  - One entry per package, in install order, the toolkits (C(cuda-toolkit-X-Y) for each of C(cuda_toolkits),
    pinned by C(cuda_toolkit_versions)), cuDNN's packages when C(cuda_cudnn) and C(cuda_cudnn_source) is repo
    (pinned by C(cuda_cudnn_version)) and NCCL's when C(cuda_nccl) (pinned by C(cuda_nccl_version)).
  - The logic lives in plugins/plugin_utils/_rules_cuda.py (C(packages)).
options:
  _input:
    description:
      - The role's values of C(cuda_toolkits), C(cuda_toolkit_versions), C(cuda_cudnn), C(cuda_cudnn_source),
        C(cuda_cudnn_version), C(cuda_nccl) and C(cuda_nccl_version), by name.
    type: dict
    required: true
  cudnn_packages:
    description: The distribution's cuDNN package names (such as C(libcudnn9-cuda-12), C(libcudnn9-dev-cuda-12)).
    type: list
    elements: str
    required: true
  nccl_packages:
    description: The distribution's NCCL package names (such as C(libnccl2), C(libnccl-dev)).
    type: list
    elements: str
    required: true
  separator:
    description: What joins a name and its version for the package manager (C(=) for apt, C(-) for dnf).
    type: str
    required: true
"""

EXAMPLES = r"""
- name: Install the toolkits, cuDNN and NCCL
  ansible.builtin.apt:
    name: "{{ __packages | map(attribute='spec') | list }}"
  vars:
    __packages: >-
      {{ {'cuda_toolkits': ['12.4'], 'cuda_toolkit_versions': {'12.4': '12.4.1-1'}, 'cuda_cudnn': false,
          'cuda_nccl': true, 'cuda_nccl_version': ''}
         | gpucluster.core.cuda_packages(cudnn_packages=[], nccl_packages=['libnccl2', 'libnccl-dev'], separator='=') }}
"""

RETURN = r"""
_value:
  description:
    - One dict per package, C(name), C(version) (the pinned version, empty when unpinned) and C(spec)
      (C(name=version) on apt, C(name-version) on dnf, the name alone when unpinned).
  type: list
  elements: dict
"""

from ansible_collections.gpucluster.core.plugins.plugin_utils._filter import as_filter
from ansible_collections.gpucluster.core.plugins.plugin_utils._rules_cuda import packages


class FilterModule:
    """The cuda role's package list."""

    def filters(self):
        return {"cuda_packages": as_filter("cuda_packages", packages)}
