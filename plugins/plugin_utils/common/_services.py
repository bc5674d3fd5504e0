# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the services action plugin decides on the controller (pure, no Ansible imports): the
``systemctl show`` command that reads, in one call, the state of every unit a task names, the
parse of its output, and which entries differ from what the task asks for.

An entry is ``{"name": unit, "state": "started" | "stopped" | None, "enabled": bool | None}``.
The comparison follows ansible.builtin.systemd_service's own: a unit that is active or activating
is started; one that is active, activating or deactivating is not stopped; ``systemctl
is-enabled`` says enabled for the unit file states enabled, enabled-runtime and static. Anything
this module cannot judge for certain (a unit not loaded, a generated, alias or indirect unit file)
differs, so the builtin module decides."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from ansible_collections.gpucluster.core.plugins.plugin_utils.common._rules import keyed_entries

PROPERTIES = ("LoadState", "ActiveState", "UnitFileState")
_NAME = re.compile(r"^[A-Za-z0-9:_.@\\-]+$")
_RUNNING = ("active", "activating")
_ENABLED = ("enabled", "enabled-runtime", "static")


class ServicesError(Exception):
    """An entry or a state listing of the wrong shape."""


@dataclass(frozen=True)
class Observed:
    """What systemd says of one unit."""

    load: str
    active: str
    unit_file: str


def _bad_name(name: str) -> str | None:
    if not _NAME.match(name) or name.startswith("-"):
        return "name must be one systemd unit name (letters, digits, and :_.@\\-), not a pattern"
    return None


def check_entries(entries: list[dict]) -> list[str]:
    """Every problem of the entries at once, each naming the entry by its place and name."""
    problems: list[str] = []
    for where, entry in keyed_entries(entries, "services", "name", problems, _bad_name, "the unit appears more than once", _unit):
        if entry.get("state") is None and entry.get("enabled") is None:
            problems.append("%s: give state, enabled or both" % where)
    return problems


def _unit(name: str) -> str:
    """The unit name systemctl reads: a name without a unit type is a service."""
    return name if "." in name.rsplit("@", 1)[-1] else name + ".service"


def state_command(names: list[str]) -> str:
    """One ``systemctl show`` of every unit, read-only (so it runs in check mode too): one block of
    ``key=value`` lines per unit, in the order given, blocks separated by an empty line."""
    return shlex.join(["systemctl", "show", "--property=" + ",".join(PROPERTIES), "--"] + list(names))


def parse_state(text: str, count: int) -> list[Observed]:
    """The state_command output for ``count`` units, in their order."""
    blocks: list[dict[str, str]] = []
    current: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            if current:
                blocks.append(current)
                current = {}
            continue
        key, sep, value = line.strip().partition("=")
        if not sep or key not in PROPERTIES or key in current:
            raise ServicesError("unexpected line in the state read: %r" % line)
        current[key] = value
    if current:
        blocks.append(current)
    if len(blocks) != count:
        raise ServicesError("the state read gave %d units for the %d asked" % (len(blocks), count))
    for index, block in enumerate(blocks):
        missing = [key for key in PROPERTIES if key not in block]
        if missing:
            raise ServicesError("the state read of unit %d lacks %s" % (index, ", ".join(missing)))
    return [Observed(block["LoadState"], block["ActiveState"], block["UnitFileState"]) for block in blocks]


def differs(entry: dict, observed: Observed) -> bool:
    """Whether the unit differs from the entry, or cannot be judged here."""
    if observed.load != "loaded":
        return True
    state = entry.get("state")
    if state == "started" and observed.active not in _RUNNING:
        return True
    if state == "stopped" and observed.active in _RUNNING + ("deactivating",):
        return True
    enabled = entry.get("enabled")
    if enabled is True and observed.unit_file not in _ENABLED:
        return True
    if enabled is False and observed.unit_file != "disabled":
        return True
    return False
