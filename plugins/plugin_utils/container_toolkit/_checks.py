# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The container_toolkit role's checks of what it read from the hosts (controller side, pure, no
Ansible imports): which toolkit versions the repository lacks, which hosts a state read failed on,
and whether the other source's Docker engine is installed; and what the role installs (its plan:
packages, pins, repositories, leftover files) and downloads (its artifact record).

The filters in plugins/filter/container_toolkit.py wrap these functions."""

from __future__ import annotations

from typing import Any, Dict, Iterable, List, Mapping

from ansible_collections.gpucluster.core.plugins.plugin_utils.common._rules import RuleError


class CheckError(RuleError):
    """The input is not of the expected shape at all."""


def offered_versions(lines: Iterable[str]) -> Dict[str, List[str]]:
    """The versions by package from ``name | version | source`` lines (apt-cache madison, or
    dnf repoquery with that query format), in the order listed; other lines are ignored."""
    offered: Dict[str, List[str]] = {}
    for line in lines:
        if not isinstance(line, str):
            raise CheckError("container_toolkit_missing_versions: the input must be lines of text (got %r)" % (line,))
        fields = line.split("|")
        if len(fields) >= 3:
            offered.setdefault(fields[0].strip(), []).append(fields[1].strip())
    return offered


def missing_versions(lines: Iterable[str], packages: Iterable[str], version: str, repo_url: str) -> List[str]:
    """One sentence per set of packages lacking ``version`` that the repository offers the same versions of,
    in the order of ``packages``; empty when every package has it."""
    if isinstance(lines, (str, bytes)) or isinstance(packages, (str, bytes)):
        raise CheckError("container_toolkit_missing_versions: the lines and the packages must be lists")
    offered = offered_versions(lines)
    groups: Dict[str, List[str]] = {}
    for name in packages:
        have = offered.get(name, [])
        if version not in have:
            groups.setdefault(", ".join(have) or "no version of it", []).append(name)
    return ["%s %s %s not in %s (it has: %s)" % (", ".join(names), version, "is" if len(names) == 1 else "are",
                                                 repo_url, have)
            for have, names in groups.items()]


def failed_hosts(hosts: Iterable[str], hostvars: Mapping[str, Mapping[str, Any]], result: str, success_key: str
                 ) -> List[str]:
    """``host 'NAME': MESSAGE`` for each host whose registered ``result`` lacks ``success_key`` (the key the
    module returns when it succeeds): the read failed there (with failed_when: false, so that every host
    is read before one check refuses them all). Hosts where the task was skipped or did not run pass."""
    if isinstance(hosts, (str, bytes)):
        raise CheckError("container_toolkit_failed_hosts: the input must be a list of host names")
    messages = []
    for host in hosts:
        registered = hostvars[host].get(result)
        if not isinstance(registered, Mapping) or registered.get("skipped") or success_key in registered:
            continue
        messages.append("host '%s': %s" % (host, registered.get("msg") or "%s failed without a message" % result))
    return messages


def other_engine(installed: Mapping[str, str], source: str, engines: Mapping[str, str], host: str) -> List[str]:
    """The message for a host where the Docker engine of the other source is installed (docker-ce and
    docker.io conflict: installing one removes the other); empty where it is not. ``installed`` is
    {package: version} of the engines, ``engines`` the engine package of each source."""
    other_source = "distribution" if source == "docker" else "docker"
    other = engines[other_source]
    if other not in installed:
        return []
    return ["host '%s': container_toolkit_docker_source is %s, but %s %s is installed, which installing %s would remove:"
            " set container_toolkit_docker_source: %s, or remove %s first"
            % (host, source, other, installed[other], engines[source], other_source, other)]


# --- What the role installs: packages, pins, repositories ----------------------------------------
# The plan's input is a dict the role's vars build (__container_toolkit_plan_input).


def _versioned(names: Iterable[str], version: str) -> List[Dict[str, str]]:
    """``{name, version}`` per name, each name once (the first place it appears)."""
    return [{"name": name, "version": version} for name in dict.fromkeys(names)]


def _merged(*groups: List[Dict[str, str]]) -> List[Dict[str, str]]:
    """The entries of every group by name, a later group's version replacing an earlier one's in place."""
    versions: Dict[str, str] = {}
    for group in groups:
        for entry in group:
            versions[entry["name"]] = entry["version"]
    return [{"name": name, "version": version} for name, version in versions.items()]


def plan(values: Mapping[str, Any]) -> Dict[str, Any]:
    """What the role installs and removes on a host (``values``: ``version``, ``docker_source``,
    ``docker_version``, ``packages``, ``docker_ce_packages``, ``docker_versioned``,
    ``docker_distribution_packages``, ``separator``, ``repositories`` ({toolkit, docker}: their
    source names) and ``leftover_files`` ({toolkit, docker}: files to remove)):

    ``install_names``: the toolkit's packages at ``version`` (name, separator, version);
    ``docker_hold``: Docker's versioned packages where ``docker_version`` is set (docker source);
    ``docker_packages``: what the Docker install asks for, the distribution's engine or Docker's
    packages with the held ones at ``docker_version``; ``pins``: ``{name, version}`` of the toolkit
    and the held Docker packages; ``repo_names``: {toolkit, docker (docker source)} to the source's
    name; ``leftovers``: the leftover files of those repositories, as absent file entries."""
    version, separator = values["version"], values["separator"]
    docker = values["docker_source"] == "docker"
    hold = list(values["docker_versioned"]) if docker and values["docker_version"] else []
    if values["docker_source"] == "distribution":
        docker_packages = list(values["docker_distribution_packages"])
    else:
        docker_packages = ([name + separator + values["docker_version"] for name in hold]
                           + [name for name in values["docker_ce_packages"] if name not in hold])
    repositories = values["repositories"]
    repo_names = {"toolkit": repositories["toolkit"]}
    if docker:
        repo_names["docker"] = repositories["docker"]
    leftovers = values["leftover_files"]
    return {
        "install_names": [name + separator + version for name in values["packages"]],
        "docker_hold": hold,
        "docker_packages": docker_packages,
        "pins": _merged(_versioned(values["packages"], version), _versioned(hold, values["docker_version"])),
        "repo_names": repo_names,
        "leftovers": [{"dest": path, "state": "absent"} for key in repo_names for path in leftovers.get(key) or []],
    }


def _needs_tomli(host: Mapping[str, Any]) -> bool:
    """containerd.yml installs tomli where the host's Python is older than 3.11; where it is not
    known (no facts), it is listed."""
    if not host["containerd"]:
        return False
    python = host["python_version"]
    return not python or (int(python["major"]), int(python["minor"])) < (3, 11)


def artifacts(values: Mapping[str, Any], host: Mapping[str, Any]) -> Dict[str, Any]:
    """The role's record for playbooks/artifacts.yml on one host, from the plan's ``values`` and
    ``host``: ``supported``, ``repository`` and ``docker_repository`` (the common role's entries),
    ``containerd``, ``python_version`` (the ``python.version`` fact, or empty where unknown) and
    ``tomli_package``, ``verify``, ``gpu_test`` (true, false or auto, as text) and ``test_image``.

    Docker's repository (docker source) with all of Docker's packages, the held ones at
    ``docker_version``, and their pins; the toolkit's repository with its packages at ``version``
    and their pins; the distribution's Docker and tomli (containerd with a Python older than 3.11
    or unknown); the GPU test's image where the role's verification may run it."""
    planned = plan(values)
    toolkit = set(values["packages"])
    repositories = []
    if values["docker_source"] == "docker":
        packages = _merged(_versioned(values["docker_ce_packages"], ""),
                           _versioned(planned["docker_hold"], values["docker_version"]))
        repositories.append(dict(host["docker_repository"], packages=packages,
                                 pins=[pin for pin in planned["pins"] if pin["name"] not in toolkit]))
    repositories.append(dict(host["repository"], packages=_versioned(values["packages"], values["version"]),
                             pins=[pin for pin in planned["pins"] if pin["name"] in toolkit]))
    distribution = list(values["docker_distribution_packages"]) if values["docker_source"] == "distribution" else []
    if _needs_tomli(host):
        distribution.append(host["tomli_package"])
    images = [host["test_image"]] if host["verify"] and host["gpu_test"] != "false" else []
    return {"role": "container_toolkit", "supported": bool(host["supported"]), "repositories": repositories,
            "distribution_packages": distribution, "images": images}
