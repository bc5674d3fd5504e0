# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""tests/harness/debian-mirror.sh run for real on apt source folders written here: the Debian mirror
the harness builds node images and fetches source packages from is the one this machine's apt uses
(deb822 .sources first, then the one-line sources.list), deb.debian.org only when none is found,
GPC_DEBIAN_MIRROR / GPC_DEBIAN_SECURITY_MIRROR first of all."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "tests" / "harness" / "debian-mirror.sh"

DEBIAN_SOURCES = """\
Types: deb
# http://snapshot.debian.org/archive/debian/20250520T000000Z
URIs: http://mirror.site.example/debian/
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://mirror.site.example/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
"""
# Other vendors' repositories, and Debian entries that must not be taken.
OTHERS_SOURCES = """\
Types: deb
URIs: https://download.docker.com/linux/debian
Suites: bookworm
Components: stable

Types: deb
URIs: https://deb.nodesource.com/node_20.x
Suites: nodistro
Components: main

Types: deb
URIs: http://disabled.example/debian
Suites: trixie
Components: main
Enabled: no

Types: deb-src
URIs: http://sources-only.example/debian
Suites: trixie
Components: main
"""
ONE_LINE = """\
# deb http://commented.example/debian bookworm main
deb [arch=amd64 signed-by=/usr/share/keyrings/grafana.key] https://apt.grafana.com stable main
deb cdrom:[Debian GNU/Linux 12]/ bookworm main
deb http://one-line.example/debian trixie main contrib non-free-firmware
deb http://one-line.example/debian-security trixie-security main
"""


def mirror(etc, kind="archive", **env):
    environ = {k: v for k, v in os.environ.items() if not k.startswith("GPC_DEBIAN")}
    environ.update(env, GPC_APT_SOURCES_DIR=str(etc))
    proc = subprocess.run(["bash", "-c", 'source "$0"; gpc_debian_mirror "$1"', str(SCRIPT), kind],
                          env=environ, capture_output=True, text=True, check=True)
    return proc.stdout.strip()


def apt_dir(tmp_path, sources=None, sources_list=None, lists=None):
    (tmp_path / "sources.list.d").mkdir()
    for name, text in (sources or {}).items():
        (tmp_path / "sources.list.d" / name).write_text(text)
    for name, text in (lists or {}).items():
        (tmp_path / "sources.list.d" / name).write_text(text)
    if sources_list is not None:
        (tmp_path / "sources.list").write_text(sources_list)
    return tmp_path


@pytest.mark.parametrize("layout, archive, security", [
    pytest.param({"sources": {"debian.sources": DEBIAN_SOURCES}}, "http://mirror.site.example/debian",
                 "http://mirror.site.example/debian-security", id="deb822-as-debian-12-cloud-images"),
    pytest.param({"sources": {"a-others.sources": OTHERS_SOURCES, "debian.sources": DEBIAN_SOURCES}},
                 "http://mirror.site.example/debian", "http://mirror.site.example/debian-security",
                 id="deb822-other-vendors-skipped"),
    pytest.param({"sources_list": ONE_LINE}, "http://one-line.example/debian",
                 "http://one-line.example/debian-security", id="one-line-sources-list"),
    pytest.param({"sources": {"debian.sources": DEBIAN_SOURCES}, "sources_list": ONE_LINE},
                 "http://mirror.site.example/debian", "http://mirror.site.example/debian-security",
                 id="deb822-before-sources-list"),
    pytest.param({"sources": {"others.sources": OTHERS_SOURCES},
                  "lists": {"google-cloud-sdk.list": "deb https://packages.cloud.google.com/apt cloud-sdk-bookworm main\n"}},
                 "http://deb.debian.org/debian", "http://deb.debian.org/debian-security", id="none-found-public-fallback"),
    pytest.param({}, "http://deb.debian.org/debian", "http://deb.debian.org/debian-security", id="no-apt-sources"),
])
def test_mirror_from_apt_sources(tmp_path, layout, archive, security):
    etc = apt_dir(tmp_path, **layout)
    assert mirror(etc) == archive
    assert mirror(etc, "security") == security


def test_the_variables_override(tmp_path):
    etc = apt_dir(tmp_path, sources={"debian.sources": DEBIAN_SOURCES})
    assert mirror(etc, GPC_DEBIAN_MIRROR="http://override.example/debian") == "http://override.example/debian"
    assert mirror(etc, "security", GPC_DEBIAN_SECURITY_MIRROR="http://o.example/sec") == "http://o.example/sec"
    assert mirror(etc, "security", GPC_DEBIAN_MIRROR="http://override.example/debian") == \
        "http://mirror.site.example/debian-security"
