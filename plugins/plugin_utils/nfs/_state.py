# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The nfs role's derived data (controller side, pure): a host's client mounts with their fstab
options, a server's nfs.conf options and firewall ports, the parse of the role's one read of a
node (kernel NFS support, users and groups), the owners it does not know, and what a converged
host's exportfs and /proc/mounts lack.

The input was checked by the role's rules (plugins/plugin_utils/nfs/_rules.py) before this runs."""

from __future__ import annotations

import re
from typing import Any, Dict, Iterable, List, Mapping

from ansible_collections.gpucluster.core.plugins.plugin_utils.common._rules import RuleError
from ansible_collections.gpucluster.core.plugins.plugin_utils.nfs._rules import conf_options
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._sections import split_sections

# The sections of the node read (roles/nfs/tasks/preflight.yml) and the fewest ':'-separated fields of a passwd and a group line.
NODE_SECTIONS = ("filesystems", "modules", "passwd", "group", "mounts", "fstab")
_GETENT_FIELDS = {"passwd": 7, "group": 4}


def client_mounts(mounts: Iterable[Mapping[str, Any]], host: str, settings: Mapping[str, Any]) -> List[Dict[str, str]]:
    """The mounts ``host`` makes, less those of its own exports (the data is local there),
    with the fstab options: the mount's (or ``nfs_mount_options``), ``nfsvers``, ``_netdev``
    and, with automount, the systemd automount and timeout options.

    ``settings``: nfs_mount_version, nfs_mount_options, nfs_mount_automount,
    nfs_mount_timeout, nfs_mount_idle_timeout."""
    out: List[Dict[str, str]] = []
    for mount in mounts:
        if not mount.get("server_external", False) and mount["src"].split(":")[0] == host:
            continue
        version = str(mount.get("version", settings["nfs_mount_version"]))
        automount = mount.get("automount", settings["nfs_mount_automount"])
        opts = list(mount.get("options", settings["nfs_mount_options"])) + ["nfsvers=" + version, "_netdev"]
        if automount:
            opts += ["x-systemd.automount", "x-systemd.mount-timeout=%s" % settings["nfs_mount_timeout"]]
            if int(settings["nfs_mount_idle_timeout"]) > 0:
                opts.append("x-systemd.idle-timeout=%s" % settings["nfs_mount_idle_timeout"])
        out.append({"src": mount["src"], "path": mount["path"], "version": version, "opts": ",".join(map(str, opts)),
                    "owner": mount.get("owner", "root"), "group": mount.get("group", "root"),
                    "mode": str(mount.get("mode", "0755"))})
    return out


def node_state(text: str) -> Dict[str, Any]:
    """The role's one read of a node (plugin_utils/common/_sections.py). filesystems: /proc/filesystems
    (the last word of each line); modules: the NFS modules modprobe finds; passwd and group:
    ``getent`` lines, as M(ansible.builtin.getent) returns them (name -> the other fields);
    mounts: the mount points of /proc/mounts (its second field); fstab: the fields of each entry
    of /etc/fstab (comments and blank lines left out)."""
    sections = split_sections(text, NODE_SECTIONS, "nfs_node_state")
    state: Dict[str, Any] = {name: [line.split()[-1] for line in sections[name]] for name in ("filesystems", "modules")}
    state["mounts"] = []
    for line in sections["mounts"]:
        fields = line.split()
        if len(fields) < 6:
            raise RuleError("nfs_node_state: not a /proc/mounts line: %r" % line)
        state["mounts"].append(fields[1])
    state["fstab"] = [line.split() for line in sections["fstab"] if line.strip() and not line.lstrip().startswith("#")]
    for name, fewest in _GETENT_FIELDS.items():
        state[name] = {}
        for line in sections[name]:
            fields = line.split(":")
            if len(fields) < fewest or not fields[0]:
                raise RuleError("nfs_node_state: not a getent %s line: %r" % (name, line))
            state[name][fields[0]] = fields[1:]
    return state


def dir_entries(items: Iterable[Mapping[str, Any]], group_ids: Mapping[str, Any]) -> List[Dict[str, str]]:
    """gpucluster.core.files entries of the directories of exports or mounts (``path``, ``owner``,
    ``group`` and ``mode``, defaults root, root, 0755): a group of ``nfs_groups`` by its gid
    (``group_ids``, name -> gid), so the directory is right before the group exists locally."""
    out: List[Dict[str, str]] = []
    for item in items:
        group = item.get("group", "root")
        out.append({"dest": item["path"], "state": "directory", "owner": str(item.get("owner", "root")),
                    "group": str(group_ids.get(group, group)), "mode": str(item.get("mode", "0755"))})
    return out


