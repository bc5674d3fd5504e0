# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""molecule/exposure's checks (pytest-testinfra, molecule's verifier; the docker backend through
molecule's inventory): the services listen on the management network only, the firewall opens
their ports to the cluster's networks only, only SSH answers on head's outside address, Prometheus
scrapes every target over TLS with basic auth while a request without them is refused, the
secrets' files are readable by their service only, and no secret is in the run's output."""

from __future__ import annotations

import glob
import json
import os

import pytest
import testinfra

HEAD_MGMT, HEAD_OUTSIDE, NODE1_MGMT = "10.231.40.10", "10.231.41.10", "10.231.40.11"
# Every TCP port the collection opens on head here (base_os: SSH, public; monitoring: the node
# exporter, Prometheus, Alertmanager and its cluster port). 123/udp and 9094/udp are checked in ufw.
MONITORING_PORTS = (9100, 9090, 9093, 9094)
WEB = "/etc/gpucluster/web"

testinfra_hosts = ["head"]


@pytest.fixture(scope="module")
def nodes(request):
    inventory = request.config.option.ansible_inventory
    return {name: testinfra.get_host("ansible://" + name, ansible_inventory=inventory)
            for name in ("head", "node1", "outside")}


def _python(node, program):
    """Run a Python program on a node (the image has python3, no curl); its stdout as JSON."""
    out = node.check_output("python3 -c %s", program)
    return json.loads(out)


PROBE = """
import json, socket
out = {}
for port in %(ports)r:
    s = socket.socket(); s.settimeout(3)
    try:
        s.connect((%(address)r, port)); out[port] = "open"
    except socket.timeout:
        out[port] = "dropped"
    except OSError as err:
        out[port] = "refused" if err.errno == 111 else str(err)
    finally:
        s.close()
print(json.dumps(out))
"""


def probe(node, address, ports):
    return {int(port): state for port, state in _python(node, PROBE % {"address": address, "ports": list(ports)}).items()}


def test_services_listen_on_the_management_address_only(nodes):
    for name, address, ports in (("head", HEAD_MGMT, (9100, 9090, 9093)), ("node1", NODE1_MGMT, (9100,))):
        listening = nodes[name].socket.get_listening_sockets()
        for port in ports:
            assert "tcp://%s:%d" % (address, port) in listening, (name, port, listening)
            assert [s for s in listening if s.endswith(":%d" % port) and address not in s] == [], (name, port, listening)


def test_the_firewall_opens_the_ports_to_the_cluster_networks_only(nodes):
    status = nodes["head"].check_output("ufw status")
    assert status.startswith("Status: active"), status
    rules = [line.split() for line in status.splitlines() if " ALLOW " in line]
    anywhere = sorted(rule[0] for rule in rules if rule[2] == "Anywhere")
    # SSH stays open to every source (with its v6 twin); nothing else is.
    assert anywhere == ["22/tcp"], status
    for port in ("9100/tcp", "9090/tcp", "9093/tcp", "9094/tcp", "9094/udp", "123/udp"):
        sources = sorted(rule[2] for rule in rules if rule[0] == port)
        assert sources == ["10.231.40.0/24", "192.0.2.0/24"], (port, status)


def test_from_outside_only_ssh_answers(nodes):
    found = probe(nodes["outside"], HEAD_OUTSIDE, (22,) + MONITORING_PORTS)
    assert found[22] == "open", found
    assert {port: state for port, state in found.items() if state == "open" and port != 22} == {}, found


def test_the_firewall_drops_the_ports_even_where_something_listens_on_the_outside_address(nodes):
    # A stand-in listener on each port on head's outside address: reachable from head itself (so it
    # listens), dropped from outside (the firewall's rule with sources, not only the binding).
    head = nodes["head"]
    units = []
    try:
        for port in MONITORING_PORTS:
            unit = "gpc-exposure-standin-%d" % port
            head.check_output("systemd-run --unit %s python3 -m http.server --bind %s %s", unit, HEAD_OUTSIDE, str(port))
            units.append(unit)
        head.check_output("sleep 2")
        assert probe(head, HEAD_OUTSIDE, MONITORING_PORTS) == {port: "open" for port in MONITORING_PORTS}
        assert probe(nodes["outside"], HEAD_OUTSIDE, MONITORING_PORTS) == {port: "dropped" for port in MONITORING_PORTS}
    finally:
        for unit in units:
            head.run("systemctl stop %s", unit)


FETCH = """
import base64, json, ssl, urllib.error, urllib.request
context = ssl.create_default_context(cafile=%(ca)r)
out = {}
for name, url, auth in %(requests)r:
    request = urllib.request.Request(url)
    if auth:
        request.add_header("Authorization", "Basic " + base64.b64encode(auth.encode()).decode())
    try:
        with urllib.request.urlopen(request, context=context, timeout=10) as answer:
            out[name] = [answer.status, json.loads(answer.read() or b"null") if url.endswith(("up", "active")) else None]
    except urllib.error.HTTPError as err:
        out[name] = [err.code, None]
    except OSError as err:
        out[name] = [0, str(err)]
