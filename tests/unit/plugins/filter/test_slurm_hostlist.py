# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import re

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.gpucluster.core.plugins.filter.slurm import (
    FilterModule,
    slurm_hostlist_compress,
    slurm_hostlist_expand,
)
from ansible_collections.gpucluster.core.plugins.module_utils._hostlist import compress, expand
from ansible_collections.gpucluster.core.tests.unit.plugins.plugin_utils.failures import message_of
from ansible_collections.gpucluster.core.tests.unit.plugins.shared_fixtures import read_fixture


@pytest.mark.parametrize(
    "expr, hosts",
    [
        ("gpu[01-03,10]", ["gpu01", "gpu02", "gpu03", "gpu10"]),
        ("gpu[08-10]", ["gpu08", "gpu09", "gpu10"]),
        ("gpu[1-3]", ["gpu1", "gpu2", "gpu3"]),
        ("gpu[1-2],login1", ["gpu1", "gpu2", "login1"]),
        ("gpu[1-2],cpu[01-02]", ["gpu1", "gpu2", "cpu01", "cpu02"]),
        ("r[1-2]n[1-2]", ["r1n1", "r1n2", "r2n1", "r2n2"]),
        ("node[1-2]-ib", ["node1-ib", "node2-ib"]),
        ("dgx01", ["dgx01"]),
        ("", []),
        (" a1 , b2 ", ["a1", "b2"]),
    ],
)
def test_expand(expr, hosts):
    assert expand(expr) == hosts
    assert slurm_hostlist_expand(expr) == hosts


@pytest.mark.parametrize(
    "hosts, expr",
    [
        (["gpu01", "gpu02", "gpu03", "gpu10"], "gpu[01-03,10]"),
        (["gpu10", "gpu01", "gpu02", "gpu02"], "gpu[01-02,10]"),
        (["gpu09", "gpu10", "gpu11"], "gpu[09-11]"),
        (["gpu9", "gpu10"], "gpu[9-10]"),
        (["gpu1", "cpu01", "gpu2", "cpu02"], "gpu[1-2],cpu[01-02]"),
        (["node1-ib", "node2-ib"], "node[1-2]-ib"),
        (["login", "gpu1"], "login,gpu1"),
        (["dgx01"], "dgx01"),
        ([], ""),
    ],
)
def test_compress(hosts, expr):
    assert compress(hosts) == expr
    assert slurm_hostlist_compress(hosts) == expr


@pytest.mark.parametrize("expr", ["gpu[01-08,10]", "a[1-3],b[001-004,010]", "x[1-2]-ib,login"])
def test_round_trip(expr):
    assert slurm_hostlist_compress(slurm_hostlist_expand(expr)) == expr
    assert slurm_hostlist_compress(expr) == expr


def test_real_nodename_line():
    """The DeepOps NodeName line names dgx01; it round-trips."""
    text = read_fixture("slurm", "dgx-a100-slurm-conf-nodename-diff-generated-vs-mig.txt")
    names = sorted(set(re.findall(r"NodeName=(\S+)", text)))
    assert names == ["dgx01"]
    assert slurm_hostlist_compress(slurm_hostlist_expand(names)) == "dgx01"


@pytest.mark.parametrize(
    "expr, message",
    [
        ("gpu[1-", "slurm_hostlist_expand: unbalanced '[' in hostlist 'gpu[1-'"),
        ("gpu1]", "slurm_hostlist_expand: unbalanced ']' in hostlist 'gpu1]'"),
        ("gpu[5-3]", "slurm_hostlist_expand: range '5-3' runs backwards in hostlist 'gpu[5-3]'"),
        ("gpu[a-b]", "slurm_hostlist_expand: bad range 'a-b' in hostlist 'gpu[a-b]'"),
        ("gpu[[1]]", "slurm_hostlist_expand: nested '[' in hostlist 'gpu[[1]]'"),
        ("n[0-999999999]", "slurm_hostlist_expand: range '0-999999999' in hostlist 'n[0-999999999]' is too large"),
    ],
)
def test_errors(expr, message):
    assert message_of(AnsibleFilterError, slurm_hostlist_expand, expr) == message


def test_type_errors():
    assert message_of(AnsibleFilterError, slurm_hostlist_compress, 5) == "slurm_hostlist_compress: expected a string or a list of strings, got int"
    assert message_of(AnsibleFilterError, slurm_hostlist_expand, ["a1", 2]) == "slurm_hostlist_expand: every item must be a string, got 2"


def test_filter_module():
    assert {"slurm_hostlist_expand", "slurm_hostlist_compress"} <= set(FilterModule().filters())
