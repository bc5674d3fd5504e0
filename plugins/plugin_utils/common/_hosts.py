# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The host of an inventory group that does a play's one-off work (kubectl, Helm, join tokens).
Pure, no Ansible imports."""

from __future__ import annotations

from typing import Iterable, Sequence

from ansible_collections.gpucluster.core.plugins.plugin_utils.common._rules import RuleError


def first_host_in(group: Sequence[str], hosts: Iterable[str]) -> str:
    """The first host of ``group``, in the group's (inventory) order, that is in ``hosts`` (the
    play's hosts, or those of them in a given state); else the group's first, which may be outside
    the play (as with --limit); '' for an empty group. Never a set's order: the choice is the same
    from one run to the next."""
    if isinstance(group, str) or not isinstance(group, Sequence):
        raise RuleError("first_host_in: the group must be a list of host names, not %r" % (group,))
    if isinstance(hosts, str):
        raise RuleError("first_host_in: the hosts must be a list of host names, not %r" % (hosts,))
    wanted = set(hosts)
    return next((host for host in group if host in wanted), group[0] if group else "")
