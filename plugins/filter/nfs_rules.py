# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The nfs role's filters: nfs_errors (its input rules) and nfs_conf_options (the nfs.conf merge).

Documented in nfs_errors.yml and nfs_conf_options.yml beside this file."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError
from ansible_collections.gpucluster.core.plugins.plugin_utils._rules import RuleError
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


class FilterModule:
    """The nfs role's input rules and nfs.conf merge."""

    def filters(self):
        return {"nfs_errors": nfs_errors_filter, "nfs_conf_options": nfs_conf_options_filter}
