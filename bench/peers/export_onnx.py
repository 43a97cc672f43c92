#!/usr/bin/python3
"""Float32 ONNX export (opset 17, input pixel_values [1,3,S,S]) of the vision tower in a
safetensors file, through tools/torch_siglip.py.

    /usr/bin/python3 export_onnx.py WEIGHTS.safetensors OUT.onnx

The full So400m/14 model needs about 8 GB of RAM to export and gives a 1.71 GB file (under
protobuf's 2 GB limit). Writes OUT.onnx via a temporary name, so an interrupted export
leaves no truncated model behind.
"""
import json
import os
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import torch_siglip  # noqa: E402


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    weights, out = sys.argv[1], sys.argv[2]
    t0 = time.perf_counter()
    model = torch_siglip.load_model(weights, torch.float32)
    tmp = out + ".tmp.onnx"
    torch_siglip.export_onnx(model, tmp)
    os.replace(tmp, out)
    c = model.config
    print(json.dumps({"onnx": out, "bytes": os.path.getsize(out), "layers": c.layers,
                      "width": c.width, "image_size": c.image_size,
                      "seconds": time.perf_counter() - t0}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
