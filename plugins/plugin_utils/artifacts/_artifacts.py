# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The artifact list of an inventory (playbooks/artifacts.yml), controller side, pure, no Ansible imports.

What every host of the site playbook downloads, for air-gapped sites that mirror exactly that:

- ``host_plan``: a host's operating system (gathered in this run, or from the fact cache when the
  host cannot be reached), whether it is a GPU node (the rule of playbooks/site.yml) and which
  roles site.yml runs on it;
- ``document``: every host's role records (``__<role>_artifacts``, set by each role's
  ``tasks/artifacts.yml`` from the variables its install tasks use) merged into one document,
  deduplicated across hosts, each artifact with the roles and hosts that need it, then checked
  by ``validate``;
- ``table``: the document as a short text table.

The filters in plugins/filter/artifacts.py wrap these functions.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from ansible_collections.gpucluster.core.plugins.plugin_utils.common._rules import RuleError

FORMAT = "gpucluster.core.artifacts/1"
NEWEST = "newest"
# The roles of playbooks/site.yml in build order, and the common role's record last.
SITE_ROLES = ("base_os", "nvidia_driver", "cuda", "ofed", "container_toolkit", "nfs", "monitoring", "slurm", "kubernetes",
              "gpu_operator", "training_operator")
RECORD_ROLES = SITE_ROLES + ("common",)
GPU_ROLES = ("nvidia_driver", "cuda", "container_toolkit")
CLUSTER_ROLES = ("base_os", "ofed", "nfs")
# site.yml runs monitoring on the cluster and on the monitoring hosts.
MONITORING_GROUP = "monitoring"
# site.yml's host patterns: the cluster group, the Slurm groups, and the GPU nodes' group.
CLUSTER_GROUP = "cluster"
SLURM_GROUPS = ("slurm_controller", "slurm_dbd", "slurm_compute", "slurm_login")
# site.yml runs kubernetes and gpu_operator on these.
K8S_GROUPS = ("k8s_control_plane", "k8s_workers")
K8S_ROLES = ("kubernetes", "gpu_operator", "training_operator")
GPU_GROUP = "gpucluster_gpu_nodes"
# The OS facts a host's artifacts depend on: document key -> fact name.
OS_FACTS = (
    ("distribution", "distribution"),
    ("version", "distribution_version"),
    ("major_version", "distribution_major_version"),
    ("release", "distribution_release"),
    ("os_family", "os_family"),
    ("architecture", "architecture"),
    ("pkg_mgr", "pkg_mgr"),
)
# apt names the machine architectures its own way (the $(ARCH) of a source).
APT_ARCHITECTURES = {"x86_64": "amd64", "aarch64": "arm64", "ppc64le": "ppc64el", "armv7l": "armhf"}
RECORD_KEYS = ("role", "supported", "repositories", "files", "images", "charts", "manifests",
               "distribution_packages", "warnings", "only_with_repositories")
REPOSITORY_KEYS = ("name", "description", "url", "key_url", "suites", "components", "packages", "pins",
                   "gpgcheck", "repo_gpgcheck")
TOP_KEYS = ("format", "hosts", "repositories", "files", "images", "charts", "manifests",
            "distribution_packages", "warnings")


class ArtifactsError(RuleError):
    """The input is not of the expected shape, or the merged document is not valid."""


# ----------------------------------------------------------------------------- helpers


