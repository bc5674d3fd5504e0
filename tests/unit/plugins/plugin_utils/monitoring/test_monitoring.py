# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The monitoring role's rules (tables of good and bad data with exact messages), its scrape jobs
from the inventory and its DCGM counters file."""

from __future__ import annotations

import json
import os
import re

import pytest

from ansible_collections.gpucluster.core.plugins.plugin_utils.monitoring._monitoring import (
    DCGM_COUNTERS, alertmanager_peers, artifacts, counters_csv, dashboard_queries, dcgm_repo_errors, host_plan, input_errors,
    is_gpu_node, monitoring_errors, per_host, pinned_packages, scrape_configs, service_flags, stale_services)
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._rules import RoleInput, RuleError, host_values
from ansible_collections.gpucluster.core.tests.unit.plugins.plugin_utils.lazy_input import UNREAD, Unread

DEFAULTS = {
    "monitoring_server_group": "monitoring", "monitoring_scrape_group": "cluster", "monitoring_scrape_address": "",
    "monitoring_node_exporter": True, "monitoring_node_exporter_port": 9100,
    "monitoring_node_exporter_textfile_dir": "/var/lib/prometheus/node-exporter", "monitoring_node_exporter_args": [],
    "monitoring_dcgm_exporter": True, "monitoring_dcgm_exporter_source": "package",
    "monitoring_dcgm_exporter_image": "nvcr.io/nvidia/k8s/dcgm-exporter:4.2.3-4.1.3-ubuntu22.04",
    "monitoring_dcgm_exporter_port": 9400, "monitoring_dcgm_exporter_interval": 30000,
    "monitoring_dcgm_exporter_counters_extra": [], "monitoring_slurm_job_mapping_dir": "/run/gpucluster/dcgm-job-map",
    "monitoring_slurm_prolog_dir": "/etc/slurm/prolog.d", "monitoring_slurm_epilog_dir": "/etc/slurm/epilog.d",
    "monitoring_gpu_count_expected": 0, "monitoring_slurm_metrics_interval": 60,
    "monitoring_prometheus_port": 9090, "monitoring_prometheus_scrape_interval": "30s",
    "monitoring_prometheus_evaluation_interval": "30s", "monitoring_prometheus_retention_time": "30d",
    "monitoring_prometheus_retention_size": "", "monitoring_prometheus_storage_path": "/var/lib/prometheus/metrics2",
    "monitoring_prometheus_external_labels": {}, "monitoring_prometheus_extra_scrape_configs": [],
    "monitoring_alertmanager_port": 9093, "monitoring_alertmanager_cluster_port": 9094,
    "monitoring_alertmanager_route": {"receiver": "default", "group_by": ["alertname", "node"], "group_wait": "30s"},
    "monitoring_alertmanager_receivers": [{"name": "default"}], "monitoring_alertmanager_inhibit_rules": [],
    "monitoring_grafana": True, "monitoring_grafana_port": 3000, "monitoring_grafana_admin_user": "admin",
    "monitoring_grafana_admin_password": "", "monitoring_grafana_folder": "GPU cluster",
    "monitoring_grafana_dashboard_urls": [
        {"name": "nvidia-dcgm-exporter", "url": "https://raw.githubusercontent.com/NVIDIA/dcgm-exporter/d5e5f51/"
                                                "grafana/dcgm-exporter-dashboard.json",
         "checksum": "sha256:7c2172e582524efb70d9f585502366f7fec22b2464c3b89f75418ca648353e71"}],
    "monitoring_grafana_repo_manage": True, "monitoring_grafana_repo_url": "https://apt.grafana.com",
    "monitoring_grafana_repo_key_url": "https://apt.grafana.com/gpg.key", "monitoring_grafana_repo_suite": "stable",
    "monitoring_grafana_repo_component": "main", "monitoring_dcgm_exporter_binary": "/usr/bin/dcgm-exporter",
    "monitoring_verify_timeout": 120, "monitoring_network": "management", "monitoring_listen_address": "",
    "monitoring_web_tls_cert": "", "monitoring_web_tls_key": "", "monitoring_web_tls_ca": "", "monitoring_web_users": {},
    "monitoring_web_scrape_user": "", "monitoring_web_scrape_password": "",
}
SERVER = {"group_names": ["cluster", "monitoring"]}
H = "host 'master': "


def errors(**values):
    hosts = {"master": values}
    return monitoring_errors(host_values(hosts, ["master"], list(DEFAULTS) + ["group_names"], DEFAULTS), ["master"])


def test_the_defaults_are_good():
    assert errors() == []


@pytest.mark.parametrize("values", [
    {"monitoring_prometheus_retention_time": "1y2w"},
    {"monitoring_prometheus_retention_size": "500GB"},
    {"monitoring_node_exporter_args": ["--collector.systemd", "--collector.filesystem.mount-points-exclude=^/proc"]},
    {"monitoring_dcgm_exporter_source": "container"},
    {"monitoring_dcgm_exporter_counters_extra": [
        {"field": "DCGM_FI_PROF_SM_ACTIVE", "type": "gauge", "help": "The ratio of cycles an SM has at least 1 warp."}]},
    {"monitoring_prometheus_extra_scrape_configs": [{"job_name": "ipmi", "static_configs": [{"targets": ["bmc:9290"]}]}]},
    {"monitoring_alertmanager_receivers": [{"name": "default"}, {"name": "oncall", "webhook_configs": [{"url": "http://x"}]}],
     "monitoring_alertmanager_route": {"receiver": "default", "routes": [{"receiver": "oncall",
                                                                          "matchers": ["severity = critical"]}]}},
    {"monitoring_prometheus_external_labels": {"cluster": "lab"}},
    {"monitoring_gpu_count_expected": 8},
    dict(SERVER, monitoring_grafana_admin_password="8chars!!"),
    dict(SERVER, monitoring_grafana=False),
    {"monitoring_grafana_dashboard_urls": [{"name": "node_exporter-full", "url": "http://mirror/1860.json"}]},
    {"monitoring_grafana_dashboard_urls": []},
    {"monitoring_alertmanager_route": {"receiver": "default", "group_wait": "0s", "group_interval": "5m",
                                       "repeat_interval": "0h4h"}},
    {"monitoring_alertmanager_receivers": [{"name": "default", "slack_configs": [
        {"api_url": "https://hooks.slack.example/x"}, {"api_url_file": "/etc/alertmanager/slack-url"}]}]},
    # The Grafana repository is checked only where Grafana is installed from it.
    dict(SERVER, monitoring_grafana_admin_password="8chars!!", monitoring_grafana_repo_manage=False,
         monitoring_grafana_repo_url="apt.grafana.com"),
    {"monitoring_grafana_repo_url": "apt.grafana.com"},
    {"monitoring_dcgm_exporter_source": "container", "monitoring_dcgm_exporter_binary": ""},
])
def test_good_values(values):
    assert errors(**values) == []


@pytest.mark.parametrize("values, message", [
    ({"monitoring_prometheus_port": 0}, H + "monitoring_prometheus_port: must be within 1-65535 (got 0)"),
    ({"monitoring_dcgm_exporter_port": 9100},
     H + "monitoring_node_exporter_port, monitoring_dcgm_exporter_port: must be different ports (all are 9100)"),
    ({"monitoring_node_exporter_textfile_dir": "var/lib"},
     H + "monitoring_node_exporter_textfile_dir: must be an absolute path (got 'var/lib')"),
    ({"monitoring_server_group": ""}, H + "monitoring_server_group: must be an inventory group name (got '')"),
    ({"monitoring_node_exporter_args": ["--collector.systemd --collector.ntp"]},
     H + "monitoring_node_exporter_args: must be a list of --flag or --flag=value strings without blanks "
         "(got ['--collector.systemd --collector.ntp'])"),
    ({"monitoring_dcgm_exporter_source": "tarball"},
     H + "monitoring_dcgm_exporter_source: must be package or container (got 'tarball')"),
    ({"monitoring_dcgm_exporter_source": "container", "monitoring_dcgm_exporter_image": "nvcr.io/nvidia/k8s/dcgm-exporter"},
     H + "monitoring_dcgm_exporter_image: must be an image reference with a tag or digest, such as "
         "nvcr.io/nvidia/k8s/dcgm-exporter:4.2.3-4.1.3-ubuntu22.04 (got 'nvcr.io/nvidia/k8s/dcgm-exporter')"),
    ({"monitoring_dcgm_exporter_interval": 50},
     H + "monitoring_dcgm_exporter_interval: must be milliseconds within 100-3600000 (got 50)"),
    ({"monitoring_dcgm_exporter_counters_extra": [{"field": "sm_clock", "type": "gauge", "help": "x"}]},
     H + "monitoring_dcgm_exporter_counters_extra[0].field: must be a DCGM field name such as DCGM_FI_DEV_SM_CLOCK "
         "(got 'sm_clock')"),
    ({"monitoring_dcgm_exporter_counters_extra": [{"field": "DCGM_FI_DEV_XID_ERRORS", "type": "gauge", "help": "x"}]},
     H + "monitoring_dcgm_exporter_counters_extra[0].field: DCGM_FI_DEV_XID_ERRORS is in the role's own list already"),
    ({"monitoring_dcgm_exporter_counters_extra": [{"field": "DCGM_FI_PROF_SM_ACTIVE", "type": "histogram", "help": "x"}]},
     H + "monitoring_dcgm_exporter_counters_extra[0].type: must be gauge, counter or label (got 'histogram')"),
    ({"monitoring_dcgm_exporter_counters_extra": [{"field": "DCGM_FI_PROF_SM_ACTIVE", "type": "gauge", "help": "a\nb"}]},
     H + "monitoring_dcgm_exporter_counters_extra[0].help: must be one line of text (got 'a\\nb')"),
    ({"monitoring_dcgm_exporter_counters_extra": [{"field": "DCGM_FI_PROF_SM_ACTIVE", "type": "gauge"}] * 2},
     H + "monitoring_dcgm_exporter_counters_extra: DCGM_FI_PROF_SM_ACTIVE is listed twice"),
    ({"monitoring_gpu_count_expected": -1},
     H + "monitoring_gpu_count_expected: must be the GPUs this node must show, 0-64 (0: what nvidia-smi shows at the "
         "role run) (got -1)"),
    ({"monitoring_slurm_metrics_interval": 5}, H + "monitoring_slurm_metrics_interval: must be seconds within 10-3600 (got 5)"),
    ({"monitoring_prometheus_retention_time": "30 days"},
     H + "monitoring_prometheus_retention_time: must be a Prometheus duration such as 30s, 15d or 1h30m (got '30 days')"),
    ({"monitoring_prometheus_retention_size": "500G"},
     H + "monitoring_prometheus_retention_size: must be empty or a size such as 500GB (units B, KB, MB, GB, TB, PB, EB) "
         "(got '500G')"),
    ({"monitoring_prometheus_external_labels": {"cluster-name": "lab"}},
     H + "monitoring_prometheus_external_labels: must map label names ([a-zA-Z_][a-zA-Z0-9_]*) to strings "
         "(got {'cluster-name': 'lab'})"),
    ({"monitoring_prometheus_extra_scrape_configs": [{"job_name": "node"}]},
     H + "monitoring_prometheus_extra_scrape_configs: the job_name 'node' is the role's own (prometheus, alertmanager, "
         "node, dcgm)"),
    ({"monitoring_prometheus_extra_scrape_configs": [{"static_configs": []}]},
     H + "monitoring_prometheus_extra_scrape_configs: must be a list of Prometheus scrape configs, each with a job_name "
         "(got [{'static_configs': []}])"),
    ({"monitoring_alertmanager_receivers": []},
     H + "monitoring_alertmanager_receivers: must be a non-empty list of Alertmanager receivers (got [])"),
    ({"monitoring_alertmanager_receivers": [{"name": "default"}, {"name": "default"}]},
     H + "monitoring_alertmanager_receivers: the receiver 'default' is defined twice"),
    ({"monitoring_alertmanager_route": {"group_by": ["node"]}},
     H + "monitoring_alertmanager_route: the top route must name a receiver"),
    ({"monitoring_alertmanager_route": {"receiver": "default", "routes": [{"receiver": "pager"}]}},
     H + "monitoring_alertmanager_route.routes[0].receiver: 'pager' is not one of monitoring_alertmanager_receivers "
         "(default)"),
    ({"monitoring_alertmanager_route": {"receiver": "default", "repeat_interval": "4 hours"}},
     H + "monitoring_alertmanager_route.repeat_interval: must be a Prometheus duration such as 30s, 15d or 1h30m "
         "(got '4 hours')"),
    ({"monitoring_prometheus_scrape_interval": "0s"},
     H + "monitoring_prometheus_scrape_interval: must be longer than 0 (got '0s')"),
    ({"monitoring_prometheus_evaluation_interval": "0m0s"},
     H + "monitoring_prometheus_evaluation_interval: must be longer than 0 (got '0m0s')"),
    ({"monitoring_prometheus_retention_time": "0d"},
     H + "monitoring_prometheus_retention_time: must be longer than 0 (got '0d')"),
    ({"monitoring_alertmanager_route": {"receiver": "default", "routes": [{"receiver": "default",
                                                                           "group_interval": "0s"}]}},
     H + "monitoring_alertmanager_route.routes[0].group_interval: must be longer than 0 (got '0s')"),
    ({"monitoring_alertmanager_route": {"receiver": "default", "repeat_interval": "0h"}},
     H + "monitoring_alertmanager_route.repeat_interval: must be longer than 0 (got '0h')"),
    ({"monitoring_alertmanager_receivers": [{"name": "default", "webhook_configs": [{"url": "hooks.example/alert"}]}]},
     H + "monitoring_alertmanager_receivers[0].webhook_configs[0].url: must be a http:// or https:// URL "
         "(got 'hooks.example/alert')"),
    ({"monitoring_alertmanager_receivers": [{"name": "default"}, {"name": "chat", "msteams_configs": [
        {"webhook_url": "https://teams.example/x"}, {"webhook_url": "ftp://teams.example/x"}]}]},
     H + "monitoring_alertmanager_receivers[1].msteams_configs[1].webhook_url: must be a http:// or https:// URL "
         "(got 'ftp://teams.example/x')"),
    (dict(SERVER, monitoring_grafana_admin_password="8chars!!", monitoring_grafana_repo_url="apt.grafana.com"),
     H + "monitoring_grafana_repo_url: must be a http:// or https:// or file:// URL (got 'apt.grafana.com')"),
    (dict(SERVER, monitoring_grafana_admin_password="8chars!!", monitoring_grafana_repo_key_url="/etc/grafana.key"),
     H + "monitoring_grafana_repo_key_url: must be a http:// or https:// or file:// URL (got '/etc/grafana.key')"),
    (dict(SERVER, monitoring_grafana_admin_password="8chars!!", monitoring_grafana_repo_suite="stable main"),
     H + "monitoring_grafana_repo_suite: must be one word without blanks, quotes, #, \\, comma or = (got 'stable main')"),
    (dict(SERVER, monitoring_grafana_admin_password="8chars!!", monitoring_grafana_repo_component="main\nx"),
     H + "monitoring_grafana_repo_component: must be one word without blanks, quotes, #, \\, comma or = "
         "(got 'main\\nx')"),
    ({"monitoring_dcgm_exporter_binary": "dcgm-exporter"},
     H + "monitoring_dcgm_exporter_binary: must be an absolute path (got 'dcgm-exporter')"),
    ({"monitoring_verify_timeout": 0}, H + "monitoring_verify_timeout: must be within 10-3600 (got 0)"),
    ({"monitoring_alertmanager_inhibit_rules": ["alertname=NodeExporterDown"]},
     H + "monitoring_alertmanager_inhibit_rules: must be a list of Alertmanager inhibit rules "
         "(got ['alertname=NodeExporterDown'])"),
    (SERVER, H + "monitoring_grafana_admin_password: must be set (a string of at least 8 characters; the value is "
                 "not shown)"),
    (dict(SERVER, monitoring_grafana_admin_password="7 chars"),
     H + "monitoring_grafana_admin_password: must be set (a string of at least 8 characters; the value is not shown)"),
    (dict(SERVER, monitoring_grafana_admin_password="long enough\nsecond line"),
     H + "monitoring_grafana_admin_password: must be on one line (the value is not shown)"),
    ({"monitoring_grafana": "yes"}, H + "monitoring_grafana: must be true or false (got 'yes')"),
    ({"monitoring_grafana_port": 9090},
     H + "monitoring_prometheus_port, monitoring_grafana_port: must be different ports (all are 9090)"),
    ({"monitoring_grafana_admin_user": "grafana admin"},
     H + "monitoring_grafana_admin_user: must be one word without blanks, quotes, #, \\, comma or = "
         "(got 'grafana admin')"),
    ({"monitoring_grafana_folder": " "}, H + "monitoring_grafana_folder: must be a folder name (got ' ')"),
    ({"monitoring_grafana_dashboard_urls": {"name": "x"}},
     H + "monitoring_grafana_dashboard_urls: must be a list of {name, url, checksum} (got {'name': 'x'})"),
    ({"monitoring_grafana_dashboard_urls": [{"name": "x"}]},
     H + "monitoring_grafana_dashboard_urls[0]: must be a mapping with the keys name, url and (optional) checksum "
         "(got {'name': 'x'})"),
    ({"monitoring_grafana_dashboard_urls": [{"name": "Node Exporter", "url": "http://m/1860.json"}]},
     H + "monitoring_grafana_dashboard_urls[0].name: must be a file name of lowercase letters, digits, _ and - "
         "(got 'Node Exporter')"),
    ({"monitoring_grafana_dashboard_urls": [{"name": "gpucluster-gpu-health", "url": "http://m/x.json"}]},
     H + "monitoring_grafana_dashboard_urls[0].name: gpucluster-gpu-health is the role's own dashboard"),
    ({"monitoring_grafana_dashboard_urls": [{"name": "x", "url": "ftp://m/x.json"}]},
     H + "monitoring_grafana_dashboard_urls[0].url: must be a http:// or https:// URL (got 'ftp://m/x.json')"),
    ({"monitoring_grafana_dashboard_urls": [{"name": "x", "url": "http://m/x.json", "checksum": "md5:abc"}]},
     H + "monitoring_grafana_dashboard_urls[0].checksum: must be empty or sha256:<hex> or sha512:<hex> "
         "(got 'md5:abc')"),
    ({"monitoring_grafana_dashboard_urls": [{"name": "x", "url": "http://m/1.json"}, {"name": "x", "url": "http://m/2.json"}]},
     H + "monitoring_grafana_dashboard_urls: the dashboard name 'x' is used twice"),
])
def test_bad_values(values, message):
    assert errors(**values) == [message]


def test_every_error_at_once_over_hosts():
    hosts = {"master": {"monitoring_prometheus_port": "9090"}, "worker1": {"monitoring_node_exporter_port": 70000}}
    assert monitoring_errors(host_values(hosts, ["master", "worker1"], DEFAULTS, DEFAULTS), ["master", "worker1"]) == [
        "host 'master': monitoring_prometheus_port: must be an integer (got '9090')",
        "host 'worker1': monitoring_node_exporter_port: must be within 1-65535 (got 70000)",
    ]


def test_the_monitoring_hosts_come_from_the_groups():
    # The common input check's entry: each host's groups from the inventory's, so that Grafana's admin
    # password is required on the monitoring hosts only.
    given = RoleInput(hosts={"master": DEFAULTS, "worker1": DEFAULTS}, shared=DEFAULTS,
                      groups={"all": ["master", "worker1"], "monitoring": ["master"]})
    assert input_errors(given) == [H + "monitoring_grafana_admin_password: must be set (a string of at least 8 "
                                       "characters; the value is not shown)"]


# ----------------------------------------------------------------------------- scrape jobs

GROUPS = {"all": ["master", "worker1", "worker2", "cpu1"], "cluster": ["master", "worker1", "worker2", "cpu1"],
          "monitoring": ["master"]}


def jobs(hostvars, groups=None):
    groups = groups or GROUPS
    return {job["job_name"]: job for job in
            scrape_configs(per_host(hostvars, groups["all"], DEFAULTS), hostvars, groups, "master")}


def targets(job):
    return [(c["targets"][0], c["labels"]["node"]) for c in job["static_configs"]]


def test_scrape_jobs_from_the_inventory():
    # worker2 did not answer this run: its GPUs are known from the fact cache, and it keeps its targets.
    hostvars = {"master": {"gpucluster_gpu_node": True}, "worker1": {"monitoring_scrape_address": "10.0.0.11"},
                "worker2": {"ansible_facts": {"nvidia": {"gpu_count": 0, "pci": {"gpu_count": 8}}}},
                "cpu1": {"monitoring_node_exporter_port": 9111}}
    found = jobs(hostvars, dict(GROUPS, gpucluster_gpu_nodes=["master", "worker1"]))
    assert list(found) == ["prometheus", "alertmanager", "node", "dcgm"]
    assert targets(found["prometheus"]) == [("localhost:9090", "master")]
    assert targets(found["alertmanager"]) == [("master:9093", "master")]
    assert targets(found["node"]) == [("cpu1:9111", "cpu1"), ("master:9100", "master"), ("10.0.0.11:9100", "worker1"),
                                      ("worker2:9100", "worker2")]
    assert targets(found["dcgm"]) == [("master:9400", "master"), ("10.0.0.11:9400", "worker1"),
                                      ("worker2:9400", "worker2")]


@pytest.mark.parametrize("servers, hostvars, expected", [
    (["master"], {}, []),
    (["master", "mon2", "mon3"], {}, ["mon2:9094", "mon3:9094"]),
    # Each peer at its own address and its own cluster port, not the asking host's.
    (["master", "mon2"], {"mon2": {"monitoring_scrape_address": "10.0.0.2", "monitoring_alertmanager_cluster_port": 9194}},
     ["10.0.0.2:9194"]),
])
def test_alertmanager_peers(servers, hostvars, expected):
    hosts = sorted(set(servers) | {"master"})
    values = per_host({h: hostvars.get(h, {}) for h in hosts}, hosts, DEFAULTS)
    assert alertmanager_peers(values, {"monitoring": servers}, "master") == expected


@pytest.mark.parametrize("version, expected", [
    ("", [{"name": "datacenter-gpu-manager-4-core", "version": "", "spec": "datacenter-gpu-manager-4-core"},
          {"name": "datacenter-gpu-manager-exporter", "version": "", "spec": "datacenter-gpu-manager-exporter"}]),
    ("4.1.3-1", [{"name": "datacenter-gpu-manager-4-core", "version": "", "spec": "datacenter-gpu-manager-4-core"},
                 {"name": "datacenter-gpu-manager-exporter", "version": "4.1.3-1",
                  "spec": "datacenter-gpu-manager-exporter=4.1.3-1"}]),
])
def test_one_package_at_its_pin(version, expected):
    packages = ["datacenter-gpu-manager-4-core", "datacenter-gpu-manager-exporter"]
    assert pinned_packages(packages, "datacenter-gpu-manager-exporter", version) == expected


def test_extra_jobs_follow_and_a_cpu_only_cluster_has_no_dcgm_job():
    extra = {"job_name": "ipmi", "static_configs": [{"targets": ["bmc:9290"]}]}
    found = jobs({"master": {"monitoring_prometheus_extra_scrape_configs": [extra]}})
    assert list(found) == ["prometheus", "alertmanager", "node", "ipmi"]
    assert found["ipmi"] == extra


@pytest.mark.parametrize("values, groups, expected", [
    ({}, {"gpucluster_gpu_nodes": ["n1"]}, True),
    ({"gpucluster_gpu_node": False}, {}, False),
    ({"gpucluster_gpu_node": True}, {}, True),
    ({"ansible_facts": {"nvidia": {"gpu_count": 8, "pci": {"gpu_count": 8}}}}, {}, True),
    ({"ansible_facts": {"nvidia": {"gpu_count": 0, "pci": {"gpu_count": 0}}}}, {}, False),
    ({}, {}, False),
])
def test_gpu_nodes(values, groups, expected):
    assert is_gpu_node("n1", {"n1": values}, groups) is expected


def test_gpu_node_flag_must_be_a_boolean():
    with pytest.raises(RuleError) as exc:
        is_gpu_node("n1", {"n1": {"gpucluster_gpu_node": "yes"}}, {})
    assert str(exc.value) == "host 'n1': gpucluster_gpu_node must be true or false (got 'yes')"


# ----------------------------------------------------------------------------- counters file

def test_counters_file_turns_the_error_fields_on_and_adds_the_extra_ones():
    text = counters_csv([{"field": "DCGM_FI_PROF_SM_ACTIVE", "type": "gauge", "help": "SM active."}])
    lines = text.splitlines()
    assert lines[0].startswith("#")
    rows = [tuple(part.strip() for part in line.split(",", 2)) for line in lines[1:]]
    assert rows[-1] == ("DCGM_FI_PROF_SM_ACTIVE", "gauge", "SM active.")
    fields = [row[0] for row in rows]
    for field in ("DCGM_FI_DEV_XID_ERRORS", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "DCGM_FI_DEV_ROW_REMAP_FAILURE",
                  "DCGM_FI_DEV_ROW_REMAP_PENDING", "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL",
                  "DCGM_FI_DEV_THERMAL_VIOLATION", "DCGM_FI_DEV_POWER_VIOLATION", "DCGM_FI_DEV_RETIRED_DBE"):
        assert field in fields
    assert len(fields) == len(set(fields))


def _root():
    path = os.path.dirname(os.path.abspath(__file__))
    while not os.path.isfile(os.path.join(path, "galaxy.yml")):
        path = os.path.dirname(path)
    return path


def test_every_dcgm_metric_the_rules_read_is_exported():
    with open(os.path.join(_root(), "roles", "monitoring", "files", "gpucluster.rules.yml"), encoding="utf-8") as handle:
        used = set(re.findall(r"\bDCGM_FI_[A-Z0-9_]+", handle.read()))
    assert used
    assert sorted(used - {row[0] for row in DCGM_COUNTERS}) == []


# NVIDIA's own counters files (../shared/monitoring, beside the checkout in CI) list every field
# the role turns on, commented out or not; DCGM_FI_DEV_ROW_REMAP_PENDING is a DCGM field that
# neither file lists.
NOT_IN_NVIDIA_FILES = {"DCGM_FI_DEV_ROW_REMAP_PENDING"}


def test_every_field_is_one_of_nvidias():
    folder = os.path.join(os.path.realpath(_root()), "..", "shared", "monitoring")
    if not os.path.isdir(folder):
        pytest.skip("../shared/monitoring is not beside the checkout")
    known = set()
    for name in ("dcgm-exporter-default-counters.csv", "dcgm-exporter-dcp-metrics-included.csv"):
        with open(os.path.join(folder, name), encoding="utf-8") as handle:
            known |= set(re.findall(r"^#?\s*(DCGM_[A-Z0-9_]+)\s*,", handle.read(), re.M))
    assert sorted({row[0] for row in DCGM_COUNTERS} - known - NOT_IN_NVIDIA_FILES) == []


# --- Grafana dashboards: every query, ready to ask Prometheus

def _dashboard(path):
    with open(os.path.join(_root(), *path), encoding="utf-8") as handle:
        return json.load(handle)


OWN = ("roles", "monitoring", "files", "dashboards", "gpucluster-gpu-health.json")
NVIDIA = ("tests", "unit", "fixtures", "dcgm-exporter", "dcgm-exporter-dashboard.json")


def test_nvidias_dashboard_queries_with_all_selected():
    queries = dashboard_queries(_dashboard(NVIDIA))
    assert queries[:2] == [{"panel": "variable instance", "label": "instance", "expr": "DCGM_FI_DEV_GPU_TEMP"},
                           {"panel": "variable gpu", "label": "gpu", "expr": "DCGM_FI_DEV_GPU_TEMP"}]
    assert queries[2] == {"panel": "GPU Temperature", "label": "",
                          "expr": 'DCGM_FI_DEV_GPU_TEMP{instance=~".+", gpu=~".+"}'}
    assert len(queries) == 2 + 8


def test_the_collections_dashboard_queries():
    board = _dashboard(OWN)
    queries = dashboard_queries(board)
    assert [q["panel"] for q in queries[:2]] == ["variable node", "variable job"]
    assert queries[1] == {"panel": "variable job", "label": "hpc_job", "expr": 'DCGM_FI_DEV_GPU_UTIL{node=~".+"}'}
    assert [q["expr"] for q in queries if "$" in q["expr"] or "[[" in q["expr"]] == []
    # Every panel but the rows has a query; the Slurm job filter's All keeps series without a job.
    panels = [p for p in board["panels"] if p["type"] != "row"]
    assert {q["panel"] for q in queries[2:]} == {p["title"] for p in panels}
    assert all('hpc_job=~".*"' in q["expr"] for q in queries if "DCGM_FI_DEV_XID_ERRORS" in q["expr"])


def test_every_metric_of_the_collections_dashboard_is_exported_or_the_roles():
    text = json.dumps(_dashboard(OWN))
    assert sorted(set(re.findall(r"\bDCGM_FI_[A-Z0-9_]+", text)) - {row[0] for row in DCGM_COUNTERS}) == []
    with open(os.path.join(_root(), "roles", "monitoring", "files", "gpucluster.rules.yml"), encoding="utf-8") as handle:
        alerts = set(re.findall(r"alert: (\w+)", handle.read()))
    named = set(re.findall(r"alerts? ([A-Z][A-Za-z]+)", text)) | set(re.findall(r", ([A-Z][a-z]+[A-Z][A-Za-z]+)\)", text))
    assert named and sorted(named - alerts) == []


def board(panels, variables=()):
    return {"uid": "b", "title": "B", "templating": {"list": list(variables)}, "panels": panels}


def test_rows_variable_forms_and_builtin_intervals():
    variables = [{"name": "node", "type": "query", "query": "label_values(up, node)", "allValue": ".*"},
                 {"name": "ds", "type": "datasource", "query": "prometheus"},
                 {"name": "step", "type": "constant", "query": "5m"}]
    panels = [{"type": "row", "title": "r", "panels": [
        {"title": "p", "targets": [{"expr": 'rate(x{node=~"${node:regex}"}[$__rate_interval])'},
                                   {"expr": 'y{node=~"[[node]]"}[$step]'}, {"refId": "C"}]}]}]
    assert dashboard_queries(board(panels, variables)) == [
        {"panel": "variable node", "label": "node", "expr": "up"},
        {"panel": "p", "label": "", "expr": 'rate(x{node=~".*"}[1m])'},
        {"panel": "p", "label": "", "expr": 'y{node=~".*"}[5m]'}]


def test_a_label_values_variable_without_a_metric_asks_for_the_label():
    variables = [{"name": "job", "type": "query", "query": {"query": "label_values(hpc_job)", "refId": "A"}}]
    assert dashboard_queries(board([], variables)) == [
        {"panel": "variable job", "label": "hpc_job", "expr": '{hpc_job!=""}'}]


@pytest.mark.parametrize("dashboard, message", [
    ([], "not a Grafana dashboard (a mapping with a uid and a title)"),
    ({"title": "no uid"}, "not a Grafana dashboard (a mapping with a uid and a title)"),
    (board([{"title": "Temp", "targets": [{"expr": 'x{gpu=~"$gpu"}'}]}]),
     "dashboard b panel 'Temp' uses $gpu, which is not a variable of the dashboard"),
    (board([{"title": "Temp", "targets": [{"expr": ""}]}]),
     "dashboard b: panel 'Temp': a target's expr must be a PromQL expression (got '')"),
    (board([], [{"name": "n", "type": "query", "query": "query_result(up)"}]),
     "dashboard b: variable n: only label_values() queries are supported (got 'query_result(up)')"),
    (board([], [{"name": "n", "type": "adhoc"}]), "dashboard b: variable n has the unknown type 'adhoc'"),
    (board([], [{"type": "query"}]), "dashboard b: every templating variable needs a name (got {'type': 'query'})"),
    (board({"title": "x"}), "dashboard b: panels must be a list"),
])
def test_dashboards_that_cannot_be_checked(dashboard, message):
    with pytest.raises(RuleError) as err:
        dashboard_queries(dashboard)
    assert str(err.value) == message


def test_a_dashboard_without_templating():
    assert dashboard_queries({"uid": "b", "title": "B", "templating": None,
                              "panels": [{"title": "p", "targets": [{"expr": "up"}]}]}) == [
        {"panel": "p", "label": "", "expr": "up"}]


CUDA_REPO = "https://developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64/"


@pytest.mark.parametrize("repo_url, key_url", [
    (CUDA_REPO, CUDA_REPO + "3bf863cc.pub"),
    ("http://mirror:8080/cuda/ubuntu2204/x86_64/", "file:///srv/keys/cuda.pub"),
    ("file:///srv/mirror/cuda/", "https://mirror.example.com/cuda/3bf863cc.pub"),
], ids=str)
def test_good_dcgm_repo(repo_url, key_url):
    assert dcgm_repo_errors({"monitoring_dcgm_exporter_repo_url": repo_url,
                             "monitoring_dcgm_exporter_repo_key_url": key_url}, "gpu1") == []


@pytest.mark.parametrize("repo_url, key_url, messages", [
    ("developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64/", CUDA_REPO + "3bf863cc.pub",
     ["monitoring_dcgm_exporter_repo_url: must be an http(s):// or file:// URL ending in / (got"
      " 'developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64/')"]),
    # Without the trailing /, the default key URL would be .../x86_643bf863cc.pub.
    ("https://mirror.example.com/cuda", "https://mirror.example.com/cuda3bf863cc.pub",
     ["monitoring_dcgm_exporter_repo_url: must be an http(s):// or file:// URL ending in / (got"
      " 'https://mirror.example.com/cuda')"]),
    ("https://mirror.example.com/cuda /", "mirror.example.com/cuda/3bf863cc.pub",
     ["monitoring_dcgm_exporter_repo_url: must be an http(s):// or file:// URL ending in / (got"
      " 'https://mirror.example.com/cuda /')",
      "monitoring_dcgm_exporter_repo_key_url: must be a http:// or https:// or file:// URL (got"
      " 'mirror.example.com/cuda/3bf863cc.pub')"]),
    (None, "", ["monitoring_dcgm_exporter_repo_url: must be an http(s):// or file:// URL ending in / (got None)",
                "monitoring_dcgm_exporter_repo_key_url: must be a http:// or https:// or file:// URL (got '')"]),
], ids=str)
def test_bad_dcgm_repo(repo_url, key_url, messages):
    assert dcgm_repo_errors({"monitoring_dcgm_exporter_repo_url": repo_url,
                             "monitoring_dcgm_exporter_repo_key_url": key_url}, "gpu1") == [
        "host 'gpu1': " + m for m in messages]


def test_dcgm_repo_input_must_be_a_dict():
    with pytest.raises(RuleError, match="monitoring_dcgm_repo_errors: the input must be a dict"):
        dcgm_repo_errors([CUDA_REPO], "gpu1")


RESTART_FILES = {
    "node_exporter": [["prometheus-node-exporter", "/etc/default/prometheus-node-exporter"]],
    "dcgm": [["gpucluster-dcgm-exporter", "/etc/systemd/system/gpucluster-dcgm-exporter.service"],
             ["gpucluster-dcgm-exporter", "/etc/dcgm-exporter/gpucluster-counters.csv"]],
    "server": [["prometheus", "/etc/default/prometheus"], ["prometheus-alertmanager", "/etc/default/prometheus-alertmanager"]],
    "grafana": [["grafana-server", "/etc/grafana/gpucluster.env"],
                ["grafana-server", "/etc/systemd/system/grafana-server.service.d/gpucluster.conf"],
                ["grafana-server", "/etc/grafana/provisioning/datasources/gpucluster.yaml"]],
}


def plan_input(**parts):
    """The role's defaults on a host running ``parts``; a part that does not run has its values unread."""
    runs = {part: parts.get(part, False) for part in ("node_exporter", "dcgm", "server", "grafana")}
    server = UNREAD if not runs["server"] else None
    return Unread(runs, node_exporter_port=9100, textfile_dir="/var/lib/prometheus/node-exporter",
                  node_exporter_args=parts.get("node_exporter_args", []), dcgm_exporter_port=9400,
                  prometheus_port=9090, prometheus_config=server or "/etc/prometheus/prometheus.yml",
                  storage_path=server or "/var/lib/prometheus/metrics2", retention_time=server or "30d",
                  retention_size=server or parts.get("retention_size", ""),
                  alertmanager_port=9093, alertmanager_cluster_port=9094,
                  alertmanager_config=server or "/etc/prometheus/alertmanager.yml",
                  alertmanager_storage=server or "/var/lib/prometheus/alertmanager",
                  alertmanager_peers=server or parts.get("peers", []), grafana_port=3000,
                  restart_files=Unread({part: files if runs[part] else UNREAD for part, files in RESTART_FILES.items()}))


