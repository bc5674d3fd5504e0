# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""monitoring: the shipped alert rules under promtool (Debian's own, tests/harness/promtool.sh),
the role's default Alertmanager configuration under amtool, and bad input refused before any
host is touched."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from roleplay import assert_passes_validation, assert_refused_untouched, run_role

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "roles" / "monitoring" / "files" / "gpucluster.rules.yml"
RULE_TESTS = ROOT / "tests" / "promtool" / "gpucluster.rules.test.yml"
TOOL = ROOT / "tests" / "harness" / "promtool.sh"
DASHBOARDS = [ROOT / "roles" / "monitoring" / "files" / "dashboards" / "gpucluster-gpu-health.json",
              ROOT / "tests" / "unit" / "fixtures" / "dcgm-exporter" / "dcgm-exporter-dashboard.json"]

# The collection as ansible-playbook sees it (tests/harness/setup-venv.sh links the checkout there).
sys.path.insert(0, str(ROOT / ".venv" / "collections"))
from ansible_collections.gpucluster.core.plugins.plugin_utils.monitoring._monitoring import dashboard_queries  # noqa: E402


def tool(*args, cwd=None):
    return subprocess.run(["bash", str(TOOL), *args], capture_output=True, text=True, cwd=cwd, check=False)


def test_rules_pass_promtool_check():
    result = tool("promtool", "check", "rules", str(RULES))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS: 18 rules found" in result.stdout


def test_rules_pass_their_unit_tests():
    result = tool("promtool", "test", "rules", str(RULE_TESTS))
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_alert_has_a_runbook_a_firing_and_a_quiet_case():
    rules = [r for g in yaml.safe_load(RULES.read_text(encoding="utf-8"))["groups"] for r in g["rules"]]
    assert [r["alert"] for r in rules if not r.get("annotations", {}).get("runbook")] == []
    assert [r["alert"] for r in rules if r.get("labels", {}).get("severity") not in ("warning", "critical")] == []
    cases = [c for t in yaml.safe_load(RULE_TESTS.read_text(encoding="utf-8"))["tests"] for c in t["alert_rule_test"]]
    firing = {c["alertname"] for c in cases if c["exp_alerts"]}
    quiet = {c["alertname"] for c in cases if not c["exp_alerts"]}
    names = {r["alert"] for r in rules}
    assert (sorted(names - firing), sorted(names - quiet)) == ([], [])


def test_the_unit_tests_can_fail(tmp_path):
    # The same tests over rules where XID 79 no longer needs action: promtool must say so.
    broken = tmp_path / "rules.yml"
    broken.write_text(RULES.read_text(encoding="utf-8").replace("DCGM_FI_DEV_XID_ERRORS == 79 or ", ""), encoding="utf-8")
    tests = yaml.safe_load(RULE_TESTS.read_text(encoding="utf-8"))
    tests["rule_files"] = [str(broken)]
    (tmp_path / "tests.yml").write_text(yaml.safe_dump(tests), encoding="utf-8")
    result = tool("promtool", "test", "rules", str(tmp_path / "tests.yml"))
    assert result.returncode == 1
    assert "alertname: GpuXidNeedsAction, time: 2m" in result.stdout + result.stderr


