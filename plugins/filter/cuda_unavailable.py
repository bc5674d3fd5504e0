# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""cuda_unavailable: which packages, or pinned versions, the repository does not have."""

from __future__ import annotations

DOCUMENTATION = r"""
name: cuda_unavailable
author: gpucluster.core contributors
version_added: 0.1.0
short_description: The packages or pinned versions the repository does not have
description:
  - Internal to the collection's roles and not a public interface; it may change in any release.
  - Reads the repository's C(name | version | source) lines (C(apt-cache madison), or C(dnf repoquery) with
    that query format) and returns one message per package of the input that the repository lacks
    (C(NAME is not in the repository at all)) or whose pinned version it lacks
    (C(NAME VERSION is not in the repository) with the versions it has).
  - The logic lives in plugins/plugin_utils/_rules_cuda.py (C(unavailable)).
positional: _input, _reads
options:
  _input:
    description: The packages, dicts with C(name) and C(version) (empty when any version will do).
    type: list
    elements: dict
    required: true
  _reads:
    description:
      - The registered results of the repository reads, in the order they ran (positional); the last one
        that ran (has C(stdout_lines)) counts, and a skipped one is passed over.
    type: list
    elements: dict
    required: true
"""

EXAMPLES = r"""
- name: Check the repository has every package at its pinned version
  ansible.builtin.assert:
    that: __missing | length == 0
    fail_msg: "{{ __missing | join('; ') }}"
  vars:
    __missing: "{{ [{'name': 'libnccl2', 'version': '2.21.5-1+cuda12.4'}] | gpucluster.core.cuda_unavailable(madison, madison_again) }}"
"""

RETURN = r"""
_value:
  description: One message per package the repository lacks; empty when it has them all.
  type: list
  elements: str
"""

from ansible_collections.gpucluster.core.plugins.plugin_utils._filter import as_filter
from ansible_collections.gpucluster.core.plugins.plugin_utils._rules_cuda import unavailable


class FilterModule:
    """The cuda role's repository check."""

    def filters(self):
        return {"cuda_unavailable": as_filter("cuda_unavailable", unavailable)}
