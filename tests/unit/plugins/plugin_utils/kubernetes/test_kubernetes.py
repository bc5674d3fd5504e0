# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The kubernetes role's logic: input rules (exact messages), kubeadm documents per config API
version, the join command's parts and the node list."""

from __future__ import annotations

import pytest

from ansible_collections.gpucluster.core.plugins.plugin_utils.kubernetes import _kubernetes as k
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._rules import RuleError
from ansible_collections.gpucluster.core.tests.unit.plugins.plugin_utils import role_specs

GOOD = {
    "kubernetes_version": "1.33.5",
    "kubernetes_package_version": "1.33.5-1.1",
    "kubernetes_repo_url": "https://pkgs.k8s.io/core:/stable:/v1.33/deb/",
    "kubernetes_repo_key_url": "https://pkgs.k8s.io/core:/stable:/v1.33/deb/Release.key",
    "kubernetes_control_plane_group": "k8s_control_plane",
    "kubernetes_worker_group": "k8s_workers",
    "kubernetes_cluster_name": "gpucluster",
    "kubernetes_control_plane_endpoint": "",
    "kubernetes_apiserver_advertise_address": "",
    "kubernetes_apiserver_port": 6443,
    "kubernetes_node_name": "cp1",
    "kubernetes_pod_subnet": "10.244.0.0/16",
    "kubernetes_service_subnet": "10.96.0.0/12",
    "kubernetes_dns_domain": "cluster.local",
    "kubernetes_image_repository": "registry.k8s.io",
    "kubernetes_sandbox_image": "registry.k8s.io/pause:3.10",
    "kubernetes_image_archives": [],
    "kubernetes_cgroup_driver": "systemd",
    "kubernetes_containerd_settings": {},
    "kubernetes_registry_mirrors": {},
    "kubernetes_cni_manifest_url": "https://github.com/flannel-io/flannel/releases/download/v0.26.7/kube-flannel.yml",
    "kubernetes_control_plane_schedulable": False,
    "kubernetes_kubeconfig_fetch_path": "",
    "kubernetes_token_ttl_minutes": 15,
    "kubernetes_kubeadm_config_extra": {},
    "kubernetes_ignore_preflight_errors": [],
    "kubernetes_skip_phases": [],
    "kubernetes_kubelet_extra_args": "",
    "kubernetes_ready_timeout": 300,
    "kubernetes_client_pip_env": {},
}
GROUPS = {"k8s_control_plane": ["cp1"], "k8s_workers": ["gpu01", "gpu02"]}


def cluster(**per_host):
    """Values of cp1, gpu01 and gpu02 (GOOD with each node's name), with per-host changes."""
    values = {}
    for host in ("cp1", "gpu01", "gpu02"):
        values[host] = {**GOOD, "kubernetes_node_name": host, **per_host.get(host, {})}
    return values


def test_good_values_have_no_error():
    assert k.kubernetes_errors(cluster(), ["cp1", "gpu01", "gpu02"], GROUPS) == []
    # The good values name every option of the role's argument spec, which the rules get.
    assert set(GOOD) == set(role_specs.options("kubernetes"))


