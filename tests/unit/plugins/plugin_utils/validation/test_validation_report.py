# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The report of playbooks/validate.yml: the schema check (exact messages), the Markdown (exact lines),
the HTML page (parsed: tables, escaping, no external resources) and its SVG charts (well-formed XML,
computed ticks, the expected line where the scale puts it)."""

from __future__ import annotations

import copy
import json
import math
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import pytest

from ansible_collections.gpucluster.core.plugins.module_utils._health import CHECKS, evaluate
from ansible_collections.gpucluster.core.plugins.plugin_utils.validation import _report as report
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._rules import RuleError
from ansible_collections.gpucluster.core.plugins.plugin_utils.validation._checks import CORDON_KINDS, failing_checks
from ansible_collections.gpucluster.core.plugins.plugin_utils.validation._fabric import fabric_rounds, judge
from ansible_collections.gpucluster.core.plugins.plugin_utils.validation._jobs import gpu_jobs
from ansible_collections.gpucluster.core.plugins.plugin_utils.validation._plan import SCHEMA
from ansible_collections.gpucluster.core.plugins.plugin_utils.validation._report import compare_baseline, summary_lines
from ansible_collections.gpucluster.core.plugins.plugin_utils.validation._report import document as validation_document
from ansible_collections.gpucluster.core.tests.unit.plugins.plugin_utils.validation.validation_helpers import (
    H100,
    NCCL_45,
    T4,
    smi,
)

SVG = "{http://www.w3.org/2000/svg}"
NDR = "0.90 x 400 Gb/s NDR per GPU (ibstat)"
EVIL = "<script>alert(1)</script>"


def run(**changes):
    value = {"id": "20261124T101500Z", "started": "2026-11-24T10:15:00Z", "finished": "2026-11-24T10:19:12Z",
             "checks_run": ["passive", "active"], "policy": "report", "controller": "head01", "baseline": None}
    value.update(changes)
    return value


def doc(nodes=(), pairs=(), jobs=(), verdict="pass", counts=(0, 0, 0, 0), **run_changes):
    return {"schema": "gpucluster.core/validation-result/v1", "run": run(**run_changes), "verdict": verdict,
            "counts": dict(zip(("pass", "warn", "fail", "skip"), counts)),
            "nodes": list(nodes), "pairs": list(pairs), "jobs": list(jobs)}


def check(name, status="pass", measured=8, expected=8, unit=None, source="nvidia-smi", message=None, **extra):
    return dict({"check": name, "kind": "passive", "status": status, "measured": measured, "expected": expected,
                 "unit": unit, "source": source, "message": message}, **extra)


def node(host, checks=(), verdict="pass", kind="none", reason=None):
    return {"host": host, "verdict": verdict, "action": {"kind": kind, "reason": reason}, "checks": list(checks)}


def sweep(peak, low=3, high=33):
    return [{"size_bytes": 2 ** e, "value": round(peak * 2 ** e / (2 ** e + 2 ** 22), 2)} for e in range(low, high + 1)]


def pair(hosts, status="pass", measured=45.1, check_name="nccl_all_reduce", series=None, **extra):
    value = {"check": check_name, "hosts": list(hosts), "status": status, "measured": measured, "expected": 43.2,
             "unit": "GB/s", "source": NDR, "recorded": False, "note": None}
    if series is not None:
        value["series"] = series
    value.update(extra)
    return value


def job(name, hosts=("worker1", "worker2"), status="pass", measured=None, expected=None, message=None, series=None):
    value = {"check": name, "hosts": list(hosts), "status": status, "measured": measured, "expected": expected,
             "message": message}
    if series is not None:
        value["series"] = series
    return value


GPU_FAIL = check("gpu_count", "fail", 7, 8, source="Slurm gres.conf (gres/gpu=8)",
                 message="7 GPUs answer nvidia-smi, 8 expected")
ECC_WARN = check("ecc_errors", "warn", [0, 12], 0, source="nvidia-smi -q", message="GPU1: 12 correctable errors")
BUSY = [node("worker10", [check("gpu_count"), ECC_WARN], "warn"),
        node("worker2", [check("gpu_count"), check("ecc_errors", measured=[0, 0], expected=0, source="nvidia-smi -q"),
                         check("h2d_bandwidth", measured=54.2, expected=40.0, unit="GB/s", source="0.75 x PCIe Gen5",
                               baseline=55.1)]),
        node("worker1", [GPU_FAIL, check("ib_ports", "skip", None, 8, source="ibstat", message="no HCA")], "fail",
             "drained", "gpucluster-validation: gpu_count")]
BUSY_PAIRS = [pair(["worker3", "worker4"], "fail", 21.7, series=sweep(21.7)),
              pair(["worker1", "worker2"], series=sweep(45.1)),
              pair(["worker1", "worker2"], measured=1.8, check_name="ib_write_lat", unit="us", expected=3.0,
                   source="hop budget", recorded=True, note="no fabric here: judged on tests/fixtures/lat.txt"),
              pair(["worker2", "worker10"], "warn", 39.0, series=[])]
LOSS = [{"step": s, "loss": round(1.3 - 0.01 * s, 4)} for s in range(0, 101, 10)]
BUSY_JOBS = [job("slurm_gpu_job", ["worker1"], "fail", 0, 8, "srun: error: Unable to allocate resources"),
             job("ddp_smoke", measured=0.3, expected="loss decreases", message="loss 1.3 -> 0.3", series=LOSS)]
BUSY_DOC = doc(BUSY, BUSY_PAIRS, BUSY_JOBS, "fail", (6, 2, 3, 1), policy="drain", baseline="/var/lib/base.json")


# ----------------------------------------------------------------------------- Markdown


EMPTY_MD = """\
# Validation 20261124T101500Z: pass (0 fail, 0 warn, 0 pass, 0 skip)

- Started: 2026-11-24T10:15:00Z
- Finished: 2026-11-24T10:19:12Z (4 min 12 s)
- Checks run: none
- Policy: report
- Slurm controller: head01
- Kubernetes: none
- Baseline: none

## Nodes

No nodes.

## Failures and warnings

None: every check passed.

## Pairs

No pair checks.

## Jobs

No jobs.
"""

ONE_NODE_MD = """\
# Validation r1: pass (0 fail, 0 warn, 2 pass, 0 skip)

- Started: 2026-11-24T10:15:00Z
- Finished: 2026-11-24T11:16:05Z (1 h 1 min 5 s)
- Checks run: passive
- Policy: report
- Slurm controller: head01
- Kubernetes: none
- Baseline: none

## Nodes

| Host | Verdict | Action | gpu_count | gpu_temp |
|---|---|---|---|---|
| worker1 | pass | none | pass 8 | pass 41 C |

## Failures and warnings

None: every check passed.

## Pairs

No pair checks.

## Jobs

