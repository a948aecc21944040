"""``nvidia-smi -q -x`` and ``-L``: the GPUs the driver lists, as every driver branch prints them.

The document is ``<nvidia_smi_log>`` (DTD ``nvsmi_device_v11`` to ``v13``): the
driver and CUDA version once at the top, then one ``<gpu>`` per device with its
``product_name``, ``serial``, ``uuid``, ``mig_mode/current_mig`` (drivers before
MIG print none) and ``fb_memory_usage/total`` (``81559 MiB``). With MIG enabled a
GPU also lists ``mig_devices``, each with its own ``fb_memory_usage``: only the
GPU's own (a direct child) is its memory. Each MIG device is read too (``migs``:
its index, GPU and compute instance ids, multiprocessor count and memory); the
XML names no profile, so ``-L`` is what names one. Text before the document (a
warning) is skipped.

``nvidia-smi -q`` (the text log) has a ``==============NVSMI LOG==============``
banner, the driver version once, then one ``GPU 00000000:02:00.0`` block per
device: ``Key : value`` lines indented four spaces, sections (a title alone on
its line) with their keys four spaces deeper. ``parse_query`` keeps what tells a
virtual GPU from a physical one: ``GPU Virtualization Mode`` (``Virtualization
Mode`` ``None``, ``Pass-Through``, ``VGPU``, ``Host VGPU``; ``Host VGPU Mode``)
and ``vGPU Software Licensed Product`` (``Product Name``, ``License Status``),
which guests of a vGPU host print, and where ``Product Name`` is the vGPU type
(``GRID V100D-8C``). ``License Status`` is one of NVML's licence states as the tool
names them (``nvmlGridLicenseState``; DCGM's ``dcgmlib/src/DcgmVgpu.cpp`` spells
the same names): ``Licensed`` with ``(Expiry: 2025-3-19 7:29:4 GMT)`` after it,
``Unlicensed (Unrestricted)`` (the grace period), ``Unlicensed (Restricted)``,
``Unlicensed``. Proven on vGPU guests' logs, one licensed and two unlicensed
(``tests/data/real/``).

``nvidia-smi -L`` lists one ``GPU N: NAME (UUID: GPU-...)`` line per GPU and, with
MIG, each of its MIG devices indented under it: ``  MIG 1g.10gb     Device  0:
(UUID: MIG-...)`` (R470 and later; R460 printed ``MIG 1g.5gb Device 0: (UUID:
MIG-GPU-<uuid>/<gi>/<ci>)``). Any other line is an error. Pure.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass

from aicr.parsers import ParseError


@dataclass(frozen=True)
class XmlMigDevice:
    """One ``mig_device`` of a GPU in ``nvidia-smi -q -x`` (the XML names no profile)."""

    index: int
    gpu_instance: int
    compute_instance: int
    multiprocessors: int | None  # device_attributes/shared/multiprocessor_count
    memory_total_mib: int | None


@dataclass(frozen=True)
class Gpu:
    """One GPU as nvidia-smi lists it; ``None`` where the driver prints N/A or nothing."""

    uuid: str
    name: str
    serial: str | None
    driver_version: str
    cuda_version: str | None
    mig_mode: str | None  # "Enabled", "Disabled"; None on GPUs (or drivers) without MIG
    memory_total_mib: int | None
    migs: tuple[XmlMigDevice, ...] = ()  # with MIG enabled: its MIG devices


def _text(node: ET.Element, path: str) -> str | None:
    value = (node.findtext(path) or "").strip()
    return None if value in ("", "N/A") else value


def _mib(value: str | None) -> int | None:
    if value is None:
        return None
    number, _, unit = value.partition(" ")
    if unit.strip() != "MiB" or not number.isdigit():
        raise ParseError(f"nvidia-smi XML: fb_memory_usage/total is {value!r}, expected 'N MiB'")
    return int(number)


def _int(node: ET.Element, path: str, where: str) -> int | None:
    value = _text(node, path)
    if value is None:
        return None
    if not value.isdigit():
        raise ParseError(f"nvidia-smi XML: {where} {path} is {value!r}, not a number")
    return int(value)


def _migs(gpu: ET.Element, where: str) -> tuple[XmlMigDevice, ...]:
    out = []
    for i, m in enumerate(gpu.findall("mig_devices/mig_device")):
        at = f"{where} mig_device {i}"
        ids = [_int(m, k, at) for k in ("index", "gpu_instance_id", "compute_instance_id")]
        if any(v is None for v in ids):
            raise ParseError(f"nvidia-smi XML: {at} lacks index, gpu_instance_id or "
                             "compute_instance_id")  # fmt: skip
        index, gi, ci = (int(v or 0) for v in ids)
        out.append(
            XmlMigDevice(
                index=index,
                gpu_instance=gi,
                compute_instance=ci,
                multiprocessors=_int(m, "device_attributes/shared/multiprocessor_count", at),
                memory_total_mib=_mib(_text(m, "fb_memory_usage/total")),
            )
        )
    return tuple(out)


def parse_xml(text: str) -> list[Gpu]:
    """The GPUs of a ``nvidia-smi -q -x`` document; ParseError when it is not that document."""
    start = text.find("<?xml")
    if start < 0:
        start = text.find("<nvidia_smi_log")
    if start < 0:
        raise ParseError("no nvidia_smi_log document in the output")
    try:
        root = ET.fromstring(text[start:].encode())
    except ET.ParseError as exc:
        raise ParseError(f"malformed nvidia-smi XML: {exc}") from None
    if root.tag != "nvidia_smi_log":
        raise ParseError(f"unexpected XML root <{root.tag}>, not <nvidia_smi_log>")
    driver = _text(root, "driver_version")
    if driver is None:
        raise ParseError("nvidia-smi XML has no driver_version")
    cuda = _text(root, "cuda_version")
    gpus = []
    for i, g in enumerate(root.findall("gpu")):
        uuid = _text(g, "uuid")
        if uuid is None:
            raise ParseError(f"nvidia-smi XML: gpu {g.get('id') or i} has no uuid")
        gpus.append(
            Gpu(
                uuid=uuid,
                name=_text(g, "product_name") or "",
                serial=_text(g, "serial"),
                driver_version=driver,
                cuda_version=cuda,
                mig_mode=_text(g, "mig_mode/current_mig"),
                memory_total_mib=_mib(_text(g, "fb_memory_usage/total")),
                migs=_migs(g, f"gpu {g.get('id') or i}"),
            )
        )
    return gpus


@dataclass(frozen=True)
class MigDevice:
    """One MIG device ``nvidia-smi -L`` lists under its GPU."""

    profile: str  # "1g.10gb"
    index: int
    uuid: str


@dataclass(frozen=True)
class ListedGpu:
    """One GPU ``nvidia-smi -L`` lists, with the MIG devices under it."""

    index: int
    name: str
    uuid: str
    migs: tuple[MigDevice, ...] = ()


_GPU_LINE = re.compile(r"GPU (\d+): (.+) \(UUID: (GPU-[^)\s]+)\)")
_MIG_LINE = re.compile(r"\s+MIG (\S+)\s+Device\s+(\d+): \(UUID: (MIG-[^)\s]+)\)")


def parse_list(text: str) -> list[ListedGpu]:
    """The GPUs and MIG devices of a ``nvidia-smi -L`` output; ParseError on any other line."""
    gpus: list[ListedGpu] = []
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip()
        if not line.strip():
            continue
        if m := _GPU_LINE.fullmatch(line):
            gpus.append(ListedGpu(int(m[1]), m[2], m[3]))
        elif m := _MIG_LINE.fullmatch(line):
            if not gpus:
                raise ParseError(f"nvidia-smi -L line {n}: a MIG device before any GPU")
            last = gpus[-1]
            mig = MigDevice(m[1], int(m[2]), m[3])
            gpus[-1] = ListedGpu(last.index, last.name, last.uuid, (*last.migs, mig))
        else:
            raise ParseError(
                f"nvidia-smi -L line {n}: not a GPU or MIG device: {line.strip()[:80]!r}"
            )
    return gpus


LICENSED = "Licensed"  # the one licence state a vGPU runs unrestricted in for good


@dataclass(frozen=True)
class QueriedGpu:
    """One GPU of a ``nvidia-smi -q`` log; ``None`` where it prints N/A or nothing."""

    bus_id: str
    name: str  # Product Name: the vGPU type on a vGPU guest ("GRID V100D-8C")
    brand: str | None  # Product Brand
    uuid: str
    driver_version: str
    virtualization_mode: str | None  # "None", "Pass-Through", "VGPU", "Host VGPU"
    host_vgpu_mode: str | None  # on a vGPU host: "SR-IOV", "Non SR-IOV"
    licensed_product: str | None  # vGPU Software Licensed Product / Product Name
    license_status: str | None  # "Licensed (Expiry: ...)", "Unlicensed (Restricted)"

    @property
    def licensed(self) -> bool:
        """True only when License Status reads ``Licensed``, alone or with its expiry."""
        status = self.license_status or ""
        return status == LICENSED or status.startswith(f"{LICENSED} (")


BANNER = "==============NVSMI LOG=============="
_GPU_BLOCK = re.compile(r"GPU ([0-9A-Fa-f]{8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])")
_KEY_VALUE = re.compile(r"( *)([^:]*?\S) *:(?: (.*))?")


def _query_blocks(text: str) -> tuple[dict[str, str], list[tuple[str, dict[str, str]]]]:
    """(the header's keys, each GPU's bus id and keys by path ``Section/Key``)."""
    header: dict[str, str] = {}
    gpus: list[tuple[str, dict[str, str]]] = []
    sections: list[tuple[int, str]] = []  # (indent, title) of the open sections
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip()
        if not line.strip() or line.strip() == BANNER:
            continue
        if m := _GPU_BLOCK.fullmatch(line):
            gpus.append((m[1], {}))
            sections = []
            continue
        indent = len(line) - len(line.lstrip(" "))
        while sections and sections[-1][0] >= indent:
            sections.pop()
        kv = _KEY_VALUE.fullmatch(line)
        if kv is None:  # a section title
            if not gpus:
                raise ParseError(f"nvidia-smi -q line {n}: not a key or a GPU: {line[:80]!r}")
            sections.append((indent, line.strip()))
            continue
        key = "/".join([*(t for _, t in sections), kv[2]])
        value = (kv[3] or "").strip()
        (gpus[-1][1] if gpus else header)[key] = value
    return header, gpus


def parse_query(text: str) -> list[QueriedGpu]:
    """The GPUs of a ``nvidia-smi -q`` log; ParseError when it is not one or a GPU has no UUID."""
    if BANNER not in text:
        raise ParseError("no NVSMI LOG banner: not nvidia-smi -q output")
    header, blocks = _query_blocks(text)
    driver = header.get("Driver Version")
    if not driver or driver == "N/A":
        raise ParseError("nvidia-smi -q log has no Driver Version")

    def value(keys: dict[str, str], key: str) -> str | None:
        got = keys.get(key)
        return None if got in (None, "", "N/A") else got

    out = []
    for bus, keys in blocks:
        uuid = value(keys, "GPU UUID")
        if uuid is None:
            raise ParseError(f"nvidia-smi -q: GPU {bus} has no GPU UUID")
        out.append(
            QueriedGpu(
                bus_id=bus,
                name=value(keys, "Product Name") or "",
                brand=value(keys, "Product Brand"),
                uuid=uuid,
                driver_version=driver,
                virtualization_mode=value(keys, "GPU Virtualization Mode/Virtualization Mode"),
                host_vgpu_mode=value(keys, "GPU Virtualization Mode/Host VGPU Mode"),
                licensed_product=value(keys, "vGPU Software Licensed Product/Product Name"),
                license_status=value(keys, "vGPU Software Licensed Product/License Status"),
            )
        )
    return out
