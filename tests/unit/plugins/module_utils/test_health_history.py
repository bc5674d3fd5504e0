# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""_health's history across runs of the node's health check program (issue 32, item 4): the
settings, the state file's text, each run's verdicts, the confirmation of transient readings and
flapping."""

from __future__ import annotations

import json

import pytest

from ansible_collections.gpucluster.core.plugins.module_utils._health import (
    CHECKS,
    CONFIRM_RUNS,
    DEFAULT_SEVERITY,
    FLAPPING_THRESHOLD,
    FLAPPING_WINDOW,
    STATE_FILE,
    TRANSIENT_CHECKS,
    HealthError,
    advance_history,
    fail_episodes,
    fail_streak,
    flapping_drain,
    flapping_reason,
    history_decision,
    history_from_text,
    history_settings,
    history_text,
    new_history,
    reason_checks,
    run_verdicts,
    unconfirmed_action,
)

PREFIX = "gpucluster-validation:"


def results(**statuses):
    """Check results: name=status, a status ending in "!" is a tooling fault (warn!)."""
    return [dict({"check": name, "status": status.rstrip("!")}, **({"tooling": True} if status.endswith("!") else {}))
            for name, status in statuses.items()]


def history(**checks):
    return {"version": 1, "node": "gpu01", "checks": checks, "flapping": []}


def test_defaults():
    assert (CONFIRM_RUNS, FLAPPING_WINDOW, FLAPPING_THRESHOLD, STATE_FILE) == (
        2, 10, 3, "/var/lib/gpucluster/healthcheck-state.json")
    assert TRANSIENT_CHECKS == ("pcie_link", "clock_events", "hca_ports")
    assert set(TRANSIENT_CHECKS) <= set(CHECKS)
    # every hard fault drains at once: the checks not confirmed are the rest of DEFAULT_SEVERITY
    assert [c for c in DEFAULT_SEVERITY if c not in TRANSIENT_CHECKS] == [
        "gpu_count", "gpu_model", "driver_version", "cuda_version", "persistence_mode", "ecc_mode", "ecc_errors",
        "retired_pages", "row_remap", "xid", "mounts", "services", "time_sync", "disk_space"]


@pytest.mark.parametrize("config, want", [
    ({}, (2, 10, 3, STATE_FILE)),
    ({"confirm_runs": None, "flapping": None, "state_file": ""}, (2, 10, 3, STATE_FILE)),
    ({"confirm_runs": 1, "flapping": {"window": 3, "threshold": 2}, "state_file": "/run/hc.json"}, (1, 3, 2, "/run/hc.json")),
    # a window too short for the default threshold: the most it can hold
    ({"flapping": {"window": 4}}, (2, 4, 2, STATE_FILE)),
    ({"confirm_runs": 10, "flapping": {"window": 100, "threshold": 50}}, (10, 100, 50, STATE_FILE)),
])
def test_history_settings(config, want):
    got = history_settings(config)
    assert (got["confirm_runs"], got["window"], got["threshold"], got["state_file"]) == want


@pytest.mark.parametrize("config, message", [
    ({"confirm_runs": 0}, "confirm_runs: must be an integer within 1-10 (got 0)"),
    ({"confirm_runs": "2"}, "confirm_runs: must be an integer within 1-10 (got '2')"),
    ({"confirm_runs": True}, "confirm_runs: must be an integer within 1-10 (got True)"),
    ({"flapping": [10, 3]}, "flapping: must be a dict with window and threshold (got [10, 3])"),
    ({"flapping": {"window": 2}}, "flapping.window: must be an integer within 3-100 (got 2)"),
    ({"flapping": {"window": 101}}, "flapping.window: must be an integer within 3-100 (got 101)"),
    # three spells of failure need five runs at least
    ({"flapping": {"window": 4, "threshold": 3}}, "flapping.threshold: must be an integer within 2-2 (got 3)"),
    ({"flapping": {"threshold": 1}}, "flapping.threshold: must be an integer within 2-5 (got 1)"),
    ({"state_file": "state.json"}, "state_file: must be an absolute path (got 'state.json')"),
])
def test_history_settings_refused(config, message):
    with pytest.raises(HealthError) as err:
        history_settings(config)
    assert str(err.value) == message


def test_history_text_round_trip():
    kept = dict(history(pcie_link="PF-F", xid="PPPP"), flapping=["pcie_link"])
    text = history_text(kept)
    assert text == ('{"checks": {"pcie_link": "PF-F", "xid": "PPPP"}, "flapping": ["pcie_link"], "node": "gpu01", '
                    '"version": 1}\n')
    assert history_from_text(text, "gpu01") == (kept, None)


@pytest.mark.parametrize("text, note", [
    (None, None),  # no file yet: a first run, nothing to say
    ("", "not JSON (Expecting value: line 1 column 1 (char 0))"),
    ('{"version": 1, "node": "gpu01", "checks": {}', "not JSON (Expecting ',' delimiter: line 1 column 45 (char 44))"),
    ("[]", "not a health check history of version 1"),
    ('{"version": 2, "node": "gpu01", "checks": {}, "flapping": []}', "not a health check history of version 1"),
    ('{"version": 1, "node": "gpu01", "checks": [], "flapping": []}', "not a health check history of version 1"),
    ('{"version": 1, "node": "gpu01", "checks": {"xid": "PPx"}, "flapping": []}', "not a health check history of version 1"),
    ('{"version": 1, "node": "gpu01", "checks": {"xid": "%s"}, "flapping": []}' % ("P" * 101),
     "not a health check history of version 1"),
    ('{"version": 1, "node": "gpu01", "checks": {"X Y": "P"}, "flapping": []}', "not a health check history of version 1"),
    ('{"version": 1, "node": "gpu01", "checks": {}, "flapping": "xid"}', "not a health check history of version 1"),
    ('{"version": 1, "node": "gpu01", "checks": {}}', "not a health check history of version 1"),
    ('{"version": 1, "node": "gpu02", "checks": {}, "flapping": []}', "the history of node 'gpu02', not 'gpu01'"),
])
def test_history_from_unusable_text_starts_afresh(text, note):
    assert history_from_text(text, "gpu01") == (new_history("gpu01"), note)


def test_run_verdicts():
    got = run_verdicts(results(gpu_count="pass", ecc_mode="warn", pcie_link="fail", hca_ports="skip", xid="warn!",
                               services="fail!"))
    # a real fault found beside a tooling fault (a service down) is a failure
    assert got == {"gpu_count": "P", "ecc_mode": "P", "pcie_link": "F", "hca_ports": "-", "xid": "-", "services": "F"}


@pytest.mark.parametrize("before, run, flapping_now, keep, want_checks, want_flapping", [
    # the first run
    ({}, results(pcie_link="fail", xid="pass"), [], 10, {"pcie_link": "F", "xid": "P"}, []),
    # appended, the oldest dropped past keep
    ({"pcie_link": "PPF"}, results(pcie_link="fail"), [], 3, {"pcie_link": "PFF"}, []),
    # a check this run does not report is dropped, a new one starts
    ({"gone": "PPP"}, results(time_sync="warn!"), [], 10, {"time_sync": "-"}, []),
    # the node is drained for flapping now: remembered
    ({"pcie_link": "FPFPF"}, results(pcie_link="pass"), ["pcie_link"], 10, {"pcie_link": "FPFPFP"}, ["pcie_link"]),
])
def test_advance_history(before, run, flapping_now, keep, want_checks, want_flapping):
    got = advance_history(history(**before), run, flapping_now, keep)
    assert got == {"version": 1, "node": "gpu01", "checks": want_checks, "flapping": want_flapping}


@pytest.mark.parametrize("flapping_now, want_checks, want_flapping", [
    # still drained for flapping
    (["pcie_link"], {"pcie_link": "FPFPFP"}, ["pcie_link"]),
    # the scheduler could not be asked: nothing known, nothing forgotten
    (None, {"pcie_link": "FPFPFP"}, ["pcie_link"]),
    # lifted (an admin, the quarantine loop): the node starts afresh with this run
    ([], {"pcie_link": "P"}, []),
])
def test_advance_history_after_a_flapping_drain(flapping_now, want_checks, want_flapping):
    before = dict(history(pcie_link="FPFPF"), flapping=["pcie_link"])
    got = advance_history(before, results(pcie_link="pass"), flapping_now, 10)
    assert (got["checks"], got["flapping"]) == (want_checks, want_flapping)


@pytest.mark.parametrize("verdicts, streak, episodes", [
    ("", 0, 0),
    ("F", 1, 1),
    ("PPFF", 2, 1),
    ("FF-F", 3, 1),      # a run that could not judge neither confirms nor clears
    ("FFP", 0, 1),
    ("FPFPF", 1, 3),
    ("F-PF-P-F", 1, 3),
    ("--", 0, 0),
])
def test_fail_streak_and_episodes(verdicts, streak, episodes):
    assert (fail_streak(verdicts), fail_episodes(verdicts)) == (streak, episodes)


@pytest.mark.parametrize("checks, run, confirm_runs, confirmed, unconfirmed, flapping", [
    # a hard fault drains at once
    ({"gpu_count": "F"}, results(gpu_count="fail"), 2, ["gpu_count"], [], []),
    # a transient one the first time: unconfirmed, the second: confirmed
    ({"pcie_link": "PF"}, results(pcie_link="fail"), 2, [], [["pcie_link", 1]], []),
    ({"pcie_link": "PFF"}, results(pcie_link="fail"), 2, ["pcie_link"], [], []),
    ({"clock_events": "F-F"}, results(clock_events="fail"), 2, ["clock_events"], [], []),
    ({"hca_ports": "FF"}, results(hca_ports="fail"), 3, [], [["hca_ports", 2]], []),
    ({"hca_ports": "F"}, results(hca_ports="fail"), 1, ["hca_ports"], [], []),
    # both: the hard fault drains, the transient one waits
    ({"gpu_count": "F", "pcie_link": "F"}, results(gpu_count="fail", pcie_link="fail"), 2, ["gpu_count"],
     [["pcie_link", 1]], []),
    # a check the history does not hold yet (an older state file): this run counts
    ({}, results(pcie_link="fail", xid="fail"), 2, ["xid"], [["pcie_link", 1]], []),
    # three spells of failure in the window: flapping, whether confirmed or not
    ({"pcie_link": "FPFPF"}, results(pcie_link="fail"), 2, [], [["pcie_link", 1]], ["pcie_link"]),
    ({"xid": "FPFPF"}, results(xid="fail"), 2, ["xid"], [], ["xid"]),
    # the first spell fell out of the window of 10
    ({"xid": "FPPPPPPPFPF"}, results(xid="fail"), 2, ["xid"], [], []),
    # flapping is judged when the check fails, not on a passing run
    ({"xid": "FPFPFP"}, results(xid="pass"), 2, [], [], []),
    # warn and tooling are not failures
    ({"xid": "F", "pcie_link": "F"}, results(xid="warn!", pcie_link="warn"), 2, [], [], []),
])
def test_history_decision(checks, run, confirm_runs, confirmed, unconfirmed, flapping):
    got = history_decision(history(**checks), run, confirm_runs, 10, 3)
    assert got == {"confirmed": confirmed, "unconfirmed": unconfirmed, "flapping": flapping, "confirm_runs": confirm_runs}


def test_history_decision_over_advanced_runs():
    """The program's sequence, run by run: a link that reads low, then not, then low again..."""
    kept = new_history("gpu01")
    actions = []
    for status in ("fail", "pass", "fail", "pass", "fail"):
        run = results(pcie_link=status)
        kept = advance_history(kept, run, [], 10)
        decision = history_decision(kept, run, 2, 10, 3)
        actions.append((decision["confirmed"], decision["flapping"]))
    assert kept["checks"] == {"pcie_link": "FPFPF"}
    assert actions == [([], []), ([], []), ([], []), ([], []), ([], ["pcie_link"])]