No jobs.
"""


@pytest.mark.parametrize("document, text", [
    pytest.param(doc(checks_run=[]), EMPTY_MD, id="empty-lists"),
    pytest.param(doc([node("worker1", [check("gpu_count"), check("gpu_temp", measured=41, expected=85, unit="C")])],
                     counts=(2, 0, 0, 0), id="r1", finished="2026-11-24T11:16:05Z", checks_run=["passive"]),
                 ONE_NODE_MD, id="one-node"),
])
def test_markdown_whole(document, text):
    assert report.render_markdown(document) == text


@pytest.mark.parametrize("document, lines", [
    pytest.param(BUSY_DOC, [
        "# Validation 20261124T101500Z: FAIL (3 fail, 2 warn, 6 pass, 1 skip)",
        "- Policy: drain",
        "- Baseline: /var/lib/base.json",
        "| Host | Verdict | Action | gpu_count | ib_ports | ecc_errors | h2d_bandwidth |",
        "|---|---|---|---|---|---|---|",
        "| worker1 | FAIL | drained (gpucluster-validation: gpu_count) | FAIL 7 | skip | - | - |",
        "| worker2 | pass | none | pass 8 | - | pass 0, 0 | pass 54.2 GB/s |",
        "| worker10 | WARN | none | pass 8 | - | WARN 0, 12 | - |",
        "| Status | Host | Check | Measured | Expected | Source | Message |",
        "| FAIL | worker1 | gpu_count | 7 | 8 | Slurm gres.conf (gres/gpu=8) | 7 GPUs answer nvidia-smi, 8 expected |",
        "| FAIL | worker3, worker4 | nccl_all_reduce | 21.7 GB/s | 43.2 GB/s | %s | - |" % NDR,
        "| FAIL | worker1 | slurm_gpu_job | 0 | 8 | - | srun: error: Unable to allocate resources |",
        "| WARN | worker10 | ecc_errors | 0, 12 | 0 | nvidia-smi -q | GPU1: 12 correctable errors |",
        "| WARN | worker2, worker10 | nccl_all_reduce | 39 GB/s | 43.2 GB/s | %s | - |" % NDR,
        "| Hosts | Check | Measured | Expected | Source | Status | Note |",
        "| worker1, worker2 | nccl_all_reduce | 45.1 GB/s | 43.2 GB/s | %s | pass | live |" % NDR,
        "| worker2, worker10 | nccl_all_reduce | 39 GB/s | 43.2 GB/s | %s | WARN | live |" % NDR,
        "| worker3, worker4 | nccl_all_reduce | 21.7 GB/s | 43.2 GB/s | %s | FAIL | live |" % NDR,
        "| worker1, worker2 | ib_write_lat | 1.8 us | 3 us | hop budget | pass | recorded: no fabric here: judged on "
        "tests/fixtures/lat.txt |",
        "| Hosts | Check | Measured | Expected | Status | Message |",
        "| worker1 | slurm_gpu_job | 0 | 8 | FAIL | srun: error: Unable to allocate resources |",
        "| worker1, worker2 | ddp_smoke | 0.3 | loss decreases | pass | loss 1.3 -> 0.3 |",
    ], id="fail-warn-skip-pairs-jobs"),
    pytest.param(doc([node("node10"), node("node2"), node("Node1"), node("node1")]), [
        "| Host | Verdict | Action |",
        "| Node1 | pass | none |",
        "| node1 | pass | none |",
        "| node2 | pass | none |",
        "| node10 | pass | none |",
    ], id="natural-host-order-no-checks"),
    pytest.param(doc([node(EVIL, [check("gpu|count", "warn", "a*b*", message="a|b *x* `y` _z_ snake_case [l](u) "
                                        "&amp; & \\ line\nbreak \x1b[31m \ud800")])], verdict="warn"), [
        "| Host | Verdict | Action | gpu\\|count |",
        "| &lt;script>alert(1)&lt;/script> | pass | none | WARN a\\*b\\* |",
        "| WARN | &lt;script>alert(1)&lt;/script> | gpu\\|count | a\\*b\\* | 8 | nvidia-smi | a\\|b \\*x\\* \\`y\\` "
        "\\_z\\_ snake_case \\[l\\](u) &amp;amp; & \\\\ line break \ufffd\\[31m \ufffd |",
    ], id="markdown-escaping"),
    pytest.param(doc(pairs=[pair(["a", "b"], measured=[44.0, 45.5], expected=None, unit="GB/s", source=None,
                                 recorded=True),
                            pair(["a", "b"], "skip", None, "ib_write_bw", unit=None, expected=">= 360 Gb/s",
                                 source=None, note="no HCA")]), [
        "| a, b | nccl_all_reduce | 44, 45.5 GB/s | - | - | pass | recorded |",
        "| a, b | ib_write_bw | - | >= 360 Gb/s | - | skip | live: no HCA |",
    ], id="pairs-list-null-string-values"),
    pytest.param(doc([node("w1", [check("bw", measured=1234567.5, expected=0.000125, unit="GB/s"),
                                  check("flag", measured=True, expected=[True, None])])], unknown_run_key=1), [
        "| w1 | pass | none | pass 1234568 GB/s | pass true |",
    ], id="numbers-and-extra-keys"),
    pytest.param(doc(checks_run=["passive"], controller="none", kubernetes="cp1",
                     checks_not_run={"active": "no Slurm controller in this run"}), [
        "- Checks run: passive",
        "- Not run: active: no Slurm controller in this run",
        "- Policy: report",
        "- Slurm controller: none",
        "- Kubernetes: cp1",
    ], id="kubernetes-only-active-not-run"),
])
def test_markdown_lines(document, lines):
    text = report.render_markdown(document)
    got = text.splitlines()
    for line in lines:
        assert line in got, "%r not in:\n%s" % (line, text)
    positions = [got.index(line) for line in lines]
    assert positions == sorted(positions)


def test_markdown_ignores_keys_outside_the_schema_and_the_node_order():
    document = copy.deepcopy(BUSY_DOC)
    document["extra"] = {"anything": 1}
    document["nodes"][0]["checks"][0]["duration_s"] = 3
    document["nodes"].reverse()
    assert report.render_markdown(document) == report.render_markdown(BUSY_DOC)


def active_warnings_doc():
    """As playbooks/validate.yml writes it (report.document): three nodes whose container and
    dcgmi jobs warned, one DDP job over two of them that failed, a slow pair that warned, and a
    recorded pair that failed: each job or live pair is also an active check of its nodes."""
    jobs = [job(name, [host], "warn", message="%s on %s did not run" % (name, host))
            for host in ("master", "worker1", "worker2") for name in ("gpu_container", "dcgm_diag")]
    jobs.append(job("ddp_smoke", ["worker1", "worker2"], "fail", message="loss did not decrease"))
    pairs = [pair(["worker1", "worker2"], "warn", 39.0),
             pair(["master", "worker1"], "fail", 1.0, check_name="ib_write_bw", unit="Gb/s", recorded=True)]
    nodes = {host: [check("gpu_count")] for host in ("master", "worker1", "worker2")}
    actions = {host: {"kind": "none", "reason": None} for host in nodes}
    return validation_document(run(), nodes, pairs, jobs, actions)


def test_each_failure_and_warning_is_listed_once():
    document = active_warnings_doc()
    assert document["counts"] == {"pass": 3, "warn": 8, "fail": 3, "skip": 0}
    want = [("FAIL", "worker1", "ddp_smoke"), ("FAIL", "worker2", "ddp_smoke"),
            ("FAIL", "master, worker1", "ib_write_bw"),
            ("WARN", "master", "gpu_container"), ("WARN", "master", "dcgm_diag"),
            ("WARN", "worker1", "nccl_all_reduce"), ("WARN", "worker1", "gpu_container"),
            ("WARN", "worker1", "dcgm_diag"),
            ("WARN", "worker2", "nccl_all_reduce"), ("WARN", "worker2", "gpu_container"),
            ("WARN", "worker2", "dcgm_diag")]
    text = report.render_markdown(document)
    section = text.split("## Failures and warnings\n\n", 1)[1].split("\n\n## ", 1)[0].splitlines()
    assert [tuple(cell.strip() for cell in line.strip("|").split("|")[:3]) for line in section[2:]] == want
    assert "| WARN | master | gpu_container | - | - | - | gpu_container on master did not run |" in section
    problems = Page(report.render_html(document)).tables["problems"][0]
    assert [tuple(cell[0] for cell in row[:3]) for row in problems[1:]] == want
    # The jobs and pairs sections still list every job and pair.
    assert len(Page(report.render_html(document)).tables["jobs"][0]) == 1 + 7


def test_a_result_no_node_lists_keeps_its_own_row():
    # Round two's re-mixed pair and a slow pair whose nodes round two cleared are not nodes' checks.
    cleared = pair(["worker1", "worker2"], "warn", 39.0,
                   blame={"worker1": {"status": "pass", "message": "fine with worker3"},
                          "worker2": {"status": "pass", "message": "fine with worker4"}})
    again = pair(["worker1", "worker3"], "warn", 40.0, round=2)
    nodes = {host: [check("gpu_count")] for host in ("worker1", "worker2", "worker3")}
    document = validation_document(run(), nodes, [cleared, again], [], {})
    rows = Page(report.render_html(document)).tables["problems"][0][1:]
    assert [tuple(cell[0] for cell in row[:3]) for row in rows] == [
        ("WARN", "worker1, worker2", "nccl_all_reduce"), ("WARN", "worker1, worker3", "nccl_all_reduce")]


# ----------------------------------------------------------------------------- HTML


class Page(HTMLParser):
    """Tags, headings and each section's tables as rows of (text, class) cells."""

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.tags = []
        self.headings = []
        self.tables = {}
        self._section = None
        self._table = self._cell = self._heading = None
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append((tag, attrs))
        if tag == "section":
            self._section = attrs["id"]
        elif tag == "table":
            self._table = []
            self.tables.setdefault(self._section, []).append(self._table)
        elif tag == "tr":
            self._table.append([])
        elif tag in ("td", "th"):
            self._cell = ["", attrs.get("class", "")]
            self._table[-1].append(self._cell)
        elif tag in ("h1", "h2", "h3"):
            self._heading = ""

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self._table[-1][-1] = tuple(self._cell)
            self._cell = None
        elif tag in ("h1", "h2", "h3"):
            self.headings.append((tag, self._heading))
            self._heading = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell[0] += data
        if self._heading is not None:
            self._heading += data


