# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The kubernetes role's logic (controller side, pure, no Ansible imports): its input rules, the
kubeadm configuration documents for each kubeadm config API version, kubeadm's command line, the
images a node pulls, the join command's parts and what a node list says about the cluster's nodes."""

from __future__ import annotations

import ipaddress
import re
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from ansible_collections.gpucluster.core.plugins.module_utils._merge import deep_merge
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._input_types import describe
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._rules import (
    Errors, RoleInput, RuleError, abs_path, boolean, cidr_with_prefix, for_hosts, int_range, ip_address, matches, one_line,
    overlapping, pip_env, port, token, url)

# kubeadm's config API by Kubernetes minor version: v1beta2 (1.15-1.21 here from 1.20, the oldest this
# role runs), v1beta3 (1.22-1.30), v1beta4 (1.31 on). Newer minors than MAX_MINOR are refused until
# their kubeadm config is checked.
MIN_MINOR = 20
MAX_MINOR = 35
KINDS = ("InitConfiguration", "ClusterConfiguration", "JoinConfiguration", "KubeletConfiguration",
         "KubeProxyConfiguration")
KUBELET_API = "kubelet.config.k8s.io/v1beta1"
KUBE_PROXY_API = "kubeproxy.config.k8s.io/v1alpha1"
CRI_SOCKET = "/run/containerd/containerd.sock"

_VERSION_RE = re.compile(r"^v?([0-9]+)[.]([0-9]+)[.]([0-9]+)$")
_PACKAGE_VERSION_RE = re.compile(r"^([0-9]+:)?[0-9][0-9A-Za-z.+~_-]*$")
# A DNS-1123 subdomain (a node's name) and label (a cluster's name).
_SUBDOMAIN_RE = re.compile(r"^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_LABEL_RE = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
_IMAGE_RE = re.compile(r"^[a-z0-9][a-z0-9._-]*(:[0-9]+)?(/[a-z0-9][a-z0-9._-]*)*$")
_IMAGE_REF_RE = re.compile(r"^[a-z0-9][a-z0-9._-]*(:[0-9]+)?(/[a-z0-9][a-z0-9._-]*)*(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?"
                           r"(@sha256:[0-9a-f]{64})?$")
_ENDPOINT_RE = re.compile(r"^(?P<host>[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(:(?P<port>[0-9]+))?$")
_PHASE_RE = re.compile(r"^[a-z][a-z0-9-]*(/[a-z][a-z0-9-]*)*$")
_PREFLIGHT_RE = re.compile(r"^[A-Za-z][A-Za-z0-9-]*$")
_REGISTRY_RE = re.compile(r"^(_default|[A-Za-z0-9.-]+(:[0-9]+)?)$")


def parse_version(value: Any) -> Optional[Tuple[int, int, int]]:
    """(major, minor, patch) of 1.33.5 or v1.33.5; None when it is not such a version."""
    match = _VERSION_RE.match(value) if isinstance(value, str) else None
    return tuple(int(part) for part in match.groups()) if match else None  # type: ignore[return-value]


def kubeadm_api(version: str) -> str:
    """kubeadm's config API version for a Kubernetes version (RuleError outside the known range)."""
    parsed = parse_version(version)
    if parsed is None or parsed[0] != 1 or not MIN_MINOR <= parsed[1] <= MAX_MINOR:
        raise RuleError("kubernetes_version: the kubeadm configuration is known for Kubernetes 1.%d to 1.%d"
                        " (got %r)" % (MIN_MINOR, MAX_MINOR, version))
    minor = parsed[1]
    return "kubeadm.k8s.io/" + ("v1beta2" if minor < 22 else "v1beta3" if minor < 31 else "v1beta4")


def _endpoint(value: Any) -> Optional[str]:
    match = _ENDPOINT_RE.match(value) if isinstance(value, str) else None
    if not match or (match.group("port") and not 1 <= int(match.group("port")) <= 65535):
        return "must be empty or host[:port] of the API servers' load balancer (got %r)" % (value,)
    return None