def fstab_pending(mounts: Iterable[Mapping[str, Any]], fstab: List[List[str]]) -> List[Mapping[str, Any]]:
    """The client mounts (nfs_client_mounts) whose /etc/fstab entry is not there as
    ansible.posix.mount writes it: ``src path nfs opts 0 0``."""
    return [mount for mount in mounts if [mount["src"], mount["path"], "nfs", mount["opts"], "0", "0"] not in fstab]


def unpublished(exports: Iterable[Mapping[str, Any]], exportfs: str) -> List[str]:
    """``<path> to <client>`` for each export and client that ``exportfs -s`` does not list."""
    listed = set()
    for line in exportfs.splitlines():
        match = re.match(r"^(\S+)\s+([^(\s]+)\(", line)
        if match:
            listed.add((match.group(1), match.group(2)))
    return ["%s to %s" % (e["path"], client) for e in exports for client in map(str, e["clients"])
            if (e["path"], client) not in listed]


def unmounted(mounts: Iterable[Mapping[str, str]], proc_mounts: str) -> List[str]:
    """``<src> on <path> (<fstype>)`` for each client mount that /proc/mounts lacks as NFS from
    its server (fstype nfs for NFSv3, nfs4 otherwise)."""
    present = {tuple(line.split()[:3]) for line in proc_mounts.splitlines() if len(line.split()) >= 3}
    out = []
    for mount in mounts:
        fstype = "nfs" if mount["version"] == "3" else "nfs4"
        if (mount["src"], mount["path"], fstype) not in present:
            out.append("%s on %s (%s)" % (mount["src"], mount["path"], fstype))
    return out


def group_clashes(groups: Iterable[Mapping[str, Any]], getent_group: Mapping[str, List[Any]]) -> List[str]:
    """Where ``nfs_groups`` disagrees with the host's groups (getent group: name -> [password,
    gid, members]): a group that exists with another gid, or a gid another group holds."""
    out: List[str] = []
    for group in groups:
        gid = int(group["gid"])
        existing = getent_group.get(group["name"])
        if existing is not None and int(existing[1]) != gid:
            out.append("group %s exists with gid %s, not %s" % (group["name"], existing[1], group["gid"]))
        for name, entry in getent_group.items():
            if name != group["name"] and int(entry[1]) == gid:
                out.append("gid %s of group %s belongs to group %s" % (group["gid"], group["name"], name))
    return out


_NUMERIC_ID = re.compile(r"^[0-9]+$")


def unknown_owners(owned: Iterable[Mapping[str, Any]], node: Mapping[str, Any], group_ids: Mapping[str, Any]) -> List[str]:
    """``user NAME`` and ``group NAME`` for each owner and group of the exports and mounts (root
    where one is not given) that the host does not know (``node``: the parsed read, with
    ``passwd`` and ``group``) and that is not a number; a group of ``nfs_groups`` (``group_ids``)
    is known, the role sets it by gid. Users first, each once."""
    owned = list(owned)
    users = [str(item.get("owner", "root")) for item in owned]
    groups = [str(item.get("group", "root")) for item in owned]
    unknown = ["user " + name for name in users if not _NUMERIC_ID.match(name) and name not in node["passwd"]]
    unknown += ["group " + name for name in groups
                if not _NUMERIC_ID.match(name) and name not in node["group"] and name not in group_ids]
    return list(dict.fromkeys(unknown))


def server_plan(values: Mapping[str, Any]) -> Dict[str, Any]:
    """What an NFS server sets from ``values`` (``nfsv3``, ``mountd_port``, ``statd_port``,
    ``lockd_port`` and ``conf_settings``, the role's variables): ``conf``, /etc/nfs.conf's options
    (``{section, option, value}``), the role's (NFSv3 on or off, with it the fixed ports of mountd,
    statd and lockd) with nfs_conf_settings merged over them; and ``firewall_ports``, 2049/tcp,
    with NFSv3 rpcbind's 111 and those ports on TCP and UDP."""
    nfsv3 = bool(values["nfsv3"])
    role: Dict[str, Dict[str, Any]] = {"nfsd": {"vers3": "y" if nfsv3 else "n"}}
    ports = ["2049/tcp"]
    if nfsv3:
        mountd, statd, lockd = values["mountd_port"], values["statd_port"], values["lockd_port"]
        role.update({"mountd": {"port": mountd}, "statd": {"port": statd}, "lockd": {"port": lockd, "udp-port": lockd}})
        ports += ["%s/%s" % (port, protocol) for port in ("111", mountd, statd, lockd) for protocol in ("tcp", "udp")]
    return {"conf": conf_options(role, values["conf_settings"]), "firewall_ports": ports}