def svgs(text):
    return [ET.fromstring(part) for part in re.findall(r"<svg\b.*?</svg>", text, re.S)]


def ticks(svg, axis):
    """(label, pixel) of each tick of the x or y axis."""
    group = next(g for g in svg.iter(SVG + "g") if g.get("class") == axis + "-ticks")
    return [(label.text, float(line.get(axis + "1")))
            for line, label in zip(group.findall(SVG + "line"), group.findall(SVG + "text"))]


def labels(axis_ticks):
    return [tick[0] for tick in axis_ticks]


def marks(svg, tag, klass):
    return [e for e in svg.iter(SVG + tag) if (e.get("class") or "").split()[:1] == [klass]]


def test_html_is_one_self_contained_well_formed_page():
    text = report.render_html(BUSY_DOC)
    assert text.startswith("<!DOCTYPE html>\n<html lang=\"en\">")
    ET.fromstring(text.split("\n", 1)[1])  # the whole page is well-formed XML too
    page = Page(text)
    names = {tag for tag, attrs in page.tags}
    assert not names & {"script", "link", "img", "iframe", "object", "embed"}
    assert all(not {"src", "href"} & set(attrs) for tag, attrs in page.tags)
    assert "url(" not in text and "@import" not in text and "http://" not in text.replace(
        'xmlns="http://www.w3.org/2000/svg"', "")
    assert page.headings == [
        ("h1", "Validation 20261124T101500Z"), ("h2", "Nodes"), ("h2", "Failures and warnings"), ("h2", "Pairs"),
        ("h3", "nccl_all_reduce: bus bandwidth vs message size, 2 pairs"), ("h2", "Jobs"),
        ("h3", "ddp_smoke on worker1, worker2: loss vs step")]
    assert '<p class="verdict">FAIL</p>' in text


def test_html_tables_colour_code_and_spell_out_status():
    page = Page(report.render_html(BUSY_DOC))
    heat = page.tables["nodes"][0]
    assert heat[0] == [(name, "") for name in ("Host", "Verdict", "Action", "gpu_count", "ib_ports", "ecc_errors",
                                               "h2d_bandwidth")]
    assert heat[1:] == [
        [("worker1", "host"), ("FAIL", "st s-fail"), ("drained (gpucluster-validation: gpu_count)", "action"),
         ("FAIL 7", "st s-fail"), ("skip", "st s-skip"), ("-", "na"), ("-", "na")],
        [("worker2", "host"), ("pass", "st s-pass"), ("none", "action"), ("pass 8", "st s-pass"), ("-", "na"),
         ("pass 0, 0", "st s-pass"), ("pass 54.2 GB/s", "st s-pass")],
        [("worker10", "host"), ("WARN", "st s-warn"), ("none", "action"), ("pass 8", "st s-pass"), ("-", "na"),
         ("WARN 0, 12", "st s-warn"), ("-", "na")]]
    problems = page.tables["problems"][0]
    assert [row[:3] for row in problems[1:]] == [
        [("FAIL", "st s-fail"), ("worker1", ""), ("gpu_count", "")],
        [("FAIL", "st s-fail"), ("worker3, worker4", ""), ("nccl_all_reduce", "")],
        [("FAIL", "st s-fail"), ("worker1", ""), ("slurm_gpu_job", "")],
        [("WARN", "st s-warn"), ("worker10", ""), ("ecc_errors", "")],
        [("WARN", "st s-warn"), ("worker2, worker10", ""), ("nccl_all_reduce", "")]]
    assert problems[1][3:] == [("7", ""), ("8", ""), ("Slurm gres.conf (gres/gpu=8)", ""),
                               ("7 GPUs answer nvidia-smi, 8 expected", "")]
    pairs = page.tables["pairs"][0]
    assert pairs[4] == [("worker1, worker2", ""), ("ib_write_lat", ""), ("1.8 us", ""), ("3 us", ""),
                        ("hop budget", ""), ("pass", "st s-pass"),
                        ("recorded: no fabric here: judged on tests/fixtures/lat.txt", "")]
    jobs = page.tables["jobs"][0]
    assert jobs[1] == [("worker1", ""), ("slurm_gpu_job", ""), ("0", ""), ("8", ""), ("FAIL", "st s-fail"),
                       ("srun: error: Unable to allocate resources", "")]
    tips = [attrs["title"] for tag, attrs in page.tags if tag == "span" and "title" in attrs]
    assert "expected 8 (Slurm gres.conf (gres/gpu=8)); 7 GPUs answer nvidia-smi, 8 expected" in tips
    assert "expected 40 GB/s (baseline 55.1 GB/s) (0.75 x PCIe Gen5)" in tips


