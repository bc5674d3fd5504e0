# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What every host of a group reported, for data that needs all of them (SSH host keys, ...).

A host that is unreachable or failed in this run, or outside it (``--limit``), has no fresh
value; its hostvars still hold what it reported in an earlier run when a fact cache keeps
cacheable facts. So a value comes from this run when the host is still in the play, else from
the fact cache, else it is missing: the caller decides (skip the write, keep the old lines)
rather than write the data without the host. Controller side, pure, no Ansible imports.
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence


def reported(hostvars: Mapping[str, Mapping[str, Any]], hosts: Sequence[str], live: Iterable[str],
             name: str, label: Optional[str] = None) -> Dict[str, Any]:
    """``values`` (host -> value, in the order of ``hosts``), ``from_cache`` and ``missing``
    (host lists), and ``message`` (what was taken from the cache or is missing, calling the
    data ``label`` or else ``name``; empty when every host reported in this run). A value of
    None or an empty string counts as missing."""
    label = label or name
    live_hosts = set(live)
    values: Dict[str, Any] = {}
    from_cache: List[str] = []
    missing: List[str] = []
    for host in hosts:
        value = hostvars[host].get(name) if host in hostvars else None
        if value is None or value == "":
            missing.append(host)
            continue
        values[host] = value
        if host not in live_hosts:
            from_cache.append(host)
    parts = []
    if from_cache:
        parts.append("%s of %s from the fact cache (not in this run or failed in it)" % (label, ", ".join(from_cache)))
    if missing:
        parts.append("no %s known for %s (not in this run or failed in it, and not in the fact cache)"
                     % (label, ", ".join(missing)))
    return {"values": values, "from_cache": from_cache, "missing": missing, "message": "; ".join(parts)}
