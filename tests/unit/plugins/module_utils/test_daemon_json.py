# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import pytest

from ansible_collections.gpucluster.core.plugins.module_utils._daemon_json import DaemonJsonError, changed_keys, merge, parse, reload_suffices, render

RUNTIME = {"path": "nvidia-container-runtime", "args": []}
NVIDIA = {"nvidia": RUNTIME}


@pytest.mark.parametrize("text, expected", [
    ("", {}),
    ("  \n", {}),
    ('{"storage-driver": "overlay2"}', {"storage-driver": "overlay2"}),
    ('{}', {}),
])
def test_parse(text, expected):
    assert parse(text, "/etc/docker/daemon.json") == expected


@pytest.mark.parametrize("text, message", [
    ('{"a": 1,', "/etc/docker/daemon.json is not valid JSON: Expecting property name enclosed in double quotes:"
                 " line 1 column 9 (char 8)"),
    ("[1, 2]", "/etc/docker/daemon.json holds a JSON list, not an object"),
    ('"x"', "/etc/docker/daemon.json holds a JSON str, not an object"),
])
def test_parse_refuses(text, message):
    with pytest.raises(DaemonJsonError) as exc:
        parse(text, "/etc/docker/daemon.json")
    assert str(exc.value) == message


@pytest.mark.parametrize("current, settings, default_runtime, expected", [
    ({}, {}, False, {"runtimes": NVIDIA}),
    ({"storage-driver": "overlay2"}, {}, False, {"storage-driver": "overlay2", "runtimes": NVIDIA}),
    ({"runtimes": {"crun": {"path": "crun"}}}, {}, False, {"runtimes": {"crun": {"path": "crun"}, "nvidia": RUNTIME}}),
    ({}, {}, True, {"runtimes": NVIDIA, "default-runtime": "nvidia"}),
    ({"default-runtime": "nvidia", "runtimes": NVIDIA}, {}, False, {"runtimes": NVIDIA}),
    ({"default-runtime": "runc"}, {}, False, {"default-runtime": "runc", "runtimes": NVIDIA}),
    ({"log-driver": "json-file"}, {"log-driver": None}, False, {"runtimes": NVIDIA}),
    ({"log-opts": {"max-size": "10m"}}, {"log-opts": {"max-file": "3"}}, False,
     {"log-opts": {"max-size": "10m", "max-file": "3"}, "runtimes": NVIDIA}),
    ({"runtimes": {"nvidia": {"path": "/old", "args": ["x"]}}}, {}, False, {"runtimes": NVIDIA}),
])
def test_merge(current, settings, default_runtime, expected):
    assert merge(current, settings, "nvidia", RUNTIME, default_runtime) == expected


@pytest.mark.parametrize("current, wanted, keys, reload", [
    ({}, {}, [], True),
    ({}, {"runtimes": NVIDIA}, ["runtimes"], True),
    ({"runtimes": NVIDIA}, {"runtimes": NVIDIA, "default-runtime": "nvidia"}, ["default-runtime"], True),
    ({"default-runtime": "nvidia"}, {}, ["default-runtime"], False),
    ({}, {"storage-driver": "overlay2"}, ["storage-driver"], False),
    ({"log-driver": "local"}, {"log-driver": "journald", "debug": True}, ["debug", "log-driver"], False),
])
def test_changed_keys_and_reload(current, wanted, keys, reload):
    assert changed_keys(current, wanted) == keys
    assert reload_suffices(current, wanted) is reload


def test_render():
    assert render({"b": 1, "a": {"y": [], "x": "é"}}) == '{\n  "a": {\n    "x": "é",\n    "y": []\n  },\n  "b": 1\n}\n'