@pytest.mark.parametrize("name, value, message", [
    ("kubernetes_version", "1.19.16", "kubernetes_version: the kubeadm configuration is known for Kubernetes 1.20 to 1.35 (got '1.19.16')"),
    ("kubernetes_version", "1.36.0", "kubernetes_version: the kubeadm configuration is known for Kubernetes 1.20 to 1.35 (got '1.36.0')"),
    ("kubernetes_version", "latest", "kubernetes_version: the kubeadm configuration is known for Kubernetes 1.20 to 1.35 (got 'latest')"),
    ("kubernetes_package_version", "1.32.0-1.1", "kubernetes_package_version: must be a package of kubernetes_version 1.33.5 (got '1.32.0-1.1')"),
    ("kubernetes_package_version", "1.33.5 1.1", "kubernetes_package_version: must be a package version such as 1.33.5-1.1 (got '1.33.5 1.1')"),
    ("kubernetes_repo_url", "pkgs.k8s.io/deb", "kubernetes_repo_url: must be a http:// or https:// or file:// URL (got 'pkgs.k8s.io/deb')"),
    ("kubernetes_cluster_name", "GPU_cluster", "kubernetes_cluster_name: must be a DNS label (lowercase letters, digits and -, up to 63) (got 'GPU_cluster')"),
    ("kubernetes_control_plane_endpoint", "lb:99999",
     "kubernetes_control_plane_endpoint: must be empty or host[:port] of the API servers' load balancer (got 'lb:99999')"),
    ("kubernetes_apiserver_advertise_address", "10.0.0", "kubernetes_apiserver_advertise_address: must be an IPv4 or IPv6 address (got '10.0.0')"),
    ("kubernetes_apiserver_port", 0, "kubernetes_apiserver_port: must be within 1-65535 (got 0)"),
    ("kubernetes_node_name", "GPU01", "kubernetes_node_name: must be a lowercase DNS-1123 subdomain, Kubernetes' rule for node names (got 'GPU01')"),
    ("kubernetes_pod_subnet", "10.244.0.1/16",
     "kubernetes_pod_subnet: must be a network in CIDR notation (got '10.244.0.1/16': 10.244.0.1/16 has host bits set)"),
    ("kubernetes_service_subnet", "10.244.128.0/20", "kubernetes_service_subnet: overlaps kubernetes_pod_subnet (10.244.128.0/20 and 10.244.0.0/16)"),
    ("kubernetes_dns_domain", "Cluster.Local", "kubernetes_dns_domain: must be a lowercase DNS domain such as cluster.local (got 'Cluster.Local')"),
    ("kubernetes_image_repository", "https://registry.k8s.io",
     "kubernetes_image_repository: must be a registry and path such as registry.k8s.io (got 'https://registry.k8s.io')"),
    ("kubernetes_sandbox_image", "pause 3.10", "kubernetes_sandbox_image: must be an image reference such as registry.k8s.io/pause:3.10 (got 'pause 3.10')"),
    ("kubernetes_image_archives", ["images.tar"],
     "kubernetes_image_archives: must be a list of http(s):// or file:// URLs of image archives (got ['images.tar'])"),
    ("kubernetes_image_archives", ["http://a/x.tar", "http://b/x.tar"],
     "kubernetes_image_archives: must not name two archives with the same file name (got ['http://a/x.tar', 'http://b/x.tar'])"),
    ("kubernetes_cgroup_driver", "cgroupv2", "kubernetes_cgroup_driver: must be systemd or cgroupfs (got 'cgroupv2')"),
    ("kubernetes_containerd_settings", "SystemdCgroup=true",
     "kubernetes_containerd_settings: must be a dict of containerd CRI plugin settings (got the string 'SystemdCgroup=true')"),
    ("kubernetes_registry_mirrors", ["http://m:5000"],
     "kubernetes_registry_mirrors: must be a dict of registry host to a list of mirror URLs (got a list)"),
    ("kubernetes_registry_mirrors", {"docker.io": "http://m:5000"},
     "kubernetes_registry_mirrors: docker.io: must be a non-empty list of http:// or https:// mirror URLs (got 'http://m:5000')"),
    ("kubernetes_registry_mirrors", {"https://docker.io": ["http://m"]},
     "kubernetes_registry_mirrors: has 'https://docker.io': keys are registry hosts such as docker.io or host:port, or _default"),
    ("kubernetes_cni_manifest_url", "kube-flannel.yml",
     "kubernetes_cni_manifest_url: must be empty (the site installs its CNI), an http(s):// or file:// URL or an absolute path of the CNI's"
     " manifest (got 'kube-flannel.yml')"),
    ("kubernetes_control_plane_schedulable", "yes", "kubernetes_control_plane_schedulable: must be true or false (got 'yes')"),
    ("kubernetes_kubeconfig_fetch_path", "admin.conf", "kubernetes_kubeconfig_fetch_path: must be an absolute path (got 'admin.conf')"),
    ("kubernetes_token_ttl_minutes", 0, "kubernetes_token_ttl_minutes: must be within 1-1440 (got 0)"),
    ("kubernetes_token_ttl_minutes", 2880, "kubernetes_token_ttl_minutes: must be within 1-1440 (got 2880)"),
    ("kubernetes_ready_timeout", 5, "kubernetes_ready_timeout: must be within 30-3600 (got 5)"),
    ("kubernetes_kubeadm_config_extra", {"KubeletConfig": {}},
     "kubernetes_kubeadm_config_extra: knows the kinds InitConfiguration, ClusterConfiguration, JoinConfiguration, KubeletConfiguration,"
     " KubeProxyConfiguration (got KubeletConfig)"),
    ("kubernetes_kubeadm_config_extra", {"ClusterConfiguration": {"apiVersion": "kubeadm.k8s.io/v1beta3"}},
     "kubernetes_kubeadm_config_extra: ClusterConfiguration must not set apiVersion: the role sets them by version"),
    ("kubernetes_kubeadm_config_extra", {"InitConfiguration": "skipPhases"},
     "kubernetes_kubeadm_config_extra: must be a dict of kubeadm document kinds to dicts (got {'InitConfiguration': 'skipPhases'})"),
    ("kubernetes_ignore_preflight_errors", "Swap",
     "kubernetes_ignore_preflight_errors: must be a list of kubeadm preflight check names such as Swap (got 'Swap')"),
    ("kubernetes_skip_phases", ["addon/kube-proxy,addon/coredns"],
     "kubernetes_skip_phases: must be a list of kubeadm init phases such as addon/kube-proxy (got ['addon/kube-proxy,addon/coredns'])"),
    ("kubernetes_kubelet_extra_args", "--a\n--b", "kubernetes_kubelet_extra_args: must be text on one line (got '--a\\n--b')"),
    ("kubernetes_kubelet_extra_args", '--node-labels="a=b c"',
     "kubernetes_kubelet_extra_args: must not hold quotes or backslashes: systemd reads KUBELET_EXTRA_ARGS from an"
     " environment file, where they change the words (got '--node-labels=\"a=b c\"')"),
    ("kubernetes_pod_subnet", "10.244.0.0",
     "kubernetes_pod_subnet: must be a network in CIDR notation with its prefix length, such as 10.0.0.0/24"
     " (got '10.244.0.0')"),
    ("kubernetes_service_subnet", "10.96.0.0",
     "kubernetes_service_subnet: must be a network in CIDR notation with its prefix length, such as 10.0.0.0/24"
     " (got '10.96.0.0')"),
    ("kubernetes_client_pip_env", {"INDEX_URL": "http://mirror/simple"},
     "kubernetes_client_pip_env: 'INDEX_URL' is not a PIP_* variable name"),
    ("kubernetes_client_pip_env", {"PIP_INDEX_URL": "http://mirror/simple\n"},
     "kubernetes_client_pip_env.PIP_INDEX_URL: must be text on one line (got 'http://mirror/simple\\n')"),
    ("kubernetes_client_pip_env", ["PIP_NO_INDEX=1"], "kubernetes_client_pip_env: must map PIP_* variables to values (got ['PIP_NO_INDEX=1'])"),
], ids=lambda value: value if isinstance(value, str) and value.startswith("kubernetes_") and " " not in value else None)
def test_bad_value_of_one_host_is_named_with_the_host(name, value, message):
    errors = k.kubernetes_errors(cluster(gpu01={name: value}), ["cp1", "gpu01", "gpu02"], GROUPS)
    assert errors == ["host 'gpu01': " + message]


