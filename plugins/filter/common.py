# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The filters the roles share (each documented in plugins/filter/<filter>.yml): strict input types,
the firewall's rules, package pins and checks, env files, host choice, the Python Kubernetes client of kubernetes.core's
modules; the logic lives in plugins/plugin_utils/common/."""

from __future__ import annotations

from collections.abc import Mapping

from ansible import constants as C
from ansible.errors import AnsibleFilterError
from ansible.plugins.filter.core import comment

from ansible_collections.gpucluster.core.plugins.plugin_utils.common._env_file import set_line
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._filter import (
    as_filters, defined_values)
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._firewall import (
    caller_state, firewall_plan, firewall_state)
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._hosts import first_host_in
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._input_rules import (
    gather, input_rule_failure, play_of, rule_hosts)
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._input_types import (
    input_type_errors, play_input_type_errors)
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._kubernetes_client import client_plan
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._packages import (
    PackagesError, apt_pin_file as _apt_pin_file, installed_versions)
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._rules import RuleError
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._support import supported_os


def apt_pin_file(pins, name):
    """The pin file's entry for the pins, under the configured ansible_managed comment."""
    header = comment(C.config.get_config_value("DEFAULT_MANAGED_STR"))
    try:
        return _apt_pin_file(pins, name, header)
    except PackagesError as exc:
        raise AnsibleFilterError(str(exc)) from None


def _input_type_errors(options, values, hosts=None, defaults=None, defaults_host=None):
    """``values``: each host's values as it sees them (host -> {name: value}); or, with ``hosts``,
    the play's hostvars, read for those hosts with ``defaults`` where a host sets none."""
    if hosts is None:
        return input_type_errors(options, values)
    names = list(options) if isinstance(options, Mapping) else []
    hostvars = {host: defined_values(values.get(host, {}), names) for host in hosts}
    return play_input_type_errors(options, hostvars, hosts, defaults or {}, defaults_host)


def packages_installed(text, pkg_mgr):
    """``{name: version}`` of the installed packages in the query's output."""
    try:
        return installed_versions(text, pkg_mgr)
    except PackagesError as exc:
        raise AnsibleFilterError("packages_installed: %s" % exc) from None


def _input_rule_failure(hostvars, role, names, shared, play, groups, own=None):
    """The hosts the role's rules read, each with its own reading (a host of this batch) or its
    ``hostvars`` (read only for the names it lacks, and only for those hosts), else ``shared``."""
    if isinstance(names, str) or not all(isinstance(name, str) for name in names):
        raise RuleError("input_rule_failure: the names must be a list of the role's option names (got %r)" % (names,))
    names = list(names)
    play = play_of(play)
    groups = {name: list(members) for name, members in groups.items()}
    hosts = rule_hosts(role, shared, play, groups)
    own = {host: dict(own[host]) for host in hosts if host in (own or {})}
    others = {host: defined_values(hostvars[host], [n for n in names if n not in own.get(host, {})])
              for host in hosts if host in hostvars}
    return input_rule_failure(role, gather(names, hosts, own, others, shared), shared, play, groups)


class FilterModule:
    """The common filters."""

    def filters(self):
        return {
            **as_filters({
                "env_file_line": set_line,
                "firewall_caller_state": caller_state,
                "firewall_plan": firewall_plan,
                "firewall_state": firewall_state,
                "first_host_in": first_host_in,
                "input_type_errors": _input_type_errors,
                "input_rule_failure": _input_rule_failure,
                "kubernetes_client_plan": client_plan,
                "supported_os": supported_os,
            }),
            "apt_pin_file": apt_pin_file,
            "packages_installed": packages_installed,
        }