def _plain(value: Any) -> Any:
    """Plain dicts, lists and strings (Ansible hands over its own mapping and string types)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, str):
        return str(value)
    return value


def _add(items: List[str], value: str) -> None:
    if value not in items:
        items.append(value)


def _os_label(os_facts: Mapping[str, str]) -> str:
    return "%s %s (%s)" % (os_facts["distribution"], os_facts["major_version"], os_facts["release"])


def _strings(where: str, value: Any, allow_empty_items: bool = False) -> List[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) and (v or allow_empty_items) for v in value):
        raise ArtifactsError("%s must be a list of non-empty strings (got %r)" % (where, value))
    return list(value)


def _text(where: str, value: Any, empty: bool = False) -> str:
    if not isinstance(value, str) or not (value or empty):
        raise ArtifactsError("%s must be a %sstring (got %r)" % (where, "" if empty else "non-empty ", value))
    return value


# ----------------------------------------------------------------------------- host plan


def _as_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "yes", "on", "1"):
        return True
    if text in ("false", "no", "off", "0"):
        return False
    raise ArtifactsError("artifacts_host_plan: gpucluster_gpu_node must be true or false (got %r)" % (value,))


def host_plan(data: Mapping[str, Any], host: str) -> Dict[str, Any]:
    """A host's OS, GPU node decision and the roles site.yml runs on it.

    ``data``: ``facts`` (the host's ``ansible_facts``: this run's, else the fact cache's),
    ``setup`` and ``probe`` (the registered results of the OS fact gathering and of
    nvidia_smi_facts; either may be unreachable, failed or skipped), ``gpu_node`` (the
    inventory's ``gpucluster_gpu_node``, None when unset) and ``groups`` (the host's
    ``group_names``).

    GPU nodes as site.yml finds them: ``gpucluster_gpu_node`` decides where set; else the
    NVIDIA devices (PCI or nvidia-smi) read in this run or kept by the fact cache; a cluster
    host whose hardware is known nowhere counts as a GPU node (with a warning) so that the
    list is complete. A static member of the group gpucluster_gpu_nodes is always one (site.yml's
    GPU plays run on that group).
    """
    if not isinstance(data, Mapping) or not isinstance(host, str):
        raise ArtifactsError("artifacts_host_plan: the input must be a mapping and the host a name")
    facts = data.get("facts") or {}
    setup = data.get("setup") or {}
    probe = data.get("probe") or {}
    groups = list(data.get("groups") or [])
    if not isinstance(facts, Mapping) or not isinstance(setup, Mapping) or not isinstance(probe, Mapping):
        raise ArtifactsError("artifacts_host_plan: facts, setup and probe must be mappings (host '%s')" % host)
    warnings: List[str] = []
    gathered = isinstance(setup.get("ansible_facts"), Mapping)
    if gathered:
        reason = None
    elif setup.get("unreachable"):
        reason = "not reachable: %s" % str(setup.get("msg", "")).strip()
    else:
        reason = "the fact gathering failed: %s" % str(setup.get("msg", "")).strip()
    missing = [fact for _key, fact in OS_FACTS if not isinstance(facts.get(fact), str) or not facts.get(fact)]
    os_facts: Optional[Dict[str, str]] = None
    if missing:
        os_from = "unknown"
        if gathered:
            warnings.append("host '%s': unknown OS (the gathered facts lack %s): nothing is listed for it"
                            % (host, ", ".join(missing)))
        elif len(missing) == len(OS_FACTS):
            warnings.append("host '%s': unknown OS (not reachable in this run and not in the fact cache): "
                            "nothing is listed for it" % host)
        else:
            warnings.append("host '%s': unknown OS (not reachable in this run, and the fact cache lacks %s): "
                            "nothing is listed for it" % (host, ", ".join(missing)))
    else:
        os_facts = {key: str(facts[fact]) for key, fact in OS_FACTS}
        os_from = "gathered" if gathered else "fact cache"
        if not gathered:
            warnings.append("host '%s': not reachable in this run: its OS (%s %s (%s)) comes from the fact cache"
                            % (host, os_facts["distribution"], os_facts["version"], os_facts["release"]))

    in_cluster = CLUSTER_GROUP in groups
    gpu_node: Optional[bool] = False
    gpu_from: Optional[str] = None
    nvidia = facts.get("nvidia")
    if GPU_GROUP in groups:
        gpu_node, gpu_from = True, "inventory group %s" % GPU_GROUP
    elif not in_cluster:
        gpu_node, gpu_from = False, "not in group %s" % CLUSTER_GROUP
    elif data.get("gpu_node") is not None:
        gpu_node, gpu_from = _as_bool(data["gpu_node"]), "gpucluster_gpu_node"
    elif isinstance(nvidia, Mapping):
        pci = nvidia.get("pci") if isinstance(nvidia.get("pci"), Mapping) else {}
        gpu_node = int(nvidia.get("gpu_count") or 0) > 0 or int(pci.get("gpu_count") or 0) > 0
        gpu_from = "hardware" if isinstance(probe.get("ansible_facts"), Mapping) else "fact cache"
    elif os_facts is not None:
        gpu_node, gpu_from = True, "assumed"
        warnings.append("host '%s': GPU hardware unknown (not read in this run and not in the fact cache): listed "
                        "as a GPU node so that the list is complete (gpucluster_gpu_node decides instead)" % host)
    else:
        gpu_node = None

    roles: List[str] = []
    if os_facts is not None:
        in_slurm = any(group in groups for group in SLURM_GROUPS)
        in_k8s = any(group in groups for group in K8S_GROUPS)
        for role in SITE_ROLES:
            if ((role in GPU_ROLES and gpu_node) or (role in CLUSTER_ROLES and in_cluster) or (role == "slurm" and in_slurm)
                    or (role == "monitoring" and (in_cluster or MONITORING_GROUP in groups))
                    or (role in K8S_ROLES and in_k8s)):
                roles.append(role)
    return {"host": host, "os": os_facts, "os_from": os_from, "reason": reason, "gpu_node": gpu_node,
            "gpu_node_from": gpu_from, "roles": roles, "warnings": warnings}


# ----------------------------------------------------------------------------- role records


def _check_record(host: str, role: str, record: Any) -> Dict[str, Any]:
    where = "artifacts_document: host '%s', role %s" % (host, role)
    if not isinstance(record, Mapping):
        raise ArtifactsError("%s: the record must be a mapping (got %r)" % (where, record))
    record = _plain(record)
    unknown = sorted(set(record) - set(RECORD_KEYS))
    if unknown:
        raise ArtifactsError("%s: unknown key %s (allowed: %s)" % (where, ", ".join(unknown), ", ".join(sorted(RECORD_KEYS))))
    if record.get("role") != role:
        raise ArtifactsError("%s: the record names role %r" % (where, record.get("role")))
    # Templated flags may come as text (ansible-core without native types).
    for key in ("supported", "only_with_repositories"):
        if isinstance(record.get(key), str):
            record[key] = record[key].strip().lower() in ("true", "yes", "1")
    for index, repo in enumerate(record.get("repositories") or []):
        here = "%s: repositories[%d]" % (where, index)
        if not isinstance(repo, Mapping):
            raise ArtifactsError("%s must be a mapping (got %r)" % (here, repo))
        unknown = sorted(set(repo) - set(REPOSITORY_KEYS))
        if unknown:
            raise ArtifactsError("%s: unknown key %s (allowed: %s)" % (here, ", ".join(unknown), ", ".join(sorted(REPOSITORY_KEYS))))
        _text(here + ".name", repo.get("name"))
        _text(here + ".url", repo.get("url"), empty=True)
        _text(here + ".key_url", repo.get("key_url"), empty=True)
        _strings(here + ".suites", repo.get("suites", ["/"]))
        _strings(here + ".components", repo.get("components", []))
        for key in ("packages", "pins"):
            for pindex, package in enumerate(repo.get(key) or []):
                phere = "%s.%s[%d]" % (here, key, pindex)
                if not isinstance(package, Mapping):
                    raise ArtifactsError("%s must be a mapping with name and version (got %r)" % (phere, package))
                _text(phere + ".name", package.get("name"))
                _text(phere + ".version", package.get("version", ""), empty=key == "packages")
    for index, entry in enumerate(record.get("files") or []):
        here = "%s: files[%d]" % (where, index)
        if not isinstance(entry, Mapping):
            raise ArtifactsError("%s must be a mapping with url and checksum (got %r)" % (here, entry))
        _text(here + ".url", entry.get("url"))
        _text(here + ".checksum", entry.get("checksum") or "", empty=True)
    for key in ("images", "distribution_packages", "warnings"):
        _strings("%s: %s" % (where, key), record.get(key) or [])
    for key, fields in (("charts", ("repository", "name", "version")), ("manifests", ("url",))):
        for index, entry in enumerate(record.get(key) or []):
            here = "%s: %s[%d]" % (where, key, index)
            if not isinstance(entry, Mapping):
                raise ArtifactsError("%s must be a mapping (got %r)" % (here, entry))
            for field in fields:
                _text("%s.%s" % (here, field), entry.get(field))
    return record


class _Merge:
    """Artifacts keyed as they are mirrored, each with the roles and hosts that need it, in first-seen order."""

    def __init__(self) -> None:
        self.repositories: Dict[Tuple, Dict[str, Any]] = {}
        self.files: Dict[Tuple, Dict[str, Any]] = {}
        self.images: Dict[str, Dict[str, Any]] = {}
        self.charts: Dict[Tuple, Dict[str, Any]] = {}
        self.manifests: Dict[Tuple, Dict[str, Any]] = {}
        self.distribution: Dict[Tuple, Dict[str, Any]] = {}
        self.warnings: List[str] = []

    @staticmethod
    def _use(entry: Dict[str, Any], role: str, host: str) -> Dict[str, Any]:
        _add(entry["roles"], role)
        _add(entry["hosts"], host)
        return entry

    def repository(self, host: str, os_facts: Mapping[str, str], role: str, repo: Mapping[str, Any]) -> None:
        apt = os_facts["pkg_mgr"] == "apt"
        suites = list(repo.get("suites", ["/"])) if apt else []
        components = list(repo.get("components", [])) if apt else []
        url = repo.get("url") or None
        key = (apt, url, tuple(suites), tuple(components), repo.get("key_url") or None)
        entry = self.repositories.setdefault(key, {
            "name": repo["name"], "type": "apt" if apt else "dnf", "url": url, "suites": suites,
            "components": components, "key_url": repo.get("key_url") or None, "architectures": [],
            "roles": [], "hosts": [], "packages": {}, "pins": {}})
        self._use(entry, role, host)
        architecture = os_facts["architecture"]
        _add(entry["architectures"], APT_ARCHITECTURES.get(architecture, architecture) if apt else architecture)
        for package in repo.get("packages") or []:
            version = package.get("version") or NEWEST
            item = entry["packages"].setdefault((package["name"], version), {
                "name": package["name"], "version": version, "roles": [], "hosts": []})
            self._use(item, role, host)
        for pin in repo.get("pins") or []:
            item = entry["pins"].setdefault((pin["name"], pin["version"]), {
                "name": pin["name"], "version": pin["version"], "roles": [], "hosts": []})
            self._use(item, role, host)
        if url is None:
            self.warnings.append("host '%s': %s installs %s from the repository %s, which the role does not add "
                                 "(its URL is not known here)"
                                 % (host, role, ", ".join(p["name"] for p in repo.get("packages") or []) or "nothing",
                                    repo["name"]))

    def record(self, host: str, os_facts: Mapping[str, str], record: Mapping[str, Any], with_repositories: bool) -> None:
        role = record["role"]
        if record.get("supported") is False:
            self.warnings.append("host '%s': %s does not support %s %s (its preflight stops there): listed as it "
                                 "would install" % (host, role, os_facts["distribution"], os_facts["version"]))
        for message in record.get("warnings") or []:
            self.warnings.append("host '%s': %s: %s" % (host, role, message))
        for repo in record.get("repositories") or []:
            self.repository(host, os_facts, role, repo)
        for entry in record.get("files") or []:
            checksum = entry.get("checksum") or None
            item = self.files.setdefault((entry["url"], checksum), {
                "url": entry["url"], "checksum": checksum, "roles": [], "hosts": []})
            self._use(item, role, host)
            if checksum is None:
                self.warnings.append("host '%s': %s downloads %s without a checksum (the role has no checksum "
                                     "variable for it)" % (host, role, entry["url"]))
        for name in record.get("images") or []:
            self._use(self.images.setdefault(name, {"name": name, "roles": [], "hosts": []}), role, host)
        for entry in record.get("charts") or []:
            key = (entry["repository"], entry["name"], entry["version"])
            self._use(self.charts.setdefault(key, {"repository": key[0], "name": key[1], "version": key[2],
                                                   "roles": [], "hosts": []}), role, host)
        for entry in record.get("manifests") or []:
            key = (entry["url"], entry.get("checksum") or None)
            self._use(self.manifests.setdefault(key, {"url": key[0], "checksum": key[1], "roles": [], "hosts": []}),
                      role, host)
        if record.get("only_with_repositories") and not with_repositories:
            return
        names = record.get("distribution_packages") or []
        if names:
            key = (os_facts["distribution"], os_facts["major_version"])
            group = self.distribution.setdefault(key, {
                "os": _os_label(os_facts), "distribution": os_facts["distribution"],
                "major_version": os_facts["major_version"], "release": os_facts["release"],
                "architectures": [], "hosts": [], "packages": {}})
            _add(group["architectures"], os_facts["architecture"])
            _add(group["hosts"], host)
            for name in names:
                self._use(group["packages"].setdefault(name, {"name": name, "version": None, "roles": [], "hosts": []}),
                          role, host)

    def result(self) -> Dict[str, List[Dict[str, Any]]]:
        repositories = []
        for entry in self.repositories.values():
            repositories.append(dict(entry, packages=list(entry["packages"].values()), pins=list(entry["pins"].values())))
        distribution = [dict(group, packages=list(group["packages"].values())) for group in self.distribution.values()]
        return {"repositories": repositories, "files": list(self.files.values()), "images": list(self.images.values()),
                "charts": list(self.charts.values()), "manifests": list(self.manifests.values()),
                "distribution_packages": distribution}


def document(hostvars: Mapping[str, Mapping[str, Any]], hosts: Sequence[str], live: Sequence[str]) -> Dict[str, Any]:
    """The artifact list of ``hosts`` (the play's hosts, in order) from their hostvars: each host's plan
    (``__artifacts_plan``, from ``host_plan``) and role records (``__<role>_artifacts``). A host that left
    the play (``live`` lacks it: the listing failed there) is named in a warning and contributes nothing."""
    if isinstance(hosts, (str, bytes)) or isinstance(live, (str, bytes)):
        raise ArtifactsError("artifacts_document: hosts and live must be lists of host names")
    live_hosts = set(live)
    merge = _Merge()
    warnings: List[str] = []
    host_entries: List[Dict[str, Any]] = []
    for host in hosts:
        variables = hostvars[host]
        plan = variables.get("__artifacts_plan")
        if not isinstance(plan, Mapping):
            warnings.append("host '%s': the listing stopped before its OS was read (the error is above): nothing is "
                            "listed for it" % host)
            host_entries.append({"host": host, "os": None, "os_from": "unknown", "reason": None, "gpu_node": None,
                                 "gpu_node_from": None, "roles": [], "listed": False})
            continue
        plan = _plain(plan)
        warnings.extend(plan.get("warnings") or [])
        listed = host in live_hosts and plan.get("os") is not None
        entry = {key: plan.get(key) for key in ("host", "os", "os_from", "reason", "gpu_node", "gpu_node_from", "roles")}
        entry["listed"] = listed
        host_entries.append(entry)
        if plan.get("os") is None:
            continue
        if host not in live_hosts:
            warnings.append("host '%s': the listing failed on this host (the error is above): its artifacts are "
                            "missing from the list" % host)
            continue
        records = []
        for role in list(plan.get("roles") or []) + ["common"]:
            if role not in RECORD_ROLES:
                raise ArtifactsError("artifacts_document: host '%s': unknown role %r in its plan" % (host, role))
            record = variables.get("__%s_artifacts" % role)
            if record is None:
                if role != "common":
                    raise ArtifactsError("artifacts_document: host '%s': role %s runs there but listed nothing "
                                         "(__%s_artifacts is not set)" % (host, role, role))
                continue
            records.append(_check_record(host, role, record))
        with_repositories = any(r.get("repositories") for r in records if not r.get("only_with_repositories"))
        for record in records:
            merge.record(host, plan["os"], record, with_repositories)
        # Each host's warnings together: its plan's, then its roles'.
        warnings.extend(merge.warnings)
        del merge.warnings[:]
    result = {"format": FORMAT, "hosts": host_entries}
    result.update(merge.result())
    result["warnings"] = list(dict.fromkeys(warnings))
    validate(result)
    return result


# ----------------------------------------------------------------------------- validation


def _problems(doc: Any) -> List[str]:
    if not isinstance(doc, Mapping):
        return ["the document must be a mapping"]
    problems: List[str] = []

    def need(where: str, ok: bool, what: str) -> bool:
        if not ok:
            problems.append("%s: %s" % (where, what))
        return ok

    missing = [key for key in TOP_KEYS if key not in doc]
    if missing:
        return ["missing %s" % ", ".join(missing)]
    need("format", doc["format"] == FORMAT, "must be %s (got %r)" % (FORMAT, doc["format"]))
    for key in TOP_KEYS[1:]:
        need(key, isinstance(doc[key], list), "must be a list")
    if problems:
        return problems

    def used(where: str, entry: Mapping[str, Any]) -> None:
        for key in ("roles", "hosts"):
            value = entry.get(key)
            need("%s.%s" % (where, key), isinstance(value, list) and bool(value)
                 and all(isinstance(v, str) and v for v in value), "must be a non-empty list of names")

    for index, repo in enumerate(doc["repositories"]):
        where = "repositories[%d]" % index
        if not need(where, isinstance(repo, Mapping), "must be a mapping"):
            continue
        need(where + ".type", repo.get("type") in ("apt", "dnf"), "must be apt or dnf (got %r)" % (repo.get("type"),))
        need(where + ".name", isinstance(repo.get("name"), str) and bool(repo.get("name")), "must be a non-empty string")
        for key in ("url", "key_url"):
            value = repo.get(key)
            need("%s.%s" % (where, key), value is None or (isinstance(value, str) and bool(value)),
                 "must be a non-empty string or null")
        if repo.get("type") == "apt" and repo.get("url"):
            need(where + ".suites", isinstance(repo.get("suites"), list) and bool(repo.get("suites")),
                 "an apt repository needs its suites")
        used(where, repo)
        packages = repo.get("packages")
        if need(where + ".packages", isinstance(packages, list), "must be a list"):
            seen = set()
            for pindex, package in enumerate(packages):
                here = "%s.packages[%d]" % (where, pindex)
                if not need(here, isinstance(package, Mapping), "must be a mapping"):
                    continue
                for key in ("name", "version"):
                    need("%s.%s" % (here, key), isinstance(package.get(key), str) and bool(package.get(key)),
                         "must be a non-empty string")
                need(here, (package.get("name"), package.get("version")) not in seen,
                     "%s %s is listed twice" % (package.get("name"), package.get("version")))
                seen.add((package.get("name"), package.get("version")))
                used(here, package)
    for index, entry in enumerate(doc["files"]):
        where = "files[%d]" % index
        if need(where, isinstance(entry, Mapping), "must be a mapping"):
            need(where + ".url", isinstance(entry.get("url"), str) and bool(entry.get("url")), "must be a non-empty string")
            checksum = entry.get("checksum")
            need(where + ".checksum", checksum is None or (isinstance(checksum, str) and ":" in checksum),
                 "must be ALGORITHM:HEX or null (got %r)" % (checksum,))
            used(where, entry)
    for key in ("images", "charts", "manifests"):
        for index, entry in enumerate(doc[key]):
            where = "%s[%d]" % (key, index)
            if need(where, isinstance(entry, Mapping), "must be a mapping"):
                used(where, entry)
    for index, group in enumerate(doc["distribution_packages"]):
        where = "distribution_packages[%d]" % index
        if not need(where, isinstance(group, Mapping), "must be a mapping"):
            continue
        need(where + ".os", isinstance(group.get("os"), str) and bool(group.get("os")), "must be a non-empty string")
        for pindex, package in enumerate(group.get("packages") or []):
            here = "%s.packages[%d]" % (where, pindex)
            if need(here, isinstance(package, Mapping), "must be a mapping"):
                need(here + ".version", package.get("version") is None, "must be null (the OS's own version)")
                used(here, package)
    for index, message in enumerate(doc["warnings"]):
        need("warnings[%d]" % index, isinstance(message, str) and bool(message), "must be a non-empty string")
    return problems


def validate(doc: Any) -> None:
    """Raise ArtifactsError naming every problem of an artifact document at once."""
    problems = _problems(doc)
    if problems:
        raise ArtifactsError("artifacts: the document is not valid: %s" % "; ".join(problems))


# ----------------------------------------------------------------------------- table


def _hosts(entry: Mapping[str, Any], total: int) -> str:
    return "all %d hosts" % total if len(entry["hosts"]) == total and total > 1 else ", ".join(entry["hosts"])


def table(doc: Mapping[str, Any], path: str = "") -> str:
    """The document as a short text table: hosts, repositories with their packages, files, images,
    charts and manifests, distribution packages, warnings."""
    validate(doc)
    listed = [h for h in doc["hosts"] if h["listed"]]
    total = len(listed)
    lines = ["gpucluster.core artifacts: %d of %d hosts listed%s" % (
        total, len(doc["hosts"]), (" (JSON: %s)" % path) if path else "")]
    lines.append("hosts:")
    width = max([len(h["host"]) for h in doc["hosts"]] + [4])
    for entry in doc["hosts"]:
        if entry["os"] is None:
            lines.append("  %-*s  unknown OS" % (width, entry["host"]))
            continue
        os_facts = entry["os"]
        gpu = "GPU node (%s)" % entry["gpu_node_from"] if entry["gpu_node"] else "no GPU roles"
        lines.append("  %-*s  %s %s %s, %s, %s: %s" % (
            width, entry["host"], os_facts["distribution"], os_facts["version"], os_facts["architecture"],
            entry["os_from"], gpu, ", ".join(entry["roles"]) or "no roles"))
    lines.append("repositories:%s" % ("" if doc["repositories"] else " none"))
    for repo in doc["repositories"]:
        where = repo["url"] or "(not added by the role)"
        if repo["type"] == "apt" and repo["url"]:
            where = "%s %s" % (where, " ".join(repo["suites"] + repo["components"]))
        lines.append("  %s %s: %s (key %s) for %s" % (repo["type"], repo["name"], where, repo["key_url"] or "none",
                                                      _hosts(repo, total)))
        for package in repo["packages"]:
            lines.append("    %s %s" % (package["name"], package["version"]))
    for key, title in (("files", "files"), ("images", "images"), ("charts", "charts"), ("manifests", "manifests")):
        entries = doc[key]
        lines.append("%s:%s" % (title, "" if entries else " none"))
        for entry in entries:
            if key == "files":
                text = "%s (checksum %s)" % (entry["url"], entry["checksum"] or "none")
            elif key == "charts":
                text = "%s %s %s" % (entry["repository"], entry["name"], entry["version"])
            else:
                text = entry.get("url") or entry.get("name")
            lines.append("  %s for %s" % (text, _hosts(entry, total)))
    lines.append("distribution packages:%s" % ("" if doc["distribution_packages"] else " none"))
    for group in doc["distribution_packages"]:
        lines.append("  %s: %s" % (group["os"], " ".join(p["name"] for p in group["packages"])))
    if doc["warnings"]:
        lines.append("warnings:")
        lines.extend("  %s" % message for message in doc["warnings"])
    return "\n".join(lines)
