# bench/probes/weight_layout.rb: what the layers' weight layout costs the
# GPT-2 decode (issue 8). GPT-2's checkpoints store each layer's four
# product weights (k, n) (Conv1D), which the small-product generator reads
# a thread a column group with k split over blocks, the splits folded
# through scratch in the last block to arrive; stored (n, k), as PyTorch's
# Linear stores them, and read transposed, the same products run along k,
# a warp's lanes a column and no fold between blocks (fusion/
# cuda_gemv_codegen.cpp). The decode of examples/gpt2/model.rb is timed with
# the weights as given and with each copied once, before the loop, to
# (n, k) and read through a transposed view: the same ops, the same
# answers up to the products' order of addition. Not a benchmark of the
# library: a probe for deciding whether the model keeps its weights so.
#
#   bin/run bench/probes/weight_layout.rb [--dtypes SFloat,BFloat] [--tokens 64]
#                                         [--rounds 2] [--tiny]
require "json"
require "optparse"
require_relative "../../examples/gpt2/timing"

opts = { dtypes: "SFloat,BFloat", tokens: 64, rounds: 2, tiny: false }
OptionParser.new do |o|
  o.on("--dtypes LIST") { |v| opts[:dtypes] = v }
  o.on("--tokens N", Integer) { |v| opts[:tokens] = v }
  o.on("--rounds N", Integer) { |v| opts[:rounds] = v }
  o.on("--tiny") { opts[:tiny] = true } # the test's configuration: a check that it runs
end.parse!(ARGV)

# The names of a layer's weights that multiply (h.dot(w)).
PRODUCT_WEIGHTS = %w[attn.c_attn.weight attn.c_proj.weight mlp.c_fc.weight mlp.c_proj.weight].freeze

# weights with every layer's product weights stored (n, k) and given back
# as their (k, n) transposed views.
def along_k(weights, config)
  out = weights.dup
  config.n_layer.times do |l|
    PRODUCT_WEIGHTS.each do |name|
      key = "h.#{l}.#{name}"
      out[key] = weights[key].transpose.dup.transpose
    end
  end
  out
end

config = opts[:tiny] ? GPT2::Config.tiny : GPT2::Config.gpt2_124m
prompt = 464 % config.vocab_size
opts[:dtypes].split(",").each do |dname|
  dtype = Cumo.const_get(dname)
  stored = GPT2.random_weights(config, dtype: dtype, seed: 0, std: opts[:tiny] ? 0.3 : 0.02)
  layouts = { "k_n" => stored, "n_k" => along_k(stored, config) }
  opts[:rounds].times do |round|
    layouts.each do |layout, weights|
      GPT2.timed_decode(GPT2::Model.new(config, weights, dtype: dtype), prompt, 8) # compiles, captures
      run = GPT2.timed_decode(GPT2::Model.new(config, weights, dtype: dtype), prompt, opts[:tokens])
      s = GPT2.summary(run, 1)
      puts JSON.generate({ probe: "weight_layout", device: Cumo.gpu? ? Cumo.device_name : "cpu",
                           dtype: dname, round: round, layout: layout,
                           steady_ms_per_token: s[:steady_ms_per_token],
                           kernels_per_token: s[:kernels_per_token],
                           graph_replays_per_token: s[:graph_replays_per_token],
                           tokens: run[:tokens].flatten.first(16) })
    end
  end
end
