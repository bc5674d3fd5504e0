# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Strict types of a role's inputs, from its argument spec (controller side, pure, no Ansible imports).

Ansible's own role argument check converts where it should refuse: a string where a list is
expected becomes a one-item list (and the role, which sees the original value, iterates its
characters), a list or a number where a string is expected becomes its text (``12.10``
unquoted is already the number 12.1). ``input_type_errors`` takes one entry point's
``options`` as loaded from ``meta/argument_specs.yml`` and each host's values and returns
every value of the wrong type, strictly:

* ``str`` and ``path``: a string;
* ``int``: an integer (not true/false, not a string of digits);
* ``float``: an integer or a decimal number (not true/false);
* ``bool``: true or false (not a string that reads like one);
* ``list``: a list, each element checked against ``elements`` (and the nested ``options`` of
  dict elements);
* ``dict``: a mapping, checked against the nested ``options`` where the spec has them (a key
  they do not name is refused with the known keys; a ``required: true`` key that is missing is
  refused);
* ``raw``: anything.

null is accepted only where the option's default is null, or where it has no default and is not
required. Every message names the variable (with the index or key path inside it) and the host,
and describes the value with the names a user knows from YAML (``describe``): string, number,
true/false, list, mapping, null; a ``no_log`` option's value is never shown.
"""

from __future__ import annotations

import datetime
import re
from typing import Any, Iterable, List, Mapping, Optional

from ansible_collections.gpucluster.core.plugins.plugin_utils.common._rules import Errors, RuleError, host_values, is_int

# What each spec type expects, as it reads after "must be ".
EXPECTED = {
    "str": "a string",
    "path": "a string",
    "int": "an integer",
    "float": "a number",
    "bool": "true or false",
    "list": "a list",
    "dict": "a mapping",
}
_STRING_TYPES = ("str", "path")
# A string that reads as a number or as true/false: the user quoted a value that should not be.
_INT_RE = re.compile(r"^[+-]?[0-9]+$")
_FLOAT_RE = re.compile(r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$")
_BOOL_WORDS = ("true", "false", "yes", "no", "on", "off")
_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_SHOWN_MAX = 60


def _shown(text: str) -> str:
    """A string as a message shows it: quoted, cut after _SHOWN_MAX characters."""
    text = str(text)
    if len(text) > _SHOWN_MAX:
        return repr(text[:_SHOWN_MAX - 3]) + "..."
    return repr(text)


def describe(value: Any, secret: bool = False) -> str:
    """The value as a YAML user knows it: ``the string 'ntp1'``, ``the number 12.1``, ``true``,
    ``false``, ``a list``, ``a mapping``, ``null``; with ``secret`` only the kind (``a string``,
    ``a number``), never the value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true or false" if secret else ("true" if value else "false")
    if isinstance(value, (int, float)):
        if secret:
            return "a number"
        return "the number %s" % (int(value) if isinstance(value, int) else repr(float(value)))
    if isinstance(value, str):
        return "a string" if secret else "the string %s" % _shown(value)
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, (datetime.date, datetime.datetime)):
        return "a date" if secret else "the date %s" % value.isoformat()
    return "a value that is not a string, number, true/false, list, mapping or null"


def _hint(expected: str, value: Any, var: str) -> str:
    """What to write instead, where the value is a YAML scalar of the wrong kind. A quoted number or
    true/false of a top-level variable may come from ``-e name=value``, which always gives a string:
    the hint shows the JSON form that keeps the type."""
    if expected in _STRING_TYPES and isinstance(value, (bool, int, float, datetime.date)):
        return "; quote it in YAML, or end its template with | string"
    if not isinstance(value, str):
        return ""
    text = value.strip()
    if expected == "int" and _INT_RE.match(text) or expected == "float" and _FLOAT_RE.match(text):
        hint, json_value = "; write it without quotes", str(int(text)) if expected == "int" else repr(float(text))
    elif expected == "bool" and text.lower() in _BOOL_WORDS:
        hint = "; write true or false without quotes"
        json_value = "true" if text.lower() in ("true", "yes", "on") else "false"
    else:
        return ""
    if _NAME_RE.match(var):
        hint += " (with -e, as JSON: -e '{\"%s\": %s}')" % (var, json_value)
    return hint


def _type_ok(kind: str, value: Any) -> bool:
    if kind in _STRING_TYPES:
        return isinstance(value, str)
    if kind == "int":
        return is_int(value)
    if kind == "float":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "list":
        return isinstance(value, list)
    if kind == "dict":
        return isinstance(value, Mapping)
    return True  # raw


