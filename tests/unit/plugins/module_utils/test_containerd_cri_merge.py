# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""_containerd_cri: Kubernetes' CRI settings merged into containerd's config.toml beside the
nvidia runtime's marked block, over real containerd configurations (containerd_configs.py)."""

from __future__ import annotations

import tomllib

import pytest

from ansible_collections.gpucluster.core.plugins.module_utils import _containerd_cri as cri
from ansible_collections.gpucluster.core.plugins.module_utils import _containerd_toml
from ansible_collections.gpucluster.core.tests.unit.plugins.module_utils.containerd_configs import (
    CONTAINERD_16_DEFAULT,
    CONTAINERD_17_SYSTEMD,
    CONTAINERD_20_DEFAULT,
    DEBIAN_12_PACKAGE,
    DOCKER_CONTAINERD_IO,
)

PATH = "/etc/containerd/config.toml"
DROPIN = "/etc/containerd/conf.d/99-nvidia.toml"
CRI = "io.containerd.grpc.v1.cri"
SETTINGS = {
    "sandbox_image": "registry.k8s.io/pause:3.10",
    "registry": {"config_path": "/etc/containerd/certs.d"},
    "containerd": {"runtimes": {"runc": {"runtime_type": "io.containerd.runc.v2",
                                         "options": {"SystemdCgroup": True}}}},
}


def cri_of(text):
    return tomllib.loads(text)["plugins"][CRI]


def nvidia(text, major=1):
    """config.toml after container_toolkit's module put the nvidia runtime in."""
    return _containerd_toml.plan(PATH, text, DROPIN, None, major, "nvidia", "/usr/bin/nvidia-container-runtime")


@pytest.mark.parametrize("before", [DEBIAN_12_PACKAGE, CONTAINERD_16_DEFAULT, CONTAINERD_17_SYSTEMD, None],
                         ids=["debian-12-package", "containerd-1.6-default", "containerd-1.7-systemd", "no-file"])
def test_settings_merged_key_by_key_and_nothing_else_lost(before):
    result = cri.plan(PATH, before, 1, SETTINGS)
    after = tomllib.loads(result["config"])
    old = tomllib.loads(before or "")
    assert result["changes"] == [("created %s" if before is None else "merged the CRI settings into %s") % PATH]
    assert after["version"] == 2
    assert after["plugins"][CRI]["sandbox_image"] == "registry.k8s.io/pause:3.10"
    assert after["plugins"][CRI]["registry"]["config_path"] == "/etc/containerd/certs.d"
    assert after["plugins"][CRI]["containerd"]["runtimes"]["runc"]["options"]["SystemdCgroup"] is True
    # Everything else the file had is still there, unchanged.
    assert cri.deep_merge(old, {"plugins": {CRI: SETTINGS}}) | {"version": 2} == after
    again = cri.plan(PATH, result["config"], 1, SETTINGS)
    assert again == {"config": result["config"], "dropins": {}, "changes": []}


def test_a_file_that_has_the_settings_is_left_as_it_is_comments_included():
    text = "# the admin's comment\n" + cri.emit(cri.deep_merge(tomllib.loads(DEBIAN_12_PACKAGE), {"plugins": {CRI: SETTINGS}}))
    result = cri.plan(PATH, text, 1, SETTINGS)
    assert result == {"config": text, "dropins": {}, "changes": []}


def test_the_nvidia_block_stays_and_follows_runc_cgroup_driver():
    with_nvidia = nvidia(DEBIAN_12_PACKAGE)
    assert with_nvidia["mode"] == "config.toml" and with_nvidia["systemd_cgroup"] is False
    result = cri.plan(PATH, with_nvidia["config"], 1, SETTINGS)
    text = result["config"]
    assert _containerd_toml.BEGIN in text and _containerd_toml.END in text
    runtimes = cri_of(text)["containerd"]["runtimes"]
    assert runtimes["nvidia"] == {"runtime_type": "io.containerd.runc.v2",
                                  "options": {"BinaryName": "/usr/bin/nvidia-container-runtime", "SystemdCgroup": True}}
    assert runtimes["runc"]["options"]["SystemdCgroup"] is True
    # container_toolkit's module, run again, finds nothing to change; and so does this one.
    assert nvidia(text)["changes"] == []
    assert cri.plan(PATH, text, 1, SETTINGS)["changes"] == []


def test_only_the_block_changes_when_runc_already_has_the_driver():
    systemd = cri.plan(PATH, DEBIAN_12_PACKAGE, 1, SETTINGS)["config"]
    stale = systemd + "\n".join([_containerd_toml.BEGIN] + _containerd_toml.runtime_toml(
        "nvidia", "/usr/bin/nvidia-container-runtime", False).splitlines() + [_containerd_toml.END]) + "\n"
    result = cri.plan(PATH, stale, 1, SETTINGS)
    assert result["changes"] == ["set the nvidia runtime's SystemdCgroup to runc's (true) in %s" % PATH]
    assert result["config"].startswith(systemd)
    assert cri_of(result["config"])["containerd"]["runtimes"]["nvidia"]["options"]["SystemdCgroup"] is True


