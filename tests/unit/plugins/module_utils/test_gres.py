# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import re

import pytest

from ansible_collections.gpucluster.core.plugins.module_utils._gres import (
    GresError,
    build_gres,
    format_ranges,
    nvml_type_name,
    read_cpu_cores,
    read_mig_minors,
    short_type_name,
)
from ansible_collections.gpucluster.core.plugins.module_utils._nvidia_smi import (
    merge_topology,
    parse_topology,
    parse_xml,
)
from ansible_collections.gpucluster.core.tests.unit.plugins.shared_fixtures import (
    list_fixtures,
    read_fixture,
)


def facts_of(name, topo=None):
    facts = parse_xml(read_fixture("nvidia-smi-xml", name))
    if topo:
        merge_topology(facts, parse_topology(read_fixture("nvidia-smi-topo", topo)))
    return facts


def test_nvml_type_name_matches_slurmd_autodetect_capture():
    """slurmd -G on an H100 SXM5 with AutoDetect=nvml printed Type=nvidia_h100_80gb_hbm3.

    The capture does not include the NVML name; "NVIDIA H100 80GB HBM3" is the product name
    NVIDIA's driver reports for that board (see the H100 MIG csv capture in shared/fixtures).
    """
    slurmd = read_fixture("slurm", "slurmd-G-h100-sxm5-mig-nvml-autodetect.txt")
    types = set(re.findall(r"Type=(\S+)", slurmd))
    assert "nvidia_h100_80gb_hbm3" in types
    csv = read_fixture("nvidia-smi-csv", "h100-80gb-mig-enabled-driver590-full-fields.csv")
    assert "NVIDIA H100 80GB HBM3" in csv
    assert nvml_type_name("NVIDIA H100 80GB HBM3") == "nvidia_h100_80gb_hbm3"
    # MIG types in the same capture: <gpu type>_<profile>
    assert "nvidia_h100_80gb_hbm3_1g.10gb" in types
    assert "nvidia_h100_80gb_hbm3_4g.40gb" in types


@pytest.mark.parametrize(
    "name, nvml, short",
    [
        ("NVIDIA H100 80GB HBM3", "nvidia_h100_80gb_hbm3", "h100"),
        ("Tesla V100S-PCIE-32GB", "tesla_v100s-pcie-32gb", "v100s"),
        ("NVIDIA A100-SXM4-80GB", "nvidia_a100-sxm4-80gb", "a100"),
        ("NVIDIA A10G", "nvidia_a10g", "a10g"),
        ("Tesla T4", "tesla_t4", "t4"),
        ("NVIDIA GeForce RTX 3080", "nvidia_geforce_rtx_3080", "rtx3080"),
        ("NVIDIA RTX A5000", "nvidia_rtx_a5000", "rtxa5000"),
        ("NVIDIA RTX 4000 SFF Ada Generation", "nvidia_rtx_4000_sff_ada_generation", "rtx4000"),
        ("Graphics Device", "graphics_device", "graphics_device"),
    ],
)
def test_type_names(name, nvml, short):
    assert nvml_type_name(name) == nvml
    assert short_type_name(name) == short


@pytest.mark.parametrize("name", list_fixtures("nvidia-smi-xml"))
def test_every_capture_builds_or_names_the_problem(name):
    facts = parse_xml(read_fixture("nvidia-smi-xml", name))
    mig = any(g["mig_mode"]["current"] == "Enabled" for g in facts["gpus"])
    no_minor = any(g["minor_number"] is None for g in facts["gpus"])
    if mig or no_minor:
        with pytest.raises(GresError):
            build_gres(facts)
        return
    result = build_gres(facts)
    assert result["gpu_count"] == len(facts["gpus"])
    assert len(result["lines"]) == len(facts["gpus"])
    for gpu, line in zip(facts["gpus"], result["lines"]):
        assert line == "Name=gpu Type=%s File=/dev/nvidia%d" % (nvml_type_name(gpu["name"]), gpu["minor_number"])


