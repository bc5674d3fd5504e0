# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The controller's cost at N hosts (benchmarks/bench_controller_scale.sh), without any host.

``generate`` writes, under a work directory:

* ``inventory/``: N hosts shaped like inventories/lab (the first is the head node: head, compute,
  slurm_controller, slurm_dbd, slurm_login and monitoring, as master is; the others compute nodes),
  two networks (/16 each, so that 1,000 hosts fit), the lab's group settings, and
  ``ansible_connection: local`` so that nothing can reach a real machine;
* ``facts/``: a jsonfile fact cache, one file per host, copied from a real fact cache of a sandbox
  node (ansible-core's own cache format, as it wrote it) with the node's names changed;
* ``roles/<role>/``: one shim per role, whose ``meta``, ``defaults``, ``vars``, ``templates`` and
  ``files`` are the collection role's own (links), and whose ``tasks/main.yml`` holds the role's
  preflight tasks up to and including the common role's input check, copied from the role (only
  include_role of common's dropped_hosts, input_check and os_vars, set_fact and assert, in their
  order), then the controller-side steps named below (copied from the role's tasks where there is
  one, so the expressions are the role's own);
* ``controller.yml``: the plays (site.yml's first play, then each role's shim on the hosts site.yml
  runs it on), and ``artifacts.yml``: playbooks/artifacts.yml with its two host reads skipped
  (each host is then listed from the fact cache, as an unreachable host is);
* ``ansible.cfg``.

``summary`` prints the per-step times the callback (benchmarks/callback_plugins) wrote, per host,
and the growth between two sizes.
"""

from __future__ import annotations

import argparse
import copy
import csv
import json
import os
import sys
from typing import Any, Dict, List

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOST_PLAYS = "cluster:slurm_controller:slurm_dbd:slurm_compute:slurm_login:monitoring:k8s_control_plane:k8s_workers"
# Each role's shim, on the hosts site.yml runs the role on (the GPU nodes: compute, as every
# compute node of the cache has 8 GPUs).
ROLE_HOSTS = [
    ("base_os", "cluster"),
    ("nvidia_driver", "compute"),
    ("cuda", "compute"),
    ("ofed", "cluster"),
    ("container_toolkit", "compute"),
    ("nfs", "cluster"),
    ("monitoring", "cluster:monitoring"),
    ("slurm", "slurm_controller:slurm_dbd:slurm_compute:slurm_login"),
    ("validation", "slurm_compute:k8s_workers"),
]
PREFLIGHT_ENTRIES = ("dropped_hosts", "input_check")
CONTROLLER_ACTIONS = ("ansible.builtin.set_fact", "ansible.builtin.assert")


def _host(index: int) -> str:
    return "gpu%04d" % index


def _address(base: str, index: int) -> str:
    return "%s.%d.%d" % (base, index // 200, 10 + index % 200)


def inventory(count: int) -> Dict[str, Any]:
    """The inventory: lab's groups, the first host as master is."""
    hosts = [_host(i) for i in range(count)]
    host_vars = {host: {"base_os_addresses": {"management": _address("10.232", i), "compute": _address("10.233", i)},
                        "ansible_host": _address("10.232", i)}
                 for i, host in enumerate(hosts)}
    head = hosts[0]
    return {"all": {"children": {
        "cluster": {"children": {"head": {"hosts": {head: host_vars[head]}},
                                 "compute": {"hosts": host_vars}}},
        "slurm_controller": {"hosts": {head: None}},
        "slurm_dbd": {"hosts": {head: None}},
        "slurm_login": {"hosts": {head: None}},
        "slurm_compute": {"children": {"compute": None}},
        "monitoring": {"hosts": {head: None}},
        "k8s_control_plane": {},
        "k8s_workers": {},
    }}}


def group_vars() -> Dict[str, Dict[str, Any]]:
    """inventories/lab's group settings, with /16 networks, the secrets in the clear and a local
    connection."""
    def load(name: str) -> Dict[str, Any]:
        with open(os.path.join(ROOT, "inventories", "lab", "group_vars", name), encoding="utf-8") as handle:
            return yaml.safe_load(handle) or {}
    cluster = load("cluster.yml")
    cluster["ansible_connection"] = "local"
    cluster["base_os_networks"] = [{"name": "management", "cidr": "10.232.0.0/16", "suffix": ""},
                                   {"name": "compute", "cidr": "10.233.0.0/16", "suffix": "-ib"}]
    cluster["slurm_dbd_password"] = "bench-only-dbd-password"
    cluster["monitoring_grafana_admin_password"] = "bench-only-grafana-password"
    head = load("head.yml")
    for export in head.get("nfs_exports", []):
        export["clients"] = ["10.232.0.0/16"]
    cluster["nfs_mounts"] = [{"src": "gpu0000:/data/shared", "path": "/data/shared"}]
    return {"cluster": cluster, "compute": load("compute.yml"), "head": head}


def _payload(path: str) -> Dict[str, Any]:
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def fact_cache(source_dir: str, source_head: str, source_node: str, hosts: List[str], out: str, prefix: str) -> None:
    """One cache file per host: the head's from the source head's, the others' from the source
    compute node's, every name of the source node replaced by the host's; the files keep the
    source's key prefix (ansible-core's own)."""
    texts = {}
    for role, name in (("head", source_head), ("node", source_node)):
        with open(os.path.join(source_dir, prefix + name), encoding="utf-8") as handle:
            texts[role] = (name, handle.read())
    os.makedirs(out, exist_ok=True)
    for index, host in enumerate(hosts):
        name, text = texts["head" if index == 0 else "node"]
        with open(os.path.join(out, prefix + host), "w", encoding="utf-8") as handle:
            handle.write(text.replace(name, host))


def _load_tasks(role: str, name: str) -> List[Dict[str, Any]]:
    with open(os.path.join(ROOT, "roles", role, "tasks", name), encoding="utf-8") as handle:
        return yaml.safe_load(handle) or []


def _task(role: str, name: str, task_name: str) -> Dict[str, Any]:
    for task in _load_tasks(role, name):
        if task.get("name") == task_name:
            return copy.deepcopy(task)
    raise SystemExit("bench: roles/%s/tasks/%s has no task %r any more" % (role, name, task_name))


def preflight_tasks(role: str) -> List[Dict[str, Any]]:
    """The role's preflight tasks up to the first that is not controller-side: include_role of the
    common role's dropped_hosts, input_check and os_vars, set_fact and assert."""
    tasks = []
    for task in _load_tasks(role, "preflight.yml"):
        include = task.get("ansible.builtin.include_role")
        if include and include.get("tasks_from") in PREFLIGHT_ENTRIES + ("os_vars",):
            tasks.append(task)
            continue
        if any(action in task for action in CONTROLLER_ACTIONS) and "delegate_to" not in task:
            tasks.append(task)
            continue
        break
    os_vars = [task for task in _load_tasks(role, "preflight.yml")
               if (task.get("ansible.builtin.include_role") or {}).get("tasks_from") == "os_vars"]
    if os_vars and os_vars[0] not in tasks:
        tasks.append(os_vars[0])
    return tasks


def _render_on_controller(name: str, content: str, task_vars: Dict[str, Any], out: str) -> Dict[str, Any]:
    return {"name": "Render %s for one host" % name,
            "ansible.builtin.copy": {"content": content, "dest": os.path.join(out, name), "mode": "0644"},
            "vars": task_vars, "delegate_to": "localhost", "run_once": True}


def _fact(name: str, expression: str, **extra: Any) -> Dict[str, Any]:
    task = {"name": "Compute %s" % name, "ansible.builtin.set_fact": {"__bench_%s" % name: expression}}
    task.update(extra)
    return task


def role_extras(role: str, out: str) -> List[Dict[str, Any]]:
    """The controller-side steps after the preflight, per role."""
    if role == "base_os":
        keys = _task("base_os", "ssh.yml", "Collect every node's host keys")
        hosts = _task("base_os", "hosts.yml", "Write the cluster networks into /etc/hosts")
        block = hosts["ansible.builtin.blockinfile"]["block"]
        known = _task("base_os", "ssh.yml", "Write every node's host keys into ssh_known_hosts")
        known_block = known["ansible.builtin.blockinfile"]["block"]
        return [keys, _render_on_controller("hosts.block", block + "\n", hosts["vars"], out),
                _render_on_controller("ssh_known_hosts.block", known_block + "\n", known["vars"], out)]
    if role == "slurm":
        nodes = [task for task in _load_tasks("slurm", "config.yml") if str(task.get("name")).startswith("Work out")]
        state = {"name": "Give every host the state read of a fresh node",
                 "ansible.builtin.set_fact": {"__slurm_state": {"version": "", "node_lines": [], "gres_lines": []}}}
        plan = {"name": "Compute the plan as tasks/state.yml does",
                "ansible.builtin.set_fact": {"__slurm_plan": "{{ __slurm_plan_input | gpucluster.core.slurm_plan }}"}}
        render = _render_on_controller("slurm.conf", "{{ lookup('ansible.builtin.template', slurm_conf_template) }}", {}, out)
        render["when"] = "__slurm_has_files"
        return [state, plan] + nodes + [render]
    if role == "validation":
        return [_fact("validation_host_plan", "{{ __validation_host_plan }}")]
    if role == "monitoring":
        return [_fact("monitoring_plan", "{{ __monitoring_plan }}"),
                _fact("monitoring_scrape_configs", "{{ __monitoring_scrape_configs }}",
                      when="inventory_hostname in groups['monitoring']")]
    if role == "nfs":
        return [_fact("nfs_server_plan", "{{ __nfs_server_plan }}")]
    if role == "container_toolkit":
        return [_fact("container_toolkit_plan", "{{ __container_toolkit_plan }}")]
    return []


def shim(role: str, roles_dir: str, out: str) -> None:
    """roles/<role>: the collection role's meta, defaults, vars, templates and files, and the
    controller-side tasks."""
    path = os.path.join(roles_dir, role)
    os.makedirs(os.path.join(path, "tasks"), exist_ok=True)
    for sub in ("meta", "defaults", "vars", "templates", "files"):
        real = os.path.join(ROOT, "roles", role, sub)
        link = os.path.join(path, sub)
        if os.path.isdir(real) and not os.path.lexists(link):
            os.symlink(real, link)
    with open(os.path.join(path, "tasks", "main.yml"), "w", encoding="utf-8") as handle:
        handle.write("---\n")
        yaml.safe_dump(preflight_tasks(role) + role_extras(role, out), handle, sort_keys=False, width=200)


def controller_playbook(only: List[str]) -> List[Dict[str, Any]]:
    """site.yml's first play, then each role's shim on its hosts (only those named, if any)."""
    with open(os.path.join(ROOT, "playbooks", "site.yml"), encoding="utf-8") as handle:
        first = yaml.safe_load(handle)[0]
    first = copy.deepcopy(first)
    first["name"] = "site_errors"
    plays = [first]
    for role, hosts in ROLE_HOSTS:
        plays.append({"name": "role %s" % role, "hosts": hosts, "gather_facts": False,
                      "roles": [{"role": role}]})
    return [play for play in plays if not only or play["name"] in only]


def artifacts_playbook() -> List[Dict[str, Any]]:
    """playbooks/artifacts.yml, its two host reads skipped: each host is listed from the cache."""
    with open(os.path.join(ROOT, "playbooks", "artifacts.yml"), encoding="utf-8") as handle:
        plays = yaml.safe_load(handle)
    for task in plays[1]["tasks"]:
        if task.get("name") == "Read the operating system (a minimal subset of the facts)":
            task["when"] = False
        elif "ansible.builtin.import_tasks" in task:
            task["ansible.builtin.import_tasks"] = os.path.join(ROOT, "playbooks", task["ansible.builtin.import_tasks"])
    plays[0]["name"] = "artifacts site_errors"
    plays[1]["name"] = "artifacts list"
    plays[2]["name"] = "artifacts write"
    return plays


def generate(args: argparse.Namespace) -> None:
    work = os.path.abspath(args.work)
    hosts = [_host(i) for i in range(args.hosts)]
    inv = os.path.join(work, "inventory")
    os.makedirs(os.path.join(inv, "group_vars"), exist_ok=True)
    out = os.path.join(work, "out")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(inv, "hosts.yml"), "w", encoding="utf-8") as handle:
        handle.write("---\n")
        yaml.safe_dump(inventory(args.hosts), handle, sort_keys=False)
    for name, values in group_vars().items():
        with open(os.path.join(inv, "group_vars", name + ".yml"), "w", encoding="utf-8") as handle:
            handle.write("---\n")
            yaml.safe_dump(values, handle, sort_keys=False)
    fact_cache(args.facts, args.facts_head, args.facts_node, hosts, os.path.join(work, "facts"), args.facts_prefix)
    roles_dir = os.path.join(work, "roles")
    for role, _hosts in ROLE_HOSTS:
        shim(role, roles_dir, out)
    for name, plays in (("controller.yml", controller_playbook(args.plays)), ("artifacts.yml", artifacts_playbook())):
        with open(os.path.join(work, name), "w", encoding="utf-8") as handle:
            handle.write("---\n")
            yaml.safe_dump(plays, handle, sort_keys=False, width=200)
    with open(os.path.join(work, "ansible.cfg"), "w", encoding="utf-8") as handle:
        handle.write("\n".join([
            "[defaults]",
            "collections_path = %s" % os.path.join(ROOT, ".venv", "collections"),
            "roles_path = %s" % os.path.join(work, "roles"),
            "callback_plugins = %s" % os.path.join(ROOT, "benchmarks", "callback_plugins"),
            "callbacks_enabled = gpucluster.core.preload, bench_play_times, ansible.posix.profile_tasks",
            "stdout_callback = default",
            "display_skipped_hosts = false",
            "display_ok_hosts = false",
            "interpreter_python = auto_silent",
            "forks = %d" % args.forks,
            "host_key_checking = false",
            "retry_files_enabled = false",
            "fact_caching = jsonfile",
            "fact_caching_connection = %s" % os.path.join(work, "facts"),
            "fact_caching_timeout = 0",
            "[callback_profile_tasks]",
            "task_output_limit = 200",
            "",
        ]))


