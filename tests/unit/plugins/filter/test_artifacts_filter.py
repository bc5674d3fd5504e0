# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The artifacts filters: wired to their logic, bad input as AnsibleFilterError."""

from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpucluster.core.plugins.filter.artifacts import FilterModule

FILTERS = FilterModule().filters()
artifacts_host_plan = FILTERS["artifacts_host_plan"]
artifacts_document = FILTERS["artifacts_document"]
artifacts_table = FILTERS["artifacts_table"]

FACTS = {"distribution": "Debian", "distribution_version": "12.8", "distribution_major_version": "12",
         "distribution_release": "bookworm", "os_family": "Debian", "architecture": "x86_64", "pkg_mgr": "apt"}


def test_filters_are_registered():
    assert sorted(FILTERS) == ["artifacts_document", "artifacts_host_plan", "artifacts_table"]


def test_plan_document_and_table():
    plan = artifacts_host_plan({"facts": FACTS, "setup": {"ansible_facts": {}}, "gpu_node": False,
                                "groups": ["cluster"]}, "cpu1")
    assert (plan["os_from"], plan["roles"]) == ("gathered", ["base_os", "ofed", "nfs", "monitoring"])
    hostvars = {"cpu1": {"__artifacts_plan": plan,
                         "__base_os_artifacts": {"role": "base_os", "distribution_packages": ["chrony"]},
                         "__ofed_artifacts": {"role": "ofed", "distribution_packages": ["rdma-core"]},
                         "__nfs_artifacts": {"role": "nfs", "distribution_packages": []},
                         "__monitoring_artifacts": {"role": "monitoring",
                                                    "distribution_packages": ["prometheus-node-exporter"]}}}
    doc = artifacts_document(hostvars, ["cpu1"], ["cpu1"])
    names = [p["name"] for p in doc["distribution_packages"][0]["packages"]]
    assert names == ["chrony", "rdma-core", "prometheus-node-exporter"]
    assert artifacts_table(doc).splitlines()[-1] == "  Debian 12 (bookworm): chrony rdma-core prometheus-node-exporter"


@pytest.mark.parametrize("call, message", [
    (lambda: artifacts_host_plan({"facts": FACTS, "gpu_node": "perhaps", "groups": ["cluster"]}, "n1"),
     "artifacts_host_plan: gpucluster_gpu_node must be true or false (got 'perhaps')"),
    (lambda: artifacts_document({}, ["gpu09"], ["gpu09"]),
     "artifacts_document: the input is not of the expected shape (KeyError: 'gpu09')"),
    (lambda: artifacts_table({"format": "x"}),
     "artifacts: the document is not valid: missing hosts, repositories, files, images, charts, manifests, "
     "distribution_packages, warnings"),
])
def test_bad_input(call, message):
    with pytest.raises(AnsibleFilterError) as exc:
        call()
    assert str(exc.value) == message