def test_default_alertmanager_configuration_passes_amtool(tmp_path):
    defaults = yaml.safe_load((ROOT / "roles" / "monitoring" / "defaults" / "main.yml").read_text(encoding="utf-8"))
    config = {"route": defaults["monitoring_alertmanager_route"],
              "receivers": defaults["monitoring_alertmanager_receivers"],
              "inhibit_rules": defaults["monitoring_alertmanager_inhibit_rules"]}
    (tmp_path / "alertmanager.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
    result = tool("amtool", "check-config", str(tmp_path / "alertmanager.yml"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Found:\n - global config\n - route\n - 1 inhibit rules\n - 1 receivers" in result.stdout


def _as_recording_rules(tmp_path, queries):
    # promtool parses every rule's expression: each query becomes a recording rule.
    rules = {"groups": [{"name": "dashboard", "rules": [{"record": "dashboard:query_%d" % index, "expr": query["expr"]}
                                                        for index, query in enumerate(queries)]}]}
    path = tmp_path / "queries.yml"
    path.write_text(yaml.safe_dump(rules), encoding="utf-8")
    return path


@pytest.mark.parametrize("dashboard", DASHBOARDS, ids=lambda p: p.stem)
def test_every_dashboard_query_parses_under_promtool(tmp_path, dashboard):
    queries = dashboard_queries(json.loads(dashboard.read_text(encoding="utf-8")))
    result = tool("promtool", "check", "rules", str(_as_recording_rules(tmp_path, queries)))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS: %d rules found" % len(queries) in result.stdout


def test_a_broken_dashboard_query_fails_promtool(tmp_path):
    queries = dashboard_queries(json.loads(DASHBOARDS[0].read_text(encoding="utf-8")))
    queries[3]["expr"] = queries[3]["expr"].replace(")", "", 1)
    result = tool("promtool", "check", "rules", str(_as_recording_rules(tmp_path, queries)))
    assert result.returncode == 1
    assert "dashboard:query_3" in result.stdout + result.stderr


HOSTS = ["master", "worker1"]
GROUPS = {"cluster": HOSTS, "monitoring": ["master"]}


def run_monitoring(tmp_path, master=None, **group_vars):
    return run_role(tmp_path, "gpucluster.core.monitoring", hosts={"master": master or {}, "worker1": {}},
                    groups=GROUPS, group_vars=group_vars)


def test_good_data_passes_preflight_validation(tmp_path):
    result = run_monitoring(tmp_path, monitoring_grafana_admin_password="pytest-only-password")
    assert_passes_validation(result, HOSTS, "monitoring_")


def test_bad_data_is_refused_before_any_host_is_contacted(tmp_path):
    result = run_monitoring(tmp_path, master={"monitoring_alertmanager_route": {"receiver": "pager"}},
                            monitoring_grafana_admin_password="pytest-only-password")
    assert_refused_untouched(
        result, "host 'master': monitoring_alertmanager_route.receiver: 'pager' is not one of "
                "monitoring_alertmanager_receivers (default)")


# --- The web configuration (TLS, basic auth) as Debian 12's Prometheus 2.42 reads it

from ansible_collections.gpucluster.core.plugins.plugin_utils.monitoring._monitoring import (  # noqa: E402
    per_host, scrape_configs)

# A bcrypt hash of a test-only password (made once; the role takes hashes as given), as molecule/exposure has it.
HASH = "$2b$10$QPT87hm9BBDbkO.wQcWvb.HWyLa1DeqYqPtQCKn6iFpHm0QqNyj5u"


def _certificate(tmp_path):
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                    "-days", "1", "-subj", "/CN=pytest", "-addext", "subjectAltName=IP:10.0.0.10",
                    "-keyout", str(tmp_path / "tls.key"), "-out", str(tmp_path / "tls.crt")],
                   check=True, capture_output=True)
    return (tmp_path / "tls.crt").read_text(encoding="utf-8"), (tmp_path / "tls.key").read_text(encoding="utf-8")


def test_the_web_configuration_passes_promtool(tmp_path):
    # The document vars/main.yml builds (__monitoring_web_document), with the files beside it.
    _certificate(tmp_path)
    config = {"tls_server_config": {"cert_file": str(tmp_path / "tls.crt"), "key_file": str(tmp_path / "tls.key")},
              "basic_auth_users": {"prometheus": HASH}}
    (tmp_path / "web-config.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
    result = tool("promtool", "check", "web-config", str(tmp_path / "web-config.yml"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stderr.strip().endswith("web-config.yml SUCCESS"), result.stderr


def test_the_scrape_jobs_with_tls_and_basic_auth_pass_promtool(tmp_path):
    cert, _key = _certificate(tmp_path)
    own = {"monitoring_server_group": "monitoring", "monitoring_scrape_group": "cluster", "monitoring_scrape_address": "",
           "monitoring_listen_address": "10.0.0.10", "monitoring_network": "management",
           "monitoring_node_exporter": True, "monitoring_node_exporter_port": 9100, "monitoring_prometheus_port": 9090,
           "monitoring_alertmanager_port": 9093, "monitoring_dcgm_exporter": True, "monitoring_dcgm_exporter_port": 9400,
           "monitoring_prometheus_extra_scrape_configs": [],
           "monitoring_web_tls_cert": cert, "monitoring_web_tls_ca": cert, "monitoring_web_users": {"prometheus": HASH},
           "monitoring_web_scrape_user": "prometheus"}
    hostvars = {"master": {}, "worker1": {"base_os_addresses": {"management": "10.0.0.11"}}}
    paths = {"ca_file": str(tmp_path / "ca.crt"), "password_file": str(tmp_path / "scrape.password")}
    jobs = scrape_configs(per_host(hostvars, HOSTS, own), hostvars, GROUPS, "master", paths)
    client = {k: v for k, v in jobs[1].items() if k not in ("job_name", "static_configs")}
    config = {"global": {"scrape_interval": "30s"}, "scrape_configs": jobs,
              "alerting": {"alertmanagers": [dict(client, static_configs=[{"targets": ["10.0.0.10:9093"]}])]}}
    (tmp_path / "prometheus.yml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    result = tool("promtool", "check", "config", "--syntax-only", str(tmp_path / "prometheus.yml"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert [[c["targets"][0] for c in job["static_configs"]] for job in jobs] == [
        ["10.0.0.10:9090"], ["10.0.0.10:9093"], ["10.0.0.10:9100", "10.0.0.11:9100"]]
    assert client == {"scheme": "https", "tls_config": {"ca_file": paths["ca_file"]},
                      "basic_auth": {"username": "prometheus", "password_file": paths["password_file"]}}


def test_a_bad_web_configuration_is_refused_before_any_host_is_contacted(tmp_path):
    result = run_monitoring(tmp_path, master={"monitoring_web_users": {"prometheus": "not-a-hash"},
                                              "monitoring_web_scrape_user": "prometheus"},
                            monitoring_grafana_admin_password="pytest-only-password")
    assert_refused_untouched(
        result, "host 'master': monitoring_web_users[prometheus]: must be a bcrypt hash ($2y$..., htpasswd -nBC 10 USER) "
                "(the value is not shown)")
    assert "not-a-hash" not in result.stdout + result.stderr