def summary(args: argparse.Namespace) -> None:
    """The steps' seconds at each size (the least of the repeats), per host, and the growth of
    the per-host cost from the first size to the last."""
    rows: Dict[str, Dict[int, float]] = {}
    sizes = set()
    for path in args.tsv:
        with open(path, encoding="utf-8") as handle:
            for row in csv.DictReader(handle, delimiter="\t"):
                if (args.forks and row.get("forks") != str(args.forks)) or (args.strategy and row.get("strategy") != args.strategy):
                    continue
                size = int(row["hosts"])
                sizes.add(size)
                seconds = float(row["seconds"])
                step = rows.setdefault(row["step"], {})
                step[size] = min(seconds, step.get(size, seconds))
    rows["total"] = {size: sum(step[size] for step in list(rows.values()) if size in step) for size in sizes}
    sizes_sorted = sorted(sizes)
    low, high = args.ratio or [sizes_sorted[min(1, len(sizes_sorted) - 1)], sizes_sorted[-1]]
    head = ["step"] + ["%d hosts: s (ms/host)" % size for size in sizes_sorted] + ["per-host %d/%d" % (high, low)]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for step, by_size in rows.items():
        cells = [step]
        for size in sizes_sorted:
            cells.append("%.2f (%.1f)" % (by_size[size], 1000 * by_size[size] / size) if size in by_size else "-")
        ratio = ""
        if by_size.get(low) and by_size.get(high):
            ratio = "%.2f" % ((by_size[high] / high) / (by_size[low] / low))
        cells.append(ratio)
        print("| " + " | ".join(cells) + " |")


def main(argv: List[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    gen = sub.add_parser("generate")
    gen.add_argument("--hosts", type=int, required=True)
    gen.add_argument("--work", required=True)
    gen.add_argument("--facts", required=True, help="a jsonfile fact cache of the sandbox")
    # ansible-core 2.19 keeps each host's facts under the key s1_<host> (its cache's serialization).
    gen.add_argument("--facts-prefix", default="s1_")
    gen.add_argument("--facts-head", default="master")
    gen.add_argument("--facts-node", default="worker1")
    gen.add_argument("--forks", type=int, default=20)
    gen.add_argument("--plays", nargs="*", default=[], help="only these plays of controller.yml (site_errors, 'role base_os', ...)")
    gen.set_defaults(func=generate)
    summ = sub.add_parser("summary")
    summ.add_argument("tsv", nargs="+")
    summ.add_argument("--ratio", type=int, nargs=2)
    summ.add_argument("--forks", type=int)
    summ.add_argument("--strategy")
    summ.set_defaults(func=summary)
    args = parser.parse_args(argv)
    args.func(args)


if __name__ == "__main__":
    main(sys.argv[1:])
