# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The container_toolkit role's checks of what it read from the hosts, as tables with exact messages."""

from __future__ import annotations

import pytest

from ansible_collections.gpucluster.core.plugins.plugin_utils.container_toolkit._checks import (
    CheckError,
    artifacts,
    failed_hosts,
    missing_versions,
    offered_versions,
    other_engine,
    plan,
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


ENGINES = {"docker": "docker-ce", "distribution": "docker.io"}


@pytest.mark.parametrize("installed, source, expected", [
    pytest.param({}, "docker", [], id="none"),
    pytest.param({"docker-ce": "5:27.3.1-1"}, "docker", [], id="same-source"),
    pytest.param({"docker.io": "20.10.24+dfsg1-1"}, "docker",
                 ["host 'n1': container_toolkit_docker_source is docker, but docker.io 20.10.24+dfsg1-1 is installed, which"
                  " installing docker-ce would remove: set container_toolkit_docker_source: distribution, or remove docker.io"
                  " first"], id="docker-over-docker.io"),
    pytest.param({"docker-ce": "5:27.3.1-1", "docker.io": "20.10.24"}, "distribution",
                 ["host 'n1': container_toolkit_docker_source is distribution, but docker-ce 5:27.3.1-1 is installed, which"
                  " installing docker.io would remove: set container_toolkit_docker_source: docker, or remove docker-ce"
                  " first"], id="docker.io-over-docker-ce"),
])
def test_other_engine(installed, source, expected):
    assert other_engine(installed, source, ENGINES, "n1") == expected


def plan_values(source="docker", docker_version="", separator="="):
    return {"version": "1.17.8-1", "docker_source": source, "docker_version": docker_version, "packages": PACKAGES,
            "docker_ce_packages": ["docker-ce", "docker-ce-cli", "containerd.io", "docker-buildx-plugin",
                                   "docker-compose-plugin"],
            "docker_versioned": ["docker-ce", "docker-ce-cli"], "docker_distribution_packages": ["docker.io"],
            "separator": separator, "repositories": {"toolkit": "nvidia-container-toolkit", "docker": "docker"},
            "leftover_files": {"toolkit": ["/etc/apt/sources.list.d/nvidia-container-toolkit.list",
                                           "/etc/apt/preferences.d/nvidia-container-toolkit.pref"],
                               "docker": ["/etc/apt/sources.list.d/docker.list"]}}


TOOLKIT_PINS = [{"name": name, "version": "1.17.8-1"} for name in PACKAGES]
DOCKER_VERSION = "5:27.3.1-1~debian.12~bookworm"


@pytest.mark.parametrize("values, expected", [
    pytest.param(plan_values(), {
        "install_names": ["nvidia-container-toolkit=1.17.8-1", "nvidia-container-toolkit-base=1.17.8-1",
                          "libnvidia-container-tools=1.17.8-1", "libnvidia-container1=1.17.8-1"],
        "docker_hold": [],
        "docker_packages": ["docker-ce", "docker-ce-cli", "containerd.io", "docker-buildx-plugin", "docker-compose-plugin"],
        "pins": TOOLKIT_PINS,
        "repo_names": {"toolkit": "nvidia-container-toolkit", "docker": "docker"},
        "leftovers": [{"dest": "/etc/apt/sources.list.d/nvidia-container-toolkit.list", "state": "absent"},
                      {"dest": "/etc/apt/preferences.d/nvidia-container-toolkit.pref", "state": "absent"},
                      {"dest": "/etc/apt/sources.list.d/docker.list", "state": "absent"}]}, id="docker-newest"),
    pytest.param(plan_values(docker_version=DOCKER_VERSION), {
        "install_names": ["nvidia-container-toolkit=1.17.8-1", "nvidia-container-toolkit-base=1.17.8-1",
                          "libnvidia-container-tools=1.17.8-1", "libnvidia-container1=1.17.8-1"],
        "docker_hold": ["docker-ce", "docker-ce-cli"],
        "docker_packages": ["docker-ce=" + DOCKER_VERSION, "docker-ce-cli=" + DOCKER_VERSION, "containerd.io",
                            "docker-buildx-plugin", "docker-compose-plugin"],
        "pins": TOOLKIT_PINS + [{"name": "docker-ce", "version": DOCKER_VERSION},
                                {"name": "docker-ce-cli", "version": DOCKER_VERSION}],
        "repo_names": {"toolkit": "nvidia-container-toolkit", "docker": "docker"},
        "leftovers": [{"dest": "/etc/apt/sources.list.d/nvidia-container-toolkit.list", "state": "absent"},
                      {"dest": "/etc/apt/preferences.d/nvidia-container-toolkit.pref", "state": "absent"},
                      {"dest": "/etc/apt/sources.list.d/docker.list", "state": "absent"}]}, id="docker-pinned"),
    # The distribution's engine: Docker's version, repository and leftovers do not apply.
    pytest.param(plan_values(source="distribution", docker_version="27.3.1", separator="-"), {
        "install_names": ["nvidia-container-toolkit-1.17.8-1", "nvidia-container-toolkit-base-1.17.8-1",
                          "libnvidia-container-tools-1.17.8-1", "libnvidia-container1-1.17.8-1"],
        "docker_hold": [],
        "docker_packages": ["docker.io"],
        "pins": TOOLKIT_PINS,
        "repo_names": {"toolkit": "nvidia-container-toolkit"},
        "leftovers": [{"dest": "/etc/apt/sources.list.d/nvidia-container-toolkit.list", "state": "absent"},
                      {"dest": "/etc/apt/preferences.d/nvidia-container-toolkit.pref", "state": "absent"}]},
                 id="distribution"),
])
def test_plan(values, expected):
    assert plan(values) == expected


REPOSITORY = {"name": "nvidia-container-toolkit", "url": URL}
DOCKER_REPOSITORY = {"name": "docker", "url": "https://download.docker.com/linux/debian"}


def artifacts_host(containerd=False, python=None, verify=True, gpu_test="auto"):
    return {"supported": True, "repository": REPOSITORY, "docker_repository": DOCKER_REPOSITORY, "containerd": containerd,
            "python_version": python or {}, "tomli_package": "python3-tomli", "verify": verify, "gpu_test": gpu_test,
            "test_image": "nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04"}


DOCKER_PACKAGES = [{"name": name, "version": ""} for name in plan_values()["docker_ce_packages"]]
TOOLKIT_PACKAGES = [{"name": name, "version": "1.17.8-1"} for name in PACKAGES]
IMAGE = ["nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04"]


@pytest.mark.parametrize("values, host, expected", [
    pytest.param(plan_values(), artifacts_host(), {
        "role": "container_toolkit", "supported": True,
        "repositories": [dict(DOCKER_REPOSITORY, packages=DOCKER_PACKAGES, pins=[]),
                         dict(REPOSITORY, packages=TOOLKIT_PACKAGES, pins=TOOLKIT_PINS)],
        "distribution_packages": [], "images": IMAGE}, id="docker"),
    pytest.param(plan_values(docker_version=DOCKER_VERSION), artifacts_host(gpu_test="false"), {
        "role": "container_toolkit", "supported": True,
        "repositories": [dict(DOCKER_REPOSITORY,
                              packages=[{"name": "docker-ce", "version": DOCKER_VERSION},
                                        {"name": "docker-ce-cli", "version": DOCKER_VERSION}] + DOCKER_PACKAGES[2:],
                              pins=[{"name": "docker-ce", "version": DOCKER_VERSION},
                                    {"name": "docker-ce-cli", "version": DOCKER_VERSION}]),
                         dict(REPOSITORY, packages=TOOLKIT_PACKAGES, pins=TOOLKIT_PINS)],
        "distribution_packages": [], "images": []}, id="docker-pinned-no-gpu-test"),
    # containerd on a Python without tomllib (or one not known) needs tomli.
    pytest.param(plan_values(source="distribution"),
                 artifacts_host(containerd=True, python={"major": 3, "minor": 9}, verify=False), {
        "role": "container_toolkit", "supported": True,
        "repositories": [dict(REPOSITORY, packages=TOOLKIT_PACKAGES, pins=TOOLKIT_PINS)],
        "distribution_packages": ["docker.io", "python3-tomli"], "images": []}, id="distribution-tomli"),
    pytest.param(plan_values(source="distribution"), artifacts_host(containerd=True), {
        "role": "container_toolkit", "supported": True,
        "repositories": [dict(REPOSITORY, packages=TOOLKIT_PACKAGES, pins=TOOLKIT_PINS)],
        "distribution_packages": ["docker.io", "python3-tomli"], "images": IMAGE}, id="python-unknown"),
    pytest.param(plan_values(source="distribution"), artifacts_host(containerd=True, python={"major": 3, "minor": 11}), {
        "role": "container_toolkit", "supported": True,
        "repositories": [dict(REPOSITORY, packages=TOOLKIT_PACKAGES, pins=TOOLKIT_PINS)],
        "distribution_packages": ["docker.io"], "images": IMAGE}, id="python-3.11"),
])
def test_artifacts(values, host, expected):
    assert artifacts(values, host) == expected