def _node_networks(values: Mapping[str, Any]) -> List[Tuple[str, str]]:
    """The node's own networks and addresses, each with the variable that names it: the cluster
    networks of the base_os role (base_os_networks[i].cidr), this host's addresses on them
    (base_os_addresses.<network>) and its advertise address."""
    out: List[Tuple[str, str]] = []
    networks = values.get("base_os_networks")
    for index, network in enumerate(networks if isinstance(networks, list) else []):
        if isinstance(network, Mapping) and isinstance(network.get("cidr"), str):
            out.append(("base_os_networks[%d] (%s)" % (index, network.get("name")), network["cidr"]))
    addresses = values.get("base_os_addresses")
    for name, address in sorted((addresses if isinstance(addresses, Mapping) else {}).items()):
        if isinstance(address, str) and address:
            out.append(("base_os_addresses.%s" % name, address))
    address = values.get("kubernetes_apiserver_advertise_address")
    if isinstance(address, str) and address:
        out.append(("kubernetes_apiserver_advertise_address", address))
    return out


def _string_list(errors: Errors, var: str, value: Any, pattern: "re.Pattern[str]", what: str) -> None:
    if not isinstance(value, list) or not all(isinstance(v, str) and pattern.match(v) for v in value):
        errors.add(var, "must be a list of %s (got %r)" % (what, value))


def _check_host(errors: Errors, values: Mapping[str, Any]) -> None:
    version = values.get("kubernetes_version")
    known = True
    try:
        kubeadm_api(version)
    except RuleError as exc:
        errors.add("kubernetes_version", str(exc).split(": ", 1)[1])
        known = False
    package_version = values.get("kubernetes_package_version")
    if not isinstance(package_version, str) or not _PACKAGE_VERSION_RE.match(package_version):
        errors.add("kubernetes_package_version", "must be a package version such as 1.33.5-1.1 (got %r)"
                   % (package_version,))
    elif known and not package_version.split(":")[-1].startswith(str(version).lstrip("v") + "-"):
        errors.add("kubernetes_package_version", "must be a package of kubernetes_version %s (got %r)"
                   % (version, package_version))
    for name in ("kubernetes_repo_url", "kubernetes_repo_key_url"):
        errors.check(name, url(values.get(name)))
    for name in ("kubernetes_control_plane_group", "kubernetes_worker_group"):
        errors.check(name, token(values.get(name)))
    errors.check("kubernetes_cluster_name", matches(values.get("kubernetes_cluster_name"), _LABEL_RE,
                                                    "a DNS label (lowercase letters, digits and -, up to 63)"))
    endpoint = values.get("kubernetes_control_plane_endpoint")
    if endpoint not in ("", None):
        errors.check("kubernetes_control_plane_endpoint", _endpoint(endpoint))
    address = values.get("kubernetes_apiserver_advertise_address")
    if address not in ("", None):
        errors.check("kubernetes_apiserver_advertise_address", ip_address(address))
    errors.check("kubernetes_apiserver_port", port(values.get("kubernetes_apiserver_port")))
    errors.check("kubernetes_node_name", matches(values.get("kubernetes_node_name"), _SUBDOMAIN_RE,
                                                 "a lowercase DNS-1123 subdomain, Kubernetes' rule for node names"))
    networks = {}
    for name in ("kubernetes_pod_subnet", "kubernetes_service_subnet"):
        if errors.check(name, cidr_with_prefix(values.get(name))):
            networks[name] = ipaddress.ip_network(values[name])
    if len(networks) == 2 and networks["kubernetes_pod_subnet"].overlaps(networks["kubernetes_service_subnet"]):
        errors.add("kubernetes_service_subnet", "overlaps kubernetes_pod_subnet (%s and %s)"
                   % (values["kubernetes_service_subnet"], values["kubernetes_pod_subnet"]))
    for name in networks:
        for where, node in _node_networks(values):
            if overlapping(values[name], [node]):
                errors.add(name, "overlaps %s %s: the pods' and services' networks must not hold the nodes' own"
                           " addresses (got %s)" % (where, node, values[name]))
    errors.check("kubernetes_dns_domain", matches(values.get("kubernetes_dns_domain"), _SUBDOMAIN_RE,
                                                  "a lowercase DNS domain such as cluster.local"))
    errors.check("kubernetes_image_repository", matches(values.get("kubernetes_image_repository"), _IMAGE_RE,
                                                        "a registry and path such as registry.k8s.io"))
    errors.check("kubernetes_sandbox_image", matches(values.get("kubernetes_sandbox_image"), _IMAGE_REF_RE,
                                                     "an image reference such as registry.k8s.io/pause:3.10"))
    archives = values.get("kubernetes_image_archives")
    if not isinstance(archives, list) or any(url(a) for a in archives):
        errors.add("kubernetes_image_archives", "must be a list of http(s):// or file:// URLs of image archives"
                   " (got %r)" % (archives,))
    elif len({a.rstrip("/").rsplit("/", 1)[-1] for a in archives}) != len(archives):
        errors.add("kubernetes_image_archives", "must not name two archives with the same file name (got %r)"
                   % (archives,))
    if values.get("kubernetes_cgroup_driver") not in ("systemd", "cgroupfs"):
        errors.add("kubernetes_cgroup_driver", "must be systemd or cgroupfs (got %r)"
                   % (values.get("kubernetes_cgroup_driver"),))
    settings = values.get("kubernetes_containerd_settings")
    if not isinstance(settings, Mapping):
        errors.add("kubernetes_containerd_settings", "must be a dict of containerd CRI plugin settings (got %s)"
                   % describe(settings))
    _check_mirrors(errors, values.get("kubernetes_registry_mirrors"))
    cni = values.get("kubernetes_cni_manifest_url")
    if cni not in ("", None) and url(cni) is not None and abs_path(cni) is not None:
        errors.add("kubernetes_cni_manifest_url", "must be empty (the site installs its CNI), an http(s):// or"
                   " file:// URL or an absolute path of the CNI's manifest (got %r)" % (cni,))
    errors.check("kubernetes_control_plane_schedulable", boolean(values.get("kubernetes_control_plane_schedulable")))
    fetch = values.get("kubernetes_kubeconfig_fetch_path")
    if fetch not in ("", None):
        errors.check("kubernetes_kubeconfig_fetch_path", abs_path(fetch))
    errors.check("kubernetes_token_ttl_minutes", int_range(values.get("kubernetes_token_ttl_minutes"), 1, 1440))
    errors.check("kubernetes_ready_timeout", int_range(values.get("kubernetes_ready_timeout"), 30, 3600))
    extra = values.get("kubernetes_kubeadm_config_extra")
    if not isinstance(extra, Mapping) or not all(isinstance(v, Mapping) for v in extra.values()):
        errors.add("kubernetes_kubeadm_config_extra", "must be a dict of kubeadm document kinds to dicts (got %r)"
                   % (extra,))
    else:
        unknown = sorted(set(extra) - set(KINDS))
        if unknown:
            errors.add("kubernetes_kubeadm_config_extra", "knows the kinds %s (got %s)"
                       % (", ".join(KINDS), ", ".join(map(str, unknown))))
        for kind, body in extra.items():
            fixed = sorted({"apiVersion", "kind"} & set(body))
            if fixed:
                errors.add("kubernetes_kubeadm_config_extra", "%s must not set %s: the role sets them by version"
                           % (kind, " or ".join(fixed)))
    _string_list(errors, "kubernetes_ignore_preflight_errors", values.get("kubernetes_ignore_preflight_errors"),
                 _PREFLIGHT_RE, "kubeadm preflight check names such as Swap")
    _string_list(errors, "kubernetes_skip_phases", values.get("kubernetes_skip_phases"), _PHASE_RE,
                 "kubeadm init phases such as addon/kube-proxy")
    extra_args = values.get("kubernetes_kubelet_extra_args")
    if errors.check("kubernetes_kubelet_extra_args", one_line(extra_args)) and re.search(r"[\"'\\]", extra_args):
        errors.add("kubernetes_kubelet_extra_args", "must not hold quotes or backslashes: systemd reads"
                   " KUBELET_EXTRA_ARGS from an environment file, where they change the words (got %r)" % (extra_args,))
    pip_env(errors, "kubernetes_client_pip_env", values.get("kubernetes_client_pip_env"))