@pytest.mark.parametrize("parts, ports, services", [
    ({}, [], []),
    ({"node_exporter": True}, ["9100/tcp"], ["prometheus-node-exporter"]),
    ({"node_exporter": True, "dcgm": True}, ["9100/tcp", "9400/tcp"],
     ["prometheus-node-exporter", "gpucluster-dcgm-exporter", "gpucluster-dcgm-exporter"]),
    ({"server": True}, ["9090/tcp", "9093/tcp", "9094/tcp", "9094/udp"], ["prometheus", "prometheus-alertmanager"]),
    ({"node_exporter": True, "server": True, "grafana": True},
     ["9100/tcp", "9090/tcp", "9093/tcp", "9094/tcp", "9094/udp", "3000/tcp"],
     ["prometheus-node-exporter", "prometheus", "prometheus-alertmanager", "grafana-server", "grafana-server",
      "grafana-server"]),
], ids=str)
def test_ports_and_restart_checks_of_the_parts_that_run(parts, ports, services):
    plan = host_plan(plan_input(**parts))
    assert plan["firewall_ports"] == ports
    assert [check["service"] for check in plan["restart_checks"]] == services


def test_the_restart_read_asks_each_service_and_file_once():
    plan = host_plan(plan_input(node_exporter=True, dcgm=True))
    assert plan["restart_checks"] == [
        {"service": "prometheus-node-exporter", "file": "/etc/default/prometheus-node-exporter"},
        {"service": "gpucluster-dcgm-exporter", "file": "/etc/systemd/system/gpucluster-dcgm-exporter.service"},
        {"service": "gpucluster-dcgm-exporter", "file": "/etc/dcgm-exporter/gpucluster-counters.csv"}]
    assert plan["restart_services"] == ["prometheus-node-exporter", "gpucluster-dcgm-exporter"]
    assert plan["restart_files"] == ["/etc/default/prometheus-node-exporter",
                                     "/etc/systemd/system/gpucluster-dcgm-exporter.service",
                                     "/etc/dcgm-exporter/gpucluster-counters.csv"]


