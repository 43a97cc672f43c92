#!/usr/bin/python3
"""PyTorch FP32 peer for bench/reference_vs_peers.sh (Debian's python3-torch).

    OPENBLAS_CORETYPE=COOPERLAKE /usr/bin/python3 run_torch.py WEIGHTS.safetensors \
        --input IMAGE.npy [--repeat 3] [--threads 2] [--out EMBEDDING.npy]

Builds the model of tools/torch_siglip.py in float32, torch.set_num_threads(N), no_grad;
one untimed warm-up run, then --repeat timed forward passes (weight loading excluded).
Prints one JSON object with min/median/max milliseconds per image.

Debian's torch does its GEMMs through the system BLAS (OpenBLAS 0.3.21 here), which may
not recognise a new CPU and fall back to slow kernels: the caller sets OPENBLAS_CORETYPE
(see shared/reference/PEERS.md); it is echoed in the output.
"""
import argparse
import json
import os
import statistics
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import torch_siglip  # noqa: E402


def cpu_ticks():
    """(busy, total) jiffies of all CPUs from /proc/stat, or None off Linux."""
    try:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:9]]
    except OSError:
        return None
    return sum(v) - v[3] - v[4], sum(v)


def others_percent(t0, t1, own_seconds):
    """Share of all CPU time between two cpu_ticks() that other processes used."""
    if t0 is None or t1 is None or t1[1] <= t0[1]:
        return None
    hz = os.sysconf("SC_CLK_TCK")
    other = (t1[0] - t0[0]) / hz - own_seconds
    return max(0.0, 100.0 * other / ((t1[1] - t0[1]) / hz))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("weights")
    ap.add_argument("--input", required=True)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out")
    args = ap.parse_args()
    if args.repeat < 1 or args.threads < 1:
        ap.error("--repeat and --threads must be >= 1")

    torch.set_num_threads(args.threads)
    t0 = time.perf_counter()
    model = torch_siglip.load_model(args.weights, torch.float32)
    load_s = time.perf_counter() - t0
    pixels = torch.from_numpy(torch_siglip.load_images([args.input]))

    times, others = [], []
    with torch.no_grad():
        y = model(pixels)  # warm-up
        for _ in range(args.repeat):
            c0, k0 = time.process_time(), cpu_ticks()
            t = time.perf_counter()
            y = model(pixels)
            times.append((time.perf_counter() - t) * 1e3)
            others.append(others_percent(k0, cpu_ticks(), time.process_time() - c0))
    if args.out:
        np.save(args.out, y.numpy().astype(np.float32))
    print(json.dumps({
        "peer": "torch",
        "version": f"torch {torch.__version__}",
        "dtype": "float32",
        "threads": torch.get_num_threads(),
        "openblas_coretype": os.environ.get("OPENBLAS_CORETYPE"),
        "allocator": "jemalloc" if "jemalloc" in os.environ.get("LD_PRELOAD", "") else "glibc",
        "malloc_conf": os.environ.get("MALLOC_CONF"),
        "repeat": args.repeat,
        "load_s": load_s,
        "ms": times,
        "others_cpu_percent": others,
        "min_ms": min(times),
        "median_ms": statistics.median(times),
        "max_ms": max(times),
        "output_shape": list(y.shape),
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
