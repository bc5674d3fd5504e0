# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The artifact list: a host's plan (OS, GPU node, roles as site.yml), the merge of every host's role
records, the document's validation and its table."""

from __future__ import annotations

import copy

import pytest

from ansible_collections.gpucluster.core.plugins.plugin_utils.artifacts._artifacts import (
    ArtifactsError, document, host_plan, table, validate)
from ansible_collections.gpucluster.core.tests.unit.plugins.plugin_utils.failures import message_of

DEBIAN12 = {"distribution": "Debian", "distribution_version": "12.8", "distribution_major_version": "12",
            "distribution_release": "bookworm", "os_family": "Debian", "architecture": "x86_64", "pkg_mgr": "apt"}
UBUNTU2204 = {"distribution": "Ubuntu", "distribution_version": "22.04", "distribution_major_version": "22",
              "distribution_release": "jammy", "os_family": "Debian", "architecture": "aarch64", "pkg_mgr": "apt"}
ROCKY9 = {"distribution": "Rocky", "distribution_version": "9.4", "distribution_major_version": "9",
          "distribution_release": "Blue Onyx", "os_family": "RedHat", "architecture": "x86_64", "pkg_mgr": "dnf"}
OS_DEBIAN12 = {"distribution": "Debian", "version": "12.8", "major_version": "12", "release": "bookworm",
               "os_family": "Debian", "architecture": "x86_64", "pkg_mgr": "apt"}
GATHERED = {"ansible_facts": {"distribution": "Debian"}}
UNREACHABLE = {"unreachable": True, "msg": "Failed to connect to the host via ssh: Connection refused"}
GPUS = {"gpu_count": 8, "pci": {"gpu_count": 8}}
NO_GPUS = {"gpu_count": 0, "pci": {"gpu_count": 0}}
PROBED = {"ansible_facts": {"nvidia": {}}}
SKIPPED = {"skipped": True}
ALL_ROLES = ["base_os", "nvidia_driver", "cuda", "ofed", "container_toolkit", "nfs", "monitoring", "slurm"]
CPU_ROLES = ["base_os", "ofed", "nfs", "monitoring"]


def plan_of(facts, setup=None, probe=None, gpu_node=None, groups=("cluster",)):
    return host_plan({"facts": facts, "setup": GATHERED if setup is None else setup,
                      "probe": SKIPPED if probe is None else probe, "gpu_node": gpu_node, "groups": list(groups)}, "n1")


# ----------------------------------------------------------------------------- host plan


@pytest.mark.parametrize("kwargs, gpu_node, gpu_from, roles", [
    pytest.param({"facts": dict(DEBIAN12, nvidia=GPUS), "probe": PROBED}, True, "hardware", CPU_ROLES[:1]
                 + ["nvidia_driver", "cuda", "ofed", "container_toolkit", "nfs", "monitoring"], id="gpus-read-now"),
    pytest.param({"facts": dict(DEBIAN12, nvidia={"gpu_count": 0, "pci": {"gpu_count": 2}}), "probe": PROBED},
                 True, "hardware", ["base_os", "nvidia_driver", "cuda", "ofed", "container_toolkit", "nfs", "monitoring"],
                 id="pci-devices-without-a-driver"),
    pytest.param({"facts": dict(DEBIAN12, nvidia=NO_GPUS), "probe": PROBED}, False, "hardware", CPU_ROLES,
                 id="cpu-node"),
    pytest.param({"facts": dict(DEBIAN12, nvidia=GPUS)}, True, "fact cache",
                 ["base_os", "nvidia_driver", "cuda", "ofed", "container_toolkit", "nfs", "monitoring"], id="gpus-from-the-cache"),
    pytest.param({"facts": dict(DEBIAN12, nvidia=GPUS), "gpu_node": False}, False, "gpucluster_gpu_node", CPU_ROLES,
                 id="inventory-decides-no"),
    pytest.param({"facts": dict(DEBIAN12), "gpu_node": True}, True, "gpucluster_gpu_node",
                 ["base_os", "nvidia_driver", "cuda", "ofed", "container_toolkit", "nfs", "monitoring"], id="inventory-decides-yes"),
    pytest.param({"facts": dict(DEBIAN12), "gpu_node": "false"}, False, "gpucluster_gpu_node", CPU_ROLES,
                 id="inventory-decides-as-text"),
    pytest.param({"facts": dict(DEBIAN12, nvidia=NO_GPUS), "groups": ["cluster", "gpucluster_gpu_nodes", "slurm_compute"]},
                 True, "inventory group gpucluster_gpu_nodes", ALL_ROLES, id="static-gpu-group"),
    pytest.param({"facts": dict(DEBIAN12), "groups": ["slurm_dbd"]}, False, "not in group cluster", ["slurm"],
                 id="slurm-only-host"),
    pytest.param({"facts": dict(DEBIAN12), "groups": ["other"]}, False, "not in group cluster", [],
                 id="in-no-site-group"),
    pytest.param({"facts": dict(DEBIAN12), "groups": ["k8s_control_plane"]}, False, "not in group cluster",
                 ["kubernetes", "gpu_operator", "training_operator"], id="kubernetes-control-plane-only"),
    pytest.param({"facts": dict(DEBIAN12, nvidia=GPUS), "probe": PROBED, "groups": ["cluster", "k8s_workers"]}, True,
                 "hardware", ["base_os", "nvidia_driver", "cuda", "ofed", "container_toolkit", "nfs", "monitoring",
                              "kubernetes", "gpu_operator", "training_operator"], id="kubernetes-gpu-worker"),
])
def test_gpu_node_and_roles_as_site_yml(kwargs, gpu_node, gpu_from, roles):
    plan = plan_of(**kwargs)
    assert (plan["gpu_node"], plan["gpu_node_from"], plan["roles"]) == (gpu_node, gpu_from, roles)
    assert plan["warnings"] == []


