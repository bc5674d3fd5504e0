# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The monitoring role's input rules and derived data (controller side, pure, no Ansible imports).

``monitoring_errors`` takes every host's monitoring variables and returns every error at once.
``scrape_configs`` turns the inventory into Prometheus's scrape jobs: every host of the scrape
group keeps its targets whether it answered this run or not (a down node must show as down, not
vanish). ``counters_csv`` writes the DCGM exporter's counters file from the role's fields and
the site's extra ones. ``dashboard_queries`` lists every PromQL expression of a Grafana dashboard
with its variables replaced as Grafana's "All" does, for checks against a real Prometheus.
"""

from __future__ import annotations

import datetime
import re
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence

from ansible_collections.gpucluster.core.plugins.plugin_utils.common._rules import (
    Errors, RoleInput, RuleError, abs_path, duplicates, for_hosts, host_values, int_range, ip_address, is_int, one_line, port,
    secret, token, url)

# The collection's own dashboard (roles/monitoring/files/dashboards/<uid>.json).
OWN_DASHBOARD = "gpucluster-gpu-health"

# Job names the role's own scrape configs use.
ROLE_JOBS = ("prometheus", "alertmanager", "node", "dcgm")

_DURATION_RE = re.compile(r"^([0-9]+(ms|s|m|h|d|w|y))+$")
_SIZE_RE = re.compile(r"^[0-9]+(B|KB|MB|GB|TB|PB|EB)$")
_FIELD_RE = re.compile(r"^DCGM_(FI|EXP)_[A-Z0-9_]+$")
_LABEL_RE = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")
_FLAG_RE = re.compile(r"^--[a-z0-9][a-z0-9.-]*(=\S*)?$")
_IMAGE_RE = re.compile(r"^[a-z0-9][a-z0-9._/:@-]*$")
_DASHBOARD_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
_CHECKSUM_RE = re.compile(r"^(sha256|sha512):[0-9a-f]+$")
# A bcrypt hash as the exporter toolkit's basic_auth_users takes it (htpasswd -B, Python's bcrypt).
_BCRYPT_RE = re.compile(r"^\$2[aby]?\$[0-9]{2}\$[./A-Za-z0-9]{53}$")
_WEB_USER_RE = re.compile(r"^[A-Za-z0-9_.@-]+$")
_PEM_RE = {"cert": re.compile(r"^-----BEGIN CERTIFICATE-----\n[\s\S]+\n-----END CERTIFICATE-----\s*$"),
           "key": re.compile(r"^-----BEGIN ([A-Z]+ )?PRIVATE KEY-----\n[\s\S]+\n-----END ([A-Z]+ )?PRIVATE KEY-----\s*$")}
_PORTS = ("monitoring_node_exporter_port", "monitoring_dcgm_exporter_port", "monitoring_prometheus_port",
          "monitoring_alertmanager_port", "monitoring_alertmanager_cluster_port", "monitoring_grafana_port")

# The DCGM exporter's fields: NVIDIA's default set (its default-counters.csv), with the
# error-class fields it leaves commented out turned on (ECC, retired pages, NVLink errors,
# throttling, row remapping, XID), which the role's alert rules read.
DCGM_COUNTERS: Sequence[Sequence[str]] = (
    ("DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz)."),
    ("DCGM_FI_DEV_MEM_CLOCK", "gauge", "Memory clock frequency (in MHz)."),
    ("DCGM_FI_DEV_MEMORY_TEMP", "gauge", "Memory temperature (in C)."),
    ("DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C)."),
    ("DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W)."),
    ("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter", "Total energy consumption since boot (in mJ)."),
    ("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "counter", "Total number of PCIe retries."),
    ("DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %)."),
    ("DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", "Memory utilization (in %)."),
    ("DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB)."),
    ("DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB)."),
    ("DCGM_FI_DEV_XID_ERRORS", "gauge", "Value of the last XID error encountered."),
    ("DCGM_FI_DEV_POWER_VIOLATION", "counter", "Throttling duration due to power constraints (in us)."),
    ("DCGM_FI_DEV_THERMAL_VIOLATION", "counter", "Throttling duration due to thermal constraints (in us)."),
    ("DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "counter", "Total number of single-bit volatile ECC errors."),
    ("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "counter", "Total number of double-bit volatile ECC errors."),
    ("DCGM_FI_DEV_ECC_DBE_AGG_TOTAL", "counter", "Total number of double-bit persistent ECC errors."),
    ("DCGM_FI_DEV_RETIRED_DBE", "counter", "Total number of retired pages due to double-bit errors."),
    ("DCGM_FI_DEV_RETIRED_PENDING", "counter", "Total number of pages pending retirement."),
    ("DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", "counter", "Total number of NVLink flow-control CRC errors."),
    ("DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL", "counter", "Total number of NVLink data CRC errors."),
    ("DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL", "counter", "Total number of NVLink retries."),
    ("DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL", "counter", "Total number of NVLink recovery errors."),
    ("DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", "counter", "Total number of NVLink bandwidth counters for all lanes."),
    ("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "counter", "Number of remapped rows for uncorrectable errors"),
    ("DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "counter", "Number of remapped rows for correctable errors"),
    ("DCGM_FI_DEV_ROW_REMAP_FAILURE", "gauge", "Whether remapping of rows has failed"),
    ("DCGM_FI_DEV_ROW_REMAP_PENDING", "gauge", "Whether remapping of rows is pending (a GPU reset is needed)"),
    ("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "gauge", "Ratio of time the graphics engine is active."),
    ("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "gauge", "Ratio of cycles the tensor (HMMA) pipe is active."),
    ("DCGM_FI_PROF_DRAM_ACTIVE", "gauge", "Ratio of cycles the device memory interface is active sending or receiving data."),
    ("DCGM_FI_DRIVER_VERSION", "label", "Driver Version"),
)


def duration(value: Any, positive: bool = False) -> Optional[str]:
    """A Prometheus duration such as 30s, 15d or 1h30m; with ``positive``, longer than 0."""
    if not isinstance(value, str) or not _DURATION_RE.match(value):
        return "must be a Prometheus duration such as 30s, 15d or 1h30m (got %r)" % (value,)
    if positive and not any(int(number) for number in re.findall(r"[0-9]+", value)):
        return "must be longer than 0 (got %r)" % (value,)
    return None


# The keys of an Alertmanager notifier (email_configs, webhook_configs, slack_configs...) that hold a URL
# it sends to (the *_file keys name a local file instead).
_NOTIFIER_URL_KEYS = ("url", "api_url", "webhook_url")


def _check_counters(errors: Errors, var: str, value: Any) -> None:
    if not isinstance(value, list):
        errors.add(var, "must be a list of {field, type, help} (got %r)" % (value,))
        return
    role_fields = {row[0] for row in DCGM_COUNTERS}
    fields = []
    for index, item in enumerate(value):
        name = "%s[%d]" % (var, index)
        if not isinstance(item, Mapping) or set(item) - {"field", "type", "help"}:
            errors.add(name, "must be a mapping with the keys field, type and help (got %r)" % (item,))
            continue
        field = item.get("field")
        if not isinstance(field, str) or not _FIELD_RE.match(field):
            errors.add(name + ".field", "must be a DCGM field name such as DCGM_FI_DEV_SM_CLOCK (got %r)" % (field,))
        elif field in role_fields:
            errors.add(name + ".field", "%s is in the role's own list already" % field)
        else:
            fields.append(field)
        if item.get("type") not in ("gauge", "counter", "label"):
            errors.add(name + ".type", "must be gauge, counter or label (got %r)" % (item.get("type"),))
        help_text = item.get("help", "")
        if not isinstance(help_text, str) or "\n" in help_text:
            errors.add(name + ".help", "must be one line of text (got %r)" % (help_text,))
    for field in duplicates(fields):
        errors.add(var, "%s is listed twice" % field)


def _receivers(errors: Errors, receivers: Any) -> List[str]:
    var = "monitoring_alertmanager_receivers"
    if not isinstance(receivers, list) or not receivers:
        errors.add(var, "must be a non-empty list of Alertmanager receivers (got %r)" % (receivers,))
        return []
    names = []
    for index, receiver in enumerate(receivers):
        if not isinstance(receiver, Mapping) or not isinstance(receiver.get("name"), str) or not receiver["name"]:
            errors.add("%s[%d]" % (var, index), "must be a mapping with a name (got %r)" % (receiver,))
            continue
        names.append(receiver["name"])
        for key, notifiers in receiver.items():
            if not str(key).endswith("_configs") or not isinstance(notifiers, list):
                continue
            for number, notifier in enumerate(notifiers):
                for url_key in _NOTIFIER_URL_KEYS:
                    if isinstance(notifier, Mapping) and isinstance(notifier.get(url_key), str):
                        errors.check("%s[%d].%s[%d].%s" % (var, index, key, number, url_key),
                                     url(notifier[url_key], ("http", "https")))
    for name in duplicates(names):
        errors.add(var, "the receiver %r is defined twice" % name)
    return names


def _route(errors: Errors, route: Any, names: List[str], path: str, top: bool) -> None:
    if not isinstance(route, Mapping):
        errors.add(path, "must be a mapping (an Alertmanager route) (got %r)" % (route,))
        return
    receiver = route.get("receiver")
    if top and receiver is None:
        errors.add(path, "the top route must name a receiver")
    elif receiver is not None and names and receiver not in names:
        errors.add(path + ".receiver", "%r is not one of monitoring_alertmanager_receivers (%s)"
                   % (receiver, ", ".join(names)))
    # Alertmanager refuses a group_interval or repeat_interval of 0; group_wait 0s sends at once.
    for key in ("group_wait", "group_interval", "repeat_interval"):
        if key in route:
            errors.check("%s.%s" % (path, key), duration(route[key], positive=key != "group_wait"))
    children = route.get("routes", [])
    if not isinstance(children, list):
        errors.add(path + ".routes", "must be a list of routes (got %r)" % (children,))
        return
    for index, child in enumerate(children):
        _route(errors, child, names, "%s.routes[%d]" % (path, index), False)


def _check_host(errors: Errors, values: Mapping[str, Any]) -> None:
    get = values.get
    for name in _PORTS:
        if name in values:
            errors.check(name, port(get(name)))
    ports = [(n, get(n)) for n in _PORTS if is_int(get(n))]
    for number in duplicates([p for _name, p in ports]):
        errors.add(", ".join(n for n, p in ports if p == number), "must be different ports (all are %d)" % number)
    for name in ("monitoring_node_exporter_textfile_dir", "monitoring_slurm_job_mapping_dir",
                 "monitoring_slurm_prolog_dir", "monitoring_slurm_epilog_dir", "monitoring_prometheus_storage_path"):
        if name in values:
            errors.check(name, abs_path(get(name)))
    for name in ("monitoring_server_group", "monitoring_scrape_group"):
        if name in values and (not isinstance(get(name), str) or not get(name)):
            errors.add(name, "must be an inventory group name (got %r)" % (get(name),))
    if "monitoring_scrape_address" in values:
        errors.check("monitoring_scrape_address", one_line(get("monitoring_scrape_address")))
    if "monitoring_network" in values:
        errors.check("monitoring_network", token(get("monitoring_network")))
    listen = get("monitoring_listen_address", "")
    if listen != "" and ip_address(listen):
        errors.add("monitoring_listen_address",
                   "must be empty (every interface) or an IP address of this host (got %r)" % (listen,))
    _check_web(errors, values)
    args = get("monitoring_node_exporter_args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) and _FLAG_RE.match(a) for a in args):
        errors.add("monitoring_node_exporter_args",
                   "must be a list of --flag or --flag=value strings without blanks (got %r)" % (args,))
    source = get("monitoring_dcgm_exporter_source", "package")
    if source not in ("package", "container"):
        errors.add("monitoring_dcgm_exporter_source", "must be package or container (got %r)" % (source,))
    elif source == "container":
        image = get("monitoring_dcgm_exporter_image")
        if not isinstance(image, str) or not _IMAGE_RE.match(image) or ":" not in image.rsplit("/", 1)[-1]:
            errors.add("monitoring_dcgm_exporter_image",
                       "must be an image reference with a tag or digest, such as "
                       "nvcr.io/nvidia/k8s/dcgm-exporter:4.2.3-4.1.3-ubuntu22.04 (got %r)" % (image,))
    interval = get("monitoring_dcgm_exporter_interval", 30000)
    if not is_int(interval) or not 100 <= interval <= 3600000:
        errors.add("monitoring_dcgm_exporter_interval", "must be milliseconds within 100-3600000 (got %r)" % (interval,))
    _check_counters(errors, "monitoring_dcgm_exporter_counters_extra", get("monitoring_dcgm_exporter_counters_extra", []))
    expected = get("monitoring_gpu_count_expected", 0)
    if not is_int(expected) or not 0 <= expected <= 64:
        errors.add("monitoring_gpu_count_expected",
                   "must be the GPUs this node must show, 0-64 (0: what nvidia-smi shows at the role run) (got %r)"
                   % (expected,))
    slurm_interval = get("monitoring_slurm_metrics_interval", 60)
    if not is_int(slurm_interval) or not 10 <= slurm_interval <= 3600:
        errors.add("monitoring_slurm_metrics_interval", "must be seconds within 10-3600 (got %r)" % (slurm_interval,))
    for name in ("monitoring_prometheus_scrape_interval", "monitoring_prometheus_evaluation_interval",
                 "monitoring_prometheus_retention_time"):
        if name in values:
            errors.check(name, duration(get(name), positive=True))
    if "monitoring_dcgm_exporter_binary" in values and source == "package":
        errors.check("monitoring_dcgm_exporter_binary", abs_path(get("monitoring_dcgm_exporter_binary")))
    if "monitoring_verify_timeout" in values:
        errors.check("monitoring_verify_timeout", int_range(get("monitoring_verify_timeout"), 10, 3600))
    size = get("monitoring_prometheus_retention_size", "")
    if size != "" and (not isinstance(size, str) or not _SIZE_RE.match(size)):
        errors.add("monitoring_prometheus_retention_size",
                   "must be empty or a size such as 500GB (units B, KB, MB, GB, TB, PB, EB) (got %r)" % (size,))
    labels = get("monitoring_prometheus_external_labels", {})
    if not isinstance(labels, Mapping) or not all(
            isinstance(k, str) and _LABEL_RE.match(k) and isinstance(v, str) for k, v in labels.items()):
        errors.add("monitoring_prometheus_external_labels",
                   "must map label names ([a-zA-Z_][a-zA-Z0-9_]*) to strings (got %r)" % (labels,))
    extra = get("monitoring_prometheus_extra_scrape_configs", [])
    if not isinstance(extra, list) or not all(isinstance(c, Mapping) and isinstance(c.get("job_name"), str)
                                              for c in extra):
        errors.add("monitoring_prometheus_extra_scrape_configs",
                   "must be a list of Prometheus scrape configs, each with a job_name (got %r)" % (extra,))
    else:
        jobs = [c["job_name"] for c in extra]
        for job in sorted(set(jobs) & set(ROLE_JOBS)):
            errors.add("monitoring_prometheus_extra_scrape_configs",
                       "the job_name %r is the role's own (%s)" % (job, ", ".join(ROLE_JOBS)))
        for job in duplicates(jobs):
            errors.add("monitoring_prometheus_extra_scrape_configs", "the job_name %r is used twice" % job)
    names = _receivers(errors, get("monitoring_alertmanager_receivers", [{"name": "default"}]))
    _route(errors, get("monitoring_alertmanager_route", {"receiver": "default"}), names,
           "monitoring_alertmanager_route", True)
    inhibit = get("monitoring_alertmanager_inhibit_rules", [])
    if not isinstance(inhibit, list) or not all(isinstance(r, Mapping) for r in inhibit):
        errors.add("monitoring_alertmanager_inhibit_rules", "must be a list of Alertmanager inhibit rules (got %r)"
                   % (inhibit,))
    _check_grafana(errors, values)


def _check_web(errors: Errors, values: Mapping[str, Any]) -> None:
    """The web configuration (TLS and basic auth of the node exporter, Prometheus, Alertmanager and the
    DCGM exporter): the certificate and the key both or neither, PEM; users with bcrypt hashes, and
    Prometheus's own user one of them, with its password where Prometheus runs. The key, the hashes
    and the password are never shown."""
    get = values.get
    cert, key = get("monitoring_web_tls_cert", ""), get("monitoring_web_tls_key", "")
    if (cert == "") != (key == ""):
        errors.add("monitoring_web_tls_key" if key == "" else "monitoring_web_tls_cert",
                   "must be set with %s (both or neither)" % ("monitoring_web_tls_cert" if key == "" else "monitoring_web_tls_key"))
    if cert != "" and (not isinstance(cert, str) or not _PEM_RE["cert"].match(cert)):
        errors.add("monitoring_web_tls_cert", "must be a PEM certificate (-----BEGIN CERTIFICATE-----...)")
    if key != "" and (not isinstance(key, str) or not _PEM_RE["key"].match(key)):
        errors.add("monitoring_web_tls_key", "must be a PEM private key (-----BEGIN PRIVATE KEY-----...; the value is not shown)")
    ca = get("monitoring_web_tls_ca", "")
    if ca != "" and (not isinstance(ca, str) or not _PEM_RE["cert"].match(ca)):
        errors.add("monitoring_web_tls_ca", "must be empty (the system's CAs) or a PEM certificate (-----BEGIN CERTIFICATE-----...)")
    users = get("monitoring_web_users", {})
    if not isinstance(users, Mapping):
        errors.add("monitoring_web_users", "must map user names to bcrypt hashes (the value is not shown)")
        return
    for name, hashed in users.items():
        if not isinstance(name, str) or not _WEB_USER_RE.match(name):
            errors.add("monitoring_web_users", "the user name %r must be letters, digits, _ . @ or -" % (name,))
        elif not isinstance(hashed, str) or not _BCRYPT_RE.match(hashed):
            errors.add("monitoring_web_users[%s]" % name,
                       "must be a bcrypt hash ($2y$..., htpasswd -nBC 10 USER) (the value is not shown)")
    if not users:
        return
    user = get("monitoring_web_scrape_user", "")
    if user not in users:
        errors.add("monitoring_web_scrape_user", "must be one of monitoring_web_users (%s) (got %r)" % (", ".join(sorted(users)), user))
    if get("monitoring_server_group") in (get("group_names") or ()):
        errors.check("monitoring_web_scrape_password", secret(get("monitoring_web_scrape_password")))


# The web settings that must be the same on every host: Prometheus scrapes every target as its own
# host's settings say (https and basic auth or not).
_WEB_SAME = (("monitoring_web_tls_cert", "TLS"), ("monitoring_web_users", "basic auth"))


def _web_alike(values: Mapping[str, Mapping[str, Any]], hosts: Sequence[str]) -> List[str]:
    out = []
    for name, what in _WEB_SAME:
        on = [host for host in hosts if values.get(host, {}).get(name)]
        off = [host for host in hosts if not values.get(host, {}).get(name)]
        if on and off:
            out.append("%s: %s must be on every host or on none (on: %s; off: %s)" % (name, what, ", ".join(on), ", ".join(off)))
    return out


def _check_grafana(errors: Errors, values: Mapping[str, Any]) -> None:
    get = values.get
    grafana = get("monitoring_grafana", True)
    if not isinstance(grafana, bool):
        errors.add("monitoring_grafana", "must be true or false (got %r)" % (grafana,))
    if "monitoring_grafana_admin_user" in values:
        errors.check("monitoring_grafana_admin_user", token(get("monitoring_grafana_admin_user")))
    folder = get("monitoring_grafana_folder", "GPU cluster")
    if errors.check("monitoring_grafana_folder", one_line(folder)) and not folder.strip():
        errors.add("monitoring_grafana_folder", "must be a folder name (got %r)" % (folder,))
    server = get("monitoring_server_group") in (get("group_names") or ())
    if grafana is True and server:
        password = get("monitoring_grafana_admin_password")
        if errors.check("monitoring_grafana_admin_password", secret(password, 8)) and one_line(password) is not None:
            errors.add("monitoring_grafana_admin_password", "must be on one line (the value is not shown)")
    if grafana is True and server and get("monitoring_grafana_repo_manage", True):
        for name in ("monitoring_grafana_repo_url", "monitoring_grafana_repo_key_url"):
            if name in values:
                errors.check(name, url(get(name)))
        for name in ("monitoring_grafana_repo_suite", "monitoring_grafana_repo_component"):
            if name in values:
                errors.check(name, token(get(name)))
    dashboards = get("monitoring_grafana_dashboard_urls", [])
    var = "monitoring_grafana_dashboard_urls"
    if not isinstance(dashboards, list):
        errors.add(var, "must be a list of {name, url, checksum} (got %r)" % (dashboards,))
        return
    names = []
    for where, item in errors.dict_items(var, dashboards, "must be a mapping with the keys name, url and (optional) checksum",
                                         lambda item: "url" in item and not set(item) - {"name", "url", "checksum"}):
        name = item.get("name")
        if not isinstance(name, str) or not _DASHBOARD_NAME_RE.match(name):
            errors.add(where + ".name", "must be a file name of lowercase letters, digits, _ and - (got %r)" % (name,))
        elif name == OWN_DASHBOARD:
            errors.add(where + ".name", "%s is the role's own dashboard" % OWN_DASHBOARD)
        else:
            names.append(name)
        errors.check(where + ".url", url(item.get("url"), ("http", "https")))
        checksum = item.get("checksum", "")
        if checksum != "" and (not isinstance(checksum, str) or not _CHECKSUM_RE.match(checksum)):
            errors.add(where + ".checksum", "must be empty or sha256:<hex> or sha512:<hex> (got %r)" % (checksum,))
    for name in duplicates(names):
        errors.add(var, "the dashboard name %r is used twice" % name)


def per_host(hostvars: Mapping[str, Mapping[str, Any]], hosts: Iterable[str],
             defaults: Mapping[str, Any]) -> Dict[str, Dict[str, Any]]:
    """Each host's values of the variables ``defaults`` names (the role's, as the asking host sees
    them), its own where it sets one."""
    return host_values(hostvars, hosts, list(defaults), defaults)


def monitoring_errors(values: Mapping[str, Mapping[str, Any]], hosts: Iterable[str]) -> List[str]:
    """Every error over the hosts' values (with each host's ``group_names``: where it is in the
    monitoring group, Grafana's admin password is required), each message naming the host and the
    variable."""
    hosts = list(hosts)
    return for_hosts(values, hosts, _check_host) + _web_alike(values, hosts)


def input_errors(given: RoleInput) -> List[str]:
    """The rules over every host of the play (``ansible_play_hosts_all``), each with its values and
    the groups it is in."""
    values = {host: dict(own, group_names=[name for name, members in given.groups.items()
                                           if name != "all" and host in members])
              for host, own in given.hosts.items()}
    return monitoring_errors(values, list(values))


# NVIDIA's CUDA repository or a mirror of it: the default key URL is the repository's URL + 3bf863cc.pub.
_CUDA_REPO_URL_RE = re.compile(r"^(https?|file)://\S+/$")


def dcgm_repo_errors(values: Mapping[str, Any], host: str) -> List[str]:
    """The errors in one host's ``monitoring_dcgm_exporter_repo_url`` and ``_repo_key_url``.

    Their defaults need the host's facts (the CUDA repository's path names the distribution), so
    preflight checks them after the facts are gathered, on the hosts that add the repository (a GPU
    node with the DCGM exporter from packages and ``monitoring_dcgm_exporter_repo_manage``)."""
    if not isinstance(values, Mapping):
        raise RuleError("monitoring_dcgm_repo_errors: the input must be a dict of the role's variables")
    errors = Errors(host)
    repo_url = values.get("monitoring_dcgm_exporter_repo_url")
    if not isinstance(repo_url, str) or not _CUDA_REPO_URL_RE.match(repo_url):
        errors.add("monitoring_dcgm_exporter_repo_url", "must be an http(s):// or file:// URL ending in / (got %r)"
                   % (repo_url,))
    errors.check("monitoring_dcgm_exporter_repo_key_url", url(values.get("monitoring_dcgm_exporter_repo_key_url")))
    return errors.messages


def is_gpu_node(host: str, hostvars: Mapping[str, Any], groups: Mapping[str, Sequence[str]]) -> bool:
    """The site's finding (group gpucluster_gpu_nodes), else the inventory's gpucluster_gpu_node, else the
    host's (possibly cached) nvidia facts; a host never seen and not declared is not a GPU node."""
    if host in groups.get("gpucluster_gpu_nodes", ()):
        return True
    values = hostvars.get(host, {})
    declared = values.get("gpucluster_gpu_node")
    if declared is not None:
        if not isinstance(declared, bool):
            raise RuleError("host '%s': gpucluster_gpu_node must be true or false (got %r)" % (host, declared))
        return declared
    nvidia = (values.get("ansible_facts") or {}).get("nvidia") or {}
    return bool(nvidia.get("gpu_count") or (nvidia.get("pci") or {}).get("gpu_count"))