@pytest.mark.parametrize("document, sections", [
    pytest.param(doc(), {"nodes": "No nodes.", "problems": "None: every check passed.",
                         "pairs": "No pair checks.", "jobs": "No jobs."}, id="empty-lists"),
])
def test_html_empty_document(document, sections):
    text = report.render_html(document)
    ET.fromstring(text.split("\n", 1)[1])
    for section, sentence in sections.items():
        assert re.search(r'<section id="%s"><h2>[^<]*</h2>\n<p class="none">%s</p>' % (section, re.escape(sentence)),
                         text)
    assert svgs(text) == [] and Page(text).tables == {}


def test_html_escapes_host_names_and_messages():
    evil = doc([node(EVIL, [check("gpu_count", "fail", "<b>7</b>", 8, source='"quoted" & <i>',
                                  message="<img src=x onerror=alert(1)>")], "fail", "drained", "<svg onload=x>")],
               [pair([EVIL, "w2"], "fail", 20.0, series=sweep(20.0, 3, 6), note="</title><script>x</script>")],
               [job("ddp_smoke", [EVIL], "fail", message="<script>y</script>", series=LOSS)],
               "fail", id="run<1>")
    text = report.render_html(evil)
    assert "<script" not in text.lower() and "<img" not in text.lower() and "<svg onload" not in text.lower()
    ET.fromstring(text.split("\n", 1)[1])
    page = Page(text)
    assert {tag for tag, attrs in page.tags} & {"script", "img", "b", "i"} == set()
    assert page.tables["nodes"][0][1][:4] == [(EVIL, "host"), ("FAIL", "st s-fail"), ("drained (<svg onload=x>)", "action"),
                                              ("FAIL <b>7</b>", "st s-fail")]
    assert page.tables["problems"][0][1][6] == ("<img src=x onerror=alert(1)>", "")
    assert ("h1", "Validation run<1>") in page.headings
    charts = svgs(text)
    assert len(charts) == 2
    assert [t.text for t in marks(charts[0], "text", "pair-label")] == [EVIL + ", w2: FAIL 20 GB/s"]
    assert charts[1].find(SVG + "title").text == "ddp_smoke on %s: loss vs step" % EVIL


def test_pair_chart_scale_ticks_expected_line_and_the_slow_pair():
    charts = svgs(report.render_html(BUSY_DOC))
    assert len(charts) == 2  # the NCCL pairs with a series (the empty one and ib_write_lat have none), the loss
    chart = charts[0]
    assert chart.get("viewBox") == "0 0 760 360"
    assert chart.find(SVG + "title").text == "nccl_all_reduce: bus bandwidth vs message size"
    yticks = ticks(chart, "y")
    assert labels(yticks) == ["0", "10", "20", "30", "40", "50"]
    assert [tick[1] for tick in yticks] == [300.0, 244.8, 189.6, 134.4, 79.2, 24.0]
    xticks = ticks(chart, "x")
    assert labels(xticks) == ["32 B", "1 KiB", "32 KiB", "1 MiB", "32 MiB", "1 GiB"]
    # x is log2: 8 B (2^3) at the left edge, 8 GiB (2^33) at the right, ticks every 2^5
    for tick, exponent in zip(xticks, range(5, 31, 5)):
        assert tick[1] == pytest.approx(72 + (exponent - 3) / 30 * 668, abs=0.05)
    (expected,) = marks(chart, "line", "expected")
    assert expected.get("stroke-dasharray") and expected.get("y1") == expected.get("y2")
    (zero_value, zero_y), (top_value, top_y) = (float(yticks[0][0]), yticks[0][1]), (float(yticks[-1][0]), yticks[-1][1])
    assert float(expected.get("y1")) == pytest.approx(
        zero_y + (43.2 - zero_value) * (top_y - zero_y) / (top_value - zero_value), abs=0.05)
    assert expected.get("y1") == "61.5"
    assert [t.text for t in marks(chart, "text", "expected-label")] == ["expected 43.2 GB/s (%s)" % NDR]
    curves = marks(chart, "polyline", "series")
    assert [c.get("class") for c in curves] == ["series s-pass", "series s-fail"]  # the failing pair on top
    passing, failing = curves
    assert float(failing.get("stroke-width")) > 2 * float(passing.get("stroke-width"))
    assert failing.get("stroke") == "#cf222e"
    assert failing.find(SVG + "title").text == "worker3, worker4: FAIL 21.7 GB/s"
    points = [tuple(map(float, p.split(","))) for p in failing.get("points").split()]
    assert len(points) == 31 and points[0][0] == 72.0 and points[-1][0] == 740.0
    last = sweep(21.7)[-1]["value"]
    assert points[-1][1] == pytest.approx(300 - last / 50 * 276, abs=0.05)
    assert [t.text for t in marks(chart, "text", "pair-label")] == ["worker3, worker4: FAIL 21.7 GB/s"]
    assert chart.find(SVG + "text[@class='y-title']").text == "bus bandwidth (GB/s)"
    assert chart.find(SVG + "text[@class='x-title']").text == "message size (log2 scale)"


def test_pair_charts_one_per_check_and_a_log_scale_for_latency():
    lat = [{"size_bytes": 2 ** e, "value": round(1.7 + 2 ** e / 12500.0, 2)} for e in range(1, 24)]
    document = doc(pairs=[pair(["w1", "w2"], measured=1.8, check_name="ib_write_lat", unit="us", expected=3.0,
                               source="hop budget", series=lat),
                          pair(["w1", "w2"], measured=392.1, check_name="ib_write_bw", unit="Gb/s", expected=360,
                               source="0.90 x 400 Gb/s", series=sweep(392.1, 1, 23))])
    text = report.render_html(document)
    lat_chart, bw_chart = svgs(text)
    assert lat_chart.find(SVG + "text[@class='y-title']").text == "latency (us, log scale)"
    yticks = ticks(lat_chart, "y")
    assert labels(yticks) == ["1", "10", "100", "1000"]
    (expected,) = marks(lat_chart, "line", "expected")
    assert float(expected.get("y1")) == pytest.approx(300 - math.log10(3.0) / 3 * 276, abs=0.05)
    assert labels(ticks(lat_chart, "x")) == ["32 B", "1 KiB", "32 KiB", "1 MiB"]
    assert labels(ticks(bw_chart, "y")) == ["0", "100", "200", "300", "400"]
    assert bw_chart.find(SVG + "text[@class='y-title']").text == "bandwidth (Gb/s)"
    assert [t.text for t in marks(bw_chart, "text", "expected-label")] == ["expected 360 Gb/s (0.90 x 400 Gb/s)"]
    assert marks(bw_chart, "text", "pair-label") == []
    assert '<li><span class="swatch" style="background:#0969da;height:3px"></span>w1, w2 <span class="st s-pass">' \
           'pass</span> 392.1 Gb/s</li>' in text


