# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The strict input types of plugins/plugin_utils/common/_input_types.py: tables of good and bad values with
their exact messages, then a table generated over every role's real argument spec (every option of
every entry point given a value of the wrong type) and each role's defaults, which must pass."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest
import yaml

from ansible_collections.gpucluster.core.plugins.filter.common import FilterModule
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._input_types import (
    describe, input_type_errors, play_input_type_errors)
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._rules import RuleError

ROOT = Path(__file__).resolve().parents[5]
ROLES = sorted(p.name for p in (ROOT / "roles").iterdir() if (p / "meta" / "argument_specs.yml").is_file())


class TaggedStr(str):
    """Like ansible-core 2.19's _AnsibleTaggedStr: a str subclass, whose class name no message may show."""


class TaggedList(list):
    """Like 2.19's lazy and tagged lists."""


# --- describe -------------------------------------------------------------------------------

@pytest.mark.parametrize("value, expected", [
    ("ntp1", "the string 'ntp1'"),
    (TaggedStr("ntp1"), "the string 'ntp1'"),
    ("", "the string ''"),
    ("it's", "the string \"it's\""),
    ("x" * 61, "the string '%s'..." % ("x" * 57)),
    ("x" * 60, "the string '%s'" % ("x" * 60)),
    (12.1, "the number 12.1"),
    (12, "the number 12"),
    (0, "the number 0"),
    (True, "true"),
    (False, "false"),
    (None, "null"),
    ([], "a list"),
    (TaggedList(["a"]), "a list"),
    ({}, "a mapping"),
    ({"a": 1}, "a mapping"),
    (datetime.date(2024, 1, 31), "the date 2024-01-31"),
    ({1, 2}, "a value that is not a string, number, true/false, list, mapping or null"),
])
def test_describe(value, expected):
    assert describe(value) == expected


@pytest.mark.parametrize("value, expected", [
    ("s3cret", "a string"), (1234, "a number"), (1.5, "a number"), (True, "true or false"), (None, "null"),
    (["s3cret"], "a list"), ({"k": "s3cret"}, "a mapping"),
])
def test_describe_a_secret_never_shows_it(value, expected):
    assert describe(value, secret=True) == expected


# --- one option, good and bad values ----------------------------------------------------------

GOOD = [
    ({"type": "str"}, "ntp1"), ({"type": "str"}, TaggedStr("x")), ({"type": "str"}, ""),
    ({}, "no type is str"),
    ({"type": "path"}, "/data"),
    ({"type": "int"}, 0), ({"type": "int"}, -3),
    ({"type": "float"}, 0.5), ({"type": "float"}, 2),
    ({"type": "bool"}, True), ({"type": "bool"}, False),
    ({"type": "list"}, []), ({"type": "list"}, ["a", 1, None]), ({"type": "list"}, TaggedList(["a"])),
    ({"type": "list", "elements": "str"}, ["ntp1", TaggedStr("ntp2")]),
    ({"type": "list", "elements": "int"}, [1, 2]),
    ({"type": "list", "elements": "dict"}, [{}, {"any": "key"}]),
    ({"type": "list", "elements": "raw"}, [1, "a", None]),
    ({"type": "dict"}, {}), ({"type": "dict"}, {"any": ["thing"]}),
    ({"type": "dict", "options": {"a": {"type": "int"}}}, {"a": 1}),
    ({"type": "dict", "options": {"a": {"type": "int"}}}, {}),
    ({"type": "dict", "options": {"a": {"type": "int"}}}, {"a": None}),
    ({"type": "raw"}, "x"), ({"type": "raw"}, [1]), ({"type": "raw"}, {"a": 1}), ({"type": "raw"}, None),
    # null where the default is null, or where there is no default and the option is not required.
    ({"type": "int", "default": None}, None),
    ({"type": "str"}, None),
    ({"type": "list", "elements": "str", "required": False}, None),
]


@pytest.mark.parametrize("spec, value", GOOD)
def test_good_values_pass(spec, value):
    assert input_type_errors({"opt": spec}, {"h1": {"opt": value}}) == []