def bracketed(address: str) -> str:
    """An address as it precedes ``:PORT`` (an IPv6 address in brackets)."""
    return "[%s]" % address if ":" in address else address


def listen_address(values: Mapping[str, Mapping[str, Any]], hostvars: Mapping[str, Any], host: str, server: str) -> str:
    """The address ``host``'s services listen on, as the monitoring host ``server`` works it out: its own
    (``values``, its defaults templated there); another host's ``monitoring_listen_address`` where its
    inventory sets one, else its ``base_os_addresses`` on its ``monitoring_network`` (the role's default,
    which ``values`` would give with ``server``'s own address); "" for every interface."""
    if host == server:
        return str(values.get(server, {}).get("monitoring_listen_address") or "")
    own = hostvars.get(host, {})
    if "monitoring_listen_address" in own:
        return str(own["monitoring_listen_address"] or "")
    network = values.get(host, values.get(server, {})).get("monitoring_network", "management")
    return str((own.get("base_os_addresses") or {}).get(network) or "")


def _address(values: Mapping[str, Mapping[str, Any]], host: str, hostvars: Optional[Mapping[str, Any]] = None,
             server: str = "") -> str:
    """The name or address the monitoring hosts reach ``host`` at: its ``monitoring_scrape_address``, else
    the address its services listen on, else its inventory name."""
    given = values.get(host, {}).get("monitoring_scrape_address")
    if given:
        return str(given)
    listen = listen_address(values, hostvars or {}, host, server) if hostvars is not None else ""
    return bracketed(listen) if listen else host