def test_gathered_os():
    assert plan_of(dict(DEBIAN12)) == {
        "host": "n1", "os": OS_DEBIAN12, "os_from": "gathered", "reason": None, "gpu_node": True,
        "gpu_node_from": "assumed", "roles": ["base_os", "nvidia_driver", "cuda", "ofed", "container_toolkit", "nfs", "monitoring"],
        "warnings": ["host 'n1': GPU hardware unknown (not read in this run and not in the fact cache): listed as a "
                     "GPU node so that the list is complete (gpucluster_gpu_node decides instead)"]}


def test_unreachable_host_from_the_fact_cache():
    plan = plan_of(dict(UBUNTU2204, nvidia=NO_GPUS), setup=UNREACHABLE, groups=["cluster", "slurm_compute"])
    assert plan == {
        "host": "n1", "os": {"distribution": "Ubuntu", "version": "22.04", "major_version": "22", "release": "jammy",
                             "os_family": "Debian", "architecture": "aarch64", "pkg_mgr": "apt"},
        "os_from": "fact cache", "reason": "not reachable: Failed to connect to the host via ssh: Connection refused",
        "gpu_node": False, "gpu_node_from": "fact cache", "roles": ["base_os", "ofed", "nfs", "monitoring", "slurm"],
        "warnings": ["host 'n1': not reachable in this run: its OS (Ubuntu 22.04 (jammy)) comes from the fact cache"]}


@pytest.mark.parametrize("facts, setup, warning", [
    ({}, UNREACHABLE,
     "host 'n1': unknown OS (not reachable in this run and not in the fact cache): nothing is listed for it"),
    ({"distribution": "Debian", "architecture": "x86_64"}, {"failed": True, "msg": "python not found"},
     "host 'n1': unknown OS (not reachable in this run, and the fact cache lacks distribution_version, "
     "distribution_major_version, distribution_release, os_family, pkg_mgr): nothing is listed for it"),
    (dict(DEBIAN12, distribution_release=""), GATHERED,
     "host 'n1': unknown OS (the gathered facts lack distribution_release): nothing is listed for it"),
])
def test_unknown_os_lists_nothing(facts, setup, warning):
    plan = plan_of(facts, setup=setup, gpu_node=True)
    assert (plan["os"], plan["os_from"], plan["roles"], plan["warnings"]) == (None, "unknown", [], [warning])


def test_the_reason_says_why_the_facts_were_not_gathered():
    assert plan_of({}, setup={"failed": True, "msg": " no python "})["reason"] == \
        "the fact gathering failed: no python"
    assert plan_of({}, setup=GATHERED)["reason"] is None