def test_loss_chart():
    (chart,) = svgs(report.render_html(doc(jobs=[job("ddp_smoke", series=list(reversed(LOSS)))])))
    assert labels(ticks(chart, "x")) == ["0", "20", "40", "60", "80", "100"]
    yticks = ticks(chart, "y")
    assert labels(yticks) == ["0.2", "0.4", "0.6", "0.8", "1", "1.2", "1.4"]
    (line,) = marks(chart, "polyline", "loss")
    points = [tuple(map(float, p.split(","))) for p in line.get("points").split()]
    assert [point[0] for point in points] == pytest.approx([72.0 + 66.8 * i for i in range(11)], abs=0.05)  # by step
    assert points[0][1] == pytest.approx(300 - (1.3 - 0.2) / 1.2 * 276, abs=0.05)
    assert len(chart.findall(SVG + "circle")) == 11
    assert chart.find(SVG + "text[@class='y-title']").text == "loss"


def test_job_without_series_has_no_chart():
    text = report.render_html(doc(jobs=[job("ddp_smoke", series=[]), job("gpu_container")]))
    assert svgs(text) == []


# ----------------------------------------------------------------------------- scales


@pytest.mark.parametrize("low, high, expected", [
    (0, 45.1, [0, 10, 20, 30, 40, 50]), (0, 1, [0, 0.2, 0.4, 0.6, 0.8, 1]), (0, 7, [0, 2, 4, 6, 8]),
    (0, 392.1, [0, 100, 200, 300, 400]), (0.3, 1.3, [0.2, 0.4, 0.6, 0.8, 1, 1.2, 1.4]),
    (0, 12, [0, 2.5, 5, 7.5, 10, 12.5]), (5, 5, [2, 3, 4, 5, 6, 7, 8]), (0, 0, [-1, -0.5, 0, 0.5, 1]),
    (-3, 3, [-4, -2, 0, 2, 4]), (1200, 1800, [1200, 1400, 1600, 1800]),
    (1200, 1500, [1200, 1300, 1400, 1500]),
])
def test_nice_ticks(low, high, expected):
    assert report.nice_ticks(low, high) == expected


@pytest.mark.parametrize("low, high, expected", [
    (3, 33, [5, 10, 15, 20, 25, 30]), (3, 10, [3, 4, 5, 6, 7, 8, 9, 10]), (0, 30, [0, 5, 10, 15, 20, 25, 30]),
    (1, 23, [5, 10, 15, 20]), (19, 21, [19, 20, 21]), (0, 63, [0, 10, 20, 30, 40, 50, 60]),
])
def test_log2_ticks(low, high, expected):
    assert report.log2_ticks(low, high) == expected


@pytest.mark.parametrize("low, high, expected", [
    (1.7, 670, [1, 10, 100, 1000]), (1.2, 9, [1, 2, 5, 10]), (0.5, 30, [0.1, 1, 10, 100]),
    (0.5, 9, [0.1, 0.2, 0.5, 1, 2, 5, 10]),
    (10, 10, [10, 20, 50, 100]),
])
def test_log10_ticks(low, high, expected):
    assert report.log10_ticks(low, high) == expected


@pytest.mark.parametrize("exponent, label", [
    (0, "1 B"), (3, "8 B"), (9, "512 B"), (10, "1 KiB"), (23, "8 MiB"), (30, "1 GiB"), (33, "8 GiB"), (40, "1 TiB"),
])
def test_size_label(exponent, label):
    assert report.size_label(exponent) == label


# ----------------------------------------------------------------------------- schema check


def three_nodes():
    return copy.deepcopy(doc([node("worker%d" % i, [check("gpu_count")]) for i in (1, 2, 3)],
                             [pair(["worker1", "worker2"], series=sweep(45.1, 3, 5))],
                             [job("ddp_smoke", series=LOSS[:2])]))


def edit(change):
    document = three_nodes()
    change(document)
    return document


ACTIONS = ("drained, resumed, none, kept drained (admin), kept drained (not judged), would drain (report only), "
           "would resume (report only), held (drain budget), kept drained (flapping), rma, kept in quarantine")
VALUE = "a number, a string, a list of those or null"


