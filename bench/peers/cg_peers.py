"""The CG benchmark of bench/cg_bench.rb in PyTorch, CuPy and JAX.

The same problem (5-point Poisson on an n x n grid, zero Dirichlet
boundary, b uniform in [0, 1), x0 = 0, scalars kept on the device, no
convergence test), written the way each library's users write it:

  torch_eager   the loop in Python, one kernel per op
  torch_graph   the same loop captured as a CUDA graph of `chunk` iterations
  cupy_eager    the loop in Python on CuPy
  cupy_graph    CuPy stream capture of `chunk` iterations, replayed
  jax_fori      jax.jit over the whole solve in lax.fori_loop

Prints one JSON line per implementation, in bench/cg_bench.rb's format.
  python3 bench/peers/cg_peers.py [--n 512] [--iterations 1000] [--dtype float32]
"""
import argparse
import json
import time

import numpy as np


B_FILE = None


def make_b(n, dtype):
    """b of the problem: the very array Cumo solved (--b-file, written by
    cg_bench.rb --write-b), so residuals compare, or else uniform [0, 1)."""
    if B_FILE:
        return np.fromfile(B_FILE, dtype=dtype).reshape(n, n)
    return np.random.default_rng(0).random((n, n)).astype(dtype)


def emit(impl, args, seconds, iterations, residual, kernels=None):
    print(json.dumps({
        "bench": "cg", "impl": impl, "n": args.n, "dtype": args.dtype,
        "scalars": "device", "check_every": 0, "iterations": iterations,
        "us_per_iter": round(seconds * 1e6 / iterations, 3),
        "relative_residual": float(residual), "kernels_per_iter": kernels,
    }), flush=True)


def torch_runs(args):
    import torch
    dt = {"float32": torch.float32, "float64": torch.float64}[args.dtype]
    dev = torch.device("cuda")
    b = torch.tensor(make_b(args.n, args.dtype), device=dev, dtype=dt)

    def lap(v):
        ap = 4.0 * v
        ap[1:, :] -= v[:-1, :]
        ap[:-1, :] -= v[1:, :]
        ap[:, 1:] -= v[:, :-1]
        ap[:, :-1] -= v[:, 1:]
        return ap

    def state():
        x = torch.zeros_like(b)
        r = b.clone()
        p = r.clone()
        rs = (r * r).sum()
        return x, r, p, rs

    def step(x, r, p, rs):
        ap = lap(p)
        alpha = rs / (p * ap).sum()
        x += p * alpha
        r -= ap * alpha
        rs_new = (r * r).sum()
        p.copy_(r + p * (rs_new / rs))
        rs.copy_(rs_new)

    bnorm = torch.linalg.norm(b).item()
    x, r, p, rs = state()
    for _ in range(20):
        step(x, r, p, rs)
    x, r, p, rs = state()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(args.iterations):
        step(x, r, p, rs)
    torch.cuda.synchronize()
    emit("torch_eager", args, time.perf_counter() - t0, args.iterations,
         torch.linalg.norm(r).item() / bnorm)

    x, r, p, rs = state()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            step(x, r, p, rs)
    torch.cuda.current_stream().wait_stream(s)
    x, r, p, rs = state()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(args.chunk):
            step(x, r, p, rs)
    x2, r2, p2, rs2 = state()
    x.copy_(x2); r.copy_(r2); p.copy_(p2); rs.copy_(rs2)
    reps = args.iterations // args.chunk
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(reps):
        g.replay()
    torch.cuda.synchronize()
    emit("torch_graph", args, time.perf_counter() - t0, reps * args.chunk,
         torch.linalg.norm(r).item() / bnorm)


