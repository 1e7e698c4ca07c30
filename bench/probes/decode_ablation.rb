# bench/probes/decode_ablation.rb: what each part of a GPT-2 layer costs
# inside the decode (issue 8), where a kernel's time depends on the kernels
# around it (early starts, the L2, occupancy) as bench/kernel_times's chains
# of one kernel cannot show. The decode of examples/gpt2/model.rb is timed
# whole and with one part of every layer left out; the tokens are then
# wrong, the time is what the part costs. Not a benchmark of the library:
# a probe for deciding which fusion to build.
#
#   bin/run bench/probes/decode_ablation.rb [--dtype BFloat] [--tokens 64]
#                                           [--rounds 2] [--tiny]
#
# Parts: cache_write (the two KV-cache writes), attention (the scores,
# softmax and times V: y is q), mlp (fc, gelu_tanh and the projection),
# embedding (the token's two gathers, their position tables and their sum:
# x is the first step's, kept; the mask and the cache's position table
# stay). One JSON line per (part, round): steady ms a token and kernels a
# token. The embedding prices the token's small kernels in the chain, as a
# multi-domain kernel or gathers read as loads would take them away.
require "json"
require "optparse"
require_relative "../../examples/gpt2/timing"

opts = { dtype: "BFloat", tokens: 64, rounds: 2, tiny: false }
OptionParser.new do |o|
  o.on("--dtype NAME") { |v| opts[:dtype] = v }
  o.on("--tokens N", Integer) { |v| opts[:tokens] = v }
  o.on("--rounds N", Integer) { |v| opts[:rounds] = v }
  o.on("--tiny") { opts[:tiny] = true } # the test's configuration: a check that it runs
end.parse!(ARGV)

# The layer of examples/gpt2/model.rb with the part named by @left_out
# skipped (the same ops otherwise, in the same order).
module LeftOut
  attr_accessor :left_out

  private

  def block(x, w, layer, pos, bias)
    return super if left_out.nil?

    ln1_g, ln1_b, attn_w, attn_b, attn_pw, attn_pb, ln2_g, ln2_b, fc_w, fc_b, proj_w, proj_b = w
    c = @config
    b = @batch
    h = x.layer_norm(ln1_g, ln1_b, eps: GPT2::LAYER_NORM_EPS)
    qkv = (h.dot(attn_w) + attn_b).reshape(b, 3, c.n_head, 1, c.head_dim)
    q = qkv[true, 0, true, true, true]
    k_cache = @k_cache[layer]
    v_cache = @v_cache[layer]
    unless left_out == "cache_write"
      k_cache[true, true, pos, true] = qkv[true, 1, true, true, true]
      v_cache[true, true, pos, true] = qkv[true, 2, true, true, true]
    end
    y = if left_out == "attention"
          q.reshape(b, c.n_embd)
        else
          scores = q.matmul(k_cache.swapaxes(2, 3)) * @scale + bias
          scores.softmax.matmul(v_cache).reshape(b, c.n_embd)
        end
    x = x + (y.dot(attn_pw) + attn_pb)
    return x if left_out == "mlp"

    h = x.layer_norm(ln2_g, ln2_b, eps: GPT2::LAYER_NORM_EPS)
    h = Cumo::NMath.gelu_tanh(h.dot(fc_w) + fc_b)
    x + (h.dot(proj_w) + proj_b)
  end
end

# The embedding of examples/gpt2/model.rb left out: x is the first step's
# embedding, computed once and kept on the device.
module LeftOutEmbedding
  private

  def embed(tok, pos)
    return super unless left_out == "embedding"

    @kept_x ||= super(0, 0)
  end
end
GPT2::Model.prepend(LeftOut)
GPT2::Model.prepend(LeftOutEmbedding)

dtype = Cumo.const_get(opts[:dtype])
config = opts[:tiny] ? GPT2::Config.tiny : GPT2::Config.gpt2_124m
weights = GPT2.random_weights(config, dtype: dtype, seed: 0, std: 0.02)
prompt = 464 % config.vocab_size
opts[:rounds].times do |round|
  [nil, "cache_write", "attention", "mlp", "embedding"].each do |part|
    model = GPT2::Model.new(config, weights, dtype: dtype, batch: 1)
    model.left_out = part
    GPT2.timed_decode(model, prompt, 8) # compiles and captures
    model = GPT2::Model.new(config, weights, dtype: dtype, batch: 1)
    model.left_out = part
    s = GPT2.summary(GPT2.timed_decode(model, prompt, opts[:tokens]), 1)
    puts JSON.generate({ probe: "decode_ablation", device: Cumo.gpu? ? Cumo.device_name : "cpu",
                         dtype: opts[:dtype], round: round, left_out: part || "nothing",
                         steady_ms_per_token: s[:steady_ms_per_token],
                         kernels_per_token: s[:kernels_per_token],
                         graph_replays_per_token: s[:graph_replays_per_token] })
  end
end
