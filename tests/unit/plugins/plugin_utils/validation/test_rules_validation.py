# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""validation_errors and node_settings: the validation role's input rules, as tables of good and
bad data with exact messages."""

from __future__ import annotations

import pytest

from ansible_collections.gpucluster.core.plugins.module_utils._health import CHECKS
from ansible_collections.gpucluster.core.plugins.plugin_utils.validation._rules import (
    CHECK_FAMILIES,
    node_settings,
    validation_errors,
)
from ansible_collections.gpucluster.core.tests.unit.plugins.plugin_utils import role_specs

# The role's defaults (roles/validation/defaults/main.yml), with the templated results dir resolved.
PLAY = {
    "validation_checks": ["passive", "active"],
    "validation_policy": "drain",
    "validation_reason_prefix": "gpucluster-validation:",
    "validation_results_dir": "/srv/ansible/validation-results",
    "validation_baseline_tolerance": 0.1,
    "validation_drain_budget_fraction": 0.1,
    "validation_drain_budget_min_nodes": 2,
    "validation_job_timeout": 600,
    "validation_ddp_nodes": 2,
    "validation_ddp_steps": 50,
    "validation_ddp_port": 29500,
    "validation_ddp_venv": "/opt/gpucluster/ddp",
    "validation_nccl_tests_dir": "",
    "validation_recorded_outputs": {},
    "validation_nccl_inter_fraction": 0.9,
    "validation_nccl_intra_fraction": 0.7,
    "validation_ib_bw_fraction": 0.9,
}
HOST = {
    "validation_gpu_count": 0,
    "validation_gpu_model": "",
    "validation_driver_version": "",
    "validation_cuda_version": "",
    "validation_hca": {},
    "validation_mounts": "auto",
    "validation_services": "auto",
    "validation_container_runtime": "docker",
    "validation_xid_codes": [48, 63, 64, 74, 79, 94, 95, 119, 120],
    "validation_kernel_log_minutes": 60,
    "validation_severity": {},
    "validation_nvidia_smi_path": "nvidia-smi",
    "validation_ibstat_path": "",
    "validation_cuda_home": "/usr/local/cuda",
    "validation_time_max_offset": 0.5,
    "validation_time_fail_offset": 60,
    "validation_disk_space_paths": ["/var", "/tmp", "/var/lib/slurm"],
    "validation_disk_space_min_free_percent": 5,
    "validation_disk_space_min_free_mib": 0,
    "validation_healthcheck_confirm_runs": 2,
    "validation_healthcheck_flapping_window": 10,
    "validation_healthcheck_flapping_threshold": 3,
    "validation_healthcheck_state_file": "/var/lib/gpucluster/healthcheck-state.json",
}
H = "host 'gpu1': "


def errors(play=None, host=None, per_host=None):
    hosts = per_host if per_host is not None else {"gpu1": dict(HOST, **(host or {}))}
    return validation_errors(hosts, dict(PLAY, **(play or {})))


def test_names():
    assert CHECK_FAMILIES == ("passive", "active")
    # The values here are options of the role's argument spec, which the rules get per host.
    assert set(PLAY) | set(HOST) <= set(role_specs.options("validation"))


@pytest.mark.parametrize("play, host", [
    ({}, {}),
    ({"validation_checks": ["passive"], "validation_policy": "report"}, {}),
    ({"validation_checks": ["active"], "validation_policy": "drain-and-stop"}, {}),
    ({"validation_reason_prefix": "validation"}, {}),
    ({"validation_healthcheck_reason_prefix": "gpucluster-validation:"}, {}),
    ({"validation_baseline_tolerance": 0, "validation_ib_bw_fraction": 1, "validation_nccl_inter_fraction": 0.05}, {}),
    ({"validation_drain_budget_fraction": 0, "validation_drain_budget_min_nodes": 0}, {}),
    ({"validation_drain_budget_fraction": 1, "validation_drain_budget_min_nodes": 100000}, {}),
    ({"validation_ddp_nodes": 1024, "validation_ddp_steps": 10, "validation_ddp_port": 1024,
      "validation_job_timeout": 86400}, {}),
    ({"validation_nccl_tests_dir": "/opt/nccl-tests/build"}, {}),
    ({"validation_gpu_container_image": ""}, {}),
    ({"validation_gpu_container_image": "nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04"}, {}),
    ({"validation_gpu_container_image": "registry.lab:5000/team/cuda-base@sha256:" + "0" * 64}, {}),
    ({"validation_gpu_container_image": "ubuntu"}, {}),
    ({"validation_perftest_path": "/usr/bin/ib_write_bw"}, {}),
    ({"validation_kubernetes_gpu_pod": False, "validation_kubernetes_namespace": "ops",
      "validation_kubernetes_runtime_class": "", "validation_kubernetes_gpu_resource": "nvidia.com/mig-1g.10gb"}, {}),
    ({"validation_kubernetes_runtime_class": "nvidia-cdi.example.com", "validation_kubernetes_gpu_resource": "amd.com/gpu"}, {}),
    ({"validation_kubernetes_ddp": False, "validation_kubernetes_ddp_image": "registry.lab:5000/nvidia/pytorch:24.08-py3"}, {}),
    ({"validation_nccl_tests_source": "file:///srv/mirror/nccl-tests-2.17.6.tar.gz", "validation_nccl_tests_dir": "/opt/nt",
      "validation_nccl_tests_checksum": "sha256:" + "0" * 64, "validation_nccl_tests_mpi": False,
      "validation_perftest_package": ""}, {}),
    ({"validation_recorded_outputs": {"nccl_all_reduce": "/srv/validation/nccl-all_reduce_perf.txt",
                                      "ib_write_bw": "/srv/validation/ib_write_bw.txt"}}, {}),
    ({}, {"validation_gpu_count": 8, "validation_gpu_model": "NVIDIA H100 80GB HBM3",
          "validation_driver_version": "580.159.04", "validation_cuda_version": "13.0"}),
    ({}, {"validation_gpu_count": 64, "validation_driver_version": "1:580.159.04-0ubuntu1"}),
    ({}, {"validation_driver_version": 580}),  # a branch, as an int
    ({}, {"validation_hca": {"rate_gbps": 400, "link_layers": ["InfiniBand"], "ignore": ["mlx5_1", "mlx5_2:1"],
                             "count": 8, "source": "NDR rails"}}),
    ({}, {"validation_hca": {"rate_gbps": 0, "link_layers": ["Ethernet", "InfiniBand"]}}),
    ({}, {"validation_hca": {"rate_gbps": 3200}}),
    ({}, {"validation_hca": {"rate_gbps": 2.5, "count": 0}}),
    ({}, {"validation_hca": None}),
    ({}, {"validation_mounts": []}),
    ({}, {"validation_mounts": [{"path": "/nfs", "fstype": "nfs4"}, {"path": "/data/shared"}]}),
    ({}, {"validation_services": []}),
    ({}, {"validation_services": ["munge", "slurmd", "docker.service", "nvidia-persistenced", "user@1000.service"]}),
    ({}, {"validation_xid_codes": []}),
    ({}, {"validation_xid_codes": None}),
    ({}, {"validation_xid_codes": [1, 1023]}),
    ({}, {"validation_severity": {"persistence_mode": "fail", "clock_events": "skip", "pcie_link": "warn"}}),
    ({}, {"validation_severity": None}),
    ({}, {"validation_nvidia_smi_path": "/usr/bin/nvidia-smi", "validation_ibstat_path": "/usr/sbin/ibstat"}),
    # run as an argument vector, never through a shell: a ';' is only part of a file name
    ({}, {"validation_ibstat_path": "ibstat;reboot"}),
    ({}, {"validation_cuda_home": "/usr/local/cuda-12.8", "validation_kernel_log_minutes": 10080}),
    ({}, {"validation_kernel_log_minutes": 1}),
    ({}, {"validation_time_max_offset": 0, "validation_disk_space_paths": []}),
    ({}, {"validation_time_max_offset": 3600, "validation_time_fail_offset": 86400}),
    ({}, {"validation_time_max_offset": 5, "validation_time_fail_offset": 5.0}),
    ({}, {"validation_disk_space_paths": ["/", "/var/spool/slurmd"], "validation_disk_space_min_free_percent": 0,
          "validation_disk_space_min_free_mib": 1 << 30}),
    ({}, {"validation_disk_space_min_free_percent": 99.5}),
    ({"validation_healthcheck_metrics_dir": ""}, {}),
    ({"validation_healthcheck_metrics_dir": "/var/lib/node_exporter/textfile_collector"}, {}),
    ({}, {"validation_healthcheck_confirm_runs": 1, "validation_healthcheck_flapping_window": 3,
          "validation_healthcheck_flapping_threshold": 2, "validation_healthcheck_state_file": "/run/gpucluster/hc.json"}),
    ({}, {"validation_healthcheck_confirm_runs": 10, "validation_healthcheck_flapping_window": 100,
          "validation_healthcheck_flapping_threshold": 50}),
    # Paths make hands to the shell: plain ones pass; without a build from source, cuda_home is only read by Python.
    ({"validation_nccl_tests_source": "file:///srv/mirror/nccl-tests-2.17.6.tar.gz",
      "validation_nccl_tests_dir": "/opt/gpucluster/nccl-tests_2.17.6+cuda12.8@mpi",
      "validation_nccl_tests_checksum": "sha256:" + "0" * 64}, {"validation_cuda_home": "/usr/local/cuda-12.8"}),
    ({}, {"validation_cuda_home": "/opt/cuda$(ARCH)"}),
], ids=str)
def test_good_input(play, host):
    assert errors(play, host) == []


def test_no_host():
    assert validation_errors({}, PLAY) == []


@pytest.mark.parametrize("play, messages", [
    ({"validation_checks": []}, ["validation_checks: must be a non-empty list of passive, active (got [])"]),
    ({"validation_checks": "passive"}, ["validation_checks: must be a non-empty list of passive, active (got 'passive')"]),
    ({"validation_checks": ["passive", "burn-in"]},
     ["validation_checks: must be a non-empty list of passive, active (got ['passive', 'burn-in'])"]),
    ({"validation_policy": "drain-all"},
     ["validation_policy: must be one of report, drain, drain-and-stop (got 'drain-all')"]),
    ({"validation_policy": None}, ["validation_policy: must be one of report, drain, drain-and-stop (got None)"]),
    ({"validation_healthcheck_reason_prefix": "bad 'prefix'"},
     ["validation_healthcheck_reason_prefix: must be one line of text without quotes or backslashes, as Slurm keeps it in "
      "the node's reason (got \"bad 'prefix'\")"]),
    ({"validation_reason_prefix": ""},
     ["validation_reason_prefix: must be one line of text without quotes or backslashes, as Slurm keeps it in the "
      "node's reason (got '')"]),
    ({"validation_reason_prefix": "   "},
     ["validation_reason_prefix: must be one line of text without quotes or backslashes, as Slurm keeps it in the "
      "node's reason (got '   ')"]),
    ({"validation_reason_prefix": "gpucluster\nvalidation"},
     ["validation_reason_prefix: must be one line of text without quotes or backslashes, as Slurm keeps it in the "
      "node's reason (got 'gpucluster\\nvalidation')"]),
    ({"validation_reason_prefix": "the \"validation\""},
     ["validation_reason_prefix: must be one line of text without quotes or backslashes, as Slurm keeps it in the "
      "node's reason (got 'the \"validation\"')"]),
    ({"validation_reason_prefix": "it's"},
     ["validation_reason_prefix: must be one line of text without quotes or backslashes, as Slurm keeps it in the "
      "node's reason (got \"it's\")"]),
    ({"validation_reason_prefix": 7},
     ["validation_reason_prefix: must be one line of text without quotes or backslashes, as Slurm keeps it in the "
      "node's reason (got 7)"]),
    ({"validation_results_dir": "validation-results"},
     ["validation_results_dir: must be an absolute path (got 'validation-results')"]),
    ({"validation_results_dir": "/srv/ansible/validation-results/"},
     ["validation_results_dir: must have no trailing slash and no empty, . or .. parts "
      "(got '/srv/ansible/validation-results/')"]),
    ({"validation_nccl_inter_fraction": 0}, ["validation_nccl_inter_fraction: must be a number in (0, 1] (got 0)"]),
    ({"validation_nccl_intra_fraction": 1.5}, ["validation_nccl_intra_fraction: must be a number in (0, 1] (got 1.5)"]),
    ({"validation_ib_bw_fraction": "0.9"}, ["validation_ib_bw_fraction: must be a number in (0, 1] (got '0.9')"]),
    ({"validation_ib_bw_fraction": True}, ["validation_ib_bw_fraction: must be a number in (0, 1] (got True)"]),
    ({"validation_baseline_tolerance": -0.1},
     ["validation_baseline_tolerance: must be a number in [0, 1] (got -0.1)"]),
    ({"validation_baseline_tolerance": None},
     ["validation_baseline_tolerance: must be a number in [0, 1] (got None)"]),
    ({"validation_drain_budget_fraction": 1.1},
     ["validation_drain_budget_fraction: must be a number in [0, 1] (got 1.1)"]),
    ({"validation_drain_budget_fraction": "10%"},
     ["validation_drain_budget_fraction: must be a number in [0, 1] (got '10%')"]),
    ({"validation_drain_budget_min_nodes": -1},
     ["validation_drain_budget_min_nodes: must be within 0-100000 (got -1)"]),
    ({"validation_drain_budget_min_nodes": 1.5},
     ["validation_drain_budget_min_nodes: must be an integer (got 1.5)"]),
    ({"validation_ddp_nodes": 1}, ["validation_ddp_nodes: must be within 2-1024 (got 1)"]),
    ({"validation_ddp_steps": 9}, ["validation_ddp_steps: must be within 10-100000 (got 9)"]),
    ({"validation_ddp_port": 80}, ["validation_ddp_port: must be within 1024-65535 (got 80)"]),
    ({"validation_ddp_port": "29500"}, ["validation_ddp_port: must be an integer (got '29500')"]),
    ({"validation_job_timeout": 29}, ["validation_job_timeout: must be within 30-86400 (got 29)"]),
    ({"validation_dcgm_diag_level": 5}, ["validation_dcgm_diag_level: must be within 0-4 (got 5)"]),
    ({"validation_dcgmi_path": "/opt/dcgm/bin/dcgmi -v"},
     ["validation_dcgmi_path: must be one word without blanks, quotes, #, \\, comma or = (got '/opt/dcgm/bin/dcgmi -v')"]),
    ({"validation_ddp_venv": "~/ddp"}, ["validation_ddp_venv: must be an absolute path (got '~/ddp')"]),
    ({"validation_ddp_pip_env": ["PIP_NO_INDEX=1"]},
     ["validation_ddp_pip_env: must map PIP_* variables to values (got ['PIP_NO_INDEX=1'])"]),
    ({"validation_ddp_pip_env": {"NO_INDEX": "1", "PIP_FIND_LINKS": "http://mirror/wheels\n"}},
     ["validation_ddp_pip_env: 'NO_INDEX' is not a PIP_* variable name",
      "validation_ddp_pip_env.PIP_FIND_LINKS: must be text on one line (got 'http://mirror/wheels\\n')"]),
    ({"validation_kubernetes_client_pip_env": {"PIP_NO_INDEX": "1", "FIND_LINKS": "http://mirror/wheels/"}},
     ["validation_kubernetes_client_pip_env: 'FIND_LINKS' is not a PIP_* variable name"]),
    ({"validation_nccl_tests_dir": "nccl-tests/build"},
     ["validation_nccl_tests_dir: must be an absolute path (got 'nccl-tests/build')"]),
    ({"validation_perftest_path": "ib_write_bw"},
     ["validation_perftest_path: must be an absolute path (got 'ib_write_bw')"]),
    ({"validation_healthcheck_metrics_dir": "var/lib/prometheus/node-exporter"},
     ["validation_healthcheck_metrics_dir: must be an absolute path (got 'var/lib/prometheus/node-exporter')"]),
    ({"validation_recorded_outputs": ["/srv/nccl.txt"]},
     ["validation_recorded_outputs: must map nccl_all_reduce or ib_write_bw to files"]),
    ({"validation_recorded_outputs": {"all_reduce": "/srv/nccl.txt"}},
     ["validation_recorded_outputs: unknown key 'all_reduce' (nccl_all_reduce, ib_write_bw)"]),
    ({"validation_recorded_outputs": {"nccl_all_reduce": "nccl.txt"}},
     ["validation_recorded_outputs.nccl_all_reduce: must be an absolute path (got 'nccl.txt')"]),
    ({"validation_recorded_outputs": {"ib_write_bw": None}},
     ["validation_recorded_outputs.ib_write_bw: must be an absolute path (got None)"]),
    ({"validation_kubeconfig": "admin.conf"}, ["validation_kubeconfig: must be an absolute path (got 'admin.conf')"]),
    ({"validation_gpu_container_image": "Ubuntu:24.04"},
     ["validation_gpu_container_image: must be an image reference such as ubuntu:24.04 or "
      "registry.example.com/cuda:12.4.1-base-ubuntu22.04@sha256:..., or empty (got 'Ubuntu:24.04')"]),
    ({"validation_gpu_container_image": "ubuntu:24.04 --privileged"},
     ["validation_gpu_container_image: must be an image reference such as ubuntu:24.04 or "
      "registry.example.com/cuda:12.4.1-base-ubuntu22.04@sha256:..., or empty (got 'ubuntu:24.04 --privileged')"]),
    ({"validation_gpu_container_image": None},
     ["validation_gpu_container_image: must be an image reference such as ubuntu:24.04 or "
      "registry.example.com/cuda:12.4.1-base-ubuntu22.04@sha256:..., or empty (got None)"]),
    ({"validation_kubernetes_gpu_pod": "yes"}, ["validation_kubernetes_gpu_pod: must be true or false (got 'yes')"]),
    ({"validation_kubernetes_ddp": 1}, ["validation_kubernetes_ddp: must be true or false (got 1)"]),
    ({"validation_nccl_tests_source": "https://github.com/NVIDIA/nccl-tests/archive/refs/tags/v2.17.6.tar.gz"},
     ["validation_nccl_tests_checksum: must be the source archive's checksum as sha256:<64 hex digits> when "
      "validation_nccl_tests_source is set (got '')",
      "validation_nccl_tests_dir: must name the directory to build all_reduce_perf in when "
      "validation_nccl_tests_source is set (got '')"]),
    ({"validation_nccl_tests_source": "https://github.com/NVIDIA/nccl-tests.git", "validation_nccl_tests_dir": "/opt/nt",
      "validation_nccl_tests_checksum": "sha256:" + "a" * 63},
     ["validation_nccl_tests_source: must be the http(s):// or file:// URL of nccl-tests' source as a .tar.gz, .tgz or "
      ".tar.xz archive, or empty (got 'https://github.com/NVIDIA/nccl-tests.git')",
      "validation_nccl_tests_checksum: must be the source archive's checksum as sha256:<64 hex digits> when "
      "validation_nccl_tests_source is set (got 'sha256:" + "a" * 63 + "')"]),
    ({"validation_nccl_tests_mpi": "no"}, ["validation_nccl_tests_mpi: must be true or false (got 'no')"]),
    ({"validation_nccl_tests_source": "file:///srv/mirror/nccl-tests-2.17.6.tar.gz",
      "validation_nccl_tests_checksum": "sha256:" + "0" * 64, "validation_nccl_tests_dir": "/opt/nt;reboot"},
     ["validation_nccl_tests_dir: must be a path of letters, digits and . _ + @ - / only when validation_nccl_tests_source"
      " is set (make passes it to the shell in nccl-tests' build) (got '/opt/nt;reboot')"]),
    ({"validation_nccl_tests_source": "file:///srv/mirror/nccl-tests-2.17.6.tar.gz",
      "validation_nccl_tests_checksum": "sha256:" + "0" * 64, "validation_nccl_tests_dir": "/opt/$(HOME)"},
     ["validation_nccl_tests_dir: must be a path of letters, digits and . _ + @ - / only when validation_nccl_tests_source"
      " is set (make passes it to the shell in nccl-tests' build) (got '/opt/$(HOME)')"]),
    ({"validation_perftest_package": "perftest; rm -rf /"},
     ["validation_perftest_package: must be a package name, or empty (got 'perftest; rm -rf /')"]),
    ({"validation_kubernetes_ddp_image": ""},
     ["validation_kubernetes_ddp_image: must be an image reference with torch in it, such as "
      "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime (got '')"]),
    ({"validation_kubernetes_namespace": "GPU_Validation"},
     ["validation_kubernetes_namespace: must be a namespace name (a DNS label) (got 'GPU_Validation')"]),
    ({"validation_kubernetes_namespace": ""}, ["validation_kubernetes_namespace: must be a namespace name (a DNS label) (got '')"]),
    ({"validation_kubernetes_runtime_class": "nvidia runtime"},
     ["validation_kubernetes_runtime_class: must be a RuntimeClass name (a DNS subdomain) or empty (got 'nvidia runtime')"]),
    ({"validation_kubernetes_runtime_class": None},
     ["validation_kubernetes_runtime_class: must be a RuntimeClass name (a DNS subdomain) or empty (got None)"]),
    ({"validation_kubernetes_gpu_resource": "gpu"},
     ["validation_kubernetes_gpu_resource: must be an extended resource name such as nvidia.com/gpu (got 'gpu')"]),
    ({"validation_kubernetes_gpu_resource": "nvidia.com/gpu=1"},
     ["validation_kubernetes_gpu_resource: must be an extended resource name such as nvidia.com/gpu (got 'nvidia.com/gpu=1')"]),
    ({"validation_docker_path": "sudo docker"},
     ["validation_docker_path: must be one word without blanks, quotes, #, \\, comma or = (got 'sudo docker')"]),
    ({"validation_kubernetes_control_plane_group": "k8s control plane", "validation_slurm_compute_group": ""},
     ["validation_slurm_compute_group: must be one word without blanks, quotes, #, \\, comma or = (got '')",
      "validation_kubernetes_control_plane_group: must be one word without blanks, quotes, #, \\, comma or = "
      "(got 'k8s control plane')"]),
], ids=str)
def test_bad_play_input(play, messages):
    assert errors(play) == messages


def test_missing_play_settings_are_each_reported():
    assert validation_errors({}, {}) == [
        "validation_checks: must be a non-empty list of passive, active (got None)",
        "validation_policy: must be one of report, drain, drain-and-stop (got None)",
        "validation_reason_prefix: must be one line of text without quotes or backslashes, as Slurm keeps it in "
        "the node's reason (got None)",
        "validation_results_dir: must be an absolute path (got None)",
        "validation_nccl_inter_fraction: must be a number in (0, 1] (got None)",
        "validation_nccl_intra_fraction: must be a number in (0, 1] (got None)",
        "validation_ib_bw_fraction: must be a number in (0, 1] (got None)",
        "validation_baseline_tolerance: must be a number in [0, 1] (got None)",
        "validation_ddp_nodes: must be an integer (got None)",
        "validation_ddp_steps: must be an integer (got None)",
        "validation_ddp_port: must be an integer (got None)",
        "validation_job_timeout: must be an integer (got None)",
        "validation_ddp_venv: must be an absolute path (got None)",
    ]


SEVERITY_CHECKS = ", ".join(CHECKS)


@pytest.mark.parametrize("host, messages", [
    ({"validation_gpu_count": 65}, [H + "validation_gpu_count: must be within 0-64 (got 65)"]),
    ({"validation_gpu_count": -1}, [H + "validation_gpu_count: must be within 0-64 (got -1)"]),
    ({"validation_gpu_count": "8"}, [H + "validation_gpu_count: must be an integer (got '8')"]),
    ({"validation_gpu_count": True}, [H + "validation_gpu_count: must be an integer (got True)"]),
    ({"validation_gpu_model": "H100\nA100"}, [H + "validation_gpu_model: must be text on one line (got 'H100\\nA100')"]),
    ({"validation_gpu_model": 100},
     [H + "validation_gpu_model: must be a quoted string (YAML reads an unquoted 550.120 as the number 550.12) (got 100)"]),
    ({"validation_driver_version": "580.159.04 580.126.09"},
     [H + "validation_driver_version: must be one word without blanks, quotes, #, \\, comma or = "
          "(got '580.159.04 580.126.09')"]),
    ({"validation_cuda_version": "12.8,13.0"},
     [H + "validation_cuda_version: must be one word without blanks, quotes, #, \\, comma or = (got '12.8,13.0')"]),
    ({"validation_hca": [400]},
     [H + "validation_hca: must be a dict with rate_gbps, link_layers, ignore, count, source (got [400])"]),
    ({"validation_hca": {"rate": 400}},
     [H + "validation_hca: unknown key 'rate' (keys: rate_gbps, link_layers, ignore, count, source)"]),
    ({"validation_hca": {"rate_gbps": 4000}},
     [H + "validation_hca.rate_gbps: must be a port rate in Gb/s within 1-3200, or 0 for the fastest active port of "
          "the same adapter model (got 4000)"]),
    ({"validation_hca": {"rate_gbps": "400"}},
     [H + "validation_hca.rate_gbps: must be a port rate in Gb/s within 1-3200, or 0 for the fastest active port of "
          "the same adapter model (got '400')"]),
    ({"validation_hca": {"rate_gbps": -100}},
     [H + "validation_hca.rate_gbps: must be a port rate in Gb/s within 1-3200, or 0 for the fastest active port of "
          "the same adapter model (got -100)"]),
    ({"validation_hca": {"rate_gbps": True}},
     [H + "validation_hca.rate_gbps: must be a port rate in Gb/s within 1-3200, or 0 for the fastest active port of "
          "the same adapter model (got True)"]),
    ({"validation_hca": {"link_layers": ["IB", "RoCE"]}},
     [H + "validation_hca.link_layers: 'IB' is not one of InfiniBand, Ethernet",
      H + "validation_hca.link_layers: 'RoCE' is not one of InfiniBand, Ethernet"]),
    ({"validation_hca": {"count": 65}}, [H + "validation_hca.count: must be within 1-64 (got 65)"]),
    ({"validation_hca": {"count": "8"}}, [H + "validation_hca.count: must be an integer (got '8')"]),
    ({"validation_mounts": "/nfs"}, [H + "validation_mounts: must be auto or a list of {path, fstype} (got '/nfs')"]),
    ({"validation_mounts": [{"path": "nfs"}, "/data", {"fstype": "nfs4"}]},
     [H + "validation_mounts[0].path: must be an absolute path (got 'nfs')",
      H + "validation_mounts[1].path: must be an absolute path (got None)",
      H + "validation_mounts[2].path: must be an absolute path (got None)"]),
    ({"validation_mounts": [{"path": "/data/shared/"}]},
     [H + "validation_mounts[0].path: must have no trailing slash and no empty, . or .. parts (got '/data/shared/')"]),
    ({"validation_services": "slurmd"},
     [H + "validation_services: must be auto or a list of systemd unit names (got 'slurmd')"]),
    ({"validation_services": ["slurmd", "docker ce", 5]},
     [H + "validation_services: 'docker ce' is not a systemd unit name",
      H + "validation_services: 5 is not a systemd unit name"]),
    ({"validation_xid_codes": [79, 0, 1024, "48", True]},
     [H + "validation_xid_codes: 0 is not an XID (an integer within 1-1023)",
      H + "validation_xid_codes: 1024 is not an XID (an integer within 1-1023)",
      H + "validation_xid_codes: '48' is not an XID (an integer within 1-1023)",
      H + "validation_xid_codes: True is not an XID (an integer within 1-1023)"]),
    ({"validation_severity": ["pcie_link"]},
     [H + "validation_severity: must map check names to fail, warn or skip (got ['pcie_link'])"]),
    ({"validation_severity": {"pcie": "warn"}},
     [H + "validation_severity: unknown check 'pcie' (checks: %s)" % SEVERITY_CHECKS]),
    ({"validation_severity": {"pcie_link": "ignore", "xid": None}},
     [H + "validation_severity.pcie_link: must be fail, warn or skip (got 'ignore')",
      H + "validation_severity.xid: must be fail, warn or skip (got None)"]),
    ({"validation_nvidia_smi_path": "/usr/bin/nvidia-smi -q"},
     [H + "validation_nvidia_smi_path: must be one word without blanks, quotes, #, \\, comma or = "
          "(got '/usr/bin/nvidia-smi -q')"]),
    ({"validation_ibstat_path": "'ibstat'"},
     [H + "validation_ibstat_path: must be one word without blanks, quotes, #, \\, comma or = (got \"'ibstat'\")"]),
    ({"validation_cuda_home": "/usr/local/cuda/"},
     [H + "validation_cuda_home: must have no trailing slash and no empty, . or .. parts (got '/usr/local/cuda/')"]),
    ({"validation_cuda_home": "cuda"}, [H + "validation_cuda_home: must be an absolute path (got 'cuda')"]),
    ({"validation_kernel_log_minutes": 0}, [H + "validation_kernel_log_minutes: must be within 1-10080 (got 0)"]),
    ({"validation_kernel_log_minutes": 10081},
     [H + "validation_kernel_log_minutes: must be within 1-10080 (got 10081)"]),
    ({"validation_time_max_offset": -1},
     [H + "validation_time_max_offset: must be a number of seconds within 0-3600, 0 to turn time_sync off (got -1)"]),
    ({"validation_time_max_offset": "0.5", "validation_time_fail_offset": True},
     [H + "validation_time_max_offset: must be a number of seconds within 0-3600, 0 to turn time_sync off (got '0.5')",
      H + "validation_time_fail_offset: must be a number of seconds above 0, at most 86400 (got True)"]),
    ({"validation_time_fail_offset": 0},
     [H + "validation_time_fail_offset: must be a number of seconds above 0, at most 86400 (got 0)"]),
    ({"validation_time_max_offset": 10, "validation_time_fail_offset": 5},
     [H + "validation_time_fail_offset: must not be below validation_time_max_offset (10) (got 5)"]),
    ({"validation_disk_space_paths": "/var"},
     [H + "validation_disk_space_paths: must be a list of absolute paths, [] to turn disk_space off (got '/var')"]),
    ({"validation_disk_space_paths": ["/var", "tmp", "/var/lib/slurm/", None]},
     [H + "validation_disk_space_paths[1]: must be an absolute path (got 'tmp')",
      H + "validation_disk_space_paths[2]: must have no trailing slash and no empty, . or .. parts (got '/var/lib/slurm/')",
      H + "validation_disk_space_paths[3]: must be an absolute path (got None)"]),
    ({"validation_disk_space_min_free_percent": 100, "validation_disk_space_min_free_mib": -1},
     [H + "validation_disk_space_min_free_percent: must be a number within 0-100, below 100 (got 100)",
      H + "validation_disk_space_min_free_mib: must be within 0-1073741824 (got -1)"]),
    ({"validation_disk_space_min_free_mib": 1.5},
     [H + "validation_disk_space_min_free_mib: must be an integer (got 1.5)"]),
    ({"validation_healthcheck_confirm_runs": 0}, [H + "validation_healthcheck_confirm_runs: must be within 1-10 (got 0)"]),
    ({"validation_healthcheck_confirm_runs": "2"},
     [H + "validation_healthcheck_confirm_runs: must be an integer (got '2')"]),
    ({"validation_healthcheck_flapping_window": 2},
     [H + "validation_healthcheck_flapping_window: must be within 3-100 (got 2)"]),
    ({"validation_healthcheck_flapping_window": 101, "validation_healthcheck_flapping_threshold": 51},
     [H + "validation_healthcheck_flapping_window: must be within 3-100 (got 101)",
      H + "validation_healthcheck_flapping_threshold: must be within 2-50 (got 51)"]),
    ({"validation_healthcheck_flapping_threshold": 1},
     [H + "validation_healthcheck_flapping_threshold: must be within 2-5, the spells of failure "
          "validation_healthcheck_flapping_window (10 runs) can hold (got 1)"]),
    ({"validation_healthcheck_flapping_window": 4},
     [H + "validation_healthcheck_flapping_threshold: must be within 2-2, the spells of failure "
          "validation_healthcheck_flapping_window (4 runs) can hold (got 3)"]),
    ({"validation_healthcheck_flapping_threshold": 2.5},
     [H + "validation_healthcheck_flapping_threshold: must be an integer (got 2.5)"]),
    ({"validation_healthcheck_state_file": "healthcheck-state.json"},
     [H + "validation_healthcheck_state_file: must be an absolute path (got 'healthcheck-state.json')"]),
    ({"validation_healthcheck_state_file": "/var/lib/gpucluster/"},
     [H + "validation_healthcheck_state_file: must have no trailing slash and no empty, . or .. parts "
          "(got '/var/lib/gpucluster/')"]),
], ids=str)
def test_bad_host_input(host, messages):
    assert errors(host=host) == messages


@pytest.mark.parametrize("cuda_home", ["/opt/cuda$(ARCH)", "/opt/cuda'12'", "/opt/cuda`id`", "/opt/cuda|x"])
def test_cuda_home_make_passes_to_the_shell(cuda_home):
    play = {"validation_nccl_tests_source": "file:///srv/mirror/nccl-tests-2.17.6.tar.gz",
            "validation_nccl_tests_checksum": "sha256:" + "0" * 64, "validation_nccl_tests_dir": "/opt/nt"}
    assert errors(play, {"validation_cuda_home": cuda_home}) == [
        H + "validation_cuda_home: must be a path of letters, digits and . _ + @ - / only when validation_nccl_tests_source"
            " is set (make passes it to the shell in nccl-tests' build) (got %r)" % cuda_home]


def test_host_defaults_when_unset():
    """A host with none of the per-host variables: the code's own defaults are good."""
    assert validation_errors({"gpu1": {}}, PLAY) == []


