# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the tests read of a call that must fail: the message of the error it raises."""

from __future__ import annotations

from typing import Any, Callable

import pytest


def message_of(error: type[BaseException], call: Callable[..., Any], *args: Any) -> str:
    """The message of the ``error`` that ``call(*args)`` raises; the test fails when it raises none."""
    with pytest.raises(error) as err:
        call(*args)
    return str(err.value)
