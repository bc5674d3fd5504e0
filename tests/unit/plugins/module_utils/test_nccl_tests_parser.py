# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import pytest

from ansible_collections.gpucluster.core.plugins.module_utils._nccl_tests import (
    NcclTestsError,
    parse_nccl_tests,
)
from ansible_collections.gpucluster.core.tests.unit.plugins.shared_fixtures import (
    list_fixtures,
    read_fixture,
)

KIND = "nccl-tests"
ALLTOALL = "superbench-a100x8-alltoall-no-root-blank-redop.log"
BROADCAST = "superbench-a100x8-broadcast-root-no-redop-nccl-info.log"
AZUREML = "azureml-k80x4-allreduce-error-column-nccl-info.txt"
EKS = "eks-efa-t4x2-allreduce-mpirun-tag-output-nccl-info.txt"
SRUN = "awsome-p5x2-allreduce-srun-label-table-only.txt"
# Our own, on a lent H100 (nccl-tests 2.19.0, NCCL 2.28.9, one GPU; SOURCES.md).
OWN = "own-h100x1-allreduce-nccl-tests-2.19.0.txt"
OWN_INFO = "own-h100x1-allreduce-nccl-tests-2.19.0-nccl-info.txt"
OWN_DIR = "h100-80gb-hbm3-driver580-b"
NEW_COLUMNS = ["size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong",
               "time", "algbw", "busbw", "#wrong"]


def parsed(name):
    return parse_nccl_tests(read_fixture(KIND, name))


@pytest.mark.parametrize("name", list_fixtures(KIND))
def test_every_fixture(name):
    result = parsed(name)
    assert result["rows"]
    assert result["units"] == {"size": "B", "count": "elements", "time": "us", "bw": "GB/s"}
    assert result["columns"][:3] == ["size", "count", "type"]
    sizes = [row["size_bytes"] for row in result["rows"]]
    assert sizes == sorted(sizes)
    for row in result["rows"]:
        assert row["type"] == "float"
        for half in ("out_of_place", "in_place"):
            assert row[half]["time_us"] > 0
            assert 0 <= row[half]["busbw_gbs"] < 1000
    peak = max(row["out_of_place"]["busbw_gbs"] for row in result["rows"])
    assert result["peak_busbw_gbs"] == peak
    assert result["failures"] == []
    assert result["nranks"] == (len(result["devices"]) or None)


@pytest.mark.parametrize(
    "name, rows, nranks, peak, peak_size, avg, out_of_bounds, wrong_total, complete, columns",
    [
        (ALLTOALL, 34, 8, 224.31, 8589934592, 58.6481, 0, None, True,
         ["size", "count", "type", "redop", "time", "algbw", "busbw", "error", "time", "algbw", "busbw", "error"]),
        (BROADCAST, 34, 8, 232.81, 8589934592, 64.8653, 0, None, True,
         ["size", "count", "type", "root", "time", "algbw", "busbw", "error", "time", "algbw", "busbw", "error"]),
        (AZUREML, 7, 4, 2.56, 2147483648, 2.54225, 0, None, True,
         ["size", "count", "type", "redop", "time", "algbw", "busbw", "error", "time", "algbw", "busbw", "error"]),
        (EKS, 31, 2, 3.15, 268435456, 1.15327, 0, 0, True, NEW_COLUMNS),
        (SRUN, 32, None, 487.09, 17179869184, None, None, 0, False, NEW_COLUMNS),
        # one rank: every bus bandwidth is 0, the first size holds the "peak"
        (OWN, 28, 1, 0.0, 8, 0.0, 0, 0, True, NEW_COLUMNS),
        (OWN_INFO, 3, 1, 0.0, 1048576, 0.0, 0, 0, True, NEW_COLUMNS),
    ],
)
def test_fixture_values(name, rows, nranks, peak, peak_size, avg, out_of_bounds, wrong_total, complete, columns):
    result = parsed(name)
    assert len(result["rows"]) == rows
    assert result["nranks"] == nranks
    assert result["peak_busbw_gbs"] == peak
    assert result["peak_size_bytes"] == peak_size
    assert result["avg_busbw_gbs"] == avg
    assert result["out_of_bounds"] == out_of_bounds
    assert result["wrong_total"] == wrong_total
    assert result["complete"] is complete
    assert result["columns"] == columns


