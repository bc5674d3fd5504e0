# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The slurm role's node and GPU lines (controller side, pure, no Ansible imports).

slurm.conf's NodeName lines and gres.conf's lines say what the scheduler knows of each compute
node. A node that failed or was unreachable in this run, or that is outside it (``--limit``),
must keep the definition the scheduler has, or slurmctld would restart with the node written
without its CPUs, memory and GPUs. So each compute node's lines come from, in this order:

1. this run: the node is still in the play and reported its hardware (``slurmd -C`` and
   gres_conf);
2. the current files on the host that renders them (the node's lines in its slurm.conf and
   gres.conf): the scheduler's last known definition;
3. the fact cache: what the node reported in an earlier run (hostvars of a host outside the
   run hold its cached facts);
4. nowhere: the node is left out of both files (and of the partitions), with a warning,
   rather than written without resources.

Lines are grouped as the role always wrote them: nodes with the same definition share one
line, groups sorted by their text, hosts in inventory order, so a run where nothing changed
renders the same bytes.
"""

from __future__ import annotations

import itertools
import re
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence

from ansible_collections.gpucluster.core.plugins.module_utils._hostlist import HostlistError, compress, expand
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._rules import RuleError

NODE_STATE = "State=UNKNOWN"
# slurmd -C's words that are no part of a node's definition.
_NOT_DEFINITION = ("NodeName", "UpTime")
SOURCES = ("run", "file", "cache")


def _jinja_int(value: Any) -> int:
    """``value | int`` as Jinja computes it: "42.23" and 42.23 give 42, anything else 0."""
    try:
        return int(value, 10) if isinstance(value, str) else int(value)
    except (TypeError, ValueError):
        try:
            return int(float(value))
        except (TypeError, ValueError):
            return 0


def node_definition(slurmd_c: str, memory_fraction: float, gres: str = "", features: Sequence[str] = (),
                    weight: Any = None) -> Dict[str, Any]:
    """This node's definition for its NodeName line, from the first line ``slurmd -C`` prints on
    it (``NodeName=gpu01 CPUs=64 Boards=1 ... RealMemory=515000 UpTime=3-04:05:06``): what slurmd
    detects, as text, without the node's name and uptime; ``RealMemory`` the given fraction of the
    detected memory (rounded down); ``Gres`` (gres_conf's), ``Features`` (joined with commas) and
    ``Weight`` where given."""
    definition = {key: value for key, value in dict(re.findall(r"([A-Za-z]+)=([^ ]+)", slurmd_c)).items()
                  if key not in _NOT_DEFINITION}
    definition["RealMemory"] = _jinja_int(_jinja_int(definition.get("RealMemory")) * memory_fraction)
    if gres:
        definition["Gres"] = gres
    if features:
        definition["Features"] = ",".join("%s" % feature for feature in features)
    if weight is not None:
        definition["Weight"] = weight
    return definition


def definition_text(definition: Mapping[str, Any]) -> str:
    """A node's definition as its NodeName line says it: ``Key=value`` pairs sorted by key."""
    return " ".join("%s=%s" % (key, definition[key]) for key in sorted(definition))


def _split_node_line(line: str, what: str) -> tuple:
    """``NodeName=<hostlist> rest`` -> (hosts, rest); a RuleError naming ``what`` when unreadable."""
    head, _sep, rest = line.strip().partition(" ")
    try:
        hosts = expand(head[len("NodeName="):])
    except HostlistError as exc:
        raise RuleError("%s: cannot read the line %r (%s)" % (what, line, exc)) from None
    if not hosts or not head[len("NodeName="):]:
        raise RuleError("%s: the line %r names no host" % (what, line))
    return hosts, rest.strip()


def parse_node_lines(lines: Iterable[str], what: str = "slurm.conf") -> Dict[str, str]:
    """Each host's definition text from slurm.conf's NodeName lines (without ``State=``).

    ``NodeName=DEFAULT`` lines and other lines are ignored.
    """
    found: Dict[str, str] = {}
    for line in lines:
        if not line.startswith("NodeName=") or line.startswith("NodeName=DEFAULT"):
            continue
        hosts, rest = _split_node_line(line, what)
        words = [word for word in rest.split() if not word.startswith("State=")]
        for host in hosts:
            found[host] = " ".join(words)
    return found


def parse_gres_lines(lines: Iterable[str], what: str = "gres.conf") -> Dict[str, List[str]]:
    """Each host's gres.conf lines (without ``NodeName=``) from the ``NodeName=`` lines, in order."""
    found: Dict[str, List[str]] = {}
    for line in lines:
        if not line.startswith("NodeName="):
            continue
        hosts, rest = _split_node_line(line, what)
        for host in hosts:
            found.setdefault(host, []).append(rest)
    return found


def _grouped(texts: Mapping[str, Any], order: Sequence[str]) -> List[tuple]:
    """[(text, [hosts])]: hosts with the same text together, groups sorted by text."""
    ordered = [host for host in order if host in texts]
    ordered.sort(key=lambda host: texts[host])
    # A stable sort: hosts of a group stay in inventory order (as Jinja's groupby leaves them).
    return [(text, list(group)) for text, group in itertools.groupby(ordered, key=lambda host: texts[host])]


def node_lines(
    computes: Sequence[str],
    live: Iterable[str],
    definitions: Mapping[str, Optional[Mapping[str, Any]]],
    gres: Mapping[str, Optional[Sequence[str]]],
    current_nodes: Iterable[str],
    current_gres: Iterable[str],
) -> Dict[str, Any]:
    """Every compute node's slurm.conf and gres.conf lines, and where each came from.

    ``definitions`` and ``gres`` hold, per host, what hostvars has (this run's value, or the
    fact cache's for a host outside the run; None when it has none); ``live`` are the hosts
    still in the play. Returns ``node_lines`` and ``gres_lines`` (the files' lines), ``hosts``
    (the defined nodes, inventory order, for the partitions), ``source`` (host -> run, file or
    cache) and ``left_out`` (hosts with no known definition).
    """
    live_hosts = set(live)
    on_file = parse_node_lines(current_nodes)
    gres_on_file = parse_gres_lines(current_gres)
    texts: Dict[str, str] = {}
    gres_texts: Dict[str, str] = {}
    source: Dict[str, str] = {}
    left_out: List[str] = []
    for host in computes:
        definition = definitions.get(host)
        if host in live_hosts and definition:
            texts[host] = definition_text(definition)
            gres_texts[host] = "\n".join(gres.get(host) or [])
            source[host] = "run"
        elif on_file.get(host):
            texts[host] = on_file[host]
            gres_texts[host] = "\n".join(gres_on_file.get(host, []))
            source[host] = "file"
        elif definition:
            texts[host] = definition_text(definition)
            gres_texts[host] = "\n".join(gres.get(host) or [])
            source[host] = "cache"
        else:
            left_out.append(host)
    lines = ["NodeName=%s %s %s" % (compress(hosts), text, NODE_STATE) for text, hosts in _grouped(texts, computes)]
    gres_lines: List[str] = []
    for text, hosts in _grouped({h: t for h, t in gres_texts.items() if t}, computes):
        gres_lines.extend("NodeName=%s %s" % (compress(hosts), line) for line in text.split("\n"))
    result = {
        "node_lines": lines,
        "gres_lines": gres_lines,
        "hosts": [host for host in computes if host in texts],
        "source": source,
        "left_out": left_out,
    }
    result["messages"] = report(result)
    return result


def report(result: Mapping[str, Any]) -> List[str]:
    """What the run took from elsewhere than the nodes themselves, one message per kind."""
    messages = []
    by_source = {name: [h for h, s in result["source"].items() if s == name] for name in SOURCES}
    if by_source["file"]:
        messages.append("kept the last known definition in slurm.conf and gres.conf of %s (not in this run "
                        "or failed in it)" % ", ".join(by_source["file"]))
    if by_source["cache"]:
        messages.append("took the definition of %s from the fact cache (not in this run or failed in it, "
                        "and not in slurm.conf yet)" % ", ".join(by_source["cache"]))
    if result["left_out"]:
        messages.append("left %s out of slurm.conf, gres.conf and the partitions: no definition known (not in "
                        "this run or failed before reporting its hardware, not in slurm.conf, not in the fact "
                        "cache); run the role with it reachable to add it" % ", ".join(result["left_out"]))
    return messages


def restart_changes(new: Sequence[str], old: Sequence[str], keys: Sequence[str], existed: bool = True) -> List[str]:
    """The settings of ``keys`` whose slurm.conf lines differ between the new file (``new``, its
    lines) and the one on the node (``old``: its lines of those settings), each setting's lines
    compared in file order: the order of the SlurmctldHost lines names the primary controller and
    its backups. Lines of other settings are ignored. No slurm.conf on the node before
    (``existed`` false: no daemon runs with it) changes nothing; a file without any of those
    lines (written by hand, with the old ControlMachine name) changes every one set now."""
    if not existed:
        return []

    def lines(text: Sequence[str], key: str) -> List[str]:
        return [line for line in text if line.startswith(key + "=")]

    return [key for key in keys if lines(new, key) != lines(old, key)]
