# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""containerd_nvidia_runtime's logic over realistic config.toml files (containerd_configs.py says where
each comes from): drop-in or marked block, the imports line, version 2, SystemdCgroup, and the refusals
with their exact messages."""

from __future__ import annotations

import sys
import tomllib

import pytest

from ansible_collections.gpucluster.core.plugins.module_utils import _containerd_toml
from ansible_collections.gpucluster.core.plugins.module_utils._containerd_toml import (
    ContainerdTomlError,
    containerd_version,
    first_table_offset,
    plan,
    require_toml,
    runtime_toml,
    split_block,
)
from ansible_collections.gpucluster.core.tests.unit.plugins.module_utils.containerd_configs import (
    CONTAINERD_16_DEFAULT,
    CONTAINERD_17_SYSTEMD,
    CONTAINERD_20_DEFAULT,
    DEBIAN_12_PACKAGE,
    DOCKER_CONTAINERD_IO,
    KUBERNETES_V3_MINIMAL,
    ONLY_COMMENTS,
)

P = "/etc/containerd/config.toml"
D = "/etc/containerd/conf.d/99-nvidia.toml"
G = "/etc/containerd/conf.d/*.toml"
BIN = "/usr/bin/nvidia-container-runtime"
IMPORTS = 'imports = ["/etc/containerd/conf.d/*.toml"]\n'
NEW_CONFIG = ("# containerd configuration (gpucluster.core.containerd_nvidia_runtime wrote it, none was there).\n"
              "version = 2\n" + IMPORTS)
WROTE = "wrote the nvidia runtime to " + D
ADDED_BLOCK = "added the nvidia runtime to %s (a marked block)" % P


def runtime(cgroup):
    """The runtime's tables exactly as the role has always written them (blockinfile, template)."""
    return (
        '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]\n'
        '  runtime_type = "io.containerd.runc.v2"\n'
        "\n"
        '  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]\n'
        '    BinaryName = "/usr/bin/nvidia-container-runtime"\n'
        "    SystemdCgroup = %s\n" % ("true" if cgroup else "false")
    )


def block(cgroup):
    return ("# BEGIN gpucluster.core container_toolkit: nvidia runtime\n" + runtime(cgroup)
            + "# END gpucluster.core container_toolkit: nvidia runtime\n")


def dropin(cgroup):
    return (
        "# The nvidia runtime for containerd's CRI plugin, imported by /etc/containerd/config.toml\n"
        "# (gpucluster.core.containerd_nvidia_runtime writes this file: changes here are replaced).\n"
        "# Kubernetes selects it with a RuntimeClass whose handler is its name.\n"
        "# A version 2 file: containerd 2.x migrates it to its own version as it reads it.\n"
        "version = 2\n\n" + runtime(cgroup)
    )


# The drop-in as the role's former template wrote it (ansible_managed header): the same content.
TEMPLATE_DROPIN = (
    "#\n# Ansible managed\n#\n"
    "# The nvidia runtime for containerd's CRI plugin (gpucluster.core container_toolkit), imported by\n"
    "# /etc/containerd/config.toml. Kubernetes selects it with a RuntimeClass whose handler is nvidia.\n"
    "# A version 2 file: containerd 2.x migrates it to its own version as it reads it.\n"
    "version = 2\n\n" + runtime(False)
)

MULTILINE_IMPORTS = ('version = 2\nimports = [\n  "/etc/containerd/site.toml",  # the site\'s own\n]\n\n'
                     '[grpc]\n  address = "/run/containerd/containerd.sock"\n')
# Lines that start with "[" but are no table header: inside a multi-line string.
STRING_WITH_BRACKETS = 'version = 2\ntemp = """\n[not a table]\n"""\n\n[grpc]\n  uid = 0\n'
# An imports key inside a table is not containerd's top-level imports.
IMPORTS_IN_TABLE = 'version = 2\n\n[plugins."io.containerd.internal.v1.opt"]\n  imports = ["x"]\n  path = "/opt"\n'