BAD = [
    ({"type": "list", "elements": "str"}, "ntp1", "must be a list (got the string 'ntp1')"),
    ({"type": "list"}, {"a": 1}, "must be a list (got a mapping)"),
    ({"type": "str"}, 12.1, "must be a string (got the number 12.1); quote it in YAML, or end its template with | string"),
    ({"type": "str"}, 8, "must be a string (got the number 8); quote it in YAML, or end its template with | string"),
    ({"type": "str"}, True, "must be a string (got true); quote it in YAML, or end its template with | string"),
    ({"type": "str"}, datetime.date(2024, 1, 31), "must be a string (got the date 2024-01-31); quote it in YAML, or end its template with | string"),
    ({"type": "str"}, ["a"], "must be a string (got a list)"),
    ({"type": "str"}, {"a": 1}, "must be a string (got a mapping)"),
    ({}, ["a"], "must be a string (got a list)"),
    ({"type": "path"}, ["/a"], "must be a string (got a list)"),
    ({"type": "int"}, "6443",
     "must be an integer (got the string '6443'); write it without quotes"
     " (with -e, as JSON: -e '{\"opt\": 6443}')"),
    ({"type": "int"}, " 08",
     "must be an integer (got the string ' 08'); write it without quotes"
     " (with -e, as JSON: -e '{\"opt\": 8}')"),
    ({"type": "int"}, "six", "must be an integer (got the string 'six')"),
    ({"type": "int"}, True, "must be an integer (got true)"),
    ({"type": "int"}, 1.5, "must be an integer (got the number 1.5)"),
    ({"type": "int"}, [1], "must be an integer (got a list)"),
    ({"type": "float"}, "0.5",
     "must be a number (got the string '0.5'); write it without quotes"
     " (with -e, as JSON: -e '{\"opt\": 0.5}')"),
    ({"type": "float"}, "2",
     "must be a number (got the string '2'); write it without quotes"
     " (with -e, as JSON: -e '{\"opt\": 2.0}')"),
    ({"type": "float"}, "half", "must be a number (got the string 'half')"),
    ({"type": "float"}, False, "must be a number (got false)"),
    ({"type": "bool"}, "yes",
     "must be true or false (got the string 'yes'); write true or false without quotes"
     " (with -e, as JSON: -e '{\"opt\": true}')"),
    ({"type": "bool"}, "False",
     "must be true or false (got the string 'False'); write true or false without quotes"
     " (with -e, as JSON: -e '{\"opt\": false}')"),
    ({"type": "bool"}, "maybe", "must be true or false (got the string 'maybe')"),
    ({"type": "bool"}, 1, "must be true or false (got the number 1)"),
    ({"type": "dict"}, "a=1", "must be a mapping (got the string 'a=1')"),
    ({"type": "dict"}, [], "must be a mapping (got a list)"),
    # null where the default is not null, or where the option is required.
    ({"type": "list", "default": []}, None, "must be a list (got null)"),
    ({"type": "str", "default": ""}, None, "must be a string (got null)"),
    ({"type": "str", "required": True}, None, "must be a string (got null)"),
]


@pytest.mark.parametrize("spec, value, reason", BAD)
def test_bad_values_are_refused(spec, value, reason):
    assert input_type_errors({"opt": spec}, {"gpu01": {"opt": value}}) == ["host 'gpu01': opt: " + reason]


NETWORK = {
    "type": "list", "elements": "dict", "default": [],
    "options": {"name": {"type": "str", "required": True}, "cidr": {"type": "str", "required": True},
                "suffix": {"type": "str"}, "mtu": {"type": "int"}},
}
REPOSITORY = {
    "type": "dict", "required": True,
    "options": {"name": {"type": "str", "required": True},
                # A sub-option named "options" (as nfs_exports has) is an option, not nested options.
                "options": {"type": "list", "elements": "str"}},
}


