# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""containerd_nvidia_runtime against files in a temporary folder, containerd --version stubbed."""

from __future__ import annotations

import tomllib

import pytest

from ansible.module_utils import basic

from ansible_collections.gpucluster.core.plugins.module_utils import _containerd_toml, _textfile
from ansible_collections.gpucluster.core.plugins.modules import containerd_nvidia_runtime
from ansible_collections.gpucluster.core.tests.unit.plugins.module_utils.containerd_configs import (
    CONTAINERD_17_SYSTEMD,
    DEBIAN_12_PACKAGE,
    DOCKER_CONTAINERD_IO,
)
from ansible_collections.gpucluster.core.tests.unit.plugins.modules.module_helpers import RunCommandStub, fail_module, run_module

BINS = {"containerd": "/usr/bin/containerd"}
V16 = (0, "containerd github.com/containerd/containerd 1.6.20~ds1 1.6.20~ds1-1+deb12u3\n", "")
V20 = (0, "containerd github.com/containerd/containerd/v2 v2.0.0 207ad711eabd375a01713109a8a197d197ff6542\n", "")
BLOCK_START = "# BEGIN gpucluster.core container_toolkit: nvidia runtime\n"


def paths(tmp_path):
    return tmp_path / "config.toml", tmp_path / "conf.d" / "99-nvidia.toml"


def args(tmp_path, **extra):
    config, dropin = paths(tmp_path)
    return dict(extra, path=str(config), dropin=str(dropin))


def run(tmp_path, version=V16, **extra):
    stub = RunCommandStub(version)
    result = run_module(containerd_nvidia_runtime.main, args(tmp_path, **extra), stub, BINS)
    assert stub.calls == [["/usr/bin/containerd", "--version"]]
    return result


def mode(path):
    return oct(path.stat().st_mode & 0o777)


def test_no_config_writes_both_files_then_nothing(tmp_path):
    config, dropin = paths(tmp_path)
    result = run(tmp_path, V20)
    glob = str(tmp_path / "conf.d" / "*.toml")
    assert result["changed"] is True
    assert result["mode"] == "drop-in"
    assert result["containerd_version"] == "2.0.0"
    assert result["systemd_cgroup"] is False
    assert result["changes"] == ["created %s (version 2, imports %s)" % (config, glob),
                                 "wrote the nvidia runtime to %s" % dropin]
    assert tomllib.loads(config.read_text()) == {"version": 2, "imports": [glob]}
    runtimes = tomllib.loads(dropin.read_text())["plugins"]["io.containerd.grpc.v1.cri"]["containerd"]["runtimes"]
    assert runtimes == {"nvidia": {"runtime_type": "io.containerd.runc.v2",
                                   "options": {"BinaryName": "/usr/bin/nvidia-container-runtime", "SystemdCgroup": False}}}
    assert (mode(config), mode(dropin), mode(dropin.parent)) == ("0o644", "0o644", "0o755")
    again = run(tmp_path, V20)
    assert again["changed"] is False
    assert again["changes"] == []


def test_containerd_1x_block_keeps_the_file_mode_and_removes_the_dropin(tmp_path):
    config, dropin = paths(tmp_path)
    config.write_text(CONTAINERD_17_SYSTEMD)
    config.chmod(0o600)
    dropin.parent.mkdir()
    dropin.write_text("version = 2\n")
    result = run(tmp_path, runtime_name="gpu", binary="/opt/nvidia/bin/nvidia-container-runtime")
    assert result["changed"] is True
    assert result["mode"] == "config.toml"
    assert result["systemd_cgroup"] is True
    assert result["changes"] == ["added the gpu runtime to %s (a marked block)" % config,
                                 "removed %s (containerd 1.x with CRI settings in %s)" % (dropin, config)]
    assert not dropin.exists()
    text = config.read_text()
    assert text.startswith(CONTAINERD_17_SYSTEMD + BLOCK_START)
    gpu = tomllib.loads(text)["plugins"]["io.containerd.grpc.v1.cri"]["containerd"]["runtimes"]["gpu"]
    assert gpu["options"] == {"BinaryName": "/opt/nvidia/bin/nvidia-container-runtime", "SystemdCgroup": True}
    assert mode(config) == "0o600"
    again = run(tmp_path, runtime_name="gpu", binary="/opt/nvidia/bin/nvidia-container-runtime")
    assert again["changed"] is False
    assert config.read_text() == text


