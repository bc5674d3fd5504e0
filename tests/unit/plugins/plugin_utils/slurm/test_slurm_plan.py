# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The slurm role's plan: slurm.conf's and cgroup.conf's settings, the directories, ports, packages,
slurmd's options and the accounting commands, as the role's Jinja computed them before (the expected
values are what that Jinja gave for the same inputs)."""

from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpucluster.core.plugins.filter.slurm import FilterModule
from ansible_collections.gpucluster.core.plugins.plugin_utils.slurm._plan import plan
from ansible_collections.gpucluster.core.tests.unit.plugins.plugin_utils.failures import message_of

# The role's vars/main.yml and Debian.yml, with the defaults of defaults/main.yml.
DEFAULTS = {
    "ClusterName": "gpucluster", "SlurmUser": "slurm", "AuthType": "auth/munge", "CryptoType": "crypto/munge",
    "SlurmctldPort": 6817, "SlurmdPort": 6818, "StateSaveLocation": "/var/lib/slurm/slurmctld",
    "SlurmdSpoolDir": "/var/lib/slurm/slurmd", "SlurmctldPidFile": "/run/slurmctld.pid", "SlurmdPidFile": "/run/slurmd.pid",
    "SlurmctldLogFile": "/var/log/slurm/slurmctld.log", "SlurmdLogFile": "/var/log/slurm/slurmd.log",
    "SchedulerType": "sched/backfill", "SelectType": "select/cons_tres", "SelectTypeParameters": "CR_Core_Memory",
    "ProctrackType": "proctrack/cgroup", "TaskPlugin": "task/cgroup,task/affinity", "ReturnToService": 1, "MpiDefault": "none",
    "SwitchType": "switch/none", "SlurmctldTimeout": 120, "SlurmdTimeout": 300, "InactiveLimit": 0, "MinJobAge": 300,
    "KillWait": 30, "Waittime": 0, "JobCompType": "jobcomp/none", "JobAcctGatherType": "jobacct_gather/cgroup",
}
DROPIN = "/etc/systemd/system/slurmd.service.d/gpucluster-configless.conf"
BASE = {
    "host": "ctl1", "controllers": ["ctl1"], "computes": ["gpu01", "gpu02"], "dbds": ["ctl1"], "logins": [],
    "has_files": True, "conf_dir": "/etc/slurm", "conf_files": ["slurm-nodes.conf", "gres.conf", "slurm.conf", "cgroup.conf"],
    "dropin": DROPIN, "config_defaults": DEFAULTS,
    "cgroup_defaults": {"ConstrainCores": "yes", "ConstrainDevices": "yes", "ConstrainRAMSpace": "yes"},
    "restart_keys": ["AuthType", "PluginDir", "SlurmctldHost", "SlurmctldParameters", "SlurmctldPort", "SlurmdPort",
                     "StateSaveLocation"],
    "version_package": "slurm-client", "slurmd_env_file": "/etc/default/slurmd",
    "packages": {"common": ["munge", "slurm-client"], "controller": ["slurmctld"], "compute": ["slurmd"],
                 "dbd": ["slurmdbd", "mariadb-server", "python3-pymysql"]},
    "slurm_cluster_name": "gpucluster", "slurm_user": "slurm", "slurm_config": {}, "slurm_configless": True,
    "slurm_srun_port_range": "60001-63000", "slurm_cgroup_config": {}, "slurm_extra_packages": [], "slurm_slurmd_options": [],
    "slurm_accounting_qos": [], "slurm_accounting_accounts": [], "slurm_accounting_users": [], "slurm_firewall_manage": True,
}
ACCOUNTING = {"GresTypes": "gpu", "AccountingStorageType": "accounting_storage/slurmdbd", "AccountingStorageHost": "ctl1",
              "AccountingStorageTRES": "gres/gpu"}


def inputs(**changes):
    return dict(BASE, **changes)


def without(settings, *keys):
    return {key: value for key, value in settings.items() if key not in keys}


@pytest.mark.parametrize("changes, config", [
    # The defaults: GPUs, accounting, srun's ports, configless.
    ({}, dict(DEFAULTS, **ACCOUNTING, SrunPortRange="60001-63000", SlurmctldParameters="enable_configless")),
    # No compute node, no dbd, no srun range, not configless: the defaults alone.
    ({"computes": [], "dbds": [], "slurm_srun_port_range": "", "slurm_configless": False}, DEFAULTS),
    # slurm_config over everything; null removes a setting.
    ({"slurm_configless": False, "slurm_config": {"SchedulerType": None, "SlurmctldPort": 7000, "AccountingStorageTRES": None,
                                                  "SrunPortRange": "61000-62000"}},
     dict(without(DEFAULTS, "SchedulerType"), SlurmctldPort=7000, GresTypes="gpu", AccountingStorageType="accounting_storage/slurmdbd",
          AccountingStorageHost="ctl1", SrunPortRange="61000-62000")),
    # The first dbd host keeps the accounting.
    ({"dbds": ["dbd1", "dbd2"], "slurm_configless": False, "slurm_srun_port_range": ""},
     dict(DEFAULTS, **dict(ACCOUNTING, AccountingStorageHost="dbd1"))),
    # A health check program: its interval (given as text by a template, written as a number) and node states.
    ({"dbds": [], "computes": [], "slurm_srun_port_range": "", "slurm_configless": False,
      "slurm_health_check": {"program": "/usr/local/sbin/hc", "interval": "120", "node_state": "ANY,CYCLE"}},
     dict(DEFAULTS, HealthCheckProgram="/usr/local/sbin/hc", HealthCheckInterval=120, HealthCheckNodeState="ANY,CYCLE")),
    # No program: none of the three, whatever the interval says.
    ({"dbds": [], "computes": [], "slurm_srun_port_range": "", "slurm_configless": False,
      "slurm_health_check": {"program": "", "interval": 30, "node_state": "IDLE"}}, DEFAULTS),
    # slurm_config over them (null removes one).
    ({"dbds": [], "computes": [], "slurm_srun_port_range": "", "slurm_configless": False,
      "slurm_health_check": {"program": "/hc", "interval": 60, "node_state": "ANY"},
      "slurm_config": {"HealthCheckInterval": 300, "HealthCheckNodeState": None}},
     dict(DEFAULTS, HealthCheckProgram="/hc", HealthCheckInterval=300)),
])
def test_config(changes, config):
    assert plan(inputs(**changes))["config"] == config


@pytest.mark.parametrize("given, parameters", [
    (None, "enable_configless"),
    ("", "enable_configless"),
    ("enable_configless", "enable_configless"),
    ("enable_configless,idle_on_node_suspend", "enable_configless,idle_on_node_suspend"),
    # Empty parameters dropped, each once (compared without case, the first spelling kept), in order.
    ("a,,b,ENABLE_CONFIGLESS,a", "a,b,ENABLE_CONFIGLESS"),
    ("reboot_from_controller", "reboot_from_controller,enable_configless"),
])
def test_configless_keeps_the_given_controller_parameters(given, parameters):
    config = plan(inputs(slurm_config={"SlurmctldParameters": given}))["config"]
    assert config["SlurmctldParameters"] == parameters


def test_the_given_controller_parameters_stay_as_they_are_without_configless():
    config = plan(inputs(slurm_configless=False, slurm_config={"SlurmctldParameters": "a,,b"}))["config"]
    assert config["SlurmctldParameters"] == "a,,b"


CGROUP = {"ConstrainCores": "yes", "ConstrainDevices": "yes", "ConstrainRAMSpace": "yes"}


@pytest.mark.parametrize("given, cgroup, before", [
    # From Slurm 23.11 CgroupAutomount is defunct; before, the role sets it.
    ({}, CGROUP, dict(CGROUP, CgroupAutomount="yes")),
    ({"ConstrainRAMSpace": None, "AllowedRAMSpace": 95}, {"ConstrainCores": "yes", "ConstrainDevices": "yes", "AllowedRAMSpace": 95},
     {"CgroupAutomount": "yes", "ConstrainCores": "yes", "ConstrainDevices": "yes", "AllowedRAMSpace": 95}),
    # Given, it is written on every release; null removes it.
    ({"CgroupAutomount": "no"}, dict(CGROUP, CgroupAutomount="no"), dict(CGROUP, CgroupAutomount="no")),
    ({"CgroupAutomount": None}, CGROUP, CGROUP),
])
def test_cgroup(given, cgroup, before):
    result = plan(inputs(slurm_cgroup_config=given))
    assert (result["cgroup_config"], result["cgroup_config_before"]) == (cgroup, before)


def _dir(dest, owner):
    return {"dest": dest, "owner": owner, "group": owner, "state": "directory", "mode": "0755"}


@pytest.mark.parametrize("changes, dirs, ports, packages", [
    # Controller and dbd host.
    ({}, [_dir("/etc/slurm", "root"), _dir("/var/log/slurm", "slurm"), _dir("/var/lib/slurm/slurmctld", "slurm")],
     ["6817/tcp", "6819/tcp", "60001-63000/tcp"], ["munge", "slurm-client", "slurmctld", "slurmdbd", "mariadb-server", "python3-pymysql"]),
    # A configless compute node: no configuration directory, the drop-in's.
    ({"host": "gpu01", "has_files": False},
     [_dir("/var/log/slurm", "slurm"), _dir("/var/lib/slurm/slurmd", "root"), _dir("/etc/systemd/system/slurmd.service.d", "root")],
     ["6818/tcp", "60001-63000/tcp"], ["munge", "slurm-client", "slurmd"]),
    # A compute node with the files; the Slurm user and the state and spool directories as given.
    ({"host": "gpu01", "slurm_configless": False, "slurm_user": "slurmx", "slurm_extra_packages": ["slurm-wlm-doc"],
      "slurm_config": {"SlurmdSpoolDir": "/srv/spool", "SlurmdPort": "6999"}},
     [_dir("/etc/slurm", "root"), _dir("/var/log/slurm", "slurmx"), _dir("/srv/spool", "root")],
     ["6999/tcp", "60001-63000/tcp"], ["munge", "slurm-client", "slurmd", "slurm-wlm-doc"]),
    # A login node; and without srun's range, nothing to open there.
    ({"host": "login1", "logins": ["login1"]}, [_dir("/etc/slurm", "root"), _dir("/var/log/slurm", "slurm")],
     ["60001-63000/tcp"], ["munge", "slurm-client"]),
    ({"host": "login1", "logins": ["login1"], "slurm_srun_port_range": ""}, [_dir("/etc/slurm", "root"), _dir("/var/log/slurm", "slurm")],
     [], ["munge", "slurm-client"]),
    # A dbd host alone: srun does not run there.
    ({"host": "dbd1", "dbds": ["dbd1"], "slurm_config": {"StateSaveLocation": "/srv/state"}},
     [_dir("/etc/slurm", "root"), _dir("/var/log/slurm", "slurm")],
     ["6819/tcp"], ["munge", "slurm-client", "slurmdbd", "mariadb-server", "python3-pymysql"]),
    # A backup controller with its own state directory and port.
    ({"host": "ctl2", "controllers": ["ctl1", "ctl2"], "slurm_config": {"StateSaveLocation": "/srv/state", "SlurmctldPort": 7000},
      "slurm_srun_port_range": ""},
     [_dir("/etc/slurm", "root"), _dir("/var/log/slurm", "slurm"), _dir("/srv/state", "slurm")],
     ["7000/tcp"], ["munge", "slurm-client", "slurmctld"]),
])
def test_dirs_ports_and_packages(changes, dirs, ports, packages):
    result = plan(inputs(**changes))
    assert (result["dirs"], result["firewall_ports"], result["packages"]) == (dirs, ports, packages)


CONF_PATHS = ["/etc/slurm/slurm-nodes.conf", "/etc/slurm/gres.conf", "/etc/slurm/slurm.conf", "/etc/slurm/cgroup.conf"]


@pytest.mark.parametrize("changes, request_", [
    # The controller (and dbd host): its files and restart-only settings, no slurmd.
    ({}, {"packages": ["munge", "slurm-client", "slurmctld", "slurmdbd", "mariadb-server", "python3-pymysql"],
          "munge_key": "/etc/munge/munge.key", "version_package": "slurm-client", "services": ["munge", "slurmctld"],
          "dirs": ["/etc/slurm", "/var/log/slurm", "/var/lib/slurm/slurmctld"], "files": CONF_PATHS,
          "slurm_conf": "/etc/slurm/slurm.conf", "restart_keys": BASE["restart_keys"], "gres_conf": "/etc/slurm/gres.conf",
          "slurmd_c": False, "env_file": "", "firewall": True}),
    # A configless compute node: no files of its own, slurmd -C, the drop-in and slurmd's environment file.
    ({"host": "gpu01", "has_files": False, "slurm_firewall_manage": False},
     {"packages": ["munge", "slurm-client", "slurmd"], "munge_key": "/etc/munge/munge.key", "version_package": "slurm-client",
      "services": ["munge", "slurmd"], "dirs": ["/var/log/slurm", "/var/lib/slurm/slurmd", "/etc/systemd/system/slurmd.service.d"],
      "files": CONF_PATHS + [DROPIN], "slurm_conf": "", "restart_keys": [], "gres_conf": "", "slurmd_c": True,
      "env_file": "/etc/default/slurmd", "firewall": False}),
    # A login node with no port to open: no firewall read.
    ({"host": "login1", "logins": ["login1"], "slurm_srun_port_range": ""},
     {"packages": ["munge", "slurm-client"], "munge_key": "/etc/munge/munge.key", "version_package": "slurm-client",
      "services": ["munge"], "dirs": ["/etc/slurm", "/var/log/slurm"], "files": CONF_PATHS, "slurm_conf": "/etc/slurm/slurm.conf",
      "restart_keys": BASE["restart_keys"], "gres_conf": "/etc/slurm/gres.conf", "slurmd_c": False, "env_file": "",
      "firewall": False}),
])
def test_state_request(changes, request_):
    assert plan(inputs(**changes))["state_request"] == request_


def test_configuration_files():
    result = plan(inputs(conf_dir="/etc/slurm-llnl"))
    assert result["conf_paths"] == ["/etc/slurm-llnl/slurm-nodes.conf", "/etc/slurm-llnl/gres.conf", "/etc/slurm-llnl/slurm.conf",
                                    "/etc/slurm-llnl/cgroup.conf"]
    assert result["conf_removals"] == [{"dest": path, "state": "absent"} for path in result["conf_paths"]]


@pytest.mark.parametrize("changes, conf_server, line", [
    ({}, "ctl1:6817", 'SLURMD_OPTIONS=""'),
    ({"slurm_slurmd_options": ["-v", "--extra"]}, "ctl1:6817", 'SLURMD_OPTIONS="-v --extra"'),
    ({"host": "gpu01", "has_files": False}, "ctl1:6817", 'SLURMD_OPTIONS="--conf-server ctl1:6817"'),
    ({"host": "gpu01", "has_files": False, "controllers": ["ctl1", "ctl2"], "slurm_config": {"SlurmctldPort": 7000},
      "slurm_slurmd_options": ["-v"]}, "ctl1:7000,ctl2:7000", 'SLURMD_OPTIONS="--conf-server ctl1:7000,ctl2:7000 -v"'),
])
def test_slurmd_options(changes, conf_server, line):
    result = plan(inputs(**changes))
    assert (result["conf_server"], result["slurmd_line"]) == (conf_server, line)


ADD = ["sacctmgr", "--immediate", "add"]


def test_accounting_commands_and_the_lines_they_are_listed_with():
    result = plan(inputs(
        slurm_cluster_name="hpc1",
        slurm_accounting_qos=[{"name": "normal"}, {"name": "high", "options": {"Priority": 10, "MaxWall": "1-00:00:00"}}],
        slurm_accounting_accounts=[{"name": "physics"}, {"name": "chem", "parent": "science", "description": "Chemistry dept",
                                                         "organization": "uni"}, {"name": "bio", "description": "Bio"}],
        slurm_accounting_users=[{"name": "alice", "account": "physics"}, {"name": "bob", "account": "chem", "qos": ["normal", "high"]}],
    ))["accounting"]
    assert result == {
        "cluster_line": "cluster|hpc1",
        "qos": [{"name": "normal", "line": "qos|normal", "argv": ADD + ["qos", "normal"]},
                {"name": "high", "line": "qos|high", "argv": ADD + ["qos", "high", "Priority=10", "MaxWall=1-00:00:00"]}],
        "accounts": [
            {"name": "physics", "line": "account|physics", "argv": ADD + ["account", "physics", "Cluster=hpc1", "Parent=root"]},
            {"name": "chem", "line": "account|chem", "argv": ADD + ["account", "chem", "Cluster=hpc1", "Parent=science",
                                                                    "Description=Chemistry dept", "Organization=uni"]},
            {"name": "bio", "line": "account|bio", "argv": ADD + ["account", "bio", "Cluster=hpc1", "Parent=root", "Description=Bio"]}],
        "users": [
            {"name": "alice", "account": "physics", "line": "association|hpc1|physics|alice",
             "argv": ADD + ["user", "alice", "Account=physics", "Cluster=hpc1"]},
            {"name": "bob", "account": "chem", "line": "association|hpc1|chem|bob",
             "argv": ADD + ["user", "bob", "Account=chem", "Cluster=hpc1", "QOS=normal,high"]}],
    }


def test_no_accounting_data_means_no_commands():
    assert plan(BASE)["accounting"] == {"cluster_line": "cluster|gpucluster", "qos": [], "accounts": [], "users": []}


SLURM_PLAN = FilterModule().filters()["slurm_plan"]


@pytest.mark.parametrize("bad, message", [
    (without(BASE, "conf_dir"), "slurm_plan: the input is not of the expected shape (KeyError: 'conf_dir')"),
    (inputs(slurm_config={"StateSaveLocation": None}),
     "slurm_plan: the input is not of the expected shape (KeyError: 'StateSaveLocation')"),
])
def test_the_filter_names_input_of_the_wrong_shape(bad, message):
    assert message_of(AnsibleFilterError, SLURM_PLAN, bad) == message


def test_the_filter_is_the_plan():
    assert SLURM_PLAN(BASE) == plan(BASE)
