# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The shared checks of plugins/plugin_utils/common/_rules.py, a table of good and bad values per check."""

from __future__ import annotations

import pytest

from ansible_collections.gpucluster.core.plugins.plugin_utils.common import _rules
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._rules import Errors, duplicates, for_hosts, host_values

GOOD = [
    ("int_range", (5, 1, 10)), ("int_range", (1, 1, 10)), ("int_range", (10, 1, 10)),
    ("port", (1,)), ("port", (65535,)), ("port", (0, 0)),
    ("port_range", ("60001-63000",)), ("port_range", ("1-2",)),
    ("abs_path", ("/",)), ("abs_path", ("/data/shared",)), ("abs_path", ("/a/.b/c",)),
    ("posix_name", ("slurm",)), ("posix_name", ("_svc-1",)), ("posix_name", ("a" * 32,)),
    ("hostname", ("gpu01",)), ("hostname", ("gpu-01.cluster.example",)), ("hostname", ("gpu_01",)),
    ("token", ("idle_on_node_suspend",)), ("token", ("a/b:c",)),
    ("one_line", ("any text, even 'quoted'",)), ("one_line", ("",)),
    ("url", ("https://mirror.example/x",)), ("url", ("file:///etc/key.asc",)),
    ("url", ("http://x", ("http",))),
    ("ip_address", ("10.0.0.1",)), ("ip_address", ("fd00::1",)),
    ("ip_network", ("10.0.0.0/24",)), ("ip_network", ("fd00::/8",)), ("ip_network", ("10.0.0.1",)),
    ("cidr_with_prefix", ("10.0.0.0/24",)), ("cidr_with_prefix", ("fd00::/8",)), ("cidr_with_prefix", ("10.0.0.1/32",)),
    ("secret", ("x",)), ("secret", ("x" * 32, 32)),
]