def test_v100s_eight_gpus():
    result = build_gres(facts_of("8x-tesla-v100s-pcie-32gb-driver460-v11.xml"), expected_gpus=8, header="managed")
    assert result["gres"] == "gpu:tesla_v100s-pcie-32gb:8"
    assert result["types"] == ["tesla_v100s-pcie-32gb"]
    assert result["devices"] == ["/dev/nvidia%d" % i for i in range(8)]
    assert result["content"].splitlines()[0] == "# managed"
    assert result["content"].splitlines()[1] == "Name=gpu Type=tesla_v100s-pcie-32gb File=/dev/nvidia0"
    assert result["content"].endswith("File=/dev/nvidia7\n")


def test_minor_numbers_name_the_files():
    result = build_gres(facts_of("2x-rtx-a5000-driver590-v13.xml"), type_style="short")
    assert result["lines"] == [
        "Name=gpu Type=rtxa5000 File=/dev/nvidia1",
        "Name=gpu Type=rtxa5000 File=/dev/nvidia0",
    ]
    assert result["gres"] == "gpu:rtxa5000:2"


def test_type_map_and_untyped():
    facts = facts_of("tesla-t4-driver515-v11.xml")
    assert build_gres(facts, type_map={"Tesla T4": "t4"})["gres"] == "gpu:t4:1"
    assert build_gres(facts, type_map={"tesla_t4": "turing"})["gres"] == "gpu:turing:1"
    untyped = build_gres(facts, type_style="none")
    assert untyped["gres"] == "gpu:1"
    assert untyped["lines"] == ["Name=gpu File=/dev/nvidia0"]


@pytest.mark.parametrize("type_map, message", [
    ({"NVIDIA H100 80GB HBM3": "h100"},
     "GPU 0 (Tesla T4) is not in type_map (it names 'NVIDIA H100 80GB HBM3'): add the product name 'Tesla T4'"
     " or the NVML type name 'tesla_t4'"),
    ({"nvidia_a100-sxm4-80gb": "a100", "Tesla V100": "v100"},
     "GPU 0 (Tesla T4) is not in type_map (it names 'Tesla V100', 'nvidia_a100-sxm4-80gb'): add the product name"
     " 'Tesla T4' or the NVML type name 'tesla_t4'"),
], ids=["one-other-model", "two-other-models"])
def test_type_map_refuses_a_gpu_it_does_not_name(type_map, message):
    for style in ("nvml", "short", "none"):
        with pytest.raises(GresError) as exc:
            build_gres(facts_of("tesla-t4-driver515-v11.xml"), type_style=style, type_map=type_map)
        assert str(exc.value) == message


def _same_minor(facts, gpu, as_gpu):
    """The facts with GPU gpu given GPU as_gpu's minor number, as if two entries named the same GPU."""
    facts["gpus"][gpu]["minor_number"] = facts["gpus"][as_gpu]["minor_number"]
    return facts


V100S_TOPO = facts_of("8x-tesla-v100s-pcie-32gb-driver460-v11.xml", "h100-8gpu-nv18-ht-cpu-affinity-spaces-expanded.txt")


@pytest.mark.parametrize("facts, options, message", [
    (facts_of("tesla-t4-driver515-v11.xml"), {"type_map": {"Tesla T4": "t 4"}},
     "invalid GRES type 't 4' for GPU 0 (Tesla T4): a type may not be empty or contain blanks, ',', ':', '=' or parentheses"),
    (facts_of("a10g-aws-driver515-v11.xml"), {"expected_gpus": 8}, "expected 8 GPUs, the nvidia facts list 1"),
    (_same_minor(facts_of("8x-tesla-v100s-pcie-32gb-driver460-v11.xml"), 3, 0), {},
     "duplicate device /dev/nvidia0: GPU 0 and GPU 3"),
    (facts_of("rtx3080-windows-wddm-driver536-v12.xml"), {},
     "GPU 0 (NVIDIA GeForce RTX 3080) has no minor number, so no /dev/nvidia<minor> device file"),
    (facts_of("a100-sxm4-80gb-mig-driver535-v12.xml"), {},
     "GPU 0 MIG device 0 (GPU instance 3) has no profile name in the nvidia-smi output, so its GRES type "
     "cannot be derived; use autodetect=nvml for MIG GPUs"),
    (facts_of("tesla-t4-driver515-v11.xml"), {"extra_lines": ["a=1\nb=2"]},
     "extra line 'a=1\\nb=2' spans several lines; give one list item per line"),
    (V100S_TOPO, {"node_cores": 104}, "GPU 0 Cores=104-155 lie outside the node's 104 cores (0-103)"),
    (facts_of("tesla-t4-driver515-v11.xml"), {"links": True},
     "links=true needs the NVLink matrix: gather the facts with nvidia_smi_facts topology=true"),
], ids=["type-with-blank", "expected-gpus", "duplicate-device", "windows-no-device-file", "mig-without-profiles",
        "extra-line-spans-lines", "cores-outside-node", "links-without-topology"])
