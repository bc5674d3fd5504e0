# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""_validation_fabric: bandwidth expectations from the hardware, judging benchmark results, pairing
nodes, re-mixing slow pairs and blaming the node at fault.

Inputs are real captures (ibstat of H100, A100 and Azure nodes, nvidia-smi XML read by
_health.hardware) or, where a test needs a state the captures do not show, a real capture with
one field changed.
"""

from __future__ import annotations

import copy

import pytest

from ansible_collections.gpucluster.core.plugins.module_utils._health import hardware
from ansible_collections.gpucluster.core.plugins.module_utils._ibstat import parse_ibstat, summarize
from ansible_collections.gpucluster.core.plugins.plugin_utils.validation._fabric import (
    NVLINK_GBS,
    PCIE_X16_GBS,
    blame,
    fabric_rounds,
    fastest_active_port,
    judge,
    nccl_expectation,
    nic_rate_per_gpu,
    pairs,
    remix,
)
from ansible_collections.gpucluster.core.tests.unit.plugins.plugin_utils.validation.validation_helpers import (
    H100,
    NCCL_45,
    V100,
    smi,
)
from ansible_collections.gpucluster.core.tests.unit.plugins.shared_fixtures import read_fixture


IB = "ibstat"
IB_MIXED = "h100-8x-ndr-ib-cx7-plus-4x-roce-cx6dx-3-ports-down.txt"
IB_ROCE_DOWN = "h100-12x-roce-ethernet-2-cx7-ports-down.txt"
IB_ROCE_OK = "h100-12x-roce-ethernet-cx7-400g-cx6dx-100g-all-active.txt"
IB_A100 = "a100-9x-mlx5gen-vf-mt4126-8-ib-hdr-1-ethernet.txt"
IB_AZURE = "ibstatus-azure-a100-9x-hdr-200g.txt"


def ibstat(name):
    return summarize(parse_ibstat(read_fixture(IB, name)), IB)


# ---------------------------------------------------------------------------
# Bandwidth expectations
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("name, gpus, layers, want", [
    (IB_MIXED, 8, ("InfiniBand", "Ethernet"), 400.0),
    (IB_MIXED, 8, ("InfiniBand",), 400.0),
    (IB_MIXED, 4, ("InfiniBand",), 400.0),  # at most one port per GPU
    (IB_MIXED, 8, ("Ethernet",), 12.5),  # the one active CX-6 Dx port: 100 / 8
    (IB_ROCE_OK, 8, ("InfiniBand", "Ethernet"), 400.0),
    (IB_ROCE_OK, 8, ("InfiniBand",), None),  # RoCE only
    (IB_A100, 8, ("InfiniBand", "Ethernet"), 200.0),
    (IB_AZURE, 8, ("InfiniBand", "Ethernet"), 200.0),
    (IB_AZURE, 8, ("Ethernet",), 5.0),  # the 40G accelerated-networking port
    (IB_AZURE, 0, ("InfiniBand",), None),
])
def test_nic_rate_per_gpu(name, gpus, layers, want):
    assert nic_rate_per_gpu(ibstat(name), gpus, layers) == want


def test_nic_rate_per_gpu_without_ibstat():
    assert nic_rate_per_gpu(None, 8) is None
    assert nic_rate_per_gpu({}, 8) is None
    assert nic_rate_per_gpu({"cas": []}, 8) is None


def test_nic_rate_per_gpu_counts_only_the_adapter_model_with_most_ports():
    # 6 active CX-7 (MT4129) rails at 400G + 4 CX-6 Dx (MT4125) at 100G, 8 GPUs: 6 x 400 / 8
    assert nic_rate_per_gpu(ibstat(IB_ROCE_DOWN), 8) == 300.0


@pytest.mark.parametrize("scope, fraction, kwargs, want", [
    ("inter", 0.9, {"nic_gbps_per_gpu": 400.0},
     {"value": 45.0, "unit": "GB/s", "source": "0.90 x 400 Gb/s NIC line rate per GPU (ibstat)"}),
    ("inter", 0.9, {"nic_gbps_per_gpu": 200.0},
     {"value": 22.5, "unit": "GB/s", "source": "0.90 x 200 Gb/s NIC line rate per GPU (ibstat)"}),
    ("inter", 0.9, {"nic_gbps_per_gpu": None}, None),
    ("inter", 0.9, {"nic_gbps_per_gpu": 0}, None),
    ("intra", 0.7, {"architecture": "Hopper", "nvlink": True},
     {"value": 315.0, "unit": "GB/s", "source": "0.70 x 450 GB/s Hopper NVLink per GPU"}),
    ("intra", 0.7, {"architecture": "Ampere", "nvlink": True},
     {"value": 210.0, "unit": "GB/s", "source": "0.70 x 300 GB/s Ampere NVLink per GPU"}),
    ("intra", 0.7, {"architecture": "Volta", "nvlink": True},
     {"value": 105.0, "unit": "GB/s", "source": "0.70 x 150 GB/s Volta NVLink per GPU"}),
    ("intra", 0.7, {"architecture": "Blackwell", "nvlink": True},
     {"value": 630.0, "unit": "GB/s", "source": "0.70 x 900 GB/s Blackwell NVLink per GPU"}),
    # no NVLink: the PCIe x16 link of the generation
    ("intra", 0.7, {"architecture": "Hopper", "nvlink": False, "pcie_gen": 5},
     {"value": 44.1, "unit": "GB/s", "source": "0.70 x 63 GB/s PCIe gen5 x16"}),
    ("intra", 0.7, {"architecture": "Ada Lovelace", "nvlink": True, "pcie_gen": 4},
     {"value": 22.05, "unit": "GB/s", "source": "0.70 x 31.5 GB/s PCIe gen4 x16"}),
    ("intra", 0.5, {"pcie_gen": 3}, {"value": 7.88, "unit": "GB/s", "source": "0.50 x 15.75 GB/s PCIe gen3 x16"}),
    ("intra", 0.7, {"pcie_gen": 2}, None),
    ("intra", 0.7, {}, None),
])
def test_nccl_expectation(scope, fraction, kwargs, want):
    assert nccl_expectation(scope, fraction, **kwargs) == want


def test_bandwidth_tables():
    assert NVLINK_GBS == {"Volta": 150.0, "Ampere": 300.0, "Hopper": 450.0, "Blackwell": 900.0}
    assert PCIE_X16_GBS == {3: 15.75, 4: 31.5, 5: 63.0, 6: 121.0}


@pytest.mark.parametrize("capture, ib, want", [
    # the single H100 in a VM (no NVLink): PCIe gen5 within the node
    (H100, None, ("intra", {"value": 44.1, "unit": "GB/s", "source": "0.70 x 63 GB/s PCIe gen5 x16"})),
    # the 8x V100S PCIe (v11 schema: no architecture reported): PCIe gen3
    (V100, None, ("intra", {"value": 11.02, "unit": "GB/s", "source": "0.70 x 15.75 GB/s PCIe gen3 x16"})),
])
def test_expectations_from_real_hardware(capture, ib, want):
    hw = hardware({"nvidia_smi": smi(*capture), "ibstat": ib})
    assert nccl_expectation("intra", 0.7, architecture=hw["architecture"], pcie_gen=hw["pcie_max_gen"]) == want[1]


def test_inter_node_expectation_from_a_real_node():
    rate = nic_rate_per_gpu(ibstat(IB_MIXED), 8)
    assert nccl_expectation("inter", 0.9, nic_gbps_per_gpu=rate) == {
        "value": 45.0, "unit": "GB/s", "source": "0.90 x 400 Gb/s NIC line rate per GPU (ibstat)"}


# ---------------------------------------------------------------------------
# judge
# ---------------------------------------------------------------------------

SERIES = [{"size_bytes": 8, "value": 0.0}, {"size_bytes": 8589934592, "value": 46.21}]


def judged(check, hosts, measured, expected, status, message, **extra):
    out = {
        "check": check, "hosts": hosts, "measured": measured,
        "expected": expected["value"] if expected else None, "unit": expected["unit"] if expected else None,
        "source": expected["source"] if expected else None, "recorded": False, "series": [], "note": None,
        "status": status, "message": message,
    }
    out.update(extra)
    return out


@pytest.mark.parametrize("args, kwargs, want", [
    (("nccl_all_reduce", ["gpu1", "gpu2"], 46.21, NCCL_45), {"series": SERIES},
     judged("nccl_all_reduce", ["gpu1", "gpu2"], 46.21, NCCL_45, "pass", "46.21 GB/s measured, >= 45 expected",
            series=SERIES)),
    (("nccl_all_reduce", ("gpu1", "gpu2"), 30.5, NCCL_45), {},
     judged("nccl_all_reduce", ["gpu1", "gpu2"], 30.5, NCCL_45, "fail", "30.5 GB/s measured, >= 45 expected")),
    (("nccl_all_reduce", ["gpu1", "gpu2"], 45.0, NCCL_45), {},
     judged("nccl_all_reduce", ["gpu1", "gpu2"], 45.0, NCCL_45, "pass", "45 GB/s measured, >= 45 expected")),
    (("nccl_all_reduce", ["gpu1", "gpu2"], 0.0, NCCL_45), {},
     judged("nccl_all_reduce", ["gpu1", "gpu2"], 0.0, NCCL_45, "fail", "0 GB/s measured, >= 45 expected")),
    (("ib_write_lat", ["gpu1", "gpu2"], 2.1, {"value": 3.0, "unit": "usec", "source": "site limit"}),
     {"higher_is_better": False},
     judged("ib_write_lat", ["gpu1", "gpu2"], 2.1, {"value": 3.0, "unit": "usec", "source": "site limit"}, "pass",
            "2.1 usec measured, <= 3 expected")),
    (("nccl_all_reduce", ["gpu1", "gpu2"], 46.21, None), {},
     judged("nccl_all_reduce", ["gpu1", "gpu2"], 46.21, None, "warn",
            "nccl_all_reduce: 46.21 measured, nothing to compare with")),
    (("nccl_all_reduce", ["gpu1", "gpu2"], None, NCCL_45), {},
     judged("nccl_all_reduce", ["gpu1", "gpu2"], None, NCCL_45, "fail", "no result")),
    (("nccl_all_reduce", ["gpu1", "gpu2"], 46.21, NCCL_45), {"errors": "3 wrong results (#wrong)"},
     judged("nccl_all_reduce", ["gpu1", "gpu2"], 46.21, NCCL_45, "fail", "3 wrong results (#wrong)")),
    (("ib_write_bw", ["gpu1", "gpu2"], 361.2, {"value": 360.0, "unit": "Gb/s", "source": "0.90 x 400 Gb/s port rate (ibstat)"}),
     {"recorded": "/srv/validation/ib_write_bw.txt"},
     judged("ib_write_bw", ["gpu1", "gpu2"], 361.2,
            {"value": 360.0, "unit": "Gb/s", "source": "0.90 x 400 Gb/s port rate (ibstat)"}, "pass",
            "361.2 Gb/s measured, >= 360 expected", recorded=True,
            note="no fabric here: judged on the recorded output /srv/validation/ib_write_bw.txt, not on these nodes")),
])
def test_judge(args, kwargs, want):
    assert judge(*args, **kwargs) == want


# ---------------------------------------------------------------------------
# pairs, remix, blame
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("hosts, want", [
    ([], []),
    (["gpu1"], []),
    (["gpu2", "gpu1"], [["gpu1", "gpu2"]]),
    (["gpu10", "gpu2", "gpu1"], [["gpu1", "gpu2"], ["gpu10", "gpu1"]]),
    (["gpu4", "gpu3", "gpu10", "gpu9"], [["gpu3", "gpu4"], ["gpu9", "gpu10"]]),
    (["n%d" % i for i in range(1, 6)], [["n1", "n2"], ["n3", "n4"], ["n5", "n1"]]),
])
def test_pairs(hosts, want):
    assert pairs(hosts) == want


def result(hosts, status, check="nccl_all_reduce"):
    return {"check": check, "hosts": hosts, "status": status}


@pytest.mark.parametrize("first, want", [
    ([result(["n1", "n2"], "pass"), result(["n3", "n4"], "fail"), result(["n5", "n6"], "pass")],
     [["n3", "n1"], ["n4", "n2"]]),
    # more slow nodes than helpers: as many as there are helpers
    ([result(["n1", "n2"], "fail"), result(["n3", "n4"], "fail"), result(["n5", "n6"], "pass")],
     [["n1", "n5"], ["n2", "n6"]]),
    ([result(["n1", "n2"], "fail")], []),
    ([result(["n1", "n2"], "pass")], []),
    # a warn (nothing to compare with) is neither slow nor a helper
    ([result(["n1", "n2"], "warn"), result(["n3", "n4"], "fail")], []),
    # odd count: n1 is in a good pair and in the slow wrap-around pair, so it is no helper
    ([result(["n1", "n2"], "pass"), result(["n3", "n1"], "fail")], [["n3", "n2"]]),
    # a node in two slow pairs is re-tested once; helpers run out before n3
    ([result(["n1", "n2"], "fail"), result(["n3", "n1"], "fail"), result(["n4", "n5"], "pass")],
     [["n1", "n4"], ["n2", "n5"]]),
])
def test_remix(first, want):
    assert remix(first) == want


@pytest.mark.parametrize("second, want", [
    ([result(["n3", "n1"], "fail"), result(["n4", "n2"], "pass")],
     {"n3": "slow with n4 and again with another node"}),
    ([result(["n3", "n1"], "pass"), result(["n4", "n2"], "pass")],
     {"n3": "slow only together with n4: the path between them (cable, switch port)",
      "n4": "slow only together with n3: the path between them (cable, switch port)"}),
    ([result(["n3", "n1"], "fail"), result(["n4", "n2"], "fail")],
     {"n3": "slow with n4 and again with another node", "n4": "slow with n3 and again with another node"}),
    # not re-tested (no helper was left): no blame
    ([result(["n3", "n1"], "pass")], {}),
    ([], {}),
])
def test_blame(second, want):
    first = [result(["n1", "n2"], "pass"), result(["n3", "n4"], "fail")]
    assert blame(first, second) == want


def test_fabric_rounds_end_to_end():
    """Round one over natural pairs, round two over remix's pairs, blame the node slow twice."""
    hosts = ["gpu%d" % i for i in range(1, 7)]
    measured_1 = {("gpu1", "gpu2"): 46.2, ("gpu3", "gpu4"): 21.7, ("gpu5", "gpu6"): 45.9}
    first = [judge("nccl_all_reduce", p, measured_1[tuple(p)], NCCL_45) for p in pairs(hosts)]
    assert [r["status"] for r in first] == ["pass", "fail", "pass"]
    second_pairs = remix(first)
    assert second_pairs == [["gpu3", "gpu1"], ["gpu4", "gpu2"]]
    measured_2 = {("gpu3", "gpu1"): 22.0, ("gpu4", "gpu2"): 45.8}
    second = [judge("nccl_all_reduce", p, measured_2[tuple(p)], NCCL_45) for p in second_pairs]
    assert blame(first, second) == {"gpu3": "slow with gpu4 and again with another node"}