BAD = [
    ("int_range", ("5", 1, 10), "must be an integer (got '5')"),
    ("int_range", (True, 0, 10), "must be an integer (got True)"),
    ("int_range", (1.5, 1, 10), "must be an integer (got 1.5)"),
    ("int_range", (0, 1, 10), "must be within 1-10 (got 0)"),
    ("int_range", (11, 1, 10), "must be within 1-10 (got 11)"),
    ("port", (0,), "must be within 1-65535 (got 0)"),
    ("port", (65536,), "must be within 1-65535 (got 65536)"),
    ("port", (None,), "must be an integer (got None)"),
    ("port_range", ("60001",), "must be \"first-last\" (got '60001')"),
    ("port_range", (60001,), "must be \"first-last\" (got 60001)"),
    ("port_range", ("2-1",), "must be \"first-last\" with 1 <= first < last <= 65535 (got '2-1')"),
    ("port_range", ("5-5",), "must be \"first-last\" with 1 <= first < last <= 65535 (got '5-5')"),
    ("port_range", ("0-5",), "must be \"first-last\" with 1 <= first < last <= 65535 (got '0-5')"),
    ("port_range", ("1-65536",), "must be \"first-last\" with 1 <= first < last <= 65535 (got '1-65536')"),
    ("port_range", ("5-9", 10), "must be \"first-last\" with 10 <= first < last <= 65535 (got '5-9')"),
    ("abs_path", ("data",), "must be an absolute path (got 'data')"),
    ("abs_path", (None,), "must be an absolute path (got None)"),
    ("abs_path", ("/data/",), "must have no trailing slash and no empty, . or .. parts (got '/data/')"),
    ("abs_path", ("/a//b",), "must have no trailing slash and no empty, . or .. parts (got '/a//b')"),
    ("abs_path", ("/a/../b",), "must have no trailing slash and no empty, . or .. parts (got '/a/../b')"),
    ("abs_path", ("/a/./b",), "must have no trailing slash and no empty, . or .. parts (got '/a/./b')"),
    ("abs_path", ("/a b",), "must not contain blanks (got '/a b')"),
    ("abs_path", ("/a\nb",), "must not contain blanks (got '/a\\nb')"),
    ("posix_name", ("Slurm",), "must be a user/group name: a lowercase letter or _, then up to 31 lowercase "
                               "letters, digits, _ or - (got 'Slurm')"),
    ("posix_name", ("1abc",), "must be a user/group name: a lowercase letter or _, then up to 31 lowercase "
                              "letters, digits, _ or - (got '1abc')"),
    ("posix_name", ("a" * 33,), "must be a user/group name: a lowercase letter or _, then up to 31 lowercase "
                                "letters, digits, _ or - (got '%s')" % ("a" * 33)),
    ("posix_name", (1000,), "must be a user/group name: a lowercase letter or _, then up to 31 lowercase "
                            "letters, digits, _ or - (got 1000)"),
    ("hostname", ("gpu 01",), "must be a host name (letters, digits, - and _ in dot-separated labels) (got 'gpu 01')"),
    ("hostname", ("-gpu",), "must be a host name (letters, digits, - and _ in dot-separated labels) (got '-gpu')"),
    ("hostname", ("a..b",), "must be a host name (letters, digits, - and _ in dot-separated labels) (got 'a..b')"),
    ("hostname", ("a" * 64,), "must be a host name (letters, digits, - and _ in dot-separated labels) "
                              "(got '%s')" % ("a" * 64)),
    ("hostname", ("",), "must be a host name (letters, digits, - and _ in dot-separated labels) (got '')"),
    ("token", ("a b",), "must be one word without blanks, quotes, #, \\, comma or = (got 'a b')"),
    ("token", ("a=b",), "must be one word without blanks, quotes, #, \\, comma or = (got 'a=b')"),
    ("token", ("a,b",), "must be one word without blanks, quotes, #, \\, comma or = (got 'a,b')"),
    ("token", ("#x",), "must be one word without blanks, quotes, #, \\, comma or = (got '#x')"),
    ("token", ("",), "must be one word without blanks, quotes, #, \\, comma or = (got '')"),
    ("token", (3,), "must be one word without blanks, quotes, #, \\, comma or = (got 3)"),
    ("one_line", ("a\nb",), "must be text on one line (got 'a\\nb')"),
    ("one_line", ("a\rb",), "must be text on one line (got 'a\\rb')"),
    ("one_line", (None,), "must be text on one line (got None)"),
    ("url", ("ftp://x",), "must be a http:// or https:// or file:// URL (got 'ftp://x')"),
    ("url", ("https://",), "must be a http:// or https:// or file:// URL (got 'https://')"),
    ("url", ("https://a b",), "must be a http:// or https:// or file:// URL (got 'https://a b')"),
    ("url", ("file:///x", ("https",)), "must be a https:// URL (got 'file:///x')"),
    ("ip_address", ("10.0.0.256",), "must be an IPv4 or IPv6 address (got '10.0.0.256')"),
    ("ip_address", ("10.0.0.0/24",), "must be an IPv4 or IPv6 address (got '10.0.0.0/24')"),
    ("ip_address", (167772161,), "must be an IPv4 or IPv6 address (got 167772161)"),
    ("ip_network", ("10.0.0.1/24",),
     "must be a network in CIDR notation (got '10.0.0.1/24': 10.0.0.1/24 has host bits set)"),
    ("ip_network", ("10.0.0.0/33",),
     "must be a network in CIDR notation (got '10.0.0.0/33': '10.0.0.0/33' does not appear to be an IPv4 or IPv6"
     " network)"),
    ("cidr_with_prefix", ("10.0.0.0",),
     "must be a network in CIDR notation with its prefix length, such as 10.0.0.0/24 (got '10.0.0.0')"),
    ("cidr_with_prefix", ("fd00::",),
     "must be a network in CIDR notation with its prefix length, such as 10.0.0.0/24 (got 'fd00::')"),
    ("cidr_with_prefix", ("10.0.0.1/24",),
     "must be a network in CIDR notation (got '10.0.0.1/24': 10.0.0.1/24 has host bits set)"),
    ("cidr_with_prefix", (None,),
     "must be a network in CIDR notation (got None: '' does not appear to be an IPv4 or IPv6 network)"),
    ("secret", ("",), "must be set (a string of at least 1 characters; the value is not shown)"),
    ("secret", ("short", 32), "must be set (a string of at least 32 characters; the value is not shown)"),
    ("secret", (None,), "must be set (a string of at least 1 characters; the value is not shown)"),
]


@pytest.mark.parametrize("check, args", GOOD, ids=str)
def test_good_value(check, args):
    assert getattr(_rules, check)(*args) is None


@pytest.mark.parametrize("check, args, expected", BAD, ids=str)
def test_bad_value(check, args, expected):
    assert getattr(_rules, check)(*args) == expected


