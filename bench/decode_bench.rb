# bench/decode_bench.rb: GPT-2 124M greedy decoding (issue 8), the model of
# examples/gpt2/model.rb, at each dtype and batch. One JSON line per
# (dtype, batch).
#
#   bin/run bench/decode_bench.rb [--dtypes SFloat,BFloat] [--batches 1,8]
#                                 [--tokens 128] [--prompt 464] [--seed 0]
#                                 [--weights FILE | --write-weights FILE]
#                                 [--tiny] [--tag NAME]
#
# Weights: random (seeded, std 0.02, drawn in SFloat and cast), or a GPT-2
# safetensors file. --write-weights writes the random ones as an F32
# safetensors file, so bench/peers/decode_peers.py --weights decodes with
# the very same weights and the tokens compare.
#
# Each (dtype, batch) decodes `tokens` new tokens twice from the same
# prompt: a cold run (the first, which compiles and captures) and a warm
# run. ms_per_token is the warm run's wall time over all its tokens, from
# the first op recorded to the last token on the device (Cumo.sync), one
# step making `batch` tokens; steady_ms_per_token leaves out its first two.
# kernels, graph replays, plans and host syncs per token are the warm run's
# over tokens 3..n (host syncs without the final Cumo.sync; the run itself
# syncs once after token 2 to take that snapshot). The *_after_token2
# counts are the cold run's: NVRTC compiles, graph instantiations and plan
# cache misses after its first two tokens. device_ms_per_token needs
# CUMO_PROFILE=1 (CUDA events around each replay), which also adds to the
# wall time: bench/decode_device_run.sh runs it as a second, tagged pass.
require "json"
require "optparse"
require_relative "../examples/gpt2/timing"

opts = { dtypes: "SFloat,BFloat", batches: "1,8", tokens: 128, prompt: 464, seed: 0,
         weights: nil, write_weights: nil, tiny: false, tag: nil }
OptionParser.new do |o|
  o.on("--dtypes LIST") { |v| opts[:dtypes] = v }
  o.on("--batches LIST") { |v| opts[:batches] = v }
  o.on("--tokens N", Integer) { |v| opts[:tokens] = v }
  o.on("--prompt ID", Integer) { |v| opts[:prompt] = v }
  o.on("--seed N", Integer) { |v| opts[:seed] = v }
  o.on("--weights FILE") { |v| opts[:weights] = v }
  o.on("--write-weights FILE") { |v| opts[:write_weights] = v }
  o.on("--tiny") { opts[:tiny] = true }
  o.on("--tag NAME") { |v| opts[:tag] = v }
end.parse!(ARGV)

config = opts[:tiny] ? GPT2::Config.tiny : GPT2::Config.gpt2_124m
# The sequences of a batch start from consecutive prompt tokens (the
# peers do the same).
prompts = ->(batch) { Array.new(batch) { |i| (opts[:prompt] + i) % config.vocab_size } }
opts[:batches].split(",").each { |b| GPT2.check_prompt(config, Integer(b), prompts.(Integer(b))) }

master = if opts[:weights]
           GPT2.load_weights(opts[:weights], config, dtype: Cumo::SFloat)
         else
           GPT2.random_weights(config, dtype: Cumo::SFloat, seed: opts[:seed],
                               std: opts[:tiny] ? 0.3 : 0.02)
         end
Cumo::Safetensors.write(opts[:write_weights], master) if opts[:write_weights]
Cumo.sync

opts[:dtypes].split(",").each do |dname|
  dtype = Cumo.const_get(dname)
  weights = dtype == Cumo::SFloat ? master : master.transform_values { |a| dtype.cast(a) }
  opts[:batches].split(",").map { |b| Integer(b) }.each do |batch|
    model = GPT2::Model.new(config, weights, dtype: dtype, batch: batch)
    prompt = batch == 1 ? prompts.(1)[0] : prompts.(batch)
    Cumo.sync
    cold = GPT2.timed_decode(model, prompt, opts[:tokens])
    GC.start
    warm = GPT2.timed_decode(model, prompt, opts[:tokens])
    s = GPT2.summary(warm, batch)
    c = GPT2.summary(cold, batch)
    line = {
      bench: "decode", impl: "cumo", tag: opts[:tag], device: Cumo.gpu? ? Cumo.device_name : "cpu",
      config: config.to_h, dtype: dname, batch: batch, new_tokens: opts[:tokens],
      weights: opts[:weights] ? File.basename(opts[:weights]) : "random seed #{opts[:seed]}",
      profiled: !ENV["CUMO_PROFILE"].to_s.empty?
    }.merge(s).merge(
      cold_ms_per_token: c[:ms_per_token],
      nvrtc_compiles_after_token2: c[:nvrtc_compiles_after_token2],
      graph_instantiations_after_token2: c[:graph_instantiations_after_token2],
      plan_cache_misses_after_token2: c[:plan_cache_misses_after_token2],
      warm_nvrtc_compiles: warm[:first2][:nvrtc_compiles] + warm[:steady][:nvrtc_compiles],
      warm_graph_instantiations: warm[:first2][:graph_instantiations] +
                                 warm[:steady][:graph_instantiations],
      # Early-start edges in the graphs the cold run instantiated (tokens
      # 1-2): how many kernels may start while the one they wait for ends.
      cold_early_starts: cold[:first2][:early_starts],
      library_captures_per_token: (warm[:steady][:library_captures] / warm[:steady_tokens].to_f).round(2),
      cold_tokens_equal_warm: cold[:tokens] == warm[:tokens],
      tokens: warm[:tokens].map(&:first)
    )
    puts JSON.generate(line)
    $stdout.flush
    model = nil
    GC.start
  end
end
