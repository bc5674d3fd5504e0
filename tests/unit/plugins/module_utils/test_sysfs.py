# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""read_text: one sysfs/procfs value, or None; read_file: a whole file, or None."""

from __future__ import annotations

from ansible_collections.gpucluster.core.plugins.module_utils._sysfs import read_file, read_text


def test_value_is_stripped(tmp_path):
    (tmp_path / "core_id").write_text("17\n")
    assert read_text(str(tmp_path / "core_id")) == "17"


def test_missing_or_unreadable_gives_none(tmp_path):
    assert read_text(str(tmp_path / "absent")) is None
    assert read_text(str(tmp_path)) is None  # a directory cannot be read as a value


def test_file_is_read_whole_with_bad_bytes_replaced(tmp_path):
    (tmp_path / "gres.conf").write_bytes(b"Name=gpu\n\xff\n")
    assert read_file(str(tmp_path / "gres.conf")) == "Name=gpu\n\ufffd\n"


def test_missing_file_gives_none(tmp_path):
    assert read_file(str(tmp_path / "absent")) is None
    assert read_file(str(tmp_path)) is None
