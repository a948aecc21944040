"""nvidia-smi -q -x read on documents three driver branches printed, one with MIG enabled."""

from __future__ import annotations

import pytest

from aicr.parsers import ParseError
from aicr.parsers.nvidia_smi import Gpu, parse_xml
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
