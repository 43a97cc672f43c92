#!/usr/bin/python3
"""The main job from Python, timed against `tilevit run --json` (docs/PYTHON.md): compile with
the defaults (So400m/14 on the C600, plan search of 8), Device (the random test model of seed 0
resident), three calls with the seed's default image, each checked against the FP32 reference.

    PYTHONPATH=build/python /usr/bin/python3 bench/python_main_job.py [--layers N] [--cli build/tilevit]
"""
import argparse
import hashlib
import json
import os
import subprocess
import tempfile
import time

import numpy as np

import tilevit


def python_job(layers):
    t0 = time.perf_counter()
    program = tilevit.compile(layers=layers)
    device = tilevit.Device(program)
    fp32 = tilevit.reference(program, device=False)["fp32"]
    results = [device() for _ in range(3)]
    seconds = time.perf_counter() - t0
    e, r = results[-1].embeddings.reshape(-1), fp32.reshape(-1)
    cosine = float(e.astype(np.float64) @ r / (np.linalg.norm(e) * np.linalg.norm(r)))
    return seconds, results[-1], cosine, program.sha256


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int)
    parser.add_argument("--cli", default=os.path.join(os.path.dirname(__file__), "..", "build", "tilevit"))
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    for _ in range(args.rounds):
        with tempfile.TemporaryDirectory() as out:
            command = [args.cli, "run", "--json", "--out", out, "--save-embeddings", out + "/e.npy"]
            if args.layers:
                command += ["--layers", str(args.layers)]
            t0 = time.perf_counter()
            report = json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)
            cli_seconds = time.perf_counter() - t0
            cli_bytes = open(out + "/e.npy", "rb").read()
            with open(out + "/model.tvpkg", "rb") as f:
                cli_sha = hashlib.sha256(f.read()).hexdigest()
        py_seconds, result, cosine, sha = python_job(args.layers)
        print(json.dumps({"cli_seconds": round(cli_seconds, 2), "python_seconds": round(py_seconds, 2),
                          "ratio": round(py_seconds / cli_seconds, 3),
                          "embeddings_identical": cli_bytes.endswith(result.embeddings.tobytes()),
                          "package_identical": sha == cli_sha,
                          "cycles": [result.cycles, report["calls"][-1]["device_cycles"]],
                          "cosine": round(cosine, 6)}))


if __name__ == "__main__":
    main()