def _check_mirrors(errors: Errors, mirrors: Any) -> None:
    var = "kubernetes_registry_mirrors"
    if not isinstance(mirrors, Mapping):
        errors.add(var, "must be a dict of registry host to a list of mirror URLs (got %s)" % describe(mirrors))
        return
    for registry, urls in mirrors.items():
        if not isinstance(registry, str) or not _REGISTRY_RE.match(registry):
            errors.add(var, "has %r: keys are registry hosts such as docker.io or host:port, or _default" % (registry,))
        if not isinstance(urls, list) or not urls or any(url(u, ("http", "https")) for u in urls):
            errors.add(var, "%s: must be a non-empty list of http:// or https:// mirror URLs (got %r)"
                       % (registry, urls))


def kubernetes_errors(values: Mapping[str, Mapping[str, Any]], hosts: Iterable[str],
                      groups: Mapping[str, Sequence[str]]) -> List[str]:
    """Every error over the hosts' values (each naming host and variable), then the cluster's: every
    host in the control-plane or the worker group and not both, one control plane (or an HA endpoint)."""
    hosts = list(hosts)
    out = for_hosts(values, hosts, _check_host)
    if out or not hosts:
        return out
    first = values[hosts[0]]
    plane_group, worker_group = first["kubernetes_control_plane_group"], first["kubernetes_worker_group"]
    plane, workers = list(groups.get(plane_group, ())), list(groups.get(worker_group, ()))
    for host in hosts:
        if host in plane and host in workers:
            out.append("host '%s': is in both %s and %s: a node is either a control plane node or a worker"
                       " (kubernetes_control_plane_schedulable: true lets the control plane run pods)"
                       % (host, plane_group, worker_group))
        elif host not in plane and host not in workers:
            out.append("host '%s': is in neither %s (kubernetes_control_plane_group) nor %s"
                       " (kubernetes_worker_group)" % (host, plane_group, worker_group))
    if not plane:
        out.append("kubernetes_control_plane_group: the inventory group %s has no host" % plane_group)
    elif len(plane) > 1 and not first.get("kubernetes_control_plane_endpoint"):
        out.append("kubernetes_control_plane_endpoint: %d hosts are in %s: several control plane nodes need the"
                   " address of a load balancer in front of their API servers" % (len(plane), plane_group))
    names: Dict[str, List[str]] = {}
    for host in hosts:
        names.setdefault(values[host]["kubernetes_node_name"], []).append(host)
    for name, owners in names.items():
        if len(owners) > 1:
            out.append("kubernetes_node_name: hosts %s share the node name %r" % (", ".join(owners), name))
    for name in ("kubernetes_version", "kubernetes_pod_subnet", "kubernetes_service_subnet",
                 "kubernetes_control_plane_endpoint", "kubernetes_cgroup_driver"):
        seen = sorted({str(values[h].get(name)) for h in hosts})
        if len(seen) > 1:
            out.append("%s: must be the same on every host of the cluster (got %s)" % (name, ", ".join(seen)))
    return out


