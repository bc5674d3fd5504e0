# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""cuda_verify_problems: what the cuda role's checks found that differs from what was asked for."""

from __future__ import annotations

DOCUMENTATION = r"""
name: cuda_verify_problems
author: gpucluster.core contributors
version_added: 0.1.0
short_description: Compare what the cuda role's checks read on a host with what was asked for
description:
  - Internal to the collection's roles and not a public interface; it may change in any release.
  - Each toolkit's C(nvcc --version) and C(/usr/local/cuda/bin/nvcc)'s must report their release,
    C(/usr/local/cuda) must lead to the default toolkit, the cuDNN and NCCL headers must say the pinned
    versions (cuDNN without a pin, its major), the installed NCCL must be built for the default toolkit's CUDA
    major, C(ldconfig -p) must list C(libcudnn.so.N) and C(libnccl.so.2), and each pinned package must be
    installed at exactly its version.
  - Returns one message per difference naming what was expected and what was found; an empty list when all is
    as asked. The logic lives in plugins/plugin_utils/_rules_cuda.py (C(verify_problems)).
positional: _input, expected
options:
  _input:
    description:
      - What the checks read, C(nvcc) (the loop results of each toolkit's C(nvcc --version), item the toolkit),
        C(nvcc_default), C(link) (the stat of C(/usr/local/cuda)), C(cudnn_header) and C(nccl_header) (slurp
        results), C(ldconfig) (the result of C(ldconfig -p)) and C(packages) (the package facts).
    type: dict
    required: true
  expected:
    description:
      - What was asked for, C(default_toolkit), C(default_dir), C(cuda_major), C(cudnn) (bool),
        C(cudnn_header), C(cudnn_major), C(cudnn_version), C(nccl) (bool), C(nccl_header), C(nccl_version),
        C(nccl_package) and C(pins) (dicts with C(name) and C(version)). The cuDNN and NCCL keys are read
        only when C(cudnn) and C(nccl) are true.
    type: dict
    required: true
"""

EXAMPLES = r"""
- name: Check the toolkits, cuDNN and NCCL are what was asked for
  ansible.builtin.assert:
    that: __problems | length == 0
    fail_msg: "{{ __problems | join('; ') }}"
  vars:
    __problems: >-
      {{ {'nvcc': nvcc.results, 'nvcc_default': nvcc_default, 'link': link.stat, 'ldconfig': ldconfig,
          'packages': ansible_facts['packages']}
         | gpucluster.core.cuda_verify_problems({'default_toolkit': '12.4', 'default_dir': '/usr/local/cuda-12.4',
                                                 'cuda_major': '12', 'cudnn': false, 'nccl': false, 'pins': []}) }}
"""

RETURN = r"""
_value:
  description: One message per difference, naming what was expected and what was found; empty when all is as asked.
  type: list
  elements: str
"""

from ansible_collections.gpucluster.core.plugins.plugin_utils._filter import as_filter
from ansible_collections.gpucluster.core.plugins.plugin_utils._rules_cuda import verify_problems


class FilterModule:
    """The cuda role's checks after installing."""

    def filters(self):
        return {"cuda_verify_problems": as_filter("cuda_verify_problems", verify_problems)}
