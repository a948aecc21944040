"""Plays `nvidia-smi` inside a simulated GPU pod: `python smi.py PROFILE.json [ARGS...]`.

Standalone (standard library only): the process runtime runs it in place of the
binary. PROFILE.json is the node's GPU profile with the pod's GPUs (written by
`model.smi_argv`), or `null` on a node without GPUs. Supported invocations, in
the layout of the real tool (driver 5xx): no arguments (the summary table),
`-q -x` / `--query --xml-format` (the XML log, nvsmi_device_v12.dtd), `-q` /
`--query` (the text log, keys in the real tool's 42-column layout, the fields
its readers use, in its order; from a real 535 vGPU guest's log,
tests/data/real/nvidia-smi/tkgi-v100d-8c-vgpu-guest-q.txt) and `-L`. On a node
holding vGPUs (the profile's `vgpu`, `simcluster.gpu.vgpu`) the text log says
`VGPU` and prints the licensed product, as a guest does; elsewhere `Pass-Through`.
With MIG devices (the profile's `migs`: the pod's MIG devices, each its GPU's
host index, its index there and its profile), `-L` lists each under its GPU as
the real tool does (`  MIG 1g.10gb     Device  0: (UUID: MIG-...)`, numbered
from 0 per GPU as the container sees them), and the XML says MIG is enabled and
lists them under their GPU's `mig_devices`, each `mig_device` in the layout of a
real A100's (`tests/data/real/nvidia-smi/a100-sxm4-v12.xml`, driver 535): `index`
(as `-L` numbers them), `gpu_instance_id`, `compute_instance_id` (0: one compute
instance spanning its GPU instance, as the GPU Operator's MIG manager creates
them), `device_attributes/shared` with the multiprocessor count where it is
measured (`MIG_SMS`; the element is left out elsewhere), and `fb_memory_usage`
(its memory as GFD labels it). The GPU instance ids are the device's index on
its GPU plus one: unique per GPU as the driver's are, not its placement
numbering (the capture's four 1g.20gb are 3 to 6). The XML names no profile,
as the real tool's does not.
"""

from __future__ import annotations

import json
import sys
import time
import uuid
from typing import Any

DRIVER_NOT_LOADED = (
    "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
    "Make sure that the latest NVIDIA driver is installed and running.\n"
)
EXIT_DRIVER_NOT_LOADED = 9  # nvidia-smi's documented return value for this case
EXIT_BAD_ARGS = 2
BUS = (0x18, 0x2A, 0x3A, 0x5D, 0x9A, 0xAB, 0xBA, 0xDB)  # PCI buses of an 8-GPU board
POWER_CAP_W = 700
INNER = 89  # width between the table's outer bars
COLS = (41, 24, 22)
# (GFD product's GPU model, MIG profile) -> multiprocessors of one such MIG device, where
# measured: the A100 80GB's 1g.20gb from the capture in the module docstring; the H100
# 80GB's from `nvidia-smi mig -lgip` on one (its SM column, https://jbarrow.ai/field_notes/nvidia-mig/).
MIG_SMS = {
    ("A100 SXM4 80GB", "1g.20gb"): 14,
    ("H100 80GB", "1g.10gb"): 16,
    ("H100 80GB", "1g.20gb"): 26,
    ("H100 80GB", "2g.20gb"): 32,
    ("H100 80GB", "3g.40gb"): 60,
}


def gpu_uuid(node: str, index: int) -> str:
    """Stable per node and device, in nvidia-smi's GPU-xxxxxxxx-... form."""
    return "GPU-" + str(uuid.uuid5(uuid.NAMESPACE_DNS, f"{node}/gpu-{index}"))


def mig_uuid(node: str, gpu: int, mig: int) -> str:
    """Stable per node, GPU and MIG device, in nvidia-smi's MIG-xxxxxxxx-... form."""
    return "MIG-" + str(uuid.uuid5(uuid.NAMESPACE_DNS, f"{node}/gpu-{gpu}/mig-{mig}"))


