# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""nvidia_driver_errors: every error in one host's nvidia_driver variables, at once."""

from __future__ import annotations

DOCUMENTATION = r"""
name: nvidia_driver_errors
author: gpucluster.core contributors
version_added: 0.1.0
short_description: Check the nvidia_driver role's variables of one host and return every error
description:
  - Internal to the collection's roles and not a public interface; it may change in any release.
  - Checks C(nvidia_driver_install) and C(nvidia_driver_fabricmanager) (true, false or auto), the source, the
    branch (3 digits) and the version (empty or a package version of that branch), the repository URL (ending
    in /) and the key URL, the kernel module flavour, the reboot policy and the reboot timeout (1-86400 seconds).
  - Returns every error at once, each naming the host and the variable; an empty list when all is good.
    The rules live in plugins/plugin_utils/_rules_nvidia_driver.py.
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
- name: Check this host's driver data
  ansible.builtin.set_fact:
    __errors: >-
      {{ {'nvidia_driver_branch': nvidia_driver_branch, 'nvidia_driver_version': nvidia_driver_version}
         | gpucluster.core.nvidia_driver_errors(host=inventory_hostname) }}
"""

RETURN = r"""
_value:
  description: The error messages, empty when the input is good.
  type: list
  elements: str
"""

from ansible_collections.gpucluster.core.plugins.plugin_utils._filter import as_filter
from ansible_collections.gpucluster.core.plugins.plugin_utils._rules_nvidia_driver import nvidia_driver_errors


class FilterModule:
    """The nvidia_driver role's input rules."""

    def filters(self):
        return {"nvidia_driver_errors": as_filter("nvidia_driver_errors", nvidia_driver_errors)}
