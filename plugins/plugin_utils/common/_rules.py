# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Shared building blocks of the roles' input rules (controller side, pure, no Ansible imports).

Every role has one rules module (``_rules_<role>.py`` beside this one) with a function that
takes the role's variables (per host where they are per host) and returns every error at
once, as a list of messages. Each message names the variable, and the host where the value
is per host; a secret's message names the variable and never shows the value. The role's
filter plugin wraps that function; preflight fails with all the messages before any host
is touched.

The checks here return ``None`` when a value is good, or the reason it is not (a phrase
that reads after ``<variable>: ``), so that callers compose them into messages with
``Errors.check``.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple


class RuleError(Exception):
    """Raised by a rules function when its input is not of the expected shape at all."""


@dataclass(frozen=True)
class PlayHosts:
    """The play's hosts as the check sees them: ``batch`` (this batch's active hosts, which read their
    own values), ``hosts`` (every batch's, less those that failed) and ``all`` (every host of the play)."""

    batch: Sequence[str] = ()
    hosts: Sequence[str] = ()
    all: Sequence[str] = ()


@dataclass(frozen=True)
class RoleInput:
    """What a role's rules get (gathered by plugins/plugin_utils/common/_input_rules.py).

    ``hosts``: each host the role's rules read, in order, with its values of every option of the
    role's argument spec (and the context the role's preflight adds); ``shared``: the values every
    host shares, the play's as the run_once host sees them (the secrets too); ``groups``: the
    inventory groups; ``play``: the play's hosts."""

    hosts: Mapping[str, Mapping[str, Any]]
    shared: Mapping[str, Any]
    groups: Mapping[str, Sequence[str]] = field(default_factory=dict)
    play: PlayHosts = PlayHosts()


class Errors:
    """Collects error messages, each naming the variable and, when given, the host."""

    def __init__(self, host: Optional[str] = None) -> None:
        self.host = host
        self.messages: List[str] = []

    def prefix(self, var: str) -> str:
        return ("host '%s': %s" % (self.host, var)) if self.host else var

    def add(self, var: str, reason: str) -> None:
        """Record ``<host>: <var>: <reason>``."""
        self.messages.append("%s: %s" % (self.prefix(var), reason))

    def check(self, var: str, reason: Optional[str]) -> bool:
        """Record ``reason`` when it is not None; True when the value was good."""
        if reason is None:
            return True
        self.add(var, reason)
        return False

    def extend(self, other: "Errors") -> None:
        self.messages.extend(other.messages)

    def mapping_items(self, var: str, value: Any, reason: str) -> Iterator[Tuple[Any, Any]]:
        """The items of ``value`` when it is a mapping; else record ``<var>: <reason> (got <value>)`` and none."""
        if isinstance(value, Mapping):
            yield from value.items()
        else:
            self.add(var, "%s (got %r)" % (reason, value))

    def dict_items(self, var: str, items: Iterable[Any], reason: str = "must be a dict with name",
                   good: Callable[[Mapping[str, Any]], bool] = lambda item: True) -> Iterator[Tuple[str, Mapping[str, Any]]]:
        """``(<var>[<index>], item)`` for each item of a list that is a mapping (and ``good``); for any other,
        record ``<var>[<index>]: <reason> (got <item>)``."""
        for index, item in enumerate(items):
            where = "%s[%d]" % (var, index)
            if isinstance(item, Mapping) and good(item):
                yield where, item
            else:
                self.add(where, "%s (got %r)" % (reason, item))

    def __bool__(self) -> bool:
        return bool(self.messages)


def keyed_entries(entries: Iterable[Mapping[str, Any]], kind: str, key: str, problems: List[str],
                  bad: Callable[[str], Optional[str]], twice: str,
                  same: Callable[[str], str] = lambda value: value) -> Iterator[Tuple[str, Mapping[str, Any]]]:
    """``("<kind>[<index>] (<key>)", entry)`` for each entry of an action's task, the entry named by its
    ``key`` (a path, a unit); ``problems`` gets ``<where>: <bad(key)>`` for a bad key, else ``<where>:
    <twice>`` for one that is ``same`` as an earlier entry's."""
    seen: set = set()
    for index, entry in enumerate(entries):
        value = entry.get(key) or ""
        where = "%s[%d] (%s)" % (kind, index, value or "no " + key)
        reason = bad(value)
        if reason is not None:
            problems.append("%s: %s" % (where, reason))
        elif same(value) in seen:
            problems.append("%s: %s" % (where, twice))
        seen.add(same(value))
        yield where, entry


