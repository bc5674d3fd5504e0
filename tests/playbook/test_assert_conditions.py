# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every `that:` of an assert (and every `when:`, `until:`, `failed_when:`, `changed_when:`) in the
roles, playbooks and scenarios is a string or a list of strings as YAML reads it. An unquoted
condition with `: ` inside (`reason is match('rma: gpu_count')`) reads as a mapping, and
ansible-core fails the task ("Conditional expressions must be strings") only when it runs: in a
scenario that meant a 25-minute run to find it."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
KEYS = ("when", "until", "failed_when", "changed_when")
FILES = sorted(p for pattern in ("roles/*/tasks/*.yml", "roles/*/handlers/*.yml", "playbooks/*.yml", "playbooks/tasks/*.yml",
                                 "molecule/*/*.yml", "molecule/*/tasks/*.yml", "tests/sandbox/*.yml", "benchmarks/*.yml")
               for p in ROOT.glob(pattern))


def conditions(node, where):
    """(where, condition) for every condition under ``node``."""
    if isinstance(node, list):
        for index, item in enumerate(node):
            yield from conditions(item, "%s[%d]" % (where, index))
    elif isinstance(node, dict):
        for key, value in node.items():
            if key in KEYS:
                for item in value if isinstance(value, list) else [value]:
                    yield "%s.%s" % (where, key), item
            if key in ("ansible.builtin.assert", "assert") and isinstance(value, dict) and "that" in value:
                that = value["that"]
                for item in that if isinstance(that, list) else [that]:
                    yield "%s.%s.that" % (where, node.get("name", "?")), item
            yield from conditions(value, "%s.%s" % (where, key))


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(ROOT)) for p in FILES])
def test_conditions_are_strings(path):
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    bad = [(where, item) for where, item in conditions(data, path.name)
           if not isinstance(item, (str, bool)) and item is not None]
    assert bad == []


def test_the_scan_sees_a_mapping_condition():
    bad = yaml.safe_load("- name: t\n  ansible.builtin.assert:\n    that:\n      - a is match('x: y')\n")
    assert [item for _w, item in conditions(bad, "t") if not isinstance(item, str)] == [{"a is match('x": "y')"}]
