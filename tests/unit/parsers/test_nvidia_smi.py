"""nvidia-smi -q -x read on documents three driver branches printed, one with MIG enabled."""

from __future__ import annotations

import dataclasses

import pytest

from aicr.parsers import ParseError
from aicr.parsers.nvidia_smi import (
    Gpu,
    ListedGpu,
    MigDevice,
    QueriedGpu,
    XmlMigDevice,
    parse_list,
    parse_query,
    parse_xml,
)
from real_captures import capture


@pytest.mark.parametrize(
    ("name", "gpu"),
    [
        (
            "a100-sxm4-v12.xml",
            Gpu(
                uuid="GPU-513536b6-7d19-9063-b049-1e69664bb298",
                name="NVIDIA A100-SXM4-80GB",
                serial="1650522003820",
                driver_version="535.54.03",
                cuda_version="12.2",
                mig_mode="Enabled",
                memory_total_mib=81920,  # the GPU's own, not one of its MIG devices' 19968
                # four MIG devices of 14 SMs and 19968 MiB each (1g.20gb: the XML names none)
                migs=tuple(XmlMigDevice(i, 3 + i, 0, 14, 19968) for i in range(4)),
            ),
        ),
        (
            "a10g.xml",
            Gpu(
                uuid="GPU-9a9a6c50-2a47-2f51-a902-b82c3b127e94",
                name="NVIDIA A10G",
                serial="0000000000000",
                driver_version="515.105.01",
                cuda_version="11.7",
                mig_mode=None,  # N/A: no MIG on an A10G
                memory_total_mib=23028,
            ),
        ),
        (
            "rtx-4000-sff-ada-v13.xml",
            Gpu(
                uuid="GPU-37037c3f-65c8-ec4d-24a9-420204ad8026",
                name="NVIDIA RTX 4000 SFF Ada Generation",
                serial="REDACTED",
                driver_version="595.84",
                cuda_version="13.2",
                mig_mode=None,
                memory_total_mib=20475,
            ),
        ),
    ],
    ids=["535-a100-mig", "515-a10g", "595-ada-v13"],
)
def test_real_documents(name: str, gpu: Gpu) -> None:
    assert parse_xml(capture("nvidia-smi", name)) == [gpu]


def test_a_gpu_without_uuid_is_refused() -> None:
    text = capture("nvidia-smi", "a10g.xml").replace(
        "<uuid>GPU-9a9a6c50-2a47-2f51-a902-b82c3b127e94</uuid>", ""
    )
    with pytest.raises(ParseError, match=r"gpu 00000000:00:1E\.0 has no uuid"):
        parse_xml(text)


def test_a_mig_device_without_its_ids_is_refused() -> None:
    text = capture("nvidia-smi", "a100-sxm4-v12.xml").replace(
        "<gpu_instance_id>3</gpu_instance_id>", "", 1
    )
    with pytest.raises(ParseError, match=r"mig_device 0 lacks index, gpu_instance_id"):
        parse_xml(text)
    bad = capture("nvidia-smi", "a100-sxm4-v12.xml").replace(
        "<multiprocessor_count>14</multiprocessor_count>",
        "<multiprocessor_count>x</multiprocessor_count>",
        1,
    )
    with pytest.raises(ParseError, match=r"multiprocessor_count is 'x', not a number"):
        parse_xml(bad)


def test_list_reads_every_mig_device_under_its_gpu_in_both_layouts() -> None:
    single = parse_list(capture("nvidia-smi", "h100-mig-single-list.txt"))
    assert [(g.index, g.name, g.uuid) for g in single] == [
        (0, "NVIDIA H100 80GB HBM3", "GPU-b4895dbf-9350-2524-a89b-98161ddd9fe4")
    ]
    assert [(m.profile, m.index) for m in single[0].migs] == [("1g.10gb", i) for i in range(7)]
    assert single[0].migs[0].uuid == "MIG-3f6f389f-b0cc-5e5c-8e32-eaa8fd067902"
    mixed = parse_list(capture("nvidia-smi", "h100-mig-mixed-list.txt"))
    assert [m.profile for m in mixed[0].migs] == ["3g.40gb", "2g.20gb", "1g.10gb", "1g.10gb"]
    # a pod given one MIG device, as the R460 driver printed it
    pod = parse_list(capture("nvidia-smi", "a100-mig-pod-list-r460.txt"))
    assert pod == [ListedGpu(0, "A100-SXM4-40GB", "GPU-4200ccc0-2667-d4cb-9137-f932c716232a", (
        MigDevice("1g.5gb", 0, "MIG-GPU-4200ccc0-2667-d4cb-9137-f932c716232a/7/0"),))]  # fmt: skip


def test_list_without_mig_and_empty() -> None:
    text = "GPU 0: NVIDIA A10G (UUID: GPU-9a9a6c50-2a47-2f51-a902-b82c3b127e94)\n"
    assert parse_list(text) == [
        ListedGpu(0, "NVIDIA A10G", "GPU-9a9a6c50-2a47-2f51-a902-b82c3b127e94")]  # fmt: skip
    assert parse_list("\n") == []


@pytest.mark.parametrize(
    ("text", "problem"),
    [("  MIG 1g.10gb     Device  0: (UUID: MIG-3f6f389f)\n", "line 1: a MIG device before any GPU"),
     ("No devices were found\n", "line 1: not a GPU or MIG device: 'No devices were found'"),
     ("GPU 0: NVIDIA A10G (UUID: GPU-1)\nFailed to initialize NVML\n", "line 2: not a GPU")],
)  # fmt: skip
def test_list_refuses_anything_else(text: str, problem: str) -> None:
    with pytest.raises(ParseError, match=problem.replace("(", r"\(")):
        parse_list(text)


