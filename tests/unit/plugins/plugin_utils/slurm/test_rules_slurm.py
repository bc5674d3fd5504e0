# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""slurm_errors: the slurm role's input rules, as tables of good and bad data with exact messages."""

from __future__ import annotations

import base64

import pytest

from ansible_collections.gpucluster.core.plugins.plugin_utils.common._rules import RuleError
from ansible_collections.gpucluster.core.plugins.plugin_utils.slurm._rules import slurm_errors

KEY = base64.b64encode(b"k" * 32).decode()
SECRET = "s3cret-value"

GOOD = {
    "slurm_cluster_name": "gpucluster",
    "slurm_controller_group": "slurm_controller",
    "slurm_compute_group": "slurm_compute",
    "slurm_dbd_group": "slurm_dbd",
    "slurm_login_group": "slurm_login",
    "slurm_repository": {},
    "slurm_munge_key": "",
    "slurm_config": {"SlurmctldTimeout": 60, "SlurmctldParameters": "idle_on_node_suspend", "Prolog": None},
    "slurm_partitions": [{"name": "gpu", "default": True, "max_time": "INFINITE", "state": "UP", "options": {}}],
    "slurm_cgroup_config": {},
    "slurm_dbd_password": SECRET,
    "slurm_dbd_database": "slurm_acct_db",
    "slurm_dbd_user": "slurm",
    "slurm_accounting_qos": [{"name": "gpu-long", "options": {"MaxWall": "7-00:00:00"}}],
    "slurm_accounting_accounts": [{"name": "research", "description": "ML research", "organization": "lab"}],
    "slurm_accounting_users": [{"name": "alice", "account": "research", "qos": ["normal", "gpu-long"]}],
    "slurm_srun_port_range": "60001-63000",
    "slurm_user": "slurm",
    "slurm_install_recommends": False,
    "slurm_extra_packages": [],
}
GROUPS = {"slurm_controller": ["ctl"], "slurm_dbd": ["ctl"], "slurm_compute": ["gpu01", "gpu02"],
          "a100": ["gpu02"]}
NODE = {"slurm_node_features": ["a100"], "slurm_node_weight": None, "slurm_real_memory_fraction": 0.95,
        "slurm_slurmd_options": [], "slurm_gres_type_map": {"NVIDIA A100-SXM4-80GB": "a100", "nvidia_h100_80gb_hbm3": "h100"}}


def errors(groups=None, node=None, **settings):
    hosts = {"gpu01": {**NODE, **(node or {})}, "gpu02": dict(NODE)}
    return slurm_errors({**GOOD, **settings}, hosts, GROUPS if groups is None else groups)


@pytest.mark.parametrize("settings", [
    {},
    {"slurm_munge_key": KEY},
    {"slurm_munge_key": KEY[:20] + "\n" + KEY[20:]},
    {"slurm_srun_port_range": ""},
    {"slurm_health_check_program": "/usr/local/sbin/gpucluster-healthcheck-slurm", "slurm_health_check_interval": 120,
     "slurm_health_check_node_state": "ANY,CYCLE"},
    {"slurm_health_check_program": "/hc", "slurm_health_check_interval": 1, "slurm_health_check_node_state": "idle"},
    # Without a program the other two are not read.
    {"slurm_health_check_program": "", "slurm_health_check_interval": 0, "slurm_health_check_node_state": "CYCLE"},
    {"slurm_install_recommends": True, "slurm_extra_packages": ["slurm-wlm-jwt-plugin", "python3-PyMySQL", "g++"]},
    {"slurm_repository": {"url": "https://mirror.example/slurm/", "key_url": "file:///etc/key.asc",
                          "suite": "bookworm", "components": ["main"]}},
    {"slurm_partitions": [
        {"name": "gpu", "default": True},
        {"name": "a100", "groups": ["a100"], "options": {"OverSubscribe": "NO", "PriorityTier": 2}},
    ]},
    {"slurm_dbd_password": ""},  # no accounting below: not needed
], ids=str)
def test_good_input(settings):
    groups = {**GROUPS, "slurm_dbd": []} if settings.get("slurm_dbd_password") == "" else None
    assert errors(groups=groups, **settings) == []


