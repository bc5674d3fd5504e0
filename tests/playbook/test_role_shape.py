# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The shape every role follows (house style), checked over every role of the collection:
argument_specs.yml names exactly the variables defaults/main.yml sets, each with the same
default; public variables carry the role's prefix; every vars/ and register name is internal."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
ROLES = sorted(p.name for p in (ROOT / "roles").iterdir() if (p / "meta" / "argument_specs.yml").is_file())


def _yaml(path: Path):
    return yaml.safe_load(path.read_text(encoding="utf-8")) or {}


def _entry_points(role: str) -> dict:
    return _yaml(ROOT / "roles" / role / "meta" / "argument_specs.yml")["argument_specs"]


def test_every_role_is_checked():
    assert set(ROLES) == {p.name for p in (ROOT / "roles").iterdir() if p.is_dir()}


@pytest.mark.parametrize("role", ROLES)
def test_argument_specs_match_defaults(role):
    defaults = _yaml(ROOT / "roles" / role / "defaults" / "main.yml") if (
        ROOT / "roles" / role / "defaults" / "main.yml").is_file() else {}
    options = {}
    for entry in _entry_points(role).values():
        options.update(entry.get("options") or {})
    assert sorted(set(defaults) - set(options)) == [], "defaults without an argument spec"
    with_default = {name for name, spec in options.items() if "default" in spec}
    assert sorted(with_default - set(defaults)) == [], "argument specs with a default that defaults/main.yml lacks"
    for name, value in defaults.items():
        spec = options[name]
        # A templated default is documented by its meaning, not its value.
        if isinstance(value, str) and "{{" in value:
            continue
        assert spec.get("default") == value, "%s: argument spec default %r, defaults/main.yml %r" % (
            name, spec.get("default"), value)


@pytest.mark.parametrize("role", ROLES)
def test_public_names_carry_the_role_prefix(role):
    for entry in _entry_points(role).values():
        for name in entry.get("options") or {}:
            assert name.startswith(role + "_"), name


@pytest.mark.parametrize("role", ROLES)
def test_internal_names_are_internal(role):
    base = ROOT / "roles" / role
    for path in sorted((base / "vars").glob("*.yml")) if (base / "vars").is_dir() else []:
        for name in _yaml(path):
            assert name.startswith("__%s_" % role), "%s: %s" % (path.relative_to(ROOT), name)
    for path in sorted(base.rglob("*.yml")):
        for name in re.findall(r"^\s*register:\s*(\S+)", path.read_text(encoding="utf-8"), re.M):
            assert name.startswith("__%s_" % role), "%s: register %s" % (path.relative_to(ROOT), name)


@pytest.mark.parametrize("role", ROLES)
def test_no_jinja_programs_in_yaml(role):
    """Logic lives in Python plugins with unit tests: a role's YAML holds expressions, never
    Jinja statements ({% for %}, {% if %}, {% set %}); templates (*.j2) may loop over data."""
    found = []
    for path in sorted((ROOT / "roles" / role).rglob("*.yml")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if "{%" in line:
                found.append("%s:%d: %s" % (path.relative_to(ROOT), number, line.strip()))
    assert found == []


@pytest.mark.parametrize("role", ROLES)
def test_every_registered_result_is_read(role):
    """No dead code: a role reads every result it registers."""
    texts = {path: path.read_text(encoding="utf-8") for path in sorted((ROOT / "roles" / role).rglob("*"))
             if path.is_file() and path.suffix in (".yml", ".j2")}
    register = re.compile(r"^\s*register:\s*(\S+)\s*$", re.M)
    # Everything but the register lines themselves.
    reads = "\n".join(register.sub("", text) for text in texts.values())
    unread = []
    for path, text in texts.items():
        for name in register.findall(text):
            if not re.search(r"\b%s\b" % re.escape(name), reads):
                unread.append("%s: %s" % (path.relative_to(ROOT), name))
    assert unread == []


# Keys whose text is read by people (a message, a name), not logic.
_MESSAGE_KEYS = {"msg", "fail_msg", "success_msg", "name", "description"}
_PLAYBOOKS = sorted((ROOT / "playbooks").rglob("*.yml")) + [ROOT / "site.yml"]


def _long_expressions(path: Path):
    """Each Jinja expression (a scalar holding {{ }}) of more than 3 non-blank source lines, and
    each `when:` comparing against a hand-built string (hashed with sha1/md5/hash, or joined with ~):
    their places."""
    text = path.read_text(encoding="utf-8")
    found = []

    def walk(node, key):
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                walk(v, k.value if isinstance(k, yaml.ScalarNode) else None)
        elif isinstance(node, yaml.SequenceNode):
            for v in node.value:
                walk(v, key)
        elif isinstance(node, yaml.ScalarNode) and isinstance(node.value, str):
            where = "%s:%d (%s)" % (path.relative_to(ROOT), node.start_mark.line + 1, key)
            if key == "when" and re.search(r"hash\(|sha1|md5", node.value):
                found.append(where + ": a when comparing a hashed string")
            if key == "when" and "~" in node.value and re.search(r"[!=]=", node.value):
                found.append(where + ": a when comparing a string built with ~")
            if "{{" in node.value and key not in _MESSAGE_KEYS:
                source = text[node.start_mark.index:node.end_mark.index]
                lines = len([line for line in source.splitlines() if line.strip()])
                if lines > 3:
                    found.append(where + ": %d lines" % lines)

    for document in yaml.compose_all(text, Loader=yaml.SafeLoader):
        if document is not None:
            walk(document, None)
    return found


@pytest.mark.parametrize("role", ROLES + ["playbooks"])
def test_no_long_expressions(role):
    """YAML wires what Python works out: no expression in a role's tasks, vars, handlers or
    defaults (or a playbook) runs over 3 lines, and no `when:` compares hand-built strings
    (gpucluster.core.files compares)."""
    if role == "playbooks":
        paths = _PLAYBOOKS
    else:
        base = ROOT / "roles" / role
        paths = sorted(p for d in ("tasks", "vars", "handlers", "defaults") for p in (base / d).glob("*.yml"))
    found = [f for path in paths for f in _long_expressions(path)]
    assert found == []
