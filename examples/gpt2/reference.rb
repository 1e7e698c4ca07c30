# frozen_string_literal: true

# The GPT-2 of examples/gpt2/model.rb in plain Ruby: Arrays of Floats, no
# Cumo, one sequence at a time, and attention written the textbook way (over
# the keys up to the current position, no static cache and no mask). Slow:
# it is the reference for the tiny configuration of the equality test
# (tests/ruby/test_gpt2_decode.rb) and `examples/gpt2_decode.rb --check`.
#
#   ref = GPT2::Reference.new(config, weights)   # weights: name => NArray or nested Arrays
#   ref.generate(5, 32)                          #=> 32 Integers
module GPT2
  class Reference
    EPS = 1e-5
    GELU_C = Math.sqrt(2.0 / Math::PI)

    def initialize(config, weights)
      @c = config
      @w = weights.to_h { |name, a| [name, a.respond_to?(:to_a) && !a.is_a?(Array) ? a.to_a : a] }
      @head = @w["lm_head.weight"] || @w["wte.weight"]
    end

    # Greedy decoding of `n` tokens after the Integer `prompt`.
    def generate(prompt, n)
      keys = Array.new(@c.n_layer) { [] }
      values = Array.new(@c.n_layer) { [] }
      tok = prompt
      Array.new(n) do |pos|
        tok = step(tok, pos, keys, values)
      end
    end

    private

    def step(tok, pos, keys, values)
      x = add(@w["wte.weight"][tok], @w["wpe.weight"][pos])
      @c.n_layer.times { |l| x = block(x, l, keys[l], values[l]) }
      x = layer_norm(x, @w["ln_f.weight"], @w["ln_f.bias"])
      logits = @head.map { |row| dot(x, row) }
      argmax(logits)
    end

    def block(x, l, keys, values)
      w = ->(name) { @w["h.#{l}.#{name}"] }
      d = @c.n_embd
      hd = @c.head_dim
      h = layer_norm(x, w.("ln_1.weight"), w.("ln_1.bias"))
      qkv = add(vecmat(h, w.("attn.c_attn.weight")), w.("attn.c_attn.bias"))
      q = qkv[0, d]
      keys << qkv[d, d]
      values << qkv[2 * d, d]
      scale = 1.0 / Math.sqrt(hd)
      y = []
      @c.n_head.times do |head|
        r = head * hd, hd
        qh = q[*r]
        probs = softmax(keys.map { |k| dot(qh, k[*r]) * scale })
        acc = Array.new(hd, 0.0)
        values.each_with_index do |v, t|
          vh = v[*r]
          hd.times { |i| acc[i] += probs[t] * vh[i] }
        end
        y.concat(acc)
      end
      x = add(x, add(vecmat(y, w.("attn.c_proj.weight")), w.("attn.c_proj.bias")))
      h = layer_norm(x, w.("ln_2.weight"), w.("ln_2.bias"))
      h = add(vecmat(h, w.("mlp.c_fc.weight")), w.("mlp.c_fc.bias")).map { |v| gelu_tanh(v) }
      add(x, add(vecmat(h, w.("mlp.c_proj.weight")), w.("mlp.c_proj.bias")))
    end

    def add(a, b) = a.each_with_index.map { |v, i| v + b[i] }

    def dot(a, b)
      s = 0.0
      a.each_with_index { |v, i| s += v * b[i] }
      s
    end

    # h (n) times w (n x m, as [in, out]): the row vector's product.
    def vecmat(h, w)
      out = Array.new(w[0].size, 0.0)
      h.each_with_index do |hv, i|
        row = w[i]
        row.each_with_index { |wv, j| out[j] += hv * wv }
      end
      out
    end

    def layer_norm(x, gamma, beta)
      n = x.size.to_f
      mean = x.sum / n
      var = x.sum { |v| (v - mean)**2 } / n
      inv = 1.0 / Math.sqrt(var + EPS)
      x.each_with_index.map { |v, i| (v - mean) * inv * gamma[i] + beta[i] }
    end

    def softmax(x)
      m = x.max
      e = x.map { |v| Math.exp(v - m) }
      s = e.sum
      e.map { |v| v / s }
    end

    def gelu_tanh(x) = 0.5 * x * (1.0 + Math.tanh(GELU_C * (x + 0.044715 * x * x * x)))

    # The first of equal maxima, as Cumo's argmax.
    def argmax(a)
      best = 0
      a.each_with_index { |v, i| best = i if v > a[best] }
      best
    end
  end
end