def test_old_alltoall_blank_redop_and_na_check():
    result = parsed(ALLTOALL)
    assert result["test"] is None and result["version"] is None and result["nccl_version"] is None
    assert result["settings"] == {
        "nthreads": 1, "ngpus": 8, "min_bytes": 1, "max_bytes": 8589934592, "step": "2(factor)",
        "warmup_iters": 5, "iters": 20, "validation": 0,
    }
    assert result["devices"][7] == {"rank": 7, "host": "localhost", "device": 7, "bus_id": "0x00", "name": "A100-SXM4-40GB"}
    assert [row["size_bytes"] for row in result["rows"][:6]] == [0, 0, 0, 0, 0, 32]  # repeated 0-byte rows
    assert all(row["redop"] is None and row["root"] is None for row in result["rows"])
    assert result["rows"][-1] == {
        "size_bytes": 8589934592, "count": 268435456, "type": "float", "redop": None, "root": None,
        "out_of_place": {"time_us": 33508.0, "algbw_gbs": 256.36, "busbw_gbs": 224.31, "wrong": None, "error": None},
        "in_place": {"time_us": 33234.0, "algbw_gbs": 258.47, "busbw_gbs": 226.16, "wrong": None, "error": None},
    }


def test_old_broadcast_root_without_redop():
    rows = parsed(BROADCAST)["rows"]
    assert {(row["redop"], row["root"]) for row in rows} == {(None, 0)}
    assert rows[2]["size_bytes"] == 4 and rows[2]["count"] == 1  # the NCCL INFO line before the rows is skipped


def test_old_error_column_is_not_a_count():
    result = parsed(AZUREML)
    first = result["rows"][0]
    assert first["redop"] == "sum" and first["root"] is None
    assert first["out_of_place"] == {"time_us": 19902.0, "algbw_gbs": 1.69, "busbw_gbs": 2.53, "wrong": None, "error": 2e-07}
    assert result["wrong_total"] is None
    assert result["settings"]["validation"] == 1
    assert result["devices"][0]["host"] == "2e3f9af7241040529530e810ce60fe5d000002"


def test_mpirun_tag_output_with_nccl_info():
    result = parsed(EKS)
    assert result["nccl_version"] == "2.12.7"  # from the NCCL INFO "NCCL version 2.12.7+cuda11.4" line
    assert [(d["rank"], d["host"], d["bus_id"], d["name"]) for d in result["devices"]] == [
        (0, "test-nccl-efa-worker-0", "0x35", "Tesla T4"), (1, "test-nccl-efa-worker-1", "0xf5", "Tesla T4"),
    ]
    assert result["settings"]["iters"] == 100 and result["settings"]["agg_iters"] == 1
    assert result["rows"][-1]["in_place"] == {
        "time_us": 344454.0, "algbw_gbs": 3.12, "busbw_gbs": 3.12, "wrong": 0, "error": None,
    }


def test_srun_labels_and_no_summary():
    result = parsed(SRUN)
    assert result["devices"] == [] and result["settings"] == {}
    assert result["rows"][0]["redop"] == "sum" and result["rows"][0]["root"] == -1


def test_crlf_reads_the_same():
    text = read_fixture(KIND, EKS)
    assert parse_nccl_tests(text.replace("\n", "\r\n")) == parse_nccl_tests(text)


def test_version_lines():
    """Newer nccl-tests print the versions and the test name first (2.17+); prepended to a fixture here."""
    text = (
        "# nccl-tests version 2.17.9 nccl-headers=22902 nccl-library=22902\n"
        "# Collective test starting: all_reduce_perf\n" + read_fixture(KIND, EKS)
    )
    result = parse_nccl_tests(text)
    assert (result["version"], result["nccl_version"], result["test"]) == ("2.17.9", "2.29.2", "all_reduce_perf")


