"""Both examples run at a small size (preset small, machine test16) and write their PNG."""
import os
import subprocess
import sys

from conftest import SOURCE


def run_example(name, *args):
    done = subprocess.run([sys.executable, os.path.join(SOURCE, "examples", name), *map(str, args)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def is_png(path):
    return open(path, "rb").read(8) == b"\x89PNG\r\n\x1a\n"


def test_compare_plans(tmp_path):
    out = run_example("compare_plans.py", "--model", "small", "--machine", "test16", "--optimization-steps", 2,
                      "--out", tmp_path / "plans.png")
    assert "heuristic" in out and "searched" in out
    assert is_png(tmp_path / "plans.png")


def test_fp8_sweep(tmp_path):
    out = run_example("fp8_sweep.py", "--model", "small", "--machine", "test16", "--scales", -6, -4, "--out",
                      tmp_path / "fp8.png")
    assert out.count("cosine") == 2
    assert is_png(tmp_path / "fp8.png")
