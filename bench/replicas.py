#!/usr/bin/python3
"""The model against the original's measured builds (issue 31; docs/FIDELITY.md).

Compiles every replica of bench/replicas.json with its plan pinned (no search), and prints
side by side with the original's published figures: the total and its error, a layer's
modelled span, the kernels' longest calls, a layer's exchange phases and their sum. The
compile JSON and a summary go to bench/out/replicas/; --update-doc also rewrites the
validation table of docs/FIDELITY.md and the embedded table the commands report
(src/target/machines/model_validation.json); --check compares that table with a fresh run
(the ctest `model_validation_current`). Usage: bench/replicas.py [--build DIR]
[--update-doc | --check] [--out DIR]
"""
import argparse
import json
import os
import subprocess
import sys

LAYERS = 27  # every replica is So400m/14's 27 layers + MAP
TABLE = "src/target/machines/model_validation.json"
DOC = "docs/FIDELITY.md"
BEGIN, END = "<!-- replicas:begin (bench/replicas.py --update-doc) -->", "<!-- replicas:end -->"


def compile_replica(build, r, out_dir):
    cmd = [f"{build}/tilevit", "compile", "--machine", r["machine"], "--batch", str(r["batch"]), "--plan", r["plan"],
           "--optimization-steps", "0", "--kernels", "--steps", "--json"]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"{r['name']}: {' '.join(cmd)} failed: {run.stderr.strip().splitlines()[-1]}")
    with open(os.path.join(out_dir, r["name"] + ".json"), "w") as f:
        f.write(run.stdout)
    return json.loads(run.stdout)


def longest(compiled, key):
    """The longest in-loop call of `key` ('kind' or 'kind operation'): the matrix term of a GEMM."""
    kind, _, op = key.partition(" ")
    best = None
    for k in compiled["kernel_maxima"]:
        if not k["in_loop"] or k["kind"].replace("_fp8", "") != kind.replace("_fp8", "") or (op and k["operation"] != op):
            continue
        cycles = k.get("matrix_cycles", k["max_cycles"])
        best = cycles if best is None else max(best, cycles)
    return best


def summarise(r, compiled):
    loop = [s for s in compiled["steps"] if s["in_loop"]]
    layer = sum(s["entry_skew_cycles"] + s["compute_cycles"] + s["exchange_cycles"] + s["sync_cycles"] for s in loop)
    total, measured = compiled["estimated_cycles"], r["measured_cycles"]
    rest = total - LAYERS * layer  # prologue and epilogue as modelled
    published = r.get("published", {})
    kernels = {k: {"measured": v[0], "source": v[1], "modelled": longest(compiled, k)}
               for k, v in published.get("kernels", {}).items()}
    return {"name": r["name"], "machine": r["machine"], "batch": r["batch"], "measured_cycles": measured,
            "modelled_cycles": total, "error_percent": round(100.0 * (total - measured) / measured, 2),
            "layer_cycles": layer, "measured_layer_cycles": (measured - rest) // LAYERS,
            "layer_compute_cycles": sum(s["compute_cycles"] for s in loop),
            "layer_exchange_cycles": sum(s["exchange_cycles"] for s in loop),
            "layer_sync_cycles": sum(s["sync_cycles"] + s["entry_skew_cycles"] for s in loop),
            "layer_phases": sum(1 for s in loop if s["transfers"] > 0),
            "published": {k: v for k, v in published.items() if k != "kernels"}, "kernels": kernels}


def text_table(rows):
    out = ["| build | measured | modelled | error | layer: modelled / measured-derived | compute + exchange + sync and entry skew "
           "| phases | published per layer |", "|---|---:|---:|---:|---:|---:|---:|---|"]
    for s in rows:
        pub = "; ".join(f"{k.replace('_', ' ')} {v[0]:,}" for k, v in s["published"].items()) or "-"
        out.append(f"| {s['name']} (batch {s['batch']}, {s['machine']}) | {s['measured_cycles']:,} | "
                   f"{s['modelled_cycles']:,} | {s['error_percent']:+.1f}% | {s['layer_cycles']:,} / "
                   f"{s['measured_layer_cycles']:,} | {s['layer_compute_cycles']:,} + {s['layer_exchange_cycles']:,} + "
                   f"{s['layer_sync_cycles']:,} | {s['layer_phases']} | {pub} |")
    out += ["", "| build | kernel (longest in-loop call) | modelled | original, in-model | difference | source |",
            "|---|---|---:|---:|---:|---|"]
    for s in rows:
        for k, v in s["kernels"].items():
            diff = "-" if v["modelled"] is None else f"{100.0 * (v['modelled'] - v['measured']) / v['measured']:+.1f}%"
            modelled = "not a kernel here" if v["modelled"] is None else f"{v['modelled']:,}"
            out.append(f"| {s['name']} | {k} | {modelled} | {v['measured']:,} | {diff} | {v['source']} |")
    return "\n".join(out) + "\n"


def validation(rows):
    errors = [s["error_percent"] for s in rows]
    return {"builds": len(rows), "min_error_percent": min(errors), "max_error_percent": max(errors),
            "source": "bench/replicas.py over bench/replicas.json (model minus measured, percent of measured)",
            "replicas": [{k: s[k] for k in ("name", "measured_cycles", "modelled_cycles", "error_percent")}
                         for s in rows]}


def update_doc(table):
    text = open(DOC).read()
    if BEGIN not in text or END not in text:
        sys.exit(f"{DOC}: no {BEGIN} ... {END} block to replace")
    head, rest = text.split(BEGIN, 1)
    open(DOC, "w").write(head + BEGIN + "\n" + table + rest[rest.index(END):])


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", default="build")
    p.add_argument("--update-doc", action="store_true")
    p.add_argument("--check", action="store_true")
    p.add_argument("--out", default="bench/out/replicas", help="where the compile JSON and the summary go")
    a = p.parse_args()
    out_dir = a.out
    os.makedirs(out_dir, exist_ok=True)
    manifest = json.load(open("bench/replicas.json"))
    rows = [summarise(r, compile_replica(a.build, r, out_dir)) for r in manifest["replicas"]]
    table = text_table(rows)
    summary = validation(rows)
    with open(os.path.join(out_dir, "summary.json"), "w") as f:
        json.dump({"validation": summary, "replicas": rows}, f, indent=1)
    print(table)
    if a.check:
        kept = json.load(open(TABLE))
        if kept != summary:
            sys.exit(f"{TABLE} is not the model's current validation: run bench/replicas.py --update-doc")
        print(f"{TABLE}: current")
    if a.update_doc:
        with open(TABLE, "w") as f:
            f.write(json.dumps(summary, indent=1) + "\n")
        update_doc(table)


if __name__ == "__main__":
    main()