def test_own_h100_capture_of_nccl_tests_2_19():
    """The version, test and device lines of nccl-tests 2.17+ as printed (our lent H100), and a %g
    bandwidth (the in-place half of one rank copies nothing: 6e+06 GB/s)."""
    result = parsed(OWN)
    assert (result["version"], result["nccl_version"], result["test"]) == ("2.19.0", "2.28.9", "all_reduce_perf")
    assert result["devices"] == [{"rank": 0, "host": "vm", "device": 0, "bus_id": "0000:00:06",
                                  "name": "NVIDIA H100 80GB HBM3"}]
    assert result["settings"] == {"nthreads": 1, "ngpus": 1, "min_bytes": 8, "max_bytes": 1073741824,
                                  "step": "2(factor)", "warmup_iters": 1, "iters": 20, "agg_iters": 1,
                                  "validation": 1, "graph": 0, "unalign": 0}
    assert result["rows"][-1] == {
        "size_bytes": 1073741824, "count": 268435456, "type": "float", "redop": "sum", "root": -1,
        "out_of_place": {"time_us": 712.73, "algbw_gbs": 1506.5, "busbw_gbs": 0.0, "wrong": 0, "error": None},
        "in_place": {"time_us": 0.19, "algbw_gbs": 6000000.0, "busbw_gbs": 0.0, "wrong": 0, "error": None}}
    # NCCL_DEBUG=INFO: NCCL's lines before and after the table are skipped, the table reads the same
    info = parsed(OWN_INFO)
    assert [row["size_bytes"] for row in info["rows"]] == [1048576, 4194304, 16777216]
    assert info["rows"][2]["out_of_place"]["algbw_gbs"] == 1786.2


def test_own_h100_capture_of_a_failed_start():
    """-g 2 on the one GPU: nccl-tests stops after the device list; the reason is on its stderr only."""
    with pytest.raises(NcclTestsError) as exc:
        parse_nccl_tests(read_fixture(OWN_DIR, "nccl-all-reduce-one-more-gpu.txt"))
    assert str(exc.value) == ("nccl-tests output has no results header ('#  size  count  type ...'); it reports: "
                              ".. vm pid 918: Test failure common.cu:1232")
    assert read_fixture(OWN_DIR, "nccl-all-reduce-one-more-gpu.txt.stderr") == (
        "Invalid number of GPUs: 2 requested but only 1 were found.\n"
        "Please check the number of processes and GPUs per process.\n")


TIMES = ["time", "algbw", "busbw", "#wrong"] * 2
TYPES = ["bfloat16", "double", "f8e4m3", "f8e5m2", "float", "half", "int32", "int64", "int8", "uint32", "uint64", "uint8"]


@pytest.mark.parametrize("option, rows, tail, first_time, types, ops, wrong_total", [
    # -C 1: the time columns are cputime; -S 1: a timestamp column ("%Y-%m-%d %H:%M:%S") after the halves
    ("-C1", 6, ["cputime", "algbw", "busbw", "#wrong"] * 2, 4.49, ["float"], ["sum"], 0),
    ("-S1", 6, TIMES + ["timestamp"], 5.24, ["float"], ["sum"], 0),
    # -M 1: a "GPU memory usage" line after the summary; -N 2: the sizes run twice in one table
    ("-M1", 6, TIMES, 6.57, ["float"], ["sum"], 0),
    ("-N2", 12, TIMES, 7.06, ["float"], ["sum"], 0),
    # every data type (f8e4m3 and f8e5m2 on Hopper) and every reduction, one table each
    ("-dall", 72, TIMES, 6.3, TYPES, ["sum"], 0),
    ("-oall", 36, TIMES, 4.69, ["float"], ["avg", "max", "min", "mulsum", "prod", "sum"], 0),
    # -c 0: no check, #wrong is N/A (no count at all, not 0)
    ("-c0", 6, TIMES, 4.9, ["float"], ["sum"], None),
    ("-a3", 6, TIMES, 5.29, ["float"], ["sum"], 0),
    ("-G2", 6, TIMES, 1.77, ["float"], ["sum"], 0),
    ("-R1", 6, TIMES, 5.87, ["float"], ["sum"], 0),
    ("-z0-y1", 6, TIMES, 6.77, ["float"], ["sum"], 0),
    ("-u1", 6, TIMES, 5.23, ["float"], ["sum"], 0),
], ids=lambda value: value if isinstance(value, str) else None)
def test_own_h100_capture_of_every_printing_option(option, rows, tail, first_time, types, ops, wrong_total):
    """all_reduce_perf -b 8 -e 1M -f 8 -g 1 with each option (our lent H100, nccl-tests 2.19.0; the exact
    command lines are in nccl-options-commands.log): each parses, with what the option changes."""
    result = parse_nccl_tests(read_fixture(OWN_DIR, "nccl-all-reduce-option%s.txt" % option))
    assert (len(result["rows"]), result["columns"][5:], result["rows"][0]["out_of_place"]["time_us"]) == (
        rows, tail, first_time)
    assert sorted({row["type"] for row in result["rows"]}) == types
    assert sorted({row["redop"] for row in result["rows"]}) == ops
    assert (result["wrong_total"], result["out_of_bounds"], result["avg_busbw_gbs"], result["complete"]) == (
        wrong_total, 0, 0.0, True)
    assert result["failures"] == [] and result["version"] == "2.19.0"