VGPU_GUEST = "tkgi-v100d-8c-vgpu-guest-q.txt"


def test_query_reads_a_vgpu_guests_virtualization_and_licence() -> None:
    assert parse_query(capture("nvidia-smi", VGPU_GUEST)) == [
        QueriedGpu(
            bus_id="00000000:02:00.0",
            name="GRID V100D-8C",  # the vGPU type
            brand="NVIDIA Virtual Compute Server",
            uuid="GPU-57abc772-1dd3-11b2-8fae-e31710b8f307",
            driver_version="535.216.01",
            virtualization_mode="VGPU",
            host_vgpu_mode=None,  # N/A in a guest
            licensed_product="NVIDIA Virtual Compute Server",
            license_status="Licensed (Expiry: 2025-3-19 7:29:4 GMT)",
        )
    ]


@pytest.mark.parametrize(
    ("name", "gpu"),
    [
        (
            "a100-4c-vgpu-guest-unlicensed-q.txt",
            QueriedGpu(
                bus_id="00000000:02:01.0",
                name="GRID A100-4C",
                brand="NVIDIA Virtual Compute Server",
                uuid="GPU-62f13b27-1eda-11b2-a8b5-0869ebe25264",
                driver_version="510.47.03",
                virtualization_mode="VGPU",
                host_vgpu_mode=None,
                licensed_product="NVIDIA Virtual Compute Server",
                license_status="Unlicensed (Unrestricted)",
            ),
        ),
        (
            "rtxa6000-24q-vgpu-guest-unlicensed-q.txt",
            QueriedGpu(
                bus_id="00000000:00:10.0",
                name="NVIDIA RTXA6000-24Q",
                brand="NVIDIA RTX Virtual Workstation",
                uuid="GPU-bf0881b6-032a-11f0-825b-5c07a73a413d",
                driver_version="535.183.06",
                virtualization_mode="VGPU",
                host_vgpu_mode=None,
                licensed_product="NVIDIA RTX Virtual Workstation",
                license_status="Unlicensed (Unrestricted)",
            ),
        ),
    ],
    ids=["510-vcs", "535-vws-whole-log"],
)
def test_query_reads_an_unlicensed_vgpu_guests_state(name: str, gpu: QueriedGpu) -> None:
    # the grace period: it runs at full speed now, and it is not licensed
    [got] = parse_query(capture("nvidia-smi", name))
    assert (got, got.licensed) == (gpu, False)


@pytest.mark.parametrize(
    ("status", "licensed"),
    [
        ("Licensed (Expiry: 2025-3-19 7:29:4 GMT)", True),
        ("Licensed", True),
        ("Unlicensed (Unrestricted)", False),
        ("Unlicensed (Restricted)", False),
        ("Unlicensed", False),
        ("Unknown", False),
        ("Licensedish", False),
        (None, False),
    ],
    ids=["expiry", "bare", "grace", "restricted", "unlicensed", "unknown", "prefix", "none"],
)
def test_only_a_licensed_state_is_licensed(status: str | None, licensed: bool) -> None:
    [real] = parse_query(capture("nvidia-smi", VGPU_GUEST))
    assert real.licensed  # the real licensed guest
    assert dataclasses.replace(real, license_status=status).licensed is licensed


def test_query_keys_are_read_in_their_section_only() -> None:
    # "Product Name" also sits under "vGPU Software Licensed Product": the GPU's own is
    # the one outside any section; a GPU that prints no licensed product has none
    text = capture("nvidia-smi", VGPU_GUEST)
    cut = text.replace(
        "    vGPU Software Licensed Product\n"
        "        Product Name                      : NVIDIA Virtual Compute Server\n",
        "",
    ).replace(
        "        License Status                    : Licensed (Expiry: 2025-3-19 7:29:4 GMT)\n", ""
    )
    [gpu] = parse_query(cut.replace(": VGPU", ": Pass-Through"))
    assert (gpu.name, gpu.virtualization_mode, gpu.licensed_product, gpu.license_status) == (
        "GRID V100D-8C", "Pass-Through", None, None)  # fmt: skip


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("Failed to initialize NVML: Unknown Error\n", "no NVSMI LOG banner"),
        ("==============NVSMI LOG==============\n\nAttached GPUs : 0\n", "no Driver Version"),
        (
            "==============NVSMI LOG==============\nDriver Version : 535.216.01\n"
            "GPU 00000000:02:00.0\n    Product Name : GRID V100D-8C\n",
            "GPU 00000000:02:00.0 has no GPU UUID",
        ),
        ("==============NVSMI LOG==============\nMIG Mode\n", "line 2: not a key or a GPU"),
    ],
    ids=["nvml-error", "no-driver", "no-uuid", "section-before-gpu"],
)
def test_query_refuses_what_is_not_a_log(text: str, message: str) -> None:
    with pytest.raises(ParseError, match=message):
        parse_query(text)


def test_query_of_no_gpus_is_empty() -> None:
    banner = "\n==============NVSMI LOG==============\n\nDriver Version : 535.216.01\n"
    assert parse_query(banner + "Attached GPUs : 0\n") == []
