# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the packages action plugin decides on the controller: which of the requested apt package
specs a node already satisfies, from one ``dpkg-query`` listing (pure, no Ansible imports).

A spec is ``name`` (any installed version) or ``name=version`` (exactly that version; ``*`` in the
version is a wildcard, as apt reads it). Anything this module cannot judge for certain (an
architecture qualifier, a version relation such as ``>=``, a name dpkg does not list) counts as
pending, so apt itself decides: the shortcut is only ever taken when nothing is to do."""

from __future__ import annotations

import fnmatch
import re

# The dpkg-query format the action plugin asks for: name, version, status abbreviation.
DPKG_QUERY_FORMAT = "${Package}\\t${Version}\\t${db:Status-Abbrev}\\n"

# apt's package names (Debian policy 5.6.1): lower case letters, digits, + - . ; two or more.
_NAME = re.compile(r"^[a-z0-9][a-z0-9+.-]+$")


class PackagesError(Exception):
    """A package spec or a dpkg-query listing of the wrong shape."""


def dpkg_query_names(specs: list[str]) -> list[str]:
    """The package names to ask dpkg-query about: those of the specs it can judge, in order, once."""
    names: list[str] = []
    for spec in specs:
        name = _split(spec)[0]
        if name is not None and name not in names:
            names.append(name)
    return names


def parse_dpkg_query(text: str) -> dict[str, str]:
    """``{name: version}`` of the packages dpkg lists as installed (status ``?i`` with no error
    flag: ``ii`` or a held ``hi``) in output of DPKG_QUERY_FORMAT. Packages in other states
    (config files only, half installed, unpacked) are left out: apt has work to do on them."""
    installed: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != 3 or not fields[0]:
            raise PackagesError("dpkg-query line %d is not 'name<TAB>version<TAB>status': %r" % (number, line))
        name, version, status = fields
        status = status.rstrip()
        if len(status) >= 2 and status[1] == "i" and len(status.strip()) == 2 and version:
            installed[name] = version
    return installed


def selections(text: str) -> dict[str, str]:
    """``{name: selection}`` (``hold``, ``install``, ...) of the installed packages in output of
    DPKG_QUERY_FORMAT: the first letter of the status abbreviation (h hold, i install, r remove,
    p purge, u unknown), for the packages parse_dpkg_query counts as installed."""
    words = {"h": "hold", "i": "install", "r": "deinstall", "p": "purge", "u": "unknown"}
    installed = parse_dpkg_query(text)
    out: dict[str, str] = {}
    for line in text.splitlines():
        fields = line.split("\t")
        if len(fields) == 3 and fields[0] in installed:
            out[fields[0]] = words.get(fields[2][:1], "unknown")
    return out


def check_selection_names(hold: list[str], release: list[str]) -> None:
    """Refuse a hold or release entry that is not one package name, or a name in both."""
    for names, option in ((hold, "hold"), (release, "release")):
        bad = [name for name in names if not isinstance(name, str) or not _NAME.match(name)]
        if bad:
            raise PackagesError("%s takes package names, not %s" % (option, ", ".join(map(repr, bad))))
    both = sorted(set(hold) & set(release))
    if both:
        raise PackagesError("a package cannot be both held and released: %s" % ", ".join(both))


def selection_changes(hold: list[str], release: list[str], before: dict[str, str], installed_now: list[str]) -> list[tuple[str, str]]:
    """``(name, selection)`` pairs for dpkg --set-selections: ``hold`` for each name of ``hold``
    that is installed and not held (``before``) or that apt installed or upgraded in this task
    (``installed_now``: apt may drop the hold of a held package it moves to a new pin), ``install``
    for each held name of ``release``. A name not installed is left alone (check mode on a fresh
    node)."""
    check_selection_names(hold, release)
    changes = [(name, "hold") for name in dict.fromkeys(hold)
               if name in installed_now or (name in before and before[name] != "hold")]
    changes += [(name, "install") for name in dict.fromkeys(release) if before.get(name) == "hold"]
    return changes


def pending_specs(specs: list[str], installed: dict[str, str]) -> list[str]:
    """The specs, in order, that the installed packages do not satisfy for certain."""
    if not isinstance(specs, list) or not all(isinstance(spec, str) and spec for spec in specs):
        raise PackagesError("name must be a list of package names or name=version specs, got %r" % (specs,))
    pending: list[str] = []
    for spec in specs:
        name, version = _split(spec)
        have = installed.get(name) if name is not None else None
        if have is None:
            pending.append(spec)
        elif version is not None and not (fnmatch.fnmatchcase(have, version) if "*" in version else have == version):
            pending.append(spec)
    return pending


def _split(spec: str) -> tuple[str | None, str | None]:
    """(name, version or None) of a spec this module can judge; (None, None) for any other."""
    name, sep, version = spec.partition("=")
    if not _NAME.match(name) or (sep and not version) or any(op in spec for op in ("<", ">")):
        return None, None
    return name, (version if sep else None)


def installed_versions(text: str, pkg_mgr: str) -> dict[str, str]:
    """``{name: version}`` of the installed packages in a query's output: ``dpkg-query -W
    --showformat=DPKG_QUERY_FORMAT`` on apt hosts, ``rpm -q --qf '%{NAME}\\t%{VERSION}\\n'`` on the others
    (whose "package X is not installed" lines are left out)."""
    if pkg_mgr == "apt":
        return parse_dpkg_query(text)
    installed: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or (line.startswith("package ") and line.endswith(" is not installed")):
            continue
        fields = line.split("\t")
        if len(fields) != 2 or not fields[0] or not fields[1]:
            raise PackagesError("rpm line %d is not 'name<TAB>version': %r" % (number, line))
        installed[fields[0]] = fields[1]
    return installed


# A package name or glob (cuda-drivers*) and a version as apt preferences take them: Debian's
# characters and apt's * and ? wildcards.
_PIN_PACKAGE = re.compile(r"^[a-z0-9*?][a-z0-9+.*?-]*$")
_PIN_VERSION = re.compile(r"^[A-Za-z0-9.+~:*?-]+$")


def apt_preferences(pins: list[dict], header: str) -> str:
    """The text of an apt preferences file that keeps each ``{name, version}`` of ``pins`` on its
    version (Pin-Priority 1001: apt neither upgrades past it nor picks another version for a
    dependency), under ``header`` (the ansible_managed comment)."""
    if not isinstance(pins, list):
        raise PackagesError("apt_preferences takes a list of {name, version}, got %r" % (pins,))
    lines = [header.rstrip("\n"), "# apt neither upgrades these packages past their version nor picks another for a dependency."]
    for index, pin in enumerate(pins):
        name = pin.get("name") if isinstance(pin, dict) else None
        version = pin.get("version") if isinstance(pin, dict) else None
        if not isinstance(name, str) or not _PIN_PACKAGE.match(name):
            raise PackagesError("apt_preferences: pin %d has no package name or glob, got %r" % (index, pin))
        if not isinstance(version, str) or not _PIN_VERSION.match(version):
            raise PackagesError("apt_preferences: pin %d (%s) has no version such as 550.54.15-1 or 550.*, got %r"
                                % (index, name, version))
        lines += ["", "Package: %s" % name, "Pin: version %s" % version, "Pin-Priority: 1001"]
    return "\n".join(lines) + "\n"


# The role's pin files: /etc/apt/preferences.d/gpucluster-<name>.
_PIN_NAME = re.compile(r"^[a-z0-9][a-z0-9-]*$")


def apt_pin_file(pins: list[dict], name: str, header: str) -> dict:
    """The gpucluster.core.files entry of the pin file ``name``: its preferences (apt_preferences)
    owned by root, 0644; absent when nothing is pinned."""
    if not isinstance(name, str) or not _PIN_NAME.match(name):
        raise PackagesError("apt_pin_file: the name must be lower case letters, digits and -, got %r" % (name,))
    dest = "/etc/apt/preferences.d/gpucluster-" + name
    if pins == []:
        return {"dest": dest, "state": "absent"}
    return {"dest": dest, "content": apt_preferences(pins, header), "owner": "root", "group": "root", "mode": "0644"}
