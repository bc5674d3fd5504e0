# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection's one OS support matrix (plugins/plugin_utils/common/_support.py) against what the
roles claim and check: each role's meta/main.yml platforms, the README's support table, every
preflight's check (the common role's supported_os entry point, no copy of the matrix in a role), and
a release the matrix does not list refused before any host is changed."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
import yaml
from roleplay import assert_passes_validation, assert_refused_untouched, run_role

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / ".venv" / "collections"))
sys.path.insert(0, str(ROOT / "tests" / "harness"))
from ansible_collections.gpucluster.core.plugins.plugin_utils.common import _support as matrix  # noqa: E402
import role_docs  # noqa: E402

ROLES = sorted(p.name for p in (ROOT / "roles").iterdir() if p.is_dir())
CHECK = {"name": "gpucluster.core.common", "tasks_from": "supported_os", "apply": {"tags": ["always"]}}
CHECK_AND_LOAD = {"name": "gpucluster.core.common", "tasks_from": "os_vars", "apply": {"tags": ["always"]}}


def _yaml(path: Path):
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def test_every_role_is_in_the_matrix():
    assert sorted(matrix.ROLES) == ROLES


@pytest.mark.parametrize("role", ROLES)
def test_meta_platforms_are_the_matrix(role):
    assert _yaml(ROOT / "roles" / role / "meta" / "main.yml")["galaxy_info"]["platforms"] == matrix.meta_platforms(role)


@pytest.mark.parametrize("role", ROLES)
def test_meta_says_what_was_proven_live(role):
    text = (ROOT / "roles" / role / "meta" / "main.yml").read_text(encoding="utf-8")
    assert "\n".join(role_docs.meta_comment(role)) + "\n  platforms:\n" in text


def test_the_readme_support_table_is_the_matrix():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert role_docs.top_support_block() in readme, "run: python tests/harness/role_docs.py"
    assert "| kubernetes | live | unit | unit | unit | unit | unit |" in readme
    assert "| monitoring | live | live | unit | unit | — | — |" in readme


@pytest.mark.parametrize("role", [r for r in ROLES if (ROOT / "roles" / r / "tasks" / "preflight.yml").is_file()])
def test_every_preflight_checks_the_matrix(role):
    """Once, through the common role: its os_vars entry point checks the release before it loads the
    role's OS variables (one call for both); a role without OS variables calls supported_os alone."""
    tasks = _yaml(ROOT / "roles" / role / "tasks" / "preflight.yml")
    includes = [t for t in tasks if "ansible.builtin.include_role" in t]
    checks = [t for t in includes if t["ansible.builtin.include_role"] in (CHECK, CHECK_AND_LOAD)]
    assert [(t["name"], t.get("vars", {}).get("common_os_check", True)) for t in checks] in (
        [("Check the distribution is supported", True)],
        [("Check the distribution is supported and load its settings", True)],
        [("Check the distribution and architecture are supported and load the settings", True)])
    # No second check and no load of the OS variables without it.
    assert [t for t in includes if t["ansible.builtin.include_role"]["tasks_from"] in ("supported_os", "os_vars")] == checks
    if (ROOT / "roles" / role / "vars" / "Debian.yml").is_file():
        assert checks[0]["ansible.builtin.include_role"] == CHECK_AND_LOAD


def test_os_vars_checks_the_release_first():
    tasks = _yaml(ROOT / "roles" / "common" / "tasks" / "os_vars.yml")
    assert tasks[0] == {"name": "Check the distribution is supported (gathering the min facts where missing)",
                        "ansible.builtin.import_tasks": "supported_os.yml"}
    check = _yaml(ROOT / "roles" / "common" / "tasks" / "supported_os.yml")
    assert [(t["name"], t.get("when")) for t in check][1:] == [("Check the distribution is supported", "common_os_check")]
    assert [t["name"] for t in tasks][-1] == "Load the OS variables of the calling role"


@pytest.mark.parametrize("role", ROLES)
def test_no_role_keeps_its_own_copy(role):
    """Releases and OS families are named in the matrix only, not in a role's vars or tasks."""
    base = ROOT / "roles" / role
    for path in sorted(base.glob("vars/*.yml")) + sorted(base.glob("tasks/*.yml")):
        text = "\n".join(line for line in path.read_text(encoding="utf-8").splitlines() if not line.strip().startswith("#"))
        assert not re.search(r'(?m)^\s*(Debian|Ubuntu|RedHat|Rocky|AlmaLinux): \["\d|_supported_os_families|_architectures'
                             r"|Rocky|AlmaLinux|22\.04|24\.04|\['Debian', 'RedHat'\]", text), path


FACTS = {"ansible_distribution": "Debian", "ansible_distribution_version": "11.9",
         "ansible_distribution_major_version": "11", "ansible_distribution_release": "bullseye",
         "ansible_os_family": "Debian", "ansible_architecture": "x86_64", "ansible_pkg_mgr": "apt",
         "ansible_kernel": "5.10.0-32-amd64", "ansible_python": {"version": {"major": 3, "minor": 9}}}
HOSTS = ["master", "worker1"]
GROUPS = {"cluster": HOSTS, "head": ["master"]}
NFS_VARS = {"nfs_mounts": [{"src": "master:/data/shared", "path": "/data/shared"}]}


def test_a_release_the_matrix_does_not_list_is_refused_untouched(tmp_path):
    # Debian 11 from the fact cache: refused with the role, the host and the supported releases,
    # and no host contacted.
    hosts = {"master": {"nfs_exports": [{"path": "/data/shared", "clients": ["192.168.1.0/24"]}]}, "worker1": {}}
    result = run_role(tmp_path, "gpucluster.core.nfs", hosts=hosts, groups=GROUPS,
                      group_vars=NFS_VARS, facts={"master": FACTS, "worker1": dict(FACTS, ansible_distribution_version="11.2")})
    assert_refused_untouched(result, "nfs: Debian 11.")
    assert "nfs: Debian 11.9 on host 'master' is not supported (supported: Debian 12 / 13, Ubuntu 22.04 / 24.04, " \
           "RHEL / Rocky / AlmaLinux 8 / 9)." in result.stdout


def test_the_escape_hatch_runs_the_role_anyway(tmp_path):
    # base_os_allow_unsupported_os: the check passes and the role goes on to its first task that
    # needs a host (which does not exist).
    hosts = {"master": {"base_os_addresses": {"management": "192.168.1.10"}},
             "worker1": {"base_os_addresses": {"management": "192.168.1.11"}}}
    for name in ("refused", "allowed"):
        (tmp_path / name).mkdir()
    refused = run_role(tmp_path / "refused", "gpucluster.core.base_os", hosts=hosts, groups=GROUPS, group_vars={},
                       facts={h: FACTS for h in HOSTS})
    assert_refused_untouched(refused, "Set base_os_allow_unsupported_os=true to try anyway.")
    allowed = run_role(tmp_path / "allowed", "gpucluster.core.base_os", hosts=hosts, groups=GROUPS,
                       group_vars={"base_os_allow_unsupported_os": True}, facts={h: FACTS for h in HOSTS})
    assert_passes_validation(allowed, HOSTS, "not supported")
