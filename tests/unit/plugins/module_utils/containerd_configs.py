# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""containerd config.toml contents the containerd_nvidia_runtime and containerd_cri tests run over,
read from tests/unit/fixtures/containerd (provenance in tests/unit/fixtures/SOURCES.md).

CONTAINERD_16_DEFAULT and DEBIAN_12_PACKAGE are verbatim from Debian 12's containerd 1.6.20~ds1-1+deb12u3;
the others are abridged files in the layout of the ones named.
"""

from __future__ import annotations

from ansible_collections.gpucluster.core.tests.unit.plugins.shared_fixtures import read_fixture


def _config(name: str) -> str:
    return read_fixture("containerd", name)


# `containerd config default` of containerd 1.6.20 (Debian 12).
CONTAINERD_16_DEFAULT = _config("containerd-1.6.20-config-default-debian12.toml")
# Debian 12's package /etc/containerd/config.toml.
DEBIAN_12_PACKAGE = _config("debian12-package-config.toml")
# containerd 1.7 `containerd config default` (abridged), runc with SystemdCgroup = true.
CONTAINERD_17_SYSTEMD = _config("containerd-1.7-config-default-systemd-cgroup-abridged.toml")
# containerd 2.x `containerd config default` (version 3, abridged), runc with SystemdCgroup = true.
CONTAINERD_20_DEFAULT = _config("containerd-2.0-config-default-v3-abridged.toml")
# The minimal version 3 file a Kubernetes install writes: no imports line.
KUBERNETES_V3_MINIMAL = _config("kubernetes-install-v3-minimal.toml")
# Docker's containerd.io package: a version 1 file that disables the CRI plugin.
DOCKER_CONTAINERD_IO = _config("docker-containerd-io-package-config.toml")
# Only comments: a version 1 file with nothing set.
ONLY_COMMENTS = _config("only-comments.toml")
