# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The validation role's fabric checks on the controller (pure, no Ansible imports).

* bandwidth expectations from the hardware (NIC line rate per GPU, NVLink or PCIe generation);
* judging benchmark results (nccl-tests, perftest) against them;
* pairing nodes for the fabric tests, and re-mixing slow pairs to find the node at fault.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from ansible_collections.gpucluster.core.plugins.plugin_utils.validation._plan import natural_key

# Unidirectional NVLink bandwidth per GPU (GB/s) by architecture (NVIDIA's data sheets: V100
# 300 GB/s, A100 600 GB/s, H100/H200 900 GB/s, B200 1.8 TB/s, counted both ways).
NVLINK_GBS = {"Volta": 150.0, "Ampere": 300.0, "Hopper": 450.0, "Blackwell": 900.0}
# PCIe x16 payload bandwidth one way (GB/s) by generation.
PCIE_X16_GBS = {3: 15.75, 4: 31.5, 5: 63.0, 6: 121.0}


# ---------------------------------------------------------------------------
# Bandwidth expectations from the hardware
# ---------------------------------------------------------------------------

def nic_rate_per_gpu(ibstat: Optional[Mapping[str, Any]], gpu_count: int,
                     link_layers: Sequence[str] = ("InfiniBand", "Ethernet")) -> Optional[float]:
    """Gb/s of Active compute-fabric ports per GPU (the rails NCCL uses): the sum of the active
    ports' rates of the adapter model with the most ports, divided by the GPU count (at most one
    port per GPU counts: 8 rails for 8 GPUs)."""
    if not ibstat or not gpu_count:
        return None
    layers = set(layer.lower() for layer in link_layers)
    by_model: Dict[str, List[float]] = {}
    for ca in ibstat.get("cas", []):
        for port in ca["ports"]:
            if port["state"] == "Active" and (port["link_layer"] or "InfiniBand").lower() in layers:
                by_model.setdefault(ca.get("type") or "?", []).append(float(port["rate_gbps"] or 0))
    if not by_model:
        return None
    rates = max(by_model.values(), key=lambda r: (len(r), sum(r)))
    rates = sorted(rates, reverse=True)[:gpu_count]
    return sum(rates) / gpu_count


def fastest_active_port(ibstat: Optional[Mapping[str, Any]]) -> Optional[Tuple[float, str]]:
    """(rate in Gb/s, adapter) of the node's fastest Active port: the adapter ib_write_bw runs on
    and the rate its result is judged against; the first such adapter by name on a tie; None
    without an Active port."""
    best: Optional[Tuple[float, str]] = None
    for ca in sorted((ibstat or {}).get("cas", []), key=lambda c: natural_key(c["name"])):
        for port in ca["ports"]:
            rate = float(port["rate_gbps"] or 0)
            if port["state"] == "Active" and (best is None or rate > best[0]):
                best = (rate, ca["name"])
    return best


def nccl_expectation(scope: str, fraction: float, *, nic_gbps_per_gpu: Optional[float] = None,
                     architecture: Optional[str] = None, nvlink: bool = False,
                     pcie_gen: Optional[int] = None) -> Optional[Dict[str, Any]]:
    """Expected all_reduce peak out-of-place bus bandwidth (GB/s) with where it came from.

    ``inter`` (across nodes): ``fraction`` x the per-GPU NIC line rate (NVIDIA's guidance:
    46-48 GB/s per 400G NDR NIC, 0.9 x 50). ``intra`` (within a node): ``fraction`` x the
    one-way NVLink bandwidth of the GPU generation, or of the PCIe x16 link without NVLink.
    None when the hardware does not tell.
    """
    if scope == "inter":
        if not nic_gbps_per_gpu:
            return None
        line = nic_gbps_per_gpu / 8.0
        return {"value": round(fraction * line, 2), "unit": "GB/s",
                "source": "%.2f x %g Gb/s NIC line rate per GPU (ibstat)" % (fraction, nic_gbps_per_gpu)}
    if nvlink and architecture in NVLINK_GBS:
        line = NVLINK_GBS[architecture]
        return {"value": round(fraction * line, 2), "unit": "GB/s",
                "source": "%.2f x %g GB/s %s NVLink per GPU" % (fraction, line, architecture)}
    if pcie_gen in PCIE_X16_GBS:
        line = PCIE_X16_GBS[pcie_gen]
        return {"value": round(fraction * line, 2), "unit": "GB/s",
                "source": "%.2f x %g GB/s PCIe gen%d x16" % (fraction, line, pcie_gen)}
    return None


