# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""packages_installed: the installed versions in a dpkg-query or rpm query's output."""

from __future__ import annotations

DOCUMENTATION = r"""
name: packages_installed
author: gpucluster.core contributors
version_added: 0.1.0
short_description: The installed packages and their versions, from one dpkg-query or rpm query
description:
  - Internal to the collection's roles and not a public interface; it may change in any release.
  - Reads the output of C(dpkg-query -W --showformat='${Package}\t${Version}\t${db:Status-Abbrev}\n' NAMES...)
    on apt hosts, or of C(rpm -q --qf '%{NAME}\t%{VERSION}\n' NAMES...) on the others, and returns the installed
    packages with their versions. A package dpkg lists in another state than installed (config files only, half
    installed) is left out, as are rpm's C(package X is not installed) lines.
  - One read of the packages a role asks about, where M(ansible.builtin.package_facts) reads every package
    (seconds per node on apt). Fails, naming the line, on output of another shape. The code lives in
    plugins/plugin_utils/_packages.py.
options:
  _input:
    description: The query's output.
    type: str
    required: true
  pkg_mgr:
    description: The host's C(pkg_mgr) fact; C(apt) reads dpkg-query's format, anything else rpm's.
    type: str
    required: true
"""

EXAMPLES = r"""
- name: Read the installed Docker engines
  ansible.builtin.command:
    argv: [dpkg-query, -W, "--showformat=${Package}\t${Version}\t${db:Status-Abbrev}\n", docker.io, docker-ce]
  register: engines
  changed_when: false
  failed_when: engines.rc not in [0, 1]

- name: Say which is installed
  ansible.builtin.debug:
    msg: "{{ engines.stdout | gpucluster.core.packages_installed('apt') }}"
"""

RETURN = r"""
_value:
  description: The installed packages' versions by name.
  type: dict
  sample: {"docker.io": "20.10.24+dfsg1-1+b3"}
"""

from ansible.errors import AnsibleFilterError
from ansible_collections.gpucluster.core.plugins.plugin_utils._packages import PackagesError, installed_versions


def packages_installed(text, pkg_mgr):
    """``{name: version}`` of the installed packages in the query's output."""
    try:
        return installed_versions(text, pkg_mgr)
    except PackagesError as exc:
        raise AnsibleFilterError("packages_installed: %s" % exc) from None


class FilterModule:
    """Installed package versions from one query."""

    def filters(self):
        return {"packages_installed": packages_installed}
