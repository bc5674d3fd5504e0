# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import pytest

from ansible_collections.gpucluster.core.plugins.module_utils._numbers import (
    leading_int,
    leading_number,
)


@pytest.mark.parametrize(
    "value, expected",
    [
        ("400", 400),
        ("2.5", 2.5),
        ("7.0", 7),
        ("200 Gb/sec (4X HDR)", 200),
        ("  56\n", 56),
        ("\t12 W", 12),
        ("0x33bf", 13247),
        ("0X1F", 31),
        (" 0xffff ", 65535),
        ("0", 0),
        ("007", 7),
    ],
)
def test_leading_number_reads(value, expected):
    result = leading_number(value)
    assert result == expected
    assert type(result) is type(expected)  # pylint: disable=unidiomatic-typecheck


@pytest.mark.parametrize(
    "value",
    [None, "", "   ", "N/A", "abc", "0x", "0xzz", "0x33bf MiB", "-1", "-0x10", ".5", "+3", "e5"],
)
def test_leading_number_gives_none(value):
    assert leading_number(value) is None


def test_leading_number_signed():
    assert leading_number("-1", signed=True) == -1
    assert leading_number("-2.5 W", signed=True) == -2.5
    assert leading_number("-0x10", signed=True) == 0  # hex only without a sign: "-0" is read
    assert leading_number("- 1", signed=True) is None


def test_leading_number_reads_only_the_leading_number():
    assert leading_number("1e5") == 1
    assert leading_number("1.2.3") == 1.2
    assert leading_number("12abc") == 12
    assert leading_number("5.") == 5


@pytest.mark.parametrize(
    "value, expected",
    [
        ("32510 MiB", 32510),
        ("32510.9 MiB", 32510),
        ("0x100", 256),
        ("-1", -1),
        ("-1.9", -1),
        ("0", 0),
        (" 3 ", 3),
    ],
)
def test_leading_int_reads(value, expected):
    result = leading_int(value)
    assert result == expected
    assert type(result) is int  # pylint: disable=unidiomatic-typecheck


@pytest.mark.parametrize("value", [None, "", "N/A", "0x", "0x100 MiB", "garbage", "-"])
def test_leading_int_gives_none(value):
    assert leading_int(value) is None


def test_leading_int_unsigned():
    assert leading_int("-1", signed=False) is None
    assert leading_int("2.5", signed=False) == 2


def test_parsers_share_the_helper():
    # The ibstat and nvidia-smi parsers read numbers through this module, unsigned and signed.
    from ansible_collections.gpucluster.core.plugins.module_utils import _ibstat, _nvidia_smi

    assert _ibstat._num is leading_number  # pylint: disable=protected-access
    assert _nvidia_smi._to_int is leading_int  # pylint: disable=protected-access
    assert _ibstat._num("-1") is None  # pylint: disable=protected-access
    assert _nvidia_smi._to_int("-1") == -1  # pylint: disable=protected-access
