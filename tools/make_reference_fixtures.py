#!/usr/bin/python3
"""Writes tests/fixtures/torch/<case>/: independent PyTorch (float64) expected embeddings
for tilevit's deterministic random model.

    /usr/bin/python3 tools/make_reference_fixtures.py [--tilevit build/tilevit]
        [--out tests/fixtures/torch] [--tmp /tmp] [--case small --case so400m_l2]
        [--compare | --compare-only] [--crosscheck-random-params]

For each case: `tilevit export-weights /tmp/... <flags>` writes the random model (it is NOT
kept: the C++ test regenerates the same model from the flags in meta.json), numpy draws the
preprocessed input images from a fixed seed (standard normal x 0.5, float32 [3,S,S]),
tools/torch_siglip.py computes pooler_output in float64, and the case folder gets
    input_<i>.npy   float32 [3,S,S]
    expected.npy    float32 [B,W] (computed in float64, rounded)
    expected_fp32.npy  float32 [B,W], the same model computed by PyTorch in float32
    meta.json       tilevit flags (preset, layers, seed), batch, input seed, torch version,
                    dtype, checksum of the exported weights, ...
--compare then runs `tilevit reference ... --fp32-only --save-fp32` on the fixture inputs and
prints cosine and max abs error per embedding against expected.npy (acceptance: cosine >=
0.999999 and max abs error <= 1e-4 x max |expected| per embedding).
"""
import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import torch_siglip  # noqa: E402

# case -> (tilevit flags, batch, input seed)
CASES = {
    "small": (["--preset", "small", "--seed", "7"], 2, 1001),
    "so400m_l2": (["--preset", "so400m", "--layers", "2", "--seed", "7"], 1, 1002),
}
COSINE_MIN = 0.999999
REL_ABS_MAX = 1e-4


def flag(args: list[str], name: str):
    return args[args.index(name) + 1] if name in args else None


def sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def run(cmd: list[str]) -> str:
    print("+", " ".join(cmd), file=sys.stderr)
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def make_images(seed: int, batch: int, size: int, channels: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal((channels, size, size)) * 0.5).astype(np.float32)
            for _ in range(batch)]


def compare(expected: np.ndarray, got: np.ndarray) -> list[dict]:
    rows = []
    for e, g in zip(expected.astype(np.float64), got.astype(np.float64)):
        cos = float(e @ g / (np.linalg.norm(e) * np.linalg.norm(g)))
        err = float(np.abs(e - g).max())
        scale = float(np.abs(e).max())
        rows.append({"cosine": cos, "max_abs_err": err, "max_abs_expected": scale,
                     "rel_max_abs_err": err / scale,
                     "pass": cos >= COSINE_MIN and err <= REL_ABS_MAX * scale})
    return rows


