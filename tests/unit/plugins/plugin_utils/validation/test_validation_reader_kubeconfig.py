# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""_validation_plan.reader_kubeconfig: the kubeconfig with which the health check program's
--kubernetes mode reads the nodes (a ServiceAccount that may get and list them), from the node's own
kubeconfig (kubeadm's kubelet.conf, its certificate paths as kubeadm writes them) and the token
Secret as kubernetes.core.k8s_info reads it."""

from __future__ import annotations

import base64

import pytest

from ansible_collections.gpucluster.core.plugins.plugin_utils.common._rules import RuleError
from ansible_collections.gpucluster.core.plugins.plugin_utils.validation._plan import reader_kubeconfig

KUBELET_CONF = {
    "apiVersion": "v1", "kind": "Config", "current-context": "system:node:gpu01@kubernetes",
    "clusters": [{"name": "kubernetes", "cluster": {"certificate-authority-data": "LS0tQ0E=", "server": "https://k8s-api:6443"}}],
    "contexts": [{"name": "system:node:gpu01@kubernetes", "context": {"cluster": "kubernetes", "user": "system:node:gpu01"}}],
    "users": [{"name": "system:node:gpu01", "user": {
        "client-certificate": "/var/lib/kubelet/pki/kubelet-client-current.pem",
        "client-key": "/var/lib/kubelet/pki/kubelet-client-current.pem"}}],
}
TOKEN = "eyJhbGciOiJSUzI1NiJ9.e30.c2ln"
READ = {"changed": False, "api_found": True, "resources": [{
    "apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/service-account-token",
    "metadata": {"name": "gpucluster-healthcheck", "namespace": "kube-system"},
    "data": {"ca.crt": "LS0tQ0EtZnJvbS1zZWNyZXQ=", "namespace": "a3ViZS1zeXN0ZW0=",
             "token": base64.b64encode(TOKEN.encode()).decode()}}]}


def test_reader_kubeconfig():
    assert reader_kubeconfig(KUBELET_CONF, READ, "gpucluster-healthcheck") == {
        "apiVersion": "v1", "kind": "Config", "current-context": "gpucluster-healthcheck", "preferences": {},
        "clusters": [{"name": "kubernetes", "cluster": {"server": "https://k8s-api:6443",
                                                        "certificate-authority-data": "LS0tQ0EtZnJvbS1zZWNyZXQ="}}],
        "users": [{"name": "gpucluster-healthcheck", "user": {"token": TOKEN}}],
        "contexts": [{"name": "gpucluster-healthcheck", "context": {"cluster": "kubernetes", "user": "gpucluster-healthcheck"}}],
    }


def test_reader_kubeconfig_takes_the_current_contexts_cluster():
    config = dict(KUBELET_CONF, clusters=[{"name": "old", "cluster": {"server": "https://old:6443"}}] + KUBELET_CONF["clusters"])
    assert reader_kubeconfig(config, READ, "r")["clusters"][0]["cluster"]["server"] == "https://k8s-api:6443"
    no_context = dict(config, **{"current-context": "missing"})
    assert reader_kubeconfig(no_context, READ, "r")["clusters"][0]["cluster"]["server"] == "https://old:6443"


@pytest.mark.parametrize("config, read, message", [
    ("not yaml", READ, "the node's kubeconfig is not a kubeconfig (got str)"),
    ({"clusters": []}, READ, "the node's kubeconfig names no https:// API server (got None)"),
    (dict(KUBELET_CONF, clusters=[{"name": "kubernetes", "cluster": {"server": "http://k8s-api:8080"}}]), READ,
     "the node's kubeconfig names no https:// API server (got 'http://k8s-api:8080')"),
    (KUBELET_CONF, {"resources": []},
     "the ServiceAccount token Secret has no token and ca.crt yet (the token controller fills them in)"),
    (KUBELET_CONF, {"resources": [{"data": {"ca.crt": "LS0t"}}]},
     "the ServiceAccount token Secret has no token and ca.crt yet (the token controller fills them in)"),
    (KUBELET_CONF, {"resources": [{"data": {"ca.crt": "LS0t", "token": "not base64!"}}]},
     "the ServiceAccount token Secret's token is not base64 text"),
], ids=["not-a-mapping", "no-cluster", "plain-http", "no-secret", "no-token", "bad-token"])
def test_reader_kubeconfig_errors(config, read, message):
    with pytest.raises(RuleError) as err:
        reader_kubeconfig(config, read, "r")
    assert str(err.value) == message
