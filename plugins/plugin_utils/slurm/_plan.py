# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The slurm role's plan (controller side, pure, no Ansible imports): what its tasks derive from the
inventory and the role's variables, in one place. The role computes it once per run (its state read
task keeps it as a fact): the plan depends on no node's state, so one evaluation serves every task.

- ``config``: slurm.conf's settings. The role's defaults; ``GresTypes=gpu`` when there are compute
  nodes; accounting through slurmdbd on the first dbd host when there is one; ``SrunPortRange``
  from ``slurm_srun_port_range``; ``HealthCheckProgram``, ``HealthCheckInterval`` and
  ``HealthCheckNodeState`` when ``slurm_health_check`` names a program; then ``slurm_config`` over them; configless adds
  ``enable_configless`` to ``SlurmctldParameters`` (the parameters given kept, in order, each
  once); a setting set to null goes.
- ``cgroup_config``: cgroup.conf's settings, ``slurm_cgroup_config`` over the defaults, null ones
  gone; ``cgroup_config_before``: the same for a release before the one from which Slurm calls
  ``CgroupAutomount`` defunct (``CgroupAutomount=yes`` first). The cluster's release comes from
  the nodes' state reads, so the role picks one of the two when it renders cgroup.conf.
- ``state_request``: what the role's one state read (files/slurm_node_state.py) reads on this host.
- ``dirs``: the directories the role keeps on this host, as gpucluster.core.files entries.
- ``conf_paths``: the configuration files the role writes (or, configless, removes) on this host's
  configuration directory; ``conf_removals``: the same as entries that remove them.
- ``conf_server``: the controllers as slurmd's ``--conf-server`` takes them; ``slurmd_line``:
  the ``SLURMD_OPTIONS=`` line of slurmd's environment file.
- ``firewall_ports``: the ports this host opens when a firewall is active.
- ``packages``: the packages this host's Slurm roles need.
- ``accounting``: the ``sacctmgr`` commands that add the cluster's QoS, accounts and users, each
  with the line ``sacctmgr --parsable2`` lists it with once it exists (``<kind>|...``).

