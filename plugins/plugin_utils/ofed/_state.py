# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ofed role's derived data (controller side, pure, no Ansible imports).

- ``port_table``: every port of a host's HCAs from ``ansible_facts.infiniband`` (as
  gpucluster.core.ibstat_facts returns it), each judged good when it is Active and LinkUp at
  no less than the minimum rate;
- ``port_problem``: the port check's message for the expected ports (empty when all is well);
- ``nccl_settings`` and ``nccl_conf_lines``: /etc/nccl.conf's settings from the good ports and
  the role's NCCL variables, and its ``KEY=value`` lines;
- ``kernel_report``: whether the mlx5_core the running kernel loads is OFED's, with the message
  that says what to do when it is not;
- ``source_names``: the names NVIDIA files a host's DOCA and MLNX_OFED builds under;
- ``artifacts``: what the role downloads on a host, for playbooks/artifacts.yml.

The role's variables were checked by its rules (plugins/plugin_utils/ofed/_rules.py) before this runs. Numbers are
read as Jinja's ``float`` filter reads them (0.0 for what is not a number, a missing rate
included), so the results are those the role's former Jinja gave.
"""

from __future__ import annotations

import re
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

# Where OFED puts its own kernel modules (the distribution's are under kernel/): updates/dkms
# (DKMS), extra/mlnx-ofa_kernel (EL kmod packages), weak-updates (EL kABI links), updates.
MODULE_DIRS_RE = r"^/lib/modules/([^/]+)/(updates|extra|weak-updates)/"
# The lines of `dkms status` that are OFED's.
DKMS_OFED_RE = r"(?i)mlnx|ofed|mlx"
STACK_NAMES = {"doca": "DOCA-OFED", "mlnx_ofed": "MLNX_OFED"}

Port = Dict[str, Any]


def _float(value: Any) -> float:
    """A number as Jinja's float filter reads it: 0.0 for None or text that is not a number."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return 0.0


def _rate_text(value: Any) -> str:
    """400 -> '400', 2.5 -> '2.5', None -> '0' (printf %g, as the messages always wrote rates)."""
    return "%g" % _float(value)


def port_table(infiniband: Mapping[str, Any], min_rate_gbps: Any) -> List[Port]:
    """Every port of every HCA, in the facts' order: ``label`` (``<ca>:<port>``), ``state``,
    ``physical_state``, ``rate`` (Gb/s as the facts give it), ``link_layer`` and ``good``
    (Active, LinkUp and at least ``min_rate_gbps``)."""
    min_rate = _float(min_rate_gbps)
    table: List[Port] = []
    for ca in infiniband["cas"]:
        for port in ca["ports"]:
            state, physical_state, rate = port.get("state"), port.get("physical_state"), port.get("rate_gbps")
            table.append({
                "label": "%s:%s" % (ca["name"], port["port"]),
                "state": state,
                "physical_state": physical_state,
                "rate": rate,
                "link_layer": port.get("link_layer"),
                "good": state == "Active" and physical_state == "LinkUp" and _float(rate) >= min_rate,
            })
    return table


def expected_labels(table: Sequence[Port], expected_ports: Optional[Iterable[Any]]) -> Tuple[bool, List[str]]:
    """(whether every port is expected, the expected labels): ``[all]`` expects each port of
    ``table``; otherwise the named ports, as text."""
    named = [str(label) for label in expected_ports or []]
    if named == ["all"]:
        return True, [port["label"] for port in table]
    return False, named


def bad_ports(table: Sequence[Port], expected: Iterable[str]) -> List[str]:
    """For each expected label that is not good, in the given order: ``<label> (not found)`` or
    ``<label> (state S, physical state P, rate R Gb/s)``."""
    by_label: Dict[str, Port] = {}
    for port in table:
        by_label.setdefault(port["label"], port)
    out: List[str] = []
    for label in expected:
        port = by_label.get(label)
        if port is None:
            out.append("%s (not found)" % label)
        elif not port["good"]:
            out.append("%s (state %s, physical state %s, rate %s Gb/s)"
                       % (label, port["state"], port["physical_state"], _rate_text(port["rate"])))
    return out


