# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""container_toolkit_errors: the container_toolkit role's input rules, as tables with exact messages."""

from __future__ import annotations

import pytest

from ansible_collections.gpucluster.core.plugins.plugin_utils.common._rules import RuleError
from ansible_collections.gpucluster.core.plugins.plugin_utils.container_toolkit._rules import container_toolkit_errors

GOOD = {
    "container_toolkit_docker_source": "docker",
    "container_toolkit_version": "1.17.8-1",
    "container_toolkit_repo_url": "https://nvidia.github.io/libnvidia-container/stable/deb/$(ARCH)",
    "container_toolkit_key_url": "https://nvidia.github.io/libnvidia-container/gpgkey",
    "container_toolkit_docker_repo_url": "https://download.docker.com/linux/debian",
    "container_toolkit_docker_key_url": "https://download.docker.com/linux/debian/gpg",
    "container_toolkit_docker_version": "",
    "container_toolkit_docker_daemon_config": {},
    "container_toolkit_default_runtime": False,
    "container_toolkit_docker_users": [],
    "container_toolkit_gpu_test": "auto",
    "container_toolkit_test_image": "nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04",
}
H = "host 'gpu01': "


@pytest.mark.parametrize("change", [
    {},
    {"container_toolkit_docker_source": "distribution", "container_toolkit_docker_repo_url": "not checked",
     "container_toolkit_version": "1.17.4-1", "container_toolkit_repo_url": "http://mirror:8080/x/deb/amd64",
     "container_toolkit_docker_daemon_config": {"log-driver": "json-file", "log-opts": {"max-size": "100m"}}},
    {"container_toolkit_docker_version": "5:27.4.0-1~debian.12~bookworm", "container_toolkit_default_runtime": True,
     "container_toolkit_docker_daemon_config": {"default-runtime": "nvidia", "runtimes": {"crun": {"path": "crun"}}},
     "container_toolkit_docker_users": ["alice", "svc-ci", "machine$"], "container_toolkit_gpu_test": True,
     "container_toolkit_repo_url": "file:///srv/mirror/libnvidia-container/stable/deb/$(ARCH)"},
    {"container_toolkit_version": "1.18.0~rc.1-1", "container_toolkit_docker_version": "3:27.4.0-1.el9",
     "container_toolkit_gpu_test": "False", "container_toolkit_docker_users": None,
     "container_toolkit_docker_daemon_config": {"debug": None}},
])
def test_good(change):
    assert container_toolkit_errors({**GOOD, **change}, "gpu01") == []


@pytest.mark.parametrize("change, messages", [
    ({"container_toolkit_docker_source": "snap"},
     ["container_toolkit_docker_source: must be docker (Docker's repository) or distribution (the distribution's"
      " docker.io) (got 'snap')"]),
    ({"container_toolkit_version": "latest"},
     ["container_toolkit_version: must pin one toolkit release as the repository names it, such as 1.17.8-1"
      " (got 'latest')"]),
    ({"container_toolkit_version": 1.17},
     ["container_toolkit_version: must pin one toolkit release as the repository names it, such as 1.17.8-1"
      " (got 1.17)"]),
    ({"container_toolkit_repo_url": "ftp://x/y", "container_toolkit_docker_key_url": "https://a b"},
     ["container_toolkit_repo_url: must be a http:// or https:// or file:// URL (got 'ftp://x/y')",
      "container_toolkit_docker_key_url: must be a http:// or https:// or file:// URL (got 'https://a b')"]),
    ({"container_toolkit_docker_source": "distribution", "container_toolkit_docker_version": "27.4.0"},
     ["container_toolkit_docker_version: pins docker-ce from Docker's repository; with"
      " container_toolkit_docker_source distribution leave it empty"]),
    ({"container_toolkit_docker_version": "27 4"},
     ["container_toolkit_docker_version: must be a package version such as 5:27.4.0-1~debian.12~bookworm,"
      " or empty (got '27 4')"]),
    ({"container_toolkit_docker_daemon_config": ["log-driver", "json-file"]},
     ["container_toolkit_docker_daemon_config: must be a dict of daemon.json settings (got a list)"]),
    ({"container_toolkit_docker_daemon_config": {"runtimes": {"nvidia": {"path": "/opt/x"}}}},
     ["container_toolkit_docker_daemon_config: must not set runtimes.nvidia: the role writes it"]),
    ({"container_toolkit_docker_daemon_config": {"default-runtime": "nvidia"}},
     ["container_toolkit_docker_daemon_config: sets default-runtime nvidia: set container_toolkit_default_runtime:"
      " true instead"]),
    ({"container_toolkit_docker_users": ["alice", "bad user", 7]},
     ["container_toolkit_docker_users[1]: must be a user name (got 'bad user')",
      "container_toolkit_docker_users[2]: must be a user name (got 7)"]),
    ({"container_toolkit_docker_users": "alice"},
     ["container_toolkit_docker_users: must be a list of user names (got the string 'alice')"]),
    ({"container_toolkit_gpu_test": "maybe"},
     ["container_toolkit_gpu_test: must be auto, true or false (got 'maybe')"]),
    ({"container_toolkit_test_image": "cuda; rm -rf /"},
     ["container_toolkit_test_image: must be an image reference such as nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04"
      " (got 'cuda; rm -rf /')"]),
])
def test_bad(change, messages):
    assert container_toolkit_errors({**GOOD, **change}, "gpu01") == [H + m for m in messages]


def test_every_error_at_once():
    bad = {**GOOD, "container_toolkit_version": "x", "container_toolkit_gpu_test": "x", "container_toolkit_test_image": ""}
    assert len(container_toolkit_errors(bad, "gpu01")) == 3


def test_not_a_dict():
    with pytest.raises(RuleError) as exc:
        container_toolkit_errors(["x"], "gpu01")
    assert str(exc.value) == "container_toolkit_errors: the input must be a dict of the role's variables"
