"""bench/peers/decode_peers.py: GPT-2 greedy decoding in PyTorch, the peers
of bench/decode_bench.rb (issue 8), in the same JSON-line format.

    python3 bench/peers/decode_peers.py [--weights FILE] [--dtypes float32,bfloat16]
        [--batches 1,8] [--tokens 128] [--prompt 464] [--only eager,graph,hf]
        [--tiny | --layers 12 --heads 12 --width 768 --vocab 50257 --context 1024]

The same model, the same greedy decoding, the same prompts (sequence i of
a batch starts from prompt + i), and with --weights the very same weights
(the F32 safetensors file bench/decode_bench.rb --write-weights wrote; cast
to bf16 on the device as ours are):

  torch_eager   the model as ours is written: a static KV cache of the whole
                context written at a device-resident position (index_copy_),
                attention over it with an additive mask past the position,
                F.layer_norm, softmax, F.gelu(approximate="tanh"), the LM
                head and argmax, whose answer is the next step's token: a
                Python loop of eager kernels, no host sync in it
  torch_graph   that step captured once as a CUDA graph (torch.cuda.graph)
                and replayed once per token; the step advances the position
                and the token on the device, so the loop is replays only
  hf_generate   transformers' GPT2LMHeadModel.generate (greedy, its own
                growing cache), when transformers is importable; weights
                loaded from the same file, no download

ms_per_token: wall time over `tokens` decode steps (a step makes `batch`
tokens) after a warm-up decode, ended by torch.cuda.synchronize().
kernels_per_token: CUDA kernels the torch profiler (CUPTI) records over a
few steps, memcpy and memset left out; for the graph, over replays (CUPTI
reports a graph's kernel nodes one by one). host_syncs_per_token: the
synchronizing calls torch.cuda.set_sync_debug_mode("warn") reports over
a few steps (not available for the graph, whose capture would have failed
on one: 0). TF32 stays off, as ours is by default.
"""
import argparse
import json
import math
import struct
import sys
import time
import warnings

import torch
import torch.nn.functional as F

NAMES = {"float32": "SFloat", "bfloat16": "BFloat", "float64": "DFloat", "float16": "HFloat"}


def dtype_name(dtype):
    """Our class name for a torch dtype (torch.float32 -> "SFloat")."""
    return NAMES[str(dtype).removeprefix("torch.")]


ST_DTYPES = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16,
             "F64": torch.float64}


def read_safetensors(path):
    """name -> CPU tensor, from a safetensors file (8-byte little-endian
    header length, JSON header, data)."""
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = bytearray(f.read())
    header.pop("__metadata__", None)
    out = {}
    for name, e in header.items():
        dt = ST_DTYPES[e["dtype"]]
        a, b = e["data_offsets"]
        count = (b - a) // torch.empty(0, dtype=dt).element_size()
        out[name] = torch.frombuffer(data, dtype=dt, count=count, offset=a).reshape(e["shape"]).clone()
    return out


def layer_weight_shapes(d):
    """A layer's weights in the order a step takes them, with their shapes
    for a width of d (examples/gpt2/model.rb's layer_weight_shapes)."""
    return {"ln_1.weight": (d,), "ln_1.bias": (d,), "attn.c_attn.weight": (d, 3 * d),
            "attn.c_attn.bias": (3 * d,), "attn.c_proj.weight": (d, d), "attn.c_proj.bias": (d,),
            "ln_2.weight": (d,), "ln_2.bias": (d,), "mlp.c_fc.weight": (d, 4 * d),
            "mlp.c_fc.bias": (4 * d,), "mlp.c_proj.weight": (4 * d, d), "mlp.c_proj.bias": (d,)}


def weight_names(cfg):
    names = ["wte.weight", "wpe.weight"]
    for i in range(cfg.n_layer):
        names += [f"h.{i}.{n}" for n in layer_weight_shapes(cfg.n_embd)]
    return names + ["ln_f.weight", "ln_f.bias"]


