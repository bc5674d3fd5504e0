# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run a module's main() in-process with given args and a stubbed run_command."""

from __future__ import annotations

import typing as t

from unittest import mock

import pytest

from ansible.module_utils import basic
from ansible.module_utils.testing import patch_module_args


class AnsibleExitJson(Exception):
    """exit_json was called; args[0] holds the result."""


class AnsibleFailJson(Exception):
    """fail_json was called; args[0] holds the result."""


def _exit_json(self, **kwargs):  # pylint: disable=unused-argument
    kwargs.setdefault("changed", False)
    raise AnsibleExitJson(kwargs)


def _fail_json(self, msg, **kwargs):  # pylint: disable=unused-argument
    kwargs["failed"] = True
    kwargs["msg"] = msg
    raise AnsibleFailJson(kwargs)


class RunCommandStub:
    """Answer run_command calls from a list of (rc, stdout, stderr) and count the calls."""

    def __init__(self, *results: tuple[int, str, str]) -> None:
        self.results = list(results)
        self.calls: list[list[str]] = []

    def __call__(self, module, args, **kwargs):  # pylint: disable=unused-argument
        self.calls.append(list(args))
        if not self.results:
            raise AssertionError("unexpected run_command call: %r" % (args,))
        return self.results.pop(0)


def run_module(main: t.Callable[[], None], args: dict, run_command: RunCommandStub | None = None,
               bin_paths: dict[str, str | None] | None = None) -> dict:
    """Run main(); return the exit_json result or raise AnsibleFailJson."""
    patches = [
        mock.patch.object(basic.AnsibleModule, "exit_json", _exit_json),
        mock.patch.object(basic.AnsibleModule, "fail_json", _fail_json),
    ]
    if run_command is not None:
        stub = run_command

        def _run_command(self, args, **kwargs):
            return stub(self, args, **kwargs)
        patches.append(mock.patch.object(basic.AnsibleModule, "run_command", _run_command))
    if bin_paths is not None:
        def get_bin_path(self, name, required=False, opt_dirs=None):  # pylint: disable=unused-argument
            return bin_paths.get(name)
        patches.append(mock.patch.object(basic.AnsibleModule, "get_bin_path", get_bin_path))
    with patch_module_args(args):
        for patch in patches:
            patch.start()
        try:
            with pytest.raises(AnsibleExitJson) as exc:
                main()
        finally:
            for patch in patches:
                patch.stop()
    return exc.value.args[0]


def fail_module(main: t.Callable[[], None], args: dict, run_command: RunCommandStub | None = None,
                bin_paths: dict[str, str | None] | None = None) -> dict:
    """Run main() expecting fail_json; return its result."""
    with pytest.raises(AnsibleFailJson) as exc:
        run_module(main, args, run_command, bin_paths)
    return exc.value.args[0]


def fake_sysfs_root(module, tmp_path, monkeypatch, *folders: str):
    """Point the module's _SYSFS_ROOT at <tmp_path>/sys, made with the given folders below it, so that
    the host's real /sys is never read; return that root."""
    root = tmp_path / "sys"
    root.mkdir()
    for folder in folders:
        (root / folder).mkdir(parents=True)
    monkeypatch.setattr(module, "_SYSFS_ROOT", str(root))
    return root
