#!/usr/bin/python3
"""Sweep the FP8 scale of every GEMM: compile at each scale, call the device model, and plot
the cosine against the FP32 reference over the modelled cycles.

    PYTHONPATH=build/python /usr/bin/python3 examples/fp8_sweep.py --out fp8.png
    PYTHONPATH=build/python /usr/bin/python3 examples/fp8_sweep.py --model small --machine test16 --out fp8.png
"""
import argparse

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import tilevit  # noqa: E402


def cosine(a, b):
    a, b = a.reshape(-1).astype(np.float64), b.reshape(-1).astype(np.float64)
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="so400m")
    parser.add_argument("--machine", default="c600")
    parser.add_argument("--layers", type=int)
    parser.add_argument("--scales", type=int, nargs="+", default=[-8, -6, -4, -2, 0])
    parser.add_argument("--optimization-steps", type=int, default=0)
    parser.add_argument("--out", default="fp8.png")
    args = parser.parse_args()

    rows = []
    for scale in args.scales:
        program = tilevit.compile(model=args.model, machine=args.machine, layers=args.layers, fp8_scale=scale,
                                  optimization_steps=args.optimization_steps)
        result = tilevit.Device(program)()
        fp32 = tilevit.reference(program, device=False)["fp32"]
        rows.append((scale, result.cycles, cosine(result.embeddings, fp32)))
        print("fp8_scale %3d: %12s cycles, cosine %.6f" % (scale, format(result.cycles, ","), rows[-1][2]))
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot([r[1] for r in rows], [r[2] for r in rows], "o-")
    for scale, cycles, cos in rows:
        ax.annotate("S=%d" % scale, (cycles, cos), textcoords="offset points", xytext=(4, 4))
    ax.set_xlabel("modelled cycles a call")
    ax.set_ylabel("cosine vs FP32 reference")
    ax.set_title("%s on %s: FP8 scale sweep" % (args.model, args.machine))
    fig.tight_layout()
    fig.savefig(args.out, dpi=120)
    print("wrote", args.out)


if __name__ == "__main__":
    main()
