# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.gpucluster.core.plugins.filter.common import FilterModule

first_host_in = FilterModule().filters()["first_host_in"]


@pytest.mark.parametrize(
    "group, hosts, expected",
    [
        # the group's order decides, not the hosts' order
        (["cp1", "cp2", "cp3"], ["gpu01", "cp3", "cp2"], "cp2"),
        (["cp1", "cp2"], ["cp1", "cp2"], "cp1"),
        # the first failed or is unreachable: the next of the play
        (["cp1", "cp2", "cp3"], ["cp3", "gpu01"], "cp3"),
        # none of the group in the play (--limit gpu02): the group's first, outside the play
        (["cp1", "cp2"], ["gpu02"], "cp1"),
        (["cp1"], [], "cp1"),
        ([], ["gpu01"], ""),
        (("cp1", "cp2"), ("cp2",), "cp2"),
    ],
)
def test_first_host_in(group, hosts, expected):
    assert first_host_in(group, hosts) == expected


@pytest.mark.parametrize(
    "group, hosts, message",
    [
        ("cp1", ["cp1"], "first_host_in: the group must be a list of host names, not 'cp1'"),
        (None, ["cp1"], "first_host_in: the group must be a list of host names, not None"),
        (["cp1"], "cp1", "first_host_in: the hosts must be a list of host names, not 'cp1'"),
    ],
)
def test_first_host_in_refuses(group, hosts, message):
    with pytest.raises(AnsibleFilterError) as err:
        first_host_in(group, hosts)
    assert str(err.value) == message
