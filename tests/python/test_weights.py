"""Weights given in memory (a dict of arrays with Hugging Face names) against `tilevit
export-weights` + `--weights`: the same package, the same embeddings."""
import hashlib
import json
import struct

import numpy as np

import tilevit
from conftest import cli

DTYPES = {"F32": np.float32, "F16": np.float16}


def read_safetensors(path):
    raw = open(path, "rb").read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        begin, end = t["data_offsets"]
        out[name] = np.frombuffer(raw[8 + n + begin:8 + n + end], dtype=DTYPES[t["dtype"]]).reshape(t["shape"])
    return out


def test_in_memory_weights_equal_export_weights(tmp_path):
    cli("export-weights", tmp_path / "w.safetensors", "--preset", "small", "--seed", 5)
    cli("run", "--preset", "small", "--machine", "test16", "--weights", tmp_path / "w.safetensors", "--out",
        tmp_path / "out", "--save-embeddings", tmp_path / "e.npy", "--optimization-steps", 2, "--json")
    tensors = read_safetensors(tmp_path / "w.safetensors")
    program = tilevit.compile(model="small", machine="test16", weights=tensors, optimization_steps=2)
    assert program.sha256 == hashlib.sha256((tmp_path / "out" / "model.tvpkg").read_bytes()).hexdigest()
    embeddings = tilevit.Device(program)().embeddings
    assert open(tmp_path / "e.npy", "rb").read().endswith(embeddings.tobytes())
    # the random model of another seed gives other embeddings: the given weights were used
    assert tilevit.Device(tilevit.compile(model="small", machine="test16", optimization_steps=2))().embeddings.tobytes() \
        != embeddings.tobytes()


def test_config_dict_with_weights(tmp_path):
    cli("export-weights", tmp_path / "w.safetensors", "--preset", "small", "--seed", 3)
    tensors = read_safetensors(tmp_path / "w.safetensors")
    by_preset = tilevit.compile(model="small", machine="test16", weights=tensors, optimization_steps=0)
    by_config = tilevit.compile(model=by_preset.config, machine="test16", weights=tensors, optimization_steps=0)
    assert by_config.layers == by_preset.layers and by_config.image_size == by_preset.image_size
    assert tilevit.Device(by_config)().embeddings.tobytes() == tilevit.Device(by_preset)().embeddings.tobytes()
