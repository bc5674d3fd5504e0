# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import json

import pytest

from ansible.module_utils import basic

from ansible_collections.gpucluster.core.plugins.modules import docker_daemon_json
from ansible_collections.gpucluster.core.tests.unit.plugins.modules.module_helpers import (
    fail_module,
    run_module,
)

NVIDIA = {"nvidia": {"path": "nvidia-container-runtime", "args": []}}


@pytest.mark.parametrize("before, args, keys, reload, after", [
    (None, {}, ["runtimes"], True, {"runtimes": NVIDIA}),
    ('{"storage-driver": "overlay2"}', {"default_runtime": True}, ["default-runtime", "runtimes"], True,
     {"storage-driver": "overlay2", "runtimes": NVIDIA, "default-runtime": "nvidia"}),
    ('{"runtimes": {"nvidia": {"path": "nvidia-container-runtime", "args": []}}}', {"settings": {"log-driver": "journald"}},
     ["log-driver"], False, {"runtimes": NVIDIA, "log-driver": "journald"}),
])
def test_writes_then_unchanged(tmp_path, before, args, keys, reload, after):
    path = tmp_path / "daemon.json"
    if before is not None:
        path.write_text(before)
    result = run_module(docker_daemon_json.main, dict(args, path=str(path)))
    assert result["changed"] is True
    assert result["changed_keys"] == keys
    assert result["reload"] is reload
    assert json.loads(path.read_text()) == after
    assert oct(path.stat().st_mode & 0o777) == "0o644"
    again = run_module(docker_daemon_json.main, dict(args, path=str(path)))
    assert again["changed"] is False
    assert again["changed_keys"] == []


def test_a_missing_folder_is_made(tmp_path):
    path = tmp_path / "docker" / "daemon.json"
    result = run_module(docker_daemon_json.main, {"path": str(path)})
    assert result["changed"] is True
    assert json.loads(path.read_text()) == {"runtimes": NVIDIA}
    assert oct(path.parent.stat().st_mode & 0o777) == "0o755"


def test_layout_does_not_count(tmp_path):
    path = tmp_path / "daemon.json"
    text = '{"runtimes":{"nvidia":{"args":[],"path":"nvidia-container-runtime"}},"debug":false}'
    path.write_text(text)
    result = run_module(docker_daemon_json.main, {"path": str(path)})
    assert result["changed"] is False
    assert path.read_text() == text


def test_check_mode_and_diff(tmp_path, monkeypatch):
    path = tmp_path / "daemon.json"
    path.write_text('{"storage-driver": "overlay2"}')
    monkeypatch.setattr(basic.AnsibleModule, "_diff", True, raising=False)
    result = run_module(docker_daemon_json.main, {"path": str(path), "_ansible_check_mode": True,
                                                  "_ansible_diff": True})
    assert result["changed"] is True
    assert result["diff"]["before"] == '{"storage-driver": "overlay2"}'
    assert json.loads(result["diff"]["after"]) == {"storage-driver": "overlay2", "runtimes": NVIDIA}
    assert path.read_text() == '{"storage-driver": "overlay2"}'


def test_backup(tmp_path):
    path = tmp_path / "daemon.json"
    path.write_text("{}")
    result = run_module(docker_daemon_json.main, {"path": str(path), "backup": True})
    assert result["backup_file"].startswith(str(path) + ".")


@pytest.mark.parametrize("text, message", [
    ("{", "%s is not valid JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"),
    ("[]", "%s holds a JSON list, not an object"),
])
def test_refuses_malformed(tmp_path, text, message):
    path = tmp_path / "daemon.json"
    path.write_text(text)
    result = fail_module(docker_daemon_json.main, {"path": str(path)})
    assert result["msg"] == message % path
    assert path.read_text() == text
