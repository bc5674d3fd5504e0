# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The slurm role's input rules (controller side, pure, no Ansible imports).

``slurm_errors`` takes the role's settings (the values every host shares), the per-host
values of the compute nodes and the inventory groups, and returns every error at once.
What it checks: the group counts, the host names that go into slurm.conf, the partitions,
SrunPortRange, the health check program and its settings, the site repository and extra packages, the munge key and the slurmdbd password (secrets: their
messages never show them), slurm_config/slurm_cgroup_config keys and values, the per-node
values that go into the NodeName lines, and the names of the accounting data.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any, List, Mapping, Optional

from ansible_collections.gpucluster.core.plugins.plugin_utils.common._rules import (
    Errors, PlayHosts, RoleInput, RuleError, abs_path, duplicates, hostname, int_range, one_line, port_range, posix_name, token, url)

PARTITION_STATES = ("UP", "DOWN", "DRAIN", "INACTIVE")
# slurm.conf(5)'s HealthCheckNodeState values (22.05 to 24.11).
HEALTH_CHECK_NODE_STATES = ("ALLOC", "ANY", "CYCLE", "IDLE", "MIXED", "NONDRAINED_IDLE")
_KEY_RE = re.compile(r"^[A-Za-z][A-Za-z0-9]*$")
_SLURMD_OPTION_RE = re.compile(r"^[^\s\"'`$\\#]+$")
# A package name as apt and dnf take it (Debian policy's characters, plus EL's capitals and _).
_PACKAGE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9+._-]*$")
MUNGE_KEY_MIN_BYTES = 32
NODE_WEIGHT_MAX = 4294967294

# A GRES type as gres.conf and slurm.conf's Gres= take it (gpucluster.core.gres_conf's own rule).
_GRES_TYPE_RE = re.compile(r"^[^\s,:=()]+$")


def _config_value(value: Any) -> Optional[str]:
    """A value of a key=value line in slurm.conf or cgroup.conf (None removes the key)."""
    if value is None or isinstance(value, (int, float)) and not isinstance(value, bool):
        return None
    if not isinstance(value, str) or re.search(r"[\r\n\x00#]", value) or value.strip() != value or not value:
        return "must be a number or non-empty text on one line without # or outer blanks (got %r)" % (value,)
    return None


def _config(errors: Errors, var: str, config: Any) -> None:
    for key, value in errors.mapping_items(var, config, "must be a dict"):
        if not isinstance(key, str) or not _KEY_RE.match(key):
            errors.add(var, "key %r must be a Slurm option name (letters and digits)" % (key,))
            continue
        errors.check("%s.%s" % (var, key), _config_value(value))


def _groups(errors: Errors, settings: Mapping[str, Any], groups: Mapping[str, List[str]]) -> None:
    counts = (
        ("slurm_controller_group", 1, 2, "1 or 2 hosts"),
        ("slurm_compute_group", 1, None, "at least 1 host"),
        ("slurm_dbd_group", 0, 1, "at most 1 host"),
    )
    for var, low, high, wanted in counts:
        name = settings.get(var)
        found = len(groups.get(name, []) or [])
        if found < low or (high is not None and found > high):
            errors.add(var, "group %r must have %s (found %d)" % (name, wanted, found))
    seen: List[str] = []
    for var in ("slurm_controller_group", "slurm_compute_group", "slurm_dbd_group", "slurm_login_group"):
        for host in groups.get(settings.get(var), []) or []:
            if host not in seen:
                seen.append(host)
                errors.check("%s host %r" % (var, host), hostname(host))


def _partitions(errors: Errors, partitions: Any, groups: Mapping[str, List[str]], compute_group: str) -> None:
    var = "slurm_partitions"
    if not isinstance(partitions, list) or not partitions:
        errors.add(var, "must be a non-empty list of partitions (got %r)" % (partitions,))
        return
    names = []
    defaults = []
    for where, part in errors.dict_items(var, partitions):
        if errors.check(where + ".name", token(part.get("name"))):
            names.append(part["name"])
        if part.get("default", False):
            defaults.append(part.get("name"))
        part_groups = part.get("groups", [compute_group])
        if not isinstance(part_groups, list) or not part_groups:
            errors.add(where + ".groups", "must be a non-empty list of inventory groups (got %r)" % (part_groups,))
        else:
            for group in part_groups:
                if group not in groups:
                    errors.add(where + ".groups", "group %r is not in the inventory" % (group,))
        errors.check(where + ".max_time", token(part.get("max_time", "INFINITE")))
        state = part.get("state", "UP")
        if state not in PARTITION_STATES:
            errors.add(where + ".state", "must be one of %s (got %r)" % (", ".join(PARTITION_STATES), state))
        options = part.get("options", {})
        if not isinstance(options, Mapping):
            errors.add(where + ".options", "must be a dict (got %r)" % (options,))
        else:
            for key, value in options.items():
                if not isinstance(key, str) or not _KEY_RE.match(key):
                    errors.add(where + ".options", "key %r must be a Slurm option name (letters and digits)" % (key,))
                else:
                    errors.check("%s.options.%s" % (where, key), token(value if not isinstance(value, int) else str(value)))
    for name in duplicates(names):
        errors.add(var, "partition name %r is used twice" % (name,))
    if len(defaults) > 1:
        errors.add(var, "at most one partition may be the default (got %s)" % ", ".join(map(repr, defaults)))