@pytest.mark.parametrize("data, message", [
    ("facts", "artifacts_host_plan: the input must be a mapping and the host a name"),
    ({"facts": ["x"]}, "artifacts_host_plan: facts, setup and probe must be mappings (host 'n1')"),
    ({"facts": DEBIAN12, "gpu_node": "maybe", "groups": ["cluster"]},
     "artifacts_host_plan: gpucluster_gpu_node must be true or false (got 'maybe')"),
])
def test_host_plan_refuses_bad_input(data, message):
    assert message_of(ArtifactsError, host_plan, data, "n1") == message


# ----------------------------------------------------------------------------- document

CUDA_REPO = {"name": "cuda", "description": "NVIDIA CUDA", "url": "https://mirror/cuda/debian12/x86_64/",
             "key_url": "https://mirror/cuda/debian12/x86_64/3bf863cc.pub"}


def plan(host, os_facts=None, roles=("base_os",), warnings=()):
    return {"host": host, "os": OS_DEBIAN12 if os_facts is None else os_facts, "os_from": "gathered", "reason": None, "gpu_node": "cuda" in roles,
            "gpu_node_from": "hardware", "roles": list(roles), "warnings": list(warnings)}


def cuda_record(version="12.4.1-1", **extra):
    record = {"role": "cuda", "supported": True,
              "repositories": [dict(CUDA_REPO, packages=[{"name": "cuda-toolkit-12-4", "version": version},
                                                         {"name": "libnccl2", "version": ""}],
                                    pins=[{"name": "cuda-toolkit-12-4", "version": version}] if version else [])]}
    record.update(extra)
    return record


BASE = {"role": "base_os", "supported": True, "distribution_packages": ["chrony", "rsync"]}
COMMON_APT = {"role": "common", "only_with_repositories": True, "distribution_packages": ["python3-debian"]}


def hostvars_of(**hosts):
    return {name: {"__artifacts_plan": host_plan_, **records} for name, (host_plan_, records) in hosts.items()}


def test_document_merges_and_deduplicates_across_hosts():
    hostvars = hostvars_of(
        gpu1=(plan("gpu1", roles=["base_os", "cuda"]),
              {"__base_os_artifacts": BASE, "__cuda_artifacts": cuda_record(), "__common_artifacts": COMMON_APT}),
        gpu2=(plan("gpu2", roles=["base_os", "cuda"]),
              {"__base_os_artifacts": BASE, "__cuda_artifacts": cuda_record(), "__common_artifacts": COMMON_APT}),
        cpu1=(plan("cpu1"), {"__base_os_artifacts": dict(BASE, distribution_packages=["chrony", "numactl"]),
                             "__common_artifacts": COMMON_APT}),
    )
    result = document(hostvars, ["gpu1", "gpu2", "cpu1"], ["gpu1", "gpu2", "cpu1"])
    assert result["format"] == "gpucluster.core.artifacts/1"
    assert [h["host"] for h in result["hosts"]] == ["gpu1", "gpu2", "cpu1"]
    assert result["hosts"][2] == {"host": "cpu1", "os": OS_DEBIAN12, "os_from": "gathered", "reason": None,
                                  "gpu_node": False, "gpu_node_from": "hardware", "roles": ["base_os"], "listed": True}
    assert result["repositories"] == [{
        "name": "cuda", "type": "apt", "url": "https://mirror/cuda/debian12/x86_64/", "suites": ["/"], "components": [],
        "key_url": "https://mirror/cuda/debian12/x86_64/3bf863cc.pub", "architectures": ["amd64"],
        "roles": ["cuda"], "hosts": ["gpu1", "gpu2"],
        "packages": [{"name": "cuda-toolkit-12-4", "version": "12.4.1-1", "roles": ["cuda"], "hosts": ["gpu1", "gpu2"]},
                     {"name": "libnccl2", "version": "newest", "roles": ["cuda"], "hosts": ["gpu1", "gpu2"]}],
        "pins": [{"name": "cuda-toolkit-12-4", "version": "12.4.1-1", "roles": ["cuda"], "hosts": ["gpu1", "gpu2"]}]}]
    # python3-debian only where a role adds a repository.
    assert result["distribution_packages"] == [{
        "os": "Debian 12 (bookworm)", "distribution": "Debian", "major_version": "12", "release": "bookworm",
        "architectures": ["x86_64"], "hosts": ["gpu1", "gpu2", "cpu1"],
        "packages": [{"name": "chrony", "version": None, "roles": ["base_os"], "hosts": ["gpu1", "gpu2", "cpu1"]},
                     {"name": "rsync", "version": None, "roles": ["base_os"], "hosts": ["gpu1", "gpu2"]},
                     {"name": "python3-debian", "version": None, "roles": ["common"], "hosts": ["gpu1", "gpu2"]},
                     {"name": "numactl", "version": None, "roles": ["base_os"], "hosts": ["cpu1"]}]}]
    assert (result["files"], result["images"], result["charts"], result["manifests"], result["warnings"]) == (
        [], [], [], [], [])