@pytest.mark.parametrize("config, major, after, cgroup, changes", [
    pytest.param(None, 1, NEW_CONFIG, False, ["created %s (version 2, imports %s)" % (P, G), WROTE], id="missing-1.x"),
    pytest.param(None, 2, NEW_CONFIG, False, ["created %s (version 2, imports %s)" % (P, G), WROTE], id="missing-2.x"),
    pytest.param("", 1, "version = 2\n" + IMPORTS, False,
                 ["added version = 2 to " + P, "added imports = [\"%s\"] to %s" % (G, P), WROTE], id="empty"),
    pytest.param(ONLY_COMMENTS, 1, "version = 2\n" + ONLY_COMMENTS + IMPORTS, False,
                 ["added version = 2 to " + P, "added imports = [\"%s\"] to %s" % (G, P), WROTE], id="only-comments"),
    pytest.param("version = 2", 1, "version = 2\n" + IMPORTS, False,
                 ["added imports = [\"%s\"] to %s" % (G, P), WROTE], id="no-final-newline"),
    pytest.param("version = 2\n" + IMPORTS, 1, "version = 2\n" + IMPORTS, False, [WROTE], id="imports-already"),
    pytest.param(CONTAINERD_16_DEFAULT, 2, CONTAINERD_16_DEFAULT.replace("imports = []\n", IMPORTS), False,
                 ["added %s to the imports of %s" % (G, P), WROTE], id="1.6-default-on-2.x"),
    pytest.param(CONTAINERD_17_SYSTEMD, 2, CONTAINERD_17_SYSTEMD.replace("imports = []\n", IMPORTS), True,
                 ["added %s to the imports of %s" % (G, P), WROTE], id="1.7-default-on-2.x"),
    pytest.param(CONTAINERD_20_DEFAULT, 2, CONTAINERD_20_DEFAULT.replace("imports = []\n", IMPORTS), True,
                 ["added %s to the imports of %s" % (G, P), WROTE], id="2.x-v3-default"),
    pytest.param(KUBERNETES_V3_MINIMAL, 2, KUBERNETES_V3_MINIMAL.replace("\n[plugins", "\n" + IMPORTS + "[plugins"),
                 True, ["added imports = [\"%s\"] to %s" % (G, P), WROTE], id="2.x-v3-no-imports"),
    pytest.param(DEBIAN_12_PACKAGE, 2, DEBIAN_12_PACKAGE.replace("\n[plugins]", "\n" + IMPORTS + "[plugins]"), False,
                 ["added imports = [\"%s\"] to %s" % (G, P), WROTE], id="debian-package-on-2.x"),
    pytest.param(MULTILINE_IMPORTS, 2,
                 MULTILINE_IMPORTS.replace('[\n  "/etc/containerd/site.toml",  # the site\'s own\n]',
                                           '["/etc/containerd/site.toml", "/etc/containerd/conf.d/*.toml"]'),
                 False, ["added %s to the imports of %s" % (G, P), WROTE], id="multi-line-imports"),
    pytest.param(STRING_WITH_BRACKETS, 1, STRING_WITH_BRACKETS.replace("\n[grpc]", "\n" + IMPORTS + "[grpc]"), False,
                 ["added imports = [\"%s\"] to %s" % (G, P), WROTE], id="bracket-inside-a-string"),
    pytest.param(IMPORTS_IN_TABLE, 1, IMPORTS_IN_TABLE.replace("\n[plugins", "\n" + IMPORTS + "[plugins"), False,
                 ["added imports = [\"%s\"] to %s" % (G, P), WROTE], id="imports-key-in-a-table"),
])
def test_dropin(config, major, after, cgroup, changes):
    result = plan(P, config, D, None, major, "nvidia", BIN)
    assert result == {"mode": "drop-in", "systemd_cgroup": cgroup, "config": after, "dropin": dropin(cgroup),
                      "changes": changes}
    assert G in tomllib.loads(after)["imports"]
    again = plan(P, after, D, result["dropin"], major, "nvidia", BIN)
    assert again["changes"] == []
    assert again["config"] == after