def _health_check(errors: Errors, settings: Mapping[str, Any]) -> None:
    """HealthCheckProgram and its interval and node states (read only with a program)."""
    program = settings.get("slurm_health_check_program", "")
    if program == "":
        return
    errors.check("slurm_health_check_program", abs_path(program))
    errors.check("slurm_health_check_interval", int_range(settings.get("slurm_health_check_interval", 120), 1, 86400))
    states = settings.get("slurm_health_check_node_state", "ANY,CYCLE")
    words = states.split(",") if isinstance(states, str) else None
    unknown = [word for word in words or [] if word.upper() not in HEALTH_CHECK_NODE_STATES]
    if not words or unknown:
        errors.add("slurm_health_check_node_state", "must be node states separated by commas, of %s (got %r)"
                   % (", ".join(HEALTH_CHECK_NODE_STATES), states))
    elif [word.upper() for word in words] == ["CYCLE"]:
        errors.add("slurm_health_check_node_state", "must name the states to check besides CYCLE, e.g. ANY,CYCLE (got %r)" % (states,))


def _repository(errors: Errors, repo: Any) -> None:
    var = "slurm_repository"
    if repo in ({}, None):
        return
    if not isinstance(repo, Mapping):
        errors.add(var, "must be a dict with url and key_url, or {} (got %r)" % (repo,))
        return
    errors.check(var + ".url", url(repo.get("url")))
    errors.check(var + ".key_url", url(repo.get("key_url")))
    for key in ("suite", "description"):
        if key in repo:
            errors.check("%s.%s" % (var, key), token(repo[key]) if key == "suite" else one_line(repo[key]))
    components = repo.get("components", ["main"])
    if not isinstance(components, list) or not components:
        errors.add(var + ".components", "must be a non-empty list (got %r)" % (components,))
    else:
        for index, component in enumerate(components):
            errors.check("%s.components[%d]" % (var, index), token(component))


def _packages(errors: Errors, settings: Mapping[str, Any]) -> None:
    recommends = settings.get("slurm_install_recommends", False)
    if not isinstance(recommends, bool):
        errors.add("slurm_install_recommends", "must be true or false (got %r)" % (recommends,))
    var = "slurm_extra_packages"
    names = settings.get(var, [])
    if not isinstance(names, list):
        errors.add(var, "must be a list of package names (got %r)" % (names,))
        return
    for index, name in enumerate(names):
        if not isinstance(name, str) or not _PACKAGE_RE.match(name):
            errors.add("%s[%d]" % (var, index), "must be a package name: letters, digits and + . _ - (got %r)" % (name,))
    for name in duplicates(name for name in names if isinstance(name, str)):
        errors.add(var, "package %r is given twice" % (name,))


def _munge_key(errors: Errors, key: Any) -> None:
    var = "slurm_munge_key"
    if key in ("", None):
        return
    reason = ("must be the base64 of a key of at least %d bytes (base64 -w0 /etc/munge/munge.key); "
              "the value is not shown" % MUNGE_KEY_MIN_BYTES)
    if not isinstance(key, str):
        errors.add(var, reason)
        return
    try:
        raw = base64.b64decode(re.sub(r"\s", "", key), validate=True)
    except (binascii.Error, ValueError):
        errors.add(var, reason)
        return
    if len(raw) < MUNGE_KEY_MIN_BYTES:
        errors.add(var, reason)


def _accounting(errors: Errors, settings: Mapping[str, Any], accounting: bool) -> None:
    if not accounting:
        return
    dbd_group = settings.get("slurm_dbd_group")
    password = settings.get("slurm_dbd_password")
    if not isinstance(password, str) or not password:
        errors.add("slurm_dbd_password", "must be set (from the vault) when slurm_dbd_group %r has a host; "
                   "the value is not shown" % (dbd_group,))
    elif re.search(r"[\s#\x00]", password):
        errors.add("slurm_dbd_password", "must have no blanks or # (it is written to slurmdbd.conf); "
                   "the value is not shown")
    for var in ("slurm_dbd_database", "slurm_dbd_user"):
        errors.check(var, token(settings.get(var)))
    kinds = (("slurm_accounting_qos", "QoS"), ("slurm_accounting_accounts", "account"),
             ("slurm_accounting_users", "user"))
    for var, kind in kinds:
        items = settings.get(var) or []
        if not isinstance(items, list):
            errors.add(var, "must be a list (got %r)" % (items,))
            continue
        names = []
        for where, item in errors.dict_items(var, items):
            name = item.get("name")
            if errors.check(where + ".name", posix_name(name) if kind == "user" else token(name)):
                names.append(name if kind != "user" else (name, item.get("account")))
            if kind == "QoS":
                _config(errors, where + ".options", item.get("options", {}))
            if kind == "account":
                if "parent" in item:
                    errors.check(where + ".parent", token(item["parent"]))
                for key in ("description", "organization"):
                    if key in item:
                        errors.check("%s.%s" % (where, key), one_line(item[key]))
            if kind == "user":
                errors.check(where + ".account", token(item.get("account")))
                qos = item.get("qos", [])
                if not isinstance(qos, list):
                    errors.add(where + ".qos", "must be a list of QoS names (got %r)" % (qos,))
                else:
                    for q_index, q_name in enumerate(qos):
                        errors.check("%s.qos[%d]" % (where, q_index), token(q_name))
        for name in duplicates(names):
            shown = name if kind != "user" else "%s in account %s" % name
            errors.add(var, "%s %r is given twice" % (kind, shown))