def test_own_h100_capture_options_in_the_settings_line_and_the_timestamps():
    assert parsed_own("-G2")["settings"]["graph"] == 2
    assert parsed_own("-u1")["settings"]["unalign"] == 1
    assert [row["timestamp"] for row in parsed_own("-S1")["rows"]][:2] == ["2026-11-26 16:26:36"] * 2
    assert [row["size_bytes"] for row in parsed_own("-N2")["rows"]] == [8, 64, 512, 4096, 32768, 262144] * 2


def test_own_h100_build_by_the_validation_role():
    """all_reduce_perf as the validation role built it on the lent H100 (nccl_tests.yml, twice: the second
    run changed nothing), run there against the machine's NCCL 2.28.3."""
    result = parse_nccl_tests(read_fixture(OWN_DIR, "nccl-build-all-reduce.txt"))
    assert (result["version"], result["nccl_version"], len(result["rows"]), result["complete"]) == (
        "2.19.0", "2.28.3", 8, True)
    assert "changed=4 " in read_fixture(OWN_DIR, "nccl-build-run1.txt")
    assert "changed=0 " in read_fixture(OWN_DIR, "nccl-build-run2.txt")
    assert "libnccl.so.2 => /lib/x86_64-linux-gnu/libnccl.so.2" in read_fixture(OWN_DIR, "nccl-build-ldd.txt")


def parsed_own(option):
    return parse_nccl_tests(read_fixture(OWN_DIR, "nccl-all-reduce-option%s.txt" % option))


def _replace_once(text, old, new):
    assert text.count(old) == 1, old
    return text.replace(old, new)


def test_wrong_elements_are_reported_not_raised():
    text = _replace_once(
        read_fixture(KIND, EKS),
        "-1   171351    3.13    3.13      0   171823    3.12    3.12      0",
        "-1   171351    3.13    3.13  18134   171823    3.12    3.12  1.04858e+06",
    )
    text = _replace_once(text, "# Out of bounds values : 0 OK", "# Out of bounds values : 2 FAILED")
    result = parse_nccl_tests(text)
    assert result["wrong_total"] == 18134 + 1048580  # %g keeps 6 digits
    assert result["out_of_bounds"] == 2
    assert result["failures"] == [
        "536870912     134217728     float     sum      -1   171351    3.13    3.13  18134   171823    3.12    3.12"
        "  1.04858e+06",
        "# Out of bounds values : 2 FAILED",
    ]


def test_test_failure_line_is_reported():
    text = read_fixture(KIND, EKS)
    text = _replace_once(
        text,
        "[1,1]<stdout>:test-nccl-efa-worker-1:21:21 [0] NCCL INFO comm 0x7f9c0c000f60 rank 1 nranks 2 cudaDev 0"
        " busId f5000 - Destroy COMPLETE\n",
        "[1,1]<stdout>:test-nccl-efa-worker-1: Test NCCL failure common.cu:958 'unhandled system error'\n",
    )
    result = parse_nccl_tests(text)
    assert result["failures"] == ["test-nccl-efa-worker-1: Test NCCL failure common.cu:958 'unhandled system error'"]
    assert len(result["rows"]) == 31


def _lines(name, start, stop=None):
    return "".join(read_fixture(KIND, name).splitlines(True)[start:stop])


ALLTOALL_HEAD = _lines(ALLTOALL, 0, 15)  # preamble, header (line 14), units (line 15)
ALLTOALL_LAST = "  8589934592     268435456   float            33508  256.36  224.31    N/A    33234  258.47  226.16    N/A\n"