def test_nothing_to_read_where_nothing_runs():
    plan = host_plan(plan_input())
    assert (plan["restart_checks"], plan["restart_services"], plan["restart_files"]) == ([], [], [])


@pytest.mark.parametrize("parts, expected", [
    ({}, {"node_exporter": [], "prometheus": [], "alertmanager": []}),
    ({"node_exporter": True, "node_exporter_args": ["--collector.systemd"]},
     {"node_exporter": ["--web.listen-address=:9100", "--collector.textfile.directory=/var/lib/prometheus/node-exporter",
                        "--collector.systemd"],
      "prometheus": [], "alertmanager": []}),
    # A single monitoring host: no gossip.
    ({"server": True},
     {"node_exporter": [],
      "prometheus": ["--config.file=/etc/prometheus/prometheus.yml", "--web.listen-address=:9090",
                     "--storage.tsdb.path=/var/lib/prometheus/metrics2", "--storage.tsdb.retention.time=30d"],
      "alertmanager": ["--config.file=/etc/prometheus/alertmanager.yml", "--storage.path=/var/lib/prometheus/alertmanager",
                       "--web.listen-address=:9093", "--cluster.listen-address="]}),
    ({"server": True, "retention_size": "500GB", "peers": ["mon2:9094", "10.0.0.3:9194"]},
     {"node_exporter": [],
      "prometheus": ["--config.file=/etc/prometheus/prometheus.yml", "--web.listen-address=:9090",
                     "--storage.tsdb.path=/var/lib/prometheus/metrics2", "--storage.tsdb.retention.time=30d",
                     "--storage.tsdb.retention.size=500GB"],
      "alertmanager": ["--config.file=/etc/prometheus/alertmanager.yml", "--storage.path=/var/lib/prometheus/alertmanager",
                       "--web.listen-address=:9093", "--cluster.listen-address=0.0.0.0:9094",
                       "--cluster.peer=mon2:9094", "--cluster.peer=10.0.0.3:9194"]}),
], ids=str)
def test_service_flags(parts, expected):
    assert service_flags(plan_input(**parts)) == expected


