# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""container_toolkit_errors: every error in one host's container_toolkit variables, at once."""

from __future__ import annotations

DOCUMENTATION = r"""
name: container_toolkit_errors
author: gpucluster.core contributors
version_added: 0.1.0
short_description: Check the container_toolkit role's variables of one host and return every error
description:
  - Internal to the collection's roles and not a public interface; it may change in any release.
  - Checks the Docker source, the toolkit and Docker versions, the repository and key URLs, the
    daemon.json settings (a dict, neither C(runtimes.nvidia) nor C(default-runtime) nvidia without
    C(container_toolkit_default_runtime)), the docker group's user names, C(container_toolkit_gpu_test)
    and the test image reference.
  - Returns every error at once, each naming the host and the variable; an empty list when all is good.
    The rules live in plugins/plugin_utils/_rules_container_toolkit.py.
  - Called once per host (the role's defaults are templated per host); preflight gathers every
    host's messages and fails, run once, before any host is touched.
options:
  _input:
    description: The host's values of the role's variables, by name.
    type: dict
    required: true
  host:
    description: The host's inventory name, for the messages.
    type: str
    required: true
"""

EXAMPLES = r"""
- name: Check this host's container toolkit data
  ansible.builtin.set_fact:
    __errors: >-
      {{ {'container_toolkit_version': container_toolkit_version, 'container_toolkit_gpu_test': container_toolkit_gpu_test}
         | gpucluster.core.container_toolkit_errors(host=inventory_hostname) }}
"""

RETURN = r"""
_value:
  description: The error messages, empty when the input is good.
  type: list
  elements: str
"""

from ansible_collections.gpucluster.core.plugins.plugin_utils._filter import as_filter
from ansible_collections.gpucluster.core.plugins.plugin_utils._rules_container_toolkit import container_toolkit_errors


class FilterModule:
    """The container_toolkit role's input rules."""

    def filters(self):
        return {"container_toolkit_errors": as_filter("container_toolkit_errors", container_toolkit_errors)}
