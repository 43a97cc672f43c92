#!/usr/bin/python3
"""Writes tests/fixtures/torch/<case>/ for the CLIP, DINOv2 and ViT families: the output
of tilevit's deterministic random model computed independently by tools/torch_vit_family.py
(PyTorch, torchvision for ViT) from the checkpoint directory `tilevit export-weights`
writes (family tensor names + config.json), in float64 (expected.npy) and float32
(expected_fp32.npy). Same layout and meta.json as tools/make_reference_fixtures.py; the
C++ test (tests/reference/test_fp32_vs_torch.cpp) regenerates the model from the flags.

    /usr/bin/python3 tools/make_family_fixtures.py [--tilevit build/tilevit] [--case NAME ...]
"""
import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import torch_vit_family  # noqa: E402

# case -> (preset, seed, batch, input seed, output layer)
CASES = {
    "clip_tiny": ("clip-tiny", 7, 2, 2001, None),
    "clip_tiny_layer_m2": ("clip-tiny", 7, 1, 2002, -2),
    "dinov2_tiny": ("dinov2-tiny", 7, 2, 2003, None),
    "dinov2_reg_tiny": ("dinov2-reg-tiny", 7, 2, 2004, None),
    "dinov2_reg_tiny_layer_2": ("dinov2-reg-tiny", 7, 1, 2005, 2),
    "vit_tiny": ("vit-tiny", 7, 2, 2006, None),
}


def input_size(directory: str) -> int:
    with open(os.path.join(directory, "config.json")) as f:
        patch = json.load(f)["patch_size"]
    with open(os.path.join(directory, "preprocessor_config.json")) as f:
        pre = json.load(f)
    side = pre["crop_size"]["height"] if pre.get("do_center_crop") else pre["size"]["height"]
    return side // patch * patch


def make_case(name: str, tilevit: str, out_root: str) -> None:
    preset, seed, batch, input_seed, output_layer = CASES[name]
    tmp = tempfile.mkdtemp(prefix="tilevit_family_")
    try:
        subprocess.run([tilevit, "export-weights", tmp + "/ck", "--preset", preset, "--seed", str(seed)],
                       check=True, capture_output=True)
        size = input_size(tmp + "/ck")
        rng = np.random.default_rng(input_seed)
        images = [(rng.standard_normal((3, size, size)) * 0.5).astype(np.float32) for _ in range(batch)]
        stack = np.stack(images)
        expected = torch_vit_family.run(tmp + "/ck", stack, torch.float64, output_layer)
        expected32 = torch_vit_family.run(tmp + "/ck", stack, torch.float32, output_layer)
        with open(tmp + "/ck/model.safetensors", "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
        with open(tmp + "/ck/config.json") as f:
            config = json.load(f)
    finally:
        shutil.rmtree(tmp)
    case_dir = os.path.join(out_root, name)
    os.makedirs(case_dir, exist_ok=True)
    for i, im in enumerate(images):
        np.save(os.path.join(case_dir, f"input_{i}.npy"), im)
    np.save(os.path.join(case_dir, "expected.npy"), expected.reshape(batch, -1).astype(np.float32))
    np.save(os.path.join(case_dir, "expected_fp32.npy"), expected32.reshape(batch, -1).astype(np.float32))
    flags = {"preset": preset, "layers": config["num_hidden_layers"], "seed": seed}
    if output_layer is not None:
        flags["output_layer"] = output_layer
    meta = {"case": name,
            "description": "tilevit's deterministic random model, exported as a Hugging Face checkpoint "
                           "directory and computed independently by tools/torch_vit_family.py",
            "tilevit_flags": flags, "batch": batch, "inputs": [f"input_{i}.npy" for i in range(batch)],
            "input_seed": input_seed, "output_shape": list(expected.shape), "config": config,
            "weights_sha256": digest, "dtype": "float64", "torch_version": torch.__version__,
            "generator": "tools/make_family_fixtures.py"}
    with open(os.path.join(case_dir, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    print(name, expected.shape, file=sys.stderr)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tilevit", default=os.path.join(ROOT, "build", "tilevit"))
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "fixtures", "torch"))
    ap.add_argument("--case", action="append", choices=sorted(CASES))
    args = ap.parse_args()
    for name in args.case or sorted(CASES):
        make_case(name, args.tilevit, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