def test_a_dropin_that_sets_the_cri_plugin_gets_the_settings_on_containerd_1x_only():
    dropin_text = _containerd_toml.dropin_text(PATH, _containerd_toml.runtime_toml("nvidia", "/usr/bin/ncr", False))
    config = "version = 2\nimports = [\"/etc/containerd/conf.d/*.toml\"]\n"
    result = cri.plan(PATH, config, 1, SETTINGS, {DROPIN: dropin_text, "/etc/containerd/conf.d/other.toml": "version = 2\n"})
    assert list(result["dropins"]) == [DROPIN]
    merged = cri_of(result["dropins"][DROPIN])
    assert merged["sandbox_image"] == "registry.k8s.io/pause:3.10"
    assert set(merged["containerd"]["runtimes"]) == {"nvidia", "runc"}
    assert result["changes"][-1] == ("merged the CRI settings into %s (containerd 1.x takes the CRI plugin's whole"
                                     " section from it)" % DROPIN)
    assert cri.plan(PATH, config, 2, SETTINGS, {DROPIN: dropin_text})["dropins"] == {}


@pytest.mark.parametrize("text, settings, message", [
    ("version = 2\n[plugins\n", SETTINGS, "%s is not valid TOML: " % PATH),
    ("[plugins.cri]\n  sandbox_image = \"x\"\n", SETTINGS,
     "%s has no version = 2 line: it is a version 1 configuration (short plugin names); write a version 2 one first"
     " (containerd config default > %s)" % (PATH, PATH)),
    (CONTAINERD_20_DEFAULT, SETTINGS,
     "%s has version = 3: this module merges into version 2 files (containerd 1.x and 2.x read them)" % PATH),
    (DOCKER_CONTAINERD_IO, SETTINGS,
     "%s has no version = 2 line: it is a version 1 configuration (short plugin names); write a version 2 one first"
     " (containerd config default > %s); " % (PATH, PATH) +
     "%s disables the CRI plugin (disabled_plugins, as Docker's containerd.io package ships it): Kubernetes cannot use"
     " this containerd; remove cri from disabled_plugins" % PATH),
    ("version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".registry.mirrors.\"docker.io\"]\n  endpoint = [\"https://m\"]\n",
     SETTINGS, "%s sets registry.mirrors in the CRI plugin, which containerd refuses beside registry.config_path: move"
     " those mirrors to hosts.toml files (kubernetes_registry_mirrors) and remove them" % PATH),
    ("version = 2\n", ["not", "a", "dict"], "settings must be a dict of the CRI plugin's settings"),
], ids=["invalid-toml", "version-1", "version-3", "cri-disabled", "mirrors-and-config-path", "settings-not-a-dict"])
def test_refusals(text, settings, message):
    with pytest.raises(cri.ContainerdCriError) as err:
        cri.plan(PATH, text, 1, settings)
    assert str(err.value).startswith(message)


def test_a_broken_nvidia_block_is_refused():
    text = DEBIAN_12_PACKAGE + _containerd_toml.BEGIN + "\n# nothing\n" + _containerd_toml.END + "\n"
    with pytest.raises(cri.ContainerdCriError) as err:
        cri.plan(PATH, text, 1, SETTINGS)
    assert str(err.value) == ("the marked nvidia runtime block in %s does not hold one runtime: let the container_toolkit"
                              " role write it again (or remove it)" % PATH)


@pytest.mark.parametrize("data", [
    {"version": 2, "root": "/var/lib/containerd", "oom_score": -999, "ratio": 0.5, "on": False,
     "plugins": {CRI: {"weird key": "x\"y\\z\n", "list": ["a", "b"], "empty": {}}}},
    {"version": 2, "proxy_plugins": {"stargz": {"type": "snapshot", "address": "/run/s.sock"}},
     "streams": [{"name": "a"}, {"name": "b"}]},
    tomllib.loads(CONTAINERD_16_DEFAULT),
], ids=["scalars-and-quoted-keys", "array-of-tables", "containerd-1.6-default"])
def test_emit_round_trips(data):
    assert tomllib.loads(cri.emit(data)) == data


def test_emit_refuses_what_toml_cannot_hold():
    with pytest.raises(cri.ContainerdCriError) as err:
        cri.emit({"plugins": {"x": {"when": object()}}})
    assert str(err.value) == "plugins.x.when: a object cannot be written as containerd TOML"
