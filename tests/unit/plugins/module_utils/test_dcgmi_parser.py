# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import hashlib
import json
import os
import re

import pytest

from ansible_collections.gpucluster.core.plugins.module_utils._dcgmi import (
    RESULTS,
    DcgmiError,
    parse_dcgmi_diag,
)
from ansible_collections.gpucluster.core.tests.unit.plugins.plugin_utils.failures import message_of
from ansible_collections.gpucluster.core.tests.unit.plugins.shared_fixtures import (
    LOCAL,
    list_fixtures,
    read_fixture,
)

KIND = "dcgmi"
# The provenance file sits beside the captures; it is not one.
FIXTURES = [name for name in list_fixtures(KIND) if not name.endswith(".md")]
L1_FAIL = "blacklist-era-level1-deployment-fail-empty-sections.txt"
L4_PASS = "blacklist-era-level4-all-pass-memtest-pulse.txt"
L2_333 = "dcgm3.3.3-a100x8-level2-pass-empty-stress.txt"
JSON_310 = "dcgm3.1.0-8gpu-json-null-entries.json"

DEPLOYMENT_33 = [
    "Denylist", "NVML Library", "CUDA Main Library", "Permissions and OS Blocks", "Persistence Mode",
    "Environment Variables", "Page Retirement/Row Remap", "Graphics Processes", "Inforom",
]


def parsed(name):
    return parse_dcgmi_diag(read_fixture(KIND, name))


def names(result, category=None):
    return [t["name"] for t in result["tests"] if category is None or t["category"] == category]


def lines_of(name):
    return read_fixture(KIND, name).split("\n")


def test_sources_md_lists_every_capture_with_its_checksum():
    directory = os.path.join(LOCAL, KIND)
    with open(os.path.join(directory, "SOURCES.md"), encoding="utf-8") as handle:
        sources = handle.read()
    listed = dict(
        (m.group(2), m.group(1)) for m in re.finditer(r"^([0-9a-f]{64})  (\S+)$", sources, re.MULTILINE)
    )
    on_disk = sorted(n for n in os.listdir(directory) if n != "SOURCES.md")
    assert sorted(listed) == on_disk
    for name in on_disk:
        with open(os.path.join(directory, name), "rb") as handle:
            assert hashlib.sha256(handle.read()).hexdigest() == listed[name], name
        assert "\n| %s |" % name in sources  # and a row of the provenance table


@pytest.mark.parametrize("name", FIXTURES)
def test_every_fixture(name):
    result = parsed(name)
    assert result["format"] == ("json" if name.endswith(".json") else "table")
    assert result["level"] is None  # neither format prints it
    assert result["tests"] and result["errors"] == []
    for test in result["tests"]:
        assert set(test) == {"category", "name", "result", "gpus", "all_gpus", "messages", "warnings"}
        assert test["category"] and test["name"]
        assert test["result"] in RESULTS
        assert all(isinstance(g, int) and r in RESULTS for g, r in test["gpus"].items())
        assert set(test["warnings"]) <= set(test["messages"])
    failed = ["%s/%s" % (t["category"], t["name"]) for t in result["tests"] if t["result"] == "fail"]
    assert result["failed"] == failed
    assert result["overall"] == ("fail" if failed else "warn" if result["warned"] else "pass")


@pytest.mark.parametrize(
    "name, fmt, version, driver, device_ids, overall, counts",
    [
        (L1_FAIL, "table", None, None, [], "fail", {"Deployment": 9}),
        (L4_PASS, "table", None, None, [], "pass", {"Deployment": 9, "Integration": 1, "Hardware": 3, "Stress": 5}),
        (L2_333, "table", "3.3.3", "535.104.12", ["20b2"] * 8, "pass",
         {"Deployment": 9, "Integration": 1, "Hardware": 1}),
        (JSON_310, "json", "3.1.0", None, [], "pass", {"Deployment": 9, "Custom": 1}),
    ],
)
def test_fixture_summary(name, fmt, version, driver, device_ids, overall, counts):
    result = parsed(name)
    assert (result["format"], result["dcgm_version"], result["driver_version"]) == (fmt, version, driver)
    assert result["gpu_device_ids"] == device_ids
    assert result["overall"] == overall
    seen = {}
    for test in result["tests"]:
        seen[test["category"]] = seen.get(test["category"], 0) + 1
    assert seen == counts