@pytest.mark.parametrize("spec, value, expected", [
    (NETWORK, [{"name": "mgmt", "cidr": ["10.0.0.0/24"]}],
     ["opt[0].cidr: must be a string (got a list)"]),
    (NETWORK, [{"name": "mgmt", "cidr": "10.0.0.0/24", "mtu": "9000"}],
     ["opt[0].mtu: must be an integer (got the string '9000'); write it without quotes"]),
    (NETWORK, [{"name": "mgmt", "cidr": "10.0.0.0/24", "mask": 24}],
     ["opt[0]: unknown key 'mask' (the known keys: name, cidr, suffix, mtu)"]),
    (NETWORK, [{"name": "mgmt"}, {"cidr": "10.0.1.0/24"}],
     ["opt[0].cidr: is required but not set", "opt[1].name: is required but not set"]),
    (NETWORK, [{"name": None, "cidr": "10.0.0.0/24", "suffix": None}],
     ["opt[0].name: must be a string (got null)"]),
    (NETWORK, ["mgmt", None], ["opt[0]: must be a mapping (got the string 'mgmt')", "opt[1]: must be a mapping (got null)"]),
    (NETWORK, {"name": "mgmt"}, ["opt: must be a list (got a mapping)"]),
    ({"type": "list", "elements": "str"}, ["ntp1", 2, None, ["x"]],
     ["opt[1]: must be a string (got the number 2); quote it in YAML, or end its template with | string", "opt[2]: must be a string (got null)",
      "opt[3]: must be a string (got a list)"]),
    ({"type": "list", "elements": "int"}, [1, "2", True],
     ["opt[1]: must be an integer (got the string '2'); write it without quotes", "opt[2]: must be an integer (got true)"]),
    (REPOSITORY, {"name": 5, "options": "trusted=yes"},
     ["opt.name: must be a string (got the number 5); quote it in YAML, or end its template with | string",
      "opt.options: must be a list (got the string 'trusted=yes')"]),
    (REPOSITORY, {"options": ["a", 1]},
     ["opt.name: is required but not set",
      "opt.options[1]: must be a string (got the number 1); quote it in YAML, or end its template with | string"]),
    (REPOSITORY, {"name": "x", 1: "y"}, ["opt: unknown key '1' (the known keys: name, options)"]),
])
def test_elements_and_nested_options(spec, value, expected):
    assert input_type_errors({"opt": spec}, {"gpu01": {"opt": value}}) == ["host 'gpu01': " + m for m in expected]


def test_a_required_option_no_host_sets_is_refused():
    options = {"opt": {"type": "str", "required": True}, "other": {"type": "str", "default": ""}}
    assert input_type_errors(options, {"h1": {}}) == ["host 'h1': opt: is required but not set"]


def test_every_host_every_error_in_order_and_other_variables_ignored():
    options = {"base_os_time_servers": {"type": "list", "elements": "str", "default": []},
               "cuda_default_toolkit": {"type": "str", "default": ""}}
    values = {"gpu01": {"cuda_default_toolkit": 12.1, "base_os_time_servers": "ntp1", "unrelated": 1},
              "gpu02": {"base_os_time_servers": ["ntp1"]},
              "gpu03": {"base_os_time_servers": ["ntp1", 7]}}
    assert input_type_errors(options, values) == [
        "host 'gpu01': base_os_time_servers: must be a list (got the string 'ntp1')",
        "host 'gpu01': cuda_default_toolkit: must be a string (got the number 12.1); quote it in YAML, or end its template with | string",
        "host 'gpu03': base_os_time_servers[1]: must be a string (got the number 7); quote it in YAML, or end its template with | string",
    ]


@pytest.mark.parametrize("spec, value, reason", [
    ({"type": "str", "no_log": True}, 123456, "must be a string (got a number); quote it in YAML, or end its template with | string"),
    ({"type": "str", "no_log": True}, ["s3cret"], "must be a string (got a list)"),
    ({"type": "int", "no_log": True}, "123", "must be an integer (got a string)"),
    ({"type": "dict", "no_log": True, "options": {"key": {"type": "str"}}}, {"key": 42},
     "must be a string (got a number); quote it in YAML, or end its template with | string"),
])
def test_a_secret_is_never_shown(spec, value, reason):
    messages = input_type_errors({"opt": spec}, {"h1": {"opt": value}})
    assert len(messages) == 1 and messages[0].endswith(reason), messages
    assert "s3cret" not in messages[0] and "123" not in messages[0] and "42" not in messages[0]


@pytest.mark.parametrize("options, message", [
    ({"opt": {"type": "bits"}}, "opt: the argument spec's type 'bits' is not one of"),
    ({"opt": {"type": "list", "elements": "strings"}}, "opt: the argument spec's elements 'strings' is not one of"),
    ({"opt": "str"}, "opt: the argument spec must be a mapping"),
    (["opt"], "input_type_errors: the argument spec's options must be a mapping (got a list)"),
])
def test_a_broken_spec_is_a_rule_error(options, message):
    with pytest.raises(RuleError, match="^" + message.replace("(", r"\(").replace(")", r"\)")):
        input_type_errors(options, {"h1": {"opt": ["x"]}})