@pytest.mark.parametrize("document, message", [
    pytest.param(None, "the document is None, expected a mapping", id="not-a-mapping"),
    pytest.param(edit(lambda d: d.pop("schema")), "schema is missing", id="no-schema"),
    pytest.param(edit(lambda d: d.update(schema="gpucluster.core/validation-result/v2", nodes=None)),
                 "schema is 'gpucluster.core/validation-result/v2', expected 'gpucluster.core/validation-result/v1'",
                 id="other-schema-stops-there"),
    pytest.param(edit(lambda d: d["nodes"][2]["checks"][0].update(status="ok")),
                 "nodes[2].checks[0].status is 'ok', expected one of pass, warn, fail, skip", id="check-status"),
    pytest.param(edit(lambda d: d.pop("run")), "run is missing", id="no-run"),
    pytest.param(edit(lambda d: d.update(run=[])), "run is [], expected a mapping", id="run-list"),
    pytest.param(edit(lambda d: d["run"].update(policy="drain-all")),
                 "run.policy is 'drain-all', expected one of report, drain, drain-and-stop", id="policy"),
    pytest.param(edit(lambda d: d["run"].pop("controller")), "run.controller is missing", id="no-controller"),
    pytest.param(edit(lambda d: d["run"].update(id="")), "run.id is '', expected a non-empty string", id="empty-id"),
    pytest.param(edit(lambda d: d["run"].update(checks_run=["passive", "bench"])),
                 "run.checks_run[1] is 'bench', expected one of passive, active", id="checks-run"),
    pytest.param(edit(lambda d: d["run"].update(checks_not_run=["active"])),
                 "run.checks_not_run is ['active'], expected a mapping", id="checks-not-run-list"),
    pytest.param(edit(lambda d: d["run"].update(checks_not_run={"bench": "why"})),
                 "run.checks_not_run.bench is 'bench', expected one of passive, active", id="checks-not-run-kind"),
    pytest.param(edit(lambda d: d["run"].update(checks_not_run={"active": ""})),
                 "run.checks_not_run.active is '', expected a non-empty string", id="checks-not-run-why"),
    pytest.param(edit(lambda d: d["run"].update(baseline=3)), "run.baseline is 3, expected a string or null",
                 id="run-baseline"),
    pytest.param(edit(lambda d: d.update(verdict="skip")), "verdict is 'skip', expected one of pass, warn, fail",
                 id="verdict"),
    pytest.param(edit(lambda d: d["counts"].update(fail=-1)), "counts.fail is -1, expected a non-negative integer",
                 id="count-negative"),
    pytest.param(edit(lambda d: d["counts"].update(skip=True)), "counts.skip is True, expected a non-negative integer",
                 id="count-bool"),
    pytest.param(edit(lambda d: d["counts"].pop("warn")), "counts.warn is missing", id="count-missing"),
    pytest.param(edit(lambda d: d.update(nodes={"worker1": {}})), "nodes is {'worker1': {}}, expected a list",
                 id="nodes-mapping"),
    pytest.param(edit(lambda d: d["nodes"].__setitem__(0, "worker1")), "nodes[0] is 'worker1', expected a mapping",
                 id="node-string"),
    pytest.param(edit(lambda d: d["nodes"][1].update(host="worker1")),
                 "nodes[1].host is 'worker1', expected a host not already listed (nodes[0])", id="host-twice"),
    pytest.param(edit(lambda d: d["nodes"][1]["checks"].append(check("gpu_count", "fail"))),
                 "nodes[1].checks[1].check is 'gpu_count', expected a check not already listed for this host "
                 "(nodes[1].checks[0])", id="check-twice"),
    pytest.param(edit(lambda d: d["nodes"][0].update(verdict="skip")),
                 "nodes[0].verdict is 'skip', expected one of pass, warn, fail", id="node-verdict"),
    pytest.param(edit(lambda d: d["nodes"][0]["action"].update(kind="evicted")),
                 "nodes[0].action.kind is 'evicted', expected one of " + ACTIONS, id="action-kind"),
    pytest.param(edit(lambda d: d["nodes"][0].update(cordon={"node": "worker1", "kind": "drained", "reason": None})),
                 "nodes[0].cordon.kind is 'drained', expected one of cordoned, uncordoned, none, kept cordoned (admin), "
                 "kept cordoned (not judged), would cordon (report only), would uncordon (report only), "
                 "held (drain budget)", id="cordon-kind"),
    pytest.param(edit(lambda d: d["nodes"][0].update(cordon={"kind": "none", "reason": 3})),
                 "nodes[0].cordon.node is missing; nodes[0].cordon.reason is 3, expected a string or null",
                 id="cordon-fields"),
    pytest.param(edit(lambda d: d["nodes"][0].update(cordon="cordoned")),
                 "nodes[0].cordon is 'cordoned', expected a mapping or null", id="cordon-text"),
    pytest.param(edit(lambda d: d["run"].update(kubernetes="")),
                 "run.kubernetes is '', expected a non-empty string", id="run-kubernetes"),
    pytest.param(edit(lambda d: d["nodes"][0]["action"].pop("reason")), "nodes[0].action.reason is missing",
                 id="action-reason"),
    pytest.param(edit(lambda d: d["nodes"][0].update(action=None)), "nodes[0].action is None, expected a mapping",
                 id="action-null"),
    pytest.param(edit(lambda d: d["nodes"][0]["checks"][0].update(measured={"a": 1})),
                 "nodes[0].checks[0].measured is {'a': 1}, expected " + VALUE, id="measured-mapping"),
    pytest.param(edit(lambda d: d["nodes"][0]["checks"][0].update(expected=[1, [2]])),
                 "nodes[0].checks[0].expected is [1, [2]], expected " + VALUE, id="expected-nested"),
    pytest.param(edit(lambda d: d["nodes"][0]["checks"][0].pop("measured")), "nodes[0].checks[0].measured is missing",
                 id="measured-missing"),
    pytest.param(edit(lambda d: d["nodes"][0]["checks"][0].update(kind="burn-in")),
                 "nodes[0].checks[0].kind is 'burn-in', expected one of passive, active", id="check-kind"),
    pytest.param(edit(lambda d: d["nodes"][0]["checks"][0].update(unit=5)),
                 "nodes[0].checks[0].unit is 5, expected a string or null", id="unit"),
    pytest.param(edit(lambda d: d["nodes"][0]["checks"][0].update(baseline="8")),
                 "nodes[0].checks[0].baseline is '8', expected a number or null", id="baseline"),
    pytest.param(edit(lambda d: d["nodes"][0]["checks"][0].update(message=["x"])),
                 "nodes[0].checks[0].message is ['x'], expected a string or null", id="message"),
    pytest.param(edit(lambda d: d["pairs"][0].update(hosts=[])),
                 "pairs[0].hosts is [], expected a non-empty list of host names", id="pair-hosts"),
    pytest.param(edit(lambda d: d["pairs"][0].update(recorded="no")), "pairs[0].recorded is 'no', expected true or false",
                 id="recorded"),
    pytest.param(edit(lambda d: d["pairs"][0].update(note=False)), "pairs[0].note is False, expected a string or null",
                 id="note"),
    pytest.param(edit(lambda d: d["pairs"][0].update(series={"8": 1.0})),
                 "pairs[0].series is {'8': 1.0}, expected a list or null", id="series-mapping"),
    pytest.param(edit(lambda d: d["pairs"][0]["series"][1].update(size_bytes=0)),
                 "pairs[0].series[1].size_bytes is 0, expected a positive integer", id="size-zero"),
    pytest.param(edit(lambda d: d["pairs"][0]["series"][0].update(value=float("nan"))),
                 "pairs[0].series[0].value is nan, expected a finite number", id="value-nan"),
    pytest.param(edit(lambda d: d["pairs"][0]["series"].append([8, 1.0])),
                 "pairs[0].series[3] is [8, 1.0], expected a mapping", id="point-list"),
    pytest.param(edit(lambda d: d["jobs"][0]["series"][0].update(step=-1)),
                 "jobs[0].series[0].step is -1, expected a non-negative integer", id="step"),
    pytest.param(edit(lambda d: d["jobs"][0]["series"][1].pop("loss")), "jobs[0].series[1].loss is missing",
                 id="loss-missing"),
    pytest.param(edit(lambda d: d["jobs"][0].pop("message")), "jobs[0].message is missing", id="job-message"),
    pytest.param(edit(lambda d: d["jobs"][0].update(hosts="worker1")),
                 "jobs[0].hosts is 'worker1', expected a non-empty list of host names", id="job-hosts"),
    pytest.param(edit(lambda d: (d["run"].update(policy=None), d.update(verdict="ok"), d["pairs"][0].pop("source"))),
                 "run.policy is None, expected one of report, drain, drain-and-stop; verdict is 'ok', expected one "
                 "of pass, warn, fail; pairs[0].source is missing", id="every-problem-at-once"),
])
def test_bad_documents(document, message):
    for function in (report.validate_document, report.render_markdown, report.render_html):
        with pytest.raises(RuleError) as caught:
            function(document)
        assert str(caught.value) == "validation report: " + message


def test_long_values_are_cut_and_at_most_twenty_problems_named():
    document = doc([node("w%d" % i, [check("c", "ok")]) for i in range(25)])
    document["run"]["id"] = ["x" * 100]
    with pytest.raises(RuleError) as caught:
        report.validate_document(document)
    parts = str(caught.value).split("; ")
    assert parts[0] == "validation report: run.id is ['%s..., expected a non-empty string" % ("x" * 75)
    assert parts[1] == "nodes[0].checks[0].status is 'ok', expected one of pass, warn, fail, skip"
    assert len(parts) == 20 and parts[-1].endswith("nodes[18].checks[0].status is 'ok', expected one of pass, warn, "
                                                   "fail, skip (and 6 more)")