def bus_id(index: int) -> str:
    """The PCI bus id nvidia-smi prints for host GPU ``index``."""
    return f"00000000:{BUS[index % len(BUS)] + index // len(BUS):02X}:00.0"


def visible(profile: dict[str, Any]) -> list[int]:
    """Host indexes of the GPUs this pod sees (a lost GPU drops the last one)."""
    gpus = list(profile.get("gpus") or [])
    if "gpu-lost" in profile.get("faults", ()) and gpus:
        gpus = gpus[:-1]
    return gpus


def _row(*cells: str) -> str:
    return "|" + "|".join(c[:w].ljust(w) for c, w in zip(cells, COLS, strict=True)) + "|"


def _rule(fill: str = "-", edge: str = "|", mid: str = "+") -> str:
    return edge + mid.join(fill * w for w in COLS) + edge


def table(profile: dict[str, Any]) -> str:
    """The default `nvidia-smi` summary."""
    drv, cuda, mem = profile["driver"], profile["cuda"], profile["memoryMiB"]
    lines = [
        time.strftime("%a %b %d %H:%M:%S %Y").ljust(31),
        "+" + "-" * INNER + "+",
        f"| NVIDIA-SMI {drv:<23}Driver Version: {drv:<15}CUDA Version: {cuda:<9}|",
        _rule("-", "|", "+"),
        _row(
            " GPU  Name                 Persistence-M",
            " Bus-Id          Disp.A",
            " Volatile Uncorr. ECC",
        ),
        _row(
            " Fan  Temp   Perf          Pwr:Usage/Cap",
            "           Memory-Usage",
            " GPU-Util  Compute M.",
        ),
        _row("", "", "               MIG M."),
        _rule("=", "|", "+"),
    ]
    for n, host in enumerate(visible(profile)):
        lines += [
            _row(
                f"{n:>4}  {profile['product']:<29}  On  ", f"{bus_id(host):>19} Off ", f"{'0':>21} "
            ),
            _row(
                f" N/A   {30 + host}C    P0{69:>15}W / {POWER_CAP_W:>4}W ",
                f"{'1MiB':>11} / {str(mem) + 'MiB':>9} ",
                f"{'0%':>8}      Default ",
            ),
            _row("", "", f"{'Disabled':>21} "),
            "+" + "+".join("-" * w for w in COLS) + "+",
        ]
    lines += [
        " " * (INNER + 2),
        "+" + "-" * INNER + "+",
        "| Processes:".ljust(INNER + 1) + "|",
        "|  GPU   GI   CI              PID   Type   Process name"
        "                        GPU Memory |",
        "|        ID   ID" + " " * 63 + "Usage      |",
        "|" + "=" * INNER + "|",
        "|  No running processes found".ljust(INNER + 1) + "|",
        "+" + "-" * INNER + "+",
    ]
    return "\n".join(lines) + "\n"


def _pod_migs(profile: dict[str, Any], host: int) -> list[dict[str, Any]]:
    """The pod's MIG devices on host GPU ``host``, in their order there."""
    return sorted((m for m in profile.get("migs") or [] if m["gpu"] == host),
                  key=lambda m: m["mig"])  # fmt: skip