def test_check_mode_and_diff_write_nothing(tmp_path, monkeypatch):
    config, dropin = paths(tmp_path)
    config.write_text(DEBIAN_12_PACKAGE)
    monkeypatch.setattr(basic.AnsibleModule, "_diff", True, raising=False)
    result = run(tmp_path, V20, _ansible_check_mode=True, _ansible_diff=True)
    assert result["changed"] is True
    assert result["diff"] == [
        {"before_header": str(config), "after_header": str(config), "before": DEBIAN_12_PACKAGE,
         "after": DEBIAN_12_PACKAGE.replace("\n[plugins]", '\nimports = ["%s/*.toml"]\n[plugins]' % dropin.parent)},
        {"before_header": str(dropin), "after_header": str(dropin), "before": "",
         "after": result["diff"][1]["after"]},
    ]
    assert "BinaryName = \"/usr/bin/nvidia-container-runtime\"" in result["diff"][1]["after"]
    assert config.read_text() == DEBIAN_12_PACKAGE
    assert not dropin.parent.exists()


def test_refused_config_is_left_alone(tmp_path):
    config, dropin = paths(tmp_path)
    config.write_text(DOCKER_CONTAINERD_IO)
    result = fail_module(containerd_nvidia_runtime.main, args(tmp_path), RunCommandStub(V16), BINS)
    assert result["msg"].startswith("%s has no version = 2 (or 3) line" % config)
    assert result["msg"].endswith("Kubernetes cannot use this containerd, so an nvidia runtime for it would do nothing")
    assert result["containerd_found"] is True
    assert result["containerd_version"] == "1.6.20~ds1"
    assert config.read_text() == DOCKER_CONTAINERD_IO
    assert not dropin.exists()


def test_no_containerd(tmp_path):
    result = fail_module(containerd_nvidia_runtime.main, args(tmp_path), RunCommandStub(), {"containerd": None})
    assert result["msg"] == "containerd is not installed: no containerd command on this host"
    assert result["containerd_found"] is False


def test_containerd_version_fails(tmp_path):
    result = fail_module(containerd_nvidia_runtime.main, args(tmp_path),
                         RunCommandStub((1, "", "containerd: error while loading shared libraries\n")), BINS)
    assert result["msg"] == "/usr/bin/containerd --version failed (rc 1): containerd: error while loading shared libraries"
    assert result["containerd_found"] is True


def test_no_toml_library(tmp_path, monkeypatch):
    monkeypatch.setattr(_containerd_toml, "_toml", None)
    result = fail_module(containerd_nvidia_runtime.main, args(tmp_path), RunCommandStub(V16), BINS)
    assert result["msg"].startswith("reading containerd's TOML needs Python 3.11 or later (tomllib) or the tomli package")
    assert not paths(tmp_path)[0].exists()


@pytest.mark.parametrize("content, message", [
    (b"version = 2\n\xff\n", "is not UTF-8: 'utf-8' codec can't decode byte 0xff in position 12: invalid start byte"),
    (b"version = 2\n[grpc\n", "is not valid TOML: Expected ']' at the end of a table declaration (at line 2, column 6)"),
])
def test_unreadable_config(tmp_path, content, message):
    config = paths(tmp_path)[0]
    config.write_bytes(content)
    result = fail_module(containerd_nvidia_runtime.main, args(tmp_path), RunCommandStub(V16), BINS)
    assert result["msg"] == "%s %s" % (config, message)
    assert config.read_bytes() == content


@pytest.mark.parametrize("fail_at, changed", [(1, False), (2, True)], ids=["first-file", "second-file"])
def test_a_failed_write_is_changed_only_after_a_written_file(tmp_path, monkeypatch, fail_at, changed):
    config, dropin = paths(tmp_path)
    real_write = _textfile.write_text
    calls = []

    def write_until_full(module, path, text):
        calls.append(path)
        if len(calls) == fail_at:
            raise OSError(28, "No space left on device")
        return real_write(module, path, text)

    monkeypatch.setattr(_textfile, "write_text", write_until_full)
    result = fail_module(containerd_nvidia_runtime.main, args(tmp_path), RunCommandStub(V20), BINS)
    assert result["msg"] == "%s cannot be written: [Errno 28] No space left on device" % calls[-1]
    assert result["changed"] is changed
    assert config.exists() is changed
    assert not dropin.exists()