def test_every_error_at_once_play_first_then_hosts_in_order():
    per_host = {
        "gpu2": dict(HOST, validation_gpu_count=72),
        "gpu1": dict(HOST, validation_kernel_log_minutes=0, validation_cuda_home="cuda"),
        "gpu3": dict(HOST),
    }
    assert validation_errors(per_host, dict(PLAY, validation_policy="fix", validation_ddp_nodes=0)) == [
        "validation_policy: must be one of report, drain, drain-and-stop (got 'fix')",
        "validation_ddp_nodes: must be within 2-1024 (got 0)",
        "host 'gpu2': validation_gpu_count: must be within 0-64 (got 72)",
        "host 'gpu1': validation_cuda_home: must be an absolute path (got 'cuda')",
        "host 'gpu1': validation_kernel_log_minutes: must be within 1-10080 (got 0)",
    ]


def test_xid_codes_not_a_list_is_reported():
    assert errors(host={"validation_xid_codes": 79}) == [
        H + "validation_xid_codes: must be a list of XIDs (got 79)"]


@pytest.mark.parametrize("host, var", [
    ({"validation_xid_codes": "79"}, "validation_xid_codes"),
    ({"validation_hca": {"link_layers": "Ethernet"}}, "validation_hca.link_layers"),
])
def test_string_instead_of_list_gives_one_error(host, var):
    messages = errors(host=host)
    assert len(messages) == 1
    assert messages[0].startswith(H + var + ": ")


