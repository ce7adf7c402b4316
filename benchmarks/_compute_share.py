"""How much of the machine's arithmetic a detector uses: the FLOPs of one scoring pass (counted by torch's
``FlopCounterMode``, which adds up matrix multiplications and attention, the work that dominates these
models), the seconds it takes, and the share of the device's peak that makes.

The peak of a GPU is its datasheet's dense bf16 tensor-core figure, looked up by the device's name (a
figure it does not know is given with ``--peak-tflops``). A CPU has no such figure worth trusting, so its
"peak" is measured here: the best rate of a large matrix multiplication in the model's dtype. On a CPU the
share therefore says how close the scorer comes to what the same machine's matmul reaches, not to a
datasheet.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

# Dense (no sparsity) bf16 tensor-core peaks from the vendors' datasheets, in TFLOP/s; longest name first,
# since "H100 PCIe" must not be read as "H100".
GPU_BF16_PEAK_TFLOPS = {
    "H100 PCIe": 756.0,
    "H100 NVL": 835.0,
    "H100": 989.4,
    "H200": 989.4,
    "A100": 312.0,
    "L40S": 362.0,
    "L4": 121.0,
}


@dataclass(frozen=True)
class Peak:
    flops_per_second: float
    source: str


def device_peak(device: str, dtype, override_tflops: float | None = None) -> Peak | None:
    """The peak FLOP/s the share is taken of: given, a GPU's datasheet figure, or a CPU's measured matmul."""
    import torch

    if override_tflops:
        return Peak(override_tflops * 1e12, "given with --peak-tflops")
    if str(device).startswith("cuda"):
        name = torch.cuda.get_device_name(torch.device(device))
        for key in sorted(GPU_BF16_PEAK_TFLOPS, key=len, reverse=True):
            if key in name:
                return Peak(GPU_BF16_PEAK_TFLOPS[key] * 1e12, f"{name}: datasheet dense bf16 {GPU_BF16_PEAK_TFLOPS[key]:.0f} TFLOP/s")
        return None
    rate = measured_matmul_rate(dtype)
    return Peak(rate, f"CPU: best measured {str(dtype).replace('torch.', '')} matmul, {rate / 1e9:.1f} GFLOP/s")


@cache
def measured_matmul_rate(dtype, size: int = 1024, repeat: int = 5) -> float:
    """The best FLOP/s of ``repeat`` square matrix multiplications of ``size`` on the CPU, in ``dtype``
    (measured once per run, so every batch size is compared with the same figure)."""
    import torch

    a = torch.randn(size, size, dtype=dtype)
    b = torch.randn(size, size, dtype=dtype)
    torch.mm(a, b)  # warm-up
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        torch.mm(a, b)
        best = min(best, time.perf_counter() - start)
    return 2 * size**3 / best


def counted_flops(run: Callable[[], object]) -> int:
    """The FLOPs torch counts while ``run()`` executes (matmuls, convolutions, attention)."""
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False) as counter:
        run()
    return int(counter.get_total_flops())


def timed(run: Callable[[], object], device: str) -> tuple[object, float]:
    """What ``run()`` returns and the seconds it takes, waiting for a GPU's queued kernels before the clock stops."""
    import torch

    start = time.perf_counter()
    result = run()
    if str(device).startswith("cuda"):
        torch.cuda.synchronize()
    return result, time.perf_counter() - start


def share_line(flops: int, seconds: float, peak: Peak | None) -> str:
    """``1.23 TFLOP/s, 4.5% of peak (source)``, or the rate alone when no peak is known."""
    rate = flops / seconds
    if peak is None:
        return f"{rate / 1e12:.3f} TFLOP/s (no peak known for this device: give --peak-tflops)"
    return f"{rate / 1e12:.3f} TFLOP/s, {100 * rate / peak.flops_per_second:.1f}% of peak ({peak.source})"