def input_errors(given: RoleInput) -> List[str]:
    """The rules over this batch's hosts, each with its values as it sees them (kubernetes_node_name
    is templated per host) and its base_os_networks and base_os_addresses (its preflight adds them)."""
    return kubernetes_errors(given.hosts, list(given.hosts), given.groups)


# --- kubeadm documents --------------------------------------------------------------------------------


def _args(api: str, args: Mapping[str, str]) -> Any:
    """kubeletExtraArgs: a map before v1beta4, a list of name/value pairs from it."""
    if api.endswith("v1beta4"):
        return [{"name": k, "value": v} for k, v in sorted(args.items())]
    return dict(sorted(args.items()))


def _registration(api: str, values: Mapping[str, Any], control_plane: bool) -> Dict[str, Any]:
    registration: Dict[str, Any] = {
        "name": values["kubernetes_node_name"],
        "criSocket": CRI_SOCKET if api.endswith("v1beta2") else "unix://" + CRI_SOCKET,
    }
    address = values.get("kubernetes_apiserver_advertise_address")
    if address:
        registration["kubeletExtraArgs"] = _args(api, {"node-ip": address})
    if control_plane and values["kubernetes_control_plane_schedulable"]:
        registration["taints"] = []
    return registration


def kubeadm_documents(values: Mapping[str, Any], mode: str, join: Optional[Mapping[str, Any]] = None
                      ) -> List[Dict[str, Any]]:
    """The kubeadm configuration documents of one host for `kubeadm init` (mode init) or `kubeadm join`
    (mode join: a worker; join-control-plane: another control plane node; join carries endpoint, token,
    ca_cert_hashes and, for a control plane, certificate_key), with kubernetes_kubeadm_config_extra merged
    into each kind."""
    if mode not in ("init", "join", "join-control-plane"):
        raise RuleError("kubeadm_documents: mode must be init, join or join-control-plane (got %r)" % (mode,))
    api = kubeadm_api(values["kubernetes_version"])
    version = "v" + str(values["kubernetes_version"]).lstrip("v")
    local_endpoint: Dict[str, Any] = {"bindPort": values["kubernetes_apiserver_port"]}
    if values.get("kubernetes_apiserver_advertise_address"):
        local_endpoint["advertiseAddress"] = values["kubernetes_apiserver_advertise_address"]
    docs: List[Dict[str, Any]] = []
    if mode == "init":
        ttl = "%dm0s" % values["kubernetes_token_ttl_minutes"]
        docs.append({
            "apiVersion": api, "kind": "InitConfiguration",
            # kubeadm init always makes a bootstrap token: a short-lived one, as the joins make theirs.
            "bootstrapTokens": [{"groups": ["system:bootstrappers:kubeadm:default-node-token"], "ttl": ttl,
                                 "usages": ["signing", "authentication"]}],
            "localAPIEndpoint": local_endpoint,
            "nodeRegistration": _registration(api, values, True),
        })
        cluster: Dict[str, Any] = {
            "apiVersion": api, "kind": "ClusterConfiguration",
            "clusterName": values["kubernetes_cluster_name"],
            "kubernetesVersion": version,
            "imageRepository": values["kubernetes_image_repository"],
            "networking": {"podSubnet": values["kubernetes_pod_subnet"],
                           "serviceSubnet": values["kubernetes_service_subnet"],
                           "dnsDomain": values["kubernetes_dns_domain"]},
        }
        if values.get("kubernetes_control_plane_endpoint"):
            cluster["controlPlaneEndpoint"] = values["kubernetes_control_plane_endpoint"]
        docs.append(cluster)
        docs.append({"apiVersion": KUBELET_API, "kind": "KubeletConfiguration",
                     "cgroupDriver": values["kubernetes_cgroup_driver"]})
        if "KubeProxyConfiguration" in values["kubernetes_kubeadm_config_extra"]:
            docs.append({"apiVersion": KUBE_PROXY_API, "kind": "KubeProxyConfiguration"})
    else:
        if not join or not all(join.get(k) for k in ("endpoint", "token", "ca_cert_hashes")):
            raise RuleError("kubeadm_documents: a join needs endpoint, token and ca_cert_hashes")
        doc: Dict[str, Any] = {
            "apiVersion": api, "kind": "JoinConfiguration",
            "discovery": {"bootstrapToken": {"apiServerEndpoint": join["endpoint"], "token": join["token"],
                                             "caCertHashes": list(join["ca_cert_hashes"])}},
            "nodeRegistration": _registration(api, values, mode == "join-control-plane"),
        }
        if mode == "join-control-plane":
            if not join.get("certificate_key"):
                raise RuleError("kubeadm_documents: a control plane join needs certificate_key")
            doc["controlPlane"] = {"localAPIEndpoint": local_endpoint, "certificateKey": join["certificate_key"]}
        docs.append(doc)
    extra = values["kubernetes_kubeadm_config_extra"]
    return [deep_merge(doc, extra.get(doc["kind"], {})) for doc in docs]