@pytest.mark.parametrize("settings, groups, expected", [
    ({}, {"slurm_controller": [], "slurm_compute": [], "slurm_dbd": ["a", "b"]}, [
        "slurm_controller_group: group 'slurm_controller' must have 1 or 2 hosts (found 0)",
        "slurm_compute_group: group 'slurm_compute' must have at least 1 host (found 0)",
        "slurm_dbd_group: group 'slurm_dbd' must have at most 1 host (found 2)",
    ]),
    ({}, {"slurm_controller": ["a", "b", "c"], "slurm_compute": ["n 1"], "slurm_dbd": []}, [
        "slurm_controller_group: group 'slurm_controller' must have 1 or 2 hosts (found 3)",
        "slurm_compute_group host 'n 1': must be a host name (letters, digits, - and _ in dot-separated labels) (got 'n 1')",
    ]),
    ({"slurm_partitions": []}, None, ["slurm_partitions: must be a non-empty list of partitions (got [])"]),
    ({"slurm_partitions": [{"name": "gpu", "default": True}, {"name": "gpu", "default": True}]}, None, [
        "slurm_partitions: partition name 'gpu' is used twice",
        "slurm_partitions: at most one partition may be the default (got 'gpu', 'gpu')",
    ]),
    ({"slurm_partitions": [{"name": "gpu", "groups": ["a100_nodes"]}]}, None,
     ["slurm_partitions[0].groups: group 'a100_nodes' is not in the inventory"]),
    ({"slurm_partitions": [{"name": "gpu x", "state": "OPEN", "max_time": "1 day",
                            "options": {"Over Subscribe": "NO", "Qos": "a b"}}]}, None, [
        "slurm_partitions[0].name: must be one word without blanks, quotes, #, \\, comma or = (got 'gpu x')",
        "slurm_partitions[0].max_time: must be one word without blanks, quotes, #, \\, comma or = (got '1 day')",
        "slurm_partitions[0].state: must be one of UP, DOWN, DRAIN, INACTIVE (got 'OPEN')",
        "slurm_partitions[0].options: key 'Over Subscribe' must be a Slurm option name (letters and digits)",
        "slurm_partitions[0].options.Qos: must be one word without blanks, quotes, #, \\, comma or = (got 'a b')",
    ]),
    ({"slurm_partitions": ["gpu"]}, None, ["slurm_partitions[0]: must be a dict with name (got 'gpu')"]),
    ({"slurm_srun_port_range": "63000-60001"}, None,
     ["slurm_srun_port_range: must be \"first-last\" with 1024 <= first < last <= 65535 (got '63000-60001')"]),
    ({"slurm_srun_port_range": "100-200"}, None,
     ["slurm_srun_port_range: must be \"first-last\" with 1024 <= first < last <= 65535 (got '100-200')"]),
    ({"slurm_srun_port_range": "60001"}, None, ["slurm_srun_port_range: must be \"first-last\" (got '60001')"]),
    ({"slurm_health_check_program": "gpucluster-healthcheck-slurm"}, None,
     ["slurm_health_check_program: must be an absolute path (got 'gpucluster-healthcheck-slurm')"]),
    ({"slurm_health_check_program": "/usr/local/sbin/hc", "slurm_health_check_interval": 0}, None,
     ["slurm_health_check_interval: must be within 1-86400 (got 0)"]),
    ({"slurm_health_check_program": "/usr/local/sbin/hc", "slurm_health_check_node_state": "ANY,BUSY"}, None,
     ["slurm_health_check_node_state: must be node states separated by commas, of ALLOC, ANY, CYCLE, IDLE, MIXED, "
      "NONDRAINED_IDLE (got 'ANY,BUSY')"]),
    ({"slurm_health_check_program": "/usr/local/sbin/hc", "slurm_health_check_node_state": ""}, None,
     ["slurm_health_check_node_state: must be node states separated by commas, of ALLOC, ANY, CYCLE, IDLE, MIXED, "
      "NONDRAINED_IDLE (got '')"]),
    ({"slurm_health_check_program": "/usr/local/sbin/hc", "slurm_health_check_node_state": "cycle"}, None,
     ["slurm_health_check_node_state: must name the states to check besides CYCLE, e.g. ANY,CYCLE (got 'cycle')"]),
    ({"slurm_install_recommends": "no"}, None, ["slurm_install_recommends: must be true or false (got 'no')"]),
    ({"slurm_extra_packages": "slurm-wlm-plugins"}, None,
     ["slurm_extra_packages: must be a list of package names (got 'slurm-wlm-plugins')"]),
    ({"slurm_extra_packages": ["jq", "jq", "-rf", "a b", "x;reboot", 3, ["jq"]]}, None, [
        "slurm_extra_packages[2]: must be a package name: letters, digits and + . _ - (got '-rf')",
        "slurm_extra_packages[3]: must be a package name: letters, digits and + . _ - (got 'a b')",
        "slurm_extra_packages[4]: must be a package name: letters, digits and + . _ - (got 'x;reboot')",
        "slurm_extra_packages[5]: must be a package name: letters, digits and + . _ - (got 3)",
        "slurm_extra_packages[6]: must be a package name: letters, digits and + . _ - (got ['jq'])",
        "slurm_extra_packages: package 'jq' is given twice",
    ]),
    ({"slurm_repository": {"url": "https://mirror.example/slurm/"}}, None,
     ["slurm_repository.key_url: must be a http:// or https:// or file:// URL (got None)"]),
    ({"slurm_repository": {"url": "ftp://x", "key_url": "https://k", "suite": "a b", "components": []}}, None, [
        "slurm_repository.url: must be a http:// or https:// or file:// URL (got 'ftp://x')",
        "slurm_repository.suite: must be one word without blanks, quotes, #, \\, comma or = (got 'a b')",
        "slurm_repository.components: must be a non-empty list (got [])",
    ]),
    ({"slurm_repository": "https://x"}, None,
     ["slurm_repository: must be a dict with url and key_url, or {} (got 'https://x')"]),
    ({"slurm_cluster_name": "my cluster", "slurm_user": "Slurm"}, None, [
        "slurm_cluster_name: must be one word without blanks, quotes, #, \\, comma or = (got 'my cluster')",
        "slurm_user: must be a user/group name: a lowercase letter or _, then up to 31 lowercase letters, "
        "digits, _ or - (got 'Slurm')",
    ]),
    ({"slurm_config": {"Slurmctld-Port": 1, "Prolog": "/x # y", "Epilog": "a\nb", "Flag": True}}, None, [
        "slurm_config: key 'Slurmctld-Port' must be a Slurm option name (letters and digits)",
        "slurm_config.Prolog: must be a number or non-empty text on one line without # or outer blanks (got '/x # y')",
        "slurm_config.Epilog: must be a number or non-empty text on one line without # or outer blanks (got 'a\\nb')",
        "slurm_config.Flag: must be a number or non-empty text on one line without # or outer blanks (got True)",
    ]),
    ({"slurm_cgroup_config": ["ConstrainCores=yes"]}, None,
     ["slurm_cgroup_config: must be a dict (got ['ConstrainCores=yes'])"]),
    ({"slurm_accounting_qos": [{"name": "a b", "options": {"MaxWall": "1\nday"}}, {"name": "x"}, {"name": "x"}]}, None, [
        "slurm_accounting_qos[0].name: must be one word without blanks, quotes, #, \\, comma or = (got 'a b')",
        "slurm_accounting_qos[0].options.MaxWall: must be a number or non-empty text on one line without # "
        "or outer blanks (got '1\\nday')",
        "slurm_accounting_qos: QoS 'x' is given twice",
    ]),
    ({"slurm_accounting_accounts": [{"name": "r", "parent": "a,b", "description": "two\nlines"}]}, None, [
        "slurm_accounting_accounts[0].parent: must be one word without blanks, quotes, #, \\, comma or = (got 'a,b')",
        "slurm_accounting_accounts[0].description: must be text on one line (got 'two\\nlines')",
    ]),
    ({"slurm_accounting_users": [{"name": "Bob", "account": "r", "qos": "normal"},
                                 {"name": "al", "account": "r"}, {"name": "al", "account": "r"}]}, None, [
        "slurm_accounting_users[0].name: must be a user/group name: a lowercase letter or _, then up to 31 "
        "lowercase letters, digits, _ or - (got 'Bob')",
        "slurm_accounting_users[0].qos: must be a list of QoS names (got 'normal')",
        "slurm_accounting_users: user 'al in account r' is given twice",
    ]),
    ({"slurm_dbd_user": "slurm user"}, None, [
        "slurm_dbd_user: must be one word without blanks, quotes, #, \\, comma or = (got 'slurm user')",
    ]),
], ids=repr)
def test_bad_input(settings, groups, expected):
    assert errors(groups=groups, **settings) == expected


