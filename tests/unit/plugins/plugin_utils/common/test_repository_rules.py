# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The package source rules the nvidia_driver and cuda roles share, and the per-host frame of the
nvidia_driver, cuda and container_toolkit rules.

The URL cases live here once; each role's tests keep one case of each variable, which proves the wiring."""

from __future__ import annotations

import pytest

from ansible_collections.gpucluster.core.plugins.plugin_utils.common._host_rules import batch_errors, host_errors
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._repository_rules import repository_errors, text
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._rules import Errors, RoleInput, RuleError

KEY = "https://developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64/3bf863cc.pub"


@pytest.mark.parametrize("value, expected", [("12.4", "12.4"), (12.4, "12.4"), (12.10, "12.1"), (550, "550"), (None, "None")])
def test_text_is_what_a_template_writes(value, expected):
    assert text(value) == expected


@pytest.mark.parametrize("repo_url, key_url, expected", [
    ("http://mirror:8080/cuda/", KEY, []),
    ("file:///srv/mirror/cuda/", KEY, []),
    ("http://mirror:8080/cuda", KEY,
     ["host 'gpu01': repo_url: must be an http(s):// or file:// URL ending in / (got 'http://mirror:8080/cuda')"]),
    ("ftp://mirror/cuda/", KEY,
     ["host 'gpu01': repo_url: must be an http(s):// or file:// URL ending in / (got 'ftp://mirror/cuda/')"]),
    (None, KEY, ["host 'gpu01': repo_url: must be an http(s):// or file:// URL ending in / (got None)"]),
    ("http://mirror/a b/", KEY,
     ["host 'gpu01': repo_url: must be an http(s):// or file:// URL ending in / (got 'http://mirror/a b/')"]),
    ("developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64/", KEY,
     ["host 'gpu01': repo_url: must be an http(s):// or file:// URL ending in / "
      "(got 'developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64/')"]),
    ("http://mirror:8080/cuda/", "https://",
     ["host 'gpu01': key_url: must be a http:// or https:// or file:// URL (got 'https://')"]),
    ("http://mirror:8080/cuda/", "mirror/key.pub",
     ["host 'gpu01': key_url: must be a http:// or https:// or file:// URL (got 'mirror/key.pub')"]),
])
def test_repository_errors(repo_url, key_url, expected):
    errors = Errors("gpu01")
    repository_errors(errors, {"repo_url": repo_url, "key_url": key_url}, "repo_url", "key_url")
    assert errors.messages == expected


def _rules(errors, values):
    if values.get("x") != 1:
        errors.add("x", "must be 1 (got %r)" % (values.get("x"),))


def test_host_errors_names_host_and_variable():
    assert host_errors("demo_errors", _rules, {"x": 1}, "a") == []
    assert host_errors("demo_errors", _rules, {"x": 2}, "a") == ["host 'a': x: must be 1 (got 2)"]


def test_host_errors_refuses_what_is_not_a_dict():
    with pytest.raises(RuleError, match=r"^demo_errors: the input must be a dict of the role's variables$"):
        host_errors("demo_errors", _rules, ["x"], "a")


def test_batch_errors_runs_host_by_host():
    given = RoleInput(hosts={"a": {"x": 2}, "b": {"x": 1}, "c": {}}, shared={})
    assert batch_errors(given, lambda values, host: host_errors("demo_errors", _rules, values, host)) == [
        "host 'a': x: must be 1 (got 2)",
        "host 'c': x: must be 1 (got None)",
    ]
