# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Values of the wrong type are refused before any host is touched, naming the host and the variable.

Ansible's own role argument check converts these values instead of refusing them (a string passes
as a one-item list, a list or a number as a string, "6443" as an integer) while the role goes on
with the original. The common role's input_types task, first in every role's preflight, refuses
them strictly; the rules themselves (plugins/plugin_utils/common/_input_types.py) are unit tested in
tests/unit/plugins/plugin_utils/common/test_input_types.py. These runs prove the ordering: one message,
before the role's own rules, with no host contacted.
"""

from __future__ import annotations

import os
import subprocess

import pytest
import yaml

from roleplay import ROOT, assert_passes_validation, assert_refused_untouched, failure_messages, run_role

NETWORKS = [{"name": "management", "cidr": "192.168.1.0/24", "suffix": ""}]
BASE_OS_HOSTS = {"gpu01": {"base_os_addresses": {"management": "192.168.1.11"}},
                 "gpu02": {"base_os_addresses": {"management": "192.168.1.12"}}}
BASE_OS = ("base_os", {"cluster": ["gpu01", "gpu02"], "head": ["gpu01"]}, {"base_os_networks": NETWORKS})
SLURM = ("slurm", {"slurm_controller": ["ctl"], "slurm_dbd": ["ctl"], "slurm_compute": ["gpu01", "gpu02"]},
         {"slurm_dbd_password": "test-only"})
KUBERNETES = ("kubernetes", {"k8s_control_plane": ["cp1"], "k8s_workers": ["gpu01", "gpu02"]}, {})
VALIDATION = ("validation", {"cluster": ["head", "gpu01", "gpu02"], "slurm_controller": ["head"],
                             "slurm_compute": ["gpu01", "gpu02"]}, {})


def _run(tmp_path, setup, bad, hosts=None):
    role, groups, group_vars = setup
    names = hosts or sorted({h for members in groups.values() for h in members})
    host_vars = {h: dict((hosts or {}).get(h, {})) for h in names}
    host_vars["gpu01"].update(bad)
    if role == "validation":
        group_vars = dict(group_vars, validation_results_dir=str(tmp_path / "results"))
    return run_role(tmp_path, "gpucluster.core." + role, hosts=host_vars, groups=groups, group_vars=group_vars)


@pytest.mark.parametrize("setup, hosts, bad, reason", [
    pytest.param(BASE_OS, BASE_OS_HOSTS, {"base_os_time_servers": "ntp1"},
                 "base_os_time_servers: must be a list (got the string 'ntp1')", id="base_os-string-for-a-list"),
    pytest.param(SLURM, None, {"slurm_cluster_name": ["gpu", "cluster"]},
                 "slurm_cluster_name: must be a string (got a list)", id="slurm-list-for-a-string"),
    pytest.param(SLURM, None, {"slurm_extra_packages": "htop"},
                 "slurm_extra_packages: must be a list (got the string 'htop')", id="slurm-string-for-a-list"),
    # A role whose own rules run per host (set_fact): the type check comes before them.
    pytest.param(KUBERNETES, None, {"kubernetes_apiserver_port": "6443"},
                 "kubernetes_apiserver_port: must be an integer (got the string '6443'); write it without quotes"
                 " (with -e, as JSON: -e '{\"kubernetes_apiserver_port\": 6443}')",
                 id="kubernetes-string-for-an-int"),
    pytest.param(KUBERNETES, None, {"kubernetes_version": 1.3},
                 "kubernetes_version: must be a string (got the number 1.3); quote it in YAML, or end its template with | string",
                 id="kubernetes-number-for-a-string"),
    # A role whose preflight has no re-check of dropped hosts: the type check is its first task.
    pytest.param(VALIDATION, None, {"validation_gpu_count": "8"},
                 "validation_gpu_count: must be an integer (got the string '8'); write it without quotes"
                 " (with -e, as JSON: -e '{\"validation_gpu_count\": 8}')",
                 id="validation-string-for-an-int"),
])
def test_a_value_of_the_wrong_type_on_one_host_stops_every_host_untouched(tmp_path, setup, hosts, bad, reason):
    result = _run(tmp_path, setup, bad, hosts)
    expected = "%s: bad input, no host was changed: host 'gpu01': %s" % (setup[0], reason)
    assert_refused_untouched(result, expected)
    messages, _stats = failure_messages(result)
    # Once, for the host that has the value only; before the role's own rules and Ansible's own check.
    assert messages == [expected], messages


def test_the_control_good_values_of_the_same_inventory_pass(tmp_path):
    assert_passes_validation(_run(tmp_path, BASE_OS, {"base_os_time_servers": ["ntp1"]}, BASE_OS_HOSTS),
                             BASE_OS_HOSTS, "base_os_")


def test_a_typed_value_given_as_key_value_extra_vars_is_refused_with_its_json_form(tmp_path):
    # `-e name=value` always gives a string; the JSON form keeps the type (and passes, as the control shows).
    role, groups, group_vars = SLURM
    hosts = {h: {} for h in ("ctl", "gpu01", "gpu02")}
    result = run_role(tmp_path, "gpucluster.core.slurm", hosts=hosts, groups=groups, group_vars=group_vars,
                      extra_args=["-e", "slurm_install_recommends=false"])
    reason = ("slurm_install_recommends: must be true or false (got the string 'false'); write true or false"
              " without quotes (with -e, as JSON: -e '{\"slurm_install_recommends\": false}')")
    expected = "slurm: bad input, no host was changed: " + "; ".join(
        "host '%s': %s" % (host, reason) for host in hosts)
    assert_refused_untouched(result, expected)
    assert failure_messages(result)[0] == [expected]
    control = run_role(tmp_path, "gpucluster.core.slurm", hosts=hosts, groups=groups, group_vars=group_vars,
                       extra_args=["-e", '{"slurm_install_recommends": false}'])
    assert_passes_validation(control, hosts, "slurm_")


def test_a_host_that_dropped_out_before_the_role_is_checked_too(tmp_path):
    # gpu02 fails before the role (a sick node); its value of the wrong type still stops the others.
    role, groups, group_vars = SLURM
    hosts = {"ctl": {}, "gpu01": {}, "gpu02": {"slurm_node_features": "a100"}}
    inventory = {"all": {
        "hosts": {h: {"ansible_connection": "community.docker.docker", "ansible_host": "gpc-absent-it-" + h, **v}
                  for h, v in hosts.items()},
        "vars": group_vars,
        "children": {g: {"hosts": {h: None for h in members}} for g, members in groups.items()}}}
    (tmp_path / "inventory.yml").write_text(yaml.safe_dump(inventory))
    (tmp_path / "play.yml").write_text(
        "- name: A sick node, then the role\n  hosts: all\n  gather_facts: false\n  tasks:\n"
        "    - name: Fail gpu02 as a sick node would\n      ansible.builtin.fail:\n        msg: sick\n"
        "      when: inventory_hostname == 'gpu02'\n"
        "    - name: Apply the role\n      ansible.builtin.include_role:\n        name: gpucluster.core.slurm\n")
    env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_STDOUT_CALLBACK="json", ANSIBLE_RETRY_FILES_ENABLED="0", ANSIBLE_CACHE_PLUGIN="memory",
               ANSIBLE_PIPELINING="0")
    result = subprocess.run(["ansible-playbook", "-i", str(tmp_path / "inventory.yml"), str(tmp_path / "play.yml")],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)
    expected = ("slurm: bad input, no host was changed: host 'gpu02': slurm_node_features: must be a list"
                " (got the string 'a100')")
    messages, stats = failure_messages(result)
    assert messages == ["sick", expected], messages
    assert {host: (counts["unreachable"], counts["changed"]) for host, counts in stats.items()} == {
        host: (0, 0) for host in hosts}