def port_problem(infiniband: Mapping[str, Any], expected_ports: Optional[Iterable[Any]], min_rate_gbps: Any,
                 host: str) -> str:
    """The port check's message for ``host``; empty when every expected port is good.

    ``[all]`` with no port at all reads ``ofed: ofed_expected_ports is all, but ibstat found no
    HCA on <host>.``; bad ports read ``ofed: <n> of <m> expected ports on <host> are not Active
    and LinkUp[ at <rate> Gb/s or more]: <port>; <port>. ibstat found <count> HCAs.``"""
    table = port_table(infiniband, min_rate_gbps)
    expect_all, expected = expected_labels(table, expected_ports)
    if expect_all and not table:
        return "ofed: ofed_expected_ports is all, but ibstat found no HCA on %s." % host
    bad = bad_ports(table, expected)
    if not bad:
        return ""
    min_rate = _float(min_rate_gbps)
    at_rate = " at %s Gb/s or more" % _rate_text(min_rate) if min_rate > 0 else ""
    return "ofed: %d of %d expected ports on %s are not Active and LinkUp%s: %s. ibstat found %s HCAs." % (
        len(bad), len(expected), host, at_rate, "; ".join(bad), infiniband["ca_count"])


def nccl_settings(infiniband: Mapping[str, Any], expected_ports: Optional[Iterable[Any]], min_rate_gbps: Any,
                  socket_ifname: Optional[str], roce_gid_index: Any,
                  settings: Optional[Mapping[str, Any]]) -> Dict[str, Any]:
    """NCCL's settings for /etc/nccl.conf.

    ``NCCL_IB_HCA`` is ``=`` and the good ports (of the expected ones when ports are named),
    InfiniBand ones, or the RoCE (link layer Ethernet) ones when no InfiniBand port is good;
    left out when no port is. With RoCE ports ``NCCL_IB_GID_INDEX`` is ``roce_gid_index`` unless
    that is None. ``NCCL_SOCKET_IFNAME`` is ``socket_ifname`` unless that is empty. ``settings``
    win over all of these, and a None value removes a setting."""
    table = port_table(infiniband, min_rate_gbps)
    expect_all, expected = expected_labels(table, expected_ports)
    wanted = set(expected if not expect_all and expected else (port["label"] for port in table))
    good = [port for port in table if port["good"] and port["label"] in wanted]
    infiniband_ports = [port for port in good if port["link_layer"] != "Ethernet"]
    computed: Dict[str, Any] = {}
    hca = [port["label"] for port in infiniband_ports or good]
    if hca:
        computed["NCCL_IB_HCA"] = "=" + ",".join(hca)
    if not infiniband_ports and good and roce_gid_index is not None:
        computed["NCCL_IB_GID_INDEX"] = roce_gid_index
    if socket_ifname:
        computed["NCCL_SOCKET_IFNAME"] = socket_ifname
    computed.update(settings or {})
    return {key: value for key, value in computed.items() if value is not None}


def _conf_value(value: Any) -> str:
    """A setting's value as nccl.conf has it: booleans as 1/0, the rest as text."""
    return str(int(value)) if isinstance(value, bool) else str(value)


def nccl_conf_lines(settings: Mapping[str, Any]) -> List[str]:
    """``KEY=value`` for each setting, by key without regard to case (as Jinja's dictsort)."""
    items = sorted(settings.items(), key=lambda item: item[0].lower() if isinstance(item[0], str) else item[0])
    return ["%s=%s" % (key, _conf_value(value)) for key, value in items]


def _unique_sorted(values: Iterable[str]) -> List[str]:
    """Ansible's ``unique | sort``: the first of values equal without regard to case, sorted so."""
    seen = set()
    out: List[str] = []
    for value in values:
        if value.lower() not in seen:
            seen.add(value.lower())
            out.append(value)
    return sorted(out, key=str.lower)


def loaded_module(modinfo: Mapping[str, Any]) -> str:
    """The mlx5_core file that ``modinfo -k <kernel> -F filename mlx5_core`` printed; '' when it failed."""
    if modinfo.get("rc", 1) != 0:
        return ""
    return str(modinfo.get("stdout", "")).strip()


def built_kernels(builds: Mapping[str, Any]) -> List[str]:
    """The kernels of the mlx5_core files under an OFED directory, from ``find``'s result."""
    paths = [str(found["path"]) for found in builds.get("files") or []]
    return _unique_sorted(re.sub(MODULE_DIRS_RE + ".*$", r"\1", path) for path in paths if re.match(MODULE_DIRS_RE, path))


def dkms_lines(dkms: Mapping[str, Any]) -> List[str]:
    """OFED's lines of ``dkms status``."""
    return [line for line in dkms.get("stdout_lines") or [] if re.search(DKMS_OFED_RE, line)]