def test_good_documents_pass_the_check():
    for document in (doc(), BUSY_DOC, three_nodes()):
        assert report.validate_document(document) is None


def test_every_action_kind_passes_the_check():
    """Each kind node_actions and cordon_actions can return is of the schema (report only included)."""
    for kind in report.ACTIONS:
        assert report.validate_document(edit(lambda d: d["nodes"][0]["action"].update(kind=kind, reason="r"))) is None
    for kind in CORDON_KINDS:
        assert report.validate_document(edit(lambda d: d["nodes"][0].update(
            cordon={"node": "worker1", "kind": kind, "reason": None, "unmark": False}))) is None
    assert report.validate_document(edit(lambda d: d["nodes"][0].update(cordon=None))) is None


# ---------------------------------------------------------------------------
# document, compare_baseline, summary_lines
# ---------------------------------------------------------------------------

# The passive checks come first in a node's results: the active ones start at P.
P = len(CHECKS)
RUN = {"id": "20261124T1012", "baseline": "baseline.json"}
GPU_REPORT = {"jobs": [
    {"host": "gpu1", "gpus": 1, "rc": 0, "visible": 1, "usable": 1, "devices": "0",
     "output": 'GPUCLUSTER-GPU-JOB {"visible": 1, "usable": 1, "devices": "0"}\n'},
    {"host": "gpu2", "gpus": 1, "rc": 1, "visible": None, "usable": None,
     "output": "srun: error: Unable to allocate resources: Requested node configuration is not available\n"},
]}


def run_document(nccl=40.1):
    """gpu1: the healthy H100; gpu2: the T4 (x8 link); a slow pair; a recorded ib_write_bw; the GPU jobs."""
    nodes = {
        "gpu2": evaluate({"nvidia_smi": smi(*T4)}, {}),
        "gpu1": evaluate({"nvidia_smi": smi(*H100)}, {"gpu_count": {"value": 1, "source": "validation_gpu_count"}}),
    }
    pair_results = [
        judge("nccl_all_reduce", ["gpu1", "gpu2"], nccl, NCCL_45),
        judge("ib_write_bw", ["gpu1", "gpu2"], 361.2,
              {"value": 360.0, "unit": "Gb/s", "source": "0.90 x 400 Gb/s port rate (ibstat)"},
              recorded="/srv/validation/ib_write_bw.txt"),
    ]
    actions = {"gpu2": {"kind": "drained", "reason": "gpucluster-validation: pcie_link,nccl_all_reduce,slurm_gpu_job"}}
    return validation_document(RUN, nodes, pair_results, gpu_jobs(GPU_REPORT), actions)


def test_document():
    doc = run_document()
    assert doc["schema"] == SCHEMA == "gpucluster.core/validation-result/v1"
    assert doc["run"] == RUN
    assert doc["verdict"] == "fail"
    # gpu1: 7 pass + 10 skip passive, nccl fail, GPU job pass; gpu2: 5 pass, 1 warn, 1 fail, 10 skip passive,
    # nccl fail, GPU job fail; the recorded ib_write_bw counted once
    assert doc["counts"] == {"pass": 14, "warn": 1, "fail": 4, "skip": 20}
    assert [n["host"] for n in doc["nodes"]] == ["gpu1", "gpu2"]
    gpu1, gpu2 = doc["nodes"]
    assert (gpu1["verdict"], gpu1["action"]) == ("fail", {"kind": "none", "reason": None})
    assert (gpu2["verdict"], gpu2["action"]["kind"]) == ("fail", "drained")
    assert [c["check"] for c in gpu1["checks"][P:]] == ["nccl_all_reduce", "slurm_gpu_job"]
    assert gpu1["checks"][P] == {
        "check": "nccl_all_reduce", "kind": "active", "status": "fail", "measured": 40.1, "expected": 45.0,
        "unit": "GB/s", "source": "0.90 x 400 Gb/s NIC line rate per GPU (ibstat)",
        "message": "40.1 GB/s measured, >= 45 expected", "baseline": None,
    }
    assert failing_checks(gpu2["checks"]) == ["pcie_link", "nccl_all_reduce", "slurm_gpu_job"]
    assert [p["check"] for p in doc["pairs"]] == ["nccl_all_reduce", "ib_write_bw"]
    assert [j["hosts"] for j in doc["jobs"]] == [["gpu1"], ["gpu2"]]
    json.dumps(doc)  # the document is JSON


def test_document_counts_recorded_results_once_and_keeps_them_out_of_verdicts():
    nodes = {"gpu1": evaluate({"nvidia_smi": smi(*H100)}, {})}
    recorded = judge("nccl_all_reduce", ["gpu1", "gpu2"], 12.0, NCCL_45, recorded="/srv/nccl.txt")
    doc = validation_document(RUN, nodes, [recorded], [], {})
    assert doc["nodes"][0]["verdict"] == "pass"
    assert len(doc["nodes"][0]["checks"]) == P
    assert doc["verdict"] == "pass"
    assert doc["counts"]["fail"] == 1


def test_document_of_nothing():
    assert validation_document({"id": "x"}, {}, [], [], {}) == {
        "schema": SCHEMA, "run": {"id": "x"}, "verdict": "pass",
        "counts": {"pass": 0, "warn": 0, "fail": 0, "skip": 0}, "nodes": [], "pairs": [], "jobs": [],
    }


def test_compare_baseline_flags_a_slower_node():
    baseline = run_document(nccl=46.2)
    doc = compare_baseline(run_document(nccl=40.1), baseline, 0.1)
    gpu1, gpu2 = doc["nodes"]
    assert gpu1["checks"][P]["baseline"] == 46.2
    assert gpu1["checks"][P + 1]["baseline"] == 1  # slurm_gpu_job: usable GPUs
    assert gpu1["checks"][-1] == {
        "check": "baseline", "kind": "active", "status": "warn", "measured": 1, "expected": 0, "unit": None,
        "source": "burn-in baseline baseline.json, tolerance 0.1",
        "message": "slower than its baseline: nccl_all_reduce 40.1 < 46.2 (baseline)", "baseline": None,
    }
    # gpu2's GPU job had no numeric result in either run: only the pair is compared
    assert gpu2["checks"][-1]["message"] == "slower than its baseline: nccl_all_reduce 40.1 < 46.2 (baseline)"
    assert doc["counts"] == {"pass": 14, "warn": 3, "fail": 4, "skip": 20}
    assert doc["verdict"] == "fail"


def test_compare_baseline_within_tolerance():
    doc = compare_baseline(run_document(nccl=42.0), run_document(nccl=46.2), 0.1)
    gpu1 = doc["nodes"][0]
    assert gpu1["checks"][-1]["status"] == "pass"
    assert gpu1["checks"][-1]["message"] == "2 results within 0.1 of the baseline"
    assert doc["nodes"][1]["checks"][-1]["message"] == "1 results within 0.1 of the baseline"