def test_two_roles_writing_one_source_share_its_entry():
    driver = {"role": "nvidia_driver", "supported": True,
              "repositories": [dict(CUDA_REPO, packages=[{"name": "cuda-drivers-550", "version": "550.54.15-1"}],
                                    pins=[{"name": "nvidia-driver*", "version": "550.54.15-1"}])]}
    hostvars = hostvars_of(gpu1=(plan("gpu1", roles=["nvidia_driver", "cuda"]),
                                 {"__nvidia_driver_artifacts": driver, "__cuda_artifacts": cuda_record()}))
    [repo] = document(hostvars, ["gpu1"], ["gpu1"])["repositories"]
    assert repo["roles"] == ["nvidia_driver", "cuda"]
    assert [(p["name"], p["version"], p["roles"]) for p in repo["packages"]] == [
        ("cuda-drivers-550", "550.54.15-1", ["nvidia_driver"]), ("cuda-toolkit-12-4", "12.4.1-1", ["cuda"]),
        ("libnccl2", "newest", ["cuda"])]
    assert [(p["name"], p["version"]) for p in repo["pins"]] == [
        ("nvidia-driver*", "550.54.15-1"), ("cuda-toolkit-12-4", "12.4.1-1")]


def test_repositories_differ_by_url_suite_and_type():
    docker = {"name": "docker", "url": "https://download.docker.com/linux/debian", "key_url": "https://k/gpg",
              "components": ["stable"], "packages": [{"name": "docker-ce", "version": ""}]}
    trixie = dict(OS_DEBIAN12, version="13.1", major_version="13", release="trixie")
    rocky = {"distribution": "Rocky", "version": "9.4", "major_version": "9", "release": "Blue Onyx",
             "os_family": "RedHat", "architecture": "x86_64", "pkg_mgr": "dnf"}

    def record(suite):
        return {"role": "container_toolkit", "repositories": [dict(docker, suites=[suite])]}

    hostvars = hostvars_of(
        a=(plan("a", roles=["container_toolkit"]), {"__container_toolkit_artifacts": record("bookworm")}),
        b=(plan("b", os_facts=trixie, roles=["container_toolkit"]), {"__container_toolkit_artifacts": record("trixie")}),
        c=(plan("c", os_facts=rocky, roles=["container_toolkit"]), {"__container_toolkit_artifacts": record("9")}),
    )
    repos = document(hostvars, ["a", "b", "c"], ["a", "b", "c"])["repositories"]
    assert [(r["type"], r["suites"], r["components"], r["architectures"], r["hosts"]) for r in repos] == [
        ("apt", ["bookworm"], ["stable"], ["amd64"], ["a"]),
        ("apt", ["trixie"], ["stable"], ["amd64"], ["b"]),
        ("dnf", [], [], ["x86_64"], ["c"])]