def test_errors(facts, options, message):
    with pytest.raises(GresError) as exc:
        build_gres(facts, **options)
    assert str(exc.value) == message


def test_autodetect_nvml_plain_gpus():
    result = build_gres(facts_of("8x-tesla-v100s-pcie-32gb-driver460-v11.xml"), autodetect="nvml",
                        extra_lines=["Name=shard Count=16", ""])
    assert result["lines"] == ["AutoDetect=nvml", "Name=shard Count=16"]
    assert result["gres"] == "gpu:tesla_v100s-pcie-32gb:8"


def make_cpus(root, layout):
    """layout: {cpu id: (package, core id)} -> <root>/devices/system/cpu/cpuN/topology/*."""
    for cpu, (package, core) in layout.items():
        topo = root / "devices" / "system" / "cpu" / ("cpu%d" % cpu) / "topology"
        topo.mkdir(parents=True)
        (topo / "physical_package_id").write_text("%d\n" % package)
        (topo / "core_id").write_text("%d\n" % core)


def h100_node_cpus(tmp_path):
    """2 sockets x 104 cores x 2 threads; CPU n and n+104 share a core (as the affinity 0-51,104-155 shows)."""
    layout = {}
    for cpu in range(208):
        thread_cpu = cpu % 104
        layout[cpu] = (thread_cpu // 52, thread_cpu % 52)
    make_cpus(tmp_path, layout)
    return read_cpu_cores(str(tmp_path))


def test_read_cpu_cores(tmp_path):
    cores = h100_node_cpus(tmp_path)
    assert len(cores) == 208
    assert cores[0] == cores[104] == 0
    assert cores[51] == 51
    assert cores[52] == cores[156] == 52
    assert read_cpu_cores(str(tmp_path / "none")) == {}


def test_cores_and_links_from_topology(tmp_path):
    # GPU rows from the 8x H100 topo capture, GPU identities from the 8x V100S capture.
    facts = facts_of("8x-tesla-v100s-pcie-32gb-driver460-v11.xml", "h100-8gpu-nv18-ht-cpu-affinity-spaces-expanded.txt")
    result = build_gres(facts, links=True, cpu_cores=h100_node_cpus(tmp_path), node_cores=104)
    assert result["lines"][0] == (
        "Name=gpu Type=tesla_v100s-pcie-32gb File=/dev/nvidia0 Cores=0-51 Links=-1,18,18,18,18,18,18,18"
    )
    assert result["lines"][7] == (
        "Name=gpu Type=tesla_v100s-pcie-32gb File=/dev/nvidia7 Cores=52-103 Links=18,18,18,18,18,18,18,-1"
    )


def test_cores_without_cpu_topology_use_cpu_ids():
    result = build_gres(V100S_TOPO)
    assert result["lines"][0].endswith("Cores=0-51,104-155")


def test_affinity_cpu_not_on_node(tmp_path):
    make_cpus(tmp_path, dict((cpu, (0, cpu)) for cpu in range(16)))
    facts = facts_of("tesla-t4-driver515-v11.xml", "h100-single-gpu-vm-ansi-escapes-driver590.txt")
    with pytest.raises(GresError) as exc:
        build_gres(facts, cpu_cores=read_cpu_cores(str(tmp_path)))
    assert str(exc.value) == "GPU 0 CPU affinity names CPUs 16-19 that this node does not have (it has CPUs 0-15)"


def test_read_mig_minors(tmp_path):
    assert read_mig_minors(str(tmp_path / "missing")) == {}


@pytest.mark.parametrize(
    "numbers, text",
    [([], ""), ([3], "3"), ([0, 1, 2, 5, 7, 8], "0-2,5,7-8"), ([5, 1, 1, 2], "1-2,5")],
)
def test_format_ranges(numbers, text):
    assert format_ranges(numbers) == text