def test_level1_deployment_failures():
    """DCGM 1.x/2.0 era (Blacklist, "Page Retirement"): five Deployment tests fail, no messages,
    and the Hardware/Integration/Stress headers follow with no test under them."""
    result = parsed(L1_FAIL)
    assert names(result) == [
        "Blacklist", "NVML Library", "CUDA Main Library", "Permissions and OS Blocks", "Persistence Mode",
        "Environment Variables", "Page Retirement", "Graphics Processes", "Inforom",
    ]
    assert result["failed"] == [
        "Deployment/Persistence Mode", "Deployment/Environment Variables", "Deployment/Page Retirement",
        "Deployment/Graphics Processes", "Deployment/Inforom",
    ]
    assert result["warned"] == []
    assert result["tests"][0] == {
        "category": "Deployment", "name": "Blacklist", "result": "pass", "gpus": {}, "all_gpus": False,
        "messages": [], "warnings": [],
    }
    assert [t["result"] for t in result["tests"]] == ["pass"] * 4 + ["fail"] * 5


def test_level4_per_gpu_tests_pass_on_all():
    result = parsed(L4_PASS)
    assert names(result, "Hardware") == ["GPU Memory", "Diagnostic", "Pulse Test"]
    assert names(result, "Stress") == ["SM Stress", "Targeted Stress", "Targeted Power", "Memory Bandwidth", "Memtest"]
    per_gpu = [t for t in result["tests"] if t["category"] != "Deployment"]
    assert all(t["all_gpus"] and t["gpus"] == {} and t["result"] == "pass" for t in per_gpu)
    assert not any(t["all_gpus"] for t in result["tests"] if t["category"] == "Deployment")
    assert result["failed"] == [] and result["warned"] == []


def test_level2_metadata_and_empty_stress_section():
    result = parsed(L2_333)
    assert names(result, "Deployment") == DEPLOYMENT_33
    assert names(result, "Stress") == []  # "+-----  Stress  ---+" with nothing under it
    pcie = result["tests"][9]
    assert pcie == {
        "category": "Integration", "name": "PCIe", "result": "pass", "gpus": {}, "all_gpus": True,
        "messages": [], "warnings": [],
    }


def test_json_null_entries_and_gpu_id_forms():
    """DCGM 3.1.0 JSON: 'null' between the Deployment tests, "PASS" upper case, gpu_ids as
    "0,1,...,7" for the Deployment tests and as one integer per result for 'software'."""
    result = parsed(JSON_310)
    assert names(result, "Deployment") == [
        "Denylist", "NVML Library", "CUDA Main Library", "Permissions and OS-related Blocks", "Persistence Mode",
        "Environmental Variables", "Page Retirement/Row Remap", "Graphics Processes", "Inforom",
    ]
    every = {gpu: "pass" for gpu in range(8)}
    assert all(t["gpus"] == every and t["result"] == "pass" for t in result["tests"])
    assert result["tests"][-1] == {
        "category": "Custom", "name": "software", "result": "pass", "gpus": every, "all_gpus": False,
        "messages": [], "warnings": [],
    }
    raw = json.loads(read_fixture(KIND, JSON_310))["DCGM GPU Diagnostic"]["test_categories"][0]["tests"]
    assert raw.count(None) == 8 and len(raw) == 17


@pytest.mark.parametrize("name", [L1_FAIL, L4_PASS, L2_333])
def test_layout_variants_parse_the_same(name):
    """CRLF line ends, a two-space indent (a capture pasted into a Markdown list), spaces after
    the last '|' (a terminal copy) and no final newline change nothing."""
    text = read_fixture(KIND, name)
    expected = parse_dcgmi_diag(text)
    assert parse_dcgmi_diag(text.replace("\n", "\r\n")) == expected
    assert parse_dcgmi_diag("\n".join("  " + line for line in text.split("\n"))) == expected
    assert parse_dcgmi_diag("\n".join(line + "      " for line in text.split("\n"))) == expected
    assert parse_dcgmi_diag(text.rstrip("\n")) == expected


