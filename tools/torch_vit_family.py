#!/usr/bin/python3
"""Independent PyTorch references of the CLIP, DINOv2 and google ViT vision towers.

Written from the published model definitions (not from tilevit's code, and without the
transformers or safetensors packages, which Debian does not ship):
  CLIP    transformers CLIPVisionModelWithProjection (models/clip/modeling_clip.py), the
          OpenAI CLIP VisionTransformer it converts from:
              x = conv(pixels) (no bias) -> [CLS; patches] + position
              x = pre_layrnorm(x); N x { x += attn(LN1 x); x += fc2(quick_gelu(fc1(LN2 x))) }
              image_embeds = visual_projection(post_layernorm(x[:, 0]))
  DINOv2  transformers Dinov2Model / Dinov2WithRegistersModel (facebookresearch/dinov2
          vision_transformer.py): [CLS; patches] + position, the patch part resized with
          F.interpolate(mode="bicubic", align_corners=False, antialias = with registers)
          when the grid differs; registers after CLS;
              N x { x += ls1 * attn(norm1 x); x += ls2 * fc2(gelu(fc1(norm2 x))) }
              pooler_output = layernorm(x)[:, 0]
  ViT     torchvision 0.14 VisionTransformer (the vit_b_16 definition) with the Hugging
          Face ViTModel weights mapped onto it; output encoder.ln(x)[:, 0] (ViTModel's
          layernorm(last_hidden_state)[:, 0], before its tanh pooler).
hidden_states[K] (tilevit --output-layer K) is the input of layer K (0 = embeddings).

The checkpoint is a directory as `tilevit export-weights DIR --preset P` writes it:
config.json (read here independently), model.safetensors or an index with shards.

    torch_vit_family.py run DIR --image x.npy [...] [--output-layer K] [--dtype float32] [--out y.npy]
"""
from __future__ import annotations

import argparse
import functools
import json
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import torch_siglip  # noqa: E402  (safetensors reader, multi-head attention)


def read_checkpoint(directory: str) -> tuple[dict, dict[str, np.ndarray]]:
    with open(os.path.join(directory, "config.json")) as f:
        config = json.load(f)
    index = os.path.join(directory, "model.safetensors.index.json")
    files = ["model.safetensors"]
    if os.path.exists(index):
        with open(index) as f:
            files = sorted(set(json.load(f)["weight_map"].values()))
    tensors: dict[str, np.ndarray] = {}
    for name in files:
        tensors.update(torch_siglip.read_safetensors(os.path.join(directory, name)))
    return config, tensors


class Tower:
    def __init__(self, config: dict, tensors: dict[str, np.ndarray], dtype):
        self.c = config
        self.t = {k: torch.from_numpy(np.ascontiguousarray(v)).to(dtype) for k, v in tensors.items()}
        self.heads = config["num_attention_heads"]
        self.eps = config["layer_norm_eps"]
        self.patch = config["patch_size"]

    def ln(self, name, x):
        return F.layer_norm(x, x.shape[-1:], self.t[name + ".weight"], self.t[name + ".bias"], self.eps)

    def lin(self, name, x, bias=True):
        return F.linear(x, self.t[name + ".weight"], self.t[name + ".bias"] if bias else None)


def clip_forward(m: Tower, pixels, output_layer):
    p = "vision_model."
    x = F.conv2d(pixels, m.t[p + "embeddings.patch_embedding.weight"], stride=m.patch)
    x = x.flatten(2).transpose(1, 2)
    cls = m.t[p + "embeddings.class_embedding"].expand(x.shape[0], 1, -1)
    x = torch.cat([cls, x], dim=1) + m.t[p + "embeddings.position_embedding.weight"]
    x = m.ln(p + "pre_layrnorm", x)
    hidden = [x]
    for i in range(m.c["num_hidden_layers"]):
        q = p + f"encoder.layers.{i}."
        h = m.ln(q + "layer_norm1", x)
        a = torch_siglip.attention(m.lin(q + "self_attn.q_proj", h), m.lin(q + "self_attn.k_proj", h),
                                   m.lin(q + "self_attn.v_proj", h), m.heads)
        x = x + m.lin(q + "self_attn.out_proj", a)
        h = m.lin(q + "mlp.fc1", m.ln(q + "layer_norm2", x))
        x = x + m.lin(q + "mlp.fc2", h * torch.sigmoid(1.702 * h))  # quick_gelu
        hidden.append(x)
    if output_layer is not None:
        return hidden[output_layer]
    pooled = m.ln(p + "post_layernorm", x[:, 0])
    return F.linear(pooled, m.t["visual_projection.weight"])