def random_weights(cfg, seed, std):
    """Random weights drawn as GPT2.random_weights draws them (not the same
    numbers: another generator). Used only without --weights."""
    g = torch.Generator().manual_seed(seed)
    d = cfg.n_embd
    shapes = {"wte.weight": (cfg.vocab_size, d), "wpe.weight": (cfg.n_ctx, d),
              "ln_f.weight": (d,), "ln_f.bias": (d,)}
    for i in range(cfg.n_layer):
        for n, s in layer_weight_shapes(d).items():
            shapes[f"h.{i}.{n}"] = s
    w = {}
    for name in weight_names(cfg):
        t = torch.randn(shapes[name], generator=g) * std
        if name.endswith(("ln_1.weight", "ln_2.weight", "ln_f.weight")):
            t += 1.0
        w[name] = t
    return w


class Config:
    def __init__(self, a):
        self.n_layer, self.n_head, self.n_embd = a.layers, a.heads, a.width
        self.vocab_size, self.n_ctx = a.vocab, a.context
        self.head_dim = self.n_embd // self.n_head


class StaticDecoder:
    """One decode step with every buffer allocated up front, so that it can be
    captured as a CUDA graph: the token ids, the position and the KV cache
    live on the device and the step updates them in place."""

    def __init__(self, cfg, w, batch, dtype, prompt, dev):
        self.cfg, self.w, self.batch, self.dtype = cfg, w, batch, dtype
        self.dev = dev
        L, H, T, hd = cfg.n_layer, cfg.n_head, cfg.n_ctx, cfg.head_dim
        self.k = torch.zeros(L, batch, H, T, hd, dtype=dtype, device=dev)
        self.v = torch.zeros(L, batch, H, T, hd, dtype=dtype, device=dev)
        self.positions = torch.arange(T, device=dev)
        self.pos = torch.zeros(1, dtype=torch.long, device=dev)
        self.prompt = torch.tensor(prompt, dtype=torch.long, device=dev)
        self.tok = self.prompt.clone()
        self.out = torch.zeros(batch, T, dtype=torch.long, device=dev)
        self.scale = 1.0 / math.sqrt(hd)
        self.mask_value = -1e9
        self.layers = [[w[f"h.{i}.{n}"] for n in layer_weight_shapes(cfg.n_embd)]
                       for i in range(L)]

    def reset(self):
        self.k.zero_()
        self.v.zero_()
        self.pos.zero_()
        self.tok.copy_(self.prompt)
        self.out.zero_()

    @torch.no_grad()
    def step(self):
        cfg, w, B = self.cfg, self.w, self.batch
        D, H, hd = cfg.n_embd, cfg.n_head, cfg.head_dim
        x = F.embedding(self.tok, w["wte.weight"]) + torch.index_select(w["wpe.weight"], 0, self.pos)
        bias = (self.positions > self.pos).to(self.dtype) * self.mask_value
        for l, (g1, b1, wa, ba, wp, bp, g2, b2, wf, bf, wm, bm) in enumerate(self.layers):
            h = F.layer_norm(x, (D,), g1, b1, 1e-5)
            qkv = (h @ wa + ba).view(B, 3, H, 1, hd)
            q = qkv[:, 0]
            self.k[l].index_copy_(2, self.pos, qkv[:, 1])
            self.v[l].index_copy_(2, self.pos, qkv[:, 2])
            scores = (q @ self.k[l].transpose(-1, -2)) * self.scale + bias
            y = (torch.softmax(scores, dim=-1) @ self.v[l]).reshape(B, D)
            x = x + (y @ wp + bp)
            h = F.layer_norm(x, (D,), g2, b2, 1e-5)
            h = F.gelu(h @ wf + bf, approximate="tanh")
            x = x + (h @ wm + bm)
        x = F.layer_norm(x, (D,), w["ln_f.weight"], w["ln_f.bias"], 1e-5)
        nxt = (x @ w["wte.weight"].t()).argmax(dim=-1)
        self.out.index_copy_(1, self.pos, nxt.view(B, 1))
        self.tok.copy_(nxt)
        self.pos += 1


