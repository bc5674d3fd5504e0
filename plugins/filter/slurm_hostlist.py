# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Slurm hostlist filters: slurm_hostlist_expand and slurm_hostlist_compress.

Documentation lives beside this file in slurm_hostlist_expand.yml and
slurm_hostlist_compress.yml. The grammar is implemented in module_utils/_hostlist.py rather
than with python-hostlist or ClusterShell: those would have to be installed on every
controller that uses the collection (neither ships with ansible-core), and the part of the
grammar Slurm node names need is small and fully unit tested here.
"""

from __future__ import annotations

from ansible.errors import AnsibleFilterError
from ansible.module_utils.common.text.converters import to_native

from ansible_collections.gpucluster.core.plugins.module_utils._hostlist import (
    HostlistError,
    compress,
    expand,
)


def _items(value, name):
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)):
        for item in value:
            if not isinstance(item, str):
                raise AnsibleFilterError("%s: every item must be a string, got %r" % (name, item))
        return list(value)
    raise AnsibleFilterError("%s: expected a string or a list of strings, got %s" % (name, type(value).__name__))


def slurm_hostlist_expand(value):
    """Expand Slurm hostlist expressions into a list of host names."""
    hosts = []
    try:
        for item in _items(value, "slurm_hostlist_expand"):
            hosts.extend(expand(item))
    except HostlistError as exc:
        raise AnsibleFilterError("slurm_hostlist_expand: %s" % to_native(exc))
    return hosts


def slurm_hostlist_compress(value):
    """Compress host names (or hostlist expressions) into one Slurm hostlist expression."""
    hosts = []
    try:
        for item in _items(value, "slurm_hostlist_compress"):
            hosts.extend(expand(item))
        return compress(hosts)
    except HostlistError as exc:
        raise AnsibleFilterError("slurm_hostlist_compress: %s" % to_native(exc))


class FilterModule(object):
    """Slurm hostlist filters."""

    def filters(self):
        return {
            "slurm_hostlist_expand": slurm_hostlist_expand,
            "slurm_hostlist_compress": slurm_hostlist_compress,
        }
