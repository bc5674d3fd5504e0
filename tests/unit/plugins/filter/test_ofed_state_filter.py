# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ofed_state filters: wired to their logic, bad input as AnsibleFilterError."""

from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpucluster.core.plugins.filter.ofed import FilterModule
from ansible_collections.gpucluster.core.tests.unit.plugins.plugin_utils.failures import message_of

FILTERS = FilterModule().filters()
ofed_port_problem = FILTERS["ofed_port_problem"]
ofed_nccl_conf = FILTERS["ofed_nccl_conf"]
ofed_kernel_report = FILTERS["ofed_kernel_report"]

ROCE = {"ca_count": 1, "cas": [{"name": "mlx5_0", "ports": [
    {"port": 1, "state": "Active", "physical_state": "LinkUp", "rate_gbps": 400, "link_layer": "Ethernet"}]}]}


def test_filters_are_registered():
    assert sorted(FILTERS) == ["ofed_artifacts", "ofed_kernel_report", "ofed_nccl_conf", "ofed_port_problem",
                               "ofed_source_names"]


def test_port_problem():
    assert ofed_port_problem(ROCE, ["mlx5_0:1", "mlx5_1:1"], 400, "gpu01") == (
        "ofed: 1 of 2 expected ports on gpu01 are not Active and LinkUp at 400 Gb/s or more: mlx5_1:1 (not found)."
        " ibstat found 1 HCAs.")


def test_nccl_conf():
    assert ofed_nccl_conf(ROCE, [], 400, "=ib0", 3, {"NCCL_IB_TC": 106, "NCCL_SOCKET_IFNAME": None}) == [
        "NCCL_IB_GID_INDEX=3", "NCCL_IB_HCA==mlx5_0:1", "NCCL_IB_TC=106"]


def test_kernel_report():
    report = ofed_kernel_report("6.1.0-18-amd64", "doca", {"rc": 0, "stdout": "/lib/modules/6.1.0-18-amd64/updates/dkms/mlx5_core.ko"},
                                {"files": []}, {"stdout_lines": []}, "linux-headers-6.1.0-18-amd64", "gpu01")
    assert report["match"] is True


@pytest.mark.parametrize("call, message", [
    (lambda: ofed_port_problem({"cas": []}, ["mlx5_0:1"], 0, "gpu01"), "ofed_port_problem: the input is not of the expected shape (KeyError: 'ca_count')"),
    (lambda: ofed_port_problem({"ca_count": 1, "cas": [{"ports": ROCE["cas"][0]["ports"]}]}, [], 0, "gpu01"),
     "ofed_port_problem: the input is not of the expected shape (KeyError: 'name')"),
    (lambda: ofed_nccl_conf(None, [], 0, "=ib0", 3, {}),
     "ofed_nccl_conf: the input is not of the expected shape (TypeError: 'NoneType' object is not subscriptable)"),
    (lambda: ofed_nccl_conf(ROCE, [], 0, "=ib0", 3, ["NCCL_X"]),
     "ofed_nccl_conf: the input is not of the expected shape (ValueError: dictionary update sequence element #0 has length 6; 2 is required)"),
    (lambda: ofed_kernel_report("6.1.0-18-amd64", "inbox", {}, {}, {}, "linux-headers-6.1.0-18-amd64", "gpu01"),
     "ofed_kernel_report: the input is not of the expected shape (ValueError: ofed_source must be doca or mlnx_ofed for the kernel check (got 'inbox'))"),
    (lambda: ofed_kernel_report("6.1.0-18-amd64", "doca", {}, {"files": [{}]}, {}, "linux-headers-6.1.0-18-amd64", "gpu01"),
     "ofed_kernel_report: the input is not of the expected shape (KeyError: 'path')"),
])
def test_bad_input(call, message):
    assert message_of(AnsibleFilterError, call) == message


@pytest.mark.parametrize("name, given, message", [
    ("ofed_source_names", {"doca_distro": "debian12"},
     "ofed_source_names: the input is not of the expected shape (KeyError: 'doca_arch')"),
    ("ofed_artifacts", {"source": "inbox"},
     "ofed_artifacts: the input is not of the expected shape (KeyError: 'inbox_install')"),
])
def test_plans_turn_bad_input_into_filter_errors(name, given, message):
    assert message_of(AnsibleFilterError, FILTERS[name], given) == message
