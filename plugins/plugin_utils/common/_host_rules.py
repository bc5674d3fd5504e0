# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The frame of a role whose input rules look at one host's values at a time (controller side, pure,
no Ansible imports): the rules run over each host of the batch, every error at once."""

from __future__ import annotations

from typing import Any, Callable, List, Mapping

from ansible_collections.gpucluster.core.plugins.plugin_utils.common._rules import Errors, RoleInput, RuleError

HostRules = Callable[[Errors, Mapping[str, Any]], None]
HostErrors = Callable[[Mapping[str, Any], str], List[str]]


def host_errors(function: str, rules: HostRules, values: Mapping[str, Any], host: str) -> List[str]:
    """The ``rules`` over one host's values, as messages naming host and variable; ``function`` names
    the caller in the error for an input that is not a dict."""
    if not isinstance(values, Mapping):
        raise RuleError("%s: the input must be a dict of the role's variables" % function)
    errors = Errors(host)
    rules(errors, values)
    return errors.messages


def batch_errors(given: RoleInput, errors_of: HostErrors) -> List[str]:
    """``errors_of`` over this batch's hosts, each with its values as it sees them (the defaults are
    templated per host), host by host."""
    return [message for host, values in given.hosts.items() for message in errors_of(values, host)]