def test_the_host_plan_does_not_need_the_peers():
    entries = plan_input(node_exporter=True, server=True)
    entries["alertmanager_peers"] = UNREAD
    assert host_plan(entries)["firewall_ports"] == ["9100/tcp", "9090/tcp", "9093/tcp", "9094/tcp", "9094/udp"]


CHECKS = [{"service": "prometheus", "file": "/etc/default/prometheus"},
          {"service": "grafana-server", "file": "/etc/grafana/gpucluster.env"},
          {"service": "grafana-server", "file": "/etc/grafana/provisioning/datasources/gpucluster.yaml"}]
# 1714637472 is Thu 2024-05-02 08:11:12 UTC.
STARTED = "ActiveEnterTimestamp=Thu 2024-05-02 08:11:12 UTC"


@pytest.mark.parametrize("read, expected", [
    # Both started after (or in the same second as) their files last changed.
    ("%s\n\n%s\n1714637472 /etc/default/prometheus\n1714637000 /etc/grafana/gpucluster.env\n" % (STARTED, STARTED), []),
    ("%s\n\n%s\n1714637473 /etc/default/prometheus\n" % (STARTED, STARTED), ["prometheus"]),
    # A service with two changed files restarts once.
    ("%s\n\n%s\n1714637473 /etc/grafana/gpucluster.env\n1714637999 /etc/grafana/provisioning/datasources/gpucluster.yaml\n"
     % (STARTED, STARTED), ["grafana-server"]),
    ("%s\n\n%s\n1714637999 /etc/grafana/gpucluster.env\n1714637999 /etc/default/prometheus\n" % (STARTED, STARTED),
     ["prometheus", "grafana-server"]),
    # Never active (not installed yet), or no file: nothing to restart.
    ("ActiveEnterTimestamp=\n\n%s\n1714637999 /etc/default/prometheus\n" % STARTED, []),
    ("%s\n\n%s\n" % (STARTED, STARTED), []),
    # systemctl failed (no systemd): nothing is known.
    ("1714637999 /etc/default/prometheus\n", []),
    ("", []),
    # A zone other than UTC is not compared.
    ("ActiveEnterTimestamp=Thu 2024-05-02 10:11:12 CEST\n\n%s\n1714637999 /etc/default/prometheus\n" % STARTED, []),
], ids=["current", "one-stale", "once", "two-stale", "never-active", "no-files", "no-systemd", "empty", "not-utc"])
def test_stale_services(read, expected):
    assert stale_services(read, CHECKS) == expected


