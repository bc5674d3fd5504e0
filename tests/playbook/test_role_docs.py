# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The documentation derived from data is what the data says: each role README's variable table is
its meta/argument_specs.yml, the support tables and meta/main.yml platforms are the support matrix
(tests/harness/role_docs.py --check; run the script without --check to rewrite them)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tests" / "harness" / "role_docs.py"
ROLES = sorted(p.name for p in (ROOT / "roles").iterdir() if p.is_dir())


def test_generated_docs_are_current():
    result = subprocess.run([sys.executable, str(SCRIPT), "--check"], cwd=ROOT, capture_output=True, text=True,
                            timeout=120, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("role", ROLES)
def test_every_option_is_in_the_readme(role):
    readme = (ROOT / "roles" / role / "README.md").read_text(encoding="utf-8")
    block = readme[readme.index("<!-- BEGIN variables"):readme.index("<!-- END variables -->")]
    specs = yaml.safe_load((ROOT / "roles" / role / "meta" / "argument_specs.yml").read_text(encoding="utf-8"))
    for entry in specs["argument_specs"].values():
        for name in entry.get("options") or {}:
            assert "| `%s` |" % name in block, name
    assert "<!-- BEGIN support" in readme


def test_check_mode_fails_on_a_stale_table(tmp_path, monkeypatch, capsys):
    sys.path.insert(0, str(SCRIPT.parent))
    import role_docs  # pylint: disable=import-outside-toplevel

    shutil.copytree(ROOT / "roles", tmp_path / "roles")
    shutil.copy(ROOT / "README.md", tmp_path / "README.md")
    readme = tmp_path / "roles" / "nfs" / "README.md"
    readme.write_text(readme.read_text(encoding="utf-8").replace("| `nfs_exports` |", "| `nfs_shares` |"), encoding="utf-8")
    monkeypatch.setattr(role_docs, "ROOT", tmp_path)
    assert role_docs.main(["--check"]) == 1
    assert "differs: roles/nfs/README.md" in capsys.readouterr().out
    assert role_docs.main([]) == 0
    assert role_docs.main(["--check"]) == 0
