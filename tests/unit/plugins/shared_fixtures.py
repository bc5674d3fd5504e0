# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Locate the real-hardware fixtures the unit tests run over.

Two sets:

* ``tests/unit/fixtures`` (always; in the collection, with tests/unit/fixtures/SOURCES.md);
* ``<collection root>/../shared/fixtures`` when present (an extra set; CI has it beside the
  checkout). ``GPC_SHARED_FIXTURES`` overrides that path; set it to ``none`` to run without it.

:func:`list_fixtures` returns the names of both sets, de-duplicated by content (sha256): a
shared file whose bytes are already in the local set is left out. A shared file whose name is
taken by a different local file is listed as ``shared/<name>``; :func:`read_fixture` and
:func:`fixture_path` understand that prefix. Never edit these files.
"""

from __future__ import annotations

import hashlib
import os

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED_PREFIX = "shared/"


def collection_root(start: str = HERE) -> str:
    path = start
    while True:
        if os.path.isfile(os.path.join(path, "galaxy.yml")):
            return path
        parent = os.path.dirname(path)
        if parent == path:
            raise RuntimeError("galaxy.yml not found above %s" % HERE)
        path = parent


LOCAL = os.path.join(collection_root(), "tests", "unit", "fixtures")


def _shared() -> str | None:
    override = os.environ.get("GPC_SHARED_FIXTURES", "")
    if override.lower() == "none":
        return None
    if override:
        if not os.path.isdir(override):
            raise RuntimeError("GPC_SHARED_FIXTURES=%s is not a directory" % override)
        return override
    # Try the path as imported first, then with symlinks resolved (the dev venv links the
    # checkout in as .venv/collections/ansible_collections/gpucluster/core).
    for start in (HERE, os.path.realpath(HERE)):
        candidate = os.path.normpath(os.path.join(collection_root(start), "..", "shared", "fixtures"))
        if os.path.isdir(candidate):
            return candidate
    return None


SHARED = _shared()


def fixture_path(kind: str, name: str) -> str:
    if name.startswith(SHARED_PREFIX):
        if SHARED is None:
            raise RuntimeError("shared fixtures not present: %s/%s" % (kind, name))
        return os.path.join(SHARED, kind, name[len(SHARED_PREFIX):])
    local = os.path.join(LOCAL, kind, name)
    if os.path.isfile(local) or SHARED is None:
        return local
    shared = os.path.join(SHARED, kind, name)
    return shared if os.path.isfile(shared) else local


def read_fixture(kind: str, name: str) -> str:
    with open(fixture_path(kind, name), encoding="utf-8", newline="") as handle:
        return handle.read()


def _files(directory: str) -> list[str]:
    if not os.path.isdir(directory):
        return []
    return sorted(
        n for n in os.listdir(directory) if not n.startswith(".") and os.path.isfile(os.path.join(directory, n))
    )


def _digest(path: str) -> str:
    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()


def list_fixtures(kind: str) -> list[str]:
    """Every file of one fixture kind (e.g. nvidia-smi-xml) in both sets, sorted; fails if none."""
    local_dir = os.path.join(LOCAL, kind)
    names = _files(local_dir)
    seen = {_digest(os.path.join(local_dir, n)) for n in names}
    if SHARED is not None:
        shared_dir = os.path.join(SHARED, kind)
        for name in _files(shared_dir):
            digest = _digest(os.path.join(shared_dir, name))
            if digest in seen:
                continue
            seen.add(digest)
            names.append(SHARED_PREFIX + name if name in names else name)
    if not names:
        raise RuntimeError("no fixtures of kind %s in %s or %s" % (kind, LOCAL, SHARED))
    return sorted(names)