RECORD = {"role": "monitoring", "supported": True, "repositories": [], "files": [], "images": [],
          "distribution_packages": []}
DCGM_REPOSITORY = {"name": "cuda", "description": "NVIDIA CUDA", "url": CUDA_REPO, "key_url": CUDA_REPO + "3bf863cc.pub"}
GRAFANA_REPOSITORY = {"name": "grafana", "description": "Grafana", "url": "https://apt.grafana.com",
                      "key_url": "https://apt.grafana.com/gpg.key", "suites": ["stable"], "components": ["main"]}
DCGM_PACKAGES = [{"name": "datacenter-gpu-manager-exporter", "version": "", "spec": "datacenter-gpu-manager-exporter"}]
GRAFANA_PACKAGES = [{"name": "grafana", "version": "12.0.2", "spec": "grafana=12.0.2"}]
DASHBOARDS = [{"name": "nvidia-dcgm-exporter", "url": "https://example.com/dashboard.json", "checksum": ""}]


def artifacts_input(supported=True, node_exporter=True, dcgm=False, source="package", server=False, grafana=False):
    return Unread(supported=supported, node_exporter=node_exporter, dcgm=dcgm, dcgm_source=source, server=server,
                  grafana=grafana, dcgm_repository=DCGM_REPOSITORY if dcgm and source == "package" else UNREAD,
                  dcgm_packages=DCGM_PACKAGES if dcgm and source == "package" else UNREAD,
                  dcgm_image="nvcr.io/nvidia/k8s/dcgm-exporter:4.2.3" if dcgm and source == "container" else UNREAD,
                  grafana_repository=GRAFANA_REPOSITORY if grafana else UNREAD,
                  grafana_packages=GRAFANA_PACKAGES if grafana else UNREAD, dashboard_urls=DASHBOARDS if grafana else UNREAD,
                  node_exporter_package="prometheus-node-exporter" if supported and node_exporter else UNREAD,
                  server_packages=["prometheus", "prometheus-alertmanager"] if supported and server else UNREAD)