# --- Rows the real captures above do not have, spliced into one of them. -----------------
# The rows are built the way dcgmi builds them (dcgmi/Diag.cpp, DisplayVerboseInfo and
# HelperDisplayGpuResults): the text goes in 45-character pieces, the first under its label
# (Error, Warning, Info) and the rest under an empty name cell; a partial per-GPU result is
# "Pass - GPUs: 0, 2, 3" then "Fail - GPU: 1" under an empty name; DCGM 4.x prints the test's
# result and then one "GPUn: Result" row per GPU. The texts are dcgmi's own message formats.


def row(name, value):
    return "| %-25s | %-46s |" % (name, value)


def message_rows(label, text):
    pieces = [text[i:i + 45] for i in range(0, len(text), 45)]
    return [row(label if i == 0 else "", piece) for i, piece in enumerate(pieces)]


def splice(name, old_row, new_rows):
    lines = lines_of(name)
    at = lines.index(old_row)
    return "\n".join(lines[:at] + new_rows + lines[at + 1:])


PERSISTENCE = (
    'Persistence mode for GPU 0 is currently disabled. The DCGM diagnostic requires peristence mode to be '
    'enabled. Enable persistence mode by running "nvidia-smi -i <gpuId> -pm 1 " as root.'
)
POWER = (
    "GPU 1 Max power of 224.1 did not reach desired power minimum target_power_min_ratio of 224.2 for GPU 1 "
    "Verify that the clock speeds and GPU utilization are high."
)
POWER_INFO = "GPU 0 GPU 0 max power: 299.5 W average power usage: 299.0 W"


def test_wrapped_error_text_is_joined_back():
    text = splice(
        L2_333, row("Persistence Mode", "Pass"),
        [row("Persistence Mode", "Fail")] + message_rows("Error", PERSISTENCE),
    )
    assert "| led. The DCGM diagnostic requires peristence   |" in text  # cut mid-word, space kept
    result = parse_dcgmi_diag(text)
    test = result["tests"][4]
    assert (test["name"], test["result"], test["messages"], test["warnings"]) == (
        "Persistence Mode", "fail", [PERSISTENCE], [PERSISTENCE],
    )
    assert result["failed"] == ["Deployment/Persistence Mode"] and result["overall"] == "fail"
    assert result["tests"][5]["name"] == "Environment Variables"  # the next row is a test again


def test_partial_gpu_results_warning_and_info():
    text = splice(
        L4_PASS, row("Targeted Power", "Pass - All"),
        [row("Targeted Power", "Pass - GPUs: 0, 2, 3"), row("", "Fail - GPU: 1")]
        + message_rows("Warning", POWER) + message_rows("Info", POWER_INFO),
    )
    result = parse_dcgmi_diag(text)
    power = [t for t in result["tests"] if t["name"] == "Targeted Power"][0]
    assert power == {
        "category": "Stress", "name": "Targeted Power", "result": "fail",
        "gpus": {0: "pass", 1: "fail", 2: "pass", 3: "pass"}, "all_gpus": False,
        "messages": [POWER, POWER_INFO], "warnings": [POWER],
    }
    assert result["failed"] == ["Stress/Targeted Power"]


def test_warn_only_is_overall_warn():
    text = splice(L4_PASS, row("Diagnostic", "Pass - All"), [row("Diagnostic", "Warn - All")])
    result = parse_dcgmi_diag(text)
    assert (result["overall"], result["failed"], result["warned"]) == ("warn", [], ["Hardware/Diagnostic"])


def test_dcgm4_style_gpu_rows():
    text = splice(
        L2_333, row("PCIe", "Pass - All"),
        [row("pcie", "Fail")] + message_rows("Warning", POWER) + [row("", "GPU0: Pass"), row("", "GPU1: Fail")],
    )
    result = parse_dcgmi_diag(text)
    pcie = result["tests"][9]
    assert (pcie["name"], pcie["result"], pcie["gpus"], pcie["all_gpus"], pcie["messages"]) == (
        "pcie", "fail", {0: "pass", 1: "fail"}, False, [POWER],
    )


