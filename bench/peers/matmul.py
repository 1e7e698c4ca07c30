"""bench/peers/matmul.py: torch.matmul for the shapes and dtypes of
bench/matmul.rb, in the same JSON-line format.

    python3 bench/peers/matmul.py [--shapes 1024,...,1x768x50257] [--dtypes float32,float16,bfloat16]

us is CUDA-event microseconds per product over back-to-back calls (the
best of `repeats` runs). The weight is stored (n, k) and multiplied
transposed, as bench/matmul.rb does. TF32 stays off
(torch.backends.cuda.matmul.allow_tf32 = False), as ours is by default.
"""
import argparse
import json

import torch

from cuda_timing import measure

NAMES = {"float32": "SFloat", "float16": "HFloat", "bfloat16": "BFloat", "float64": "DFloat"}
SHAPES = "1024,2048,4096,8192,1x768x2304,1x768x50257,256x768x50257"
BIAS_SHAPES = "256x768x2304,256x768x50257,2048x768x3072"


def dims(spec):
    parts = [int(v) for v in spec.split("x")]
    return parts * 3 if len(parts) == 1 else parts


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--shapes", default=SHAPES)
    p.add_argument("--dtypes", default="float32,float16,bfloat16")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--bias-shapes", default=BIAS_SHAPES)
    p.add_argument("--bias-dtypes", default="float32,float64")
    a = p.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    for dname in a.dtypes.split(","):
        dtype = getattr(torch, dname)
        el = torch.empty(0, dtype=dtype).element_size()
        for spec in a.shapes.split(","):
            m, k, n = dims(spec)
            g = torch.Generator(device="cuda").manual_seed(1)
            x = (torch.rand(m, k, device="cuda", generator=g) * 2 - 1).to(dtype)
            w = (torch.rand(n, k, device="cuda", generator=g) * 2 - 1).to(dtype)
            flops = 2.0 * m * k * n
            iterations = int(min(max(5e10 / flops, 5), 200))
            us = measure(lambda: torch.matmul(x, w.t()), iterations, a.repeats)
            bytes_ = (m * k + k * n + m * n) * el
            print(json.dumps({"bench": "matmul", "impl": "torch", "dtype": NAMES[dname],
                              "m": m, "k": k, "n": n, "us": round(us, 3),
                              "tflops": round(flops / (us * 1e6), 2),
                              "gbps": round(bytes_ / (us * 1e3), 1),
                              "torch": torch.__version__}), flush=True)
            if m == 1 and n > 10_000:
                y = torch.empty_like(w)
                us = measure(lambda: y.copy_(w), 50, a.repeats)
                print(json.dumps({"bench": "matmul", "impl": "torch", "op": "copy",
                                  "dtype": NAMES[dname], "m": n, "k": k, "us": round(us, 3),
                                  "gbps": round(2 * n * k * el / (us * 1e3), 1)}), flush=True)
    # The product with a bias add: torch.addmm (cuBLASLt's bias epilogue
    # where torch takes it) and the two-kernel matmul then add.
    for dname in a.bias_dtypes.split(","):
        dtype = getattr(torch, dname)
        for spec in filter(None, a.bias_shapes.split(",")):
            m, k, n = dims(spec)
            g = torch.Generator(device="cuda").manual_seed(1)
            x = (torch.rand(m, k, device="cuda", generator=g) * 2 - 1).to(dtype)
            w = (torch.rand(n, k, device="cuda", generator=g) * 2 - 1).to(dtype)
            b = (torch.rand(n, device="cuda", generator=g) * 2 - 1).to(dtype)
            iterations = int(min(max(5e10 / (2.0 * m * k * n), 5), 200))
            for variant, fn in (("addmm", lambda: torch.addmm(b, x, w.t())),
                                ("matmul_add", lambda: torch.matmul(x, w.t()) + b)):
                us = measure(fn, iterations, a.repeats)
                print(json.dumps({"bench": "matmul_bias", "impl": "torch", "variant": variant,
                                  "dtype": NAMES[dname], "m": m, "k": k, "n": n,
                                  "us": round(us, 3)}), flush=True)


if __name__ == "__main__":
    main()
