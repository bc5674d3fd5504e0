# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The validation role's input rules and its per-host settings (controller side, pure).

``validation_errors`` returns every error at once, each naming the variable and the host
where the value is per host. ``node_settings`` resolves a host's ``auto`` values: the
services its inventory groups run and the shared file systems it mounts.
"""

from __future__ import annotations

import re
from typing import Any, Dict, Iterable, List, Mapping

from ansible_collections.gpucluster.core.plugins.module_utils._health import CHECKS
from ansible_collections.gpucluster.core.plugins.plugin_utils.kubernetes._kubernetes import _LABEL_RE, _SUBDOMAIN_RE
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._rules import (
    Errors,
    RoleInput,
    abs_path,
    boolean,
    int_range,
    matches,
    is_int,
    one_line,
    pip_env,
    token,
)
from ansible_collections.gpucluster.core.plugins.plugin_utils.validation._plan import POLICIES

CHECK_FAMILIES = ("passive", "active")
_UNIT_RE = re.compile(r"^[A-Za-z0-9@._:-]+$")
# An image reference: [registry[:port]/]path[:tag][@digest], lower-case path components.
_IMAGE_RE = re.compile(r"^(?:[A-Za-z0-9.-]+(?::[0-9]+)?/)?[a-z0-9]+(?:[._-]+[a-z0-9]+)*(?:/[a-z0-9]+(?:[._-]+[a-z0-9]+)*)*"
                       r"(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@sha256:[a-f0-9]{64})?$")
# An extended resource a device plugin advertises: <domain>/<name> (nvidia.com/gpu, nvidia.com/mig-1g.10gb).
_RESOURCE_RE = re.compile(r"^(?=.{1,253}/)[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)+"
                          r"/[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$")
_ARCHIVE_RE = re.compile(r"(?:https?|file)://[^\s?#]+\.(?:tar\.gz|tgz|tar\.xz)")
_CHECKSUM_RE = re.compile(r"sha256:[0-9A-Fa-f]{64}")
_PACKAGE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9+._-]*$")
# A path that make hands to the shell unchanged (CUDA_HOME=, BUILDDIR= of nccl-tests' Makefile): no $, quotes,
# ;, &, |, parentheses, globs, # or blanks.
_MAKE_PATH_RE = re.compile(r"^/[A-Za-z0-9._+@/-]*$")
_MAKE_PATH_WHAT = ("a path of letters, digits and . _ + @ - / only when validation_nccl_tests_source is set"
                   " (make passes it to the shell in nccl-tests' build)")
_HCA_KEYS = ("rate_gbps", "link_layers", "ignore", "count", "source")
_LINK_LAYERS = ("InfiniBand", "Ethernet")


def _fraction(errors: Errors, var: str, value: Any, low_open: bool = True) -> None:
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not (
            (0 < value if low_open else 0 <= value) and value <= 1):
        errors.add(var, "must be a number in %s0, 1] (got %r)" % ("(" if low_open else "[", value))


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _time_and_disk(errors: Errors, values: Mapping[str, Any]) -> None:
    """time_sync's offsets and disk_space's paths and minimums."""
    offset = values.get("validation_time_max_offset", 0.5)
    if not _number(offset) or not 0 <= offset <= 3600:
        errors.add("validation_time_max_offset", "must be a number of seconds within 0-3600, 0 to turn time_sync off "
                   "(got %r)" % (offset,))
    fail = values.get("validation_time_fail_offset", 60)
    if not _number(fail) or not 0 < fail <= 86400:
        errors.add("validation_time_fail_offset", "must be a number of seconds above 0, at most 86400 (got %r)" % (fail,))
    elif _number(offset) and fail < offset:
        errors.add("validation_time_fail_offset", "must not be below validation_time_max_offset (%r) (got %r)" % (offset, fail))
    paths = values.get("validation_disk_space_paths", [])
    if not isinstance(paths, list):
        errors.add("validation_disk_space_paths", "must be a list of absolute paths, [] to turn disk_space off (got %r)"
                   % (paths,))
    else:
        for index, path in enumerate(paths):
            errors.check("validation_disk_space_paths[%d]" % index, abs_path(path))
    percent = values.get("validation_disk_space_min_free_percent", 5)
    if not _number(percent) or not 0 <= percent < 100:
        errors.add("validation_disk_space_min_free_percent", "must be a number within 0-100, below 100 (got %r)" % (percent,))
    errors.check("validation_disk_space_min_free_mib", int_range(values.get("validation_disk_space_min_free_mib", 0),
                                                                 0, 1 << 30))


def _host(errors: Errors, values: Mapping[str, Any], building: bool = False) -> None:
    count = values.get("validation_gpu_count", 0)
    errors.check("validation_gpu_count", int_range(count, 0, 64))
    for var in ("validation_gpu_model", "validation_driver_version", "validation_cuda_version"):
        value = values.get(var, "")
        if value in ("", None):
            continue
        if is_int(value) and var != "validation_gpu_model":
            value = str(value)  # a branch: 580
        if not isinstance(value, str):
            errors.add(var, "must be a quoted string (YAML reads an unquoted 550.120 as the number 550.12) (got %r)"
                       % (value,))
        else:
            errors.check(var, one_line(value) if var == "validation_gpu_model" else token(value))
    hca = values.get("validation_hca") or {}
    if not isinstance(hca, Mapping):
        errors.add("validation_hca", "must be a dict with %s (got %r)" % (", ".join(_HCA_KEYS), hca))
    else:
        for key in sorted(set(hca) - set(_HCA_KEYS)):
            errors.add("validation_hca", "unknown key %r (keys: %s)" % (key, ", ".join(_HCA_KEYS)))
        rate = hca.get("rate_gbps", 0)
        if rate not in (0, None) and (not isinstance(rate, (int, float)) or isinstance(rate, bool) or not 0 < rate <= 3200):
            errors.add("validation_hca.rate_gbps", "must be a port rate in Gb/s within 1-3200, or 0 for the fastest "
                       "active port of the same adapter model (got %r)" % (rate,))
        layers = hca.get("link_layers") or []
        if not isinstance(layers, list):
            errors.add("validation_hca.link_layers", "must be a list of %s (got %r)" % (", ".join(_LINK_LAYERS), layers))
        else:
            for layer in layers:
                if layer not in _LINK_LAYERS:
                    errors.add("validation_hca.link_layers", "%r is not one of %s" % (layer, ", ".join(_LINK_LAYERS)))
        ignore = hca.get("ignore") or []
        if not isinstance(ignore, list) or not all(isinstance(name, str) and token(name) is None for name in ignore):
            errors.add("validation_hca.ignore", "must be a list of CA or CA:port names (got %r)" % (ignore,))
        if hca.get("count") not in (None, 0):
            errors.check("validation_hca.count", int_range(hca.get("count"), 1, 64))
    mounts = values.get("validation_mounts", "auto")
    if mounts != "auto":
        if not isinstance(mounts, list):
            errors.add("validation_mounts", "must be auto or a list of {path, fstype} (got %r)" % (mounts,))
        else:
            for index, mount in enumerate(mounts):
                path = mount.get("path") if isinstance(mount, Mapping) else None
                errors.check("validation_mounts[%d].path" % index, abs_path(path))
    services = values.get("validation_services", "auto")
    if services != "auto":
        if not isinstance(services, list):
            errors.add("validation_services", "must be auto or a list of systemd unit names (got %r)" % (services,))
        else:
            for name in services:
                if not isinstance(name, str) or not _UNIT_RE.match(name):
                    errors.add("validation_services", "%r is not a systemd unit name" % (name,))
    codes = values.get("validation_xid_codes") or []
    if not isinstance(codes, list):
        errors.add("validation_xid_codes", "must be a list of XIDs (got %r)" % (codes,))
    else:
        for code in codes:
            if not is_int(code) or not 1 <= code <= 1023:
                errors.add("validation_xid_codes", "%r is not an XID (an integer within 1-1023)" % (code,))
    runtime = values.get("validation_container_runtime", "")
    if runtime and (not isinstance(runtime, str) or not _UNIT_RE.match(runtime)):
        errors.add("validation_container_runtime", "must be a systemd unit name or empty (got %r)" % (runtime,))
    severity = values.get("validation_severity") or {}
    if not isinstance(severity, Mapping):
        errors.add("validation_severity", "must map check names to fail, warn or skip (got %r)" % (severity,))
    else:
        for name, level in severity.items():
            if name not in CHECKS:
                errors.add("validation_severity", "unknown check %r (checks: %s)" % (name, ", ".join(CHECKS)))
            elif level not in ("fail", "warn", "skip"):
                errors.add("validation_severity.%s" % name, "must be fail, warn or skip (got %r)" % (level,))
    for var in ("validation_nvidia_smi_path", "validation_ibstat_path"):
        value = values.get(var, "")
        if value:
            errors.check(var, token(value))
    cuda_home = values.get("validation_cuda_home", "/usr/local/cuda")
    if errors.check("validation_cuda_home", abs_path(cuda_home)) and building:
        errors.check("validation_cuda_home", matches(cuda_home, _MAKE_PATH_RE, _MAKE_PATH_WHAT))
    errors.check("validation_kernel_log_minutes", int_range(values.get("validation_kernel_log_minutes", 60), 1, 10080))
    _time_and_disk(errors, values)
    _healthcheck_history(errors, values)


def _healthcheck_history(errors: Errors, values: Mapping[str, Any]) -> None:
    """gpucluster-healthcheck-slurm's confirmation and flapping settings (the ranges _health.history_settings keeps)."""
    errors.check("validation_healthcheck_confirm_runs", int_range(values.get("validation_healthcheck_confirm_runs", 2), 1, 10))
    window = values.get("validation_healthcheck_flapping_window", 10)
    threshold = values.get("validation_healthcheck_flapping_threshold", 3)
    window_ok = errors.check("validation_healthcheck_flapping_window", int_range(window, 3, 100))
    reason = int_range(threshold, 2, (window + 1) // 2 if window_ok else 50)
    if reason and window_ok and is_int(threshold):
        reason = ("must be within 2-%d, the spells of failure validation_healthcheck_flapping_window (%d runs) can hold "
                  "(got %d)" % ((window + 1) // 2, window, threshold))
    errors.check("validation_healthcheck_flapping_threshold", reason)
    errors.check("validation_healthcheck_state_file",
                 abs_path(values.get("validation_healthcheck_state_file", "/var/lib/gpucluster/healthcheck-state.json")))


def _fabric_tools(errors: Errors, play: Mapping[str, Any]) -> None:
    """nccl-tests built from a source tarball (a checksum and a build directory with it), perftest's package."""
    source = play.get("validation_nccl_tests_source", "")
    if source != "":
        if not isinstance(source, str) or not _ARCHIVE_RE.fullmatch(source):
            errors.add("validation_nccl_tests_source", "must be the http(s):// or file:// URL of nccl-tests' source as a "
                       ".tar.gz, .tgz or .tar.xz archive, or empty (got %r)" % (source,))
        checksum = play.get("validation_nccl_tests_checksum", "")
        if not isinstance(checksum, str) or not _CHECKSUM_RE.fullmatch(checksum):
            errors.add("validation_nccl_tests_checksum", "must be the source archive's checksum as sha256:<64 hex digits> "
                       "when validation_nccl_tests_source is set (got %r)" % (checksum,))
        build_dir = play.get("validation_nccl_tests_dir")
        if not build_dir:
            errors.add("validation_nccl_tests_dir", "must name the directory to build all_reduce_perf in when "
                       "validation_nccl_tests_source is set (got '')")
        elif abs_path(build_dir) is None:
            errors.check("validation_nccl_tests_dir", matches(build_dir, _MAKE_PATH_RE, _MAKE_PATH_WHAT))
    errors.check("validation_nccl_tests_mpi", boolean(play.get("validation_nccl_tests_mpi", True)))
    package = play.get("validation_perftest_package", "perftest")
    if package != "":
        errors.check("validation_perftest_package", matches(package, _PACKAGE_RE, "a package name, or empty"))


def _healthcheck_timer(errors: Errors, play: Mapping[str, Any]) -> None:
    """The health check timer on Kubernetes nodes: a run is stopped before the next one is due."""
    for var in ("validation_healthcheck_timer", "validation_healthcheck_kubernetes_reader"):
        errors.check(var, boolean(play.get(var, True)))
    errors.check("validation_healthcheck_kubelet_kubeconfig",
                 abs_path(play.get("validation_healthcheck_kubelet_kubeconfig", "/etc/kubernetes/kubelet.conf")))
    interval = play.get("validation_healthcheck_timer_interval", 60)
    errors.check("validation_healthcheck_timer_interval", int_range(interval, 10, 86400))
    delay = play.get("validation_healthcheck_timer_random_delay", 30)
    timeout = play.get("validation_healthcheck_timer_timeout", 45)
    errors.check("validation_healthcheck_timer_random_delay", int_range(delay, 0, 86400))
    errors.check("validation_healthcheck_timer_timeout", int_range(timeout, 25, 86400))
    if int_range(interval, 10, 86400) is None:
        if int_range(delay, 0, 86400) is None and delay > interval:
            errors.add("validation_healthcheck_timer_random_delay", "must be at most validation_healthcheck_timer_interval "
                       "(%d) (got %d)" % (interval, delay))
        if int_range(timeout, 25, 86400) is None and timeout >= interval:
            errors.add("validation_healthcheck_timer_timeout", "must be less than validation_healthcheck_timer_interval "
                       "(%d): a run ends before the next is due (got %d)" % (interval, timeout))


def validation_errors(per_host: Mapping[str, Mapping[str, Any]], play: Mapping[str, Any]) -> List[str]:
    """Every error in the play's settings (``play``) and each host's (``per_host``)."""
    errors = Errors()
    checks = play.get("validation_checks")
    if not isinstance(checks, list) or not checks or any(c not in CHECK_FAMILIES for c in checks):
        errors.add("validation_checks", "must be a non-empty list of %s (got %r)" % (", ".join(CHECK_FAMILIES), checks))
    if play.get("validation_policy") not in POLICIES:
        errors.add("validation_policy", "must be one of %s (got %r)" % (", ".join(POLICIES), play.get("validation_policy")))
    for var in ("validation_reason_prefix", "validation_healthcheck_reason_prefix"):
        prefix = play.get(var, "" if var == "validation_healthcheck_reason_prefix" else None)
        if var == "validation_healthcheck_reason_prefix" and prefix == "":
            continue
        if not isinstance(prefix, str) or not prefix.strip() or one_line(prefix) or re.search(r"[\"'\\]", prefix):
            errors.add(var, "must be one line of text without quotes or backslashes, "
                       "as Slurm keeps it in the node's reason (got %r)" % (prefix,))
    errors.check("validation_results_dir", abs_path(play.get("validation_results_dir")))
    errors.check("validation_kubeconfig", abs_path(play.get("validation_kubeconfig", "/etc/kubernetes/admin.conf")))
    for var, default in (("validation_slurm_controller_group", "slurm_controller"),
                         ("validation_slurm_compute_group", "slurm_compute"),
                         ("validation_kubernetes_control_plane_group", "k8s_control_plane"),
                         ("validation_kubernetes_worker_group", "k8s_workers")):
        errors.check(var, token(play.get(var, default)))
    for var in ("validation_nccl_inter_fraction", "validation_nccl_intra_fraction", "validation_ib_bw_fraction"):
        _fraction(errors, var, play.get(var))
    _fraction(errors, "validation_baseline_tolerance", play.get("validation_baseline_tolerance"), low_open=False)
    _fraction(errors, "validation_drain_budget_fraction", play.get("validation_drain_budget_fraction", 0.1), low_open=False)
    errors.check("validation_drain_budget_min_nodes", int_range(play.get("validation_drain_budget_min_nodes", 2), 0, 100000))
    errors.check("validation_ddp_nodes", int_range(play.get("validation_ddp_nodes"), 2, 1024))
    errors.check("validation_ddp_steps", int_range(play.get("validation_ddp_steps"), 10, 100000))
    errors.check("validation_ddp_port", int_range(play.get("validation_ddp_port"), 1024, 65535))
    errors.check("validation_job_timeout", int_range(play.get("validation_job_timeout"), 30, 86400))
    errors.check("validation_dcgm_diag_level", int_range(play.get("validation_dcgm_diag_level", 1), 0, 4))
    errors.check("validation_dcgmi_path", token(play.get("validation_dcgmi_path", "dcgmi")))
    errors.check("validation_docker_path", token(play.get("validation_docker_path", "docker")))
    image = play.get("validation_gpu_container_image", "")
    if image != "" and (not isinstance(image, str) or not _IMAGE_RE.match(image)):
        errors.add("validation_gpu_container_image", "must be an image reference such as ubuntu:24.04 or "
                   "registry.example.com/cuda:12.4.1-base-ubuntu22.04@sha256:..., or empty (got %r)" % (image,))
    errors.check("validation_kubernetes_gpu_pod", boolean(play.get("validation_kubernetes_gpu_pod", True)))
    errors.check("validation_kubernetes_namespace", matches(play.get("validation_kubernetes_namespace", "gpucluster-validation"),
                                                            _LABEL_RE, "a namespace name (a DNS label)"))
    runtime_class = play.get("validation_kubernetes_runtime_class", "nvidia")
    if runtime_class != "":
        errors.check("validation_kubernetes_runtime_class", matches(runtime_class, _SUBDOMAIN_RE,
                                                                    "a RuntimeClass name (a DNS subdomain) or empty"))
    errors.check("validation_kubernetes_gpu_resource", matches(play.get("validation_kubernetes_gpu_resource", "nvidia.com/gpu"),
                                                               _RESOURCE_RE, "an extended resource name such as nvidia.com/gpu"))
    errors.check("validation_kubernetes_ddp", boolean(play.get("validation_kubernetes_ddp", True)))
    ddp_image = play.get("validation_kubernetes_ddp_image", "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime")
    if not isinstance(ddp_image, str) or not _IMAGE_RE.match(ddp_image):
        errors.add("validation_kubernetes_ddp_image", "must be an image reference with torch in it, such as "
                   "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime (got %r)" % (ddp_image,))
    errors.check("validation_ddp_venv", abs_path(play.get("validation_ddp_venv")))
    for var in ("validation_ddp_pip_env", "validation_kubernetes_client_pip_env"):
        pip_env(errors, var, play.get(var))
    for var in ("validation_nccl_tests_dir", "validation_perftest_path", "validation_healthcheck_metrics_dir"):
        if play.get(var):
            errors.check(var, abs_path(play.get(var)))
    _fabric_tools(errors, play)
    _healthcheck_timer(errors, play)
    recorded = play.get("validation_recorded_outputs") or {}
    if not isinstance(recorded, Mapping):
        errors.add("validation_recorded_outputs", "must map nccl_all_reduce or ib_write_bw to files")
    else:
        for key, path in recorded.items():
            if key not in ("nccl_all_reduce", "ib_write_bw"):
                errors.add("validation_recorded_outputs", "unknown key %r (nccl_all_reduce, ib_write_bw)" % key)
            else:
                errors.check("validation_recorded_outputs.%s" % key, abs_path(path))
    out = list(errors.messages)
    for host in per_host:
        host_errors = Errors(host)
        _host(host_errors, per_host[host], building=play.get("validation_nccl_tests_source", "") != "")
        out.extend(host_errors.messages)
    return out


def input_errors(given: RoleInput) -> List[str]:
    """The rules over the play's values and every host of the play's (``ansible_play_hosts_all``)."""
    return validation_errors(given.hosts, given.shared)


def node_settings(values: Mapping[str, Any], host: str, groups: Iterable[str], gpu_node: bool,
                  role_groups: Mapping[str, str]) -> Dict[str, Any]:
    """A host's settings with ``auto`` resolved.

    Services: munge and slurmd on Slurm compute nodes, slurmctld on controllers, slurmdbd on
    the accounting host, containerd and kubelet on Kubernetes nodes (control plane and workers),
    the container runtime (``validation_container_runtime``) on GPU nodes. ``role_groups`` names
    the inventory groups (controller, dbd, compute, kubernetes_control_plane, kubernetes_worker).
    Mounts: the host's ``nfs_mounts`` except those of its own exports (a server does not mount itself).
    """
    out = dict(values)
    groups = set(groups)
    if values.get("validation_services", "auto") == "auto":
        services: List[str] = []
        roles = (("controller", ["munge", "slurmctld"]), ("dbd", ["munge", "slurmdbd"]), ("compute", ["munge", "slurmd"]),
                 ("kubernetes_control_plane", ["containerd", "kubelet"]), ("kubernetes_worker", ["containerd", "kubelet"]))
        for role, names in roles:
            if role_groups.get(role) in groups:
                services.extend(n for n in names if n not in services)
        runtime = values.get("validation_container_runtime", "docker")
        if gpu_node and runtime and runtime not in services:
            services.append(runtime)
        out["validation_services"] = services
    if values.get("validation_mounts", "auto") == "auto":
        mounts = []
        for mount in values.get("nfs_mounts") or []:
            server = str(mount.get("src", "")).split(":", 1)[0]
            if server in (host, values.get("inventory_hostname_short")):
                continue
            mounts.append({"path": mount["path"], "fstype": "nfs"})
        out["validation_mounts"] = mounts
    return out