def cupy_runs(args):
    import cupy as cp
    b = cp.asarray(make_b(args.n, args.dtype))

    def lap(v):
        ap = 4.0 * v
        ap[1:, :] -= v[:-1, :]
        ap[:-1, :] -= v[1:, :]
        ap[:, 1:] -= v[:, :-1]
        ap[:, :-1] -= v[:, 1:]
        return ap

    def state():
        x = cp.zeros_like(b)
        r = b.copy()
        p = r.copy()
        rs = (r * r).sum()
        return x, r, p, rs

    def step(x, r, p, rs):
        ap = lap(p)
        alpha = rs / (p * ap).sum()
        x += p * alpha
        r -= ap * alpha
        rs_new = (r * r).sum()
        p[...] = r + p * (rs_new / rs)
        rs[...] = rs_new

    bnorm = float(cp.linalg.norm(b))
    x, r, p, rs = state()
    for _ in range(20):
        step(x, r, p, rs)
    x, r, p, rs = state()
    cp.cuda.Device().synchronize()
    t0 = time.perf_counter()
    for _ in range(args.iterations):
        step(x, r, p, rs)
    cp.cuda.Device().synchronize()
    emit("cupy_eager", args, time.perf_counter() - t0, args.iterations,
         float(cp.linalg.norm(r)) / bnorm)

    x, r, p, rs = state()
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        step(x, r, p, rs)  # warm the kernel cache outside the capture
        x2, r2, p2, rs2 = state()
        x[...] = x2; r[...] = r2; p[...] = p2; rs[...] = rs2
        stream.begin_capture()
        for _ in range(args.chunk):
            step(x, r, p, rs)
        graph = stream.end_capture()
    stream.synchronize()
    reps = args.iterations // args.chunk
    t0 = time.perf_counter()
    for _ in range(reps):
        graph.launch(stream)
    stream.synchronize()
    emit("cupy_graph", args, time.perf_counter() - t0, reps * args.chunk,
         float(cp.linalg.norm(r)) / bnorm)


def jax_runs(args):
    import jax
    import jax.numpy as jnp
    if args.dtype == "float64":
        jax.config.update("jax_enable_x64", True)
    b = jnp.asarray(make_b(args.n, args.dtype))

    def lap(v):
        ap = 4.0 * v
        ap = ap.at[1:, :].add(-v[:-1, :])
        ap = ap.at[:-1, :].add(-v[1:, :])
        ap = ap.at[:, 1:].add(-v[:, :-1])
        ap = ap.at[:, :-1].add(-v[:, 1:])
        return ap

    def body(_, s):
        x, r, p, rs = s
        ap = lap(p)
        alpha = rs / jnp.sum(p * ap)
        x = x + p * alpha
        r = r - ap * alpha
        rs_new = jnp.sum(r * r)
        p = r + p * (rs_new / rs)
        return x, r, p, rs_new

    @jax.jit
    def solve(b):
        s = (jnp.zeros_like(b), b, b, jnp.sum(b * b))
        return jax.lax.fori_loop(0, args.iterations, body, s)

    out = solve(b)
    jax.block_until_ready(out)
    t0 = time.perf_counter()
    out = solve(b)
    jax.block_until_ready(out)
    seconds = time.perf_counter() - t0
    emit("jax_fori", args, seconds, args.iterations,
         float(jnp.linalg.norm(out[1]) / jnp.linalg.norm(b)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=512)
    ap.add_argument("--iterations", type=int, default=1000)
    ap.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    ap.add_argument("--chunk", type=int, default=50)
    ap.add_argument("--only", default="torch,cupy,jax")
    ap.add_argument("--b-file", help="raw b (n*n elements of dtype) to solve")
    args = ap.parse_args()
    global B_FILE
    B_FILE = args.b_file
    runs = {"torch": torch_runs, "cupy": cupy_runs, "jax": jax_runs}
    for name in args.only.split(","):
        try:
            runs[name](args)
        except Exception as e:  # a missing peer is reported, not fatal
            print(json.dumps({"bench": "cg", "impl": name, "error": repr(e)}), flush=True)


if __name__ == "__main__":
    main()
