#!/usr/bin/python3
"""Writes the replica plans of bench/replicas.json into bench/plans/.

Each plan is tilevit's heuristic plan for the replica's machine and batch (`tilevit compile
--optimization-steps 0 --write-plan`), with every published choice of the manifest's
"pins" pinned over it: a whole plan (--plan fixes every grid), whose unpublished ops keep
tilevit's own choice. Run from the repository after a build; re-run when the manifest or
the compiler's heuristic changes. Usage: bench/replica_plans.py [BUILD_DIR]
"""
import json
import os
import subprocess
import sys
import tempfile


def overlay(plan, pins):
    for path, choice in pins.items():
        value = choice["value"]
        if path == "note":
            continue
        if path == "exchange_stream_words":
            plan["exchange_stream_words"] = value
        elif path == "fp8_attention":
            plan["fp8_attention"] = value
        else:
            field, op = path.split(".", 1)
            if op not in plan[field]:
                sys.exit(f"replicas.json: {path}: the heuristic plan has no op {op}")
            plan[field][op] = value
    return plan


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    manifest = json.load(open("bench/replicas.json"))
    written = set()
    for r in manifest["replicas"]:
        if r["plan"] in written:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            base = os.path.join(tmp, "heuristic.json")
            subprocess.run([f"{build}/tilevit", "compile", "--machine", r["machine"], "--batch", str(r["batch"]),
                            "--optimization-steps", "0", "--write-plan", base], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            plan = overlay(json.load(open(base)), r["pins"])
        with open(r["plan"], "w") as f:
            f.write(json.dumps(plan, indent=1, sort_keys=True) + "\n")
        written.add(r["plan"])
        print(f"{r['plan']}: {r['name']}", file=sys.stderr)


if __name__ == "__main__":
    main()