def judge(check: str, hosts: Sequence[str], measured: Optional[float], expected: Optional[Mapping[str, Any]],
          *, series: Optional[List[Dict[str, Any]]] = None, recorded: Optional[str] = None,
          errors: Optional[str] = None, higher_is_better: bool = True) -> Dict[str, Any]:
    """One benchmark result (a pair or a node) judged against its expectation."""
    result: Dict[str, Any] = {
        "check": check, "hosts": list(hosts), "measured": measured,
        "expected": expected["value"] if expected else None,
        "unit": expected["unit"] if expected else None,
        "source": expected["source"] if expected else None,
        "recorded": bool(recorded), "series": series or [],
        "note": ("no fabric here: judged on the recorded output %s, not on these nodes" % recorded)
        if recorded else None,
    }
    if errors:
        result.update(status="fail", message=errors)
    elif measured is None:
        result.update(status="fail", message="no result")
    elif not expected:
        result.update(status="warn", message="%s: %g measured, nothing to compare with" % (check, measured))
    else:
        ok = measured >= expected["value"] if higher_is_better else measured <= expected["value"]
        result.update(status="pass" if ok else "fail",
                      message="%g %s measured, %s %g expected" % (
                          measured, expected["unit"], ">=" if higher_is_better else "<=", expected["value"]))
    return result


# ---------------------------------------------------------------------------
# Pairing nodes for the fabric tests
# ---------------------------------------------------------------------------

def pairs(hosts: Sequence[str]) -> List[List[str]]:
    """Neighbours in natural order: (1,2), (3,4)...; an odd last node pairs with the first."""
    ordered = sorted(hosts, key=natural_key)
    out = [ordered[i:i + 2] for i in range(0, len(ordered) - 1, 2)]
    if len(ordered) % 2 and len(ordered) > 1:
        out.append([ordered[-1], ordered[0]])
    return out


def remix(results: Sequence[Mapping[str, Any]]) -> List[List[str]]:
    """Second-round pairs for the slow (failed) pairs: each node of a slow pair with a node that
    was only in good pairs, so that a node slow again is the one at fault. A node of a slow pair
    never helps (with an odd node count one node is in two pairs), and is re-tested once."""
    slow = [r["hosts"] for r in results if r["status"] == "fail"]
    suspects = set(h for pair in slow for h in pair)
    good: List[str] = []
    for r in results:
        if r["status"] == "pass":
            good.extend(h for h in r["hosts"] if h not in suspects and h not in good)
    out: List[List[str]] = []
    helpers = iter(good)
    for pair in slow:
        for host in pair:
            if any(host == again[0] for again in out):
                continue
            partner = next(helpers, None)
            if partner is None:
                return out
            out.append([host, partner])
    return out


def blame(first: Sequence[Mapping[str, Any]], second: Sequence[Mapping[str, Any]]) -> Dict[str, str]:
    """Nodes at fault: slow in round one and again with a good partner in round two.
    {host: message}; a slow pair whose nodes were both fine with others is blamed on the link."""
    slow_again = {r["hosts"][0] for r in second if r["status"] == "fail"}
    fine_again = {r["hosts"][0] for r in second if r["status"] == "pass"}
    out: Dict[str, str] = {}
    for result in first:
        if result["status"] != "fail":
            continue
        for host in result["hosts"]:
            if host in slow_again:
                out[host] = "slow with %s and again with another node" % " and ".join(
                    h for h in result["hosts"] if h != host)
        if all(h in fine_again for h in result["hosts"]):
            for host in result["hosts"]:
                out.setdefault(host, "slow only together with %s: the path between them (cable, switch port)"
                               % " and ".join(h for h in result["hosts"] if h != host))
    return out


def fabric_rounds(first: Sequence[Mapping[str, Any]], second: Sequence[Mapping[str, Any]]) -> List[Dict[str, Any]]:
    """Round one's pair results with what round two (remix's pairs) found, then round two's own.

    Each result gets ``round`` (1 or 2). A failed pair of round one gets ``blame``, per host,
    where round two tells who is at fault (see blame): ``fail`` for a node slow again with a good
    partner, ``pass`` for its partner, ``warn`` for both nodes of a pair slow only together (the
    path between them: no node to drain). Round two's results count for no node: a good helper
    paired with the bad node is not at fault. Checks are matched by name."""
    out: List[Dict[str, Any]] = []
    for check in sorted(set(r["check"] for r in first)):
        ones = [r for r in first if r["check"] == check]
        twos = [r for r in second if r["check"] == check]
        at_fault = blame(ones, twos)
        slow_again = set(r["hosts"][0] for r in twos if r["status"] == "fail")
        for result in ones:
            result = dict(result, round=1)
            if result["status"] == "fail" and any(h in at_fault for h in result["hosts"]):
                culprits = [h for h in result["hosts"] if h in at_fault and h in slow_again]
                per_host: Dict[str, Dict[str, str]] = {}
                for host in result["hosts"]:
                    if host in at_fault:
                        per_host[host] = {"status": "fail" if host in slow_again else "warn", "message": at_fault[host]}
                    else:
                        per_host[host] = {"status": "pass", "message": "slow with %s, which was slow again with another node"
                                          % " and ".join(culprits)}
                result["blame"] = per_host
            out.append(result)
        out.extend(dict(r, round=2) for r in twos)
    return out
