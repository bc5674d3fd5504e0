# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""apt_pin_file: the apt preferences file that keeps packages on their versions."""

from __future__ import annotations

DOCUMENTATION = r"""
name: apt_pin_file
author: gpucluster.core contributors
version_added: 0.1.0
short_description: The apt preferences file that pins packages to their versions, as a file entry
description:
  - Internal to the collection's roles and not a public interface; it may change in any release.
  - Returns the entry of C(/etc/apt/preferences.d/gpucluster-NAME) for the O(gpucluster.core.packages#module:files)
    option of an install task (read in the same call as the installed packages, written before apt runs) or for
    M(gpucluster.core.files). One stanza per package, C(Pin-Priority 1001) on its version (such as
    C(550.54.15-1), or a pattern such as C(550.*)), so that apt neither upgrades the package past it nor picks
    another version for a dependency; owned by root, mode 0644. With no pins the entry removes the file.
  - Fails, naming the pin, on a name that is not a package name or a version with other characters than
    Debian's and C(*). The code lives in plugins/plugin_utils/_packages.py.
options:
  _input:
    description: The pins, each C({name, version}).
    type: list
    elements: dict
    required: true
  name:
    description: The file's name after C(gpucluster-) (lower case letters, digits and C(-)).
    type: str
    required: true
notes:
  - The file starts with the C(ansible_managed) string of the configuration as a comment, as the roles' templates do.
"""

EXAMPLES = r"""
- name: Install the driver at its pin, the pin written first
  gpucluster.core.packages:
    name: [cuda-drivers-550]
    files:
      - "{{ [{'name': 'cuda-drivers-550', 'version': '550.*'}] | gpucluster.core.apt_pin_file('nvidia-driver') }}"
"""

RETURN = r"""
_value:
  description: The file entry (C(dest), C(content), C(owner), C(group), C(mode); or C(dest) and C(state=absent)).
  type: dict
  sample:
    dest: /etc/apt/preferences.d/gpucluster-nvidia-driver
    content: "# Ansible managed\n# apt neither upgrades ...\n\nPackage: cuda-drivers-550\nPin: version 550.*\nPin-Priority: 1001\n"
    owner: root
    group: root
    mode: "0644"
"""

from ansible import constants as C
from ansible.errors import AnsibleFilterError
from ansible.plugins.filter.core import comment
from ansible_collections.gpucluster.core.plugins.plugin_utils._packages import PackagesError
from ansible_collections.gpucluster.core.plugins.plugin_utils._packages import apt_pin_file as _apt_pin_file


def apt_pin_file(pins, name):
    """The pin file's entry for the pins, under the configured ansible_managed comment."""
    header = comment(C.config.get_config_value("DEFAULT_MANAGED_STR"))
    try:
        return _apt_pin_file(pins, name, header)
    except PackagesError as exc:
        raise AnsibleFilterError(str(exc)) from None


class FilterModule:
    """apt pin files from pins."""

    def filters(self):
        return {"apt_pin_file": apt_pin_file}
