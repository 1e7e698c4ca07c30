# frozen_string_literal: true

# GPT-2 greedy decoding (issue 8), examples/gpt2/model.rb on the tiny
# configuration (2 layers, 4 heads, 64 wide, vocabulary 128, context 64):
# the Cumo model in DFloat and the plain-Ruby reference of
# examples/gpt2/reference.rb give the same 32 tokens from the same seeded
# weights, one sequence and a batch; SFloat gives them too, BFloat runs.
# DFloat, as DESIGN.md says, so that a near tie in argmax cannot flip a
# token: the smallest gap between the two largest logits over these 32
# steps is 0.5% of the largest, far above the rounding of either class.
# This file runs on the CPU executor (suite cpu) and on the CUDA executor
# (suite gpu, through gpu_runner.rb), so the three agree.
#
# Then bad input: a prompt token outside the vocabulary, and safetensors
# files of the wrong shape or dtype, truncated, or not the format, each a
# Ruby exception naming what and where, raised before anything is recorded.
require "minitest/autorun"
require "tmpdir"
require "json"
require "cumo/narray"
require_relative "child_ruby"
require "cumo/safetensors"
require_relative "../../examples/gpt2/model"
require_relative "../../examples/gpt2/reference"

class TestGPT2Decode < Minitest::Test
  include ChildRuby

  STEPS = 32
  EXAMPLE = File.expand_path("../../examples/gpt2_decode.rb", __dir__)

  def config = GPT2::Config.tiny

  # The weights of every test, in DFloat; the reference reads them with to_a.
  def weights
    @@weights ||= GPT2.random_weights(GPT2::Config.tiny, dtype: Cumo::DFloat, seed: 1, std: 0.3)
  end

  def reference(prompt)
    @@reference ||= {}
    @@reference[prompt] ||= GPT2::Reference.new(GPT2::Config.tiny, weights).generate(prompt, STEPS)
  end

  def decode(dtype, prompt, batch: 1, steps: STEPS, w: weights)
    w = w.transform_values { |a| dtype.cast(a) } unless dtype == Cumo::DFloat
    model = GPT2::Model.new(config, w, dtype: dtype, batch: batch)
    tokens = model.generate(prompt, steps)
    # The loop read nothing: every token is still a device array.
    tokens.map { |t| batch == 1 ? Integer(t) : t.to_a }
  end

  # ---- the same tokens -----------------------------------------------------------

  def test_dfloat_matches_reference
    ref = reference(5)
    assert_operator ref.uniq.size, :>=, 10, "the reference should wander, not repeat its prompt"
    assert_equal ref, decode(Cumo::DFloat, 5)
  end

  def test_batch_matches_reference_per_sequence
    got = decode(Cumo::DFloat, [5, 77], batch: 2)
    assert_equal [reference(5), reference(77)], got.transpose
  end

  def test_sfloat_matches_reference
    assert_equal reference(5), decode(Cumo::SFloat, 5)
  end

  def test_bfloat_decodes
    got = decode(Cumo::BFloat, 5, steps: 8)
    assert_equal 8, got.size
    assert(got.all? { |t| t.between?(0, config.vocab_size - 1) })
  end

  # The argmax answers a 0-dim device array that the next step reads as its
  # token; at batch B an Int32 of B.
  def test_tokens_stay_on_the_device
    model = GPT2::Model.new(config, weights, dtype: Cumo::DFloat)
    tok = model.generate(5, 2).last
    assert_instance_of Cumo::Int32, tok
    assert_equal [], tok.shape
    model = GPT2::Model.new(config, weights, dtype: Cumo::DFloat, batch: 3)
    assert_equal [3], model.generate([1, 2, 3], 2).last.shape
  end

  # A warm decode of the same model runs plans it has already made, every
  # token alike; on the GPU nothing is compiled. (Graph instantiations are
  # bench/decode_bench.rb's to count: they depend on buffer addresses.)
  # Warm means two decodes before: the second may still grow a plan's
  # stored set (which of its values Ruby held when the first ran depends on
  # when Ruby's GC ran; DESIGN.md, "What gets materialized"), and the set
  # only grows, so from the third on the plans are settled.
  def test_warm_decode_reuses_its_plans
    model = GPT2::Model.new(config, weights, dtype: Cumo::DFloat)
    Cumo.sync # the weights: otherwise the first decode's first plan draws them
    2.times { model.generate(5, 6).each { |t| Integer(t) } }
    Cumo.reset_stats
    per_step = []
    # generate flushes each step: the kernels a step launched are counted
    # when the block runs.
    model.generate(5, 6) { per_step << Cumo.stats[:kernels_launched] }
    Cumo.sync
    stats = Cumo.stats
    assert_equal 0, stats[:plan_cache_misses]
    assert_equal 0, stats[:nvrtc_compiles]
    assert_equal 0, stats[:host_syncs] - 1 # the final sync only
    steps = per_step.each_cons(2).map { |a, b| b - a }
    assert_operator steps.first, :>, 0, "kernels per step: #{steps}"
    assert_equal 1, steps.uniq.size, "kernels per step: #{steps}"
  end

  def test_context_full
    small = GPT2::Config.tiny
    small.n_ctx = 4
    w = GPT2.random_weights(small, dtype: Cumo::DFloat, seed: 2)
    model = GPT2::Model.new(small, w, dtype: Cumo::DFloat)
    e = assert_raises(ArgumentError) { model.generate(3, 5) }
    assert_match(/context of 4 positions is full/, e.message)
  end

  # ---- bad input -----------------------------------------------------------------

  # Raises `klass` with a message matching each of `patterns`, and recorded
  # nothing before it did.
  def assert_refused(klass, *patterns, &block)
    Cumo.sync
    Cumo.reset_stats
    e = assert_raises(klass, &block)
    patterns.each { |pat| assert_match pat, e.message }
    assert_equal 0, Cumo.stats[:nodes_recorded], "device work before #{klass}: #{e.message}"
    e
  end

  def test_prompt_token_outside_the_vocabulary
    model = GPT2::Model.new(config, weights, dtype: Cumo::DFloat)
    assert_refused(ArgumentError, /prompt token 128/, /vocabulary \(0\.\.\.128\)/) { model.generate(128, 4) }
    assert_refused(ArgumentError, /prompt token -1/) { model.generate(-1, 4) }
    assert_refused(TypeError, /must be an Integer/) { model.generate(1.5, 4) }
    model = GPT2::Model.new(config, weights, dtype: Cumo::DFloat, batch: 2)
    assert_refused(ArgumentError, /prompt token 500 \(sequence 1\)/) { model.generate([3, 500], 4) }
    assert_refused(ArgumentError, /1 token\(s\) for a batch of 2/) { model.generate(3, 4) }
    assert_raises(ArgumentError) { GPT2.check_prompt(config, 1, 99_999) }
  end

  def test_weights_of_the_wrong_class_or_shape
    w = weights.dup
    w["h.1.mlp.c_fc.weight"] = Cumo::DFloat.zeros(256, 64)
    e = assert_raises(ArgumentError) { GPT2::Model.new(config, w, dtype: Cumo::DFloat) }
    assert_match(/h\.1\.mlp\.c_fc\.weight has shape \[256, 64\], expected \[64, 256\]/, e.message)
    e = assert_raises(TypeError) { GPT2::Model.new(config, weights, dtype: Cumo::SFloat) }
    assert_match(/is Cumo::DFloat, expected Cumo::SFloat/, e.message)
    assert_raises(TypeError) { GPT2::Model.new(config, weights, dtype: Cumo::Int32) }
  end

  # ---- safetensors ---------------------------------------------------------------

  def with_file(tensors, name: "gpt2.safetensors")
    Dir.mktmpdir do |dir|
      path = File.join(dir, name)
      Cumo::Safetensors.write(path, tensors)
      yield path
    end
  end

  def sfloat_weights = weights.transform_values { |a| Cumo::SFloat.cast(a) }

  # A checkpoint written in F32 reads back to the very weights, and decodes
  # the reference's tokens; BF16 and F16 files load too (cast on the device).
  def test_safetensors_round_trip
    with_file(weights) do |path|
      st = Cumo::Safetensors.open(path)
      assert_equal GPT2.weight_shapes(config).keys.sort, st.names.sort
      assert_equal({ name: "wpe.weight", dtype: "F64", shape: [64, 64], offset: st["wpe.weight"][:offset],
                     bytes: 64 * 64 * 8 }, st["wpe.weight"])
      loaded = GPT2.load_weights(path, config, dtype: Cumo::DFloat)
      assert(loaded.values.all? { |a| a.instance_of?(Cumo::DFloat) })
    end
    with_file(sfloat_weights) do |path|
      loaded = GPT2.load_weights(path, config, dtype: Cumo::DFloat)
      assert_equal sfloat_weights["h.0.attn.c_attn.weight"].to_a, loaded["h.0.attn.c_attn.weight"].to_a
      assert_equal reference(5), decode(Cumo::DFloat, 5, w: GPT2.load_weights(path, config, dtype: Cumo::DFloat))
    end
    bf = weights.transform_values { |a| Cumo::BFloat.cast(a) }
    with_file(bf) do |path|
      assert_equal "BF16", Cumo::Safetensors.open(path)["wte.weight"][:dtype]
      loaded = GPT2.load_weights(path, config, dtype: Cumo::BFloat)
      assert_equal bf["wte.weight"].to_a, loaded["wte.weight"].to_a
    end
    # Hugging Face's GPT2LMHeadModel names them under transformer., with a
    # tied lm_head.weight beside, and keeps causal-mask buffers.
    prefixed = sfloat_weights.to_h { |k, v| ["transformer.#{k}", v] }
    prefixed["lm_head.weight"] = sfloat_weights["wte.weight"]
    prefixed["transformer.h.0.attn.bias"] = Cumo::SFloat.ones(1, 1, 64, 64)
    with_file(prefixed) do |path|
      loaded = GPT2.load_weights(path, config, dtype: Cumo::SFloat)
      assert_equal sfloat_weights["ln_f.bias"].to_a, loaded["ln_f.bias"].to_a
      assert loaded.key?("lm_head.weight")
    end
  end

  def test_safetensors_wrong_shape
    w = sfloat_weights
    w["h.1.attn.c_attn.weight"] = w["h.1.attn.c_attn.weight"].transpose.dup
    with_file(w) do |path|
      assert_refused(ArgumentError, /h\.1\.attn\.c_attn\.weight has shape \[192, 64\], expected \[64, 192\]/,
                     Regexp.new(Regexp.escape(path))) { GPT2.load_weights(path, config) }
    end
    big = GPT2::Config.tiny
    big.n_embd = 128
    with_file(sfloat_weights) do |path|
      assert_refused(ArgumentError, /wte\.weight has shape \[128, 64\], expected \[128, 128\]/) do
        GPT2.load_weights(path, big)
      end
    end
  end

  def test_safetensors_wrong_dtype
    w = sfloat_weights
    w["ln_f.bias"] = Cumo::Int32.zeros(64)
    with_file(w) do |path|
      assert_refused(TypeError, /ln_f\.bias is I32, expected F32 or F16 or BF16 or F64/, /gpt2\.safetensors/) do
        GPT2.load_weights(path, config)
      end
    end
  end

  # A dtype the format has and Cumo has no class for (BOOL, F8): the file
  # opens and its other tensors read; that one raises when read.
  def test_safetensors_a_tensor_of_a_dtype_without_a_class
    Dir.mktmpdir do |dir|
      path = File.join(dir, "mixed.safetensors")
      header = JSON.generate({ "mask" => { "dtype" => "BOOL", "shape" => [3], "data_offsets" => [0, 3] },
                               "x" => { "dtype" => "F32", "shape" => [2], "data_offsets" => [3, 11] } })
      File.binwrite(path, [header.bytesize].pack("Q<") + header + [1, 0, 1].pack("C*") + [1.5, -2.0].pack("e*"))
      f = Cumo::Safetensors.open(path)
      assert_equal [1.5, -2.0], f.read("x").to_a
      e = assert_raises(TypeError) { f.read("mask") }
      assert_match(/mask is BOOL, which Cumo has no class for/, e.message)
    end
  end

  def test_safetensors_missing_or_extra_tensor
    w = sfloat_weights
    w.delete("h.1.ln_2.bias")
    with_file(w) do |path|
      assert_refused(ArgumentError, /tensor h\.1\.ln_2\.bias is missing/) { GPT2.load_weights(path, config) }
    end
    one = GPT2::Config.tiny
    one.n_layer = 1
    with_file(sfloat_weights) do |path|
      assert_refused(ArgumentError, /h\.1\..* is a layer past the config's 1/) { GPT2.load_weights(path, one) }
    end
  end

  def test_safetensors_truncated
    with_file(sfloat_weights) do |path|
      size = File.size(path)
      File.truncate(path, size - 4)
      # The last tensor in the file is the one cut short.
      last = Cumo::Safetensors.open(path) rescue $!
      assert_kind_of IOError, last
      assert_match(/is truncated: tensor ln_f\.bias's data ends at byte \d+ of the data section, which holds \d+/,
                   last.message)
      assert_refused(IOError, /truncated/, /ln_f\.bias/) { GPT2.load_weights(path, config) }
      File.truncate(path, 100)
      assert_refused(IOError, /truncated: its header claims \d+ bytes, the file holds 92/) do
        GPT2.load_weights(path, config)
      end
      File.truncate(path, 5)
      assert_refused(IOError, /truncated: 5 bytes/) { GPT2.load_weights(path, config) }
    end
  end

  def test_safetensors_not_the_format
    Dir.mktmpdir do |dir|
      path = File.join(dir, "bad.safetensors")
      File.binwrite(path, [7].pack("Q<") + "{nope}!" + "x" * 16)
      e = assert_raises(IOError) { Cumo::Safetensors.open(path) }
      assert_match(/header is not JSON/, e.message)
      header = '{"a":{"dtype":"F32","shape":[2,3],"data_offsets":[0,20]}}'
      File.binwrite(path, [header.bytesize].pack("Q<") + header + "\0" * 24)
      e = assert_raises(IOError) { Cumo::Safetensors.open(path) }
      assert_match(/tensor a \(F32 \[2, 3\]\) needs 24 bytes, its data_offsets \[0, 20\] hold 20/, e.message)
      # A dtype the format does not have (F8_E4M3, which it has, opens: above).
      header = '{"a":{"dtype":"X9","shape":[2],"data_offsets":[0,2]}}'
      File.binwrite(path, [header.bytesize].pack("Q<") + header + "\0" * 2)
      e = assert_raises(TypeError) { Cumo::Safetensors.open(path) }
      assert_match(/tensor a is X9, which this reader does not take/, e.message)
      File.binwrite(path, [1 << 40].pack("Q<") + "{}")
      assert_raises(IOError) { Cumo::Safetensors.open(path) }
      assert_raises(IOError) { Cumo::Safetensors.open(File.join(dir, "absent.safetensors")) }
    end
  end

  # ---- the example ---------------------------------------------------------------

  def test_example_runs_and_agrees_with_the_reference
    out, err, status = run_ruby({}, EXAMPLE, "--tiny", "--dtype", "DFloat",
                                "--tokens", "12", "--check", "--json")
    assert status.success?, "gpt2_decode.rb failed:\n#{out}\n#{err}"
    line = JSON.parse(out.lines.last)
    assert_equal true, line["reference_agrees"]
    assert_equal 12, line["tokens"].size
    %w[ms_per_token kernels_per_token graph_replays_per_token host_syncs_per_token].each do |k|
      assert line.key?(k), k
    end
    # The loop reads nothing: no host sync a token, one plan a token (flushed
    # by generate), nothing compiled after the first two tokens.
    assert_equal 0.0, line["host_syncs_per_token"]
    assert_equal 1.0, line["plans_per_token"]
    assert_equal 0, line["nvrtc_compiles_after_token2"]
    _, err, status = run_ruby({}, EXAMPLE, "--tiny", "--prompt", "128")
    refute status.success?
    assert_match(/prompt token 128 is outside the vocabulary/, err)
  end
end
