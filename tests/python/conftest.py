"""Shared fixtures of the Python package's tests: the CLI next to the package, and one small
program (preset small, machine test16) with the CLI's run of the same model."""
import json
import os
import subprocess

import pytest

BINARY = os.environ.get("TILEVIT_BINARY", os.path.join(os.path.dirname(__file__), "..", "..", "build", "tilevit"))
SOURCE = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def cli(*args, check=True):
    """Runs the tilevit executable; its stdout (the --json report) parsed when it is JSON."""
    done = subprocess.run([BINARY, *map(str, args)], capture_output=True, text=True)
    if check and done.returncode != 0:
        raise AssertionError("tilevit %s: exit %d: %s" % (" ".join(map(str, args)), done.returncode, done.stderr))
    return done


@pytest.fixture(scope="session")
def cli_run(tmp_path_factory):
    """`tilevit run --preset small --machine test16`: its output directory and report."""
    out = tmp_path_factory.mktemp("cli_run")
    done = cli("run", "--preset", "small", "--machine", "test16", "--out", out / "out", "--json",
               "--save-embeddings", out / "embeddings.npy")
    return out, json.loads(done.stdout)


@pytest.fixture(scope="session")
def small_program():
    import tilevit
    return tilevit.compile(model="small", machine="test16")
