# Reads, in one call, what the cuda role's checks compare (tasks/verify.yml), in the shape the
# cuda_verify_problems filter reads: each toolkit's `nvcc --version` and /usr/local/cuda's, where
# /usr/local/cuda leads (lnk_source, as stat gives it), the cuDNN and NCCL headers (content in
# base64, as slurp gives it; absent when unreadable), `ldconfig -p`, and the installed versions of
# the named packages ({name: [{version}]}, as package_facts gives them).
# Run as `python3 - REQUEST_JSON` (the script on stdin); prints JSON. Python 3.6 syntax: it runs on
# the managed node. Read-only.
import base64
import json
import os
import shutil
import subprocess
import sys


def run(argv):
    try:
        proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, check=False)
    except OSError as exc:
        return {"rc": 127, "stdout": "", "stderr": "", "msg": str(exc)}
    return {"rc": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr}


def slurp(path):
    try:
        with open(path, "rb") as handle:
            return {"content": base64.b64encode(handle.read()).decode("ascii")}
    except (OSError, IOError):
        return {}


def packages(names):
    found = {}
    if not names:
        return found
    if shutil.which("dpkg-query"):
        listing = run(["dpkg-query", "-W", "-f", "${Package}\t${Version}\t${db:Status-Abbrev}\n"] + names)["stdout"]
        for line in listing.splitlines():
            parts = line.split("\t")
            # Installed: status ?i with no error flag (ii, or hi when held).
            if len(parts) == 3 and parts[2][1:2] == "i" and parts[2][2:3].strip() == "":
                found.setdefault(parts[0], []).append({"version": parts[1]})
    else:
        listing = run(["rpm", "-q", "--qf", "%{NAME}\t%{VERSION}\n"] + names)["stdout"]
        for line in listing.splitlines():
            parts = line.split("\t")
            if len(parts) == 2:
                found.setdefault(parts[0], []).append({"version": parts[1]})
    return found


def main():
    req = json.loads(sys.argv[1])
    out = {"nvcc": [], "link": {}}
    for toolkit in req.get("toolkits", []):
        result = run([req.get("nvcc_pattern", "/usr/local/cuda-%s/bin/nvcc") % toolkit, "--version"])
        result["item"] = toolkit
        out["nvcc"].append(result)
    out["nvcc_default"] = run([req.get("default_nvcc", "/usr/local/cuda/bin/nvcc"), "--version"])
    link = req.get("link", "/usr/local/cuda")
    if os.path.islink(link):
        out["link"] = {"lnk_source": os.path.realpath(link)}
    for key in ("cudnn_header", "nccl_header"):
        out[key] = slurp(req[key]) if req.get(key) else {}
    out["ldconfig"] = run(["ldconfig", "-p"])
    out["packages"] = packages(req.get("packages", []))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