SLOW_AGAIN = {"status": "fail", "message": "slow with gpu1 and again with another node"}
CLEARED = {"status": "pass", "message": "slow with gpu3, which was slow again with another node"}


@pytest.mark.parametrize("first, second, want", [
    # three nodes, gpu3 slow: round one's wrap-around pair is blamed on gpu3, gpu1 is cleared
    ([result(["gpu1", "gpu2"], "pass"), result(["gpu3", "gpu1"], "fail")], [result(["gpu3", "gpu2"], "fail")],
     [dict(result(["gpu1", "gpu2"], "pass"), round=1),
      dict(result(["gpu3", "gpu1"], "fail"), round=1, blame={"gpu3": SLOW_AGAIN, "gpu1": CLEARED}),
      dict(result(["gpu3", "gpu2"], "fail"), round=2)]),
    # slow only together: the path between them, a warning for both
    ([result(["n1", "n2"], "pass"), result(["n3", "n4"], "fail")],
     [result(["n3", "n1"], "pass"), result(["n4", "n2"], "pass")],
     [dict(result(["n1", "n2"], "pass"), round=1),
      dict(result(["n3", "n4"], "fail"), round=1, blame={
          "n3": {"status": "warn", "message": "slow only together with n4: the path between them (cable, switch port)"},
          "n4": {"status": "warn", "message": "slow only together with n3: the path between them (cable, switch port)"}}),
      dict(result(["n3", "n1"], "pass"), round=2), dict(result(["n4", "n2"], "pass"), round=2)]),
    # no round two (no helper): round one stands as it is
    ([result(["n1", "n2"], "fail")], [], [dict(result(["n1", "n2"], "fail"), round=1)]),
    # checks are matched by name: the ib round two says nothing of the nccl pairs
    ([result(["n1", "n2"], "fail"), result(["n1", "n2"], "pass", "ib_write_bw")],
     [result(["n1", "n3"], "fail", "ib_write_bw")],
     [dict(result(["n1", "n2"], "pass", "ib_write_bw"), round=1),
      dict(result(["n1", "n3"], "fail", "ib_write_bw"), round=2),
      dict(result(["n1", "n2"], "fail"), round=1)]),
    ([], [], []),
])
def test_fabric_rounds(first, second, want):
    assert fabric_rounds(first, second) == want


def test_fastest_active_port():
    # the first adapter (natural order) with the fastest Active port: the CX-7 400G mlx5_0
    assert fastest_active_port(ibstat(IB_ROCE_OK)) == (400.0, "mlx5_0")
    assert fastest_active_port(ibstat(IB_AZURE)) == (200.0, "mlx5_0")
    # the same capture with mlx5_0's port Down: the next 400G CX-7, mlx5_3 (not mlx5_10)
    facts = copy.deepcopy(ibstat(IB_MIXED))
    facts["cas"][0]["ports"][0]["state"] = "Down"
    assert fastest_active_port(facts) == (400.0, "mlx5_3")
    for ca in facts["cas"]:
        for port in ca["ports"]:
            port["state"] = "Down"
    assert fastest_active_port(facts) is None
    assert fastest_active_port(None) is None
    assert fastest_active_port({"cas": []}) is None