@pytest.mark.parametrize(
    "text, message",
    [
        (None, "nccl-tests output is empty"),
        ("", "nccl-tests output is empty"),
        (" \n\t\n", "nccl-tests output is empty"),
        (_lines(ALLTOALL, 0, 12) + _lines(ALLTOALL, 14), "nccl-tests output has no results header ('#  size  count  type ...')"),
        (
            "# nThread 1 nGpus 8 minBytes 1 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20 validation: 0\n"
            "node1: Test NCCL failure common.cu:958 'invalid usage'\n .. node1 pid 4242: Test failure common.cu:842\n",
            "nccl-tests output has no results header ('#  size  count  type ...'); it reports: "
            "node1: Test NCCL failure common.cu:958 'invalid usage' | .. node1 pid 4242: Test failure common.cu:842",
        ),
        (ALLTOALL_HEAD, "nccl-tests output has a results header (line 14) but no data rows"),
        (_lines(ALLTOALL, 0, 14), "expected the units line ('#  (B)  (elements) ...') after the header at line 14,"
                                  " got the end of the output"),
        (
            _lines(ALLTOALL, 0, 14) + _lines(ALLTOALL, 15),
            "line 15: expected the units line ('#  (B)  (elements) ...') after the header at line 14: '0             0"
            "   float             1.63    0.00    0.00    N/A     1.38    0.00    0.00    N/A'",
        ),
        (
            ALLTOALL_HEAD.replace("(us)  (GB/s)  (GB/s)            (us)", "(ns)  (GB/s)  (GB/s)            (us)"),
            "line 15: unknown unit 'ns' for time in the units line",
        ),
        (
            ALLTOALL_HEAD.replace("  (GB/s)\n", "\n"),
            "line 15: the units line has 7 units, the header at line 14 needs 8: '#        (B)    (elements)"
            "                     (us)  (GB/s)  (GB/s)            (us)  (GB/s)'",
        ),
        (
            ALLTOALL_HEAD.replace("  redop  ", "     op  "),
            "line 14: results header not understood: size count type op time algbw busbw error time algbw busbw error",
        ),
        (
            ALLTOALL_HEAD.replace("busbw  error\n", "busbw\n"),
            "line 14: results header not understood: size count type redop time algbw busbw error time algbw busbw",
        ),
        (
            ALLTOALL_HEAD + "  8589934592     268435456   float            33508  256.36  224.31    N/A    33234  258.47\n",
            "line 16 has 9 cells, the header at line 14 needs 11 to 12 (size count type redop time algbw busbw error"
            " time algbw busbw error): '8589934592     268435456   float            33508  256.36  224.31    N/A"
            "    33234  258.47'",
        ),
        (
            ALLTOALL_HEAD + "  8589934592     268435456   float            33508  256.36  224.31    N/A    33234  25",
            "line 16 has 9 cells, the header at line 14 needs 11 to 12 (size count type redop time algbw busbw error"
            " time algbw busbw error): '8589934592     268435456   float            33508  256.36  224.31    N/A"
            "    33234  25'",
        ),
        (
            ALLTOALL_HEAD + "  8589934592\n",
            "line 16 has 1 cells, the header at line 14 needs 11 to 12 (size count type redop time algbw busbw error"
            " time algbw busbw error): '8589934592'",
        ),
        (
            read_fixture(KIND, ALLTOALL) + ALLTOALL_HEAD,
            "line 66: a second results header (the first is at line 14; one run per output)",
        ),
        (
            _lines(BROADCAST, 0, 16) + _lines(BROADCAST, 16, 17).replace("float       0", "float     sum"),
            "line 17: root 'sum' is not a number: '0             0   float     sum    34.61    0.00    0.00    N/A"
            "    34.33    0.00    0.00    N/A'",
        ),
        (
            read_fixture(KIND, ALLTOALL) + ALLTOALL_LAST,
            "line 53: data row after the summary at line 50: '8589934592     268435456   float"
            "            33508  256.36  224.31    N/A    33234  258.47  226.16    N/A'",
        ),
        (
            read_fixture(KIND, ALLTOALL).replace("# Avg bus bandwidth    : 58.6481", "# Avg bus bandwidth    : nan%"),
            "line 51: average bus bandwidth 'nan%' is not a number: '# Avg bus bandwidth    : nan%'",
        ),
    ],
)
def test_errors(text, message):
    with pytest.raises(NcclTestsError) as exc:
        parse_nccl_tests(text)
    assert str(exc.value) == message


@pytest.mark.parametrize("old, new, message", [
    ("224.31", "22x.31", "busbw (out-of-place) '22x.31' is not a number"),
    ("N/A\n", "?\n", "error (in-place) '?' is not a number"),
    ("float", "12", "type '12' is not a data type name"),
    ("   float      ", "   float  -1  ", "redop '-1' is not a reduction name"),
])
def test_bad_cell_names_the_cell_and_quotes_the_row(old, new, message):
    row = ALLTOALL_LAST.replace(old, new)
    with pytest.raises(NcclTestsError) as exc:
        parse_nccl_tests(ALLTOALL_HEAD + row)
    assert str(exc.value) == "line 16: %s: '%s'" % (message, row.strip())
