# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The common role's firewall entry point (controller side, pure, no Ansible imports).

A port the collection opens is reachable from the cluster's networks only (its ``sources``: the
base_os networks and the site's admin networks), except the ``public`` ones (SSH), which stay open
to every source. ``firewall_state`` reads what the active firewall has (the entry point's probe, or
a caller's own read); ``firewall_plan`` says which rules it lacks and which of the caller's older
rules, open to every source, go now that the port has sources.

Each rule is a key ``<port>/<proto> <source>``: the port as ``N`` or ``FIRST-LAST``, the source a
network with its prefix length (``10.0.0.0/24``, ``10.0.0.5/32``) or ``any``.

ufw: ``ufw allow from <source> to any port <port> proto <proto>``, one rule per source, with the
calling role's comment; an any-source rule the caller made before (the same comment) is deleted.
firewalld: a rich rule per source in the default zone
(``rule family="ipv4" source address="<source>" port port="<port>" protocol="<proto>" accept``); a
public port as a plain port of the default zone. Rich rules rather than a zone of the cluster's
networks: binding the networks to a zone of their own would move all their traffic out of the
default zone, so every service the site opened there (SSH included) would stop answering the
cluster. The rich rules only add. An any-source port of the default zone that the caller now opens
with sources is removed (firewalld keeps no note of who opened it).
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from ansible_collections.gpucluster.core.plugins.plugin_utils.common._rules import RuleError

ANY = "any"
_PORT_RE = re.compile(r"^([0-9]+)(?:[-:]([0-9]+))?/(tcp|udp)$")
# A line of `ufw status`: To, Action, From, an optional comment. A v6 line mirrors a v4 rule of the
# same port open to every source (ufw adds and deletes both at once): it is not read.
_UFW_RE = re.compile(r"^(?P<to>\S+)(?P<v6> \(v6\))?\s+ALLOW(?: IN)?\s+(?P<src>\S+)(?: \(v6\))?"
                     r"(?:\s+#\s?(?P<comment>.*?))?\s*$")
_RICH_RE = re.compile(r'^rule family="ipv[46]" source address="([^"]+)" port port="([0-9]+(?:-[0-9]+)?)" '
                      r'protocol="(tcp|udp)" accept$')


def _port(spec: Any, var: str) -> Tuple[str, str]:
    """``(port, proto)`` of ``PORT/PROTO`` or ``FIRST-LAST/PROTO`` (``FIRST:LAST`` as ufw lists it)."""
    match = _PORT_RE.match(spec) if isinstance(spec, str) else None
    if not match:
        raise RuleError("%s: must be PORT/PROTO or FIRST-LAST/PROTO with proto tcp or udp (got %r)" % (var, spec))
    first, last, proto = match.groups()
    return (first if last is None else "%s-%s" % (first, last)), proto


def source(value: Any, var: str) -> str:
    """A source network as the keys write it (``10.0.0.0/24``), from CIDR notation."""
    try:
        if not isinstance(value, str) or "/" not in value:
            raise ValueError("no prefix length")
        return ipaddress.ip_network(value, strict=True).with_prefixlen
    except ValueError as exc:
        raise RuleError("%s: must be a network in CIDR notation such as 10.0.0.0/24 (got %r: %s)" % (var, value, exc)) from None


def _listed_source(text: str) -> Optional[str]:
    """A source as ufw or firewalld lists it (``Anywhere``, ``10.0.0.5``, ``10.0.0.0/24``); None when
    it is no network (an interface, a MAC, an ipset)."""
    if text in ("Anywhere", ANY):
        return ANY
    try:
        return ipaddress.ip_network(text, strict=False).with_prefixlen
    except ValueError:
        return None


def key(port: str, proto: str, src: str) -> str:
    return "%s/%s %s" % (port, proto, src)


def _ufw_rules(lines: Sequence[str]) -> List[List[str]]:
    rules = []
    for line in lines:
        match = _UFW_RE.match(line.strip())
        if not match or match.group("v6"):
            continue
        src = _listed_source(match.group("src"))
        to = match.group("to")
        protos = [to.rsplit("/", 1)[1]] if "/" in to else ["tcp", "udp"]
        ports = to.rsplit("/", 1)[0]
        if src is None or not re.match(r"^[0-9]+(:[0-9]+)?$", ports):
            continue
        for proto in protos:
            rules.append([key(ports.replace(":", "-"), proto, src), match.group("comment") or ""])
    return rules


def _firewalld_rules(lines: Sequence[str]) -> List[List[str]]:
    rules = []
    for line in lines:
        kind, _sep, rest = line.strip().partition(" ")
        if kind == "port":
            for spec in rest.split():
                if _PORT_RE.match(spec):
                    port, proto = _port(spec, "port")
                    rules.append([key(port, proto, ANY), ""])
        elif kind == "rich":
            match = _RICH_RE.match(rest.strip())
            src = _listed_source(match.group(1)) if match else None
            if match and src:
                rules.append([key(match.group(2), match.group(3), src), ""])
    return rules


def firewall_state(text: str) -> Dict[str, Any]:
    """The firewall entry point's probe, read: its first line names the active firewall (``ufw``,
    ``firewalld`` or ``none``); then, for ufw, the ``ALLOW`` lines of ``ufw status`` each after
    ``rule ``; for firewalld, ``port <ports of the default zone>`` and each rich rule after
    ``rich ``. Returns ``{active, rules}``, ``rules`` the ``[key, comment]`` of each port rule."""
    if not isinstance(text, str):
        raise RuleError("firewall_state: the probe's output must be text (got %r)" % (text,))
    lines = text.splitlines()
    active = lines[0].strip() if lines else "none"
    if active not in ("ufw", "firewalld", "none"):
        raise RuleError("firewall_state: the probe names no firewall (ufw, firewalld, none) (got %r)" % (active,))
    if active == "ufw":
        return {"active": active, "rules": _ufw_rules([line[5:] for line in lines[1:] if line.startswith("rule ")])}
    if active == "firewalld":
        return {"active": active, "rules": _firewalld_rules(lines[1:])}
    return {"active": "none", "rules": []}


def caller_state(state: Mapping[str, Any]) -> Dict[str, Any]:
    """A caller's own read (``common_firewall_state``) as ``{active, rules}``: ``rules`` as they are;
    ``lines``, the lines the entry point's probe prints after its first (``firewall_state``); else
    ``open``, the ports the firewall lists (as ``firewall-cmd --list-ports``, or the first column of
    ufw's ALLOW lines), read as open to every source with no comment."""
    if not isinstance(state, Mapping) or state.get("active") not in ("ufw", "firewalld", "none"):
        raise RuleError("common_firewall_state: must be a dict with active (ufw, firewalld or none) and open (got %r)"
                        % (state,))
    if "rules" in state:
        return {"active": state["active"], "rules": [list(rule) for rule in state["rules"]]}
    if "lines" in state:
        return firewall_state("\n".join([state["active"]] + [str(line) for line in state["lines"]]))
    rules = []
    for spec in state.get("open") or []:
        if isinstance(spec, str) and _PORT_RE.match(spec):
            port, proto = _port(spec, "common_firewall_state.open")
            rules.append([key(port, proto, ANY), ""])
    return {"active": state["active"], "rules": rules}


def _rule(active: str, port: str, proto: str, src: str) -> Dict[str, str]:
    """One rule as the tasks pass it: ``ufw_port`` (``FIRST:LAST``), ``port`` (``PORT/PROTO``),
    ``proto``, ``source`` (empty for every source) and, for firewalld with a source, ``rich_rule``."""
    rich = ""
    if active == "firewalld" and src != ANY:
        family = "ipv6" if ":" in src else "ipv4"
        rich = 'rule family="%s" source address="%s" port port="%s" protocol="%s" accept' % (family, src, port, proto)
    return {"key": key(port, proto, src), "port": "%s/%s" % (port, proto), "ufw_port": port.replace("-", ":"),
            "proto": proto, "source": "" if src == ANY else src, "rich_rule": rich}


def firewall_plan(state: Mapping[str, Any], ports: Sequence[str], sources: Sequence[str],
                  public: Sequence[str] = (), comment: str = "") -> Dict[str, Any]:
    """What the active firewall lacks for the caller's ``ports`` (open to each of ``sources``) and
    ``public`` ports (open to every source), and the caller's older any-source rules of ``ports``
    that go. With no ``sources`` (no cluster network known), ``ports`` are opened to every source
    as before, and named in ``unrestricted``.

    ``state`` is ``{active, rules}`` (``firewall_state``, ``caller_state``). Returns ``add`` and
    ``remove`` (each rule as ``_rule`` gives it), ``unrestricted`` (``PORT/PROTO``) and ``state``,
    the state once they are applied (the next caller of the run reads it)."""
    active = state["active"]
    nets = list(dict.fromkeys(source(value, "common_firewall_sources[%d]" % index) for index, value in enumerate(sources)))
    wanted_public = [_port(spec, "common_firewall_public_ports[%d]" % i) for i, spec in enumerate(public)]
    restricted = [p for p in (_port(spec, "common_firewall_ports[%d]" % i) for i, spec in enumerate(ports))
                  if p not in wanted_public]
    if active not in ("ufw", "firewalld"):
        return {"add": [], "remove": [], "unrestricted": [], "state": {"active": "none", "rules": []}}
    rules = [list(rule) for rule in state["rules"]]
    have = {rule[0] for rule in rules}
    wanted = [(port, proto, ANY) for port, proto in wanted_public]
    wanted += [(port, proto, src) for port, proto in restricted for src in (nets or [ANY])]
    add = [_rule(active, *item) for item in dict.fromkeys(wanted) if key(*item) not in have]
    remove = []
    if nets:
        for port, proto in dict.fromkeys(restricted):
            owners = [rule[1] for rule in rules if rule[0] == key(port, proto, ANY)]
            if owners and (active == "firewalld" or comment and comment in owners):
                remove.append(_rule(active, port, proto, ANY))
    gone = {rule["key"] for rule in remove}
    after = [rule for rule in rules if rule[0] not in gone] + [[rule["key"], comment] for rule in add]
    unrestricted = [] if nets else ["%s/%s" % p for p in dict.fromkeys(restricted)]
    return {"add": add, "remove": remove, "unrestricted": unrestricted, "state": {"active": active, "rules": after}}