@pytest.mark.parametrize("entries, expected", [
    (artifacts_input(), dict(RECORD, distribution_packages=["prometheus-node-exporter"])),
    (artifacts_input(supported=False, server=True), dict(RECORD, supported=False)),
    (artifacts_input(node_exporter=False, dcgm=True),
     dict(RECORD, repositories=[dict(DCGM_REPOSITORY, packages=DCGM_PACKAGES, pins=[])])),
    (artifacts_input(dcgm=True, source="container"),
     dict(RECORD, images=["nvcr.io/nvidia/k8s/dcgm-exporter:4.2.3"], distribution_packages=["prometheus-node-exporter"])),
    (artifacts_input(server=True, grafana=True),
     dict(RECORD, repositories=[dict(GRAFANA_REPOSITORY, packages=GRAFANA_PACKAGES, pins=[])], files=DASHBOARDS,
          distribution_packages=["prometheus-node-exporter", "prometheus", "prometheus-alertmanager"])),
    (artifacts_input(dcgm=True, server=True, grafana=True),
     dict(RECORD, repositories=[dict(DCGM_REPOSITORY, packages=DCGM_PACKAGES, pins=[]),
                                dict(GRAFANA_REPOSITORY, packages=GRAFANA_PACKAGES, pins=[])], files=DASHBOARDS,
          distribution_packages=["prometheus-node-exporter", "prometheus", "prometheus-alertmanager"])),
], ids=["node", "unsupported", "dcgm-package", "dcgm-container", "server-grafana", "all"])
def test_artifacts(entries, expected):
    assert artifacts(entries) == expected


