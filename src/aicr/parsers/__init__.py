"""What the GPU tools print, read: one pure module per tool format.

Every verdict about GPUs starts from text a tool printed: ``nccl_tests``
(``all_reduce_perf``'s stdout), ``nvidia_smi`` (``nvidia-smi -q -x``),
``dcgm`` (a dcgm-exporter ``/metrics`` page) and ``aiperf`` (AIPerf's
``profile_export_aiperf.json``). Each parser takes the text and returns plain
values, or raises ``ParseError`` with a sentence naming what is missing. They
are tested on output captured from the real tools (``tests/data/real/``).
"""

from __future__ import annotations


class ParseError(ValueError):
    """The text is not the tool's output, or lacks what the caller needs; the message says which."""
