# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import pytest

from ansible_collections.gpucluster.core.plugins.modules import ibstat_facts
from ansible_collections.gpucluster.core.tests.unit.plugins.module_utils.test_ibstat_parser import make_ib_device
from ansible_collections.gpucluster.core.tests.unit.plugins.modules.module_helpers import RunCommandStub, fail_module, fake_sysfs_root, run_module
from ansible_collections.gpucluster.core.tests.unit.plugins.shared_fixtures import (
    list_fixtures,
    read_fixture,
)

IBSTAT = "/usr/sbin/ibstat"


@pytest.fixture(autouse=True)
def fake_sysfs(tmp_path, monkeypatch):
    return fake_sysfs_root(ibstat_facts, tmp_path, monkeypatch)


@pytest.mark.parametrize("name", list_fixtures("ibstat"))
def test_every_capture(name):
    stub = RunCommandStub((0, read_fixture("ibstat", name), ""))
    result = run_module(ibstat_facts.main, {}, stub, {"ibstat": IBSTAT})
    facts = result["ansible_facts"]["infiniband"]
    assert stub.calls == [[IBSTAT]]
    assert result["changed"] is False
    assert facts["source"] == "ibstat"
    assert facts["ca_count"] in (9, 12)


def test_nonzero_exit_fails():
    stub = RunCommandStub((255, "", "ibpanic: [4182] main: can't open UMAD port (0x0000000000000000): No such device\n"))
    result = fail_module(ibstat_facts.main, {}, stub, {"ibstat": IBSTAT})
    assert result["msg"] == (
        "/usr/sbin/ibstat failed (rc=255): ibpanic: [4182] main: can't open UMAD port (0x0000000000000000): No such device"
    )


def test_partial_output_fails():
    text = read_fixture("ibstat", "a100-9x-mlx5gen-vf-mt4126-8-ib-hdr-1-ethernet.txt")
    partial = "\n".join(text.splitlines()[:12])
    result = fail_module(ibstat_facts.main, {}, RunCommandStub((0, partial, "")), {"ibstat": IBSTAT})
    assert result["msg"] == "/usr/sbin/ibstat: ibstat output is incomplete: mlx5_0 port 1 has no link_layer"


def test_auto_falls_back_to_sysfs(fake_sysfs):
    make_ib_device(fake_sysfs, "mlx5_0", "MT4129", {1: {
        "state": "4: ACTIVE", "phys_state": "5: LinkUp", "rate": "400 Gb/sec (4X NDR)", "lid": "0x4b",
        "sm_lid": "0x14e", "lid_mask_count": "0", "link_layer": "InfiniBand",
    }})
    stub = RunCommandStub()
    facts = run_module(ibstat_facts.main, {}, stub, {"ibstat": None})["ansible_facts"]["infiniband"]
    assert stub.calls == []
    assert facts["source"] == "sysfs"
    assert facts["nccl_ib_hca"] == "mlx5_0:1"


def test_no_hca_is_empty_and_valid():
    facts = run_module(ibstat_facts.main, {}, RunCommandStub(), {"ibstat": None})["ansible_facts"]["infiniband"]
    assert facts == {"source": None, "ca_count": 0, "cas": [], "active_ib_ports": [], "active_roce_ports": [], "nccl_ib_hca": ""}


def test_source_ibstat_requires_ibstat():
    result = fail_module(ibstat_facts.main, {"source": "ibstat"}, RunCommandStub(), {"ibstat": None})
    assert result["msg"] == "ibstat not found (looked in PATH); install infiniband-diags or use source=sysfs"


def test_source_sysfs_never_runs_ibstat():
    stub = RunCommandStub()
    facts = run_module(ibstat_facts.main, {"source": "sysfs"}, stub, {"ibstat": IBSTAT})["ansible_facts"]["infiniband"]
    assert stub.calls == []
    assert facts["ca_count"] == 0


def test_explicit_ibstatus_path(tmp_path):
    binary = tmp_path / "ibstatus"
    binary.write_text("")
    binary.chmod(0o755)
    stub = RunCommandStub((0, read_fixture("ibstat", "ibstatus-azure-a100-9x-hdr-200g.txt"), ""))
    facts = run_module(ibstat_facts.main, {"ibstat_path": str(binary)}, stub, {})["ansible_facts"]["infiniband"]
    assert stub.calls == [[str(binary)]]
    assert facts["active_roce_ports"] == ["mlx5_8:1"]
