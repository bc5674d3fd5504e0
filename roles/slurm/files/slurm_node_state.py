# Reads, in one call, everything the slurm role compares on a node: installed packages,
# the Slurm version, the munge key, services, directories, the checksums of the files the
# role writes, the node lines of slurm.conf and gres.conf, the settings of slurm.conf only a
# restart reads, slurmd -C, the SLURMD_OPTIONS line
# and the firewall's open ports.
# Run by tasks/state.yml as `python3 - REQUEST_JSON` (the script on stdin); prints JSON.
# Python 3.6 syntax: it runs on the managed node. Read-only.
import base64
import hashlib
import json
import os
import pwd
import grp
import shutil
import subprocess
import sys


def run(argv):
    try:
        proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, check=False)
    except OSError:
        return 127, ""
    return proc.returncode, proc.stdout


def owner(st):
    try:
        user = pwd.getpwuid(st.st_uid).pw_name
    except KeyError:
        user = str(st.st_uid)
    try:
        group = grp.getgrgid(st.st_gid).gr_name
    except KeyError:
        group = str(st.st_gid)
    return "%s:%s:%o" % (user, group, st.st_mode & 0o7777)


def main():
    req = json.loads(sys.argv[1])
    out = {}
    if shutil.which("dpkg-query"):
        rc, text = run(["dpkg-query", "-W", "-f", "${Package} ${db:Status-Status}\n"] + req.get("packages", []))
        installed = [line.split()[0] for line in text.splitlines() if line.endswith(" installed")]
    else:
        rc, text = run(["rpm", "-q", "--qf", "%{NAME}\n"] + req.get("packages", []))
        installed = [line.strip() for line in text.splitlines() if " " not in line.strip()]
    out["missing"] = [p for p in req.get("packages", []) if p not in installed]
    # The client package's version: from 23.11 the client commands, `sinfo --version`
    # included, refuse to run before a configuration exists.
    out["version"] = ""
    package = req.get("version_package")
    if package and package in installed:
        if shutil.which("dpkg-query"):
            rc, text = run(["dpkg-query", "-W", "-f", "${Version}", package])
        else:
            rc, text = run(["rpm", "-q", "--qf", "%{VERSION}", package])
        out["version"] = "%s %s" % (package, text.strip()) if rc == 0 and text.strip() else ""
    if not out["version"]:
        rc, text = run(["sinfo", "--version"])
        out["version"] = text.strip() if rc == 0 else ""
    key = req.get("munge_key")
    if key:
        try:
            st = os.stat(key)
            with open(key, "rb") as handle:
                out["munge_key"] = {"owner": owner(st), "base64": base64.b64encode(handle.read()).decode("ascii")}
        except OSError:
            out["munge_key"] = {"owner": "", "base64": ""}
    services = req.get("services", [])
    out["services"] = {}
    for name in services:
        active = run(["systemctl", "is-active", name])[1].strip()
        enabled = run(["systemctl", "is-enabled", name])[1].strip()
        out["services"][name] = "%s %s" % (active, enabled)
    out["paths"] = {}
    for path in req.get("dirs", []) + req.get("files", []):
        try:
            st = os.stat(path)
        except OSError:
            out["paths"][path] = ""
            continue
        if os.path.isdir(path):
            out["paths"][path] = owner(st)
        else:
            with open(path, "rb") as handle:
                out["paths"][path] = owner(st) + " " + hashlib.sha1(handle.read()).hexdigest()
    # The node, partition and GPU lines the scheduler runs with: kept for nodes not in the run.
    # The settings only a restart reads (before Slurm 23.11), compared with the new ones.
    restart = tuple(key + "=" for key in req.get("restart_keys", []))
    for key, name, starts in (("node_lines", "slurm_conf", ("NodeName=", "PartitionName=")),
                              ("gres_lines", "gres_conf", ("NodeName=",)),
                              ("restart_lines", "slurm_conf", restart)):
        path = req.get(name)
        if path:
            out[key] = []
            try:
                with open(path) as handle:
                    out[key] = [line.rstrip("\n") for line in handle if line.startswith(starts)]
            except OSError:
                pass
    if req.get("slurmd_c"):
        rc, text = run(["slurmd", "-C"])
        out["slurmd_c"] = text.splitlines()[0] if rc == 0 and text else ""
    env_file = req.get("env_file")
    if env_file:
        out["slurmd_options"] = None
        out["env_file_text"] = None
        try:
            with open(env_file) as handle:
                out["env_file_text"] = handle.read()
            for line in out["env_file_text"].splitlines():
                if line.startswith("SLURMD_OPTIONS="):
                    out["slurmd_options"] = line
        except (OSError, UnicodeDecodeError):
            pass
    # Where gpucluster.core.nvidia_smi_facts looks too.
    out["nvidia_smi"] = any(shutil.which("nvidia-smi", path=p) for p in (
        os.environ.get("PATH", ""), "/usr/bin", "/usr/local/bin", "/usr/local/nvidia/bin", "/opt/nvidia/bin"))
    # In the common role's firewall entry point's terms (common_firewall_state): which firewall
    # is active, the ports it lists as open and its rules as the entry point's probe prints them
    # (lines: their sources and comments).
    fw = {"active": "none", "open": []}
    if req.get("firewall"):
        if run(["systemctl", "is-active", "firewalld"])[1].strip() == "active":
            ports = run(["firewall-cmd", "--list-ports"])[1].split()
            rich = run(["firewall-cmd", "--list-rich-rules"])[1].splitlines()
            fw = {"active": "firewalld", "open": ports, "lines": ["port " + " ".join(ports)] + ["rich " + r for r in rich]}
        elif shutil.which("ufw"):
            rc, text = run(["ufw", "status"])
            if "Status: active" in text.splitlines()[:1]:
                fw = {"active": "ufw", "open": sorted(set(line.split()[0] for line in text.splitlines()
                                                          if " ALLOW " in line and "/" in line.split()[0])),
                      "lines": ["rule " + line for line in text.splitlines() if " ALLOW " in line]}
    out["firewall"] = fw
    print(json.dumps(out))


main()
