# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The base_os role's derived data (controller side, pure): the parse of the SSH step's one read
of a node, and the ssh_known_hosts lines."""

from __future__ import annotations

import re
from typing import Any, Dict, Iterable, List, Mapping

from ansible_collections.gpucluster.core.plugins.plugin_utils._rules import RuleError
from ansible_collections.gpucluster.core.plugins.plugin_utils._sections import split_sections

_KEY_RE = re.compile(r"^(ssh-|ecdsa-)")
# An OpenSSH public key line: type, base64 key, optional comment.
_PUBLIC_KEY = re.compile(r"^(ssh-|ecdsa-|sk-)\S+ [A-Za-z0-9+/]+={0,3}( .*)?$")
SSH_SECTIONS = ("passwd", "admin_key", "authorized_keys", "host_keys", "known_hosts")
_ATTRIBUTES = re.compile(r"^(absent|\S+:\S+:[0-7]{3,4})$")


def ssh_node_state(text: str) -> Dict[str, Any]:
    """The SSH step's one read of a node (plugin_utils/_sections.py): ``[passwd]`` the admin user's
    getent line (none when the user does not exist), ``[admin_key]`` its public key (none until
    the key pair exists), ``[authorized_keys]`` the lines of its authorized_keys, ``[host_keys]``
    the node's public host keys (none when not read), ``[known_hosts]`` the owner:group:mode of
    ssh_known_hosts (``absent`` when there is none) and then the lines of the role's block in it.
    Returns ``admin_user_exists``, ``admin_key`` (text, empty when none), ``authorized_keys``
    (lines), ``host_keys`` (text), ``known_hosts_attributes`` and ``known_hosts_block`` (lines)."""
    sections = split_sections(text, SSH_SECTIONS, "base_os_ssh_node_state")
    for name in ("passwd", "admin_key"):
        if len(sections[name]) > 1:
            raise RuleError("base_os_ssh_node_state: more than one %s line in the node read" % name)
    for line in sections["admin_key"] + sections["host_keys"]:
        if not _PUBLIC_KEY.match(line):
            raise RuleError("base_os_ssh_node_state: not an SSH public key line: %r" % line)
    known = sections["known_hosts"]
    if not known or not _ATTRIBUTES.match(known[0]):
        raise RuleError("base_os_ssh_node_state: the known_hosts section must start with owner:group:mode or absent")
    return {"admin_user_exists": bool(sections["passwd"]),
            "admin_key": "\n".join(sections["admin_key"]),
            "authorized_keys": [line.strip() for line in sections["authorized_keys"]],
            "host_keys": "\n".join(sections["host_keys"]),
            "known_hosts_attributes": known[0],
            "known_hosts_block": known[1:]}


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