KUBEADM_COMMANDS = ("init", "join")
# The control plane's images kubeadm pulls at the cluster's own version (etcd and CoreDNS come at
# versions kubeadm picks), and the kube-proxy addon's, which every node runs unless it is skipped.
CONTROL_PLANE_IMAGES = ("kube-apiserver", "kube-controller-manager", "kube-scheduler")
KUBE_PROXY_PHASE = "addon/kube-proxy"


def kubeadm_argv(command: str, config: str, ignore_errors: Sequence[str], skip_phases: Sequence[str] = ()) -> List[str]:
    """``kubeadm init`` or ``kubeadm join`` with its configuration file ``config``, the init phases
    to skip (``--skip-phases``, none when empty) and the preflight errors to ignore
    (``--ignore-preflight-errors``, none when empty), each flag's values joined by commas."""
    if command not in KUBEADM_COMMANDS:
        raise RuleError("kubernetes_kubeadm_argv: command %r is not one of %s" % (command, ", ".join(KUBEADM_COMMANDS)))
    argv = ["kubeadm", command, "--config", config]
    if skip_phases:
        argv.append("--skip-phases=" + ",".join(skip_phases))
    if ignore_errors:
        argv.append("--ignore-preflight-errors=" + ",".join(ignore_errors))
    return argv


def images(repository: str, version: str, control_plane: bool, skip_phases: Sequence[str], sandbox_image: str) -> List[str]:
    """The images a node pulls at the cluster's ``version`` (without a leading v) from ``repository``:
    the control plane's on a control plane node, kube-proxy unless its addon phase is skipped, and
    the sandbox (pause) image."""
    names = list(CONTROL_PLANE_IMAGES) if control_plane else []
    if KUBE_PROXY_PHASE not in skip_phases:
        names.append("kube-proxy")
    return ["%s/%s:v%s" % (repository, name, version) for name in names] + [sandbox_image]


