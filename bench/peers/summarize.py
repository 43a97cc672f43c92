#!/usr/bin/python3
"""Table and JSON for bench/reference_vs_peers.sh.

    summarize.py OUTDIR --layers N [--weights F] [--onnx F] [--input F]

Reads OUTDIR/{tilevit,onnxruntime,torch[,torch_jemalloc]}.json (the runners' JSON) and the
embeddings OUTDIR/emb_<same>.npy, prints a table (ms per image min/median/max,
effective GFLOP/s at the median, cosine of each peer's embedding vs tilevit's FP32 one)
and writes OUTDIR/reference_vs_peers.json.
"""
import argparse
import datetime
import json
import os
import platform
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
from torch_siglip import SiglipConfig  # noqa: E402


def gflop_per_image(layers: int) -> float:
    """So400m/14 at 378x378: 670.35 GFLOP for 27 layers (WORKLOAD.md), 24.65 per layer plus
    4.80 for the embedding and MAP head (2 FLOP per multiply-add, GEMMs and attention)."""
    c = SiglipConfig(width=1152, heads=16, head_dim=72, mlp=4304, layers=layers, patch=14,
                     channels=3, grid=27)
    return c.flops_per_image() / 1e9


def cpu_model() -> str:
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            if line.startswith("Model name:"):
                return line.split(":", 1)[1].strip()
    except (OSError, subprocess.CalledProcessError):
        pass
    return platform.processor() or "unknown"


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    a = a.astype(np.float64).ravel()
    b = b.astype(np.float64).ravel()
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def tilevit_times(j: dict) -> tuple[float | None, float, float | None, list]:
    """tilevit reference --json: fp32_seconds is the median over --repeat runs; per-run
    times are used for min/max when the JSON has them."""
    runs = None
    for key in ("fp32_seconds_runs", "fp32_runs_seconds", "fp32_seconds_all", "fp32_times"):
        if isinstance(j.get(key), list) and j[key]:
            runs = [float(x) * 1e3 for x in j[key]]
            break
    median = float(j["fp32_seconds"]) * 1e3
    lo = j.get("fp32_seconds_min")
    hi = j.get("fp32_seconds_max")
    if runs:
        lo, hi = min(runs), max(runs)
    else:
        lo = float(lo) * 1e3 if lo is not None else None
        hi = float(hi) * 1e3 if hi is not None else None
    return lo, median, hi, runs or []


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("outdir")
    ap.add_argument("--layers", type=int, required=True)
    ap.add_argument("--repeat", type=int)
    ap.add_argument("--weights")
    ap.add_argument("--onnx")
    ap.add_argument("--input")
    ap.add_argument("--tilevit-command")
    ap.add_argument("--tilevit-version", default="tilevit")
    args = ap.parse_args()
    d = args.outdir
    gflop = gflop_per_image(args.layers)

    ref_emb = np.load(os.path.join(d, "emb_tilevit.npy"))
    with open(os.path.join(d, "tilevit.json")) as f:
        tv = json.load(f)
    lo, med, hi, runs = tilevit_times(tv)
    rows = [{"peer": "tilevit reference FP32", "version": args.tilevit_version,
             "min_ms": lo, "median_ms": med, "max_ms": hi, "ms": runs,
             "cosine_vs_tilevit": 1.0, "raw": tv}]
    labels = {"onnxruntime": "ONNX Runtime FP32", "torch": "PyTorch FP32",
              "torch_jemalloc": "PyTorch FP32 + jemalloc"}
    for name, label in labels.items():
        path = os.path.join(d, f"{name}.json")
        if not os.path.exists(path):
            continue
        with open(path) as f:
            j = json.load(f)
        emb = np.load(os.path.join(d, f"emb_{name}.npy"))
        rows.append({"peer": label, "version": j.get("version"), "min_ms": j["min_ms"],
                     "median_ms": j["median_ms"], "max_ms": j["max_ms"], "ms": j["ms"],
                     "cosine_vs_tilevit": cosine(emb, ref_emb),
                     "max_abs_diff_vs_tilevit": float(np.abs(emb.astype(np.float64).ravel()
                                                             - ref_emb.astype(np.float64).ravel()).max()),
                     "raw": j})
    for r, name in zip(rows, ["tilevit", *[n for n in labels
                                           if os.path.exists(os.path.join(d, f"{n}.json"))]]):
        r["gflops_at_median"] = gflop / (r["median_ms"] / 1e3)
        others = os.path.join(d, f"{name}.others")
        r["other_processes_cpu_percent"] = (float(open(others).read()) if os.path.exists(others)
                                            else None)
        per_run = [x for x in r.get("raw", {}).get("others_cpu_percent") or [] if x is not None]
        r["other_processes_cpu_percent_timed_runs"] = per_run or None

    def cos(x):
        return f"1 - {1 - x:.1e}" if 0.999999 < x < 1 else f"{x:.9f}"

    def pct(x):
        return "-" if x is None else f"{x:.0f}%"

    def share(r):  # per timed run where the runner measured it, else over the whole process
        runs = r["other_processes_cpu_percent_timed_runs"]
        if runs:
            return "runs " + " / ".join(pct(x) for x in runs)
        return "process " + pct(r["other_processes_cpu_percent"])

    def ms(x):
        return "-" if x is None else f"{x:,.0f}" if x >= 100 else f"{x:,.1f}"

    machine = {"cpu": cpu_model(), "cpus": os.cpu_count(), "kernel": platform.release(),
               "load_average_after": " ".join(f"{x:.2f}" for x in os.getloadavg())}
    title = (f"So400m/14 vision tower, {args.layers} layer(s) + MAP head, batch 1, 378x378, "
             f"{gflop:.2f} GFLOP/image, 2 threads; {machine['cpu']}, {machine['cpus']} CPUs")
    print(title)
    print("| peer | ms per image min / median / max | GFLOP/s (median) | cosine vs tilevit "
          "| max abs diff vs tilevit | other processes' CPU share |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        diff = r.get("max_abs_diff_vs_tilevit")
        print(f"| {r['peer']} ({r['version']}) | {ms(r['min_ms'])} / {ms(r['median_ms'])} / "
              f"{ms(r['max_ms'])} | {r['gflops_at_median']:.1f} | {cos(r['cosine_vs_tilevit'])} "
              f"| {'-' if diff is None else f'{diff:.2e}'} "
              f"| {share(r)} |")
    busy = [r["peer"] for r in rows
            if max(r["other_processes_cpu_percent_timed_runs"]
                   or [r["other_processes_cpu_percent"] or 0]) > 5]
    if busy:
        print(f"warning: other processes used more than 5% of the CPUs during: {', '.join(busy)}; "
              f"these are not the times of an idle machine")
    result = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": machine,
        "layers": args.layers,
        "repeat": args.repeat,
        "gflop_per_image": gflop,
        "weights": args.weights,
        "onnx": args.onnx,
        "input": args.input,
        "tilevit_command": args.tilevit_command,
        "results": rows,
    }
    with open(os.path.join(d, "reference_vs_peers.json"), "w") as f:
        json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