def kernel_report(kernel: str, source: str, modinfo: Mapping[str, Any], builds: Mapping[str, Any],
                  dkms: Mapping[str, Any], headers_package: str, host: str) -> Dict[str, Any]:
    """``match``: whether the mlx5_core ``kernel`` loads is OFED's own (under updates/, extra/ or
    weak-updates/ of that kernel); ``message``: what is wrong and how to fix it, for when it is not.

    ``modinfo``, ``builds`` and ``dkms`` are the registered results of ``modinfo -k <kernel> -F
    filename mlx5_core``, of ``find`` for mlx5_core.ko* under /lib/modules and of ``dkms status``."""
    if source not in STACK_NAMES:
        raise ValueError("ofed_source must be doca or mlnx_ofed for the kernel check (got %r)" % (source,))
    module = loaded_module(modinfo)
    kernels = built_kernels(builds)
    lines = dkms_lines(dkms)
    match = re.match("^/lib/modules/" + re.escape(kernel) + "/(updates|extra|weak-updates)/", module) is not None
    message = (
        "ofed: the %s kernel modules are not built for the running kernel %s on %s: it would load %s;"
        " OFED's mlx5_core is built for %s.%s Install the headers of %s (%s) and rebuild (%s),"
        " or boot a kernel the modules were built for." % (
            STACK_NAMES[source], kernel, host,
            module + ", the distribution's mlx5_core" if module else "no mlx5_core at all",
            ", ".join(kernels) if kernels else "no kernel",
            " dkms status: %s." % "; ".join(lines) if lines else "",
            kernel, headers_package,
            "dkms autoinstall" if source == "doca" else "mlnxofedinstall with --add-kernel-support"))
    return {"match": match, "message": message}


# --- Where NVIDIA keeps a host's builds, and what the role downloads -------------------------------
# Their input is a dict the role builds. Ansible hands a filter a lazy dict, whose values are
# worked out when read: a fact is read only where the role's variable does not set the name.

_DOCA_ARCHES = {"x86_64": "x86_64", "aarch64": "arm64-sbsa"}


def source_names(values: Mapping[str, Any]) -> Dict[str, str]:
    """The names NVIDIA files a host's DOCA and MLNX_OFED builds under, each the role's variable
    where it is set, else from the facts (``distribution``, ``distribution_version``,
    ``distribution_major_version``, ``architecture``): ``doca_distro`` (ubuntu22.04, debian12,
    rhel9), ``doca_arch`` (x86_64, arm64-sbsa), ``mlnx_ofed_distro`` (ubuntu22.04, debian12.5,
    rhel9.4) and ``mlnx_ofed_arch`` (the architecture)."""
    names = {}
    doca_distro = values["doca_distro"]
    if not doca_distro:
        distribution = values["distribution"]
        if distribution == "Ubuntu":
            doca_distro = "ubuntu%s" % values["distribution_version"]
        else:
            doca_distro = "%s%s" % ("debian" if distribution == "Debian" else "rhel", values["distribution_major_version"])
    names["doca_distro"] = doca_distro
    names["doca_arch"] = values["doca_arch"] or _DOCA_ARCHES.get(values["architecture"], values["architecture"])
    mlnx_ofed_distro = values["mlnx_ofed_distro"]
    if not mlnx_ofed_distro:
        distribution = values["distribution"]
        mlnx_ofed_distro = "%s%s" % ({"Ubuntu": "ubuntu", "Debian": "debian"}.get(distribution, "rhel"),
                                     values["distribution_version"])
    names["mlnx_ofed_distro"] = mlnx_ofed_distro
    names["mlnx_ofed_arch"] = values["mlnx_ofed_arch"] or values["architecture"]
    return names


def artifacts(values: Mapping[str, Any]) -> Dict[str, Any]:
    """The role's record for playbooks/artifacts.yml on one host, by ``source``: inbox, the
    distribution's packages (``inbox_install``); doca, ``doca_repository`` with its packages
    (``doca_repo_packages``) and the kernel headers from the distribution (``headers``); mlnx_ofed,
    the archive (``mlnx_ofed_url``, ``mlnx_ofed_checksum``) and its prerequisites
    (``mlnx_ofed_install``). With ``ifupdown_package`` where the address is written the Debian way
    (``network_manage``, ``network_backend`` ifupdown, ``os_family`` Debian)."""
    source = values["source"]
    if source == "inbox":
        distribution = list(values["inbox_install"])
    elif source == "doca":
        distribution = list(values["headers"])
    else:
        distribution = list(values["mlnx_ofed_install"])
    repositories = []
    if source == "doca":
        packages = [{"name": name} for name in values["doca_repo_packages"]]
        repositories.append(dict(values["doca_repository"], packages=packages))
    files = []
    if source == "mlnx_ofed":
        files.append({"url": values["mlnx_ofed_url"], "checksum": values["mlnx_ofed_checksum"]})
    if values["network_manage"] and values["network_backend"] == "ifupdown" and values["os_family"] == "Debian":
        distribution.append(values["ifupdown_package"])
    return {"role": "ofed", "supported": bool(values["supported"]), "repositories": repositories, "files": files,
            "distribution_packages": distribution}