def dinov2_forward(m: Tower, pixels, output_layer):
    registers = m.c.get("num_register_tokens", 0) if m.c["model_type"] == "dinov2_with_registers" else 0
    x = F.conv2d(pixels, m.t["embeddings.patch_embeddings.projection.weight"],
                 m.t["embeddings.patch_embeddings.projection.bias"], stride=m.patch)
    gh, gw = x.shape[-2:]
    x = x.flatten(2).transpose(1, 2)
    pos = m.t["embeddings.position_embeddings"]
    n = pos.shape[1] - 1
    side = int(math.isqrt(n))
    if (gh, gw) != (side, side):
        grid = pos[:, 1:].reshape(1, side, side, -1).permute(0, 3, 1, 2)
        grid = F.interpolate(grid, size=(gh, gw), mode="bicubic", align_corners=False,
                             antialias=bool(registers))
        pos = torch.cat([pos[:, :1], grid.permute(0, 2, 3, 1).reshape(1, gh * gw, -1)], dim=1)
    x = torch.cat([m.t["embeddings.cls_token"].expand(x.shape[0], -1, -1), x], dim=1) + pos
    if registers:
        x = torch.cat([x[:, :1], m.t["embeddings.register_tokens"].expand(x.shape[0], -1, -1), x[:, 1:]], dim=1)
    hidden = [x]
    for i in range(m.c["num_hidden_layers"]):
        q = f"encoder.layer.{i}."
        h = m.ln(q + "norm1", x)
        a = torch_siglip.attention(m.lin(q + "attention.attention.query", h), m.lin(q + "attention.attention.key", h),
                                   m.lin(q + "attention.attention.value", h), m.heads)
        x = x + m.t[q + "layer_scale1.lambda1"] * m.lin(q + "attention.output.dense", a)
        h = F.gelu(m.lin(q + "mlp.fc1", m.ln(q + "norm2", x)))
        x = x + m.t[q + "layer_scale2.lambda1"] * m.lin(q + "mlp.fc2", h)
        hidden.append(x)
    if output_layer is not None:
        return hidden[output_layer]
    return m.ln("layernorm", x)[:, 0]


def vit_forward(m: Tower, pixels, output_layer):
    """torchvision's VisionTransformer with the HF ViTModel weights mapped onto it."""
    from torchvision.models.vision_transformer import VisionTransformer
    c = m.c
    w = c["hidden_size"]
    model = VisionTransformer(image_size=pixels.shape[-1], patch_size=m.patch, num_layers=c["num_hidden_layers"],
                              num_heads=m.heads, hidden_dim=w, mlp_dim=c["intermediate_size"],
                              norm_layer=functools.partial(torch.nn.LayerNorm, eps=m.eps))
    t = m.t
    state = {"class_token": t["embeddings.cls_token"], "conv_proj.weight": t["embeddings.patch_embeddings.projection.weight"],
             "conv_proj.bias": t["embeddings.patch_embeddings.projection.bias"],
             "encoder.pos_embedding": t["embeddings.position_embeddings"],
             "encoder.ln.weight": t["layernorm.weight"], "encoder.ln.bias": t["layernorm.bias"],
             "heads.head.weight": torch.zeros(1000, w), "heads.head.bias": torch.zeros(1000)}
    for i in range(c["num_hidden_layers"]):
        hf, tv = f"encoder.layer.{i}.", f"encoder.layers.encoder_layer_{i}."
        for a, b in (("layernorm_before", "ln_1"), ("layernorm_after", "ln_2"),
                     ("attention.output.dense", "self_attention.out_proj"),
                     ("intermediate.dense", "mlp.0"), ("output.dense", "mlp.3")):
            for s in (".weight", ".bias"):
                state[tv + b + s] = t[hf + a + s]
        for s in (".weight", ".bias"):
            state[tv + "self_attention.in_proj" + s.replace(".", "_")] = torch.cat(
                [t[hf + f"attention.attention.{n}{s}"] for n in ("query", "key", "value")])
    model.load_state_dict(state, strict=True)
    model = model.to(pixels.dtype).eval()
    x = model._process_input(pixels)
    x = torch.cat([model.class_token.expand(x.shape[0], -1, -1), x], dim=1)
    if output_layer is not None:
        x = x + model.encoder.pos_embedding
        for layer in list(model.encoder.layers)[:output_layer]:
            x = layer(x)
        return x
    return model.encoder(x)[:, 0]


FORWARD = {"clip_vision_model": clip_forward, "dinov2": dinov2_forward, "dinov2_with_registers": dinov2_forward,
           "vit": vit_forward}


@torch.no_grad()
def run(directory: str, images: np.ndarray, dtype=torch.float64, output_layer=None) -> np.ndarray:
    config, tensors = read_checkpoint(directory)
    model = Tower(config, tensors, dtype)
    layers = config["num_hidden_layers"]
    if output_layer is not None and output_layer < 0:
        output_layer = layers + 1 + output_layer
    y = FORWARD[config["model_type"]](model, torch.from_numpy(images).to(dtype), output_layer)
    return y.numpy()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("run", help="outputs for preprocessed .npy images")
    p.add_argument("directory")
    p.add_argument("--image", action="append", required=True)
    p.add_argument("--output-layer", type=int)
    p.add_argument("--dtype", choices=["float64", "float32"], default="float64")
    p.add_argument("--out")
    args = ap.parse_args(argv)
    dtype = {"float64": torch.float64, "float32": torch.float32}[args.dtype]
    y = run(args.directory, torch_siglip.load_images(args.image), dtype, args.output_layer)
    if args.out:
        np.save(args.out, y.astype(np.float32))
    print(json.dumps({"shape": list(y.shape)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
