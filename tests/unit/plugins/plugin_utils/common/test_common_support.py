# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection's one support matrix: what each role's preflight accepts, and what it says where not."""

from __future__ import annotations

import pytest

from ansible_collections.gpucluster.core.plugins.filter.common import FilterModule
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._support import (
    LIVE, RELEASES, ROLES, UNIT, meta_platforms, proofs, release_status, role_releases, supported_names, supported_os)
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._rules import RuleError

EVERY = "Debian 12 / 13, Ubuntu 22.04 / 24.04, RHEL / Rocky / AlmaLinux 8 / 9"


def facts(distribution, version, architecture="x86_64"):
    return {"distribution": distribution, "distribution_version": version,
            "distribution_major_version": version.split(".")[0], "architecture": architecture}


@pytest.mark.parametrize("role, host", [
    ("base_os", facts("Debian", "12.8")),
    ("base_os", facts("Debian", "13.1")),
    ("base_os", facts("Ubuntu", "22.04")),
    ("base_os", facts("Ubuntu", "24.04")),
    ("base_os", facts("Rocky", "8.10")),
    ("base_os", facts("RedHat", "9.4")),
    ("base_os", facts("AlmaLinux", "9.5")),
    ("nfs", facts("AlmaLinux", "8.10")),
    ("cuda", facts("Rocky", "9.4", "aarch64")),
    ("cuda", facts("Ubuntu", "24.04", "aarch64")),
    ("monitoring", facts("Ubuntu", "22.04")),
    ("kubernetes", facts("Debian", "13.1")),
    ("slurm", facts("Debian", "12.8", "ppc64le")),
])
def test_supported(role, host):
    assert supported_os(host, role, "n1") == {
        "supported": True, "release": "%s %s" % (host["distribution"].replace("RedHat", "RHEL"), host["distribution_version"]),
        "message": "", "allow_variable": ROLES[role].allow_variable}


@pytest.mark.parametrize("role, host, message", [
    ("base_os", facts("Debian", "11.9"),
     "base_os: Debian 11.9 on host 'n1' is not supported (supported: %s). "
     "Set base_os_allow_unsupported_os=true to try anyway." % EVERY),
    ("ofed", facts("Ubuntu", "20.04"),
     "ofed: Ubuntu 20.04 on host 'n1' is not supported (supported: %s). "
     "Set ofed_allow_unsupported_os=true to try anyway." % EVERY),
    ("nfs", facts("CentOS", "7.9"),
     "nfs: CentOS 7.9 on host 'n1' is not supported (supported: %s)." % EVERY),
    ("container_toolkit", facts("Fedora", "41"),
     "container_toolkit: Fedora 41 on host 'n1' is not supported (supported: %s)." % EVERY),
    ("cuda", facts("AlmaLinux", "9.5"),
     "cuda: AlmaLinux 9.5 (x86_64) on host 'n1' is not supported (supported: Debian 12 / 13, Ubuntu 22.04 / 24.04, "
     "RHEL / Rocky 8 / 9; on x86_64 or aarch64). Not AlmaLinux: NVIDIA's CUDA repository has no path for "
     "AlmaLinux (RHEL and Rocky share its rhel8 and rhel9)."),
    ("cuda", facts("Debian", "12.8", "ppc64le"),
     "cuda: Debian 12.8 (ppc64le) on host 'n1' is not supported (supported: Debian 12 / 13, Ubuntu 22.04 / 24.04, "
     "RHEL / Rocky 8 / 9; on x86_64 or aarch64)."),
    ("monitoring", facts("Rocky", "9.4"),
     "monitoring: Rocky 9.4 on host 'n1' is not supported (supported: Debian 12 / 13, Ubuntu 22.04 / 24.04). "
     "Not Rocky: the role installs Prometheus, Alertmanager and the node exporter from the distribution, "
     "and EL has them only in EPEL."),
    ("monitoring", facts("RedHat", "9.4"),
     "monitoring: RHEL 9.4 on host 'n1' is not supported (supported: Debian 12 / 13, Ubuntu 22.04 / 24.04). "
     "Not RHEL: the role installs Prometheus, Alertmanager and the node exporter from the distribution, "
     "and EL has them only in EPEL."),
    ("kubernetes", facts("Debian", "11.9"),
     "kubernetes: Debian 11.9 on host 'n1' is not supported (supported: %s)." % EVERY),
    # No facts: refused, saying so.
    ("slurm", {}, "slurm: the distribution on host 'n1' is not known (no facts gathered)."),
    ("base_os", {}, "base_os: the distribution on host 'n1' is not known (no facts gathered). "
                    "Set base_os_allow_unsupported_os=true to try anyway."),
])
def test_refused(role, host, message):
    result = supported_os(host, role, "n1")
    assert result["supported"] is False
    assert result["message"] == message


def test_without_a_host_name():
    assert supported_os(facts("Debian", "11.9"), "nfs")["message"] == (
        "nfs: Debian 11.9 is not supported (supported: %s)." % EVERY)


def test_an_unknown_role_is_an_error():
    with pytest.raises(RuleError, match="supported_os: no role 'nope' in the support matrix"):
        supported_os(facts("Debian", "12.8"), "nope")


@pytest.mark.parametrize("role, names", [
    ("base_os", EVERY),
    ("cuda", "Debian 12 / 13, Ubuntu 22.04 / 24.04, RHEL / Rocky 8 / 9; on x86_64 or aarch64"),
    ("monitoring", "Debian 12 / 13, Ubuntu 22.04 / 24.04"),
])
def test_supported_names(role, names):
    assert supported_names(role) == names


@pytest.mark.parametrize("role, platforms", [
    ("base_os", [{"name": "Debian", "versions": ["bookworm", "trixie"]}, {"name": "Ubuntu", "versions": ["jammy", "noble"]},
                 {"name": "EL", "versions": ["8", "9"]}]),
    ("cuda", [{"name": "Debian", "versions": ["bookworm", "trixie"]}, {"name": "Ubuntu", "versions": ["jammy", "noble"]},
              {"name": "EL", "versions": ["8", "9"]}]),
    ("monitoring", [{"name": "Debian", "versions": ["bookworm", "trixie"]}, {"name": "Ubuntu", "versions": ["jammy", "noble"]}]),
])
def test_meta_platforms(role, platforms):
    assert meta_platforms(role) == platforms


def test_status_and_proofs():
    debian12, debian13, jammy = RELEASES[0], RELEASES[1], RELEASES[2]
    alma9 = next(r for r in RELEASES if r.distribution == "AlmaLinux" and r.major == "9")
    assert release_status("base_os", debian12) == LIVE
    assert proofs("base_os", debian12) == ("molecule/base_os", "sandbox")
    assert release_status("kubernetes", debian13) == UNIT
    assert proofs("kubernetes", debian13) == ()
    assert release_status("slurm", jammy) == UNIT
    assert release_status("cuda", alma9) is None
    assert alma9 not in role_releases("cuda")


def test_only_debian_is_live():
    """What the README says: no role has run on Ubuntu or EL here."""
    for role, support in ROLES.items():
        assert set(support.live) <= {"Debian 12", "Debian 13"}, role
        assert all(support.live.values()), role


def test_the_filter():
    result = FilterModule().filters()["supported_os"](facts("Debian", "11.9"), "nfs", "n1")
    assert result["supported"] is False and result["message"].startswith("nfs: Debian 11.9 on host 'n1'")
