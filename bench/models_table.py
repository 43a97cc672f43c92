#!/usr/bin/python3
"""The rows of docs/MODELS.md: every preset compiled for the C600 and run on the device model.

Per preset: parameters, device weight bytes (FP8 GEMM weights, FP16 vectors), compile
seconds (median of --runs), modelled cycles per call, peak bytes on the fullest tile,
device cosine vs FP32 on the random test model (tilevit run, 1 inference), and with
--torch the FP32 reference vs the independent PyTorch implementation at full size
(tools/torch_vit_family.py for CLIP, DINOv2 and ViT, tools/torch_siglip.py for SigLIP;
both float64, the same random model and one random preprocessed image).

    bench/models_table.py [--preset P ...] [--runs N] [--torch | --torch-only] [--out bench/out/models.json]

Run one at a time on a shared machine: each `run` is a full-size device-model inference.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "build", "tilevit")
PRESETS = ["siglip-b16-224", "siglip-b16-384", "siglip-l16-384", "so400m", "clip-b32", "clip-b16", "clip-l14",
           "clip-l14-336", "dinov2-s", "dinov2-b", "dinov2-l", "dinov2-s-reg", "dinov2-b-reg", "dinov2-l-reg", "vit-b16"]


def tilevit(*args):
    r = subprocess.run([BIN, *args], capture_output=True, text=True)
    if r.returncode != 0:
        return None, r.stderr.strip().splitlines()[-1] if r.stderr.strip() else f"exit {r.returncode}"
    return r.stdout, None


def cosine(a, b):
    a, b = a.astype(np.float64).ravel(), b.astype(np.float64).ravel()
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def torch_row(preset, work):
    """FP32 reference vs PyTorch float64 on one random image: (cosine, max abs error / max |y|)."""
    shape_out, err = tilevit("compile", "--preset", preset, "--layers", "1", "--json")
    if err:
        return None, err
    size = json.loads(shape_out)["image_size"]
    directory = os.path.join(work, preset)
    siglip = preset.startswith("siglip") or preset == "so400m"
    target = directory + ".safetensors" if siglip else directory
    _, err = tilevit("export-weights", target, "--preset", preset)
    if err:
        return None, err
    from_dir = ["--preset", preset, "--weights", target] if siglip else ["--model", target]
    image = os.path.join(work, preset + "_image.npy")
    ref = os.path.join(work, preset + "_fp32.npy")
    torch_out = os.path.join(work, preset + "_torch.npy")
    if size == 0:
        return None, "image size unknown"
    np.save(image, (np.random.default_rng(1).standard_normal((3, size, size)) * 0.5).astype(np.float32))
    _, err = tilevit("reference", "--fp32-only", *from_dir, "--image", image, "--save-fp32", ref)
    if err:
        return None, err
    tool = "torch_siglip.py" if siglip else "torch_vit_family.py"
    # torch_siglip.py infers every size from the tensors but the head dim: 72 for So400m, 64 for B and L.
    head_dim = ["--head-dim", "72" if preset == "so400m" else "64"] if siglip else []
    r = subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "tools", tool), "run", target, "--image", image,
                        *head_dim, "--out", torch_out], capture_output=True, text=True)
    if r.returncode != 0:
        return None, (r.stderr.strip().splitlines() or ["torch failed"])[-1]
    y, t = np.load(ref), np.load(torch_out).reshape(np.load(ref).shape)
    return {"cosine": cosine(y, t), "max_abs_error_rel": float(np.abs(y - t).max() / np.abs(t).max())}, None


def markdown(rows):
    """docs/MODELS.md's table from the rows."""
    lines = ["| preset | parameters | device weight bytes | compile s | modelled cycles | peak bytes/tile | device vs FP32 | FP32 vs PyTorch (cosine, max err / max abs) |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        t = r.get("torch", {})
        torch_text = (f"1 - {1 - t['cosine']:.1e}, {t['max_abs_error_rel']:.1e}" if "cosine" in t
                      else t.get("error", "not measured"))
        device = f"{r['device_cosine']:.6f}" if "device_cosine" in r else r.get("run_error", "")
        if "parameters" not in r:
            lines.append(f"| {r['preset']} | {r.get('compile_error', '')} | | | | | | {torch_text} |")
            continue
        lines.append(f"| {r['preset']} | {r['parameters']:,} | {r['weight_bytes']:,} | {r['compile_seconds']:.2f} | "
                     f"{r['modelled_cycles']:,} | {r['peak_tile_bytes']:,} | {device} | "
                     f"{torch_text} |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--preset", action="append")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--torch", action="store_true")
    ap.add_argument("--torch-only", action="store_true", help="only the PyTorch comparison (no compile, no run)")
    ap.add_argument("--compile-only", action="store_true", help="no device run (compile figures only)")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "out", "models.json"))
    ap.add_argument("--markdown", metavar="JSON", help="print the table of a models.json written before, and stop")
    args = ap.parse_args()
    if args.markdown:
        with open(args.markdown) as f:
            print(markdown(json.load(f)))
        return 0
    work = os.path.join(ROOT, "bench", "out", "models")
    os.makedirs(work, exist_ok=True)
    rows = []
    for preset in args.preset or PRESETS:
        row = {"preset": preset}
        pkg = os.path.join(work, preset + ".tvpkg")
        seconds = []
        for _ in range(0 if args.torch_only else args.runs):
            out, err = tilevit("compile", "--preset", preset, "--package", pkg, "--json")
            if err:
                row["compile_error"] = err
                break
            j = json.loads(out)
            seconds.append(j["compile_seconds"])
        if seconds:
            row.update(parameters=j["parameters"], weight_bytes=j["unique_weight_bytes"],
                       compile_seconds=statistics.median(seconds), modelled_cycles=j["estimated_cycles"],
                       peak_tile_bytes=j["peak_tile_bytes"], tiles_used=j["tiles_used"])
            if args.compile_only:
                out, err = None, "not run (--compile-only)"
            else:
                out, err = tilevit("run", "--package", pkg, "--inferences", "1", "--no-profile", "--json",
                                   "--out", os.path.join(work, preset + "_run"))
            if err:
                row["run_error"] = err
            else:
                r = json.loads(out)
                row["device_cosine"] = min(r["cosines"]) if "cosines" in r else r.get("min_cosine")
        if args.torch or args.torch_only:
            t, err = torch_row(preset, work)
            row["torch"] = t if t else {"error": err}
        print(json.dumps(row), flush=True)
        rows.append(row)
    with open(args.out, "w") as f:
        json.dump(rows, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