def count_kernels(fn, steps):
    """CUDA kernels the profiler records over `steps` calls of fn, per call."""
    from torch.profiler import ProfilerActivity, profile
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            fn()
        torch.cuda.synchronize()
    n = 0
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA and \
                not e.name.startswith(("Memcpy", "Memset", "memcpy", "memset")):
            n += 1
    return n / steps


def count_syncs(fn, steps):
    """Synchronizing calls torch reports (set_sync_debug_mode) over `steps`
    calls of fn, per call."""
    torch.cuda.synchronize()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.cuda.set_sync_debug_mode("warn")
        try:
            for _ in range(steps):
                fn()
        finally:
            torch.cuda.set_sync_debug_mode("default")
    torch.cuda.synchronize()
    return sum(1 for c in caught if "synchroniz" in str(c.message)) / steps


def emit(a, cfg, impl, dtype, batch, seconds, tokens, kernels=None, syncs=None, extra=None):
    line = {"bench": "decode", "impl": impl, "device": torch.cuda.get_device_name(),
            "config": {"n_layer": cfg.n_layer, "n_head": cfg.n_head, "n_embd": cfg.n_embd,
                       "vocab_size": cfg.vocab_size, "n_ctx": cfg.n_ctx},
            "dtype": dtype_name(dtype), "batch": batch, "new_tokens": a.tokens,
            "ms_per_token": round(seconds * 1e3 / a.tokens, 4),
            "tokens_per_s": round(batch * a.tokens / seconds, 1),
            "kernels_per_token": None if kernels is None else round(kernels, 2),
            "host_syncs_per_token": None if syncs is None else round(syncs, 2),
            "tokens": tokens, "torch": torch.__version__}
    line.update(extra or {})
    print(json.dumps(line), flush=True)


def emit_error(a, impl, dtype, batch, e):
    print(json.dumps({"bench": "decode", "impl": impl, "dtype": dtype_name(dtype), "batch": batch,
                      "error": f"{type(e).__name__}: {e}"[:300]}), flush=True)


def timed(fn, n):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    torch.cuda.synchronize()
    return time.perf_counter() - t0


def run_static(a, cfg, w, dtype, batch, prompt, dev):
    dec = StaticDecoder(cfg, w, batch, dtype, prompt, dev)
    n = a.tokens
    if "eager" in a.only:
        try:
            dec.reset()
            timed(dec.step, n)  # warm-up: the same decode
            dec.reset()
            seconds = timed(dec.step, n)
            tokens = dec.out[0, :n].tolist()
            dec.reset()
            kernels = count_kernels(dec.step, 4)
            dec.reset()
            syncs = count_syncs(dec.step, 4)
            emit(a, cfg, "torch_eager", dtype, batch, seconds, tokens, kernels, syncs)
        except Exception as e:  # report and go on with the other peers
            emit_error(a, "torch_eager", dtype, batch, e)
    if "graph" in a.only:
        try:
            dec.reset()
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                for _ in range(3):
                    dec.step()
            torch.cuda.current_stream().wait_stream(s)
            dec.reset()
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                dec.step()
            dec.reset()
            timed(g.replay, n)  # warm-up
            dec.reset()
            seconds = timed(g.replay, n)
            tokens = dec.out[0, :n].tolist()
            dec.reset()
            kernels = count_kernels(g.replay, 4)
            emit(a, cfg, "torch_graph", dtype, batch, seconds, tokens, kernels, 0.0,
                 {"graph_replays_per_token": 1.0})
            del g
        except Exception as e:
            emit_error(a, "torch_graph", dtype, batch, e)
    del dec
    torch.cuda.empty_cache()


