# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The shape of the roles' one-call node reads (controller side, pure): a shell command prints
``[<section>]`` and then that section's lines, for each section, so that one remote call answers
what several tasks asked before."""

from __future__ import annotations

from typing import Dict, List, Sequence

from ansible_collections.gpucluster.core.plugins.plugin_utils.common._rules import RuleError


def split_sections(text: str, names: Sequence[str], where: str) -> Dict[str, List[str]]:
    """The non-empty lines of each section, by name. Strict: every section of ``names`` exactly
    once, nothing else, no line before the first section; messages start with ``where``."""
    sections: Dict[str, List[str]] = {}
    current = None
    for line in text.splitlines():
        if not line.strip():
            continue
        if line.startswith("[") and line.endswith("]"):
            current = line[1:-1]
            if current not in names or current in sections:
                raise RuleError("%s: unexpected section %r in the node read" % (where, line))
            sections[current] = []
        elif current is None:
            raise RuleError("%s: a line before any section in the node read: %r" % (where, line))
        else:
            sections[current].append(line)
    missing = [name for name in names if name not in sections]
    if missing:
        raise RuleError("%s: the node read lacks %s" % (where, ", ".join(missing)))
    return sections
