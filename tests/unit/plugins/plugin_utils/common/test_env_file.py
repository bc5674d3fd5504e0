# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""env_file_line: one variable's line set in a shell-style environment file, the rest kept, as
lineinfile with regexp '^#?\\s*NAME=' sets it."""

from __future__ import annotations

import pytest

from ansible_collections.gpucluster.core.plugins.plugin_utils.common._env_file import set_line
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._rules import RuleError

# /etc/default/slurmd as Debian 12's slurmd package (22.05.8-4+deb12u3) ships it.
DEBIAN = '# Additional options that are passed to the slurmd daemon\n#SLURMD_OPTIONS=""\n'
LINE = 'SLURMD_OPTIONS="--conf-server head01"'


@pytest.mark.parametrize("text, want", [
    # the package's commented-out line is the one replaced
    (DEBIAN, '# Additional options that are passed to the slurmd daemon\n' + LINE + '\n'),
    (None, LINE + "\n"),
    ("", LINE + "\n"),
    # a line of ours from an earlier run, the admin's other settings kept
    ('SLURMD_OPTIONS="-M"\nLD_LIBRARY_PATH=/opt/nvml\n', LINE + '\nLD_LIBRARY_PATH=/opt/nvml\n'),
    # the last of several is replaced, as lineinfile does
    ('SLURMD_OPTIONS="-a"\n#  SLURMD_OPTIONS="-b"\n', 'SLURMD_OPTIONS="-a"\n' + LINE + '\n'),
    # no newline at the end: kept so where the line is replaced, added where it is appended
    ('SLURMD_OPTIONS="-M"', LINE),
    ('EXTRA=1', 'EXTRA=1\n' + LINE + '\n'),
    # a variable whose name only starts the same is another variable
    ('SLURMD_OPTIONS_OLD=1\n', 'SLURMD_OPTIONS_OLD=1\n' + LINE + '\n'),
    # already there: the same text
    (LINE + "\n", LINE + "\n"),
], ids=["debian-default", "no-file", "empty", "ours-before", "last-of-two", "no-newline", "append-no-newline",
        "longer-name", "unchanged"])
def test_set_line(text, want):
    assert set_line(text, "SLURMD_OPTIONS", LINE) == want


@pytest.mark.parametrize("name, line, message", [
    ("SLURMD OPTIONS", "SLURMD OPTIONS=1", "env_file_line: 'SLURMD OPTIONS' is not a variable name"),
    ("SLURMD_OPTIONS", 'OPTIONS="-M"', "env_file_line: the line must be one line starting with SLURMD_OPTIONS= "
                                       "(got 'OPTIONS=\"-M\"')"),
    ("SLURMD_OPTIONS", 'SLURMD_OPTIONS="-M"\nEVIL=1', "env_file_line: the line must be one line starting with "
                                                      "SLURMD_OPTIONS= (got 'SLURMD_OPTIONS=\"-M\"\\nEVIL=1')"),
])
def test_bad_input(name, line, message):
    with pytest.raises(RuleError) as exc:
        set_line(DEBIAN, name, line)
    assert str(exc.value) == message
