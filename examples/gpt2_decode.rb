# GPT-2 greedy decoding from Ruby (issue 8): the 124M model (12 layers, 12
# heads, 768 wide, vocabulary 50257, context 1024) written with Cumo's public
# API in examples/gpt2/model.rb, one step a token, the token id and the
# position kept on the device.
#
#   bin/run examples/gpt2_decode.rb [options]
#     --tokens N        new tokens (default 32)
#     --prompt ID[,ID]  the prompt token, one per sequence (default 464)
#     --dtype NAME      SFloat (default), BFloat, DFloat or HFloat
#     --batch B         sequences decoded together (default 1)
#     --weights FILE    a GPT-2 safetensors checkpoint (F32, F16 or BF16;
#                       checked against the configuration before any of it
#                       is read); without it, random weights from --seed
#     --seed S, --std X the random weights (default 0 and 0.02)
#     --tiny            the test's configuration: 2 layers, 4 heads, 64 wide,
#                       vocabulary 128, context 64 (and --std 0.3)
#     --layers, --heads, --width, --vocab, --context   any other configuration
#     --check           also decode with the plain-Ruby reference
#                       (examples/gpt2/reference.rb) and compare the tokens;
#                       for small configurations
#     --json            one JSON line instead of the summary
#
# It prints the tokens, tokens per second, and per token of the steady state
# (tokens 3 on): ms, kernels, graph replays, host syncs, and the NVRTC
# compiles and graph instantiations after the first two tokens.
require "json"
require "optparse"
require_relative "gpt2/timing"

opts = { tokens: 32, prompt: nil, dtype: "SFloat", batch: 1, weights: nil, seed: 0,
         std: nil, check: false, json: false }
config = GPT2::Config.gpt2_124m
OptionParser.new do |o|
  o.on("--tokens N", Integer) { |v| opts[:tokens] = v }
  o.on("--prompt LIST") { |v| opts[:prompt] = v.split(",").map { |t| Integer(t) } }
  o.on("--dtype NAME") { |v| opts[:dtype] = v }
  o.on("--batch N", Integer) { |v| opts[:batch] = v }
  o.on("--weights FILE") { |v| opts[:weights] = v }
  o.on("--seed N", Integer) { |v| opts[:seed] = v }
  o.on("--std X", Float) { |v| opts[:std] = v }
  o.on("--tiny") do
    config = GPT2::Config.tiny
    opts[:tiny] = true
  end
  o.on("--layers N", Integer) { |v| config.n_layer = v }
  o.on("--heads N", Integer) { |v| config.n_head = v }
  o.on("--width N", Integer) { |v| config.n_embd = v }
  o.on("--vocab N", Integer) { |v| config.vocab_size = v }
  o.on("--context N", Integer) { |v| config.n_ctx = v }
  o.on("--check") { opts[:check] = true }
  o.on("--json") { opts[:json] = true }
end.parse!(ARGV)

dtype = Cumo.const_get(opts[:dtype])
batch = opts[:batch]
std = opts[:std] || (opts[:tiny] ? 0.3 : 0.02)
# One prompt token per sequence: the one given, or 464 ("The"), and for a
# batch the next ids after it.
prompt = opts[:prompt] || Array.new(batch) { |i| (464 + i) % config.vocab_size }
prompt = prompt * batch if prompt.size == 1 && batch > 1
prompt = prompt[0] if batch == 1 && prompt.size == 1

GPT2.check_prompt(config.check!, batch, prompt) # before anything reaches the device
weights = if opts[:weights]
            GPT2.load_weights(opts[:weights], config, dtype: dtype)
          else
            GPT2.random_weights(config, dtype: dtype, seed: opts[:seed], std: std)
          end
model = GPT2::Model.new(config, weights, dtype: dtype, batch: batch)
Cumo.sync

run = GPT2.timed_decode(model, prompt, opts[:tokens])
summary = GPT2.summary(run, batch)
first = run[:tokens].map(&:first)
check = nil
if opts[:check]
  require_relative "gpt2/reference"
  ref = GPT2::Reference.new(config, weights.transform_values { |a| Cumo::DFloat.cast(a) })
  expected = Array(prompt).map { |p| ref.generate(p, opts[:tokens]) }
  check = run[:tokens].transpose == expected
end

if opts[:json]
  puts JSON.generate({ example: "gpt2_decode", device: Cumo.gpu? ? Cumo.device_name : "cpu",
                       config: config.to_h, dtype: opts[:dtype], batch: batch,
                       new_tokens: opts[:tokens], weights: opts[:weights] ? "file" : "random",
                       tokens: first, reference_agrees: check }.merge(summary))
  exit(check == false ? 1 : 0)
end

c = config
puts format("GPT-2 %d layers, %d heads, %d wide, vocabulary %d, context %d; %s, batch %d, " \
            "%s weights, on %s", c.n_layer, c.n_head, c.n_embd, c.vocab_size, c.n_ctx,
            opts[:dtype], batch, opts[:weights] ? "file" : "random",
            Cumo.gpu? ? Cumo.device_name : "the CPU executor")
puts "tokens#{batch > 1 ? ' (sequence 0)' : ''}: #{Array(prompt).first} -> #{first.join(' ')}"
puts format("%d tokens in %.3f s: %.1f tokens/s, %.3f ms/token; steady state (tokens 3..%d): " \
            "%.3f ms/token", opts[:tokens] * batch, run[:seconds], summary[:tokens_per_s],
            summary[:ms_per_token], opts[:tokens], summary[:steady_ms_per_token])
puts format("per token: %.2f kernels, %.2f graph replays, %.2f plans, %.2f host syncs, %d nodes recorded",
            summary[:kernels_per_token], summary[:graph_replays_per_token],
            summary[:plans_per_token], summary[:host_syncs_per_token], summary[:nodes_per_token])
puts format("after token 2: %d NVRTC compiles, %d graph instantiations, %d plan cache misses",
            summary[:nvrtc_compiles_after_token2], summary[:graph_instantiations_after_token2],
            summary[:plan_cache_misses_after_token2])
puts "plain-Ruby reference: #{check ? 'the same tokens' : 'DIFFERENT tokens'}" unless check.nil?
exit(check == false ? 1 : 0)
