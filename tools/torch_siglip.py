#!/usr/bin/python3
"""An independent PyTorch implementation of the SigLIP vision tower (pooler_output).

Written from the semantics of Hugging Face transformers' SiglipVisionModel
(models/siglip/modeling_siglip.py) as described in docs WORKLOAD.md; it does not use the
transformers or safetensors packages, so it can serve as a yardstick for tilevit's C++
reference and as the model the peer benchmarks run (bench/peers/).

    embeddings   Conv2d(C -> W, kernel = stride = 14, no padding), flatten(2).transpose(1, 2),
                 + position_embedding.weight (one row per patch, row-major over the grid)
    N layers     x += out_proj(MHA(LN1(x)))          (separate q/k/v projections, width/72
                 x += fc2(gelu_tanh(fc1(LN2(x))))     heads, scale head_dim^-0.5, softmax)
    post LN      x = post_layernorm(x)
    MAP head     a = torch.nn.MultiheadAttention(probe, x, x) (in_proj q|k|v stacked, out_proj)
                 y = a + mlp(layernorm(a));  pooler_output = y[:, 0]
LayerNorm eps is 1e-6 everywhere (SiglipVisionConfig.layer_norm_eps; the MAP head's own
LayerNorm uses the same config value).

Everything is computed in float64 by default (the expected values of test fixtures) or
float32 (the peer benchmark / ONNX export).

Command line (run with Debian's /usr/bin/python3):
    torch_siglip.py info     WEIGHTS.safetensors
    torch_siglip.py run      WEIGHTS.safetensors --image x.npy [--image ...] [--dtype float32]
                             [--head-dim 64] [--out emb.npy]
    torch_siglip.py export-onnx WEIGHTS.safetensors OUT.onnx
    torch_siglip.py selftest
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
from dataclasses import dataclass, asdict

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

PREFIX = "vision_model."
HEAD_DIM = 72
LAYER_NORM_EPS = 1e-6

# The safetensors reader and writer (tools/safetensors_io.py), also used through this module.
from safetensors_io import SafetensorsError, read_safetensors, read_safetensors_header, write_safetensors  # noqa: E402,F401

# --------------------------------------------------------------------------------------
# Configuration inferred from tensor shapes
# --------------------------------------------------------------------------------------

@dataclass
class SiglipConfig:
    width: int
    heads: int
    head_dim: int
    mlp: int
    layers: int
    patch: int
    channels: int
    grid: int

    @property
    def image_size(self) -> int:
        return self.grid * self.patch

    @property
    def patches(self) -> int:
        return self.grid * self.grid

    def flops_per_image(self) -> float:
        """2 FLOP per multiply-add, GEMMs and attention matmuls only (WORKLOAD.md)."""
        t, w, m = self.patches, self.width, self.mlp
        emb = 2 * t * (self.patch * self.patch * self.channels) * w
        layer = 2 * t * w * (3 * w) + 2 * t * w * w + 2 * 2 * t * w * m  # qkv, out, mlp
        layer += 2 * 2 * t * t * w                                       # QK^T and PV
        head = 2 * w * w + 2 * t * w * 2 * w + 2 * 2 * t * w + 2 * w * w + 2 * 2 * w * m
        return emb + self.layers * layer + head


_LAYER_RE = re.compile(r"^encoder\.layers\.(\d+)\.")


def infer_config(tensors: dict[str, np.ndarray], head_dim: int = HEAD_DIM) -> SiglipConfig:
    def get(name):
        if name not in tensors:
            raise KeyError(f"missing tensor {PREFIX}{name}")
        return tensors[name]

    pw = get("embeddings.patch_embedding.weight")
    if pw.ndim != 4 or pw.shape[2] != pw.shape[3]:
        raise ValueError(f"patch_embedding.weight has shape {pw.shape}, expected [W,C,p,p]")
    width, channels, patch = pw.shape[0], pw.shape[1], pw.shape[2]
    npos = get("embeddings.position_embedding.weight").shape[0]
    grid = math.isqrt(npos)
    if grid * grid != npos:
        raise ValueError(f"position embedding has {npos} rows, not a square grid")
    if width % head_dim:
        raise ValueError(f"width {width} is not a multiple of head_dim {head_dim}")
    indices = sorted({int(m.group(1)) for n in tensors if (m := _LAYER_RE.match(n))})
    if indices != list(range(len(indices))):
        raise ValueError(f"encoder layer indices are not 0..N-1: {indices}")
    mlp = get("head.mlp.fc1.weight").shape[0] if not indices else \
        get("encoder.layers.0.mlp.fc1.weight").shape[0]
    return SiglipConfig(width=width, heads=width // head_dim, head_dim=head_dim, mlp=mlp,
                        layers=len(indices), patch=patch, channels=channels, grid=grid)


# --------------------------------------------------------------------------------------
# The model. Module and parameter names mirror the checkpoint names minus "vision_model."
# --------------------------------------------------------------------------------------

def gelu_tanh_formula(x: torch.Tensor) -> torch.Tensor:
    """0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), written out (for the self-test)."""
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x)))


def gelu_tanh(x: torch.Tensor) -> torch.Tensor:
    """gelu_pytorch_tanh (HF) / jax.nn.gelu(approximate=True): torch's fused kernel, which
    torch.onnx exports at opset 17 as the elementary ops of the formula above."""
    return F.gelu(x, approximate="tanh")


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, heads: int) -> torch.Tensor:
    """q [B,Tq,W], k/v [B,Tk,W] -> [B,Tq,W]; scaled dot-product attention over `heads`
    heads of W/heads channels each (channel c belongs to head c // head_dim), no mask."""
    b, tq, w = q.shape
    tk = k.shape[1]
    d = w // heads
    q = q.reshape(b, tq, heads, d).transpose(1, 2)  # [B,H,Tq,D]
    k = k.reshape(b, tk, heads, d).transpose(1, 2)
    v = v.reshape(b, tk, heads, d).transpose(1, 2)
    scores = torch.matmul(q, k.transpose(-1, -2)) * (d ** -0.5)
    # HF computes the softmax in float32 for lower-precision models; for float32 and
    # float64 that is the working precision.
    probs = torch.softmax(scores, dim=-1)
    out = torch.matmul(probs, v)  # [B,H,Tq,D]
    return out.transpose(1, 2).reshape(b, tq, w)


class Embeddings(nn.Module):
    def __init__(self, c: SiglipConfig):
        super().__init__()
        self.patch_embedding = nn.Conv2d(c.channels, c.width, kernel_size=c.patch,
                                         stride=c.patch, padding=0)  # padding="valid"
        self.position_embedding = nn.Embedding(c.patches, c.width)
        self.grid = c.grid

    def forward(self, pixels: torch.Tensor) -> torch.Tensor:
        x = self.patch_embedding(pixels)  # [B,W,g',g'], g' = floor(S / patch)
        if x.shape[-1] != self.grid or x.shape[-2] != self.grid:
            raise ValueError(f"image {tuple(pixels.shape[-2:])} gives a {tuple(x.shape[-2:])} "
                             f"patch grid; the position embedding is for {self.grid}x{self.grid}")
        x = x.flatten(2).transpose(1, 2)  # [B,T,W], patch index = row * grid + col
        return x + self.position_embedding.weight.unsqueeze(0)


class SelfAttention(nn.Module):
    def __init__(self, c: SiglipConfig):
        super().__init__()
        self.heads = c.heads
        self.q_proj = nn.Linear(c.width, c.width)
        self.k_proj = nn.Linear(c.width, c.width)
        self.v_proj = nn.Linear(c.width, c.width)
        self.out_proj = nn.Linear(c.width, c.width)

    def forward(self, x):
        a = attention(self.q_proj(x), self.k_proj(x), self.v_proj(x), self.heads)
        return self.out_proj(a)


class MLP(nn.Module):
    def __init__(self, c: SiglipConfig):
        super().__init__()
        self.fc1 = nn.Linear(c.width, c.mlp)
        self.fc2 = nn.Linear(c.mlp, c.width)

    def forward(self, x):
        return self.fc2(gelu_tanh(self.fc1(x)))


class EncoderLayer(nn.Module):
    def __init__(self, c: SiglipConfig):
        super().__init__()
        self.layer_norm1 = nn.LayerNorm(c.width, eps=LAYER_NORM_EPS)
        self.self_attn = SelfAttention(c)
        self.layer_norm2 = nn.LayerNorm(c.width, eps=LAYER_NORM_EPS)
        self.mlp = MLP(c)

    def forward(self, x):
        x = x + self.self_attn(self.layer_norm1(x))
        return x + self.mlp(self.layer_norm2(x))


class Encoder(nn.Module):
    def __init__(self, c: SiglipConfig):
        super().__init__()
        self.layers = nn.ModuleList(EncoderLayer(c) for _ in range(c.layers))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


class PoolingAttention(nn.Module):
    """torch.nn.MultiheadAttention(W, heads, batch_first=True) semantics, written out:
    in_proj_weight [3W,W] = [Wq; Wk; Wv] applied as x @ W^T + b, then attention, out_proj."""

    def __init__(self, c: SiglipConfig):
        super().__init__()
        self.heads = c.heads
        self.in_proj_weight = nn.Parameter(torch.empty(3 * c.width, c.width))
        self.in_proj_bias = nn.Parameter(torch.empty(3 * c.width))
        self.out_proj = nn.Linear(c.width, c.width)

    def forward(self, query, key_value):
        w = query.shape[-1]
        wq, wk, wv = self.in_proj_weight.split(w, dim=0)
        bq, bk, bv = self.in_proj_bias.split(w, dim=0)
        q = F.linear(query, wq, bq)
        k = F.linear(key_value, wk, bk)
        v = F.linear(key_value, wv, bv)
        return self.out_proj(attention(q, k, v, self.heads))


class MAPHead(nn.Module):
    def __init__(self, c: SiglipConfig):
        super().__init__()
        self.probe = nn.Parameter(torch.empty(1, 1, c.width))
        self.attention = PoolingAttention(c)
        self.layernorm = nn.LayerNorm(c.width, eps=LAYER_NORM_EPS)
        self.mlp = MLP(c)

    def forward(self, x):
        probe = self.probe.expand(x.shape[0], -1, -1)
        h = self.attention(probe, x)
        h = h + self.mlp(self.layernorm(h))
        return h[:, 0]


class SiglipVisionTower(nn.Module):
    def __init__(self, c: SiglipConfig):
        super().__init__()
        self.config = c
        self.embeddings = Embeddings(c)
        self.encoder = Encoder(c)
        self.post_layernorm = nn.LayerNorm(c.width, eps=LAYER_NORM_EPS)
        self.head = MAPHead(c)

    def forward(self, pixels: torch.Tensor) -> torch.Tensor:
        """pixels [B,C,S,S] (already preprocessed) -> pooler_output [B,W]."""
        x = self.embeddings(pixels.to(self.embeddings.patch_embedding.weight.dtype))
        x = self.encoder(x)
        x = self.post_layernorm(x)
        return self.head(x)


def model_from_tensors(tensors: dict[str, np.ndarray], dtype=torch.float64,
                       head_dim: int = HEAD_DIM) -> SiglipVisionTower:
    """`tensors` holds names without the "vision_model." prefix. Every model parameter must
    be present with the right shape and no unknown vision tensor may be left over."""
    config = infer_config(tensors, head_dim)
    model = SiglipVisionTower(config)
    state = {}
    for name, p in model.state_dict().items():
        if name not in tensors:
            raise KeyError(f"missing tensor {PREFIX}{name}")
        t = tensors[name]
        if tuple(t.shape) != tuple(p.shape):
            raise ValueError(f"{PREFIX}{name}: shape {list(t.shape)}, expected {list(p.shape)}")
        state[name] = torch.from_numpy(np.ascontiguousarray(t))
    extra = sorted(set(tensors) - set(state))
    if extra:
        raise ValueError(f"unexpected vision tensors: {[PREFIX + n for n in extra[:5]]}")
    model.load_state_dict(state, strict=True)
    model.to(dtype)
    model.eval()
    return model


def load_model(path: str, dtype=torch.float64, head_dim: int = HEAD_DIM) -> SiglipVisionTower:
    """Reads the `vision_model.*` tensors of a safetensors file (the rest is ignored)."""
    raw = read_safetensors(path, PREFIX)
    if not raw:
        raise ValueError(f"{path}: no {PREFIX}* tensors")
    tensors = {n[len(PREFIX):]: a for n, a in raw.items()}
    del raw
    return model_from_tensors(tensors, dtype, head_dim)


def load_images(paths: list[str]) -> np.ndarray:
    """.npy files of float32 [C,S,S] (or [1,C,S,S]) preprocessed pixels -> [B,C,S,S]."""
    images = []
    for p in paths:
        a = np.load(p)
        if a.ndim == 4 and a.shape[0] == 1:
            a = a[0]
        if a.ndim != 3:
            raise ValueError(f"{p}: shape {a.shape}, expected [C,S,S]")
        images.append(a.astype(np.float32))
    return np.stack(images)


@torch.no_grad()
def embed(model: SiglipVisionTower, pixels: np.ndarray) -> np.ndarray:
    dtype = model.embeddings.patch_embedding.weight.dtype
    x = torch.from_numpy(np.ascontiguousarray(pixels)).to(dtype)
    return model(x).numpy()


def export_onnx(model_or_path, out_path: str, batch: int = 1, opset: int = 17) -> None:
    """Float32 ONNX export of the model (input "pixel_values" [batch,C,S,S], output
    "pooler_output" [batch,W]). The So400m/14 full model is about 1.71 GB, under protobuf's
    2 GB limit, so the weights stay inside the .onnx file."""
    model = model_or_path
    if isinstance(model_or_path, str):
        model = load_model(model_or_path, torch.float32)
    model = model.float().eval()
    c = model.config
    dummy = torch.zeros(batch, c.channels, c.image_size, c.image_size, dtype=torch.float32)
    with torch.no_grad():
        torch.onnx.export(model, (dummy,), out_path, opset_version=opset,
                          input_names=["pixel_values"], output_names=["pooler_output"],
                          do_constant_folding=True)


# --------------------------------------------------------------------------------------
# Self-test: random small model checked against torch's own building blocks
# --------------------------------------------------------------------------------------

def random_tensors(config: SiglipConfig, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    w, m, c = config.width, config.mlp, config
    t: dict[str, np.ndarray] = {}

    def lin(name, out_f, in_f):
        t[name + ".weight"] = rng.standard_normal((out_f, in_f)) * math.sqrt(2 / (in_f + out_f))
        t[name + ".bias"] = rng.standard_normal(out_f) * 0.02

    def ln(name):
        t[name + ".weight"] = 1 + 0.1 * rng.standard_normal(w)
        t[name + ".bias"] = 0.1 * rng.standard_normal(w)

    pd = c.channels * c.patch * c.patch
    t["embeddings.patch_embedding.weight"] = rng.standard_normal(
        (w, c.channels, c.patch, c.patch)) * math.sqrt(2 / (pd + w))
    t["embeddings.patch_embedding.bias"] = rng.standard_normal(w) * 0.02
    t["embeddings.position_embedding.weight"] = rng.standard_normal((c.patches, w)) / math.sqrt(w)
    for i in range(c.layers):
        p = f"encoder.layers.{i}."
        ln(p + "layer_norm1")
        ln(p + "layer_norm2")
        for proj in ("q_proj", "k_proj", "v_proj", "out_proj"):
            lin(p + "self_attn." + proj, w, w)
        lin(p + "mlp.fc1", m, w)
        lin(p + "mlp.fc2", w, m)
    ln("post_layernorm")
    t["head.probe"] = rng.standard_normal((1, 1, w)) * math.sqrt(1 / w)
    t["head.attention.in_proj_weight"] = rng.standard_normal((3 * w, w)) * math.sqrt(2 / (2 * w))
    t["head.attention.in_proj_bias"] = rng.standard_normal(3 * w) * 0.02
    lin("head.attention.out_proj", w, w)
    ln("head.layernorm")
    lin("head.mlp.fc1", m, w)
    lin("head.mlp.fc2", w, m)
    return {k: v.astype(np.float32) for k, v in t.items()}


def _np_layernorm(x, g, b, eps=LAYER_NORM_EPS):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * g + b


def _np_attention(q, k, v, heads):
    # per head, explicit loops: independent of the reshape/transpose code above
    tq, w = q.shape
    d = w // heads
    out = np.zeros_like(q)
    for h in range(heads):
        s = slice(h * d, (h + 1) * d)
        sc = q[:, s] @ k[:, s].T / math.sqrt(d)
        sc = np.exp(sc - sc.max(-1, keepdims=True))
        sc /= sc.sum(-1, keepdims=True)
        out[:, s] = sc @ v[:, s]
    return out


def numpy_forward(t: dict[str, np.ndarray], config: SiglipConfig, image: np.ndarray) -> np.ndarray:
    """Second, loop-based float64 implementation in plain numpy (one image [C,S,S]).
    Patches are flattened in (channel, y, x) order to match the conv weight layout."""
    c = config
    t = {k: v.astype(np.float64) for k, v in t.items()}
    img = image.astype(np.float64)
    pw = t["embeddings.patch_embedding.weight"].reshape(c.width, -1)
    rows = []
    for gy in range(c.grid):
        for gx in range(c.grid):
            patch = img[:, gy * c.patch:(gy + 1) * c.patch, gx * c.patch:(gx + 1) * c.patch]
            rows.append(patch.reshape(-1))
    x = np.stack(rows) @ pw.T + t["embeddings.patch_embedding.bias"]
    x = x + t["embeddings.position_embedding.weight"]

    def lin(name, h):
        return h @ t[name + ".weight"].T + t[name + ".bias"]

    def gelu(h):
        return 0.5 * h * (1 + np.tanh(np.sqrt(2 / np.pi) * (h + 0.044715 * h ** 3)))

    for i in range(c.layers):
        p = f"encoder.layers.{i}."
        h = _np_layernorm(x, t[p + "layer_norm1.weight"], t[p + "layer_norm1.bias"])
        a = _np_attention(lin(p + "self_attn.q_proj", h), lin(p + "self_attn.k_proj", h),
                          lin(p + "self_attn.v_proj", h), c.heads)
        x = x + lin(p + "self_attn.out_proj", a)
        h = _np_layernorm(x, t[p + "layer_norm2.weight"], t[p + "layer_norm2.bias"])
        x = x + lin(p + "mlp.fc2", gelu(lin(p + "mlp.fc1", h)))
    x = _np_layernorm(x, t["post_layernorm.weight"], t["post_layernorm.bias"])
    w = c.width
    wi, bi = t["head.attention.in_proj_weight"], t["head.attention.in_proj_bias"]
    q = t["head.probe"][0] @ wi[:w].T + bi[:w]
    k = x @ wi[w:2 * w].T + bi[w:2 * w]
    v = x @ wi[2 * w:].T + bi[2 * w:]
    a = lin("head.attention.out_proj", _np_attention(q, k, v, c.heads))
    h = _np_layernorm(a, t["head.layernorm.weight"], t["head.layernorm.bias"])
    y = a + lin("head.mlp.fc2", gelu(lin("head.mlp.fc1", h)))
    return y[0]


def selftest(verbose: bool = True) -> bool:
    import tempfile
    ok = True

    def check(what, a, b, tol):
        nonlocal ok
        a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
        err = float(np.abs(a - b).max())
        good = err <= tol * max(1.0, float(np.abs(b).max()))
        ok &= good
        if verbose:
            print(f"  {'ok  ' if good else 'FAIL'} {what}: max abs diff {err:.3e}")

    torch.manual_seed(0)
    # 1. gelu_tanh vs torch's own approximate="tanh" GELU
    x = torch.linspace(-8, 8, 10001, dtype=torch.float64)
    check("gelu_tanh vs the tanh formula written out", gelu_tanh(x), gelu_tanh_formula(x), 1e-15)
    # 2. PoolingAttention vs torch.nn.MultiheadAttention with the same in_proj/out_proj
    w, heads = 144, 2
    mha = nn.MultiheadAttention(w, heads, batch_first=True).double()
    with torch.no_grad():
        mha.in_proj_bias.normal_()
        mha.out_proj.bias.normal_()
    cfg = SiglipConfig(width=w, heads=heads, head_dim=72, mlp=288, layers=0, patch=14,
                       channels=3, grid=2)
    mine = PoolingAttention(cfg).double()
    mine.load_state_dict({"in_proj_weight": mha.in_proj_weight, "in_proj_bias": mha.in_proj_bias,
                          "out_proj.weight": mha.out_proj.weight,
                          "out_proj.bias": mha.out_proj.bias})
    qx = torch.randn(3, 1, w, dtype=torch.float64)
    kv = torch.randn(3, 7, w, dtype=torch.float64)
    with torch.no_grad():
        check("PoolingAttention vs nn.MultiheadAttention", mine(qx, kv), mha(qx, kv, kv)[0], 1e-12)
        # 3. self-attention vs MultiheadAttention with q/k/v weights stacked
        sa = SelfAttention(cfg).double()
        for lin_ in (sa.q_proj, sa.k_proj, sa.v_proj, sa.out_proj):
            lin_.bias.normal_()
        mha.in_proj_weight.copy_(torch.cat([sa.q_proj.weight, sa.k_proj.weight, sa.v_proj.weight]))
        mha.in_proj_bias.copy_(torch.cat([sa.q_proj.bias, sa.k_proj.bias, sa.v_proj.bias]))
        mha.out_proj.weight.copy_(sa.out_proj.weight)
        mha.out_proj.bias.copy_(sa.out_proj.bias)
        check("SelfAttention vs nn.MultiheadAttention", sa(kv), mha(kv, kv, kv)[0], 1e-12)
    # 4. whole model through a safetensors round trip vs the loop-based numpy forward
    for layers, grid in ((2, 2), (1, 3)):
        cfg = SiglipConfig(width=144, heads=2, head_dim=72, mlp=288, layers=layers, patch=14,
                           channels=3, grid=grid)
        t = random_tensors(cfg, seed=layers)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "m.safetensors")
            full = {PREFIX + k: v for k, v in t.items()}
            full["text_model.ignored"] = np.ones((2, 3), np.float32)
            write_safetensors(path, full, {"format": "pt"})
            model = load_model(path)
            model32 = load_model(path, torch.float32)
        got = model.config
        if asdict(got) != asdict(cfg):
            ok = False
            print(f"  FAIL inferred config {got} != {cfg}")
        rng = np.random.default_rng(1)
        imgs = (rng.standard_normal((2, 3, cfg.image_size, cfg.image_size)) * 0.5).astype(np.float32)
        y = embed(model, imgs)
        ref = np.stack([numpy_forward(t, cfg, im) for im in imgs])
        check(f"model({layers} layers, {grid}x{grid} grid) vs numpy loops", y, ref, 1e-12)
        y32 = embed(model32, imgs)
        check(f"float32 model vs float64 ({layers} layers)", y32, y, 1e-4)
        # a 384x384-style input: pixels past the last whole patch are ignored
        bigger = np.pad(imgs, ((0, 0), (0, 0), (0, 6), (0, 6)), constant_values=100.0)
        check("extra right/bottom pixels ignored", embed(model, bigger), y, 0)
    if verbose:
        print("selftest", "passed" if ok else "FAILED")
    return ok


# --------------------------------------------------------------------------------------

def _dtype(name: str):
    return {"float64": torch.float64, "float32": torch.float32}[name]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("info", help="print the configuration inferred from a safetensors file")
    p.add_argument("weights")
    p = sub.add_parser("run", help="compute pooler_output for preprocessed .npy images")
    p.add_argument("weights")
    p.add_argument("--image", action="append", required=True)
    p.add_argument("--dtype", choices=["float64", "float32"], default="float64")
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--head-dim", type=int, default=HEAD_DIM, help="72 for So400m, 64 for SigLIP B and L")
    p.add_argument("--out")
    p = sub.add_parser("export-onnx", help="float32 ONNX export (opset 17)")
    p.add_argument("weights")
    p.add_argument("out")
    p.add_argument("--batch", type=int, default=1)
    sub.add_parser("selftest", help="check the building blocks against torch and numpy")
    args = ap.parse_args(argv)

    if args.cmd == "selftest":
        return 0 if selftest() else 1
    if args.cmd == "info":
        raw = read_safetensors(args.weights, PREFIX)
        cfg = infer_config({n[len(PREFIX):]: a for n, a in raw.items()})
        d = asdict(cfg)
        d.update(image_size=cfg.image_size, patches=cfg.patches,
                 parameters=int(sum(a.size for a in raw.values())),
                 gflop_per_image=cfg.flops_per_image() / 1e9)
        print(json.dumps(d, indent=1))
        return 0
    if args.cmd == "run":
        if args.threads:
            torch.set_num_threads(args.threads)
        model = load_model(args.weights, _dtype(args.dtype), args.head_dim)
        y = embed(model, load_images(args.image))
        if args.out:
            np.save(args.out, y.astype(np.float32))
        print(json.dumps({"shape": list(y.shape), "norms": np.linalg.norm(y, axis=1).tolist()}))
        return 0
    if args.cmd == "export-onnx":
        export_onnx(args.weights, args.out, batch=args.batch)
        return 0
    return 2


if __name__ == "__main__":
    sys.exit(main())
