# frozen_string_literal: true

# GPT-2 greedy decoding written against Cumo's public API as a Ruby user
# writes it (issue 8): the model of examples/gpt2_decode.rb, and of
# tests/ruby/test_gpt2_decode.rb and bench/decode_bench.rb.
#
#   model = GPT2::Model.new(GPT2::Config.gpt2_124m, GPT2.random_weights(config), dtype: Cumo::SFloat)
#   tokens = model.generate(464, 128)   # 128 device token ids (0-dim Int32), none read yet
#   tokens.map { |t| Integer(t) }
#
# Each step records one token's work: the embedding rows picked by the
# device-resident token id and position, per layer layer_norm, the qkv
# product, a static KV cache of the whole context written at the current
# position, attention over it masked past that position, softmax, the
# projection, a gelu_tanh MLP and the residual adds; the final norm, the LM
# head and argmax, whose answer is the next step's token id. The position
# and the token ids stay on the device, so the work a step records does not
# depend on any value the host would have to read: every token has the same
# plan, and replays the same CUDA graph. Integer index arrays stay on the
# device (`wte[tok, true]`, `cache[..., pos, ...] = k`), so nothing in the
# loop waits for the host; `generate` ends each step with Cumo.flush, which
# runs the step without waiting: one plan, one graph replay a token.
#
# Weights are named and shaped as Hugging Face's GPT-2 checkpoints store
# them: the Conv1D weights as [in, out] (h.0.attn.c_attn.weight is
# [768, 2304]), so x.dot(w) is the layer.
require "cumo/narray"
require "cumo/safetensors"

