# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""container_toolkit: bad inventory data fails before any host is touched, with a message naming it."""

from __future__ import annotations

import os
import subprocess

import pytest
import yaml

from roleplay import ROOT, assert_passes_validation, assert_refused_untouched, run_role

HOSTS = ["gpu01", "gpu02"]
GROUPS = {"gpu_nodes": HOSTS}


def run_toolkit(tmp_path, host_vars=None, **group_vars):
    host_vars = host_vars or {}
    return run_role(tmp_path, "gpucluster.core.container_toolkit",
                    hosts={h: host_vars.get(h, {}) for h in HOSTS}, groups=GROUPS, group_vars=group_vars)


@pytest.mark.parametrize(
    "good",
    [
        pytest.param({}, id="defaults"),
        pytest.param({"container_toolkit_docker_source": "distribution",
                      "container_toolkit_repo_url": "http://mirror:8080/libnvidia-container/stable/deb/amd64",
                      "container_toolkit_key_url": "http://mirror:8080/libnvidia-container/gpgkey",
                      "container_toolkit_version": "1.17.4-1",
                      "container_toolkit_docker_daemon_config": {"log-driver": "json-file",
                                                                 "log-opts": {"max-size": "100m"}}},
                     id="the-gpu-stack-scenario"),
        pytest.param({"container_toolkit_docker_version": "5:27.4.0-1~debian.12~bookworm",
                      "container_toolkit_default_runtime": True, "container_toolkit_containerd": True,
                      "container_toolkit_docker_users": ["alice", "svc-ci"], "container_toolkit_gpu_test": True,
                      "container_toolkit_repo_url": "file:///srv/mirror/libnvidia-container/stable/deb/$(ARCH)"},
                     id="pinned-docker-and-everything-on"),
        pytest.param({"container_toolkit_docker_daemon_config": {"debug": None}}, id="null-removes-a-key"),
    ],
)
def test_good_data_passes_preflight_validation(tmp_path, good):
    # The control for the cases below: good data gets past the validation and only then
    # fails, at the first task that needs a host, because the hosts do not exist.
    assert_passes_validation(run_toolkit(tmp_path, **good), HOSTS, "container_toolkit")


@pytest.mark.parametrize(
    "bad, expected",
    [
        pytest.param(
            {"container_toolkit_docker_source": "snap"},
            "value of container_toolkit_docker_source must be one of: docker, distribution, got: snap",
            id="bad-docker-source",
        ),
        pytest.param(
            {"container_toolkit_version": "latest"},
            "host 'gpu01': container_toolkit_version must pin one toolkit release as the repository names it, "
            "such as 1.17.8-1 (got 'latest')",
            id="version-latest-is-not-a-pin",
        ),
        pytest.param(
            {"container_toolkit_version": "1.17.8"},
            "host 'gpu02': container_toolkit_version must pin one toolkit release as the repository names it, "
            "such as 1.17.8-1 (got '1.17.8')",
            id="version-without-revision",
        ),
        pytest.param(
            {"container_toolkit_repo_url": "nvidia.github.io/libnvidia-container/stable/deb/$(ARCH)"},
            "host 'gpu01': container_toolkit_repo_url must be an http(s):// or file:// URL "
            "(got 'nvidia.github.io/libnvidia-container/stable/deb/$(ARCH)')",
            id="repo-url-without-scheme",
        ),
        pytest.param(
            {"container_toolkit_key_url": "https://nvidia.github.io/libnvidia-container/gpgkey; curl x|sh"},
            "host 'gpu01': container_toolkit_key_url must be an http(s):// or file:// URL",
            id="key-url-with-blanks",
        ),
        pytest.param(
            {"container_toolkit_docker_key_url": "ftp://download.docker.com/linux/debian/gpg"},
            "host 'gpu01': container_toolkit_docker_key_url must be an http(s):// or file:// URL "
            "(got 'ftp://download.docker.com/linux/debian/gpg')",
            id="docker-key-url-ftp",
        ),
        pytest.param(
            {"container_toolkit_docker_version": "27.4 latest"},
            "host 'gpu01': container_toolkit_docker_version must be a package version such as "
            "5:27.4.0-1~debian.12~bookworm, or empty (got '27.4 latest')",
            id="malformed-docker-version",
        ),
        pytest.param(
            {"container_toolkit_docker_source": "distribution", "container_toolkit_docker_version": "20.10.24+dfsg1-1"},
            "host 'gpu01': container_toolkit_docker_version pins docker-ce from Docker's repository; "
            "with container_toolkit_docker_source distribution leave it empty",
            id="docker-version-with-distribution-docker",
        ),
        pytest.param(
            {"container_toolkit_docker_daemon_config": ["log-driver", "json-file"]},
            "container_toolkit_docker_daemon_config",
            id="daemon-config-not-a-dict",
        ),
        pytest.param(
            {"container_toolkit_docker_daemon_config": {"runtimes": {"nvidia": {"path": "/opt/x"}}}},
            "host 'gpu01': container_toolkit_docker_daemon_config must not set runtimes.nvidia: the role writes it",
            id="daemon-config-sets-the-runtime",
        ),
        pytest.param(
            {"container_toolkit_docker_daemon_config": {"default-runtime": "nvidia"}},
            "host 'gpu01': container_toolkit_docker_daemon_config sets default-runtime nvidia: "
            "set container_toolkit_default_runtime: true instead",
            id="default-runtime-through-the-back-door",
        ),
        pytest.param(
            {"container_toolkit_docker_users": ["alice", "bob smith"]},
            "host 'gpu01': container_toolkit_docker_users: 'bob smith' is not a user name",
            id="user-name-with-a-blank",
        ),
        pytest.param(
            {"container_toolkit_gpu_test": "sometimes"},
            "host 'gpu01': container_toolkit_gpu_test must be auto, true or false (got 'sometimes')",
            id="bad-gpu-test",
        ),
        pytest.param(
            {"container_toolkit_test_image": "cuda:12 && rm -rf /"},
            "host 'gpu01': container_toolkit_test_image must be an image reference",
            id="test-image-with-shell",
        ),
    ],
)
def test_bad_group_data_is_refused_before_any_host_is_touched(tmp_path, bad, expected):
    assert_refused_untouched(run_toolkit(tmp_path, **bad), expected)


