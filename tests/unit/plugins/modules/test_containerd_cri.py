# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""containerd_cri against files in a temporary folder, containerd --version stubbed."""

from __future__ import annotations

import tomllib

from ansible_collections.gpucluster.core.plugins.module_utils import _textfile
from ansible_collections.gpucluster.core.plugins.modules import containerd_cri
from ansible_collections.gpucluster.core.tests.unit.plugins.module_utils.containerd_configs import DEBIAN_12_PACKAGE, DOCKER_CONTAINERD_IO
from ansible_collections.gpucluster.core.tests.unit.plugins.modules.module_helpers import RunCommandStub, fail_module, run_module

BINS = {"containerd": "/usr/bin/containerd"}
V16 = (0, "containerd github.com/containerd/containerd 1.6.20~ds1 1.6.20~ds1-1+deb12u3\n", "")
CRI = "io.containerd.grpc.v1.cri"
SETTINGS = {"sandbox_image": "registry.k8s.io/pause:3.10",
            "containerd": {"runtimes": {"runc": {"options": {"SystemdCgroup": True}}}}}


def run(config, **extra):
    return run_module(containerd_cri.main, dict(extra, path=str(config), settings=SETTINGS), RunCommandStub(V16), BINS)


def test_merges_keeps_the_mode_then_changes_nothing(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text(DEBIAN_12_PACKAGE)
    config.chmod(0o600)
    result = run(config)
    assert result["changed"] is True
    assert result["changes"] == ["merged the CRI settings into %s" % config]
    assert result["containerd_version"] == "1.6.20~ds1"
    data = tomllib.loads(config.read_text())
    assert data["plugins"][CRI]["sandbox_image"] == "registry.k8s.io/pause:3.10"
    assert data["plugins"][CRI]["cni"] == {"bin_dir": "/usr/lib/cni", "conf_dir": "/etc/cni/net.d"}
    assert oct(config.stat().st_mode & 0o777) == "0o600"
    assert run(config)["changed"] is False


def test_check_mode_writes_nothing_and_diff_shows_the_file(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text(DEBIAN_12_PACKAGE)
    result = run(config, _ansible_check_mode=True, _ansible_diff=True)
    assert result["changed"] is True
    assert result["diff"][0]["before"] == DEBIAN_12_PACKAGE
    assert 'sandbox_image = "registry.k8s.io/pause:3.10"' in result["diff"][0]["after"]
    assert config.read_text() == DEBIAN_12_PACKAGE


def test_an_imported_dropin_with_cri_settings_gets_them_too(tmp_path):
    config = tmp_path / "config.toml"
    dropin = tmp_path / "conf.d" / "99-nvidia.toml"
    dropin.parent.mkdir()
    config.write_text('version = 2\nimports = ["conf.d/*.toml"]\n')
    dropin.write_text('version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]\n'
                      '  runtime_type = "io.containerd.runc.v2"\n')
    result = run(config)
    assert result["changes"][-1].startswith("merged the CRI settings into %s" % dropin)
    assert tomllib.loads(dropin.read_text())["plugins"][CRI]["sandbox_image"] == "registry.k8s.io/pause:3.10"
    assert run(config)["changed"] is False


def test_refuses_a_docker_containerd_io_config_and_writes_nothing(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text(DOCKER_CONTAINERD_IO)
    result = fail_module(containerd_cri.main, dict(path=str(config), settings=SETTINGS), RunCommandStub(V16), BINS)
    assert "disables the CRI plugin" in result["msg"]
    assert config.read_text() == DOCKER_CONTAINERD_IO


def test_no_containerd(tmp_path):
    result = fail_module(containerd_cri.main, dict(path=str(tmp_path / "c.toml"), settings=SETTINGS), RunCommandStub(),
                         {"containerd": None})
    assert result["msg"] == "containerd is not installed: no containerd command on this host"
    assert "containerd_found" not in result


def test_a_failed_write_is_not_changed(tmp_path, monkeypatch):
    config = tmp_path / "config.toml"

    def full_disk(module, path, text):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(_textfile, "write_text", full_disk)
    result = fail_module(containerd_cri.main, dict(path=str(config), settings=SETTINGS), RunCommandStub(V16), BINS)
    assert result["msg"] == "%s cannot be written: [Errno 28] No space left on device" % config
    assert result["changed"] is False
    assert not config.exists()