# --- the play's values: each host's own, else the play's ------------------------------------

OPTIONS = {"base_os_time_servers": {"type": "list", "elements": "str", "default": []},
           "base_os_domain": {"type": "str", "default": "cluster.local"}}


def test_a_host_without_its_own_value_is_checked_with_the_plays():
    hostvars = {"gpu01": {}, "gpu02": {"base_os_time_servers": ["ntp1"]}}
    assert play_input_type_errors(OPTIONS, hostvars, ["gpu01", "gpu02"],
                                  {"base_os_time_servers": "ntp0", "base_os_domain": "x"}) == [
        "host 'gpu01': base_os_time_servers: must be a list (got the string 'ntp0')"]


def test_a_bad_value_of_the_host_that_read_the_defaults_is_reported_for_it_alone():
    # Read on gpu01, the play's value of base_os_time_servers is gpu01's own: gpu02, which sets none,
    # has the role's default, which is not known here.
    hostvars = {"gpu01": {"base_os_time_servers": "ntp1"}, "gpu02": {}}
    defaults = {"base_os_time_servers": "ntp1", "base_os_domain": 5}
    assert play_input_type_errors(OPTIONS, hostvars, ["gpu01", "gpu02"], defaults, defaults_host="gpu01") == [
        "host 'gpu01': base_os_time_servers: must be a list (got the string 'ntp1')",
        "host 'gpu01': base_os_domain: must be a string (got the number 5); quote it in YAML, or end its template with | string",
        "host 'gpu02': base_os_domain: must be a string (got the number 5); quote it in YAML, or end its template with | string",
    ]


def test_the_filter():
    errors = FilterModule().filters()["input_type_errors"]
    hostvars = {"gpu01": {"base_os_time_servers": "ntp1"}, "gpu02": {}}
    assert errors(OPTIONS, hostvars, hosts=["gpu01", "gpu02"], defaults={"base_os_time_servers": "ntp1"},
                  defaults_host="gpu01") == ["host 'gpu01': base_os_time_servers: must be a list (got the string 'ntp1')"]
    assert errors(OPTIONS, hostvars, hosts=["gpu02"]) == []
    from ansible.errors import AnsibleFilterError
    with pytest.raises(AnsibleFilterError, match="the argument spec's type 'bits'"):
        errors({"x": {"type": "bits"}}, {"h": {"x": 1}}, hosts=["h"])


# --- every role's real argument spec ----------------------------------------------------------

def _specs():
    """(role, entry point, options) of every role."""
    for role in ROLES:
        data = yaml.safe_load((ROOT / "roles" / role / "meta" / "argument_specs.yml").read_text(encoding="utf-8"))
        for entry, body in data["argument_specs"].items():
            yield role, entry, body.get("options") or {}


def _valid(spec):
    """A value of the option's type (the required keys of nested options set)."""
    kind = spec.get("type", "str")
    if kind == "dict" and spec.get("options"):
        return {name: _valid(sub) for name, sub in spec["options"].items() if sub.get("required")}
    return {"str": "x", "path": "/x", "int": 1, "float": 1.5, "bool": True, "list": [], "dict": {},
            "raw": "x"}[kind]