def test_files_images_charts_manifests_and_warnings():
    record = {"role": "cuda", "supported": False,
              "repositories": [{"name": "cuda", "url": "", "key_url": "", "packages": [{"name": "libnccl2"}]}],
              "files": [{"url": "https://m/cudnn.tar.xz", "checksum": "sha256:ab"}, {"url": "https://m/x.tgz"}],
              "images": ["nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04"],
              "charts": [{"repository": "https://helm.ngc.nvidia.com/nvidia", "name": "gpu-operator", "version": "v24.9.0"}],
              "manifests": [{"url": "https://m/runtimeclass.yaml", "checksum": "sha256:cd"}],
              "warnings": ["GPU hardware unknown"]}
    hostvars = hostvars_of(gpu1=(plan("gpu1", roles=["cuda"], warnings=["host 'gpu1': from the plan"]),
                                 {"__cuda_artifacts": record}))
    result = document(hostvars, ["gpu1"], ["gpu1"])
    assert result["repositories"][0]["url"] is None
    assert result["files"] == [
        {"url": "https://m/cudnn.tar.xz", "checksum": "sha256:ab", "roles": ["cuda"], "hosts": ["gpu1"]},
        {"url": "https://m/x.tgz", "checksum": None, "roles": ["cuda"], "hosts": ["gpu1"]}]
    assert result["images"] == [{"name": "nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04", "roles": ["cuda"], "hosts": ["gpu1"]}]
    assert result["charts"] == [{"repository": "https://helm.ngc.nvidia.com/nvidia", "name": "gpu-operator",
                                 "version": "v24.9.0", "roles": ["cuda"], "hosts": ["gpu1"]}]
    assert result["manifests"] == [{"url": "https://m/runtimeclass.yaml", "checksum": "sha256:cd", "roles": ["cuda"],
                                    "hosts": ["gpu1"]}]
    assert result["warnings"] == [
        "host 'gpu1': from the plan",
        "host 'gpu1': cuda does not support Debian 12.8 (its preflight stops there): listed as it would install",
        "host 'gpu1': cuda: GPU hardware unknown",
        "host 'gpu1': cuda installs libnccl2 from the repository cuda, which the role does not add (its URL is not "
        "known here)",
        "host 'gpu1': cuda downloads https://m/x.tgz without a checksum (the role has no checksum variable for it)"]


def test_flags_given_as_text():
    record = {"role": "base_os", "supported": "False", "distribution_packages": ["chrony"]}
    common = dict(COMMON_APT, only_with_repositories="True")
    hostvars = hostvars_of(n1=(plan("n1"), {"__base_os_artifacts": record, "__common_artifacts": common}))
    result = document(hostvars, ["n1"], ["n1"])
    assert result["warnings"] == ["host 'n1': base_os does not support Debian 12.8 (its preflight stops there): "
                                  "listed as it would install"]
    assert [p["name"] for p in result["distribution_packages"][0]["packages"]] == ["chrony"]


def test_hosts_that_failed_or_are_unknown_contribute_nothing():
    unknown = dict(plan("gone"), os=None, os_from="unknown", roles=[],
                   warnings=["host 'gone': unknown OS (not reachable in this run and not in the fact cache): "
                             "nothing is listed for it"])
    hostvars = hostvars_of(ok=(plan("ok"), {"__base_os_artifacts": BASE}),
                           broken=(plan("broken", roles=["base_os", "cuda"]), {"__base_os_artifacts": BASE}),
                           gone=(unknown, {}))
    hostvars["early"] = {}
    result = document(hostvars, ["ok", "broken", "gone", "early"], ["ok", "gone"])
    assert [(h["host"], h["listed"]) for h in result["hosts"]] == [
        ("ok", True), ("broken", False), ("gone", False), ("early", False)]
    assert result["distribution_packages"][0]["hosts"] == ["ok"]
    assert result["warnings"] == [
        "host 'broken': the listing failed on this host (the error is above): its artifacts are missing from the list",
        "host 'gone': unknown OS (not reachable in this run and not in the fact cache): nothing is listed for it",
        "host 'early': the listing stopped before its OS was read (the error is above): nothing is listed for it"]


