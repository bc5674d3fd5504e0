# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which package specs a node already satisfies (gpucluster.core.packages' shortcut)."""

from __future__ import annotations

import pytest

from ansible_collections.gpucluster.core.plugins.plugin_utils.common._packages import (
    PackagesError,
    apt_pin_file,
    apt_preferences,
    dpkg_query_names,
    installed_versions,
    parse_dpkg_query,
    pending_specs,
    selection_changes,
    selections,
)
from ansible_collections.gpucluster.core.tests.unit.plugins.plugin_utils.failures import message_of

# As dpkg-query -W --showformat='${Package}\t${Version}\t${db:Status-Abbrev}\n' prints them
# (read on a Debian 12 node: the status abbreviation ends in a space when there is no error).
LISTING = (
    "bash\t5.2.15-2+b13\tii \n"
    "cuda-drivers-550\t550.54.15-1\thi \n"
    "docker-ce\t5:24.0.7-1~debian.12~bookworm\tii \n"
    "nfs-common\t\tun \n"
    "slurmd\t22.05.8-4+deb12u3\trc \n"
    "half\t1.0-1\tiU \n"
    "broken\t1.0-1\tiiR\n"
)


def test_parse_keeps_installed_and_held_only():
    assert parse_dpkg_query(LISTING) == {
        "bash": "5.2.15-2+b13",
        "cuda-drivers-550": "550.54.15-1",
        "docker-ce": "5:24.0.7-1~debian.12~bookworm",
    }


@pytest.mark.parametrize("text, message", [
    ("bash 5.2 ii\n", "dpkg-query line 1 is not 'name<TAB>version<TAB>status': 'bash 5.2 ii'"),
    ("bash\t5.2\tii \n\tx\tii\n", "dpkg-query line 2 is not 'name<TAB>version<TAB>status': '\\tx\\tii'"),
])
def test_parse_refuses_other_shapes(text, message):
    assert message_of(PackagesError, parse_dpkg_query, text) == message


INSTALLED = parse_dpkg_query(LISTING)


@pytest.mark.parametrize("specs, pending", [
    (["bash"], []),
    (["bash", "cuda-drivers-550=550.54.15-1"], []),
    (["docker-ce=5:24.0.7-1~debian.12~bookworm"], []),
    (["cuda-drivers-550=550.*"], []),
    # Another version, a wildcard that does not match, a package not (fully) installed.
    (["cuda-drivers-550=550.90.07-1"], ["cuda-drivers-550=550.90.07-1"]),
    (["cuda-drivers-550=560.*"], ["cuda-drivers-550=560.*"]),
    (["bash", "nfs-common", "slurmd", "half", "broken"], ["nfs-common", "slurmd", "half", "broken"]),
    (["no-such-package"], ["no-such-package"]),
    # What is not judged here goes to apt.
    (["bash:amd64"], ["bash:amd64"]),
    (["bash>=5"], ["bash>=5"]),
    (["bash="], ["bash="]),
    (["Bash"], ["Bash"]),
    (["nvidia-*"], ["nvidia-*"]),
    ([], []),
])
def test_pending_specs(specs, pending):
    assert pending_specs(specs, INSTALLED) == pending


@pytest.mark.parametrize("specs", ["bash", ["bash", ""], ["bash", 3], None])
def test_pending_specs_refuses_other_shapes(specs):
    assert message_of(PackagesError, pending_specs, specs, INSTALLED) == "name must be a list of package names or name=version specs, got %r" % (specs,)


def test_dpkg_query_names_once_and_only_judged():
    assert dpkg_query_names(["bash", "bash=5.2", "libc6:amd64", "nvidia-*", "cuda-drivers-550=550.*"]) == [
        "bash", "cuda-drivers-550"]


@pytest.mark.parametrize("text, pkg_mgr, installed", [
    ("docker.io\t20.10.24+dfsg1-1+b3\tii \ndocker-ce\t\tun \n", "apt", {"docker.io": "20.10.24+dfsg1-1+b3"}),
    ("", "apt", {}),
    ("package docker-ce is not installed\ndocker\t24.0.5\n", "dnf", {"docker": "24.0.5"}),
    ("package docker-ce is not installed\npackage docker is not installed\n", "dnf", {}),
])
def test_installed_versions(text, pkg_mgr, installed):
    assert installed_versions(text, pkg_mgr) == installed