def run_hf(a, cfg, w, dtype, batch, prompt, dev):
    try:
        import transformers
        from transformers import GPT2Config, GPT2LMHeadModel
    except Exception as e:  # not installed there
        emit_error(a, "hf_generate", dtype, batch, e)
        return
    try:
        hc = GPT2Config(vocab_size=cfg.vocab_size, n_positions=cfg.n_ctx, n_embd=cfg.n_embd,
                        n_layer=cfg.n_layer, n_head=cfg.n_head, activation_function="gelu_new",
                        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
                        layer_norm_epsilon=1e-5, tie_word_embeddings=True)
        model = GPT2LMHeadModel(hc)
        sd = {f"transformer.{k}": v for k, v in w.items()}
        sd["lm_head.weight"] = w["wte.weight"]
        missing, unexpected = model.load_state_dict(sd, strict=False)
        missing = [k for k in missing if not k.endswith(("attn.bias", "attn.masked_bias"))]
        if missing or unexpected:
            raise RuntimeError(f"state dict: missing {missing[:4]}, unexpected {unexpected[:4]}")
        model = model.to(device=dev, dtype=dtype).eval()
        gc = model.generation_config
        gc.eos_token_id = None
        gc.pad_token_id = 0
        ids = torch.tensor(prompt, dtype=torch.long, device=dev).view(batch, 1)
        mask = torch.ones_like(ids)

        def gen(n):
            with torch.no_grad():
                # No end-of-text token: every call makes n tokens.
                return model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=n,
                                      do_sample=False, num_beams=1, use_cache=True,
                                      generation_config=gc)

        gen(a.tokens)  # warm-up
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        out = gen(a.tokens)
        torch.cuda.synchronize()
        seconds = time.perf_counter() - t0
        tokens = out[0, 1:].tolist()
        k = 8
        kernels = count_kernels(lambda: gen(k), 1) / k
        syncs = count_syncs(lambda: gen(k), 1) / k
        emit(a, cfg, "hf_generate", dtype, batch, seconds, tokens, kernels, syncs,
             {"transformers": transformers.__version__,
              "attn_implementation": getattr(model.config, "_attn_implementation", None)})
        del model
        torch.cuda.empty_cache()
    except Exception as e:
        emit_error(a, "hf_generate", dtype, batch, e)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--weights")
    p.add_argument("--dtypes", default="float32,bfloat16")
    p.add_argument("--batches", default="1,8")
    p.add_argument("--tokens", type=int, default=128)
    p.add_argument("--prompt", type=int, default=464)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--only", default="eager,graph,hf")
    p.add_argument("--tiny", action="store_true")
    p.add_argument("--layers", type=int, default=12)
    p.add_argument("--heads", type=int, default=12)
    p.add_argument("--width", type=int, default=768)
    p.add_argument("--vocab", type=int, default=50257)
    p.add_argument("--context", type=int, default=1024)
    a = p.parse_args()
    if a.tiny:
        a.layers, a.heads, a.width, a.vocab, a.context = 2, 4, 64, 128, 64
    a.only = a.only.split(",")
    cfg = Config(a)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda")
    if a.weights:
        master = read_safetensors(a.weights)
        master = {k.removeprefix("transformer."): v for k, v in master.items()}
    else:
        master = random_weights(cfg, a.seed, 0.3 if a.tiny else 0.02)
    for name in weight_names(cfg):
        if name not in master:
            sys.exit(f"decode_peers.py: {a.weights}: tensor {name} is missing")
    master = {k: master[k].to(dev) for k in weight_names(cfg)}
    for dname in a.dtypes.split(","):
        dtype = getattr(torch, dname)
        w = {k: v.to(dtype) for k, v in master.items()}
        for batch in (int(b) for b in a.batches.split(",")):
            prompt = [(a.prompt + i) % cfg.vocab_size for i in range(batch)]
            run_static(a, cfg, w, dtype, batch, prompt, dev)
            if "hf" in a.only:
                run_hf(a, cfg, w, dtype, batch, prompt, dev)


if __name__ == "__main__":
    main()
