# Pattern recognition (fusion/row_groups.h): softmax, layer_norm and
# rms_norm written out of operators, in the spellings ported Numo code uses,
# run as one row-wise kernel each, computing what was written: every
# intermediate in the class the user's ops give it, so the answer is the
# step-by-step one up to the order of a row's sum.
require "minitest/autorun"
require "cumo/narray"

class TestRowPatterns < Minitest::Test
  N = Cumo::NMath
  ROWS = 6
  COLS = 96

  def setup
    Cumo::NArray.srand(11)
  end

  def input(klass = Cumo::SFloat)
    x = klass.new(ROWS, COLS).rand(-3, 3)
    g = klass.new(COLS).rand(0.5, 1.5)
    b = klass.new(COLS).rand(-1, 1)
    Cumo.sync # the inputs are on the device: the plans below are the forms alone
    [x, g, b]
  end

  SOFTMAX = {
    "keepdims" => lambda { |x|
      e = N.exp(x - x.max(axis: -1, keepdims: true))
      e / e.sum(axis: -1, keepdims: true)
    },
    "expand_dims" => lambda { |x|
      e = N.exp(x - x.max(1).expand_dims(1))
      e / e.sum(1).expand_dims(1)
    },
    "new axis and reshape" => lambda { |x|
      e = N.exp(x - x.max(axis: 1)[true, :new])
      e / e.sum(axis: 1).reshape(ROWS, 1)
    },
    "no max" => lambda { |x|
      e = N.exp(x)
      e / e.sum(axis: -1, keepdims: true)
    },
  }.freeze

  LAYER_NORM = {
    "centred squares" => lambda { |x, g, b|
      mu = x.mean(axis: -1, keepdims: true)
      d = x - mu
      var = (d * d).mean(axis: -1, keepdims: true)
      d / N.sqrt(var + 1e-5) * g + b
    },
    "mean of squares" => lambda { |x, g, b|
      mu = x.mean(axis: -1, keepdims: true)
      var = (x * x).mean(axis: -1, keepdims: true) - mu * mu
      (x - mu) / N.sqrt(var + 1e-5) * g + b
    },
    "sums and a power" => lambda { |x, g, b|
      mu = x.sum(axis: 1, keepdims: true) / COLS
      var = ((x - mu)**2).sum(axis: 1, keepdims: true) / COLS
      g * ((x - mu) / N.sqrt(var + 1e-5)) + b
    },
  }.freeze

  RMS_NORM = {
    "divided" => ->(x, g) { x / N.sqrt((x * x).mean(axis: -1, keepdims: true) + 1e-6) * g },
    "reciprocal" => ->(x, g) { x * (1.0 / N.sqrt((x**2).mean(axis: -1, keepdims: true) + 1e-6)) * g },
  }.freeze

  def assert_one_rowwise_kernel(y, what)
    kernels = Cumo.explain(y).kernels
    assert_equal [:rowwise], kernels.map { |k| k[:kind] }, "#{what}: #{Cumo.explain(y)}"
  end

  # What the form answers run one op at a time: each intermediate read back,
  # so nothing fuses.
  def stepwise
    hook = TracePoint.new(:c_return) do |tp|
      v = tp.return_value
      v.to_a if v.is_a?(Cumo::NArray) && tp.defined_class.to_s.start_with?("Cumo")
    end
    hook.enable { yield }
  end

  def assert_same_answer(fused, stepwise, tol, what)
    fused.to_a.flatten.zip(stepwise.to_a.flatten).each_with_index do |(f, s), i|
      assert_in_delta s, f, tol * [1.0, s.abs].max, "#{what}, element #{i}"
    end
  end

  def test_softmax_spellings_are_one_kernel
    x, = input
    SOFTMAX.each do |name, form|
      y = form.call(x)
      assert_one_rowwise_kernel(y, "softmax (#{name})")
      assert_same_answer(y, x.softmax, 1e-6, "softmax (#{name})")
    end
  end

  def test_layer_norm_spellings_are_one_kernel
    x, g, b = input
    want = x.layer_norm(g, b, eps: 1e-5)
    LAYER_NORM.each do |name, form|
      y = form.call(x, g, b)
      assert_one_rowwise_kernel(y, "layer_norm (#{name})")
      # The mean-of-squares variance cancels: a few ulps of the squares.
      assert_same_answer(y, want, 1e-4, "layer_norm (#{name})")
    end
  end

  def test_rms_norm_spellings_are_one_kernel
    x, g, = input
    want = x.rms_norm(g, eps: 1e-6)
    RMS_NORM.each do |name, form|
      y = form.call(x, g)
      assert_one_rowwise_kernel(y, "rms_norm (#{name})")
      assert_same_answer(y, want, 1e-6, "rms_norm (#{name})")
    end
  end

  # The written arithmetic, not the fused method's: in the sixteen-bit
  # classes every intermediate rounds to the class, as it does op by op.
  def test_each_class_answers_what_was_written
    [[Cumo::DFloat, 1e-13], [Cumo::SFloat, 1e-5], [Cumo::HFloat, 2e-2], [Cumo::BFloat, 6e-2]].each do |klass, tol|
      x, g, b = input(klass)
      forms = { "softmax" => -> { SOFTMAX["keepdims"].call(x) },
                "layer_norm" => -> { LAYER_NORM["centred squares"].call(x, g, b) },
                "rms_norm" => -> { RMS_NORM["divided"].call(x, g) } }
      forms.each do |name, form|
        fused = form.call
        assert_one_rowwise_kernel(fused, "#{klass} #{name}")
        assert_instance_of klass, fused
        step = nil
        stepwise { step = form.call }
        assert_same_answer(fused, step, tol, "#{klass} #{name}")
      end
    end
  end

  # A form built on var divides by n - 1: it stays that formula (one
  # kernel still, but not layer_norm's answer).
  def test_var_keeps_its_divisor
    x, g, b = input(Cumo::DFloat)
    y = (x - x.mean(axis: -1, keepdims: true)) / N.sqrt(x.var(axis: -1, keepdims: true) + 1e-5)
    assert_equal 1, Cumo.explain(y).kernels.size
    ln = x.layer_norm(Cumo::DFloat.ones(COLS), Cumo::DFloat.zeros(COLS), eps: 1e-5)
    ratio = Math.sqrt((COLS - 1).to_f / COLS)
    assert_same_answer(y, ln * ratio, 1e-4, "a var-based norm")
    refute_in_delta ln.to_a[0][0], y.to_a[0][0], 1e-6
  end

  # Intermediates Ruby still holds are stored by the same kernel, and a
  # later op reading one of them runs after it.
  def test_held_intermediates_and_readers_outside
    x, = input
    m = x.max(axis: -1, keepdims: true)
    e = N.exp(x - m)
    s = e.sum(axis: -1, keepdims: true)
    y = e / s
    total = (y - x.softmax).abs.max # reads y from outside the group
    assert_operator Float(total), :<=, 1e-6
    assert_in_delta 1.0, Float(s.to_a.flatten.min > 0 ? 1.0 : 0.0), 0
    m.to_a.flatten.zip(x.to_a.map(&:max)).each { |a, b| assert_equal b, a }
  end

  # Rows too short, or folds not read back along the row, are not rows.
  def test_what_is_not_a_row_group
    short = Cumo::SFloat.new(4, 8).rand
    Cumo.sync
    e = N.exp(short - short.max(axis: -1, keepdims: true))
    y = e / e.sum(axis: -1, keepdims: true)
    refute_includes Cumo.explain(y).kernels.map { |k| k[:kind] }, :rowwise
    x, = input
    assert_equal [:reduction], Cumo.explain(x.sum(axis: 1)).kernels.map { |k| k[:kind] }
    # Folds along the first axis read back along it: columns, not rows.
    z = x - x.mean(axis: 0, keepdims: true)
    refute_includes Cumo.explain(z).kernels.map { |k| k[:kind] }, :rowwise
  end

  # A full reduction of one row ([1, n], a decode step's logits) folds the
  # row as a reduction over its last axis would: argmax (its max, its
  # candidates' min and the answer) is one kernel, and so is a full sum
  # read back along the row. Longer rows, and 1-D arrays, keep the
  # reductions over many blocks.
  def test_a_full_reduction_of_one_row_is_a_row
    host_argmax = lambda do |a|
      best = nil
      at = 0
      a.each_with_index { |v, i| (best, at = v, i) if !v.nan? && (best.nil? || v > best) }
      at
    end
    [Cumo::SFloat, Cumo::DFloat, Cumo::BFloat, Cumo::HFloat].each do |k|
      [40, 1000, 8192].each do |n|
        values = Array.new(n) { |i| ((i * 7919) % 1009) / 100.0 - 5 }
        values[n / 3] = 6.0
        values[n / 2] = 6.0 # a tie: the first wins
        values[n / 4] = Float::NAN # skipped
        x = k[values].reshape(1, n)
        Cumo.sync
        h = x.to_a.flatten
        [x.argmax, x.max_index, x.min_index].each do |r|
          assert_equal [:rowwise], Cumo.explain(r).kernels.map { |kk| kk[:kind] }, "#{k} #{n}"
        end
        assert_equal host_argmax.call(h), Integer(x.argmax), "#{k} #{n}"
        assert_equal host_argmax.call(h), Integer(x.max_index), "#{k} #{n}"
        assert_equal host_argmax.call(h.map { |v| -v }), Integer(x.min_index), "#{k} #{n}"
        assert_equal n / 4, Integer(x.argmax(nan: true)), "#{k} #{n}"
      end
      all_nan = k[[Float::NAN] * 40].reshape(1, 40)
      assert_equal 0, Integer(all_nan.argmax), k.name
      # A sum read back along the row.
      x = k.new(1, 300).rand(1, 2)
      Cumo.sync
      y = x / x.sum
      assert_equal [:rowwise], Cumo.explain(y).kernels.map { |kk| kk[:kind] }
      tol = [Cumo::BFloat, Cumo::HFloat].include?(k) ? 2e-2 : 1e-5
      assert_in_delta 1.0, y.to_a.flatten.sum, tol, k.name
    end
    long = Cumo::SFloat.new(1, 50_257).rand # past fusion/row_groups.h's kMaxOneRowLength
    flat = Cumo::SFloat.new(8192).rand
    Cumo.sync
    refute_includes Cumo.explain(long.argmax).kernels.map { |k| k[:kind] }, :rowwise
    refute_includes Cumo.explain(flat.argmax).kernels.map { |k| k[:kind] }, :rowwise
    assert_equal host_argmax.call(long.to_a.flatten), Integer(long.argmax)
  end

  # The explicit quantize_symmetric is a row group too: one kernel.
  def test_quantize_symmetric_is_one_kernel
    x, = input
    q, s = x.quantize_symmetric
    assert_equal [:rowwise], Cumo.explain(q, s).kernels.map { |k| k[:kind] }
  end
end