NODE_NETWORKS = {
    "base_os_networks": [{"name": "management", "cidr": "192.168.1.0/24"}, {"name": "compute", "cidr": "10.0.0.0/24"}],
    "base_os_addresses": {"management": "192.168.1.11", "compute": "10.0.0.11"},
}


@pytest.mark.parametrize("changes", [
    NODE_NETWORKS,
    {**NODE_NETWORKS, "kubernetes_apiserver_advertise_address": "192.168.1.11"},
    {"base_os_networks": [], "base_os_addresses": {}},
    # An IPv6 cluster network never overlaps the IPv4 pod network.
    {"base_os_networks": [{"name": "v6", "cidr": "fd00::/64"}], "base_os_addresses": {"v6": "fd00::11"}},
], ids=["networks", "advertise", "none", "ipv6"])
def test_node_networks_apart_from_pods_and_services(changes):
    assert k.kubernetes_errors(cluster(gpu01=changes), ["cp1", "gpu01", "gpu02"], GROUPS) == []


@pytest.mark.parametrize("changes, messages", [
    ({**NODE_NETWORKS, "kubernetes_pod_subnet": "10.0.0.0/16"},
     ["kubernetes_pod_subnet: overlaps base_os_networks[1] (compute) 10.0.0.0/24: the pods' and services' networks"
      " must not hold the nodes' own addresses (got 10.0.0.0/16)",
      "kubernetes_pod_subnet: overlaps base_os_addresses.compute 10.0.0.11: the pods' and services' networks"
      " must not hold the nodes' own addresses (got 10.0.0.0/16)"]),
    ({"base_os_networks": [{"name": "management", "cidr": "10.96.4.0/24"}], "base_os_addresses": {}},
     ["kubernetes_service_subnet: overlaps base_os_networks[0] (management) 10.96.4.0/24: the pods' and services'"
      " networks must not hold the nodes' own addresses (got 10.96.0.0/12)"]),
    ({"kubernetes_apiserver_advertise_address": "10.244.3.7"},
     ["kubernetes_pod_subnet: overlaps kubernetes_apiserver_advertise_address 10.244.3.7: the pods' and services'"
      " networks must not hold the nodes' own addresses (got 10.244.0.0/16)"]),
], ids=["pods-over-compute", "services-over-management", "pods-over-advertise"])
def test_node_networks_overlapping_pods_or_services(changes, messages):
    errors = k.kubernetes_errors(cluster(gpu01=changes), ["cp1", "gpu01", "gpu02"], GROUPS)
    assert errors == ["host 'gpu01': " + message for message in messages]