def web_client(own: Mapping[str, Any], paths: Mapping[str, str]) -> Dict[str, Any]:
    """What a Prometheus scrape job (or Alertmanager client) adds for the web configuration the
    monitoring host ``own`` has: ``scheme: https`` and ``tls_config`` (``ca_file`` where a CA is
    given) with TLS; ``basic_auth`` (``username``, ``password_file``) with users. Empty when off."""
    out: Dict[str, Any] = {}
    if own.get("monitoring_web_tls_cert"):
        out["scheme"] = "https"
        out["tls_config"] = {"ca_file": paths["ca_file"]} if own.get("monitoring_web_tls_ca") else {}
    if own.get("monitoring_web_users"):
        out["basic_auth"] = {"username": own.get("monitoring_web_scrape_user", ""), "password_file": paths["password_file"]}
    return out


def alertmanager_peers(values: Mapping[str, Mapping[str, Any]], groups: Mapping[str, Sequence[str]],
                       server: str, hostvars: Optional[Mapping[str, Any]] = None) -> List[str]:
    """The other monitoring hosts' Alertmanagers as ``--cluster.peer`` addresses: each host's address
    (``_address``: with ``hostvars``, its listen address where known) and its own cluster port; empty
    for a single monitoring host (gossip off)."""
    own = values[server]
    peers = sorted(set(groups.get(own["monitoring_server_group"], ())) - {server})
    return ["%s:%d" % (_address(values, h, hostvars, server), values.get(h, own)["monitoring_alertmanager_cluster_port"])
            for h in peers]


