# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The validation filters (each documented in plugins/filter/<filter>.yml); the logic lives in
plugins/plugin_utils/validation/."""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence

from ansible_collections.gpucluster.core.plugins.module_utils._dcgmi import DcgmiError, parse_dcgmi_diag
from ansible_collections.gpucluster.core.plugins.module_utils._nccl_tests import NcclTestsError, parse_nccl_tests
from ansible_collections.gpucluster.core.plugins.module_utils._nvidia_smi import NvidiaSmiError, parse_list
from ansible_collections.gpucluster.core.plugins.module_utils._perftest import PerftestError, parse_perftest
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._filter import as_filters
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._rules import RuleError
from ansible_collections.gpucluster.core.plugins.plugin_utils.validation import (
    _checks as vchecks, _fabric as vfabric, _jobs as vjobs, _plan as vplan)
from ansible_collections.gpucluster.core.plugins.plugin_utils.validation._report import (
    compare_baseline, document, render_html, render_markdown, summary_lines)
from ansible_collections.gpucluster.core.plugins.plugin_utils.validation._rules import node_settings


def _expected(values: Mapping[str, Any], host: str, groups: Sequence[str], gpu_node: bool,
              slurm_nodes: Optional[Mapping[str, Any]], baseline: Optional[Mapping[str, Any]],
              role_groups: Mapping[str, str]) -> Dict[str, Any]:
    settings = node_settings(values, host, groups, gpu_node, role_groups)
    base_node = next((n for n in (baseline or {}).get("nodes", []) if n.get("host") == host), None)
    return vchecks.node_expectations(settings, (slurm_nodes or {}).get(host), base_node, gpu_node)


def _bench(text: str, check: str, hosts: Sequence[str], hardware: Mapping[str, Mapping[str, Any]],
           settings: Mapping[str, Any], recorded: Optional[str] = None) -> Dict[str, Any]:
    """nccl_all_reduce (nccl-tests output across ``hosts``) or ib_write_bw (perftest client output)."""
    known = [hardware[h] for h in hosts if h in hardware]
    if check == "nccl_all_reduce":
        try:
            parsed = parse_nccl_tests(text)
        except NcclTestsError as exc:
            return vfabric.judge(check, hosts, None, None, recorded=recorded, errors="nccl-tests output: %s" % exc)
        rates = [vfabric.nic_rate_per_gpu(h.get("ibstat"), h.get("gpu_count") or 0) for h in known]
        rates = [r for r in rates if r]
        expected = vfabric.nccl_expectation("inter", settings["validation_nccl_inter_fraction"],
                                            nic_gbps_per_gpu=min(rates) if rates else None)
        series = [{"size_bytes": row["size_bytes"], "value": row["out_of_place"]["busbw_gbs"]} for row in parsed["rows"]]
        problems = []
        if parsed.get("wrong_total"):
            problems.append("%d wrong results (#wrong)" % parsed["wrong_total"])
        problems.extend(parsed.get("failures") or [])
        return vfabric.judge(check, hosts, parsed["peak_busbw_gbs"], expected, series=series, recorded=recorded,
                             errors="; ".join(problems) or None)
    if check == "ib_write_bw":
        try:
            parsed = parse_perftest(text)
        except PerftestError as exc:
            return vfabric.judge(check, hosts, None, None, recorded=recorded, errors="perftest output: %s" % exc)
        fastest = [vfabric.fastest_active_port(h.get("ibstat")) for h in known]
        port_rates = [port[0] for port in fastest if port and port[0]]
        fraction = settings["validation_ib_bw_fraction"]
        expected = {"value": round(fraction * min(port_rates), 2), "unit": "Gb/s",
                    "source": "%.2f x %g Gb/s port rate (ibstat)" % (fraction, min(port_rates))} if port_rates else None
        series = [{"size_bytes": row["size_bytes"], "value": row["bw_average_gbps"]} for row in parsed["rows"]]
        return vfabric.judge(check, hosts, parsed["peak_bw_average_gbps"], expected, series=series, recorded=recorded)
    raise RuleError("validation_bench: unknown check %r (nccl_all_reduce, ib_write_bw)" % check)


def _bench_runs(runs: Sequence[Mapping[str, Any]], check: str, hardware: Mapping[str, Mapping[str, Any]],
                settings: Mapping[str, Any]) -> List[Dict[str, Any]]:
    """Each registered loop result (``item``: the pair, ``stdout``, ``rc``) judged."""
    out = []
    for run in runs:
        if run.get("rc") != 0:
            tail = vplan.output_tail((run.get("stderr") or "") + " " + (run.get("stdout") or ""))
            out.append(vfabric.judge(check, run["item"], None, None, errors="exited %s: %s" % (run.get("rc"), tail)))
        else:
            out.append(_bench(run["stdout"], check, run["item"], hardware, settings))
    return out


def _bench_recorded(texts: Mapping[str, str], paths: Mapping[str, str], hosts: Sequence[str],
                    hardware: Mapping[str, Mapping[str, Any]], settings: Mapping[str, Any]) -> List[Dict[str, Any]]:
    """Recorded outputs ({check: text}) judged against the hardware of ``hosts`` (the pair they stand in for)."""
    return [_bench(texts[check], check, hosts, hardware, settings, recorded=paths[check]) for check in sorted(texts)]


def _bench_round(rounds: Mapping[str, Mapping[str, Any]], hardware: Mapping[str, Mapping[str, Any]],
                 settings: Mapping[str, Any]) -> List[Dict[str, Any]]:
    """One round of the fabric benchmarks judged: ``rounds`` maps each check to its task's registered
    loop result (``results``: one run per pair); the runs with an output (not skipped, the command
    found) are judged as _bench_runs does, check after check in the order given."""
    out = []
    for check, registered in rounds.items():
        runs = [run for run in (registered or {}).get("results") or [] if "stdout" in run]
        out.extend(_bench_runs(runs, check, hardware, settings))
    return out


def _fabric_remix(results: Sequence[Mapping[str, Any]]) -> Dict[str, List[List[str]]]:
    """Round two's pairs per check ({check: pairs}, only checks that have some) from round one's
    results measured here (recorded ones are not re-run)."""
    out: Dict[str, List[List[str]]] = {}
    for check in sorted(set(r["check"] for r in results if not r.get("recorded"))):
        again = vfabric.remix([r for r in results if r["check"] == check and not r.get("recorded")])
        if again:
            out[check] = again
    return out


def _ib_pair_args(pair: Sequence[str], hardware: Mapping[str, Mapping[str, Any]]) -> List[str]:
    """gpucluster-ib-pair's arguments for a pair: the first host serves, each host on the adapter
    of its fastest Active port (perftest's default adapter where ibstat shows none)."""
    args = ["--server", pair[0]]
    for host in pair:
        port = vfabric.fastest_active_port((hardware.get(host) or {}).get("ibstat"))
        if port:
            args.extend(["--device", "%s=%s" % (host, port[1])])
    return args


def _resumable(hosts: Sequence[str], hostvars: Mapping[str, Any], slurm_nodes: Optional[Mapping[str, Any]],
               prefix: str) -> List[str]:
    health = {h: hostvars.get(h, {}).get("__validation_health") for h in hosts}
    return vchecks.resumable(hosts, health, slurm_nodes or {}, prefix)


def _job_nodes(hosts: Sequence[str], hostvars: Mapping[str, Any],
               slurm_nodes: Optional[Mapping[str, Any]]) -> Dict[str, Any]:
    """The nodes that run jobs: in Slurm, not drained or down, their passive checks not failed.
    ``gpu``: NODE=GPUS for the GPU job (Slurm's count, else what answered); ``all``: every such
    node (natural order); ``gpu_hosts``: those with GPUs; ``pairs``: neighbours for the fabric tests."""
    nodes = []
    gpu = []
    gpu_hosts = []
    for host in sorted(hosts, key=vplan.natural_key):
        slurm = (slurm_nodes or {}).get(host)
        health = hostvars.get(host, {}).get("__validation_health") or {}
        if not slurm or vplan.drained(slurm) or slurm["state"] in ("DOWN", "FUTURE") or "NOT_RESPONDING" in slurm["flags"]:
            continue
        if health.get("verdict") == "fail":
            continue
        nodes.append(host)
        count = slurm.get("gpus") or (health.get("hardware") or {}).get("gpu_count")
        if count:
            gpu.append("%s=%d" % (host, count))
            gpu_hosts.append(host)
    return {"all": nodes, "gpu": gpu, "gpu_hosts": gpu_hosts, "pairs": vfabric.pairs(nodes)}


def _node_names(hostvars: Mapping[str, Any], hosts: Sequence[str]) -> Dict[str, str]:
    """Each of ``hosts`` to its Kubernetes node name: its kubernetes_node_name, else its inventory name."""
    return {host: str(hostvars.get(host, {}).get("kubernetes_node_name") or host) for host in hosts}


def _kubernetes_nodes(text: str, hostvars: Mapping[str, Any], hosts: Sequence[str], mark: str) -> Dict[str, Any]:
    """Kubernetes' view of ``hosts`` (each under its kubernetes_node_name, else its inventory name)."""
    return vplan.parse_kubectl_nodes(text, _node_names(hostvars, hosts), mark)


def _kubernetes_view(read: Mapping[str, Any], api: str, hostvars: Mapping[str, Any], hosts: Sequence[str],
                     mark: str) -> Dict[str, Any]:
    """Kubernetes' view of ``hosts`` and what the report says of it (kubernetes_view) from the
    registered ``kubectl get nodes`` read on ``api``."""
    return vplan.kubernetes_view(read, api, _node_names(hostvars, hosts), mark)


def _dcgm_diag(host: str, run: Mapping[str, Any]) -> Dict[str, Any]:
    """One node's dcgmi diag run (gpucluster-gpu-jobs' ``dcgmi``: level, path, rc, output) judged."""
    if not run.get("path"):
        return vjobs.dcgm_diag_result(host, run["level"], None, None)
    try:
        parsed = parse_dcgmi_diag(run.get("output") or "")
    except DcgmiError as exc:
        return vjobs.dcgm_diag_result(host, run["level"], None, "%s (exit %s)" % (exc, run.get("rc")))
    return vjobs.dcgm_diag_result(host, run["level"], parsed, None)


def _module_read(result: Optional[Mapping[str, Any]], read: Callable[[Any], Any]) -> Any:
    """(the result, None) from a registered kubernetes.core.k8s_info read that ``read`` takes, else
    (None, why): not run, the module's error, or what ``read`` refuses."""
    if not result or result.get("skipped"):
        return None, "not read"
    if result.get("failed") or not isinstance(result.get("resources"), list):
        return None, "the read failed: %s" % (vplan.module_message(result.get("msg")) or "no message")
    try:
        read(result)
    except RuleError as exc:
        return None, str(exc)
    return result, None


def _pods_read(result: Optional[Mapping[str, Any]]) -> Any:
    """A registered k8s_info read of kind Pod (_module_read)."""
    return _module_read(result, vjobs.pod_items)


def _job_read(result: Optional[Mapping[str, Any]]) -> Any:
    """A registered k8s_info read of the PyTorchJob by its name (_module_read)."""
    return _module_read(result, lambda read: vjobs.ddp_job_state(read, 0, 1))


def _apply_errors(created: Optional[Mapping[str, Any]]) -> List[str]:
    """What a registered kubernetes.core.k8s apply could not make: the module's error, or each
    object's (with continue_on_error); none when all was made. Not run: it made nothing."""
    if not created or created.get("skipped"):
        return ["not run"]
    if created.get("failed"):
        return [vplan.module_message(created.get("msg")) or "no message"]
    items = (created.get("result") or {}).get("results") if "results" in (created.get("result") or {}) else [created]
    return [vplan.module_message((item.get("error") or {}).get("msg")) or "no message" for item in items or [] if item.get("error")]


def _applied(created: Optional[Mapping[str, Any]], read_error: Optional[str]) -> Dict[str, Any]:
    """A registered apply as the judging functions take it ({error}: None when all was made), with
    the later read's error."""
    return {"error": "; ".join(_apply_errors(created)) or None, "read_error": read_error}


def _log(result: Optional[Mapping[str, Any]]) -> Dict[str, Any]:
    """A registered kubernetes.core.k8s_log read as the judging functions take it: {stdout} or {error};
    {} when it did not run."""
    if not result or result.get("skipped"):
        return {}
    if result.get("failed") or "log" not in result:
        return {"error": vplan.module_message(result.get("msg")) or "no message"}
    return {"stdout": result["log"]}


def _gpu_pod_plan(hosts: Sequence[str], hostvars: Mapping[str, Any], kubernetes_nodes: Mapping[str, Any],
                  pods: Mapping[str, Any], settings: Mapping[str, Any]) -> Dict[str, Any]:
    """The GPU pods to start (gpu_pod_plan), each node's GPUs and verdict from its passive checks
    (``__validation_health``), the GPUs in use from the registered k8s_info read of every
    namespace's pods (``pods``; when it failed, every chosen node warns)."""
    verdicts = {}
    counts = {}
    for host in hosts:
        health = hostvars.get(host, {}).get("__validation_health") or {}
        verdicts[host] = health.get("verdict")
        counts[host] = (health.get("hardware") or {}).get("gpu_count")
    text, error = _pods_read(pods)
    in_use = vjobs.gpus_in_use(text, settings["resource"]) if text is not None else None
    return vjobs.gpu_pod_plan(hosts, kubernetes_nodes, verdicts, counts, in_use, settings, error)


def _gpu_pods(run: Mapping[str, Any], hardware: Mapping[str, Any]) -> List[Dict[str, Any]]:
    """The GPU pods judged: ``run`` holds the plan, the apply's registered result (created), the
    registered read of the run's pods after the wait (pods), the registered k8s_log loop (logs) and
    the settings."""
    logs: Dict[str, Dict[str, Any]] = {}
    lists: Dict[str, Any] = {}
    for item in (run.get("logs") or {}).get("results") or []:
        if item.get("skipped") or not isinstance(item.get("item"), str):
            continue
        logs[item["item"]] = _log(item)
        if "stdout" in logs[item["item"]]:
            try:
                lists[item["item"]] = [gpu["uuid"] for gpu in parse_list(logs[item["item"]]["stdout"])]
            except NvidiaSmiError as exc:
                lists[item["item"]] = str(exc)
    uuids = {host: (node or {}).get("gpu_uuids") or [] for host, node in hardware.items()}
    text, error = _pods_read(run.get("pods"))
    return vjobs.gpu_pod_results(run.get("plan") or {}, _applied(run.get("created"), error), text, logs, uuids, lists,
                                 run.get("settings") or {})


def _ddp_job_plan(hosts: Sequence[str], hostvars: Mapping[str, Any], kubernetes_nodes: Mapping[str, Any],
                  gpu_pods: Sequence[Mapping[str, Any]], settings: Mapping[str, Any]) -> Dict[str, Any]:
    """The DDP PyTorchJob's nodes and objects (ddp_job_plan), each node's verdict from its passive checks."""
    verdicts = {host: (hostvars.get(host, {}).get("__validation_health") or {}).get("verdict") for host in hosts}
    return vjobs.ddp_job_plan(hosts, kubernetes_nodes, verdicts,
                              [r for r in gpu_pods if r.get("check") == "kubernetes_gpu_pod"], settings)


def _ddp_job_state(read: Mapping[str, Any], elapsed: float, operator_wait: float) -> str:
    """The PyTorchJob's state from a registered k8s_info read of it (``unread`` when the read failed
    or found no PyTorchJob)."""
    text, error = _job_read(read)
    return "unread" if error else vjobs.ddp_job_state(text, elapsed, operator_wait)[0]


def _ddp_job_result(plan: Mapping[str, Any], created: Mapping[str, Any], job: Mapping[str, Any],
                    logs: Mapping[str, Any], settings: Mapping[str, Any]) -> List[Dict[str, Any]]:
    """The PyTorchJob judged from the registered apply, read and rank 0's log (ddp_job_result)."""
    text, error = _job_read(job)
    return vjobs.ddp_job_result(plan, _applied(created, error), text, _log(logs), settings)


def _jobs(gpu_report: Optional[Mapping[str, Any]], ddp: Optional[Mapping[str, Any]],
          hardware: Optional[Mapping[str, Any]] = None,
          gpu_pods: Optional[Mapping[str, Any]] = None) -> List[Dict[str, Any]]:
    """The GPU job results (gpucluster-gpu-jobs' JSON), the dcgmi diag runs and GPU containers inside
    them (against each node's GPUs in ``hardware``, the passive checks' read), the GPU pods in
    Kubernetes (``gpu_pods``, see _gpu_pods), and the DDP job's (the registered srun result with
    ``hosts`` added), whichever ran."""
    out = vjobs.gpu_jobs(gpu_report) if gpu_report else []
    for job in (gpu_report or {}).get("jobs", []):
        if job.get("dcgmi"):
            out.append(_dcgm_diag(job["host"], job["dcgmi"]))
        if job.get("container"):
            uuids = ((hardware or {}).get(job["host"]) or {}).get("gpu_uuids") or []
            out.append(vjobs.container_result(job["host"], job["container"], uuids))
    if gpu_pods:
        out.extend(_gpu_pods(gpu_pods, hardware or {}))
    if ddp:
        out.append(vjobs.ddp_result(ddp.get("stdout", ""), ddp.get("hosts", []), ddp.get("rc", 1), ddp.get("stderr", "")))
    return out


def _document(run: Mapping[str, Any], checks: Mapping[str, Sequence[Mapping[str, Any]]],
              unreachable: Mapping[str, str], pairs: Sequence[Mapping[str, Any]], jobs: Sequence[Mapping[str, Any]],
              slurm_nodes: Optional[Mapping[str, Any]], settings: Mapping[str, Any],
              baseline: Optional[Mapping[str, Any]] = None,
              kubernetes_nodes: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
    """The run's document with the node actions in Slurm and Kubernetes; a node that did not answer
    is reported, never drained or cordoned here (Slurm marks a node that stops answering down by
    itself, Kubernetes marks it NotReady)."""
    nodes = {host: list(items) for host, items in checks.items()}
    for host, message in unreachable.items():
        nodes[host] = [{"check": "reachable", "kind": "passive", "status": "fail", "measured": None,
                        "expected": None, "unit": None, "source": None, "baseline": None,
                        "message": "did not answer: %s" % message}]
    draft = document(run, nodes, pairs, jobs, {})
    draft = compare_baseline(draft, baseline, settings["validation_baseline_tolerance"])
    # Only nodes with results are judged: a run limited by tags to no check resumes nothing.
    verdicts = {n["host"]: n["verdict"] for n in draft["nodes"] if n["host"] not in unreachable and n["checks"]}
    failing = {n["host"]: vchecks.failing_checks(n["checks"]) for n in draft["nodes"]}
    budget = (float(settings.get("validation_drain_budget_fraction", vchecks.DEFAULT_BUDGET[0])),
              int(settings.get("validation_drain_budget_min_nodes", vchecks.DEFAULT_BUDGET[1])))
    actions = vchecks.node_actions(verdicts, failing, slurm_nodes or {}, settings["validation_policy"],
                                   settings["validation_reason_prefix"], settings.get("resumed_early") or [], nodes, budget)
    cordons = vchecks.cordon_actions(verdicts, failing, kubernetes_nodes or {}, settings["validation_policy"],
                                     settings["validation_reason_prefix"], nodes, budget)
    for node in draft["nodes"]:
        node["action"] = actions.get(node["host"]) or {"kind": "none", "reason": None}
        node["cordon"] = cordons.get(node["host"])
    return draft


def _report(doc: Mapping[str, Any], fmt: str = "html") -> Any:
    if fmt == "html":
        return render_html(dict(doc))
    if fmt == "markdown":
        return render_markdown(dict(doc))
    if fmt == "summary":
        return summary_lines(doc)
    raise RuleError("validation_report: format %r is not html, markdown or summary" % fmt)


def _checks_by_name(checks: Sequence[Mapping[str, Any]]) -> Dict[str, Any]:
    """A node's checks as {check name: result} (the last one of a name wins)."""
    return {check["check"]: dict(check) for check in checks}


class FilterModule:
    """The validation filters."""

    def filters(self):
        return as_filters({
            "validation_expected": _expected,
            "validation_scontrol_nodes": vplan.parse_scontrol_nodes,
            "validation_kubernetes_nodes": _kubernetes_nodes,
            "validation_not_responding": vplan.not_responding,
            "validation_bench_runs": _bench_runs,
            "validation_bench_recorded": _bench_recorded,
            "validation_job_nodes": _job_nodes,
            "validation_fabric_remix": _fabric_remix,
            "validation_fabric_rounds": vfabric.fabric_rounds,
            "validation_ib_pair_args": _ib_pair_args,
            "validation_resumable": _resumable,
            "validation_gpu_pod_plan": _gpu_pod_plan,
            "validation_gpu_pods_waiting": vjobs.gpu_pods_waiting,
            "validation_ddp_job_plan": _ddp_job_plan,
            "validation_ddp_job_state": _ddp_job_state,
            "validation_apply_errors": _apply_errors,
            "validation_ddp_job_result": _ddp_job_result,
            "validation_jobs": _jobs,
            "validation_document": _document,
            "validation_report": _report,
            "validation_checks_by_name": _checks_by_name,
            "validation_failed_actions": vchecks.failed_actions,
            "validation_host_plan": vplan.host_plan,
            "validation_checks_run": vplan.checks_run,
            "validation_kubernetes_view": _kubernetes_view,
            "validation_bench_round": _bench_round,
            "validation_cordon_patch": vchecks.cordon_patch,
            "validation_reader_kubeconfig": vplan.reader_kubeconfig,
        })