@pytest.mark.parametrize("groups, values, message", [
    ({"k8s_control_plane": ["cp1"], "k8s_workers": ["gpu01"]}, {},
     "host 'gpu02': is in neither k8s_control_plane (kubernetes_control_plane_group) nor k8s_workers (kubernetes_worker_group)"),
    ({"k8s_control_plane": ["cp1", "gpu01"], "k8s_workers": ["gpu01", "gpu02"]},
     {host: {"kubernetes_control_plane_endpoint": "lb:6443"} for host in ("cp1", "gpu01", "gpu02")},
     "host 'gpu01': is in both k8s_control_plane and k8s_workers: a node is either a control plane node or a worker"
     " (kubernetes_control_plane_schedulable: true lets the control plane run pods)"),
    ({"k8s_control_plane": [], "k8s_workers": ["cp1", "gpu01", "gpu02"]}, {},
     "kubernetes_control_plane_group: the inventory group k8s_control_plane has no host"),
    ({"k8s_control_plane": ["cp1", "gpu01"], "k8s_workers": ["gpu02"]}, {},
     "kubernetes_control_plane_endpoint: 2 hosts are in k8s_control_plane: several control plane nodes need the address"
     " of a load balancer in front of their API servers"),
    (GROUPS, {"gpu02": {"kubernetes_node_name": "gpu01"}}, "kubernetes_node_name: hosts gpu01, gpu02 share the node name 'gpu01'"),
    (GROUPS, {"gpu02": {"kubernetes_pod_subnet": "10.32.0.0/16"}},
     "kubernetes_pod_subnet: must be the same on every host of the cluster (got 10.244.0.0/16, 10.32.0.0/16)"),
], ids=["in-no-group", "in-both-groups", "no-control-plane", "ha-without-endpoint", "same-node-name", "subnets-differ"])
def test_cluster_rules(groups, values, message):
    assert k.kubernetes_errors(cluster(**values), ["cp1", "gpu01", "gpu02"], groups) == [message]