@pytest.mark.parametrize("unconfirmed, confirm_runs, want", [
    ([["pcie_link", 1]], 2, "unconfirmed (pcie_link 1/2)"),
    ([["pcie_link", 2], ["hca_ports", 1]], 3, "unconfirmed (pcie_link 2/3, hca_ports 1/3)"),
])
def test_unconfirmed_action(unconfirmed, confirm_runs, want):
    assert unconfirmed_action({"unconfirmed": unconfirmed, "confirm_runs": confirm_runs}) == want


@pytest.mark.parametrize("checks, reason, drain", [
    (["pcie_link"], "gpucluster-validation: flapping pcie_link", ["pcie_link"]),
    (["pcie_link", "xid"], "gpucluster-validation: flapping pcie_link,xid", ["pcie_link", "xid"]),
])
def test_flapping_reason(checks, reason, drain):
    assert flapping_reason(PREFIX, checks) == reason
    assert flapping_drain(reason + " [root@2026-11-27T14:03:56]", PREFIX) == drain
    # the quarantine loop and not_judged read the same checks from it
    assert reason_checks(reason, PREFIX) == drain


@pytest.mark.parametrize("reason", [
    "gpucluster-validation: pcie_link",
    "gpucluster-validation: flappingish pcie_link",
    "admin: flapping pcie_link",
    "rma: pcie_link",
    "",
])
def test_flapping_drain_of_other_reasons(reason):
    assert flapping_drain(reason, PREFIX) == []


def test_history_is_bounded():
    kept = new_history("gpu01")
    run = [{"check": name, "status": "fail"} for name in CHECKS]
    for dummy in range(50):
        kept = advance_history(kept, run, [], 10)
    assert set(len(v) for v in kept["checks"].values()) == {10}
    assert len(history_text(kept)) < 1024
    assert json.loads(history_text(kept)) == kept