def test_bad_value_on_one_host_stops_every_host(tmp_path):
    result = run_toolkit(tmp_path, host_vars={"gpu02": {"container_toolkit_version": "1.17"}})
    assert_refused_untouched(
        result, "host 'gpu02': container_toolkit_version must pin one toolkit release as the repository names it")


def test_wrong_type_on_one_host_stops_every_host(tmp_path):
    # Ansible's own argument check drops only gpu01; the role checks it again and stops all.
    result = run_toolkit(tmp_path, host_vars={"gpu01": {"container_toolkit_docker_users": {"alice": "yes"}}})
    assert_refused_untouched(result, "container_toolkit_docker_users")


def test_distribution_docker_on_el_is_refused_before_any_host_is_touched(tmp_path):
    """EL has no docker package: refused from the facts alone. A first play sets the hosts'
    facts on the controller (set_fact, cacheable), so no host is contacted."""
    el_facts = {"ansible_os_family": "RedHat", "ansible_distribution": "Rocky",
                "ansible_distribution_major_version": "9", "ansible_distribution_version": "9.4",
                "ansible_distribution_release": "Blue Onyx", "ansible_pkg_mgr": "dnf",
                "ansible_architecture": "x86_64"}
    inventory = {"all": {"hosts": {h: {"ansible_connection": "community.docker.docker",
                                       "ansible_host": f"gpc-absent-container-toolkit-{h}"} for h in HOSTS},
                         "vars": {"container_toolkit_docker_source": "distribution"}}}
    (tmp_path / "inventory.yml").write_text(yaml.safe_dump(inventory))
    (tmp_path / "play.yml").write_text(yaml.safe_dump([
        {"name": "Give the hosts EL facts without contacting them", "hosts": "all", "gather_facts": False,
         "tasks": [{"name": "Set the facts", "ansible.builtin.set_fact": {**el_facts, "cacheable": True}}]},
        {"name": "Apply the role", "hosts": "all", "gather_facts": False,
         "roles": ["gpucluster.core.container_toolkit"]},
    ], sort_keys=False))
    env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_STDOUT_CALLBACK="json", ANSIBLE_RETRY_FILES_ENABLED="0")
    result = subprocess.run(
        ["ansible-playbook", "-i", str(tmp_path / "inventory.yml"), str(tmp_path / "play.yml")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False,
    )
    assert_refused_untouched(
        result, "container_toolkit_docker_source is distribution, but host 'gpu01' (Rocky 9.4), host 'gpu02' (Rocky 9.4) "
                "have no Docker package of its own (EL ships Podman): use container_toolkit_docker_source: docker")