@pytest.mark.parametrize("version, api", [
    ("1.20.2", "kubeadm.k8s.io/v1beta2"), ("1.21.14", "kubeadm.k8s.io/v1beta2"), ("v1.22.0", "kubeadm.k8s.io/v1beta3"),
    ("1.30.9", "kubeadm.k8s.io/v1beta3"), ("1.31.0", "kubeadm.k8s.io/v1beta4"), ("1.35.1", "kubeadm.k8s.io/v1beta4"),
])
def test_kubeadm_api_by_version(version, api):
    assert k.kubeadm_api(version) == api


def _by_kind(docs):
    return {doc["kind"]: doc for doc in docs}


@pytest.mark.parametrize("version, api, socket, node_ip", [
    ("1.20.2", "kubeadm.k8s.io/v1beta2", "/run/containerd/containerd.sock", {"node-ip": "10.0.0.10"}),
    ("1.29.4", "kubeadm.k8s.io/v1beta3", "unix:///run/containerd/containerd.sock", {"node-ip": "10.0.0.10"}),
    ("1.33.5", "kubeadm.k8s.io/v1beta4", "unix:///run/containerd/containerd.sock", [{"name": "node-ip", "value": "10.0.0.10"}]),
])
def test_init_documents_per_api_version(version, api, socket, node_ip):
    values = dict(GOOD, kubernetes_version=version, kubernetes_apiserver_advertise_address="10.0.0.10",
                  kubernetes_control_plane_schedulable=True, kubernetes_control_plane_endpoint="k8s-api.lab:6443",
                  kubernetes_kubeadm_config_extra={"KubeletConfiguration": {"failSwapOn": False},
                                                   "ClusterConfiguration": {"networking": {"dnsDomain": "lab.local"}}})
    docs = _by_kind(k.kubeadm_documents(values, "init"))
    assert list(docs) == ["InitConfiguration", "ClusterConfiguration", "KubeletConfiguration"]
    init, cluster_config, kubelet = docs["InitConfiguration"], docs["ClusterConfiguration"], docs["KubeletConfiguration"]
    assert init["apiVersion"] == cluster_config["apiVersion"] == api
    assert init["bootstrapTokens"][0]["ttl"] == "15m0s"
    assert init["localAPIEndpoint"] == {"bindPort": 6443, "advertiseAddress": "10.0.0.10"}
    assert init["nodeRegistration"] == {"name": "cp1", "criSocket": socket, "kubeletExtraArgs": node_ip, "taints": []}
    assert cluster_config["kubernetesVersion"] == "v" + version
    assert cluster_config["controlPlaneEndpoint"] == "k8s-api.lab:6443"
    # The extra settings merge key by key into the role's.
    assert cluster_config["networking"] == {"podSubnet": "10.244.0.0/16", "serviceSubnet": "10.96.0.0/12",
                                            "dnsDomain": "lab.local"}
    assert kubelet == {"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
                       "cgroupDriver": "systemd", "failSwapOn": False}


def test_join_documents():
    join = {"endpoint": "10.0.0.10:6443", "token": "abcdef.0123456789abcdef", "ca_cert_hashes": ["sha256:" + "a" * 64]}
    worker = k.kubeadm_documents(dict(GOOD, kubernetes_node_name="gpu01"), "join", join)
    assert worker == [{
        "apiVersion": "kubeadm.k8s.io/v1beta4", "kind": "JoinConfiguration",
        "discovery": {"bootstrapToken": {"apiServerEndpoint": "10.0.0.10:6443", "token": "abcdef.0123456789abcdef",
                                         "caCertHashes": ["sha256:" + "a" * 64]}},
        "nodeRegistration": {"name": "gpu01", "criSocket": "unix:///run/containerd/containerd.sock"},
    }]
    plane = k.kubeadm_documents(dict(GOOD, kubernetes_node_name="cp2", kubernetes_apiserver_advertise_address="10.0.0.11"),
                                "join-control-plane", dict(join, certificate_key="f" * 64))
    assert plane[0]["controlPlane"] == {"localAPIEndpoint": {"bindPort": 6443, "advertiseAddress": "10.0.0.11"},
                                        "certificateKey": "f" * 64}
    with pytest.raises(RuleError, match="a control plane join needs certificate_key"):
        k.kubeadm_documents(GOOD, "join-control-plane", join)
    with pytest.raises(RuleError, match="a join needs endpoint, token and ca_cert_hashes"):
        k.kubeadm_documents(GOOD, "join", {"endpoint": "x:6443"})