# --- Least exposure: listen addresses, the web configuration (TLS, basic auth) and what follows it

HASH = "$2y$10$" + "a" * 53
CERT = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
KEY = "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n"


@pytest.mark.parametrize("values", [
    {"monitoring_listen_address": "10.0.0.1", "monitoring_network": "compute"},
    {"monitoring_listen_address": "fd00::1"},
    {"monitoring_web_tls_cert": CERT, "monitoring_web_tls_key": KEY, "monitoring_web_tls_ca": CERT},
    {"monitoring_web_tls_key": "-----BEGIN EC PRIVATE KEY-----\nMHc\n-----END EC PRIVATE KEY-----"},
    {"monitoring_web_users": {"prometheus": HASH, "admin@site": "$2b$12$" + "B" * 53}, "monitoring_web_scrape_user": "prometheus",
     "monitoring_web_scrape_password": "s3cret", "group_names": ["cluster", "monitoring"], "monitoring_grafana": False},
    # A host that runs no Prometheus needs no password.
    {"monitoring_web_users": {"prometheus": HASH}, "monitoring_web_scrape_user": "prometheus"},
], ids=str)
def test_good_exposure_settings(values):
    if "monitoring_web_tls_key" in values and "monitoring_web_tls_cert" not in values:
        values = dict(values, monitoring_web_tls_cert=CERT)
    assert errors(**values) == []


@pytest.mark.parametrize("values, expected", [
    ({"monitoring_listen_address": "master"},
     [H + "monitoring_listen_address: must be empty (every interface) or an IP address of this host (got 'master')"]),
    ({"monitoring_network": "man agement"},
     [H + "monitoring_network: must be one word without blanks, quotes, #, \\, comma or = (got 'man agement')"]),
    ({"monitoring_web_tls_cert": CERT},
     [H + "monitoring_web_tls_key: must be set with monitoring_web_tls_cert (both or neither)"]),
    ({"monitoring_web_tls_key": KEY},
     [H + "monitoring_web_tls_cert: must be set with monitoring_web_tls_key (both or neither)"]),
    ({"monitoring_web_tls_cert": "cert.pem", "monitoring_web_tls_key": "secret-key-text", "monitoring_web_tls_ca": "ca"},
     [H + "monitoring_web_tls_cert: must be a PEM certificate (-----BEGIN CERTIFICATE-----...)",
      H + "monitoring_web_tls_key: must be a PEM private key (-----BEGIN PRIVATE KEY-----...; the value is not shown)",
      H + "monitoring_web_tls_ca: must be empty (the system's CAs) or a PEM certificate (-----BEGIN CERTIFICATE-----...)"]),
    ({"monitoring_web_users": {"prometheus": "plain-password"}, "monitoring_web_scrape_user": "prometheus"},
     [H + "monitoring_web_users[prometheus]: must be a bcrypt hash ($2y$..., htpasswd -nBC 10 USER) (the value is not shown)"]),
    ({"monitoring_web_users": {"a b": HASH}, "monitoring_web_scrape_user": "a b"},
     [H + "monitoring_web_users: the user name 'a b' must be letters, digits, _ . @ or -"]),
    ({"monitoring_web_users": {"prometheus": HASH}},
     [H + "monitoring_web_scrape_user: must be one of monitoring_web_users (prometheus) (got '')"]),
    ({"monitoring_web_users": {"prometheus": HASH}, "monitoring_web_scrape_user": "prometheus",
      "group_names": ["cluster", "monitoring"], "monitoring_grafana": False},
     [H + "monitoring_web_scrape_password: must be set (a string of at least 1 characters; the value is not shown)"]),
    ({"monitoring_web_users": ["prometheus"]},
     [H + "monitoring_web_users: must map user names to bcrypt hashes (the value is not shown)"]),
], ids=str)
def test_bad_exposure_settings(values, expected):
    assert errors(**values) == expected