def for_hosts(hostvars: Mapping[str, Mapping[str, Any]], hosts: Iterable[str],
              check: Callable[[Errors, Mapping[str, Any]], None]) -> List[str]:
    """Run ``check(errors, vars)`` for each host (in order) and return every message."""
    out: List[str] = []
    for host in hosts:
        errors = Errors(host)
        check(errors, hostvars.get(host, {}))
        out.extend(errors.messages)
    return out


def host_values(hostvars: Mapping[str, Mapping[str, Any]], hosts: Iterable[str], names: Iterable[str],
                defaults: Mapping[str, Any]) -> Dict[str, Dict[str, Any]]:
    """Each host's values of ``names``: its own, else the role's ``defaults``; a name neither sets is left out."""
    names = tuple(names)
    out: Dict[str, Dict[str, Any]] = {}
    for host in hosts:
        values = hostvars.get(host, {})
        out[host] = {n: (values[n] if n in values else defaults.get(n)) for n in names if n in values or n in defaults}
    return out


# --- checks: each returns None when good, else the reason -------------------------------

_NAME_RE = re.compile(r"^[a-z_][a-z0-9_-]{0,31}$")
_HOSTNAME_RE = re.compile(r"^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9_-]{0,61}[A-Za-z0-9])?"
                          r"(\.[A-Za-z0-9]([A-Za-z0-9_-]{0,61}[A-Za-z0-9])?)*$")
_TOKEN_RE = re.compile(r"^[^\s\"'#\\,=]+$")
_PORT_RANGE_RE = re.compile(r"^(\d+)-(\d+)$")


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def int_range(value: Any, low: int, high: int) -> Optional[str]:
    """An integer within [low, high]."""
    if not is_int(value):
        return "must be an integer (got %r)" % (value,)
    if not low <= value <= high:
        return "must be within %d-%d (got %d)" % (low, high, value)
    return None


def port(value: Any, low: int = 1) -> Optional[str]:
    """A TCP/UDP port number."""
    return int_range(value, low, 65535)


def port_range(value: Any, low: int = 1) -> Optional[str]:
    """``first-last`` with low <= first < last <= 65535."""
    match = _PORT_RANGE_RE.match(value) if isinstance(value, str) else None
    if not match:
        return "must be \"first-last\" (got %r)" % (value,)
    first, last = int(match.group(1)), int(match.group(2))
    if not low <= first < last <= 65535:
        return "must be \"first-last\" with %d <= first < last <= 65535 (got %r)" % (low, value)
    return None


def abs_path(value: Any) -> Optional[str]:
    """An absolute path, no trailing slash, no empty, ``.`` or ``..`` parts, no blanks."""
    if not isinstance(value, str) or not value.startswith("/"):
        return "must be an absolute path (got %r)" % (value,)
    if value != "/" and (value.endswith("/") or any(
            part in ("", ".", "..") for part in value[1:].split("/"))):
        return "must have no trailing slash and no empty, . or .. parts (got %r)" % (value,)
    if re.search(r"[\s\x00]", value):
        return "must not contain blanks (got %r)" % (value,)
    return None


def posix_name(value: Any) -> Optional[str]:
    """A portable user or group name (useradd's default rule)."""
    if not isinstance(value, str) or not _NAME_RE.match(value):
        return ("must be a user/group name: a lowercase letter or _, then up to 31 lowercase "
                "letters, digits, _ or - (got %r)" % (value,))
    return None


def hostname(value: Any) -> Optional[str]:
    """A host name (dot-separated labels of letters, digits, - and _)."""
    if not isinstance(value, str) or not _HOSTNAME_RE.match(value):
        return "must be a host name (letters, digits, - and _ in dot-separated labels) (got %r)" % (value,)
    return None