# kubeadm 1.20's output, token and hash from a throwaway test cluster (molecule/kubernetes).
JOIN_120 = ("kubeadm join 172.17.0.2:6443 --token licpij.29kcg8rf9gqbgoyd     --discovery-token-ca-cert-hash"
            " sha256:9a87dfdf3f7d206dcea2d859b06b6ae805dd2d52d0cddabedf64f532cb613e21 \n")


def test_join_parts():
    assert k.join_parts(JOIN_120) == {
        "endpoint": "172.17.0.2:6443", "token": "licpij.29kcg8rf9gqbgoyd",
        "ca_cert_hashes": ["sha256:9a87dfdf3f7d206dcea2d859b06b6ae805dd2d52d0cddabedf64f532cb613e21"]}


@pytest.mark.parametrize("output, message", [
    ("", "kubernetes_join_parts: expected one 'kubeadm join' line from kubeadm token create --print-join-command, found 0"),
    (JOIN_120 + JOIN_120, "kubernetes_join_parts: expected one 'kubeadm join' line from kubeadm token create --print-join-command, found 2"),
    (JOIN_120.replace("licpij.29kcg8rf9gqbgoyd", "licpij.SECRET"),
     "kubernetes_join_parts: the 'kubeadm join' line has no --token of the form [a-z0-9]{6}.[a-z0-9]{16} (line not shown: it holds a secret)"),
    ("kubeadm join --token licpij.29kcg8rf9gqbgoyd\n",
     "kubernetes_join_parts: the 'kubeadm join' line has no API server endpoint (host:port) after 'kubeadm join';"
     " no --discovery-token-ca-cert-hash sha256:<64 hex digits> (line not shown: it holds a secret)"),
])
def test_join_parts_refusals_never_show_the_token(output, message):
    with pytest.raises(RuleError) as err:
        k.join_parts(output)
    assert str(err.value) == message
    assert "29kcg8rf9gqbgoyd" not in str(err.value)


def _node(name, ready, reason="", taints=()):
    return {"metadata": {"name": name},
            "spec": {"taints": [{"key": t, "effect": "NoSchedule"} for t in taints]},
            "status": {"conditions": [{"type": "Ready", "status": "True" if ready else "False", "reason": reason,
                                       "message": "container runtime network not ready" if reason else ""}],
                       "allocatable": {"cpu": "2"}}}


def test_nodes_not_ready_and_taints():
    nodes = {"kind": "List", "items": [_node("cp1", True, taints=["node-role.kubernetes.io/control-plane"]),
                                       _node("gpu01", False, "KubeletNotReady")]}
    assert k.not_ready(nodes, ["cp1", "gpu01", "gpu02"]) == [
        "node gpu01 is not Ready (KubeletNotReady: container runtime network not ready)",
        "node gpu02 is not registered with the API server"]
    assert k.node_taints(nodes) == {"cp1": ["node-role.kubernetes.io/control-plane"], "gpu01": []}


def test_nodes_from_k8s_info_read_as_from_a_node_list():
    """kubernetes.core.k8s_info's registered result (the roles' read) gives what kubectl's NodeList gives."""
    items = [_node("cp1", True, taints=["node-role.kubernetes.io/control-plane"]), _node("gpu01", False, "KubeletNotReady")]
    read = {"changed": False, "api_found": True, "resources": items, "failed": False}
    assert k.node_states(read) == k.node_states({"apiVersion": "v1", "kind": "List", "items": items})
    assert k.not_ready(read, ["cp1", "gpu01"]) == ["node gpu01 is not Ready (KubeletNotReady: container runtime network not ready)"]
    assert k.node_taints({"resources": []}) == {}