@pytest.mark.parametrize("text, pkg_mgr, message", [
    ("docker.io 20.10 ii\n", "apt", "dpkg-query line 1 is not 'name<TAB>version<TAB>status': 'docker.io 20.10 ii'"),
    ("docker-ce\n", "dnf", "rpm line 1 is not 'name<TAB>version': 'docker-ce'"),
    ("error: rpmdb open failed\n", "dnf", "rpm line 1 is not 'name<TAB>version': 'error: rpmdb open failed'"),
])
def test_installed_versions_refuses_other_output(text, pkg_mgr, message):
    assert message_of(PackagesError, installed_versions, text, pkg_mgr) == message


def test_selections_of_the_installed_packages():
    assert selections(LISTING) == {"bash": "install", "cuda-drivers-550": "hold", "docker-ce": "install"}


@pytest.mark.parametrize("hold, release, installed_now, changes", [
    # Held already: nothing; installed and not held: hold; not installed: left alone.
    (["cuda-drivers-550"], [], [], []),
    (["bash", "cuda-drivers-550", "nfs-common"], [], [], [("bash", "hold")]),
    # What this task just installed is held too.
    (["nfs-common"], [], ["nfs-common"], [("nfs-common", "hold")]),
    # A held package apt moved to a new pin is held again (apt may have dropped the hold).
    (["cuda-drivers-550"], [], ["cuda-drivers-550"], [("cuda-drivers-550", "hold")]),
    # Released only where held.
    ([], ["cuda-drivers-550", "bash", "slurmd"], [], [("cuda-drivers-550", "install")]),
    (["docker-ce", "docker-ce"], ["cuda-drivers-550"], [], [("docker-ce", "hold"), ("cuda-drivers-550", "install")]),
])
def test_selection_changes(hold, release, installed_now, changes):
    assert selection_changes(hold, release, selections(LISTING), installed_now) == changes


@pytest.mark.parametrize("hold, release, message", [
    (["bash"], ["bash"], "a package cannot be both held and released: bash"),
    (["libnvidia-nscq*", "cuda=12"], [], "hold takes package names, not 'libnvidia-nscq*', 'cuda=12'"),
    ([], ["Bash"], "release takes package names, not 'Bash'"),
])
def test_selection_changes_refuses(hold, release, message):
    assert message_of(PackagesError, selection_changes, hold, release, {}, []) == message


def test_apt_preferences_has_one_stanza_per_pin():
    text = apt_preferences([{"name": "cuda-drivers*", "version": "550.54.15-1"},
                            {"name": "libnccl2", "version": "2.21.5-1+cuda12.4"},
                            {"name": "nvidia-container-toolkit", "version": "1.17.*"}], "#\n# Ansible managed\n#\n")
    assert text == (
        "#\n# Ansible managed\n#\n"
        "# apt neither upgrades these packages past their version nor picks another for a dependency.\n"
        "\nPackage: cuda-drivers*\nPin: version 550.54.15-1\nPin-Priority: 1001\n"
        "\nPackage: libnccl2\nPin: version 2.21.5-1+cuda12.4\nPin-Priority: 1001\n"
        "\nPackage: nvidia-container-toolkit\nPin: version 1.17.*\nPin-Priority: 1001\n")


@pytest.mark.parametrize("pins, message", [
    ("cuda", "apt_preferences takes a list of {name, version}, got 'cuda'"),
    ([{"name": "Cuda Drivers", "version": "1"}],
     "apt_preferences: pin 0 has no package name or glob, got {'name': 'Cuda Drivers', 'version': '1'}"),
    (["cuda"], "apt_preferences: pin 0 has no package name or glob, got 'cuda'"),
    ([{"name": "cuda", "version": "1\nPin-Priority: 1"}],
     "apt_preferences: pin 0 (cuda) has no version such as 550.54.15-1 or 550.*, got '1\\nPin-Priority: 1'"),
    ([{"name": "cuda"}], "apt_preferences: pin 0 (cuda) has no version such as 550.54.15-1 or 550.*, got None"),
])
def test_apt_preferences_refuses_bad_pins(pins, message):
    assert message_of(PackagesError, apt_preferences, pins, "# x") == message


def test_apt_pin_file_is_an_entry_or_an_absent_path():
    pins = [{"name": "cuda-drivers-550", "version": "550.*"}]
    assert apt_pin_file(pins, "nvidia-driver", "# m") == {
        "dest": "/etc/apt/preferences.d/gpucluster-nvidia-driver", "content": apt_preferences(pins, "# m"),
        "owner": "root", "group": "root", "mode": "0644"}
    assert apt_pin_file([], "cuda", "# m") == {"dest": "/etc/apt/preferences.d/gpucluster-cuda", "state": "absent"}
    assert message_of(PackagesError, apt_pin_file, pins, "../x", "# m") == "apt_pin_file: the name must be lower case letters, digits and -, got '../x'"
