# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The base_os role's derived data (controller side, pure, no Ansible imports)."""

from __future__ import annotations

import re
from typing import Any, Iterable, List, Mapping

_KEY_RE = re.compile(r"^(ssh-|ecdsa-)")


def known_hosts_lines(host_keys: Mapping[str, str], entries: Iterable[Mapping[str, Any]]) -> List[str]:
    """ssh_known_hosts lines: for each host (in the order given), each of its public host keys
    under the host's inventory name, every cluster name and every address the hosts table gives it.

    ``host_keys``: host -> the text of its /etc/ssh/ssh_host_*_key.pub files (one key a line;
    lines that are not keys are left out, as is a key's comment). ``entries``: the hosts table
    (``cluster_hosts_entries``: host, names, address)."""
    entries = list(entries)
    out: List[str] = []
    for host, text in host_keys.items():
        aliases: List[str] = [host]
        for entry in entries:
            if entry["host"] == host:
                aliases.extend(entry["names"])
        aliases.extend(entry["address"] for entry in entries if entry["host"] == host)
        names = ",".join(dict.fromkeys(aliases))
        for line in text.splitlines():
            if _KEY_RE.match(line):
                out.append("%s %s" % (names, " ".join(line.split()[:2])))
    return out