@pytest.mark.parametrize("node_list", [
    ["not", "a", "list"],
    # a failed read: kubernetes.core.k8s_info's error, no resources
    {"failed": True, "msg": "Failed to get client due to HTTPSConnectionPool(host='cp1', port=6443)"},
    None,
])
def test_node_states_refuse_what_is_not_a_node_list(node_list):
    with pytest.raises(RuleError, match=r"^kubernetes_node_states: expected kubernetes.core.k8s_info's result for kind Node "
                       r"\(resources\) or a NodeList \(items\)$"):
        k.node_states(node_list)


# kubeadm's command line and the images a node pulls

INIT_CONFIG = "/etc/kubernetes/gpucluster-kubeadm.yaml"
JOIN_CONFIG = "/etc/kubernetes/gpucluster-kubeadm-join.yaml"


@pytest.mark.parametrize("command, config, ignore, skip, want", [
    ("init", INIT_CONFIG, [], [], ["kubeadm", "init", "--config", INIT_CONFIG]),
    ("init", INIT_CONFIG, [], ["addon/kube-proxy", "addon/coredns"],
     ["kubeadm", "init", "--config", INIT_CONFIG, "--skip-phases=addon/kube-proxy,addon/coredns"]),
    ("init", INIT_CONFIG, ["Swap", "SystemVerification"], [],
     ["kubeadm", "init", "--config", INIT_CONFIG, "--ignore-preflight-errors=Swap,SystemVerification"]),
    # the phases first, then the preflight errors
    ("init", INIT_CONFIG, ["all"], ["addon/kube-proxy"],
     ["kubeadm", "init", "--config", INIT_CONFIG, "--skip-phases=addon/kube-proxy", "--ignore-preflight-errors=all"]),
    ("join", JOIN_CONFIG, [], [], ["kubeadm", "join", "--config", JOIN_CONFIG]),
    ("join", JOIN_CONFIG, ["Swap"], [], ["kubeadm", "join", "--config", JOIN_CONFIG, "--ignore-preflight-errors=Swap"]),
])
def test_kubeadm_argv(command, config, ignore, skip, want):
    assert k.kubeadm_argv(command, config, ignore, skip) == want


def test_kubeadm_argv_skips_no_phase_unless_told():
    assert k.kubeadm_argv("join", JOIN_CONFIG, ["Swap"]) == ["kubeadm", "join", "--config", JOIN_CONFIG,
                                                             "--ignore-preflight-errors=Swap"]


def test_kubeadm_argv_of_another_command():
    with pytest.raises(RuleError, match=r"^kubernetes_kubeadm_argv: command 'reset' is not one of init, join$"):
        k.kubeadm_argv("reset", INIT_CONFIG, [])


PAUSE = "registry.k8s.io/pause:3.10"


@pytest.mark.parametrize("repository, control_plane, skip, want", [
    ("registry.k8s.io", True, [], ["registry.k8s.io/kube-apiserver:v1.33.5", "registry.k8s.io/kube-controller-manager:v1.33.5",
                                   "registry.k8s.io/kube-scheduler:v1.33.5", "registry.k8s.io/kube-proxy:v1.33.5", PAUSE]),
    ("registry.k8s.io", False, [], ["registry.k8s.io/kube-proxy:v1.33.5", PAUSE]),
    # kube-proxy's addon skipped (the test bed's nodes): none of its image
    ("gpc-test.local:5000/k8s", True, ["addon/kube-proxy", "addon/coredns"],
     ["gpc-test.local:5000/k8s/kube-apiserver:v1.33.5", "gpc-test.local:5000/k8s/kube-controller-manager:v1.33.5",
      "gpc-test.local:5000/k8s/kube-scheduler:v1.33.5", PAUSE]),
    ("registry.k8s.io", False, ["addon/kube-proxy"], [PAUSE]),
    # only addon/kube-proxy by that name leaves its image out (the whole addon phase skipped does not)
    ("registry.k8s.io", False, ["addon"], ["registry.k8s.io/kube-proxy:v1.33.5", PAUSE]),
])
def test_images(repository, control_plane, skip, want):
    assert k.images(repository, "1.33.5", control_plane, skip, PAUSE) == want