@pytest.mark.parametrize("records, message", [
    ({}, "artifacts_document: host 'gpu1': role cuda runs there but listed nothing (__cuda_artifacts is not set)"),
    ({"__cuda_artifacts": "x"}, "artifacts_document: host 'gpu1', role cuda: the record must be a mapping (got 'x')"),
    ({"__cuda_artifacts": {"role": "nfs"}}, "artifacts_document: host 'gpu1', role cuda: the record names role 'nfs'"),
    ({"__cuda_artifacts": {"role": "cuda", "repos": []}},
     "artifacts_document: host 'gpu1', role cuda: unknown key repos (allowed: charts, distribution_packages, files, "
     "images, manifests, only_with_repositories, repositories, role, supported, warnings)"),
    ({"__cuda_artifacts": {"role": "cuda", "repositories": [{"name": "cuda", "key_url": "k"}]}},
     "artifacts_document: host 'gpu1', role cuda: repositories[0].url must be a string (got None)"),
    ({"__cuda_artifacts": {"role": "cuda", "repositories": [dict(CUDA_REPO, suites="/")]}},
     "artifacts_document: host 'gpu1', role cuda: repositories[0].suites must be a list of non-empty strings "
     "(got '/')"),
    ({"__cuda_artifacts": {"role": "cuda", "repositories": [dict(CUDA_REPO, packages=["libnccl2"])]}},
     "artifacts_document: host 'gpu1', role cuda: repositories[0].packages[0] must be a mapping with name and "
     "version (got 'libnccl2')"),
    ({"__cuda_artifacts": {"role": "cuda", "repositories": [dict(CUDA_REPO, pins=[{"name": "x", "version": ""}])]}},
     "artifacts_document: host 'gpu1', role cuda: repositories[0].pins[0].version must be a non-empty string "
     "(got '')"),
    ({"__cuda_artifacts": {"role": "cuda", "files": [{"checksum": "sha256:ab"}]}},
     "artifacts_document: host 'gpu1', role cuda: files[0].url must be a non-empty string (got None)"),
    ({"__cuda_artifacts": {"role": "cuda", "distribution_packages": ["tar", ""]}},
     "artifacts_document: host 'gpu1', role cuda: distribution_packages must be a list of non-empty strings "
     "(got ['tar', ''])"),
    ({"__cuda_artifacts": {"role": "cuda", "charts": [{"name": "gpu-operator", "version": "1"}]}},
     "artifacts_document: host 'gpu1', role cuda: charts[0].repository must be a non-empty string (got None)"),
])
def test_document_refuses_a_bad_record(records, message):
    hostvars = hostvars_of(gpu1=(plan("gpu1", roles=["cuda"]), records))
    assert message_of(ArtifactsError, document, hostvars, ["gpu1"], ["gpu1"]) == message


def test_document_refuses_a_plan_with_an_unknown_role_and_a_string_host_list():
    hostvars = hostvars_of(gpu1=(plan("gpu1", roles=["slurm_exporter"]), {}))
    assert message_of(ArtifactsError, document, hostvars, ["gpu1"], ["gpu1"]) == "artifacts_document: host 'gpu1': unknown role 'slurm_exporter' in its plan"
    assert message_of(ArtifactsError, document, hostvars, "gpu1", ["gpu1"]) == "artifacts_document: hosts and live must be lists of host names"


# ----------------------------------------------------------------------------- validation


def good_document():
    hostvars = hostvars_of(gpu1=(plan("gpu1", roles=["base_os", "cuda"]),
                                 {"__base_os_artifacts": BASE, "__cuda_artifacts": cuda_record()}))
    return document(hostvars, ["gpu1"], ["gpu1"])


def changed(change):
    doc = copy.deepcopy(good_document())
    change(doc)
    return doc


