# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The container_toolkit role's checks of what it read from the hosts (controller side, pure, no
Ansible imports): which toolkit versions the repository lacks, and which hosts a state read failed on.

The filters in plugins/filter/container_toolkit_checks.py wrap these functions."""

from __future__ import annotations

from typing import Any, Dict, Iterable, List, Mapping

from ansible_collections.gpucluster.core.plugins.plugin_utils._rules import RuleError


class CheckError(RuleError):
    """The input is not of the expected shape at all."""


def offered_versions(lines: Iterable[str]) -> Dict[str, List[str]]:
    """The versions by package from ``name | version | source`` lines (apt-cache madison, or
    dnf repoquery with that query format), in the order listed; other lines are ignored."""
    offered: Dict[str, List[str]] = {}
    for line in lines:
        if not isinstance(line, str):
            raise CheckError("container_toolkit_missing_versions: the input must be lines of text (got %r)" % (line,))
        fields = line.split("|")
        if len(fields) >= 3:
            offered.setdefault(fields[0].strip(), []).append(fields[1].strip())
    return offered


def missing_versions(lines: Iterable[str], packages: Iterable[str], version: str, repo_url: str) -> List[str]:
    """One sentence per set of packages lacking ``version`` that the repository offers the same versions of,
    in the order of ``packages``; empty when every package has it."""
    if isinstance(lines, (str, bytes)) or isinstance(packages, (str, bytes)):
        raise CheckError("container_toolkit_missing_versions: the lines and the packages must be lists")
    offered = offered_versions(lines)
    groups: Dict[str, List[str]] = {}
    for name in packages:
        have = offered.get(name, [])
        if version not in have:
            groups.setdefault(", ".join(have) or "no version of it", []).append(name)
    return ["%s %s %s not in %s (it has: %s)" % (", ".join(names), version, "is" if len(names) == 1 else "are",
                                                 repo_url, have)
            for have, names in groups.items()]


def failed_hosts(hosts: Iterable[str], hostvars: Mapping[str, Mapping[str, Any]], result: str, success_key: str
                 ) -> List[str]:
    """``host 'NAME': MESSAGE`` for each host whose registered ``result`` lacks ``success_key`` (the key the
    module returns when it succeeds): the read failed there (with failed_when: false, so that every host
    is read before one check refuses them all). Hosts where the task was skipped or did not run pass."""
    if isinstance(hosts, (str, bytes)):
        raise CheckError("container_toolkit_failed_hosts: the input must be a list of host names")
    messages = []
    for host in hosts:
        registered = hostvars[host].get(result)
        if not isinstance(registered, Mapping) or registered.get("skipped") or success_key in registered:
            continue
        messages.append("host '%s': %s" % (host, registered.get("msg") or "%s failed without a message" % result))
    return messages
