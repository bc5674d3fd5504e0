# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The operating systems the roles support: one matrix for the whole collection (controller side, pure).

Each release the collection claims (``RELEASES``) and, per role (``ROLES``), the releases it leaves
out, the architectures it needs, its escape hatch and where each release was proven on live nodes.
A release a role supports is ``live`` where a molecule scenario or the sandbox ran the role on it,
else ``unit``: written for (the role's ``vars/<os_family>.yml``) and unit tested, never run on a node here.

Read by every role's preflight (the common role's ``supported_os`` task file, through the filter
``gpucluster.core.supported_os``), by the roles' ``tasks/artifacts.yml`` (the artifact list warns where a
preflight would stop), and by ``tests/harness/role_docs.py``, which writes the support tables of
README.md and the role READMEs; ``tests/playbook/test_support_matrix.py`` checks each role's
``meta/main.yml`` platforms against it.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Tuple

from ansible_collections.gpucluster.core.plugins.plugin_utils.common._rules import RuleError

LIVE = "live"
UNIT = "unit"


class Release(NamedTuple):
    """One release as the facts name it, and as Galaxy's ``platforms`` names it."""

    distribution: str  # ansible_facts['distribution']
    major: str  # ansible_facts['distribution_major_version']
    version: str  # as people name it: 12, 22.04, 9
    codename: str  # bookworm, jammy; empty for EL
    platform: str  # meta/main.yml galaxy_info.platforms[].name
    platform_version: str  # ... and its versions[] entry

    @property
    def name(self) -> str:
        return "%s %s" % (DISPLAY.get(self.distribution, self.distribution), self.version)


# How people name a distribution whose fact differs.
DISPLAY = {"RedHat": "RHEL"}

RELEASES: Tuple[Release, ...] = (
    Release("Debian", "12", "12", "bookworm", "Debian", "bookworm"),
    Release("Debian", "13", "13", "trixie", "Debian", "trixie"),
    Release("Ubuntu", "22", "22.04", "jammy", "Ubuntu", "jammy"),
    Release("Ubuntu", "24", "24.04", "noble", "Ubuntu", "noble"),
    Release("RedHat", "8", "8", "", "EL", "8"),
    Release("Rocky", "8", "8", "", "EL", "8"),
    Release("AlmaLinux", "8", "8", "", "EL", "8"),
    Release("RedHat", "9", "9", "", "EL", "9"),
    Release("Rocky", "9", "9", "", "EL", "9"),
    Release("AlmaLinux", "9", "9", "", "EL", "9"),
)

# Where a role ran on live nodes. molecule/<name>: a scenario, in CI (tests/run-all.sh: the site
# scenario on Debian 13, every other on Debian 12); sandbox: tests/sandbox/sandbox.sh up, by hand.
SANDBOX = "sandbox"
SANDBOX_DEBIAN13 = "sandbox --os debian13"
SANDBOX_KUBERNETES = "sandbox --kubernetes"
MOLECULE_SITE = "molecule/site"
MOLECULE_EVERY = "molecule/*"


class RoleSupport(NamedTuple):
    """A role's part of the matrix."""

    live: Mapping[str, Tuple[str, ...]]  # release name ("Debian 12") -> where it ran there
    excluded: Tuple[str, ...] = ()  # distributions (facts' names) the role leaves out
    reason: str = ""  # why, said where a host of an excluded distribution is refused
    architectures: Tuple[str, ...] = ()  # the architectures it runs on; empty: any
    allow_variable: str = ""  # the role's variable that runs it on any release anyway


_EL = ("RedHat", "Rocky", "AlmaLinux")
_K8S = {"Debian 12": ("molecule/kubernetes", SANDBOX_KUBERNETES)}

ROLES: Dict[str, RoleSupport] = {
    "base_os": RoleSupport(
        live={"Debian 12": ("molecule/base_os", SANDBOX), "Debian 13": (MOLECULE_SITE, SANDBOX_DEBIAN13)},
        allow_variable="base_os_allow_unsupported_os"),
    "common": RoleSupport(
        live={"Debian 12": (MOLECULE_EVERY, SANDBOX), "Debian 13": (MOLECULE_SITE, SANDBOX_DEBIAN13)}),
    "container_toolkit": RoleSupport(
        live={"Debian 12": ("molecule/gpu_stack", SANDBOX, SANDBOX_KUBERNETES),
              "Debian 13": (MOLECULE_SITE, SANDBOX_DEBIAN13)}),
    "cuda": RoleSupport(
        live={"Debian 12": ("molecule/gpu_stack", SANDBOX), "Debian 13": (MOLECULE_SITE, SANDBOX_DEBIAN13)},
        excluded=("AlmaLinux",),
        reason="NVIDIA's CUDA repository has no path for AlmaLinux (RHEL and Rocky share its rhel8 and rhel9)",
        architectures=("x86_64", "aarch64")),
    "gpu_operator": RoleSupport(live=_K8S),
    "kubernetes": RoleSupport(live=_K8S),
    "monitoring": RoleSupport(
        live={"Debian 12": (SANDBOX,), "Debian 13": (MOLECULE_SITE,)},
        excluded=_EL,
        reason=("the role installs Prometheus, Alertmanager and the node exporter from the distribution, "
                "and EL has them only in EPEL")),
    "nfs": RoleSupport(
        live={"Debian 12": ("molecule/nfs", SANDBOX), "Debian 13": (MOLECULE_SITE, SANDBOX_DEBIAN13)}),
    "nvidia_driver": RoleSupport(
        live={"Debian 12": ("molecule/gpu_stack", SANDBOX), "Debian 13": (MOLECULE_SITE, SANDBOX_DEBIAN13)}),
    "ofed": RoleSupport(
        live={"Debian 12": ("molecule/ofed", SANDBOX), "Debian 13": (MOLECULE_SITE, SANDBOX_DEBIAN13)},
        allow_variable="ofed_allow_unsupported_os"),
    "slurm": RoleSupport(
        live={"Debian 12": ("molecule/slurm", "molecule/validation", SANDBOX), "Debian 13": (MOLECULE_SITE,)}),
    "training_operator": RoleSupport(live=_K8S),
    "validation": RoleSupport(
        live={"Debian 12": ("molecule/validation", "molecule/kubernetes", SANDBOX, SANDBOX_KUBERNETES)}),
}


