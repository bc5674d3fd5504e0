# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The container_toolkit_checks filters: wired to their logic, bad input as AnsibleFilterError."""

from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpucluster.core.plugins.filter.container_toolkit import FilterModule
from ansible_collections.gpucluster.core.tests.unit.plugins.plugin_utils.failures import message_of

FILTERS = FilterModule().filters()
container_toolkit_missing_versions = FILTERS["container_toolkit_missing_versions"]
container_toolkit_failed_hosts = FILTERS["container_toolkit_failed_hosts"]


def test_filters_are_registered():
    assert sorted(FILTERS) == ["container_toolkit_artifacts", "container_toolkit_failed_hosts",
                               "container_toolkit_missing_versions", "container_toolkit_other_engine",
                               "container_toolkit_plan"]


def test_missing_versions():
    lines = ["libnvidia-container1 | 1.17.8-1 | http://mirror/ Packages"]
    assert container_toolkit_missing_versions(lines, ["libnvidia-container1"], "1.17.4-1", "http://mirror/") == [
        "libnvidia-container1 1.17.4-1 is not in http://mirror/ (it has: 1.17.8-1)"]


def test_failed_hosts():
    hostvars = {"gpu01": {"r": {"msg": "bad"}}, "gpu02": {"r": {"content": {}}}}
    assert container_toolkit_failed_hosts(["gpu01", "gpu02"], hostvars, "r", "content") == ["host 'gpu01': bad"]


@pytest.mark.parametrize("call, message", [
    (lambda: container_toolkit_missing_versions("x", [], "1", "u"),
     "container_toolkit_missing_versions: the lines and the packages must be lists"),
    (lambda: container_toolkit_missing_versions([None], [], "1", "u"),
     "container_toolkit_missing_versions: the input must be lines of text (got None)"),
    (lambda: container_toolkit_failed_hosts(["gpu09"], {}, "r", "content"),
     "container_toolkit_failed_hosts: the input is not of the expected shape (KeyError: 'gpu09')"),
])
def test_bad_input(call, message):
    assert message_of(AnsibleFilterError, call) == message


@pytest.mark.parametrize("name, args, message", [
    ("container_toolkit_plan", ({"version": "1.17.8-1"},),
     "container_toolkit_plan: the input is not of the expected shape (KeyError: 'separator')"),
    ("container_toolkit_other_engine", ({}, "distribution", {"distribution": "docker.io"}, "n1"),
     "container_toolkit_other_engine: the input is not of the expected shape (KeyError: 'docker')"),
])
def test_plans_turn_bad_input_into_filter_errors(name, args, message):
    assert message_of(AnsibleFilterError, FILTERS[name], *args) == message
