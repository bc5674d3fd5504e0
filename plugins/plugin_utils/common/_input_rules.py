# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One input check for every role (controller side, pure, no Ansible imports).

A role's preflight includes the common role's ``input_check`` entry point
(roles/common/tasks/input_check.yml): it reads the names of the role's options from the role's
``meta/argument_specs.yml``, has each host of the batch read its own values of them, checks their
types (``_input_types.py``) and then calls the role's rules through ``RULES`` below. So the rules
modules hold only rules: no list of names to keep beside the argument spec, and a new option is
seen by its rule as soon as the spec names it.

``RULES`` names, for each role, its rules (a function of a ``RoleInput``, returning every message),
whose values they read (``hosts``: a function of the play's values, the play's hosts and the
groups) and the heading of the failure message. ``gather`` builds each of those hosts' values:

* a host of this batch: the values it read itself, as the role sees them there (play vars, role
  parameters and extra vars over the inventory; defaults templated per host, such as a node name
  or an address), less the secrets (``no_log`` options), which are never copied into a fact;
* otherwise (a host that dropped out, one of a later batch under ``serial``, an inventory host
  outside the play), and for the secrets: its inventory's value where it sets one, else the
  play's, as the run_once host sees it (``shared``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterable, List, Mapping, Sequence

from ansible_collections.gpucluster.core.plugins.plugin_utils.base_os import _rules as base_os_rules
from ansible_collections.gpucluster.core.plugins.plugin_utils.container_toolkit import _rules as container_toolkit_rules
from ansible_collections.gpucluster.core.plugins.plugin_utils.cuda import _rules as cuda_rules
from ansible_collections.gpucluster.core.plugins.plugin_utils.gpu_operator import _gpu_operator as gpu_operator_rules
from ansible_collections.gpucluster.core.plugins.plugin_utils.kubernetes import _kubernetes as kubernetes_rules
from ansible_collections.gpucluster.core.plugins.plugin_utils.monitoring import _monitoring as monitoring_rules
from ansible_collections.gpucluster.core.plugins.plugin_utils.nfs import _rules as nfs_rules
from ansible_collections.gpucluster.core.plugins.plugin_utils.nvidia_driver import _rules as nvidia_driver_rules
from ansible_collections.gpucluster.core.plugins.plugin_utils.ofed import _rules as ofed_rules
from ansible_collections.gpucluster.core.plugins.plugin_utils.slurm import _rules as slurm_rules
from ansible_collections.gpucluster.core.plugins.plugin_utils.training_operator import _training as training_operator_rules
from ansible_collections.gpucluster.core.plugins.plugin_utils.validation import _rules as validation_rules
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._rules import PlayHosts, RoleInput, RuleError, host_values

Groups = Mapping[str, Sequence[str]]
HostsOf = Callable[[Mapping[str, Any], PlayHosts, Groups], List[str]]


def batch(shared: Mapping[str, Any], play: PlayHosts, groups: Groups) -> List[str]:
    """The hosts of this batch (``ansible_play_batch``): for rules over values templated per host,
    which only a host of the batch reads right."""
    return list(play.batch)


def play_hosts(shared: Mapping[str, Any], play: PlayHosts, groups: Groups) -> List[str]:
    """Every batch's hosts, less those that failed (``ansible_play_hosts``)."""
    return list(play.hosts)


def all_hosts(shared: Mapping[str, Any], play: PlayHosts, groups: Groups) -> List[str]:
    """Every host of the play, those that dropped out too (``ansible_play_hosts_all``)."""
    return list(play.all)


def inventory(shared: Mapping[str, Any], play: PlayHosts, groups: Groups) -> List[str]:
    """Every inventory host (``groups['all']``), then any host of the play it lacks."""
    hosts = list(groups.get("all", []))
    return hosts + [host for host in play.all if host not in hosts]


def no_hosts(shared: Mapping[str, Any], play: PlayHosts, groups: Groups) -> List[str]:
    """None: the rules read the play's values only (a role that runs on one host)."""
    return []


@dataclass(frozen=True)
class RoleRules:
    """A role's input rules: ``errors`` over a ``RoleInput``, the hosts whose values they read, and
    the failure message's heading (after ``<role>: ``)."""

    errors: Callable[[RoleInput], List[str]]
    hosts: HostsOf
    heading: str = "bad input, no host was changed"