@pytest.mark.parametrize("config, major, after, cgroup, changes", [
    pytest.param(CONTAINERD_16_DEFAULT, 1, CONTAINERD_16_DEFAULT + block(False), False, [ADDED_BLOCK], id="1.6-default"),
    pytest.param(CONTAINERD_17_SYSTEMD, 1, CONTAINERD_17_SYSTEMD + block(True), True, [ADDED_BLOCK], id="1.7-systemd"),
    pytest.param(DEBIAN_12_PACKAGE, 1, DEBIAN_12_PACKAGE + block(False), False, [ADDED_BLOCK], id="debian-package"),
    pytest.param(DEBIAN_12_PACKAGE.rstrip("\n"), 1, DEBIAN_12_PACKAGE + block(False), False, [ADDED_BLOCK],
                 id="no-final-newline"),
    pytest.param(DEBIAN_12_PACKAGE, None, DEBIAN_12_PACKAGE + block(False), False, [ADDED_BLOCK],
                 id="unknown-version-counts-as-1.x"),
    pytest.param(CONTAINERD_16_DEFAULT + block(False), 1, CONTAINERD_16_DEFAULT + block(False), False, [],
                 id="converged"),
    pytest.param(CONTAINERD_17_SYSTEMD + block(False), 1, CONTAINERD_17_SYSTEMD + block(True), True,
                 ["updated the nvidia runtime block in " + P], id="cgroup-driver-changed"),
    pytest.param(DEBIAN_12_PACKAGE.replace("  [plugins.\"io.containerd.internal", block(True) + "  [plugins.\"io.containerd.internal"),
                 1, DEBIAN_12_PACKAGE.replace("  [plugins.\"io.containerd.internal", block(False) + "  [plugins.\"io.containerd.internal"),
                 False, ["updated the nvidia runtime block in " + P], id="block-updated-where-it-is"),
])
def test_inline(config, major, after, cgroup, changes):
    result = plan(P, config, D, None, major, "nvidia", BIN)
    assert result == {"mode": "config.toml", "systemd_cgroup": cgroup, "config": after, "dropin": None,
                      "changes": changes}
    nvidia = tomllib.loads(after)["plugins"]["io.containerd.grpc.v1.cri"]["containerd"]["runtimes"]["nvidia"]
    assert nvidia == {"runtime_type": "io.containerd.runc.v2", "options": {"BinaryName": BIN, "SystemdCgroup": cgroup}}
    assert plan(P, after, D, None, major, "nvidia", BIN)["changes"] == []


def test_inline_removes_the_dropin():
    result = plan(P, DEBIAN_12_PACKAGE, D, dropin(False), 1, "nvidia", BIN)
    assert result["dropin"] is None
    assert result["changes"] == [ADDED_BLOCK, "removed %s (containerd 1.x with CRI settings in %s)" % (D, P)]


def test_upgrade_to_2x_moves_the_block_to_the_dropin():
    result = plan(P, CONTAINERD_17_SYSTEMD + block(True), D, None, 2, "nvidia", BIN)
    assert result == {
        "mode": "drop-in", "systemd_cgroup": True, "dropin": dropin(True),
        "config": CONTAINERD_17_SYSTEMD.replace("imports = []\n", IMPORTS),
        "changes": ["removed the nvidia runtime block from %s (now in %s)" % (P, D),
                    "added %s to the imports of %s" % (G, P), WROTE],
    }


@pytest.mark.parametrize("now, changes", [
    pytest.param(TEMPLATE_DROPIN, [], id="former-template-same-content"),
    pytest.param(dropin(True), ["updated the nvidia runtime in " + D], id="other-cgroup-driver"),
    pytest.param("not toml at all", ["updated the nvidia runtime in " + D], id="broken"),
])
def test_dropin_rewritten_only_when_its_content_differs(now, changes):
    result = plan(P, "version = 2\n" + IMPORTS, D, now, 2, "nvidia", BIN)
    assert result["changes"] == changes
    assert result["dropin"] == (now if not changes else dropin(False))


V1 = ("{p} has no version = 2 (or 3) line: it is a version 1 configuration, which is not added to (its short plugin"
      " names break beside a version 2 drop-in). Write a version 2 or 3 one first (containerd config default > {p},"
      " as a Kubernetes install does)").format(p=P)
CRI_OFF = ("%s disables the CRI plugin (disabled_plugins, as Docker's containerd.io package ships it): Kubernetes"
           " cannot use this containerd, so an nvidia runtime for it would do nothing" % P)
NVIDIA_CTK = '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]\n  runtime_type = "io.containerd.runc.v2"\n'