def scrape_configs(values: Mapping[str, Mapping[str, Any]], hostvars: Mapping[str, Any],
                   groups: Mapping[str, Sequence[str]], server: str,
                   paths: Optional[Mapping[str, str]] = None) -> List[Dict[str, Any]]:
    """Prometheus's scrape jobs as seen from the monitoring host ``server``: Prometheus itself (at its
    listen address, else localhost), the monitoring hosts' Alertmanagers, every scrape-group host's node
    exporter and every GPU node's DCGM exporter (each target at ``_address``, labelled with its inventory
    name, ``node``), then the site's extra jobs. With the web configuration on (``server``'s values), the
    role's jobs scrape over https and with basic auth (``web_client``, the files in ``paths``:
    ``ca_file``, ``password_file``)."""
    own = values[server]
    client = web_client(own, paths or {"ca_file": "", "password_file": ""})
    scrape_hosts = sorted(groups.get(own["monitoring_scrape_group"], ()))
    servers = sorted(groups.get(own["monitoring_server_group"], ()))

    def address(host: str) -> str:
        return _address(values, host, hostvars, server)

    def static(targets: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
        return [{"targets": [t["target"]], "labels": {"node": t["node"]}} for t in targets]

    local = bracketed(listen_address(values, hostvars, server, server)) or "localhost"
    jobs: List[Dict[str, Any]] = [
        {"job_name": "prometheus",
         "static_configs": [{"targets": ["%s:%d" % (local, own["monitoring_prometheus_port"])],
                             "labels": {"node": server}}]},
        {"job_name": "alertmanager",
         "static_configs": static([{"target": "%s:%d" % (address(h), values.get(h, own)["monitoring_alertmanager_port"]),
                                    "node": h} for h in servers])},
    ]
    node_targets = [{"target": "%s:%d" % (address(h), values.get(h, own)["monitoring_node_exporter_port"]), "node": h}
                    for h in scrape_hosts if values.get(h, own).get("monitoring_node_exporter", True)]
    if node_targets:
        jobs.append({"job_name": "node", "static_configs": static(node_targets)})
    dcgm_targets = [{"target": "%s:%d" % (address(h), values.get(h, own)["monitoring_dcgm_exporter_port"]), "node": h}
                    for h in scrape_hosts
                    if values.get(h, own).get("monitoring_dcgm_exporter", True) and is_gpu_node(h, hostvars, groups)]
    if dcgm_targets:
        jobs.append({"job_name": "dcgm", "static_configs": static(dcgm_targets)})
    jobs = [dict(job, **client) for job in jobs]
    jobs.extend(dict(job) for job in own.get("monitoring_prometheus_extra_scrape_configs") or [])
    return jobs


def pinned_packages(packages: Sequence[str], name: str, version: str) -> List[Dict[str, str]]:
    """Each package as ``{name, version, spec}``: ``name`` at ``version`` when one is set, the others at
    what the repository has (version ""); ``spec`` is what gpucluster.core.packages installs."""
    out = []
    for package in packages:
        pin = version if package == name else ""
        out.append({"name": package, "version": pin, "spec": "%s=%s" % (package, pin) if pin else package})
    return out


def counters_csv(extra: Sequence[Mapping[str, str]]) -> str:
    """The DCGM exporter's counters file: the role's fields, then the site's extra ones."""
    rows = [tuple(row) for row in DCGM_COUNTERS] + [(e["field"], e["type"], e.get("help", "")) for e in extra]
    lines = ["# DCGM FIELD, Prometheus metric type, help message"]
    lines += ["%s, %s, %s" % row for row in rows]
    return "\n".join(lines) + "\n"


# Grafana's built-in variables, at the values a check against a live Prometheus uses.
_BUILTIN_VARIABLES = {"__rate_interval": "1m", "__interval": "1m", "__interval_ms": "60000",
                      "__range": "1h", "__range_s": "3600", "__range_ms": "3600000"}
_VARIABLE_RE = re.compile(r"\$\{(\w+)(?::\w+)?\}|\[\[(\w+)\]\]|\$(\w+)")
_LABEL_VALUES_RE = re.compile(r"^\s*label_values\((?:(.*),\s*)?([a-zA-Z_][a-zA-Z0-9_]*)\s*\)\s*$", re.S)


def _variable_values(dashboard: Mapping[str, Any], where: str) -> Dict[str, str]:
    """Each dashboard variable's value with "All" selected (its allValue, else any value: .+)."""
    values = dict(_BUILTIN_VARIABLES)
    templating = dashboard.get("templating") or {}
    if not isinstance(templating, Mapping) or not isinstance(templating.get("list", []), list):
        raise RuleError("%s: templating.list must be a list" % where)
    for variable in templating.get("list", []):
        if not isinstance(variable, Mapping) or not isinstance(variable.get("name"), str):
            raise RuleError("%s: every templating variable needs a name (got %r)" % (where, variable))
        kind = variable.get("type")
        if kind in ("query", "custom"):
            values[variable["name"]] = variable.get("allValue") or ".+"
        elif kind in ("constant", "textbox", "interval", "datasource"):
            current = variable.get("current") or {}
            values[variable["name"]] = str(current.get("value") or variable.get("query") or "")
        else:
            raise RuleError("%s: variable %s has the unknown type %r" % (where, variable["name"], kind))
    return values


def _substitute(expr: str, values: Mapping[str, str], where: str) -> str:
    def replace(match: "re.Match[str]") -> str:
        name = match.group(1) or match.group(2) or match.group(3)
        if name not in values:
            raise RuleError("%s uses $%s, which is not a variable of the dashboard" % (where, name))
        return values[name]
    return _VARIABLE_RE.sub(replace, expr)


def _panels(panels: Any, where: str) -> Iterable[Mapping[str, Any]]:
    if not isinstance(panels, list):
        raise RuleError("%s: panels must be a list" % where)
    for panel in panels:
        if not isinstance(panel, Mapping):
            raise RuleError("%s: every panel must be a mapping (got %r)" % (where, panel))
        yield panel
        yield from _panels(panel.get("panels", []), where)


def dashboard_queries(dashboard: Any) -> List[Dict[str, str]]:
    """Every PromQL expression of a Grafana dashboard as ``{panel, expr, label}``: each panel
    target's expr, and each query variable's label_values() (its series must carry ``label``),
    with the dashboard's variables as Grafana's "All" sets them and the built-in intervals at
    1m (ranges 1h). Hidden targets are included: they are queries too."""
    if not isinstance(dashboard, Mapping) or not isinstance(dashboard.get("title"), str) \
            or not isinstance(dashboard.get("uid"), str) or not dashboard["uid"]:
        raise RuleError("not a Grafana dashboard (a mapping with a uid and a title)")
    where = "dashboard %s" % dashboard["uid"]
    values = _variable_values(dashboard, where)
    out: List[Dict[str, str]] = []
    for variable in (dashboard.get("templating") or {}).get("list", []):
        if variable.get("type") != "query":
            continue
        query = variable.get("query")
        query = query.get("query") if isinstance(query, Mapping) else query
        match = _LABEL_VALUES_RE.match(query) if isinstance(query, str) else None
        if not match:
            raise RuleError("%s: variable %s: only label_values() queries are supported (got %r)"
                            % (where, variable["name"], query))
        label_where = "%s variable %s" % (where, variable["name"])
        out.append({"panel": "variable " + variable["name"], "label": match.group(2),
                    "expr": _substitute(match.group(1) or "{%s!=\"\"}" % match.group(2), values, label_where)})
    for panel in _panels(dashboard.get("panels", []), where):
        for target in panel.get("targets") or []:
            expr = target.get("expr") if isinstance(target, Mapping) else None
            if expr is None:
                continue
            title = str(panel.get("title", ""))
            if not isinstance(expr, str) or not expr.strip():
                raise RuleError("%s: panel %r: a target's expr must be a PromQL expression (got %r)"
                                % (where, title, expr))
            out.append({"panel": title, "label": "",
                        "expr": _substitute(expr, values, "%s panel %r" % (where, title))})
    return out


# --- The host's plan: ports, flags and the restarts to check -----------------------------------
# Its input is a dict the role's vars build (``__monitoring_plan_input``). Ansible hands a filter a
# lazy dict, whose values are worked out when read: only what the host's parts need is read (the
# Alertmanager peers, say, only on a monitoring host).

# The parts of the monitoring a host can run, in the order of their ports and restart checks.
PARTS = ("node_exporter", "dcgm", "server", "grafana")
# What the restart read (tasks/services.yml) gets from systemd for each service, in UTC.
_STARTED = "ActiveEnterTimestamp="


def firewall_ports(plan: Mapping[str, Any], runs: Mapping[str, bool]) -> List[str]:
    """The ports the firewall opens for the parts that run, as ``port/protocol``."""
    ports = []
    if runs["node_exporter"]:
        ports.append("%d/tcp" % plan["node_exporter_port"])
    if runs["dcgm"]:
        ports.append("%d/tcp" % plan["dcgm_exporter_port"])
    if runs["server"]:
        cluster = plan["alertmanager_cluster_port"]
        ports += ["%d/tcp" % plan["prometheus_port"], "%d/tcp" % plan["alertmanager_port"],
                  "%d/tcp" % cluster, "%d/udp" % cluster]
    if runs["grafana"]:
        ports.append("%d/tcp" % plan["grafana_port"])
    return ports


def _listen(plan: Mapping[str, Any], port_key: str) -> str:
    """``ADDRESS:PORT`` (``:PORT``, every interface, with no listen address)."""
    return "%s:%s" % (bracketed(str(plan.get("listen_address") or "")), plan[port_key])


def _web_flag(plan: Mapping[str, Any]) -> List[str]:
    """``--web.config.file=<file>`` where the web configuration is on (``web_config``, its file)."""
    return ["--web.config.file=%s" % plan["web_config"]] if plan.get("web_config") else []


def node_exporter_args(plan: Mapping[str, Any]) -> List[str]:
    """The node exporter's flags: its address and port, the textfile folder, the web configuration,
    then the site's own."""
    return (["--web.listen-address=%s" % _listen(plan, "node_exporter_port"),
             "--collector.textfile.directory=%s" % plan["textfile_dir"]]
            + _web_flag(plan) + list(plan["node_exporter_args"]))


def prometheus_args(plan: Mapping[str, Any]) -> List[str]:
    """Prometheus's flags; the retention size only where one is set."""
    args = ["--config.file=%s" % plan["prometheus_config"],
            "--web.listen-address=%s" % _listen(plan, "prometheus_port"),
            "--storage.tsdb.path=%s" % plan["storage_path"],
            "--storage.tsdb.retention.time=%s" % plan["retention_time"]]
    if plan["retention_size"]:
        args.append("--storage.tsdb.retention.size=%s" % plan["retention_size"])
    return args + _web_flag(plan)


def alertmanager_args(plan: Mapping[str, Any]) -> List[str]:
    """Alertmanager's flags: with peers it gossips on its cluster port (on the listen address, else
    0.0.0.0), alone it does not."""
    args = ["--config.file=%s" % plan["alertmanager_config"], "--storage.path=%s" % plan["alertmanager_storage"],
            "--web.listen-address=%s" % _listen(plan, "alertmanager_port")] + _web_flag(plan)
    peers = list(plan["alertmanager_peers"])
    if not peers:
        return args + ["--cluster.listen-address="]
    cluster = bracketed(str(plan.get("listen_address") or "")) or "0.0.0.0"
    return (args + ["--cluster.listen-address=%s:%s" % (cluster, plan["alertmanager_cluster_port"])]
            + ["--cluster.peer=%s" % peer for peer in peers])


def _runs(plan: Mapping[str, Any]) -> Dict[str, bool]:
    return {part: bool(plan[part]) for part in PARTS}


def host_plan(plan: Mapping[str, Any]) -> Dict[str, Any]:
    """What runs where, for one host, from the parts it runs (``node_exporter``, ``dcgm``,
    ``server``, ``grafana``): ``firewall_ports``; ``restart_checks``, each service with a file
    whose change needs it restarted (``{service, file}``, from ``restart_files`` ({part: [[service,
    file], ...]}) of the parts that run); and ``restart_services`` and ``restart_files``, each of
    them once, for the one read of when the services last became active and the files last
    changed (tasks/services.yml; ``stale_services`` compares them). The services' flags are
    ``service_flags``: they need the Alertmanager peers, worked out from the whole inventory."""
    runs = _runs(plan)
    restart_files = plan["restart_files"]
    checks = [{"service": service, "file": path}
              for part in PARTS if runs[part]
              for service, path in restart_files.get(part) or []]
    return {"firewall_ports": firewall_ports(plan, runs), "restart_checks": checks,
            "restart_services": list(dict.fromkeys(check["service"] for check in checks)),
            "restart_files": list(dict.fromkeys(check["file"] for check in checks))}


def service_flags(plan: Mapping[str, Any]) -> Dict[str, List[str]]:
    """The flags of the services the host runs (their /etc/default ARGS lines): ``node_exporter``,
    ``prometheus`` and ``alertmanager``, each empty where its part does not run."""
    runs = _runs(plan)
    return {"node_exporter": node_exporter_args(plan) if runs["node_exporter"] else [],
            "prometheus": prometheus_args(plan) if runs["server"] else [],
            "alertmanager": alertmanager_args(plan) if runs["server"] else []}


def _utc_seconds(text: str) -> Optional[int]:
    """Seconds since the epoch of a systemd timestamp in UTC (``Thu 2024-05-02 08:11:12 UTC``);
    None for an empty one (never active) or another form."""
    fields = text.split()
    if len(fields) != 4 or fields[3] != "UTC":
        return None
    try:
        moment = datetime.datetime.strptime(fields[1] + " " + fields[2], "%Y-%m-%d %H:%M:%S")
    except ValueError:
        return None
    return int(moment.replace(tzinfo=datetime.timezone.utc).timestamp())


def stale_services(text: str, checks: Sequence[Mapping[str, str]]) -> List[str]:
    """The services that last became active before one of their files last changed (a restart a
    failed or interrupted run never made), each once, in the order of ``checks``, from the output
    of the restart read: ``ActiveEnterTimestamp=`` lines of ``systemctl show`` in UTC, one per
    service of ``checks`` in order, then ``<epoch seconds> <path>`` lines of ``stat`` (none for a
    missing file). A service never active, a missing file, or a read that does not list every
    service (systemctl failed) restarts nothing."""
    services = list(dict.fromkeys(check["service"] for check in checks))
    lines = text.splitlines()
    started_at = [_utc_seconds(line[len(_STARTED):]) for line in lines if line.startswith(_STARTED)]
    if len(started_at) != len(services):
        return []
    started = dict(zip(services, started_at))
    changed: Dict[str, int] = {}
    for line in lines:
        seconds, _sep, path = line.partition(" ")
        if seconds.isdigit() and path:
            changed[path] = int(seconds)
    stale: List[str] = []
    for check in checks:
        since, mtime = started[check["service"]], changed.get(check["file"])
        if since is not None and mtime is not None and mtime > since and check["service"] not in stale:
            stale.append(check["service"])
    return stale


def artifacts(plan: Mapping[str, Any]) -> Dict[str, Any]:
    """The role's record for playbooks/artifacts.yml on one host: the DCGM exporter's repository
    (from packages) or image (in a container) on a GPU node, Grafana's repository and dashboard
    downloads on a monitoring host with Grafana, and the distribution's node exporter and server
    packages (none where the distribution is not supported: its package names are not loaded).

    ``plan`` (a lazy dict: a part's values are read only where it runs) holds ``supported``, the
    parts (``node_exporter``, ``dcgm``, ``server``, ``grafana``), ``dcgm_source``, the
    repositories with their packages (``dcgm_repository``, ``dcgm_packages``,
    ``grafana_repository``, ``grafana_packages``), ``dashboard_urls``, ``dcgm_image``,
    ``node_exporter_package`` and ``server_packages``."""
    supported, dcgm, grafana = bool(plan["supported"]), bool(plan["dcgm"]), bool(plan["grafana"])
    repositories = []
    if dcgm and plan["dcgm_source"] == "package":
        repositories.append(dict(plan["dcgm_repository"], packages=list(plan["dcgm_packages"]), pins=[]))
    if grafana:
        repositories.append(dict(plan["grafana_repository"], packages=list(plan["grafana_packages"]), pins=[]))
    packages: List[str] = []
    if supported and plan["node_exporter"]:
        packages.append(plan["node_exporter_package"])
    if supported and plan["server"]:
        packages.extend(plan["server_packages"])
    return {
        "role": "monitoring",
        "supported": supported,
        "repositories": repositories,
        "files": list(plan["dashboard_urls"]) if grafana else [],
        "images": [plan["dcgm_image"]] if dcgm and plan["dcgm_source"] == "container" else [],
        "distribution_packages": packages,
    }