def _role(role: str) -> RoleSupport:
    if role not in ROLES:
        raise RuleError("supported_os: no role %r in the support matrix (roles: %s)" % (role, ", ".join(sorted(ROLES))))
    return ROLES[role]


def role_releases(role: str) -> List[Release]:
    """The releases ``role`` supports, in the matrix's order."""
    support = _role(role)
    return [release for release in RELEASES if release.distribution not in support.excluded]


def release_status(role: str, release: Release) -> Optional[str]:
    """``live``, ``unit``, or None where the role does not support ``release``."""
    if release not in role_releases(role):
        return None
    return LIVE if _role(role).live.get(release.name) else UNIT


def proofs(role: str, release: Release) -> Tuple[str, ...]:
    """Where ``role`` ran on ``release`` (empty where it did not)."""
    return tuple(_role(role).live.get(release.name, ()))


def meta_platforms(role: str) -> List[Dict[str, Any]]:
    """Galaxy's ``platforms`` for ``role`` (meta/main.yml): each platform once, its versions in order."""
    out: Dict[str, List[str]] = {}
    for release in role_releases(role):
        versions = out.setdefault(release.platform, [])
        if release.platform_version not in versions:
            versions.append(release.platform_version)
    return [{"name": name, "versions": versions} for name, versions in out.items()]


def supported_names(role: str) -> str:
    """The releases ``role`` supports, for people: ``Debian 12 / 13, Ubuntu 22.04 / 24.04, RHEL / Rocky /
    AlmaLinux 8 / 9``; distributions with the same versions share their versions."""
    versions: Dict[str, List[str]] = {}
    for release in role_releases(role):
        versions.setdefault(DISPLAY.get(release.distribution, release.distribution), []).append(release.version)
    groups: List[Tuple[List[str], List[str]]] = []
    for distribution, listed in versions.items():
        for names, same in groups:
            if same == listed:
                names.append(distribution)
                break
        else:
            groups.append(([distribution], listed))
    text = ", ".join("%s %s" % (" / ".join(names), " / ".join(listed)) for names, listed in groups)
    architectures = _role(role).architectures
    return text + ("; on %s" % " or ".join(architectures) if architectures else "")


def supported_os(facts: Mapping[str, Any], role: str, host: str = "") -> Dict[str, Any]:
    """Whether ``role`` supports the host of ``facts`` (its ``ansible_facts``).

    Returns ``supported`` (true or false), ``release`` (``Debian 12.8``, for messages), ``message`` (why it is
    refused, naming the role, the host and the supported releases; empty where supported) and
    ``allow_variable`` (the role's variable that runs it anyway, or empty)."""
    support = _role(role)
    distribution = str(facts.get("distribution") or "")
    major = str(facts.get("distribution_major_version") or "")
    architecture = str(facts.get("architecture") or "")
    release = ("%s %s" % (DISPLAY.get(distribution, distribution), facts.get("distribution_version") or major)).strip()
    where = " on host '%s'" % host if host else ""
    supported = (any(r.distribution == distribution and r.major == major for r in role_releases(role))
                 and (not support.architectures or architecture in support.architectures))
    message = ""
    if not distribution:
        message = "%s: the distribution%s is not known (no facts gathered)." % (role, where)
    elif not supported:
        on = " (%s)" % architecture if support.architectures and architecture else ""
        message = "%s: %s%s%s is not supported (supported: %s)." % (role, release, on, where, supported_names(role))
        if distribution in support.excluded:
            message += " Not %s: %s." % (DISPLAY.get(distribution, distribution), support.reason)
    if message and support.allow_variable:
        message += " Set %s=true to try anyway." % support.allow_variable
    return {"supported": supported, "release": release, "message": message, "allow_variable": support.allow_variable}
