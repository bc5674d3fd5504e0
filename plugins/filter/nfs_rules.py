# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The nfs role's filters: nfs_errors (its input rules), nfs_conf_options (the nfs.conf merge),
nfs_client_mounts, nfs_group_clashes, nfs_unpublished and nfs_unmounted (derived data and checks).

Documented in the .yml files of the same names beside this file."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError
from ansible_collections.gpucluster.core.plugins.plugin_utils._rules import RuleError
from ansible_collections.gpucluster.core.plugins.plugin_utils._nfs_state import client_mounts, group_clashes, unmounted, unpublished
from ansible_collections.gpucluster.core.plugins.plugin_utils._rules_nfs import conf_options, nfs_errors, per_host


def nfs_errors_filter(hostvars, hosts, inventory, defaults):
    """Return the messages; raise AnsibleFilterError when the input is not of the expected shape."""
    try:
        return nfs_errors(per_host(hostvars, inventory, defaults), list(hosts))
    except (RuleError, AttributeError, TypeError) as exc:
        raise AnsibleFilterError("nfs: %s" % exc) from None


def nfs_conf_options_filter(role, settings):
    """/etc/nfs.conf items to set key by key (documented in nfs_conf_options.yml)."""
    try:
        return conf_options(role, settings)
    except (RuleError, AttributeError, TypeError) as exc:
        raise AnsibleFilterError("nfs: %s" % exc) from None


def nfs_client_mounts_filter(mounts, host, settings):
    """The mounts host makes, with their fstab options (documented in nfs_client_mounts.yml)."""
    try:
        return client_mounts(mounts, host, settings)
    except (KeyError, AttributeError, TypeError, ValueError) as exc:
        raise AnsibleFilterError("nfs: nfs_client_mounts: %s" % exc) from None


def nfs_unpublished_filter(exports, exportfs):
    """The exports exportfs -s does not list (documented in nfs_unpublished.yml)."""
    try:
        return unpublished(exports, exportfs)
    except (KeyError, AttributeError, TypeError) as exc:
        raise AnsibleFilterError("nfs: nfs_unpublished: %s" % exc) from None


def nfs_unmounted_filter(mounts, proc_mounts):
    """The mounts /proc/mounts lacks (documented in nfs_unmounted.yml)."""
    try:
        return unmounted(mounts, proc_mounts)
    except (KeyError, AttributeError, TypeError) as exc:
        raise AnsibleFilterError("nfs: nfs_unmounted: %s" % exc) from None


def nfs_group_clashes_filter(groups, getent_group):
    """Where nfs_groups disagrees with the host's groups (documented in nfs_group_clashes.yml)."""
    try:
        return group_clashes(groups, getent_group)
    except (KeyError, AttributeError, TypeError, ValueError, IndexError) as exc:
        raise AnsibleFilterError("nfs: nfs_group_clashes: %s" % exc) from None


class FilterModule:
    """The nfs role's input rules and nfs.conf merge."""

    def filters(self):
        return {"nfs_errors": nfs_errors_filter, "nfs_conf_options": nfs_conf_options_filter,
                "nfs_client_mounts": nfs_client_mounts_filter, "nfs_unpublished": nfs_unpublished_filter,
                "nfs_unmounted": nfs_unmounted_filter, "nfs_group_clashes": nfs_group_clashes_filter}