Every value is what the role computed before in Jinja, to the byte: the rendered files and the
commands do not change.
"""

from __future__ import annotations

import posixpath
from typing import Any, Dict, Iterable, List, Mapping

# slurmdbd's port (slurmdbd.conf's DbdPort).
DBD_PORT = 6819
LOG_DIR = "/var/log/slurm"
MUNGE_KEY = "/etc/munge/munge.key"


def _unique(items: Iterable[str]) -> List[str]:
    """The items, each once, in order, compared without case (as Ansible's unique filter does)."""
    seen, kept = set(), []
    for item in items:
        key = item.lower() if isinstance(item, str) else item
        if key not in seen:
            seen.add(key)
            kept.append(item)
    return kept


def _without_nulls(settings: Mapping[str, Any]) -> Dict[str, Any]:
    return {key: value for key, value in settings.items() if value is not None}


def slurm_config(inputs: Mapping[str, Any]) -> Dict[str, Any]:
    """slurm.conf's settings (see the module's documentation)."""
    given = inputs["slurm_config"]
    config = dict(inputs["config_defaults"])
    if inputs["computes"]:
        config["GresTypes"] = "gpu"
    if inputs["dbds"]:
        config.update({"AccountingStorageType": "accounting_storage/slurmdbd",
                       "AccountingStorageHost": inputs["dbds"][0],
                       "AccountingStorageTRES": "gres/gpu"})
    if inputs["slurm_srun_port_range"]:
        config["SrunPortRange"] = inputs["slurm_srun_port_range"]
    check = inputs.get("slurm_health_check") or {}
    if check.get("program"):
        config.update({"HealthCheckProgram": check["program"], "HealthCheckInterval": int(check["interval"]),
                       "HealthCheckNodeState": check["node_state"]})
    config.update(given)
    if inputs["slurm_configless"]:
        parameters = [part for part in (given.get("SlurmctldParameters") or "").split(",") if part]
        config["SlurmctldParameters"] = ",".join(_unique(parameters + ["enable_configless"]))
    return _without_nulls(config)


def cgroup_config(inputs: Mapping[str, Any], automount: bool) -> Dict[str, Any]:
    """cgroup.conf's settings (see the module's documentation)."""
    config = {"CgroupAutomount": "yes"} if automount else {}
    config.update(inputs["cgroup_defaults"])
    config.update(inputs["slurm_cgroup_config"])
    return _without_nulls(config)


def _dirs(inputs: Mapping[str, Any], config: Mapping[str, Any], roles: Mapping[str, bool]) -> List[Dict[str, str]]:
    user = inputs["slurm_user"]
    wanted = [(inputs["conf_dir"], "root")] if inputs["has_files"] else []
    wanted.append((LOG_DIR, user))
    if roles["controller"]:
        wanted.append((config["StateSaveLocation"], user))
    if roles["compute"]:
        wanted.append((config["SlurmdSpoolDir"], "root"))
    if roles["compute"] and not inputs["has_files"]:
        wanted.append((posixpath.dirname(inputs["dropin"]), "root"))
    return [{"dest": dest, "owner": owner, "group": owner, "state": "directory", "mode": "0755"} for dest, owner in wanted]


def _firewall_ports(config: Mapping[str, Any], roles: Mapping[str, bool]) -> List[str]:
    ports = []
    if roles["controller"]:
        ports.append("%s/tcp" % config["SlurmctldPort"])
    if roles["dbd"]:
        ports.append("%s/tcp" % DBD_PORT)
    if roles["compute"]:
        ports.append("%s/tcp" % config["SlurmdPort"])
    # srun runs on the controllers, the login nodes and the compute nodes (batch scripts).
    if "SrunPortRange" in config and (roles["controller"] or roles["compute"] or roles["login"]):
        ports.append("%s/tcp" % config["SrunPortRange"])
    return ports


def _packages(inputs: Mapping[str, Any], roles: Mapping[str, bool]) -> List[str]:
    packages = inputs["packages"]
    wanted = list(packages["common"])
    for role in ("controller", "compute", "dbd"):
        if roles[role]:
            wanted.extend(packages[role])
    return wanted + list(inputs["slurm_extra_packages"])


def accounting(inputs: Mapping[str, Any]) -> Dict[str, Any]:
    """The QoS, accounts and users, each with its ``sacctmgr add`` command and the line
    ``sacctmgr --noheader --parsable2 show ...`` prints for it once it exists (tasks/accounts.yml
    prefixes each listing with its kind: ``cluster|<name>``, ``qos|<name>``, ``account|<name>``,
    ``association|<cluster>|<account>|<user>``)."""
    cluster = inputs["slurm_cluster_name"]
    add = ["sacctmgr", "--immediate", "add"]
    qos = [{"name": item["name"], "line": "qos|%s" % item["name"],
            "argv": add + ["qos", item["name"]] + ["%s=%s" % pair for pair in item.get("options", {}).items()]}
           for item in inputs["slurm_accounting_qos"]]
    accounts = []
    for item in inputs["slurm_accounting_accounts"]:
        argv = add + ["account", item["name"], "Cluster=%s" % cluster, "Parent=%s" % item.get("parent", "root")]
        argv += ["%s=%s" % (option, item[key]) for key, option in (("description", "Description"),
                                                                   ("organization", "Organization")) if key in item]
        accounts.append({"name": item["name"], "line": "account|%s" % item["name"], "argv": argv})
    users = []
    for item in inputs["slurm_accounting_users"]:
        argv = add + ["user", item["name"], "Account=%s" % item["account"], "Cluster=%s" % cluster]
        if "qos" in item:
            argv.append("QOS=%s" % ",".join("%s" % name for name in item["qos"]))
        users.append({"name": item["name"], "account": item["account"], "argv": argv,
                      "line": "association|%s|%s|%s" % (cluster, item["account"], item["name"])})
    return {"cluster_line": "cluster|%s" % cluster, "qos": qos, "accounts": accounts, "users": users}


def _state_request(inputs: Mapping[str, Any], roles: Mapping[str, bool], dirs: List[Dict[str, str]],
                   conf_paths: List[str], packages: List[str], ports: List[str]) -> Dict[str, Any]:
    """What files/slurm_node_state.py reads on this host: the packages missing, the version of the
    package that names the release, the munge key, the services, the directories and files the role
    writes, slurm.conf's node and restart-only lines and gres.conf's node lines where the host holds
    them, slurmd -C and SLURMD_OPTIONS on compute nodes, the firewall when the role opens ports."""
    has_files = inputs["has_files"]
    return {
        "packages": packages,
        "munge_key": MUNGE_KEY,
        "version_package": inputs["version_package"],
        "services": ["munge"] + (["slurmctld"] if roles["controller"] else []) + (["slurmd"] if roles["compute"] else []),
        "dirs": [entry["dest"] for entry in dirs],
        "files": conf_paths + ([inputs["dropin"]] if roles["compute"] else []),
        "slurm_conf": "%s/slurm.conf" % inputs["conf_dir"] if has_files else "",
        "restart_keys": list(inputs["restart_keys"]) if has_files else [],
        "gres_conf": "%s/gres.conf" % inputs["conf_dir"] if has_files else "",
        "slurmd_c": roles["compute"],
        "env_file": inputs["slurmd_env_file"] if roles["compute"] else "",
        "firewall": bool(inputs["slurm_firewall_manage"] and ports),
    }


def plan(inputs: Mapping[str, Any]) -> Dict[str, Any]:
    """Everything the role's tasks derive (see the module's documentation); ``inputs`` as the
    role's vars/main.yml builds them (__slurm_plan_input)."""
    host = inputs["host"]
    roles = {"controller": host in inputs["controllers"], "compute": host in inputs["computes"],
             "dbd": host in inputs["dbds"], "login": host in inputs["logins"]}
    config = slurm_config(inputs)
    dirs = _dirs(inputs, config, roles)
    conf_paths = ["%s/%s" % (inputs["conf_dir"], name) for name in inputs["conf_files"]]
    conf_server = ",".join("%s:%s" % (controller, config["SlurmctldPort"]) for controller in inputs["controllers"])
    options = ([] if inputs["has_files"] else ["--conf-server", conf_server]) + list(inputs["slurm_slurmd_options"])
    ports = _firewall_ports(config, roles)
    packages = _packages(inputs, roles)
    return {
        "config": config,
        "cgroup_config": cgroup_config(inputs, automount=False),
        "cgroup_config_before": cgroup_config(inputs, automount=True),
        "dirs": dirs,
        "conf_paths": conf_paths,
        "conf_removals": [{"dest": path, "state": "absent"} for path in conf_paths],
        "conf_server": conf_server,
        "slurmd_line": 'SLURMD_OPTIONS="%s"' % " ".join("%s" % option for option in options),
        "firewall_ports": ports,
        "packages": packages,
        "accounting": accounting(inputs),
        "state_request": _state_request(inputs, roles, dirs, conf_paths, packages, ports),
    }
