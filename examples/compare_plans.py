#!/usr/bin/python3
"""Compare two plans of one model: the compiler's heuristic plan and the searched one (or a
plan file), call each on the device model, and chart the modelled cycles of every superstep.

    PYTHONPATH=build/python /usr/bin/python3 examples/compare_plans.py --out plans.png
    PYTHONPATH=build/python /usr/bin/python3 examples/compare_plans.py --model small --machine test16 --out plans.png
"""
import argparse

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402

import tilevit  # noqa: E402


def step_cycles(program):
    """Cycles of each executed superstep in order (the loop body once per layer)."""
    steps = program.steps()
    steps["cycles"] = steps["compute_cycles"] + steps["exchange_cycles"] + steps["sync_cycles"]
    return steps


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="so400m")
    parser.add_argument("--machine", default="c600")
    parser.add_argument("--layers", type=int)
    parser.add_argument("--plan", help="a plan file for the second program (default: the search's plan)")
    parser.add_argument("--optimization-steps", type=int, default=8)
    parser.add_argument("--out", default="plans.png")
    args = parser.parse_args()

    common = dict(model=args.model, machine=args.machine, layers=args.layers)
    programs = {
        "heuristic": tilevit.compile(optimization_steps=0, **common),
        ("plan file" if args.plan else "searched"): tilevit.compile(
            plan=args.plan, optimization_steps=None if args.plan else args.optimization_steps, **common),
    }
    fig, ax = plt.subplots(figsize=(12, 4))
    width = 0.4
    for i, (name, program) in enumerate(programs.items()):
        result = tilevit.Device(program)()  # one call with the seed's default image
        steps = step_cycles(program)
        ax.bar(steps["step"] + (i - 0.5) * width, steps["cycles"], width=width,
               label="%s: %s cycles a call" % (name, format(result.cycles, ",")))
        print("%-10s %12s cycles a call, sha256 %s" % (name, format(result.cycles, ","), program.sha256[:16]))
    ax.set_xlabel("superstep (the loop body once)")
    ax.set_ylabel("modelled cycles")
    ax.set_title("%s on %s: cycles per superstep" % (args.model, args.machine))
    ax.legend()
    fig.tight_layout()
    fig.savefig(args.out, dpi=120)
    print("wrote", args.out)


if __name__ == "__main__":
    main()
