# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""roles/cuda/files/cuda_state.py, the cuda role's one read of a node, run as the role runs it
(`python3 - REQUEST`) over a real tree, and its output through the comparison the role makes."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / ".venv" / "collections"))
from ansible_collections.gpucluster.core.plugins.plugin_utils.cuda._rules import verify_problems  # noqa: E402

SCRIPT = ROOT / "roles" / "cuda" / "files" / "cuda_state.py"
NVCC = "#!/bin/sh\necho 'Cuda compilation tools, release %s, V%s.131'\n"


def read(request: dict) -> dict:
    out = subprocess.run(["python3", "-", json.dumps(request)], input=SCRIPT.read_text(encoding="utf-8"),
                         capture_output=True, text=True, check=True, timeout=60)
    return json.loads(out.stdout)


def tree(tmp_path: Path) -> dict:
    for toolkit in ("12.4", "12.6"):
        nvcc = tmp_path / ("cuda-%s" % toolkit) / "bin" / "nvcc"
        nvcc.parent.mkdir(parents=True)
        nvcc.write_text(NVCC % (toolkit, toolkit), encoding="utf-8")
        nvcc.chmod(0o755)
    (tmp_path / "cuda").symlink_to(tmp_path / "cuda-12.4")
    header = tmp_path / "nccl.h"
    header.write_text("#define NCCL_MAJOR 2\n#define NCCL_MINOR 21\n#define NCCL_PATCH 5\n", encoding="utf-8")
    return {"toolkits": ["12.4", "12.6"], "nvcc_pattern": str(tmp_path / "cuda-%s" / "bin" / "nvcc"),
            "default_nvcc": str(tmp_path / "cuda" / "bin" / "nvcc"), "link": str(tmp_path / "cuda"),
            "cudnn_header": str(tmp_path / "missing.h"), "nccl_header": str(header),
            "packages": ["bash", "gpc-no-such-package"]}


def test_the_read_gives_the_shapes_the_comparison_reads(tmp_path):
    found = read(tree(tmp_path))
    assert [(r["item"], r["rc"]) for r in found["nvcc"]] == [("12.4", 0), ("12.6", 0)]
    assert "release 12.6" in found["nvcc"][1]["stdout"]
    assert "release 12.4" in found["nvcc_default"]["stdout"]
    assert found["link"] == {"lnk_source": str(tmp_path / "cuda-12.4")}
    assert found["cudnn_header"] == {}
    assert base64.b64decode(found["nccl_header"]["content"]).startswith(b"#define NCCL_MAJOR 2")
    assert "libc.so.6" in found["ldconfig"]["stdout"]
    assert list(found["packages"]) == ["bash"] and found["packages"]["bash"][0]["version"]


def test_what_the_read_finds_wrong_is_named(tmp_path):
    request = tree(tmp_path)
    (tmp_path / "cuda-12.6" / "bin" / "nvcc").unlink()
    found = read(request)
    expected = {"default_toolkit": "12.4", "default_dir": str(tmp_path / "cuda-12.6"), "cuda_major": "12",
                "cudnn": False, "nccl": True, "nccl_header": request["nccl_header"], "nccl_version": "2.21.5",
                "nccl_package": "gpc-no-such-package", "pins": [{"name": "bash", "version": "0.0-1"}]}
    assert verify_problems(found, expected) == [
        # The comparison names the toolkit's real place; the read ran the test tree's.
        "/usr/local/cuda-12.6/bin/nvcc --version: expected release 12.6, found no release",
        "/usr/local/cuda: expected to lead to %s, found %s" % (tmp_path / "cuda-12.6", tmp_path / "cuda-12.4"),
        "gpc-no-such-package: expected a build for CUDA 12 (the default toolkit 12.4), found not installed",
        "ldconfig -p: expected libnccl.so.2, found none of its name",
        "bash: expected 0.0-1 installed, found %s" % found["packages"]["bash"][0]["version"],
    ]
