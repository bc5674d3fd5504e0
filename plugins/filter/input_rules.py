# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""input_rule_failure: the calling role's input rules over every host's values of its options.

Documentation lives beside this file in input_rule_failure.yml; the code in
plugins/plugin_utils/_common_input_rules.py (the roles' rules, whose values they read, the
messages' heading).
"""

from __future__ import annotations

from ansible_collections.gpucluster.core.plugins.plugin_utils._common_input_rules import (
    gather, input_rule_failure, play_of, rule_hosts)
from ansible_collections.gpucluster.core.plugins.plugin_utils._filter import as_filter, defined_values
from ansible_collections.gpucluster.core.plugins.plugin_utils._rules import RuleError


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
    """The roles' input rules."""

    def filters(self):
        return {"input_rule_failure": as_filter("input_rule_failure", _input_rule_failure)}