print(json.dumps(out))
"""


def fetch(node, requests, ca=WEB + "/ca.crt"):
    return _python(node, FETCH % {"ca": ca, "requests": requests})


def test_prometheus_scrapes_every_target_over_tls_with_basic_auth(nodes):
    head = nodes["head"]
    password = head.file(WEB + "/scrape.password").content_string
    auth = "prometheus:" + password
    found = fetch(head, [("up", "https://%s:9090/api/v1/query?query=up" % HEAD_MGMT, auth),
                         ("targets", "https://%s:9090/api/v1/targets?state=active" % HEAD_MGMT, auth)])
    assert found["up"][0] == 200, found
    series = sorted((r["metric"]["job"], r["metric"].get("node", ""), r["value"][1]) for r in found["up"][1]["data"]["result"]
                    if r["metric"].get("node"))
    assert series == [("alertmanager", "head", "1"), ("node", "head", "1"), ("node", "node1", "1"),
                      ("prometheus", "head", "1")], found
    urls = sorted(t["scrapeUrl"] for t in found["targets"][1]["data"]["activeTargets"])
    assert urls == ["https://%s:9090/metrics" % HEAD_MGMT, "https://%s:9093/metrics" % HEAD_MGMT,
                    "https://%s:9100/metrics" % HEAD_MGMT, "https://%s:9100/metrics" % NODE1_MGMT], urls


def test_a_request_without_credentials_or_tls_is_refused(nodes):
    head = nodes["head"]
    found = fetch(head, [("prometheus", "https://%s:9090/api/v1/query?query=up" % HEAD_MGMT, ""),
                         ("alertmanager", "https://%s:9093/api/v2/status" % HEAD_MGMT, ""),
                         ("node1", "https://%s:9100/metrics" % NODE1_MGMT, ""),
                         ("wrong password", "https://%s:9100/metrics" % NODE1_MGMT, "prometheus:not-the-password"),
                         ("plain http", "http://%s:9100/metrics" % NODE1_MGMT, "")])
    assert {name: code for name, (code, _body) in found.items()} == {
        "prometheus": 401, "alertmanager": 401, "node1": 401, "wrong password": 401, "plain http": 400}, found


@pytest.mark.parametrize("name, path, mode, group", [
    ("head", WEB, 0o750, "prometheus"),
    ("head", WEB + "/web-config.yml", 0o640, "prometheus"),
    ("head", WEB + "/tls.key", 0o640, "prometheus"),
    ("head", WEB + "/scrape.password", 0o640, "prometheus"),
    ("node1", WEB + "/web-config.yml", 0o640, "prometheus"),
    ("node1", WEB + "/tls.key", 0o640, "prometheus"),
])
def test_secret_files_are_readable_by_their_service_only(nodes, name, path, mode, group):
    secret = nodes[name].file(path)
    assert (secret.exists, secret.mode, secret.user, secret.group) == (True, mode, "root", group)


def test_prometheus_reads_the_password_from_its_file_and_node1_has_none(nodes):
    config = nodes["head"].file("/etc/prometheus/prometheus.yml")
    assert config.mode == 0o644
    assert "password_file: %s/scrape.password" % WEB in config.content_string
    assert nodes["head"].file(WEB + "/scrape.password").content_string not in config.content_string
    assert not nodes["node1"].file(WEB + "/scrape.password").exists


def _secrets(head):
    """The run's secrets: the scrape password, the bcrypt hash, a line of each node's private key."""
    values = [head.file(WEB + "/scrape.password").content_string.strip()]
    values += [line.split(":", 1)[1].strip() for line in head.file(WEB + "/web-config.yml").content_string.splitlines()
               if line.strip().startswith("prometheus:")]
    tls = os.path.join(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"], "tls")
    for key in ("head.key", "node1.key"):
        with open(os.path.join(tls, key), encoding="utf-8") as handle:
            values.append(handle.read().splitlines()[1])
    assert len(values) == 4 and all(len(value) >= 16 for value in values), "the secrets were not all found"
    return values


def test_no_secret_in_the_runs_output(nodes):
    logs = os.environ.get("GPC_RUN_LOG_DIR", "")
    if not logs:
        pytest.skip("the run's step logs exist only under tests/harness/run-scenario.sh exposure")
    files = [path for path in sorted(glob.glob(os.path.join(logs, "*.log"))) if not path.endswith("verify.log")]
    assert [os.path.basename(path) for path in files] == ["check-mode.log", "converge.log", "create.log",
                                                          "idempotence.log", "prepare.log", "syntax.log"], files
    secrets = _secrets(nodes["head"])
    for path in files:
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = handle.read()
        assert [index for index, value in enumerate(secrets) if value in text] == [], path
