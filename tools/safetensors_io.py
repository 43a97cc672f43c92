#!/usr/bin/python3
"""A minimal safetensors reader and writer for the Python tools (no safetensors package in
Debian): the format is an 8-byte little-endian header length N, N bytes of JSON
{name: {dtype, shape, data_offsets: [begin, end]}, "__metadata__"?}, then the data."""

from __future__ import annotations

import json
import math
import mmap
import os
import struct

import numpy as np

_ST_DTYPES = {
    "F64": np.dtype("<f8"),
    "F32": np.dtype("<f4"),
    "F16": np.dtype("<f2"),
    "BF16": np.dtype("<u2"),  # converted to float32 by shifting into the high half
    "I64": np.dtype("<i8"),
    "I32": np.dtype("<i4"),
    "I16": np.dtype("<i2"),
    "I8": np.dtype("i1"),
    "U8": np.dtype("u1"),
    "BOOL": np.dtype("?"),
}
_MAX_HEADER = 100_000_000


class SafetensorsError(ValueError):
    pass


def read_safetensors_header(path: str):
    """Returns (header dict without __metadata__, metadata, data start offset, file size)."""
    size = os.path.getsize(path)
    if size < 8:
        raise SafetensorsError(f"{path}: file shorter than 8 bytes")
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        if n > _MAX_HEADER:
            raise SafetensorsError(f"{path}: header length {n} exceeds {_MAX_HEADER}")
        if 8 + n > size:
            raise SafetensorsError(f"{path}: header runs past the end of the file")
        raw = f.read(n)
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise SafetensorsError(f"{path}: header is not UTF-8 JSON: {e}") from None
    if not isinstance(header, dict):
        raise SafetensorsError(f"{path}: header is not a JSON object")
    metadata = header.pop("__metadata__", None)
    data_start = 8 + n
    data_len = size - data_start
    spans = []
    for name, entry in header.items():
        try:
            dtype, shape, (begin, end) = entry["dtype"], entry["shape"], entry["data_offsets"]
        except (KeyError, TypeError, ValueError):
            raise SafetensorsError(f"{path}: tensor {name!r}: malformed entry") from None
        if dtype not in _ST_DTYPES:
            raise SafetensorsError(f"{path}: tensor {name!r}: unknown dtype {dtype!r}")
        if not all(isinstance(d, int) and d >= 0 for d in shape):
            raise SafetensorsError(f"{path}: tensor {name!r}: bad shape {shape}")
        if not (isinstance(begin, int) and isinstance(end, int) and 0 <= begin <= end):
            raise SafetensorsError(f"{path}: tensor {name!r}: bad offsets {begin}, {end}")
        nbytes = math.prod(shape) * _ST_DTYPES[dtype].itemsize  # Python ints: no overflow
        if end - begin != nbytes:
            raise SafetensorsError(
                f"{path}: tensor {name!r}: {end - begin} bytes for shape {shape} {dtype}")
        spans.append((begin, end, name))
    spans.sort()
    pos = 0
    for begin, end, name in spans:
        if begin != pos:
            raise SafetensorsError(f"{path}: tensor {name!r}: data does not tile the buffer "
                                   f"(begins at {begin}, expected {pos})")
        pos = end
    if pos != data_len:
        raise SafetensorsError(f"{path}: tensors cover {pos} bytes, data section is {data_len}")
    return header, metadata, data_start, size


def read_safetensors(path: str, prefix: str = "") -> dict[str, np.ndarray]:
    """Reads the tensors whose names start with `prefix` as float32 numpy arrays (copies,
    so the file is not kept open). Float16/bfloat16/float64 are converted to float32."""
    header, _, data_start, _ = read_safetensors_header(path)
    out: dict[str, np.ndarray] = {}
    with open(path, "rb") as f:
        mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        try:
            for name, entry in header.items():
                if not name.startswith(prefix):
                    continue
                begin, end = entry["data_offsets"]
                dt = _ST_DTYPES[entry["dtype"]]
                a = np.frombuffer(mm, dtype=dt, count=(end - begin) // dt.itemsize,
                                  offset=data_start + begin)
                if entry["dtype"] == "BF16":
                    a = (a.astype(np.uint32) << 16).view(np.float32)
                else:
                    a = a.astype(np.float32)  # always a copy
                out[name] = a.reshape(entry["shape"])
                del a
        finally:
            mm.close()
    return out


def write_safetensors(path: str, tensors: dict[str, np.ndarray], metadata=None) -> None:
    """Writes float32 tensors (used by the self-test and by tools that need a small file)."""
    header = {}
    offset = 0
    blobs = []
    for name, t in tensors.items():
        t = np.ascontiguousarray(t, dtype="<f4")
        header[name] = {"dtype": "F32", "shape": list(t.shape),
                        "data_offsets": [offset, offset + t.nbytes]}
        offset += t.nbytes
        blobs.append(t)
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    raw = json.dumps(header, separators=(",", ":")).encode("utf-8")
    raw += b" " * (-len(raw) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(raw)))
        f.write(raw)
        for t in blobs:
            f.write(t.tobytes())