@pytest.mark.parametrize("network, others, expected", [
    ("10.244.0.0/16", ["10.0.0.0/24", "10.244.3.0/24", "10.244.3.7", "10.0.0.0/8"], ["10.244.3.0/24", "10.244.3.7", "10.0.0.0/8"]),
    ("10.244.0.0/16", ["10.245.0.0/16", "fd00::/8", "not a network", None, "10.243.255.255"], []),
    ("fd00::/64", ["fd00::1", "10.0.0.0/8"], ["fd00::1"]),
])
def test_overlapping(network, others, expected):
    assert _rules.overlapping(network, others) == expected


def test_secret_never_shows_the_value():
    assert "hunter2" not in _rules.secret("hunter2", 32)


@pytest.mark.parametrize("values, expected", [
    ([], []), ([1, 2, 3], []), ([1, 2, 1, 1, 3, 2], [1, 2]), (["b", "a", "b"], ["b"]),
])
def test_duplicates(values, expected):
    assert duplicates(values) == expected


def test_errors_name_the_host_and_variable():
    errors = Errors("gpu01")
    assert not errors
    assert errors.check("x", None) is True
    assert errors.check("port", "must be within 1-65535 (got 0)") is False
    errors.add("name", "is bad")
    assert errors
    assert errors.messages == ["host 'gpu01': port: must be within 1-65535 (got 0)", "host 'gpu01': name: is bad"]
    shared = Errors()
    shared.add("slurm_cluster_name", "is bad")
    shared.extend(errors)
    assert shared.messages == ["slurm_cluster_name: is bad"] + errors.messages


def test_mapping_and_dict_items_record_what_is_not_a_mapping():
    errors = Errors("gpu01")
    assert list(errors.mapping_items("env", {"A": 1}, "must be a dict")) == [("A", 1)]
    assert list(errors.mapping_items("env", ["A=1"], "must be a dict")) == []
    items = [{"name": "a"}, 3, {"url": "x"}]
    assert list(errors.dict_items("parts", items)) == [("parts[0]", {"name": "a"}), ("parts[2]", {"url": "x"})]
    assert list(errors.dict_items("urls", items, "must have url", lambda item: "url" in item)) == [("urls[2]", {"url": "x"})]
    assert errors.messages == [
        "host 'gpu01': env: must be a dict (got ['A=1'])",
        "host 'gpu01': parts[1]: must be a dict with name (got 3)",
        "host 'gpu01': urls[0]: must have url (got {'name': 'a'})",
        "host 'gpu01': urls[1]: must have url (got 3)",
    ]


def test_for_hosts_checks_each_host_in_order():
    def check(errors, values):
        errors.check("p", _rules.port(values.get("p", 1)))

    assert for_hosts({"a": {"p": 0}, "b": {}, "c": {"p": 70000}}, ["c", "a", "b", "missing"], check) == [
        "host 'c': p: must be within 1-65535 (got 70000)",
        "host 'a': p: must be within 1-65535 (got 0)",
    ]


def test_host_values_take_the_hosts_own_then_the_defaults():
    hostvars = {"n1": {"a": 1, "other": 9}, "n2": {"a": None}}
    assert host_values(hostvars, ["n1", "n2", "n3"], ["a", "b", "c"], {"b": 2}) == {
        "n1": {"a": 1, "b": 2}, "n2": {"a": None, "b": 2}, "n3": {"b": 2}}


@pytest.mark.parametrize("value, messages", [
    ({}, []),
    (None, []),
    ({"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": "http://mirror:8080/wheels/", "PIP_TRUSTED_HOST": "mirror"}, []),
    ({"PIP_INDEX_URL": "https://pypi.example/simple", "PIP_NO_INDEX": 1}, []),
    ({"INDEX_URL": "x", "pip_index_url": "y"},
     ["kubernetes_client_pip_env: 'INDEX_URL' is not a PIP_* variable name",
      "kubernetes_client_pip_env: 'pip_index_url' is not a PIP_* variable name"]),
    ({"PIP_INDEX_URL": "a\nb"}, ["kubernetes_client_pip_env.PIP_INDEX_URL: must be text on one line (got 'a\\nb')"]),
    ("PIP_NO_INDEX=1", ["kubernetes_client_pip_env: must map PIP_* variables to values (got 'PIP_NO_INDEX=1')"]),
])
def test_pip_env(value, messages):
    errors = Errors()
    _rules.pip_env(errors, "kubernetes_client_pip_env", value)
    assert errors.messages == messages