def test_compare_baseline_upgrades_a_passing_node_to_warn():
    nodes = {"gpu1": evaluate({"nvidia_smi": smi(*H100)}, {})}
    baseline = validation_document(RUN, nodes, [judge("nccl_all_reduce", ["gpu1", "gpu2"], 46.2, NCCL_45)], [], {})
    doc = validation_document(RUN, nodes, [judge("nccl_all_reduce", ["gpu1", "gpu2"], 45.5, NCCL_45)], [], {})
    assert doc["verdict"] == "pass"
    doc = compare_baseline(doc, baseline, 0.01)
    assert (doc["nodes"][0]["verdict"], doc["verdict"]) == ("warn", "warn")


def test_compare_baseline_uses_the_lowest_baseline_value():
    nodes = {"gpu1": evaluate({"nvidia_smi": smi(*H100)}, {})}
    baseline = validation_document(RUN, nodes, [judge("nccl_all_reduce", ["gpu1", "gpu2"], 46.2, NCCL_45),
                                                judge("nccl_all_reduce", ["gpu3", "gpu1"], 44.0, NCCL_45)], [], {})
    doc = compare_baseline(validation_document(RUN, nodes, [judge("nccl_all_reduce", ["gpu1", "gpu2"], 40.0, NCCL_45)], [], {}),
                           baseline, 0.1)
    assert doc["nodes"][0]["checks"][P]["baseline"] == 44.0
    assert doc["nodes"][0]["checks"][-1]["message"] == "1 results within 0.1 of the baseline"


def test_compare_baseline_without_baseline_or_with_the_wrong_schema():
    doc = run_document()
    assert compare_baseline(doc, None, 0.1) is doc
    assert compare_baseline(doc, {}, 0.1) is doc
    with pytest.raises(RuleError) as exc:
        compare_baseline(run_document(), {"schema": "gpucluster.core/validation-result/v0", "nodes": []}, 0.1)
    assert str(exc.value) == ("validation baseline: schema is 'gpucluster.core/validation-result/v0', "
                              "expected gpucluster.core/validation-result/v1")


def test_compare_baseline_node_not_in_baseline():
    baseline = validation_document(RUN, {}, [], [], {})
    doc = compare_baseline(run_document(), baseline, 0.1)
    assert [c["check"] for c in doc["nodes"][0]["checks"]][-1] == "slurm_gpu_job"
    assert doc["counts"] == run_document()["counts"]


def test_summary_lines():
    lines = summary_lines(run_document())
    assert lines[0] == "validation 20261124T1012: FAIL (pass 14, warn 1, fail 4, skip 20)"
    assert lines[1] == "gpu1 FAIL - nccl_all_reduce: 40.1 GB/s measured, >= 45 expected"
    assert lines[2] == (
        "gpu2 FAIL [drained] - persistence_mode: persistence mode off on GPU0 (00000000:00:1E.0) and "
        "nvidia-persistenced is not running; pcie_link: PCIe link narrower than the device's maximum on GPU0 "
        "(00000000:00:1E.0): x8 of x16; nccl_all_reduce: 40.1 GB/s measured, >= 45 expected; slurm_gpu_job: srun "
        "exited 1: srun: error: Unable to allocate resources: Requested node configuration is not available")
    assert lines[3:] == [
        "nccl_all_reduce gpu1,gpu2 FAIL - 40.1 GB/s measured, >= 45 expected",
        "ib_write_bw gpu1,gpu2 PASS - 361.2 Gb/s measured, >= 360 expected (no fabric here: judged on the recorded "
        "output /srv/validation/ib_write_bw.txt, not on these nodes)",
        "slurm_gpu_job gpu1 PASS - the job got 1 GPUs and its devices cgroup allowed exactly those",
        "slurm_gpu_job gpu2 FAIL - srun exited 1: srun: error: Unable to allocate resources: Requested node "
        "configuration is not available",
    ]


def test_summary_lines_leave_out_passing_nodes():
    nodes = {"gpu1": evaluate({"nvidia_smi": smi(*H100)}, {}), "gpu2": evaluate({"nvidia_smi": smi(*T4)}, {})}
    lines = summary_lines(validation_document(RUN, nodes, [], [], {}))
    assert not any(line.startswith("gpu1 ") for line in lines)


def test_document_judges_a_slow_pair_by_its_blame():
    """The node at fault fails, its partner passes, round two's pairs count for no node."""
    nccl = {"value": 45.0, "unit": "GB/s", "source": "x"}
    first = [judge("nccl_all_reduce", ["gpu1", "gpu2"], 46.0, nccl), judge("nccl_all_reduce", ["gpu3", "gpu1"], 20.0, nccl)]
    second = [judge("nccl_all_reduce", ["gpu3", "gpu2"], 21.0, nccl)]
    doc = validation_document(RUN, {"gpu1": [], "gpu2": [], "gpu3": []}, fabric_rounds(first, second), [], {})
    by_host = {n["host"]: n for n in doc["nodes"]}
    # gpu1 is in two pairs (odd count): one check, the worst status and its lowest figure, both messages
    assert [(c["status"], c["measured"], c["message"]) for c in by_host["gpu1"]["checks"]] == [
        ("pass", 46.0, "with gpu2: 46 GB/s measured, >= 45 expected;"
                       " with gpu3: slow with gpu3, which was slow again with another node")]
    assert [(c["status"], c["message"]) for c in by_host["gpu2"]["checks"]] == [
        ("pass", "46 GB/s measured, >= 45 expected")]
    assert [(c["status"], c["message"]) for c in by_host["gpu3"]["checks"]] == [
        ("fail", "slow with gpu1 and again with another node")]
    assert [n["verdict"] for n in doc["nodes"]] == ["pass", "pass", "fail"]
    assert doc["verdict"] == "fail"
    assert [(p["hosts"], p["round"]) for p in doc["pairs"]] == [(["gpu1", "gpu2"], 1), (["gpu3", "gpu1"], 1), (["gpu3", "gpu2"], 2)]


def test_document_merges_a_nodes_two_pairs_into_its_worst():
    """Without round two, the odd node's two results of a check: the failing one, with both messages."""
    nccl = {"value": 45.0, "unit": "GB/s", "source": "x"}
    pair_results = [judge("nccl_all_reduce", ["gpu1", "gpu2"], 46.0, nccl),
                    judge("nccl_all_reduce", ["gpu3", "gpu1"], 20.0, nccl),
                    judge("nccl_all_reduce", ["gpu4", "gpu1"], 30.0, nccl)]
    doc = validation_document(RUN, {"gpu1": []}, pair_results, [], {})
    assert doc["nodes"][0]["checks"] == [{
        "check": "nccl_all_reduce", "kind": "active", "status": "fail", "measured": 20.0, "expected": 45.0,
        "unit": "GB/s", "source": "x", "baseline": None,
        "message": "with gpu2: 46 GB/s measured, >= 45 expected; with gpu3: 20 GB/s measured, >= 45 expected;"
                   " with gpu4: 30 GB/s measured, >= 45 expected"}]