def test_error_row_before_any_test_fails_the_run():
    text = splice(
        L2_333, row("Denylist", "Pass"),
        message_rows("Error", "GPU 3 has uncorrectable memory errors and row remappings are pending")
        + [row("Denylist", "Pass")],
    )
    result = parse_dcgmi_diag(text)
    assert result["errors"] == ["GPU 3 has uncorrectable memory errors and row remappings are pending"]
    assert (result["overall"], result["failed"]) == ("fail", [])


# --- Failures -------------------------------------------------------------------------------


L1 = lines_of(L1_FAIL)
L2 = lines_of(L2_333)
JSON_TEXT = read_fixture(KIND, JSON_310)
CONNECTION = (
    "Error: unable to establish a connection to the specified host: localhost\n"
    "Error: Unable to connect to host engine. Host engine connection invalid/disconnected.\n"
)


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "dcgmi diag output is empty"),
        (" \n\n\t\n", "dcgmi diag output is empty"),
        (CONNECTION,
         "dcgmi reported an error instead of results: Error: unable to establish a connection to the specified "
         "host: localhost / Error: Unable to connect to host engine. Host engine connection invalid/disconnected."),
        ("Error: Unable to run diagnostic on unsupported GPU 0.\n" + JSON_TEXT,
         "dcgmi reported an error instead of results: Error: Unable to run diagnostic on unsupported GPU 0."),
        ("Successfully ran diagnostic for group.\nError: Unable to complete diagnostic for group 0. Return: (-30) "
         ": DCGM GPU Diagnostic returned an error\n",
         "dcgmi reported an error instead of results: Error: Unable to complete diagnostic for group 0. "
         "Return: (-30) : DCGM GPU Diagnostic returned an error"),
        ("dcgmi: command not found\n",
         "dcgmi diag output not understood at line 1: expected the result table (its '+----+----+' top border) "
         "or a JSON document: 'dcgmi: command not found'"),
        ("Successfully ran diagnostic for group.\n",
         "dcgmi diag output is incomplete: no result table after line 1"),
        ("\n".join(L2[:2]), "dcgmi diag output is incomplete: the result table ends at line 2"),
        ("\n".join(L2[:2] + ["| Test                      | Result                                         |"] + L2[3:]),
         "dcgmi diag output not understood at line 3: expected the header row '| Diagnostic | Result |': "
         "'| Test                      | Result                                         |'"),
        ("\n".join(L2[:3] + L2[4:]),
         "dcgmi diag output not understood at line 4: expected the '+====+====+' rule under the header: "
         "'|-----  Metadata  ----------+------------------------------------------------|'"),
        ("\n".join(L2[:-2]),
         "dcgmi diag output is incomplete: the result table has no closing border (it ends at line 23)"),
        ("\n".join(L2) + "\n" + "\n".join(L2[:4]),
         "dcgmi diag output not understood at line 26: unexpected text after the result table: "
         "'Successfully ran diagnostic for group.'"),
        (splice(L2_333, row("Persistence Mode", "Pass"), [row("Persistence Mode", "")]),
         "dcgmi diag output not understood at line 14: test 'Persistence Mode' in section Deployment has no "
         "result: '| Persistence Mode          |                                                |'"),
        (splice(L2_333, row("PCIe", "Pass - All"), [row("PCIe", "Passed")]),
         "dcgmi diag output not understood at line 20: test 'PCIe' in section Integration has an unknown result "
         "'Passed': '| PCIe                      | Passed                                         |'"),
        (splice(L2_333, row("PCIe", "Pass - All"), [row("PCIe", "Pass - GPUs: all")]),
         "dcgmi diag output not understood at line 20: test 'PCIe' in section Integration has an unknown result "
         "'Pass - GPUs: all': '| PCIe                      | Pass - GPUs: all                               |'"),
        ("\n".join(L1[:4] + L1[5:]),
         "dcgmi diag output not understood at line 5: row before any section header: "
         "'| Blacklist                 | Pass                                           |'"),
        (splice(L1_FAIL, L1[5], [L1[5], row("", "Pass - All")]),
         "dcgmi diag output not understood at line 7: continuation row with no message or per-GPU result to continue: "
         "'|                           | Pass - All                                     |'"),
        (splice(L1_FAIL, L1[6], ["| Blacklist | Pass |"]),
         "dcgmi diag output not understood at line 7: expected a '| name | result |' row, a section header or "
         "the closing border: '| Blacklist | Pass |'"),
        (splice(L1_FAIL, L1[6], [""]),
         "dcgmi diag output not understood at line 7: expected a '| name | result |' row, a section header or "
         "the closing border: ''"),
        ("\n".join(L1[:5] + L1[14:]), "dcgmi diag result table lists no tests"),
        (JSON_TEXT[:-2],
         "dcgmi diag JSON output is malformed at line 157 column 1: Expecting ',' delimiter"),
        (JSON_TEXT + "{}\n", "dcgmi diag JSON output is malformed at line 158 column 1: Extra data"),
        ('{"body": {"GPU 0": {}}, "header": ["NVLINK Error Counts"]}',
         "dcgmi diag JSON output has no 'DCGM GPU Diagnostic' (DCGM 2.x, 3.x) or 'DCGM Diagnostic' (DCGM 4.x) "
         "object; found ['body', 'header']"),
        ('{"DCGM GPU Diagnostic": {"runtime_error": "Cannot load plugins. Unable to change to the plugin dir", '
         '"version": "3.1.0"}}',
         "dcgmi diag reported an error instead of results: Cannot load plugins. Unable to change to the plugin dir"),
        ('{"DCGM Diagnostic": {}, "metadata": {"version": "4.2.3"}}',
         "dcgmi diag JSON output has no test_categories list under 'DCGM Diagnostic'"),
        ('{"DCGM Diagnostic": {"test_categories": []}}', "dcgmi diag JSON output lists no tests"),
        (JSON_TEXT.replace('"status" : "PASS"', '"state" : "PASS"', 1),
         "dcgmi diag JSON output not understood: test 'Denylist' in Deployment has a result with status None"),
        (JSON_TEXT.replace('"status" : "PASS"', '"status" : "DONE"', 1),
         "dcgmi diag JSON output not understood: test 'Denylist' in Deployment has a result with status 'DONE'"),
        (JSON_TEXT.replace('"gpu_ids" : 7', '"gpu_ids" : "GPU7"'),
         "dcgmi diag JSON output not understood: GPU ids 'GPU7'"),
        (JSON_TEXT.replace('"name" : "Inforom",\n\t\t\t\t\t\t"results" :', '"name" : "Inforom",\n\t\t\t\t\t\t"result" :'),
         "dcgmi diag JSON output not understood: test 'Inforom' in Deployment has no result"),
    ],
)
def test_failures(text, message):
    assert message_of(DcgmiError, parse_dcgmi_diag, text) == message


