# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The container_toolkit role's input rules (controller side, pure, no Ansible imports)."""

from __future__ import annotations

import re
from typing import Any, List, Mapping

from ansible_collections.gpucluster.core.plugins.plugin_utils.common._input_types import describe
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._host_rules import batch_errors, host_errors
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._repository_rules import text as _text
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._rules import Errors, RoleInput, url

RUNTIME = "nvidia"

# upstream-revision as NVIDIA publishes it: 1.17.8-1 (the same on apt and dnf).
_VERSION_RE = re.compile(r"^[0-9]+[.][0-9]+[.][0-9]+(~rc[.][0-9]+)?-[0-9][0-9A-Za-z.+~]*$")
# A Debian or RPM version with optional epoch: 5:27.4.0-1~debian.12~bookworm, 3:27.4.0-1.el9.
_DOCKER_VERSION_RE = re.compile(r"^([0-9]+:)?[0-9][0-9A-Za-z.+~_-]*$")
_USER_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.@-]*[$]?$")
_IMAGE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/:@-]*$")


def _host(errors: Errors, values: Mapping[str, Any]) -> None:
    source = values.get("container_toolkit_docker_source")
    if source not in ("docker", "distribution"):
        errors.add("container_toolkit_docker_source",
                   "must be docker (Docker's repository) or distribution (the distribution's docker.io) (got %r)"
                   % (source,))
    version = values.get("container_toolkit_version")
    if not _VERSION_RE.match(_text(version)):
        errors.add("container_toolkit_version",
                   "must pin one toolkit release as the repository names it, such as 1.17.8-1 (got %r)" % (version,))
    urls = ["container_toolkit_repo_url", "container_toolkit_key_url"]
    if source == "docker":
        urls += ["container_toolkit_docker_repo_url", "container_toolkit_docker_key_url"]
    for name in urls:
        errors.check(name, url(values.get(name)))
    docker_version = values.get("container_toolkit_docker_version")
    if docker_version not in (None, ""):
        if source != "docker":
            errors.add("container_toolkit_docker_version",
                       "pins docker-ce from Docker's repository; with container_toolkit_docker_source "
                       "distribution leave it empty")
        elif not _DOCKER_VERSION_RE.match(_text(docker_version)):
            errors.add("container_toolkit_docker_version",
                       "must be a package version such as 5:27.4.0-1~debian.12~bookworm, or empty (got %r)"
                       % (docker_version,))
    config = values.get("container_toolkit_docker_daemon_config")
    if not isinstance(config, Mapping):
        errors.add("container_toolkit_docker_daemon_config",
                   "must be a dict of daemon.json settings (got %s)" % describe(config))
    else:
        runtimes = config.get("runtimes")
        if isinstance(runtimes, Mapping) and RUNTIME in runtimes:
            errors.add("container_toolkit_docker_daemon_config", "must not set runtimes.nvidia: the role writes it")
        if config.get("default-runtime") == RUNTIME and values.get("container_toolkit_default_runtime") is not True:
            errors.add("container_toolkit_docker_daemon_config",
                       "sets default-runtime nvidia: set container_toolkit_default_runtime: true instead")
    users = values.get("container_toolkit_docker_users")
    if users is None:
        users = []
    if not isinstance(users, list):
        errors.add("container_toolkit_docker_users", "must be a list of user names (got %s)" % describe(users))
    else:
        for index, user in enumerate(users):
            if not isinstance(user, str) or not _USER_RE.match(user):
                errors.add("container_toolkit_docker_users[%d]" % index, "must be a user name (got %r)" % (user,))
    gpu_test = values.get("container_toolkit_gpu_test")
    if _text(gpu_test).lower() not in ("auto", "true", "false"):
        errors.add("container_toolkit_gpu_test", "must be auto, true or false (got %r)" % (gpu_test,))
    image = values.get("container_toolkit_test_image")
    if not isinstance(image, str) or not _IMAGE_RE.match(image):
        errors.add("container_toolkit_test_image",
                   "must be an image reference such as nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04 (got %r)"
                   % (image,))


def container_toolkit_errors(values: Mapping[str, Any], host: str) -> List[str]:
    """Every error in one host's container_toolkit variables, as messages naming host and variable."""
    return host_errors("container_toolkit_errors", _host, values, host)


def input_errors(given: RoleInput) -> List[str]:
    """The rules over this batch's hosts, each with its values as it sees them (the defaults are
    templated per host)."""
    return batch_errors(given, container_toolkit_errors)
