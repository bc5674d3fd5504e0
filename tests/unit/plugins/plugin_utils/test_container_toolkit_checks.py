# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The container_toolkit role's checks of what it read from the hosts, as tables with exact messages."""

from __future__ import annotations

import pytest

from ansible_collections.gpucluster.core.plugins.plugin_utils._container_toolkit_checks import (
    CheckError,
    failed_hosts,
    missing_versions,
    offered_versions,
)

PACKAGES = ["nvidia-container-toolkit", "nvidia-container-toolkit-base", "libnvidia-container-tools",
            "libnvidia-container1"]
URL = "http://mirror:8080/libnvidia-container/stable/deb/amd64"
SOURCE = "http://mirror:8080/libnvidia-container/stable/deb/amd64  Packages"


def madison(versions):
    """apt-cache madison's lines for every toolkit package at the versions given (newest first)."""
    return ["%s |   %s | %s" % (name, version, SOURCE) for name in PACKAGES for version in versions]


@pytest.mark.parametrize("lines, version, expected", [
    pytest.param(madison(["1.17.8-1", "1.17.4-1"]), "1.17.4-1", [], id="offered"),
    pytest.param(madison(["1.17.8-1", "1.17.4-1"]), "1.17.9-1",
                 ["nvidia-container-toolkit, nvidia-container-toolkit-base, libnvidia-container-tools, libnvidia-container1"
                  " 1.17.9-1 are not in %s (it has: 1.17.8-1, 1.17.4-1)" % URL], id="none-has-it"),
    pytest.param(madison(["1.17.4-1"])[:3] + ["libnvidia-container1 |   1.17.8-1 | " + SOURCE], "1.17.4-1",
                 ["libnvidia-container1 1.17.4-1 is not in %s (it has: 1.17.8-1)" % URL], id="one-lacks-it"),
    pytest.param([], "1.17.8-1",
                 ["nvidia-container-toolkit, nvidia-container-toolkit-base, libnvidia-container-tools, libnvidia-container1"
                  " 1.17.8-1 are not in %s (it has: no version of it)" % URL], id="repository-empty"),
    pytest.param(madison(["1.17.8-1"])[:2] + ["N: Unable to locate package libnvidia-container-tools", ""], "1.17.8-1",
                 ["libnvidia-container-tools, libnvidia-container1 1.17.8-1 are not in %s (it has: no version of it)" % URL],
                 id="two-unknown"),
    pytest.param(["%s | 1.17.8-1 | nvidia-container-toolkit" % name for name in PACKAGES], "1.17.8-1", [],
                 id="dnf-repoquery"),
])
def test_missing_versions(lines, version, expected):
    assert missing_versions(lines, PACKAGES, version, URL) == expected


def test_offered_versions_keeps_the_order():
    assert offered_versions(["a | 2 | x", "a | 1 | x", "b | 3 | y", "no bars here"]) == {"a": ["2", "1"], "b": ["3"]}


@pytest.mark.parametrize("lines, packages, message", [
    ("a | 1 | x", PACKAGES, "container_toolkit_missing_versions: the lines and the packages must be lists"),
    ([], "nvidia-container-toolkit", "container_toolkit_missing_versions: the lines and the packages must be lists"),
    ([1], PACKAGES, "container_toolkit_missing_versions: the input must be lines of text (got 1)"),
])
def test_missing_versions_refuses(lines, packages, message):
    with pytest.raises(CheckError) as exc:
        missing_versions(lines, packages, "1.17.8-1", URL)
    assert str(exc.value) == message


HOSTVARS = {
    "gpu01": {"read": {"changed": False, "content": {}, "failed": False}},
    "gpu02": {"read": {"changed": False, "failed": False, "msg": "/etc/docker/daemon.json holds a JSON list, not an object"}},
    "gpu03": {"read": {"changed": False, "skipped": True}},
    "gpu04": {},
    "gpu05": {"read": {"failed": False}},
}


@pytest.mark.parametrize("hosts, expected", [
    (["gpu01", "gpu03", "gpu04"], []),
    (["gpu01", "gpu02"], ["host 'gpu02': /etc/docker/daemon.json holds a JSON list, not an object"]),
    (["gpu05", "gpu02"], ["host 'gpu05': read failed without a message",
                          "host 'gpu02': /etc/docker/daemon.json holds a JSON list, not an object"]),
])
def test_failed_hosts(hosts, expected):
    assert failed_hosts(hosts, HOSTVARS, "read", "content") == expected


def test_failed_hosts_refuses_a_string():
    with pytest.raises(CheckError) as exc:
        failed_hosts("gpu01", HOSTVARS, "read", "content")
    assert str(exc.value) == "container_toolkit_failed_hosts: the input must be a list of host names"