def token(value: Any) -> Optional[str]:
    """One word that is safe in a key=value config line or on a command line."""
    if not isinstance(value, str) or not _TOKEN_RE.match(value):
        return "must be one word without blanks, quotes, #, \\, comma or = (got %r)" % (value,)
    return None


def boolean(value: Any) -> Optional[str]:
    """true or false (not a string that reads like one)."""
    if not isinstance(value, bool):
        return "must be true or false (got %r)" % (value,)
    return None


def matches(value: Any, pattern: "re.Pattern[str]", what: str) -> Optional[str]:
    """A string the pattern matches; the reason reads ``must be <what> (got <value>)``."""
    if not isinstance(value, str) or not pattern.match(value):
        return "must be %s (got %r)" % (what, value)
    return None


def one_line(value: Any) -> Optional[str]:
    """Text that stays on one line of a config file."""
    if not isinstance(value, str) or re.search(r"[\r\n\x00]", value):
        return "must be text on one line (got %r)" % (value,)
    return None


def url(value: Any, schemes: Iterable[str] = ("http", "https", "file")) -> Optional[str]:
    """A URL with one of ``schemes``, a non-empty rest and no blanks."""
    schemes = tuple(schemes)
    if isinstance(value, str) and not re.search(r"\s", value):
        scheme, sep, rest = value.partition("://")
        if sep and scheme in schemes and rest:
            return None
    return "must be a %s URL (got %r)" % (" or ".join(s + "://" for s in schemes), value)


def ip_address(value: Any) -> Optional[str]:
    """An IPv4 or IPv6 address."""
    try:
        ipaddress.ip_address(value if isinstance(value, str) else "")
    except ValueError:
        return "must be an IPv4 or IPv6 address (got %r)" % (value,)
    return None


def ip_network(value: Any) -> Optional[str]:
    """A network in CIDR notation with no host bits set."""
    try:
        ipaddress.ip_network(value if isinstance(value, str) else "", strict=True)
    except ValueError as exc:
        return "must be a network in CIDR notation (got %r: %s)" % (value, exc)
    return None


def cidr_with_prefix(value: Any) -> Optional[str]:
    """A network in CIDR notation with its prefix length written out (``10.0.0.0/24``): ipaddress
    reads a bare ``10.0.0.0`` as the single address 10.0.0.0/32, which is never what a network
    setting means."""
    if isinstance(value, str) and "/" not in value:
        return "must be a network in CIDR notation with its prefix length, such as 10.0.0.0/24 (got %r)" % (value,)
    return ip_network(value)


def overlapping(value: str, others: Iterable[Any]) -> List[str]:
    """Those of ``others`` (networks as CIDR text or addresses) that share an address with the network
    ``value``, as written; ``others`` that do not parse are left out (their own checks name them)."""
    network = ipaddress.ip_network(value, strict=False)
    out = []
    for other in others:
        try:
            parsed = ipaddress.ip_network(other, strict=False) if isinstance(other, str) else None
        except ValueError:
            parsed = None
        if parsed is not None and parsed.version == network.version and parsed.overlaps(network):
            out.append(other)
    return out


def secret(value: Any, min_length: int = 1) -> Optional[str]:
    """A secret string of at least ``min_length`` characters; the reason never shows it."""
    if not isinstance(value, str) or len(value) < min_length:
        return "must be set (a string of at least %d characters; the value is not shown)" % min_length
    return None


def duplicates(values: Iterable[Any]) -> List[Any]:
    """The values that occur more than once, in order of their second occurrence."""
    seen: set = set()
    out: List[Any] = []
    for value in values:
        if value in seen and value not in out:
            out.append(value)
        seen.add(value)
    return out


_PIP_ENV_RE = re.compile(r"^PIP_[A-Z0-9_]+$")


def pip_env(errors: Errors, var: str, value: Any) -> None:
    """pip's environment for a role's pip installs (``PIP_INDEX_URL``...): ``PIP_*`` names to values
    on one line; empty or None is none."""
    for name, item in errors.mapping_items(var, value or {}, "must map PIP_* variables to values"):
        if not isinstance(name, str) or not _PIP_ENV_RE.match(name):
            errors.add(var, "%r is not a PIP_* variable name" % (name,))
        elif one_line(str(item)):
            errors.add("%s.%s" % (var, name), one_line(str(item)))