@pytest.mark.parametrize("config, major, message", [
    pytest.param(DOCKER_CONTAINERD_IO, 1, V1 + "; " + CRI_OFF, id="docker-containerd.io"),
    pytest.param('version = 1\nroot = "/var/lib/containerd"\n', 1, V1, id="version-1-with-settings"),
    pytest.param('root = "/var/lib/containerd"\n', 2, V1, id="no-version-with-settings"),
    pytest.param(CONTAINERD_16_DEFAULT.replace("disabled_plugins = []", 'disabled_plugins = ["io.containerd.grpc.v1.cri"]'),
                 1, CRI_OFF, id="cri-disabled-long-name"),
    pytest.param(CONTAINERD_16_DEFAULT + NVIDIA_CTK, 1,
                 "%s already defines the nvidia runtime table (nvidia-ctk runtime configure?): containerd 1.x would"
                 " refuse a second one; remove it, this module writes it" % P, id="nvidia-table-on-1.x"),
    pytest.param('version = "2"\n', 2, '%s has version = "2": containerd knows the numbers 1, 2 and 3' % P,
                 id="version-not-a-number"),
    pytest.param('version = 2\nimports = "/etc/containerd/site.toml"\n', 2,
                 '%s has imports = "/etc/containerd/site.toml": containerd takes a list of paths there' % P,
                 id="imports-not-a-list"),
    pytest.param('version = 2\nroot "/var/lib/containerd"\n', 2,
                 "%s is not valid TOML: Expected '=' after a key in a key/value pair (at line 2, column 6)" % P,
                 id="invalid-toml"),
    pytest.param("version = 2\n[grpc]\nuid = 0\n" + block(False) + "uid = 1\n", 1,
                 "%s is not valid TOML without the role's marked block: Cannot overwrite a value (at line 4, column 8)"
                 % P, id="keys-after-the-block"),
    pytest.param('version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd]\n'
                 '  runtimes = { runc = { runtime_type = "io.containerd.runc.v2" } }\n', 1,
                 "adding the nvidia runtime to %s would make it invalid TOML (Cannot declare ('plugins',"
                 " 'io.containerd.grpc.v1.cri', 'containerd', 'runtimes', 'nvidia') twice (at line 5, column 64)):"
                 " fix its layout by hand first" % P, id="runtimes-as-inline-table"),
])
def test_refused(config, major, message):
    with pytest.raises(ContainerdTomlError) as exc:
        plan(P, config, D, None, major, "nvidia", BIN)
    assert str(exc.value) == message


@pytest.mark.parametrize("output, expected", [
    ("containerd containerd.io 1.7.27 05044ec0a9a75232cad458027ca83437aae3f4da\n", ("1.7.27", 1)),
    ("containerd github.com/containerd/containerd/v2 v2.0.0 207ad711eabd375a01713109a8a197d197ff6542\n", ("2.0.0", 2)),
    ("containerd github.com/containerd/containerd 1.6.20~ds1 1.6.20~ds1-1+deb12u3\n", ("1.6.20~ds1", 1)),
    ("containerd github.com/containerd/containerd 1.7.24 \n", ("1.7.24", 1)),
    ("containerd dev\n", (None, None)),
    ("", (None, None)),
    (None, (None, None)),
])
def test_containerd_version(output, expected):
    assert containerd_version(output) == expected


def test_require_toml_names_what_is_missing(monkeypatch):
    monkeypatch.setattr(_containerd_toml, "_toml", None)
    with pytest.raises(ContainerdTomlError) as exc:
        require_toml()
    assert str(exc.value) == (
        "reading containerd's TOML needs Python 3.11 or later (tomllib) or the tomli package, and %s is Python %d.%d"
        " without tomli: install python3-tomli (Ubuntu 22.04, EL 9) or run the module with a Python 3.11 or later"
        % (sys.executable, sys.version_info[0], sys.version_info[1]))


@pytest.mark.parametrize("name, header", [
    ("nvidia", '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]'),
    ("nvidia-cdi", '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia-cdi]'),
    ("nvidia.cdi", '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes."nvidia.cdi"]'),
])
def test_runtime_toml_names(name, header):
    text = runtime_toml(name, '/opt/nvidia "x"/runtime', True)
    assert text.splitlines()[0] == header
    runtimes = tomllib.loads(text)["plugins"]["io.containerd.grpc.v1.cri"]["containerd"]["runtimes"]
    assert runtimes == {name: {"runtime_type": "io.containerd.runc.v2",
                               "options": {"BinaryName": '/opt/nvidia "x"/runtime', "SystemdCgroup": True}}}


@pytest.mark.parametrize("text, expected", [
    ("a = 1\n" + block(True) + "b = 2\n", ("a = 1\nb = 2\n", runtime(True).splitlines(), 6)),
    ("a = 1\n# BEGIN gpucluster.core container_toolkit: nvidia runtime\nb = 2\n",
     ("a = 1\n# BEGIN gpucluster.core container_toolkit: nvidia runtime\nb = 2\n", None, None)),
    ("", ("", None, None)),
])
def test_split_block(text, expected):
    assert split_block(text) == expected


@pytest.mark.parametrize("text, offset", [
    ("version = 2\n[grpc]\n", 12),
    ("version = 2\n", 12),
    ("x = [\n  [1],\n]\n  [[t]]\n", 15),
    ("", 0),
])
def test_first_table_offset(text, offset):
    assert first_table_offset(text) == offset
