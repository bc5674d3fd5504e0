# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fixture locator: local set always, shared set de-duplicated by content."""

from __future__ import annotations

import hashlib
import os
import re

import pytest

from ansible_collections.gpucluster.core.tests.unit.plugins import shared_fixtures


@pytest.fixture
def sets(tmp_path, monkeypatch):
    local, shared = tmp_path / "local" / "kind", tmp_path / "shared" / "kind"
    local.mkdir(parents=True)
    shared.mkdir(parents=True)
    (local / "a.txt").write_text("A")
    (local / "b.txt").write_text("B")
    (shared / "a-copy.txt").write_text("A")  # same bytes as a.txt: left out
    (shared / "b.txt").write_text("B2")  # name taken by a different local file
    (shared / "c.txt").write_text("C")  # only in the shared set
    (shared / ".hidden").write_text("H")
    monkeypatch.setattr(shared_fixtures, "LOCAL", str(tmp_path / "local"))
    monkeypatch.setattr(shared_fixtures, "SHARED", str(tmp_path / "shared"))
    return tmp_path


def test_both_sets_deduplicated(sets):
    assert shared_fixtures.list_fixtures("kind") == ["a.txt", "b.txt", "c.txt", "shared/b.txt"]
    assert [shared_fixtures.read_fixture("kind", n) for n in ("a.txt", "b.txt", "c.txt", "shared/b.txt")] == [
        "A", "B", "C", "B2",
    ]


def test_local_set_only(sets, monkeypatch):
    monkeypatch.setattr(shared_fixtures, "SHARED", None)
    assert shared_fixtures.list_fixtures("kind") == ["a.txt", "b.txt"]
    with pytest.raises(RuntimeError, match="^shared fixtures not present: kind/shared/b.txt$"):
        shared_fixtures.fixture_path("kind", "shared/b.txt")


def test_no_fixtures_of_a_kind_fails(sets):
    with pytest.raises(RuntimeError, match="^no fixtures of kind none in "):
        shared_fixtures.list_fixtures("none")


def test_the_collection_carries_every_kind():
    for kind in ("ibstat", "nvidia-smi-csv", "nvidia-smi-topo", "nvidia-smi-xml", "slurm", "h100-80gb-hbm3-driver580",
                 "h100-80gb-hbm3-driver580-b", "h200-driver580"):
        assert os.listdir(os.path.join(shared_fixtures.LOCAL, kind))


def _checksums():
    """The sha256 list of tests/unit/fixtures/SOURCES.md: {relative path: digest}."""
    with open(os.path.join(shared_fixtures.LOCAL, "SOURCES.md"), encoding="utf-8") as handle:
        block = re.search(r"^## Checksums \(sha256\)\n\n```\n(.*?)^```$", handle.read(), re.S | re.M).group(1)
    return dict(reversed(line.split("  ", 1)) for line in block.splitlines())


def test_every_listed_fixture_is_unchanged():
    for path, digest in _checksums().items():
        with open(os.path.join(shared_fixtures.LOCAL, path), "rb") as handle:
            assert (path, hashlib.sha256(handle.read()).hexdigest()) == (path, digest)


@pytest.mark.parametrize("kind", ["h100-80gb-hbm3-driver580", "h100-80gb-hbm3-driver580-b", "h200-driver580",
                                  "kubernetes"])
def test_every_file_of_our_own_captures_is_listed(kind):
    listed = _checksums()
    assert [n for n in sorted(os.listdir(os.path.join(shared_fixtures.LOCAL, kind)))
            if "%s/%s" % (kind, n) not in listed] == []
