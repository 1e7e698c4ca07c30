"""The timing loop of the peer benchmarks: CUDA-event microseconds per call
of `fn` over `iterations` back-to-back calls, after three warm-up calls,
the best of `repeats` runs."""
import torch


def measure(fn, iterations, repeats):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    best = None
    for _ in range(repeats):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(iterations):
            fn()
        end.record()
        torch.cuda.synchronize()
        us = start.elapsed_time(end) * 1e3 / iterations
        best = us if best is None else min(best, us)
    return best
