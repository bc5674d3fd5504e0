# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The nvidia_driver role's one read of a node's driver state (roles/nvidia_driver/tasks/reboot.yml),
run as the role runs it (bash, its environment) on this Debian machine: the installed package's
version must come through, or the "driver X is loaded, Y is installed" reboot reason never fires."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]


def _read_command() -> str:
    tasks = yaml.safe_load((ROOT / "roles/nvidia_driver/tasks/reboot.yml").read_text(encoding="utf-8"))
    task = next(t for t in tasks if t["name"].startswith("Read the loaded driver version"))
    return task["ansible.builtin.shell"]["cmd"]


def _run(package: str, loaded_file: Path) -> dict:
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "GPC_DRIVER_PACKAGE": package,
           "GPC_LOADED_VERSION_FILE": str(loaded_file)}
    out = subprocess.run(["/bin/bash", "-c", _read_command()], env=env, capture_output=True, text=True, check=True)
    return dict(line.split("=", 1) for line in out.stdout.splitlines())


@pytest.mark.skipif(shutil.which("dpkg-query") is None, reason="needs a Debian-family machine (dpkg-query)")
def test_the_read_reports_the_installed_package_version(tmp_path):
    version = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "dpkg"], capture_output=True, text=True,
                             check=True).stdout
    assert version
    loaded = tmp_path / "version"
    loaded.write_text("550.90.07\n", encoding="utf-8")
    values = _run("dpkg", loaded)
    assert values["package"] == version
    assert values["loaded"] == "550.90.07"
    assert values["nouveau"] in ("yes", "no")


@pytest.mark.skipif(shutil.which("dpkg-query") is None, reason="needs a Debian-family machine (dpkg-query)")
def test_the_read_reports_no_package_and_no_driver(tmp_path):
    values = _run("", tmp_path / "absent")
    assert values["package"] == ""
    assert values["loaded"] == "none"
    values = _run("gpucluster-no-such-package", tmp_path / "absent")
    assert values["package"] == ""
