# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""find_program: the program a facts module runs, given or looked up."""

from __future__ import annotations

import os

import pytest

from ansible_collections.gpucluster.core.plugins.module_utils._facts import find_program


class LookupStub:
    """get_bin_path that records its question and answers /usr/sbin/<name>."""

    def __init__(self):
        self.asked = []

    def get_bin_path(self, name, opt_dirs=None):
        self.asked.append((name, opt_dirs))
        return "/usr/sbin/" + name


@pytest.mark.parametrize("mode, found", [(0o755, True), (0o644, False)])
def test_given_path_is_used_only_when_executable(tmp_path, mode, found):
    program = tmp_path / "ibstat"
    program.write_text("#!/bin/sh\n")
    os.chmod(str(program), mode)
    module = LookupStub()
    assert find_program(module, str(program), "ibstat", ["/sbin"]) == (str(program) if found else None)
    assert module.asked == []


def test_given_path_that_is_missing_or_a_folder_gives_none(tmp_path):
    module = LookupStub()
    assert find_program(module, str(tmp_path / "absent"), "ibstat", ["/sbin"]) is None
    assert find_program(module, str(tmp_path), "ibstat", ["/sbin"]) is None
    assert module.asked == []


def test_no_path_looks_the_name_up():
    module = LookupStub()
    assert find_program(module, None, "nvidia-smi", ["/usr/local/nvidia/bin"]) == "/usr/sbin/nvidia-smi"
    assert module.asked == [("nvidia-smi", ["/usr/local/nvidia/bin"])]