def _mig_devices(profile: dict[str, Any], host: int) -> list[str]:
    """`<mig_devices>` of one GPU: the pod's MIG devices on it (none: no element)."""
    migs = _pod_migs(profile, host)
    if not migs:
        return []
    product = str(profile["product"])
    out = ["\t\t<mig_devices>"]
    for k, m in enumerate(migs):
        mem = int(m.get("memoryMiB") or 0)
        sms = next((n for (model, p), n in MIG_SMS.items() if model in product
                    and p == m["profile"]), None)  # fmt: skip
        out += [
            "\t\t\t<mig_device>",
            f"\t\t\t\t<index>{k}</index>",
            f"\t\t\t\t<gpu_instance_id>{m['mig'] + 1}</gpu_instance_id>",
            "\t\t\t\t<compute_instance_id>0</compute_instance_id>",
        ]
        if sms is not None:
            out += [
                "\t\t\t\t<device_attributes>",
                "\t\t\t\t\t<shared>",
                f"\t\t\t\t\t\t<multiprocessor_count>{sms}</multiprocessor_count>",
                "\t\t\t\t\t</shared>",
                "\t\t\t\t</device_attributes>",
            ]
        out += [
            "\t\t\t\t<fb_memory_usage>",
            f"\t\t\t\t\t<total>{mem} MiB</total>",
            "\t\t\t\t\t<reserved>0 MiB</reserved>",
            "\t\t\t\t\t<used>0 MiB</used>",
            f"\t\t\t\t\t<free>{mem} MiB</free>",
            "\t\t\t\t</fb_memory_usage>",
            "\t\t\t</mig_device>",
        ]
    return [*out, "\t\t</mig_devices>"]


def xml_log(profile: dict[str, Any]) -> str:
    """`nvidia-smi -q -x`: the fields a consumer reads, in the real element layout."""
    gpus = visible(profile)
    mem = profile["memoryMiB"]
    mig = "Enabled" if profile.get("migEnabled") else "Disabled"
    out = [
        '<?xml version="1.0" ?>',
        '<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v12.dtd">',
        "<nvidia_smi_log>",
        f"\t<timestamp>{time.strftime('%a %b %d %H:%M:%S %Y')}</timestamp>",
        f"\t<driver_version>{profile['driver']}</driver_version>",
        f"\t<cuda_version>{profile['cuda']}</cuda_version>",
        f"\t<attached_gpus>{len(gpus)}</attached_gpus>",
    ]
    for host in gpus:
        bus = bus_id(host)
        out += [
            f'\t<gpu id="{bus}">',
            f"\t\t<product_name>{profile['product']}</product_name>",
            "\t\t<product_brand>NVIDIA</product_brand>",
            "\t\t<persistence_mode>Enabled</persistence_mode>",
            "\t\t<mig_mode>",
            f"\t\t\t<current_mig>{mig}</current_mig>",
            f"\t\t\t<pending_mig>{mig}</pending_mig>",
            "\t\t</mig_mode>",
            *_mig_devices(profile, host),
            f"\t\t<uuid>{gpu_uuid(profile['node'], host)}</uuid>",
            f"\t\t<minor_number>{host}</minor_number>",
            "\t\t<pci>",
            f"\t\t\t<pci_bus>{bus[9:11]}</pci_bus>",
            "\t\t\t<pci_device>00</pci_device>",
            "\t\t\t<pci_domain>0000</pci_domain>",
            f"\t\t\t<pci_bus_id>{bus}</pci_bus_id>",
            "\t\t</pci>",
            "\t\t<fb_memory_usage>",
            f"\t\t\t<total>{mem} MiB</total>",
            "\t\t\t<used>1 MiB</used>",
            f"\t\t\t<free>{mem - 1} MiB</free>",
            "\t\t</fb_memory_usage>",
            "\t\t<utilization>",
            "\t\t\t<gpu_util>0 %</gpu_util>",
            "\t\t\t<memory_util>0 %</memory_util>",
            "\t\t</utilization>",
            "\t\t<temperature>",
            f"\t\t\t<gpu_temp>{30 + host} C</gpu_temp>",
            "\t\t</temperature>",
            "\t\t<processes>",
            "\t\t</processes>",
            "\t</gpu>",
        ]
    out.append("</nvidia_smi_log>")
    return "\n".join(out) + "\n"


KEY_WIDTH = 42  # nvidia-smi -q pads every key (with its indent) to this column, then ": "