def make_case(name: str, tilevit: str, out_root: str, tmp: str) -> None:
    flags, batch, input_seed = CASES[name]
    weights = os.path.join(tmp, f"tilevit_fixture_{name}.safetensors")
    run([tilevit, "export-weights", weights, *flags])
    try:
        digest = sha256(weights)
        size = os.path.getsize(weights)
        model = torch_siglip.load_model(weights, torch.float64)
        model32 = torch_siglip.load_model(weights, torch.float32)
    finally:
        os.remove(weights)
    c = model.config
    images = make_images(input_seed, batch, c.image_size, c.channels)
    expected = torch_siglip.embed(model, np.stack(images))
    # PyTorch float32: the like-for-like yardstick of an FP32 implementation (the
    # acceptance bounds); float64 stays beside it (FP32 rounding alone moves some
    # outputs by ~3e-4 x max|y| from it).
    expected32 = torch_siglip.embed(model32, np.stack(images))
    del model, model32

    case_dir = os.path.join(out_root, name)
    os.makedirs(case_dir, exist_ok=True)
    for stale in os.listdir(case_dir):
        if stale.startswith("input_") and stale.endswith(".npy"):
            os.remove(os.path.join(case_dir, stale))
    for i, im in enumerate(images):
        np.save(os.path.join(case_dir, f"input_{i}.npy"), im)
    np.save(os.path.join(case_dir, "expected.npy"), expected.astype(np.float32))
    np.save(os.path.join(case_dir, "expected_fp32.npy"), np.asarray(expected32, dtype=np.float32))
    try:
        version = run([tilevit, "--version"]).strip()
    except (OSError, subprocess.CalledProcessError):
        version = None
    meta = {
        "case": name,
        "description": "pooler_output of tilevit's deterministic random SigLIP vision model, "
                       "computed independently by tools/torch_siglip.py",
        "tilevit_flags": {"preset": flag(flags, "--preset"),
                          "layers": int(flag(flags, "--layers") or c.layers),
                          "seed": int(flag(flags, "--seed"))},
        "tilevit_args": flags,
        "tilevit_version": version,
        "batch": batch,
        "inputs": [f"input_{i}.npy" for i in range(batch)],
        "input_seed": input_seed,
        "input_recipe": "rng = numpy.random.default_rng(input_seed); for each image: "
                        "(rng.standard_normal((C, S, S)) * 0.5).astype(float32)",
        "model": {"width": c.width, "heads": c.heads, "head_dim": c.head_dim, "mlp": c.mlp,
                  "layers": c.layers, "patch": c.patch, "image_size": c.image_size,
                  "patches": c.patches},
        "weights_sha256": digest,
        "weights_bytes": size,
        "dtype": "float64",
        "expected_dtype": "float32 (rounded from float64)",
        "expected_norms": [float(np.linalg.norm(e)) for e in expected],
        "torch_version": torch.__version__,
        "numpy_version": np.__version__,
        "acceptance": {"cosine_min": COSINE_MIN,
                       "max_abs_err_max": f"{REL_ABS_MAX} x max |expected| per embedding"},
        "generator": "tools/make_reference_fixtures.py",
    }
    with open(os.path.join(case_dir, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")
    print(f"{name}: {batch} x {c.width}, norms {meta['expected_norms']}", file=sys.stderr)


def compare_case(name: str, tilevit: str, out_root: str, tmp: str) -> list[dict]:
    flags, batch, _ = CASES[name]
    case_dir = os.path.join(out_root, name)
    expected = np.load(os.path.join(case_dir, "expected.npy"))
    with tempfile.NamedTemporaryFile(suffix=".npy", dir=tmp, delete=False) as f:
        got_path = f.name
    try:
        cmd = [tilevit, "reference", *flags]
        for i in range(batch):
            cmd += ["--image", os.path.join(case_dir, f"input_{i}.npy")]
        cmd += ["--fp32-only", "--save-fp32", got_path]
        run(cmd)
        got = np.load(got_path).reshape(expected.shape)
    finally:
        os.remove(got_path)
    rows = compare(expected, got)
    for i, r in enumerate(rows):
        print(f"{name}[{i}]: cosine {r['cosine']:.12f} (1-cos {1 - r['cosine']:.1e})  max abs err {r['max_abs_err']:.3e} "
              f"({r['rel_max_abs_err']:.3e} x max|expected| {r['max_abs_expected']:.4f})  "
              f"{'PASS' if r['pass'] else 'FAIL'}")
    return rows


def crosscheck_random_params(tilevit: str, out_root: str, tmp: str, seed: int = 11) -> list[dict]:
    """tilevit's random model has biases of 1e-6 and LayerNorm scales of exactly 1, so the
    fixtures cannot see a bias or LayerNorm-parameter mix-up. This writes a small-preset
    safetensors file (to `tmp`, not kept) whose biases, LayerNorm scales/offsets are O(0.1),
    runs `tilevit reference --weights` on the `small` fixture inputs and compares with
    torch_siglip in float64."""
    cfg = torch_siglip.SiglipConfig(width=144, heads=2, head_dim=72, mlp=288, layers=2,
                                    patch=14, channels=3, grid=2)
    tensors = torch_siglip.random_tensors(cfg, seed)
    inputs = [os.path.join(out_root, "small", f"input_{i}.npy") for i in range(2)]
    with tempfile.TemporaryDirectory(dir=tmp) as d:
        weights = os.path.join(d, "random_params.safetensors")
        torch_siglip.write_safetensors(
            weights, {torch_siglip.PREFIX + k: v for k, v in tensors.items()})
        expected = torch_siglip.embed(torch_siglip.load_model(weights, torch.float64),
                                      torch_siglip.load_images(inputs))
        got_path = os.path.join(d, "got.npy")
        cmd = [tilevit, "reference", "--preset", "small", "--weights", weights]
        for p in inputs:
            cmd += ["--image", p]
        run(cmd + ["--fp32-only", "--save-fp32", got_path])
        got = np.load(got_path).reshape(expected.shape)
    rows = compare(expected, got)
    for i, r in enumerate(rows):
        print(f"random-params[{i}]: cosine {r['cosine']:.12f} (1-cos {1 - r['cosine']:.1e})  max abs err {r['max_abs_err']:.3e} "
              f"({r['rel_max_abs_err']:.3e} x max|expected|)  {'PASS' if r['pass'] else 'FAIL'}")
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tilevit", default=os.path.join(ROOT, "build", "tilevit"))
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "fixtures", "torch"))
    ap.add_argument("--tmp", default="/tmp")
    ap.add_argument("--case", action="append", choices=sorted(CASES))
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--compare", action="store_true",
                    help="after writing, compare with `tilevit reference --fp32-only`")
    ap.add_argument("--compare-only", action="store_true",
                    help="only compare the existing fixtures with tilevit")
    ap.add_argument("--crosscheck-random-params", action="store_true",
                    help="also compare tilevit and torch on a small model with O(0.1) biases and "
                         "LayerNorm parameters (weights in a temporary file, not kept)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    cases = args.case or list(CASES)
    if not args.compare_only:
        for name in cases:
            make_case(name, args.tilevit, args.out, args.tmp)
    ok = True
    if args.compare or args.compare_only:
        for name in cases:
            ok &= all(r["pass"] for r in compare_case(name, args.tilevit, args.out, args.tmp))
    if args.crosscheck_random_params:
        ok &= all(r["pass"] for r in crosscheck_random_params(args.tilevit, args.out, args.tmp))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
