# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The container_toolkit role's checks of what it read from the hosts: container_toolkit_missing_versions
and container_toolkit_failed_hosts.

Documented in container_toolkit_missing_versions.yml and container_toolkit_failed_hosts.yml beside this
file; the logic is plugins/plugin_utils/_container_toolkit_checks.py."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError
from ansible_collections.gpucluster.core.plugins.plugin_utils._container_toolkit_checks import (
    CheckError,
    failed_hosts,
    missing_versions,
)


def container_toolkit_missing_versions(lines, packages, version, repo_url):
    """Sentences naming the packages the repository lacks the version of (documented in the .yml)."""
    try:
        return missing_versions(lines, packages, version, repo_url)
    except (CheckError, AttributeError, TypeError) as exc:
        raise AnsibleFilterError("container_toolkit_missing_versions: %s" % exc) from None


def container_toolkit_failed_hosts(hosts, hostvars, result, success_key):
    """``host 'NAME': message`` for each host a read failed on (documented in the .yml)."""
    try:
        return failed_hosts(hosts, hostvars, result, success_key)
    except (CheckError, AttributeError, KeyError, TypeError) as exc:
        raise AnsibleFilterError("container_toolkit_failed_hosts: %s" % exc) from None


class FilterModule:
    """The container_toolkit role's checks of the hosts' state."""

    def filters(self):
        return {
            "container_toolkit_missing_versions": container_toolkit_missing_versions,
            "container_toolkit_failed_hosts": container_toolkit_failed_hosts,
        }