def test_tls_and_basic_auth_on_every_host_or_none():
    hosts = {"master": {"monitoring_web_tls_cert": CERT, "monitoring_web_tls_key": KEY,
                        "monitoring_web_users": {"p": HASH}, "monitoring_web_scrape_user": "p"},
             "worker1": {}, "worker2": {"monitoring_web_users": {"p": HASH}, "monitoring_web_scrape_user": "p"}}
    values = host_values(hosts, list(hosts), list(DEFAULTS) + ["group_names"], DEFAULTS)
    assert monitoring_errors(values, list(hosts)) == [
        "monitoring_web_tls_cert: TLS must be on every host or on none (on: master; off: worker1, worker2)",
        "monitoring_web_users: basic auth must be on every host or on none (on: master, worker2; off: worker1)"]


def test_targets_at_the_listen_addresses():
    # master (the monitoring host) listens on its own address (its defaults, templated there); worker1 on
    # its base_os address on the management network; worker2's inventory sets one; cpu1 knows none.
    defaults = dict(DEFAULTS, monitoring_listen_address="10.1.0.10", monitoring_network="management")
    hostvars = {"master": {"base_os_addresses": {"management": "10.1.0.10"}},
                "worker1": {"base_os_addresses": {"management": "10.1.0.11", "compute": "10.2.0.11"}},
                "worker2": {"monitoring_listen_address": "fd00::12"},
                "cpu1": {}}
    configs = scrape_configs(per_host(hostvars, GROUPS["all"], defaults), hostvars, dict(GROUPS, gpucluster_gpu_nodes=["worker1"]),
                             "master")
    found = {job["job_name"]: job for job in configs}
    assert targets(found["prometheus"]) == [("10.1.0.10:9090", "master")]
    assert targets(found["alertmanager"]) == [("10.1.0.10:9093", "master")]
    assert targets(found["node"]) == [("cpu1:9100", "cpu1"), ("10.1.0.10:9100", "master"), ("10.1.0.11:9100", "worker1"),
                                      ("[fd00::12]:9100", "worker2")]
    assert targets(found["dcgm"]) == [("10.1.0.11:9400", "worker1")]
    assert all(set(job) == {"job_name", "static_configs"} for job in found.values())


def test_a_host_on_another_network():
    hostvars = {"worker1": {"base_os_addresses": {"management": "10.1.0.11", "compute": "10.2.0.11"},
                            "monitoring_network": "compute"}}
    found = jobs(hostvars)
    assert ("10.2.0.11:9100", "worker1") in targets(found["node"])


@pytest.mark.parametrize("web, expected", [
    ({"monitoring_web_tls_cert": CERT, "monitoring_web_tls_ca": CERT},
     {"scheme": "https", "tls_config": {"ca_file": "/etc/gpucluster/web/ca.crt"}}),
    ({"monitoring_web_tls_cert": CERT}, {"scheme": "https", "tls_config": {}}),
    ({"monitoring_web_users": {"prometheus": HASH}, "monitoring_web_scrape_user": "prometheus"},
     {"basic_auth": {"username": "prometheus", "password_file": "/etc/gpucluster/web/scrape.password"}}),
], ids=str)
def test_scrape_jobs_follow_the_web_configuration(web, expected):
    paths = {"ca_file": "/etc/gpucluster/web/ca.crt", "password_file": "/etc/gpucluster/web/scrape.password"}
    extra = {"job_name": "ipmi", "static_configs": [{"targets": ["bmc:9290"]}]}
    hostvars = {"master": dict(web, monitoring_prometheus_extra_scrape_configs=[extra])}
    found = scrape_configs(per_host(hostvars, GROUPS["all"], DEFAULTS), hostvars, GROUPS, "master", paths)
    for job in found[:-1]:
        assert {k: v for k, v in job.items() if k not in ("job_name", "static_configs")} == expected
    # The site's own jobs stay as it wrote them.
    assert found[-1] == extra


def test_alertmanager_peers_at_their_listen_addresses():
    hostvars = {"master": {}, "mon2": {"base_os_addresses": {"management": "10.1.0.2"}}, "mon3": {}}
    values = per_host(hostvars, list(hostvars), DEFAULTS)
    assert alertmanager_peers(values, {"monitoring": list(hostvars)}, "master", hostvars) == ["10.1.0.2:9094", "mon3:9094"]


@pytest.mark.parametrize("listen, web, expected", [
    ("10.1.0.10", "",
     {"node_exporter": ["--web.listen-address=10.1.0.10:9100",
                        "--collector.textfile.directory=/var/lib/prometheus/node-exporter"],
      "prometheus": ["--config.file=/etc/prometheus/prometheus.yml", "--web.listen-address=10.1.0.10:9090",
                     "--storage.tsdb.path=/var/lib/prometheus/metrics2", "--storage.tsdb.retention.time=30d"],
      "alertmanager": ["--config.file=/etc/prometheus/alertmanager.yml", "--storage.path=/var/lib/prometheus/alertmanager",
                       "--web.listen-address=10.1.0.10:9093", "--cluster.listen-address=10.1.0.10:9094",
                       "--cluster.peer=mon2:9094"]}),
    ("fd00::10", "/etc/gpucluster/web/web-config.yml",
     {"node_exporter": ["--web.listen-address=[fd00::10]:9100",
                        "--collector.textfile.directory=/var/lib/prometheus/node-exporter",
                        "--web.config.file=/etc/gpucluster/web/web-config.yml"],
      "prometheus": ["--config.file=/etc/prometheus/prometheus.yml", "--web.listen-address=[fd00::10]:9090",
                     "--storage.tsdb.path=/var/lib/prometheus/metrics2", "--storage.tsdb.retention.time=30d",
                     "--web.config.file=/etc/gpucluster/web/web-config.yml"],
      "alertmanager": ["--config.file=/etc/prometheus/alertmanager.yml", "--storage.path=/var/lib/prometheus/alertmanager",
                       "--web.listen-address=[fd00::10]:9093", "--web.config.file=/etc/gpucluster/web/web-config.yml",
                       "--cluster.listen-address=[fd00::10]:9094", "--cluster.peer=mon2:9094"]}),
], ids=str)
def test_flags_bind_to_the_listen_address_and_name_the_web_configuration(listen, web, expected):
    entries = plan_input(node_exporter=True, server=True, peers=["mon2:9094"])
    entries.update(listen_address=listen, web_config=web)
    assert service_flags(entries) == expected