@pytest.mark.parametrize("doc, message", [
    ([], "artifacts: the document is not valid: the document must be a mapping"),
    ({"format": "gpucluster.core.artifacts/1"}, "artifacts: the document is not valid: missing hosts, repositories, "
     "files, images, charts, manifests, distribution_packages, warnings"),
    (changed(lambda d: d.update(format="x/2", files={})),
     "artifacts: the document is not valid: format: must be gpucluster.core.artifacts/1 (got 'x/2'); files: must be a list"),
    (changed(lambda d: d["repositories"][0].update(type="yum", hosts=[])),
     "artifacts: the document is not valid: repositories[0].type: must be apt or dnf (got 'yum'); "
     "repositories[0].hosts: must be a non-empty list of names"),
    (changed(lambda d: d["repositories"][0].update(suites=[], url="")),
     "artifacts: the document is not valid: repositories[0].url: must be a non-empty string or null"),
    (changed(lambda d: d["repositories"][0].update(suites=[])),
     "artifacts: the document is not valid: repositories[0].suites: an apt repository needs its suites"),
    (changed(lambda d: d["repositories"][0]["packages"].append(dict(d["repositories"][0]["packages"][0]))),
     "artifacts: the document is not valid: repositories[0].packages[2]: cuda-toolkit-12-4 12.4.1-1 is listed twice"),
    (changed(lambda d: d["repositories"][0]["packages"][1].update(version="")),
     "artifacts: the document is not valid: repositories[0].packages[1].version: must be a non-empty string"),
    (changed(lambda d: d["files"].append({"url": "https://m/x", "checksum": "abc", "roles": ["cuda"], "hosts": ["gpu1"]})),
     "artifacts: the document is not valid: files[0].checksum: must be ALGORITHM:HEX or null (got 'abc')"),
    (changed(lambda d: d["distribution_packages"][0]["packages"][0].update(version="1.0")),
     "artifacts: the document is not valid: distribution_packages[0].packages[0].version: must be null (the OS's own "
     "version)"),
    (changed(lambda d: d["images"].append({"name": "x", "roles": [], "hosts": ["gpu1"]})),
     "artifacts: the document is not valid: images[0].roles: must be a non-empty list of names"),
    (changed(lambda d: d["warnings"].append("")),
     "artifacts: the document is not valid: warnings[0]: must be a non-empty string"),
])
def test_validate_names_every_problem(doc, message):
    assert message_of(ArtifactsError, validate, doc) == message


def test_a_merged_document_is_valid():
    validate(good_document())


# ----------------------------------------------------------------------------- table


def test_table():
    unknown = dict(plan("gone"), os=None, os_from="unknown", roles=[],
                   warnings=["host 'gone': unknown OS (not reachable in this run and not in the fact cache): "
                             "nothing is listed for it"])
    hostvars = hostvars_of(
        gpu1=(plan("gpu1", roles=["base_os", "cuda"]), {"__base_os_artifacts": BASE, "__cuda_artifacts": cuda_record(
            files=[{"url": "https://m/cudnn.tar.xz", "checksum": "sha256:ab"}])}),
        gpu2=(dict(plan("gpu2", roles=["base_os", "cuda"]), os_from="fact cache"),
              {"__base_os_artifacts": BASE, "__cuda_artifacts": cuda_record()}),
        cpu1=(dict(plan("cpu1"), gpu_node=False), {"__base_os_artifacts": BASE}),
        gone=(unknown, {}))
    doc = document(hostvars, ["gpu1", "gpu2", "cpu1", "gone"], ["gpu1", "gpu2", "cpu1", "gone"])
    assert table(doc, "/srv/a.json") == "\n".join([
        "gpucluster.core artifacts: 3 of 4 hosts listed (JSON: /srv/a.json)",
        "hosts:",
        "  gpu1  Debian 12.8 x86_64, gathered, GPU node (hardware): base_os, cuda",
        "  gpu2  Debian 12.8 x86_64, fact cache, GPU node (hardware): base_os, cuda",
        "  cpu1  Debian 12.8 x86_64, gathered, no GPU roles: base_os",
        "  gone  unknown OS",
        "repositories:",
        "  apt cuda: https://mirror/cuda/debian12/x86_64/ / (key https://mirror/cuda/debian12/x86_64/3bf863cc.pub) "
        "for gpu1, gpu2",
        "    cuda-toolkit-12-4 12.4.1-1",
        "    libnccl2 newest",
        "files:",
        "  https://m/cudnn.tar.xz (checksum sha256:ab) for gpu1",
        "images: none",
        "charts: none",
        "manifests: none",
        "distribution packages:",
        "  Debian 12 (bookworm): chrony rsync",
        "warnings:",
        "  host 'gone': unknown OS (not reachable in this run and not in the fact cache): nothing is listed for it",
    ])
    assert table(doc).splitlines()[0] == "gpucluster.core artifacts: 3 of 4 hosts listed"


def test_table_says_all_hosts_and_none():
    hostvars = hostvars_of(a=(plan("a", roles=["cuda"]), {"__cuda_artifacts": cuda_record()}),
                           b=(plan("b", roles=["cuda"]), {"__cuda_artifacts": cuda_record()}))
    text = table(document(hostvars, ["a", "b"], ["a", "b"]))
    assert "/3bf863cc.pub) for all 2 hosts\n" in text
    assert "\ndistribution packages: none" in text
    assert "warnings" not in text
