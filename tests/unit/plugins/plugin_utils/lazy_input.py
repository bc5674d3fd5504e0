# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The plan filters' tests' stand-in for the lazy dict Ansible hands a filter: a value that cannot be
worked out there (a fact not gathered, a repository of a source not in use, the peers off a monitoring
host) is UNREAD, and reading it fails the test."""

from __future__ import annotations

UNREAD = object()


class Unread(dict):
    """A plan input whose UNREAD values fail when read, with ``[]`` or ``get``."""

    def __getitem__(self, key):
        value = super().__getitem__(key)
        if value is UNREAD:
            raise AssertionError("%s was read" % key)
        return value

    def get(self, key, default=None):
        return self[key] if key in self else default
