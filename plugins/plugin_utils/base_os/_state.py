# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The base_os role's derived data (controller side, pure): the parse of the role's one read of
a node, and the ssh_known_hosts lines."""

from __future__ import annotations

import re
from typing import Any, Dict, Iterable, List, Mapping

from ansible_collections.gpucluster.core.plugins.plugin_utils.common._rules import RuleError
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._sections import split_sections

_KEY_RE = re.compile(r"^(ssh-|ecdsa-)")
# An OpenSSH public key line: type, base64 key, optional comment.
_PUBLIC_KEY = re.compile(r"^(ssh-|ecdsa-|sk-)\S+ [A-Za-z0-9+/]+={0,3}( .*)?$")
SSH_SECTIONS = ("passwd", "admin_key", "authorized_keys", "host_keys", "known_hosts")
_ATTRIBUTES = re.compile(r"^(absent|\S+:\S+:[0-7]{3,4})$")


STEPS = ("hostname", "default_target", "swaps", "ssh")
_WHERE = "base_os_node_state"


def node_state(text: str, steps: List[str]) -> Dict[str, Any]:
    """The role's one read of a node (plugin_utils/common/_sections.py), with exactly the sections of the
    ``steps`` asked for (those that are on): ``hostname``, a ``[hostname]`` section with ``static=``
    /etc/hostname and ``running=`` uname -n; ``default_target``, what systemctl get-default says;
    ``swaps``, /proc/swaps (a header, then one line per active swap area); ``ssh``, the SSH step's
    five sections (SSH_SECTIONS, see ``_ssh``). Returns ``hostname`` ({static, running}),
    ``default_target``, ``swap_areas`` (count) and ``ssh``, each None when its step was not asked for."""
    unknown = [name for name in steps if name not in STEPS]
    if unknown:
        raise RuleError("%s: unknown steps asked for: %s" % (_WHERE, ", ".join(unknown)))
    sections = [name for name in steps if name != "ssh"] + (list(SSH_SECTIONS) if "ssh" in steps else [])
    found = split_sections(text, sections, _WHERE)
    out: Dict[str, Any] = {"hostname": None, "default_target": None, "swap_areas": None, "ssh": None}
    if "hostname" in found:
        pairs = dict(line.partition("=")[::2] for line in found["hostname"])
        if sorted(pairs) != ["running", "static"] or len(found["hostname"]) != 2:
            raise RuleError("%s: the hostname section must be one static= and one running= line, not %r"
                            % (_WHERE, found["hostname"]))
        out["hostname"] = {"static": pairs["static"].strip(), "running": pairs["running"].strip()}
    if "default_target" in found:
        if len(found["default_target"]) != 1:
            raise RuleError("%s: the default_target section must be one line, not %r" % (_WHERE, found["default_target"]))
        out["default_target"] = found["default_target"][0].strip()
    if "swaps" in found:
        if not found["swaps"] or not found["swaps"][0].startswith("Filename"):
            raise RuleError("%s: the swaps section must start with /proc/swaps' header, not %r" % (_WHERE, found["swaps"]))
        out["swap_areas"] = len(found["swaps"]) - 1
    if "ssh" in steps:
        out["ssh"] = _ssh(found)
    return out


def _ssh(sections: Dict[str, List[str]]) -> Dict[str, Any]:
    """The SSH step's sections: ``[passwd]`` the admin user's getent line (none when the user
    does not exist), ``[admin_key]`` its public key (none until the key pair exists),
    ``[authorized_keys]`` the lines of its authorized_keys, ``[host_keys]`` the node's public host
    keys (none when not read), ``[known_hosts]`` the owner:group:mode of ssh_known_hosts
    (``absent`` when there is none) and then the lines of the role's block in it. Returns
    ``admin_user_exists``, ``admin_key`` (text, empty when none), ``authorized_keys`` (lines),
    ``host_keys`` (text), ``known_hosts_attributes`` and ``known_hosts_block`` (lines)."""
    for name in ("passwd", "admin_key"):
        if len(sections[name]) > 1:
            raise RuleError("%s: more than one %s line in the node read" % (_WHERE, name))
    for line in sections["admin_key"] + sections["host_keys"]:
        if not _PUBLIC_KEY.match(line):
            raise RuleError("%s: not an SSH public key line: %r" % (_WHERE, line))
    known = sections["known_hosts"]
    if not known or not _ATTRIBUTES.match(known[0]):
        raise RuleError("%s: the known_hosts section must start with owner:group:mode or absent" % _WHERE)
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
    (``cluster_hosts_entries``: host, names, address). Each host's entries are found once, not by
    a scan of the table per host: with 1,000 hosts every host renders this block, and a scan per
    host made each render cost the square of the cluster's size."""
    names_of: Dict[str, List[str]] = {}
    addresses_of: Dict[str, List[str]] = {}
    for entry in entries:
        names_of.setdefault(entry["host"], []).extend(entry["names"])
        addresses_of.setdefault(entry["host"], []).append(entry["address"])
    out: List[str] = []
    for host, text in host_keys.items():
        aliases = [host] + names_of.get(host, []) + addresses_of.get(host, [])
        names = ",".join(dict.fromkeys(aliases))
        for line in text.splitlines():
            if _KEY_RE.match(line):
                out.append("%s %s" % (names, " ".join(line.split()[:2])))
    return out