@pytest.mark.parametrize("settings, expected", [
    ({"slurm_dbd_password": ""},
     ["slurm_dbd_password: must be set (from the vault) when slurm_dbd_group 'slurm_dbd' has a host; "
      "the value is not shown"]),
    ({"slurm_dbd_password": "pass word#" + SECRET},
     ["slurm_dbd_password: must have no blanks or # (it is written to slurmdbd.conf); the value is not shown"]),
    ({"slurm_munge_key": base64.b64encode(SECRET.encode()).decode()},
     ["slurm_munge_key: must be the base64 of a key of at least 32 bytes (base64 -w0 /etc/munge/munge.key); "
      "the value is not shown"]),
    ({"slurm_munge_key": SECRET + "!!"},
     ["slurm_munge_key: must be the base64 of a key of at least 32 bytes (base64 -w0 /etc/munge/munge.key); "
      "the value is not shown"]),
], ids=["dbd-empty", "dbd-blank", "munge-short", "munge-not-base64"])
def test_secrets_never_shown(settings, expected):
    messages = errors(**settings)
    assert messages == expected
    value = next(iter(settings.values()))
    assert all((not value or value not in m) and SECRET not in m for m in messages)


@pytest.mark.parametrize("node, expected", [
    ({"slurm_node_features": ["a100,nvlink", "ib x"]}, [
        "host 'gpu01': slurm_node_features[0]: must be one word without blanks, quotes, #, \\, comma or = "
        "(got 'a100,nvlink')",
        "host 'gpu01': slurm_node_features[1]: must be one word without blanks, quotes, #, \\, comma or = (got 'ib x')",
    ]),
    ({"slurm_node_weight": -1}, ["host 'gpu01': slurm_node_weight: must be within 0-4294967294 (got -1)"]),
    ({"slurm_node_weight": "10"}, ["host 'gpu01': slurm_node_weight: must be an integer (got '10')"]),
    ({"slurm_real_memory_fraction": 0}, [
        "host 'gpu01': slurm_real_memory_fraction: must be a number greater than 0 and at most 1 (got 0)"]),
    ({"slurm_real_memory_fraction": 1.5}, [
        "host 'gpu01': slurm_real_memory_fraction: must be a number greater than 0 and at most 1 (got 1.5)"]),
    ({"slurm_slurmd_options": ["-M", "--conf=\"x\"", "$(id)"]}, [
        "host 'gpu01': slurm_slurmd_options[1]: must be one word without blanks, quotes, $, `, \\ or # (got '--conf=\"x\"')",
        "host 'gpu01': slurm_slurmd_options[2]: must be one word without blanks, quotes, $, `, \\ or # (got '$(id)')",
    ]),
    ({"slurm_node_features": "a100"}, ["host 'gpu01': slurm_node_features: must be a list (got 'a100')"]),
    ({"slurm_gres_type_map": {"NVIDIA A100-SXM4-80GB": "a100 80g", "Tesla T4": "t4:x", "NVIDIA L4": ""}}, [
        "host 'gpu01': slurm_gres_type_map['NVIDIA A100-SXM4-80GB']: must be a GRES type without blanks, ',', ':', '='"
        " or parentheses, such as h100 (got 'a100 80g')",
        "host 'gpu01': slurm_gres_type_map['Tesla T4']: must be a GRES type without blanks, ',', ':', '=' or"
        " parentheses, such as h100 (got 't4:x')",
        "host 'gpu01': slurm_gres_type_map['NVIDIA L4']: must be a GRES type without blanks, ',', ':', '=' or"
        " parentheses, such as h100 (got '')",
    ]),
    ({"slurm_gres_type_map": {"": "a100", "A\nB": "b"}}, [
        "host 'gpu01': slurm_gres_type_map: key '' must be a GPU product name such as NVIDIA H100 80GB HBM3 or an"
        " NVML type name such as nvidia_h100_80gb_hbm3",
        "host 'gpu01': slurm_gres_type_map: key 'A\\nB' must be a GPU product name such as NVIDIA H100 80GB HBM3 or"
        " an NVML type name such as nvidia_h100_80gb_hbm3",
    ]),
], ids=repr)
def test_bad_node_values(node, expected):
    assert errors(node=node) == expected


def test_every_error_at_once():
    messages = errors(slurm_cluster_name="a b", slurm_srun_port_range="1-2", node={"slurm_node_weight": -1})
    assert len(messages) == 3


def test_wrong_shape_raises():
    with pytest.raises(RuleError, match="expects the settings"):
        slurm_errors([], {}, {})