def _kv(indent: int, key: str, value: str) -> str:
    return f"{' ' * indent}{key}".ljust(KEY_WIDTH) + f": {value}"


def query(profile: dict[str, Any]) -> str:
    """`nvidia-smi -q`: the text log, a subset of its keys in the real order and layout."""
    gpus = visible(profile)
    mem = int(profile["memoryMiB"])
    mig = "Enabled" if profile.get("migEnabled") else "Disabled"
    vgpu = profile.get("vgpu") or {}
    lines = [
        "",
        "==============NVSMI LOG==============",
        "",
        _kv(0, "Timestamp", time.strftime("%a %b %d %H:%M:%S %Y")),
        _kv(0, "Driver Version", str(profile["driver"])),
        _kv(0, "CUDA Version", str(profile["cuda"])),
        "",
        _kv(0, "Attached GPUs", str(len(gpus))),
    ]
    for host in gpus:
        lines += [
            f"GPU {bus_id(host)}",
            _kv(4, "Product Name", str(profile["product"])),
            _kv(4, "Product Brand", str(vgpu.get("brand") or "NVIDIA")),
            _kv(4, "Product Architecture", "Hopper"),
            "    MIG Mode",
            _kv(8, "Current", mig),
            _kv(8, "Pending", mig),
            _kv(4, "GPU UUID", gpu_uuid(profile["node"], host)),
            _kv(4, "Minor Number", str(host)),
            "    GPU Virtualization Mode",
            _kv(8, "Virtualization Mode", "VGPU" if vgpu else "Pass-Through"),
            _kv(8, "Host VGPU Mode", "N/A"),
        ]
        if vgpu:
            lines += [
                "    vGPU Software Licensed Product",
                _kv(8, "Product Name", str(vgpu["licensedProduct"])),
                _kv(8, "License Status", str(vgpu["licenseStatus"])),
            ]
        lines += [
            "    PCI",
            _kv(8, "Bus Id", bus_id(host)),
            "    FB Memory Usage",
            _kv(8, "Total", f"{mem} MiB"),
            _kv(8, "Used", "0 MiB"),
            _kv(8, "Free", f"{mem} MiB"),
            _kv(4, "Processes", "None"),
        ]
    return "\n".join(lines) + "\n"


def listing(profile: dict[str, Any]) -> str:
    """`nvidia-smi -L`: each GPU, and under it the MIG devices the pod was given."""
    node, lines = profile["node"], []
    for n, host in enumerate(visible(profile)):
        lines.append(f"GPU {n}: {profile['product']} (UUID: {gpu_uuid(node, host)})\n")
        for k, m in enumerate(_pod_migs(profile, host)):
            uid = mig_uuid(node, host, m["mig"])
            lines.append(f"  MIG {m['profile']:<11} Device {k:>2}: (UUID: {uid})\n")
    return "".join(lines)


def main(argv: list[str]) -> int:
    """Print what nvidia-smi would print on this node for this pod; return its exit code."""
    with open(argv[0], encoding="utf-8") as f:
        profile = json.load(f)
    args = argv[1:]
    if profile is None:
        sys.stderr.write('exec: "nvidia-smi": executable file not found in $PATH\n')
        return 127
    if "driver-not-loaded" in profile.get("faults", ()):
        sys.stdout.write(DRIVER_NOT_LOADED)
        return EXIT_DRIVER_NOT_LOADED
    flags = set(args)
    if not args:
        sys.stdout.write(table(profile))
    elif flags in ({"-q", "-x"}, {"--query", "--xml-format"}, {"-q", "--xml-format"}):
        sys.stdout.write(xml_log(profile))
    elif flags in ({"-q"}, {"--query"}):
        sys.stdout.write(query(profile))
    elif flags == {"-L"}:
        sys.stdout.write(listing(profile))
    else:
        sys.stdout.write(f"Invalid combination of input arguments: {' '.join(args)}\n")
        return EXIT_BAD_ARGS
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
