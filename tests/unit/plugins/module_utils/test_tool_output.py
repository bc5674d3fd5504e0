# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""line_error and reported: the message pieces the nccl-tests and perftest parsers share."""

from __future__ import annotations

import pytest

from ansible_collections.gpucluster.core.plugins.module_utils._tool_output import line_error, reported


class ParserError(Exception):
    """A parser's own error class."""


def test_line_error_names_the_line_and_quotes_it_stripped():
    error = line_error(ParserError, 16, "  8589934592  float  x \n", "type 'x' is not a data type name")
    assert isinstance(error, ParserError)
    assert str(error) == "line 16: type 'x' is not a data type name: '8589934592  float  x'"


@pytest.mark.parametrize("failures, expected", [
    ([], ""),
    (["Couldn't connect to 10.0.0.2:18515"], "; it reports: Couldn't connect to 10.0.0.2:18515"),
    (["a failed", "b failed"], "; it reports: a failed | b failed"),
])
def test_reported(failures, expected):
    assert reported(failures) == expected