def test_hca_ignore_must_be_a_list():
    assert errors(host={"validation_hca": {"ignore": "mlx5_1"}}) != []


def test_container_runtime_is_a_unit_name():
    assert errors(host={"validation_container_runtime": "docker ce"}) != []


# ---------------------------------------------------------------------------
# node_settings
# ---------------------------------------------------------------------------

GROUPS = {"controller": "slurm_controller", "dbd": "slurm_dbd", "compute": "slurm_compute",
          "kubernetes_control_plane": "k8s_control_plane", "kubernetes_worker": "k8s_workers"}
NFS = [
    {"src": "master:/data/shared", "path": "/data/shared"},
    {"src": "filer01:/vol/datasets", "path": "/datasets", "server_external": True},
]


@pytest.mark.parametrize("values, host, groups, gpu_node, services", [
    ({}, "gpu1", ["slurm_compute"], True, ["munge", "slurmd", "docker"]),
    ({}, "cpu1", ["slurm_compute"], False, ["munge", "slurmd"]),
    ({}, "master", ["slurm_controller", "slurm_dbd"], False, ["munge", "slurmctld", "slurmdbd"]),
    ({}, "master", ["slurm_controller", "slurm_dbd", "slurm_compute"], True,
     ["munge", "slurmctld", "slurmdbd", "slurmd", "docker"]),
    ({"validation_container_runtime": "containerd"}, "gpu1", ["slurm_compute"], True, ["munge", "slurmd", "containerd"]),
    ({"validation_container_runtime": ""}, "gpu1", ["slurm_compute"], True, ["munge", "slurmd"]),
    ({}, "gpu1", [], True, ["docker"]),
    ({}, "login1", ["login"], False, []),
    # Kubernetes nodes run containerd and kubelet; a GPU worker also the container runtime
    ({}, "cp1", ["k8s_control_plane"], False, ["containerd", "kubelet"]),
    ({}, "gpu1", ["k8s_workers"], True, ["containerd", "kubelet", "docker"]),
    ({"validation_container_runtime": "containerd"}, "gpu1", ["k8s_workers"], True, ["containerd", "kubelet"]),
    ({}, "gpu1", ["k8s_control_plane", "k8s_workers", "slurm_compute"], True,
     ["munge", "slurmd", "containerd", "kubelet", "docker"]),
    ({"validation_services": "auto"}, "gpu1", ["slurm_compute"], False, ["munge", "slurmd"]),
    # a list is taken as it is
    ({"validation_services": ["slurmd"]}, "gpu1", ["slurm_compute"], True, ["slurmd"]),
    ({"validation_services": []}, "gpu1", ["slurm_compute"], True, []),
])
def test_services(values, host, groups, gpu_node, services):
    assert node_settings(values, host, groups, gpu_node, GROUPS)["validation_services"] == services