def test_dcgm4_json_shape():
    """DCGM 4.x document shape (keys as in NVIDIA/DCGM testing/python3/dcgm_diag_schema.json):
    results by entity, test_summary, entity_groups and metadata. Built here: no redistributable
    capture of it was found."""
    document = {
        "DCGM Diagnostic": {"test_categories": [{"category": "Deployment", "tests": [{
            "name": "software",
            "results": [
                {"entity_group": "GPU", "entity_group_id": 1, "entity_id": 0, "status": "Fail",
                 "warnings": [{"error_category": 8, "error_id": 29, "error_severity": 5, "warning": PERSISTENCE}]},
                {"entity_group": "GPU", "entity_group_id": 1, "entity_id": 1, "status": "Pass"},
            ],
            "test_summary": {"info": ["summary info"], "status": "Fail"},
        }]}]},
        "entity_groups": [{"entities": [{"device_id": "2330", "entity_id": 0}, {"device_id": "2330", "entity_id": 1}],
                           "entity_group": "GPU", "entity_group_id": 1}],
        "metadata": {"Driver Version Detected": "580.82.09", "version": "4.2.3"},
    }
    result = parse_dcgmi_diag(json.dumps(document, indent=4))
    assert (result["format"], result["dcgm_version"], result["driver_version"]) == ("json", "4.2.3", "580.82.09")
    assert result["gpu_device_ids"] == ["2330", "2330"]
    assert result["tests"] == [{
        "category": "Deployment", "name": "software", "result": "fail", "gpus": {0: "fail", 1: "pass"},
        "all_gpus": False, "messages": [PERSISTENCE, "summary info"], "warnings": [PERSISTENCE],
    }]
    assert (result["overall"], result["failed"]) == ("fail", ["Deployment/software"])
