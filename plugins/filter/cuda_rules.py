# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""cuda_errors: every error in one host's cuda variables, at once."""

from __future__ import annotations

DOCUMENTATION = r"""
name: cuda_errors
author: gpucluster.core contributors
version_added: 0.1.0
short_description: Check the cuda role's variables of one host and return every error
description:
  - Internal to the collection's roles and not a public interface; it may change in any release.
  - Checks the toolkits (quoted C(X.Y), none twice, the default one of them), the toolkit pins (quoted keys of
    listed toolkits, each a package version of its toolkit), the cuDNN source and version (a package version
    for the repository, a version for the archive), the archive's URL and checksum, the NCCL version (built for
    the default toolkit's CUDA major), and the repository and key URLs.
  - One owner for each package source, when the role manages the repository, its C(cuda) source must have the
    same URL and key as the one the nvidia_driver role writes on the same host (recorded by that role in the
    fact C(nvidia_driver_cuda_repository) when it ran earlier in the run, or its variables when it is in the
    same play); else both messages name C(cuda_repo_url) or C(cuda_repo_key_url) and the nvidia_driver variable.
  - Returns every error at once, each naming the host and the variable; an empty list when all is good.
    The rules live in plugins/plugin_utils/_rules_cuda.py.
  - Called once per host (the role's defaults are templated per host); preflight gathers every
    host's messages and fails, run once, before any host is touched.
options:
  _input:
    description:
      - The host's values of the role's variables, by name (C(cuda_toolkits), C(cuda_repo_url), ...).
      - What is known of the nvidia_driver role on the host, C(nvidia_driver_cuda_repository) (the recorded
        source, a dict, or none), C(nvidia_driver_in_play) (bool), C(nvidia_driver_source),
        C(nvidia_driver_repo_url) and C(nvidia_driver_repo_key_url) (none where not defined).
    type: dict
    required: true
  host:
    description: The host's inventory name, for the messages.
    type: str
    required: true
"""

EXAMPLES = r"""
- name: Check this host's CUDA data
  ansible.builtin.set_fact:
    __errors: >-
      {{ {'cuda_toolkits': cuda_toolkits, 'cuda_default_toolkit': cuda_default_toolkit,
          'cuda_toolkit_versions': cuda_toolkit_versions, 'cuda_cudnn': false, 'cuda_cudnn_source': 'repo',
          'cuda_nccl': false, 'cuda_repo_manage': false}
         | gpucluster.core.cuda_errors(host=inventory_hostname) }}
"""

RETURN = r"""
_value:
  description: The error messages, empty when the input is good.
  type: list
  elements: str
"""

from ansible_collections.gpucluster.core.plugins.plugin_utils._filter import as_filter
from ansible_collections.gpucluster.core.plugins.plugin_utils._rules_cuda import cuda_errors


class FilterModule:
    """The cuda role's input rules."""

    def filters(self):
        return {"cuda_errors": as_filter("cuda_errors", cuda_errors)}
