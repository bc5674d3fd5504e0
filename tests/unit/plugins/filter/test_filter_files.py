# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The shape of plugins/filter: one file per role (or playbook), each filter documented in its own
sidecar <filter>.yml (one documentation style), every sidecar naming a filter that exists."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest
import yaml

FILTER_DIR = Path(__file__).resolve().parents[4] / "plugins" / "filter"
ROLES = {p.name for p in (FILTER_DIR.parents[1] / "roles").iterdir() if p.is_dir()}
PLAYBOOKS = {"site", "maintenance", "artifacts", "quarantine"}
FILES = sorted(p.stem for p in FILTER_DIR.glob("*.py"))


def _filters(stem):
    module = importlib.import_module("ansible_collections.gpucluster.core.plugins.filter." + stem)
    return module.FilterModule().filters()


def test_one_file_per_role_or_playbook():
    assert sorted(set(FILES) - ROLES - PLAYBOOKS) == []


@pytest.mark.parametrize("stem", FILES)
def test_every_filter_has_its_own_documentation(stem):
    for name in _filters(stem):
        doc = yaml.safe_load((FILTER_DIR / ("%s.yml" % name)).read_text(encoding="utf-8"))
        assert doc["DOCUMENTATION"]["name"] == name


@pytest.mark.parametrize("stem", FILES)
def test_no_inline_documentation(stem):
    assert "DOCUMENTATION" not in (FILTER_DIR / ("%s.py" % stem)).read_text(encoding="utf-8")


def test_each_filter_lives_in_one_file_and_each_sidecar_names_one():
    names = [name for stem in FILES for name in _filters(stem)]
    assert len(names) == len(set(names))
    assert sorted(p.stem for p in FILTER_DIR.glob("*.yml")) == sorted(names)