_TOKEN_RE = re.compile(r"^[a-z0-9]{6}[.][a-z0-9]{16}$")
_HASH_RE = re.compile(r"^sha256:[0-9a-f]{64}$")


def join_parts(output: str) -> Dict[str, Any]:
    """endpoint, token and ca_cert_hashes from `kubeadm token create --print-join-command`'s output
    (kubeadm join ENDPOINT --token T --discovery-token-ca-cert-hash sha256:H [...], blanks as kubeadm
    prints them). The message of a RuleError never shows the token."""
    lines = [line.split() for line in (output or "").splitlines() if line.split()[:2] == ["kubeadm", "join"]]
    if len(lines) != 1:
        raise RuleError("kubernetes_join_parts: expected one 'kubeadm join' line from kubeadm token create"
                        " --print-join-command, found %d" % len(lines))
    words = lines[0][2:]
    endpoint = words[0] if words and not words[0].startswith("-") else None
    flags: Dict[str, List[str]] = {}
    for index, word in enumerate(words):
        if word.startswith("--") and index + 1 < len(words) and not words[index + 1].startswith("--"):
            flags.setdefault(word, []).append(words[index + 1])
    tokens = flags.get("--token", [])
    hashes = flags.get("--discovery-token-ca-cert-hash", [])
    problems = []
    if endpoint is None or _endpoint(endpoint) is not None:
        problems.append("no API server endpoint (host:port) after 'kubeadm join'")
    if len(tokens) != 1 or not _TOKEN_RE.match(tokens[0]):
        problems.append("no --token of the form [a-z0-9]{6}.[a-z0-9]{16}")
    if not hashes or not all(_HASH_RE.match(h) for h in hashes):
        problems.append("no --discovery-token-ca-cert-hash sha256:<64 hex digits>")
    if problems:
        raise RuleError("kubernetes_join_parts: the 'kubeadm join' line has %s (line not shown: it holds a"
                        " secret)" % "; ".join(problems))
    return {"endpoint": endpoint, "token": tokens[0], "ca_cert_hashes": hashes}


# --- nodes ---------------------------------------------------------------------------------------------


def node_items(node_list: Mapping[str, Any]) -> List[Mapping[str, Any]]:
    """The nodes of kubernetes.core.k8s_info's registered result (``resources``) or of a NodeList
    (``items``, as `kubectl get nodes -o json` prints it)."""
    if isinstance(node_list, Mapping) and isinstance(node_list.get("resources"), list):
        return node_list["resources"]
    if not isinstance(node_list, Mapping) or node_list.get("kind") != "List" and "items" not in node_list:
        raise RuleError("kubernetes_node_states: expected kubernetes.core.k8s_info's result for kind Node (resources) "
                        "or a NodeList (items)")
    return node_list.get("items") or []


def node_states(node_list: Mapping[str, Any]) -> Dict[str, Dict[str, Any]]:
    """Each node of the node list (node_items): ready (the Ready condition is True), its reason
    otherwise, its taints' keys and allocatable resources."""
    out: Dict[str, Dict[str, Any]] = {}
    for item in node_items(node_list):
        name = item["metadata"]["name"]
        conditions = {c.get("type"): c for c in (item.get("status") or {}).get("conditions") or []}
        ready = conditions.get("Ready") or {}
        out[name] = {
            "ready": ready.get("status") == "True",
            "reason": "" if ready.get("status") == "True" else
            ("%s: %s" % (ready.get("reason") or "no Ready condition", ready.get("message") or "")).rstrip(": "),
            "taints": sorted({t.get("key") for t in (item.get("spec") or {}).get("taints") or []}),
            "allocatable": dict((item.get("status") or {}).get("allocatable") or {}),
        }
    return out


def not_ready(node_list: Mapping[str, Any], wanted: Iterable[str]) -> List[str]:
    """A message for each wanted node that is missing or not Ready, naming why."""
    states = node_states(node_list)
    out = []
    for name in wanted:
        state = states.get(name)
        if state is None:
            out.append("node %s is not registered with the API server" % name)
        elif not state["ready"]:
            out.append("node %s is not Ready (%s)" % (name, state["reason"]))
    return out


def node_taints(node_list: Mapping[str, Any]) -> Dict[str, List[str]]:
    """Each node's taint keys, from the node list (node_items)."""
    return {name: state["taints"] for name, state in node_states(node_list).items()}
