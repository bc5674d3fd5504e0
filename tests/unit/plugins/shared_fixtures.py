# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Locate the shared real-hardware fixtures: <collection root>/../shared/fixtures.

The collection root is the directory that holds galaxy.yml. In a checkout that is the
repository root (fixtures at ../shared/fixtures); under tests/harness/ansible-test.sh the
collection is copied to .../ansible_collections/gpucluster/core with a ``shared`` symlink
beside it, so the same relative path works. Never edit these files.
"""

from __future__ import annotations

import os

HERE = os.path.dirname(os.path.abspath(__file__))


def collection_root(start: str = HERE) -> str:
    path = start
    while True:
        if os.path.isfile(os.path.join(path, "galaxy.yml")):
            return path
        parent = os.path.dirname(path)
        if parent == path:
            raise RuntimeError("galaxy.yml not found above %s" % HERE)
        path = parent


def _shared() -> str:
    # Try the path as imported first, then with symlinks resolved (the dev venv links the
    # checkout in as .venv/collections/ansible_collections/gpucluster/core).
    candidates = []
    for start in (HERE, os.path.realpath(HERE)):
        candidates.append(os.path.normpath(os.path.join(collection_root(start), "..", "shared", "fixtures")))
    for candidate in candidates:
        if os.path.isdir(candidate):
            return candidate
    raise RuntimeError("shared fixtures not found; looked in %s" % ", ".join(candidates))


SHARED = _shared()


def fixture_path(kind: str, name: str) -> str:
    return os.path.join(SHARED, kind, name)


def read_fixture(kind: str, name: str) -> str:
    with open(fixture_path(kind, name), encoding="utf-8", newline="") as handle:
        return handle.read()


def list_fixtures(kind: str) -> list[str]:
    """Every file of one fixture kind (e.g. nvidia-smi-xml), sorted; fails if none."""
    directory = os.path.join(SHARED, kind)
    names = sorted(n for n in os.listdir(directory) if not n.startswith("."))
    if not names:
        raise RuntimeError("no fixtures in %s" % directory)
    return names
