"""bench/peers/fused_ops.py: PyTorch's fused kernels for the shapes and
dtypes of bench/fused_ops.rb (F.layer_norm, F.rms_norm, softmax, and a copy
for the bandwidth), in the same JSON-line format.

    python3 bench/peers/fused_ops.py [--shapes 1x768,...] [--dtypes float32,bfloat16]

us is CUDA-event microseconds per op over `iterations` back-to-back launches
(the best of `repeats` runs); GB/s counts the row's read and write once
(and gamma, beta), as ours does.
"""
import argparse
import json

import torch

from cuda_timing import measure
import torch.nn.functional as F

NAMES = {"float32": "SFloat", "bfloat16": "BFloat"}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--shapes", default="1x768,64x768,4096x768,4096x4096,32768x1024")
    p.add_argument("--dtypes", default="float32,bfloat16")
    p.add_argument("--iterations", type=int, default=100)
    p.add_argument("--repeats", type=int, default=5)
    a = p.parse_args()
    eps = 1e-5
    for dname in a.dtypes.split(","):
        dtype = getattr(torch, dname)
        for shape in a.shapes.split(","):
            rows, cols = (int(v) for v in shape.split("x"))
            g = torch.Generator(device="cuda").manual_seed(1)
            x = (torch.rand(rows, cols, device="cuda", generator=g) * 4 - 2).to(dtype)
            w = (torch.rand(cols, device="cuda", generator=g) + 0.5).to(dtype)
            b = (torch.rand(cols, device="cuda", generator=g) * 2 - 1).to(dtype)
            y = torch.empty_like(x)
            ops = {
                "layer_norm": (lambda: F.layer_norm(x, (cols,), w, b, eps), 2),
                "rms_norm": (lambda: F.rms_norm(x, (cols,), w, eps), 1),
                "softmax": (lambda: torch.softmax(x, dim=-1), 0),
                "copy": (lambda: y.copy_(x), 0),
            }
            for op, (fn, params) in ops.items():
                us = measure(fn, a.iterations, a.repeats)
                bytes_ = (2 * rows * cols + params * cols) * x.element_size()
                print(json.dumps({"bench": "fused_ops", "impl": "torch", "op": op,
                                  "form": "fused", "dtype": NAMES.get(dname, dname),
                                  "rows": rows, "cols": cols, "us": round(us, 3),
                                  "gbps": round(bytes_ / (us * 1e3), 1),
                                  "torch": torch.__version__}), flush=True)


if __name__ == "__main__":
    main()