@pytest.mark.parametrize("values, host, mounts", [
    ({"nfs_mounts": NFS}, "gpu1", [{"path": "/data/shared", "fstype": "nfs"}, {"path": "/datasets", "fstype": "nfs"}]),
    # the server does not mount its own export
    ({"nfs_mounts": NFS}, "master", [{"path": "/datasets", "fstype": "nfs"}]),
    ({"nfs_mounts": NFS, "inventory_hostname_short": "master"}, "master.cluster.lan",
     [{"path": "/datasets", "fstype": "nfs"}]),
    ({}, "gpu1", []),
    ({"nfs_mounts": None}, "gpu1", []),
    ({"nfs_mounts": NFS, "validation_mounts": [{"path": "/scratch", "fstype": "lustre"}]}, "gpu1",
     [{"path": "/scratch", "fstype": "lustre"}]),
])
def test_mounts(values, host, mounts):
    assert node_settings(values, host, ["slurm_compute"], True, GROUPS)["validation_mounts"] == mounts


def test_node_settings_keeps_other_values_and_does_not_change_its_input():
    values = {"validation_gpu_count": 8, "nfs_mounts": NFS, "validation_services": "auto", "validation_mounts": "auto"}
    out = node_settings(values, "gpu1", ["slurm_compute"], True, GROUPS)
    assert out["validation_gpu_count"] == 8
    assert values["validation_services"] == "auto" and values["validation_mounts"] == "auto"


def test_resolved_settings_pass_the_rules():
    out = node_settings(dict(HOST, nfs_mounts=NFS), "gpu1", ["slurm_compute"], True, GROUPS)
    per_host = {"gpu1": {name: out[name] for name in HOST}}
    assert validation_errors(per_host, PLAY) == []