RULES: Dict[str, RoleRules] = {
    "base_os": RoleRules(base_os_rules.input_errors, play_hosts),
    "nvidia_driver": RoleRules(nvidia_driver_rules.input_errors, batch),
    "cuda": RoleRules(cuda_rules.input_errors, batch),
    "ofed": RoleRules(ofed_rules.input_errors, batch),
    "container_toolkit": RoleRules(container_toolkit_rules.input_errors, batch),
    "nfs": RoleRules(nfs_rules.input_errors, inventory),
    "slurm": RoleRules(slurm_rules.input_errors, slurm_rules.compute_nodes, "bad variables, no host was changed"),
    "kubernetes": RoleRules(kubernetes_rules.input_errors, batch),
    "gpu_operator": RoleRules(gpu_operator_rules.input_errors, no_hosts),
    "training_operator": RoleRules(training_operator_rules.input_errors, no_hosts),
    "monitoring": RoleRules(monitoring_rules.input_errors, all_hosts),
    "validation": RoleRules(validation_rules.input_errors, all_hosts, "bad input, no host was touched"),
}


def role_name(role: str) -> str:
    """A role's short name: ``gpucluster.core.slurm`` is ``slurm``."""
    if not isinstance(role, str) or not role:
        raise RuleError("input_rule_failure: the role must be a role name (got %r)" % (role,))
    return role.rsplit(".", 1)[-1]


def rules_of(role: str) -> RoleRules:
    """The rules of ``role`` (a short or fully qualified name); a RuleError naming the known roles
    for a role without any."""
    name = role_name(role)
    if name not in RULES:
        raise RuleError("input_rule_failure: the role %r has no input rules (the roles that have: %s)"
                        % (name, ", ".join(sorted(RULES))))
    return RULES[name]


def play_of(play: Mapping[str, Iterable[str]]) -> PlayHosts:
    """The play's hosts from ``{batch, hosts, all}`` (ansible_play_batch, ansible_play_hosts,
    ansible_play_hosts_all)."""
    if not isinstance(play, Mapping) or set(play) - {"batch", "hosts", "all"}:
        raise RuleError("input_rule_failure: the play's hosts must be a dict with batch, hosts and all (got %r)"
                        % (play,))
    return PlayHosts(*(tuple(play.get(key) or ()) for key in ("batch", "hosts", "all")))


def rule_hosts(role: str, shared: Mapping[str, Any], play: PlayHosts, groups: Groups) -> List[str]:
    """The hosts whose values ``role``'s rules read, in order, each once."""
    return list(dict.fromkeys(rules_of(role).hosts(shared, play, groups)))


def gather(names: Iterable[str], hosts: Iterable[str], own: Mapping[str, Mapping[str, Any]],
           hostvars: Mapping[str, Mapping[str, Any]], shared: Mapping[str, Any]) -> Dict[str, Dict[str, Any]]:
    """Each of ``hosts``' values of ``names``: what the host read itself (``own``: the hosts of this
    batch, with any context the role added), else its inventory's (``hostvars``), else the play's
    (``shared``); a name none of them has is left out."""
    hosts = list(hosts)
    out = host_values(hostvars, hosts, names, shared)
    for host in hosts:
        out[host].update(own.get(host) or {})
    return out


def input_rule_errors(role: str, values: Mapping[str, Mapping[str, Any]], shared: Mapping[str, Any],
                      play: PlayHosts, groups: Groups) -> List[str]:
    """Every message of ``role``'s rules over the hosts' ``values`` (from ``gather``) and the play's
    values (``shared``)."""
    given = RoleInput(hosts=dict(values), shared=dict(shared), groups={k: list(v) for k, v in groups.items()},
                      play=play)
    return list(rules_of(role).errors(given))


def input_rule_failure(role: str, values: Mapping[str, Mapping[str, Any]], shared: Mapping[str, Any],
                       play: PlayHosts, groups: Groups) -> str:
    """The failure message, ``<role>: <heading>: <message>; <message>...``; '' when the rules find
    nothing."""
    errors = input_rule_errors(role, values, shared, play, groups)
    if not errors:
        return ""
    return "%s: %s: %s" % (role_name(role), rules_of(role).heading, "; ".join(errors))