def _node(errors: Errors, values: Mapping[str, Any]) -> None:
    features = values.get("slurm_node_features", [])
    if not isinstance(features, list):
        errors.add("slurm_node_features", "must be a list (got %r)" % (features,))
    else:
        for index, feature in enumerate(features):
            errors.check("slurm_node_features[%d]" % index, token(feature))
    weight = values.get("slurm_node_weight")
    if weight is not None:
        errors.check("slurm_node_weight", int_range(weight, 0, NODE_WEIGHT_MAX))
    fraction = values.get("slurm_real_memory_fraction", 0.95)
    if (isinstance(fraction, bool) or not isinstance(fraction, (int, float))
            or not 0 < fraction <= 1):
        errors.add("slurm_real_memory_fraction", "must be a number greater than 0 and at most 1 (got %r)" % (fraction,))
    type_map = values.get("slurm_gres_type_map") or {}
    if not isinstance(type_map, Mapping):
        errors.add("slurm_gres_type_map", "must be a dict of GPU product or NVML type name to GRES type (got %r)"
                   % (type_map,))
    else:
        for model, gres_type in type_map.items():
            if not isinstance(model, str) or not model.strip() or one_line(model):
                errors.add("slurm_gres_type_map", "key %r must be a GPU product name such as NVIDIA H100 80GB HBM3"
                           " or an NVML type name such as nvidia_h100_80gb_hbm3" % (model,))
            elif not isinstance(gres_type, str) or not _GRES_TYPE_RE.match(gres_type):
                errors.add("slurm_gres_type_map[%r]" % model, "must be a GRES type without blanks, ',', ':', '='"
                           " or parentheses, such as h100 (got %r)" % (gres_type,))
    options = values.get("slurm_slurmd_options", [])
    if not isinstance(options, list):
        errors.add("slurm_slurmd_options", "must be a list (got %r)" % (options,))
    else:
        for index, option in enumerate(options):
            if not isinstance(option, str) or not _SLURMD_OPTION_RE.match(option):
                errors.add("slurm_slurmd_options[%d]" % index,
                           "must be one word without blanks, quotes, $, `, \\ or # (got %r)" % (option,))


def slurm_errors(settings: Mapping[str, Any], hosts: Mapping[str, Mapping[str, Any]],
                 groups: Mapping[str, List[str]]) -> List[str]:
    """Every error in the slurm role's input, as messages (empty when all is good).

    ``settings``: the values every host shares (the play's); ``hosts``: compute node name to
    its values (the per-host ones: slurm_node_features, slurm_node_weight, slurm_real_memory_fraction,
    slurm_slurmd_options, slurm_gres_type_map); ``groups``: the inventory groups.
    """
    if not isinstance(settings, Mapping) or not isinstance(hosts, Mapping) or not isinstance(groups, Mapping):
        raise RuleError("slurm_errors expects the settings, the hosts' values and the groups as dicts")
    errors = Errors()
    _groups(errors, settings, groups)
    errors.check("slurm_cluster_name", token(settings.get("slurm_cluster_name")))
    errors.check("slurm_user", posix_name(settings.get("slurm_user")))
    _partitions(errors, settings.get("slurm_partitions"), groups, settings.get("slurm_compute_group"))
    srun = settings.get("slurm_srun_port_range", "")
    if srun != "":
        errors.check("slurm_srun_port_range", port_range(srun, low=1024))
    _health_check(errors, settings)
    _repository(errors, settings.get("slurm_repository"))
    _packages(errors, settings)
    _munge_key(errors, settings.get("slurm_munge_key"))
    _config(errors, "slurm_config", settings.get("slurm_config", {}))
    _config(errors, "slurm_cgroup_config", settings.get("slurm_cgroup_config", {}))
    _accounting(errors, settings, bool(groups.get(settings.get("slurm_dbd_group"), [])))
    out = list(errors.messages)
    for host, values in hosts.items():
        host_errors = Errors(host)
        _node(host_errors, values)
        out.extend(host_errors.messages)
    return out


def compute_nodes(shared: Mapping[str, Any], play: PlayHosts, groups: Mapping[str, List[str]]) -> List[str]:
    """The hosts whose values the rules read: every compute node of the inventory (slurm.conf names
    them all, in the play or not)."""
    return list(groups.get(shared.get("slurm_compute_group"), []) or [])


def input_errors(given: RoleInput) -> List[str]:
    """The rules over the play's values and each compute node's own."""
    return slurm_errors(given.shared, given.hosts, given.groups)