def _kind(spec: Mapping[str, Any], key: str, var: str) -> str:
    kind = spec.get(key, "str") if key == "type" else spec.get(key)
    if kind not in EXPECTED and kind != "raw":
        raise RuleError("%s: the argument spec's %s %r is not one of %s" % (
            var, key, kind, ", ".join(sorted(EXPECTED) + ["raw"])))
    return kind


def _null_ok(spec: Mapping[str, Any]) -> bool:
    """null is the default, or the option has none and is not required."""
    if "default" in spec:
        return spec["default"] is None
    return not spec.get("required", False)


def _check(errors: Errors, var: str, kind: str, value: Any, spec: Mapping[str, Any], secret: bool) -> None:
    """One value against a type (``kind``); a list's elements and a mapping's keys after it."""
    if kind == "raw":
        return
    if not _type_ok(kind, value):
        # A secret's hint never tells what it holds (a quoted number); "quote it" tells only its kind.
        hint = _hint(kind, value, var) if not secret or kind in _STRING_TYPES else ""
        errors.add(var, "must be %s (got %s)%s" % (EXPECTED[kind], describe(value, secret), hint))
        return
    if kind == "list" and spec.get("elements") is not None:
        elements = _kind(spec, "elements", var)
        for index, element in enumerate(value):
            _check(errors, "%s[%d]" % (var, index), elements, element, spec, secret)
    elif kind == "dict" and spec.get("options") is not None:
        _check_options(errors, var, spec["options"], value, secret)


def _check_options(errors: Errors, var: str, options: Mapping[str, Any], value: Mapping[Any, Any],
                   secret: bool) -> None:
    """A mapping against nested options: unknown keys, missing required keys, each key's value."""
    if not isinstance(options, Mapping):
        raise RuleError("%s: the argument spec's options must be a mapping" % var)
    for key in value:
        if key not in options:
            errors.add(var, "unknown key %s (the known keys: %s)" % (_shown(key), ", ".join(map(str, options))))
    for name, sub in options.items():
        _option(errors, "%s.%s" % (var, name), sub, value, name, secret)


def _option(errors: Errors, var: str, spec: Mapping[str, Any], values: Mapping[Any, Any], name: str,
            secret: bool) -> None:
    """The option ``name`` of ``values`` against its spec: set where required, null where allowed."""
    if not isinstance(spec, Mapping):
        raise RuleError("%s: the argument spec must be a mapping" % var)
    kind = _kind(spec, "type", var)
    if name not in values:
        if spec.get("required", False):
            errors.add(var, "is required but not set")
        return
    value = values[name]
    if value is None and _null_ok(spec):
        return
    _check(errors, var, kind, value, spec, secret or bool(spec.get("no_log", False)))


def input_type_errors(options: Mapping[str, Any], values: Mapping[str, Mapping[str, Any]]) -> List[str]:
    """Every value of the wrong type: ``options`` is one entry point's argument spec (name -> spec),
    ``values`` each host's values (host -> {name: value}); a name a host's values lack is checked
    only for ``required``. Messages read ``host '<host>': <variable>: must be <type> (got <value>)``,
    hosts in the order given, then options in the spec's order."""
    if not isinstance(options, Mapping):
        raise RuleError("input_type_errors: the argument spec's options must be a mapping (got %s)" % describe(options))
    out: List[str] = []
    for host, host_vars in values.items():
        errors = Errors(str(host))
        for name, spec in options.items():
            _option(errors, name, spec, host_vars, name, False)
        out.extend(errors.messages)
    return out


def play_input_type_errors(options: Mapping[str, Any], hostvars: Mapping[str, Mapping[str, Any]],
                           hosts: Iterable[str], defaults: Mapping[str, Any],
                           defaults_host: Optional[str] = None) -> List[str]:
    """``input_type_errors`` over each host's values: its own where its inventory sets one, else
    ``defaults`` (the play's values: role defaults, play vars).

    ``defaults`` are read on one host (``defaults_host``, the one a run_once task runs on), where a
    value its inventory sets hides the play's: such a name is left out of ``defaults``, so that a bad
    value of that host is not reported again for every host that sets none."""
    if not isinstance(options, Mapping):
        raise RuleError("input_type_errors: the argument spec's options must be a mapping (got %s)" % describe(options))
    defaults = dict(defaults or {})
    if defaults_host is not None:
        own = hostvars.get(defaults_host, {})
        defaults = {name: value for name, value in defaults.items() if name not in own}
    hosts = list(hosts)
    return input_type_errors(options, host_values(hostvars, hosts, list(options), defaults))