module GPT2
  # n_layer, n_head, n_embd, vocab_size, n_ctx as in Hugging Face's GPT2Config.
  Config = Struct.new(:n_layer, :n_head, :n_embd, :vocab_size, :n_ctx, keyword_init: true) do
    def self.gpt2_124m = new(n_layer: 12, n_head: 12, n_embd: 768, vocab_size: 50_257, n_ctx: 1024)
    # The tiny configuration of the equality test.
    def self.tiny = new(n_layer: 2, n_head: 4, n_embd: 64, vocab_size: 128, n_ctx: 64)

    def head_dim = n_embd / n_head

    def check!
      each_pair do |k, v|
        raise ArgumentError, "[gpt2] #{k} must be a positive Integer, not #{v.inspect}" unless v.is_a?(Integer) && v.positive?
      end
      return self if (n_embd % n_head).zero?

      raise ArgumentError, "[gpt2] n_embd #{n_embd} is not a multiple of n_head #{n_head}"
    end
  end

  LAYER_NORM_EPS = 1e-5
  FLOAT_CLASSES = [Cumo::SFloat, Cumo::DFloat, Cumo::BFloat, Cumo::HFloat].freeze

  module_function

  # Every tensor of a GPT-2 checkpoint for `config`, in Hugging Face's
  # names, with its shape.
  # A layer's weights, in the order Model#block takes them, with their
  # shapes for a width of d.
  def layer_weight_shapes(d)
    {
      "ln_1.weight" => [d], "ln_1.bias" => [d],
      "attn.c_attn.weight" => [d, 3 * d], "attn.c_attn.bias" => [3 * d],
      "attn.c_proj.weight" => [d, d], "attn.c_proj.bias" => [d],
      "ln_2.weight" => [d], "ln_2.bias" => [d],
      "mlp.c_fc.weight" => [d, 4 * d], "mlp.c_fc.bias" => [4 * d],
      "mlp.c_proj.weight" => [4 * d, d], "mlp.c_proj.bias" => [d]
    }
  end

  def weight_shapes(config)
    d = config.n_embd
    shapes = { "wte.weight" => [config.vocab_size, d], "wpe.weight" => [config.n_ctx, d] }
    config.n_layer.times do |i|
      layer_weight_shapes(d).each { |name, shape| shapes["h.#{i}.#{name}"] = shape }
    end
    shapes["ln_f.weight"] = [d]
    shapes["ln_f.bias"] = [d]
    shapes
  end

  # Random weights from a fixed seed, drawn on the device in single
  # precision (Cumo's Philox: the CPU and CUDA executors draw the same) and
  # cast to `dtype`: every tensor normal with standard deviation `std`, the
  # norms' gains 1 plus that. GPT-2's own initialization (std 0.02, zero
  # biases, unit gains) makes a model whose greedy output repeats its
  # prompt; this one wanders, which an equality test wants.
  def random_weights(config, dtype: Cumo::SFloat, seed: 0, std: 0.02)
    config.check!
    Cumo::NArray.srand(seed)
    weight_shapes(config).to_h do |name, shape|
      w = Cumo::SFloat.new(*shape).rand_norm(0.0, std)
      w += 1.0 if name.match?(/ln_[12f]\.weight\z/)
      [name, dtype == Cumo::SFloat ? w : dtype.cast(w)]
    end
  end

  # The weights of a GPT-2 safetensors checkpoint (F32, F16, BF16 or F64; names
  # with or without the "transformer." prefix of GPT2LMHeadModel), cast to
  # `dtype`. Every tensor's presence, shape and dtype is checked against
  # `config` before any is read: ArgumentError (missing, wrong shape, a
  # layer the config does not have), TypeError (dtype), IOError (truncated
  # or not the format), each naming the tensor and the file.
  def load_weights(path, config, dtype: Cumo::SFloat)
    config.check!
    st = Cumo::Safetensors.open(path)
    prefix = %w[transformer. model.].find { |p| st.key?("#{p}wte.weight") } || ""
    floats = %w[F32 F16 BF16 F64]
    shapes = weight_shapes(config)
    shapes.each { |name, shape| st.expect(prefix + name, shape: shape, dtypes: floats) }
    st.names.each do |name|
      layer = name.delete_prefix(prefix)[/\Ah\.(\d+)\./, 1]
      next unless layer && Integer(layer) >= config.n_layer

      raise ArgumentError, "[gpt2] #{path}: tensor #{name} is a layer past the config's " \
                           "#{config.n_layer} (n_layer)"
    end
    head = %W[lm_head.weight #{prefix}lm_head.weight].find { |n| st.key?(n) }
    st.expect(head, shape: shapes["wte.weight"], dtypes: floats) if head
    weights = shapes.keys.to_h { |name| [name, st.read(prefix + name, dtype)] }
    weights["lm_head.weight"] = st.read(head, dtype) if head
    weights
  end

  # The prompt's token ids as an Array: `prompt` is an Integer (batch 1) or
  # an Array of `batch` Integers. A token outside the vocabulary raises
  # ArgumentError naming it, before anything reaches the device.
  def check_prompt(config, batch, prompt)
    ids = prompt.is_a?(Array) ? prompt : [prompt]
    unless ids.size == batch
      raise ArgumentError, "[gpt2] the prompt has #{ids.size} token(s) for a batch of #{batch}"
    end
    ids.each_with_index do |t, i|
      where = ids.size == 1 ? "" : " (sequence #{i})"
      raise TypeError, "[gpt2] a prompt token must be an Integer, not #{t.inspect}#{where}" unless t.is_a?(Integer)
      next if t >= 0 && t < config.vocab_size

      raise ArgumentError, "[gpt2] prompt token #{t}#{where} is outside the vocabulary " \
                           "(0...#{config.vocab_size})"
    end
    ids
  end

  # One sequence (batch 1) or `batch` sequences decoded greedily together.
  class Model
    attr_reader :config, :dtype, :batch, :steps

    # weights: name => NArray as weight_shapes names them (lm_head.weight
    # optional: tied to wte.weight, as GPT-2's are), each of class `dtype`.
    def initialize(config, weights, dtype: Cumo::SFloat, batch: 1)
      @config = config.check!
      unless FLOAT_CLASSES.include?(dtype)
        raise TypeError, "[gpt2] dtype must be one of #{FLOAT_CLASSES.map(&:name).join(', ')}, not #{dtype.inspect}"
      end
      raise ArgumentError, "[gpt2] batch must be a positive Integer, not #{batch.inspect}" unless batch.is_a?(Integer) && batch.positive?

      @dtype = dtype
      @batch = batch
      check_weights(weights)
      w = weights
      @wte = w["wte.weight"]
      @wpe = w["wpe.weight"]
      # The LM head reads the embedding transposed where it lies (cuBLAS's
      # transpose flag: no copy).
      @head = (w["lm_head.weight"] || @wte).transpose
      @ln_f = [w["ln_f.weight"], w["ln_f.bias"]]
      names = GPT2.layer_weight_shapes(config.n_embd).keys
      @layers = Array.new(config.n_layer) { |i| names.map { |n| w["h.#{i}.#{n}"] } }
      @positions = Cumo::Int32.new(config.n_ctx).seq
      @scale = 1.0 / Math.sqrt(config.head_dim)
      # A masked score is this far down: exp of it is 0 after the row's max
      # is taken off. Finite, so that 0 * it is 0 (0 * -Infinity is NaN).
      @mask_value = dtype == Cumo::HFloat ? -65_504.0 : -1e9
      reset
    end

    # Empties the KV cache and goes back to position 0.
    def reset
      c = @config
      @k_cache = Array.new(c.n_layer) { @dtype.zeros(@batch, c.n_head, c.n_ctx, c.head_dim) }
      @v_cache = Array.new(c.n_layer) { @dtype.zeros(@batch, c.n_head, c.n_ctx, c.head_dim) }
      @pos = Cumo::Int32.zeros(1) # the current position, on the device
      @steps = 0
      self
    end

    # The device token array for `prompt` (checked as GPT2.check_prompt
    # does): batch 1, a 0-dim Int32; otherwise [batch].
    def prompt_tokens(prompt)
      ids = GPT2.check_prompt(@config, @batch, prompt)
      @batch == 1 ? Cumo::Int32[ids[0]][0] : Cumo::Int32[*ids]
    end

    # Greedy decoding of `n` tokens after `prompt` from an empty cache.
    # Answers the n device token arrays (0-dim Int32 at batch 1, [batch]
    # otherwise), none of them read; a block is called after each step with
    # the step's index and token.
    def generate(prompt, n)
      tok = prompt_tokens(prompt)
      reset
      Array.new(n) do |i|
        tok = step(tok)
        # Run the step now, without waiting for it: each token is one plan
        # (the engine would otherwise cut at its node budget, where the loop
        # repeats, every second token or so).
        Cumo.flush
        yield i, tok if block_given?
        tok
      end
    end

    # Records one token: from the current token id(s) `tok` (device Int32,
    # 0-dim or [batch]) at the current position, the next, by argmax.
    def step(tok)
      c = @config
      if @steps >= c.n_ctx
        raise ArgumentError, "[gpt2] the context of #{c.n_ctx} positions is full after #{@steps} steps"
      end

      pos = @pos
      x = embed(tok, pos)
      # Positions past the current one are masked: an additive bias, 0 up
      # to pos and @mask_value after it, from the device position.
      bias = @dtype.cast(@positions.gt(pos)) * @mask_value
      @layers.each_with_index { |w, l| x = block(x, w, l, pos, bias) }
      x = x.layer_norm(*@ln_f, eps: LAYER_NORM_EPS)
      logits = x.dot(@head) # [batch, vocab]
      @pos = pos + 1
      @steps += 1
      @batch == 1 ? logits.argmax : logits.argmax(axis: -1)
    end

    private

    # The token embedding plus the position embedding, [batch, n_embd].
    def embed(tok, pos)
      x = @wte[tok, true] + @wpe[pos, true]
      x.shape == [@batch, @config.n_embd] ? x : x.reshape(@batch, @config.n_embd)
    end

    def block(x, w, layer, pos, bias)
      ln1_g, ln1_b, attn_w, attn_b, attn_pw, attn_pb, ln2_g, ln2_b, fc_w, fc_b, proj_w, proj_b = w
      c = @config
      b = @batch
      h = x.layer_norm(ln1_g, ln1_b, eps: LAYER_NORM_EPS)
      qkv = (h.dot(attn_w) + attn_b).reshape(b, 3, c.n_head, 1, c.head_dim)
      q = qkv[true, 0, true, true, true] # [batch, head, 1, head_dim]
      k_cache = @k_cache[layer]
      v_cache = @v_cache[layer]
      k_cache[true, true, pos, true] = qkv[true, 1, true, true, true]
      v_cache[true, true, pos, true] = qkv[true, 2, true, true, true]
      # Scores against the whole static cache, [batch, head, 1, n_ctx].
      scores = q.matmul(k_cache.swapaxes(2, 3)) * @scale + bias
      y = scores.softmax.matmul(v_cache).reshape(b, c.n_embd)
      x = x + (y.dot(attn_pw) + attn_pb)
      h = x.layer_norm(ln2_g, ln2_b, eps: LAYER_NORM_EPS)
      h = Cumo::NMath.gelu_tanh(h.dot(fc_w) + fc_b)
      x + (h.dot(proj_w) + proj_b)
    end

    def check_weights(weights)
      raise TypeError, "[gpt2] weights must be a Hash of name => NArray, not #{weights.class}" unless weights.is_a?(Hash)

      shapes = GPT2.weight_shapes(@config)
      shapes["lm_head.weight"] = shapes["wte.weight"] if weights.key?("lm_head.weight")
      shapes.each do |name, shape|
        a = weights[name]
        raise ArgumentError, "[gpt2] weight #{name} is missing" if a.nil?
        raise TypeError, "[gpt2] weight #{name} is #{a.class}, expected #{@dtype}" unless a.instance_of?(@dtype)
        raise ArgumentError, "[gpt2] weight #{name} has shape #{a.shape}, expected #{shape}" unless a.shape == shape
      end
    end
  end
end
