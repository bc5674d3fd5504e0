# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The cuda role's filters: each is found by its name and turns input of the wrong shape into an
AnsibleFilterError (their logic is tested in tests/unit/plugins/plugin_utils/; the cuda and
nvidia_driver roles' input rules are called through gpucluster.core.input_rule_failure,
tests/unit/plugins/filter/test_input_rules_filter.py)."""

from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpucluster.core.plugins.filter import cuda

FILTERS = {
    "cuda_cudnn_entries": cuda,
    "cuda_packages": cuda,
    "cuda_unavailable": cuda,
    "cuda_verify_problems": cuda,
}


def _filter(name):
    return FILTERS[name].FilterModule().filters()[name]


@pytest.mark.parametrize("name", sorted(FILTERS))
def test_each_file_exposes_its_filter(name):
    assert name in FILTERS[name].FilterModule().filters()


def test_good_input_passes_through():
    assert _filter("cuda_packages")({"cuda_toolkits": ["12.4"], "cuda_toolkit_versions": {"12.4": "12.4.1-1"}},
                                    cudnn_packages=[], nccl_packages=[], separator="=") == [
        {"name": "cuda-toolkit-12-4", "version": "12.4.1-1", "spec": "cuda-toolkit-12-4=12.4.1-1"}]
    assert _filter("cuda_unavailable")([{"name": "libnccl2", "version": ""}], {"stdout_lines": ["libnccl2 | 2 | x"]},
                                       {"skipped": True}) == []
    assert _filter("cuda_cudnn_entries")([{"path": "/stage/lib/libcudnn.so"}], "/stage", "/usr/local/cuda-12.4") == [
        {"path": "/stage/lib/libcudnn.so", "dest": "/usr/local/cuda-12.4/lib64/libcudnn.so"}]


@pytest.mark.parametrize("name, args, kwargs, message", [
    ("cuda_packages", ("x",), {"cudnn_packages": [], "nccl_packages": [], "separator": "="},
     "cuda_packages: the input must be a dict of the role's variables"),
    ("cuda_packages", ({"cuda_toolkits": ["12.4"], "cuda_toolkit_versions": ["x"]},),
     {"cudnn_packages": [], "nccl_packages": [], "separator": "="},
     "cuda_packages: the input is not of the expected shape (AttributeError: "),
    ("cuda_unavailable", ([{"version": "1"}], {"stdout_lines": []}), {},
     "cuda_unavailable: the input is not of the expected shape (KeyError: 'name')"),
    ("cuda_verify_problems", ({}, []), {}, "cuda_verify_problems: the input and its argument must be dicts"),
    ("cuda_cudnn_entries", ([{"name": "x"}], "/stage", "/usr/local/cuda"), {},
     "cuda_cudnn_entries: the input is not of the expected shape (KeyError: 'path')"),
    ("cuda_verify_problems", ({}, {}), {},
     "cuda_verify_problems: the input is not of the expected shape (KeyError: 'default_toolkit')"),
])
def test_wrong_shape_is_a_filter_error(name, args, kwargs, message):
    with pytest.raises(AnsibleFilterError) as exc:
        _filter(name)(*args, **kwargs)
    assert str(exc.value).startswith(message)