def _bad_cases():
    """(id, options, name, bad value, reason) for every option of every entry point of every role."""
    for role, entry, options in _specs():
        for name, spec in options.items():
            kind = spec.get("type", "str")
            secret = spec.get("no_log", False)
            cases = []
            if kind == "list":
                cases.append(("string", "ntp1", "must be a list (got %s)" % ("a string" if secret else "the string 'ntp1'")))
                elements = spec.get("elements")
                if elements in ("str", "path"):
                    cases.append(("element-number", ["ok", 12.1], None))
                elif elements == "int":
                    cases.append(("element-string", [1, "2"], None))
                elif elements == "dict":
                    cases.append(("element-string", ["x"], None))
            elif kind in ("str", "path"):
                cases.append(("list", ["a"], "must be a string (got a list)"))
                cases.append(("number", 12.1, "must be a string (got %s); quote it in YAML, or end its template with | string"
                              % ("a number" if secret else "the number 12.1")))
                cases.append(("true", True, "must be a string (got %s); quote it in YAML, or end its template with | string"
                              % ("true or false" if secret else "true")))
            elif kind == "int":
                cases.append(("string", "8", "must be an integer (got a string)" if secret else
                              "must be an integer (got the string '8'); write it without quotes"
                              " (with -e, as JSON: -e '{\"%s\": 8}')" % name))
                cases.append(("true", True, "must be an integer (got %s)" % ("true or false" if secret else "true")))
            elif kind == "float":
                cases.append(("string", "0.5", "must be a number (got the string '0.5'); write it without quotes"
                              " (with -e, as JSON: -e '{\"%s\": 0.5}')" % name))
            elif kind == "bool":
                cases.append(("string", "yes", "must be true or false (got the string 'yes'); "
                              "write true or false without quotes (with -e, as JSON: -e '{\"%s\": true}')" % name))
                cases.append(("number", 1, "must be true or false (got the number 1)"))
            elif kind == "dict":
                cases.append(("string", "a=1", "must be a mapping (got %s)" % ("a string" if secret else "the string 'a=1'")))
                cases.append(("list", [], "must be a mapping (got a list)"))
            for case, value, reason in cases:
                if reason is None:  # an element of a list: the second where there are two
                    index = len(value) - 1
                    reason = "[%d]: must be %s" % (index, {
                        "str": "a string (got the number 12.1); quote it in YAML, or end its template with | string",
                        "path": "a string (got the number 12.1); quote it in YAML, or end its template with | string",
                        "int": "an integer (got the string '2'); write it without quotes",
                        "dict": "a mapping (got the string 'x')"}[spec["elements"]])
                    expected = "host 'gpu01': %s%s" % (name, reason)
                else:
                    expected = "host 'gpu01': %s: %s" % (name, reason)
                yield pytest.param(options, name, value, expected, id="%s/%s/%s/%s" % (role, entry, name, case))


BAD_CASES = list(_bad_cases())


def test_the_generated_table_covers_every_role_and_type():
    ids = [case.id.split("/") for case in BAD_CASES]
    assert {role for role, _entry, _name, _case in ids} == set(ROLES)
    assert {case for _role, _entry, _name, case in ids} == {
        "string", "list", "number", "true", "element-number", "element-string"}
    assert len(ids) > 500


@pytest.mark.parametrize("options, name, value, expected", BAD_CASES)
def test_every_option_refuses_a_value_of_the_wrong_type(options, name, value, expected):
    values = {other: _valid(spec) for other, spec in options.items() if spec.get("required")}
    values[name] = value
    assert input_type_errors(options, {"gpu01": values}) == [expected]


@pytest.mark.parametrize("role, entry, options", [pytest.param(*s, id="%s-%s" % s[:2]) for s in _specs()])
def test_every_option_takes_a_value_of_its_type_and_its_spec_default(role, entry, options):
    values = {name: _valid(spec) for name, spec in options.items()}
    assert input_type_errors(options, {"h1": values}) == []
    # The spec's defaults (not templated ones), beside a value for each required option.
    spec_defaults = {name: spec["default"] if "default" in spec else _valid(spec) for name, spec in options.items()
                     if "default" in spec and not (isinstance(spec["default"], str) and "{{" in spec["default"])
                     or spec.get("required")}
    assert input_type_errors(options, {"h1": spec_defaults}) == []


@pytest.mark.parametrize("role", [r for r in ROLES if (ROOT / "roles" / r / "defaults" / "main.yml").is_file()])
def test_every_roles_defaults_pass(role):
    defaults = yaml.safe_load((ROOT / "roles" / role / "defaults" / "main.yml").read_text(encoding="utf-8")) or {}
    values = {name: value for name, value in defaults.items() if not (isinstance(value, str) and "{{" in value)}
    assert values, role
    for _role, _entry, options in (s for s in _specs() if s[0] == role):
        checked = {name: _valid(spec) for name, spec in options.items() if spec.get("required")}
        checked.update({name: value for name, value in values.items() if name in options})
        assert input_type_errors(options, {"h1": checked}) == [], _entry
