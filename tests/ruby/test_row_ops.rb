# The fused row operations of the spec's "Fused Operations": layer_norm,
# rms_norm and softmax along the last axis, one kernel each, and
# quantize_symmetric, with the
# spec's numerics (single-precision accumulation, the row length as the
# divisor), checked against their written-out formulas in double.
require "minitest/autorun"
require "cumo/narray"

class TestRowOps < Minitest::Test
  def setup
    @x = Cumo::SFloat[[1.0, 2.0, 3.0, 4.0]]
    @ones = Cumo::SFloat.ones(4)
    @zeros = Cumo::SFloat.zeros(4)
  end

  def assert_close(want, got, tol)
    want.flatten.zip(got.flatten).each_with_index do |(w, g), i|
      assert_in_delta w, g, tol * [1, w.abs].max, "element #{i}"
    end
  end

  # The spec's example: rms_norm and layer_norm agree only on a row whose
  # mean is zero.
  def test_spec_example
    assert_close [0.365, 0.730, 1.095, 1.461], @x.rms_norm(@ones).to_a[0], 1e-3
    assert_close [-1.342, -0.447, 0.447, 1.342], @x.layer_norm(@ones, @zeros).to_a[0], 1e-3
    assert_instance_of Cumo::SFloat, @x.rms_norm(@ones)
  end

  # Written out in double, with the row length as the divisor.
  def reference_layer_norm(rows, gamma, beta, eps)
    rows.map do |r|
      mean = r.sum / r.size
      var = r.sum { |v| (v - mean)**2 } / r.size
      r.each_with_index.map { |v, j| (v - mean) / Math.sqrt(var + eps) * gamma[j] + beta[j] }
    end
  end

  def reference_softmax(rows)
    rows.map do |r|
      m = r.max
      e = r.map { |v| Math.exp(v - m) }
      s = e.sum
      e.map { |v| v / s }
    end
  end

  # Short rows (a warp each), long ones (a block each) and rows too long
  # to hold in registers, every float class.
  def test_every_length_and_class
    [[3, 5], [4, 768], [2, 3000], [2, 40_000]].each do |rows, cols|
      { Cumo::DFloat => 1e-12, Cumo::SFloat => 1e-5, Cumo::HFloat => 2e-3,
        Cumo::BFloat => 1e-2 }.each do |k, tol|
        Cumo::NArray.srand(cols)
        x = k.new(rows, cols).rand(-3, 3)
        g = k.new(cols).rand(0.5, 1.5)
        b = k.new(cols).rand(-1, 1)
        xs, gs, bs = x.to_a, g.to_a, b.to_a
        where = "#{k} #{rows}x#{cols}"
        assert_close reference_layer_norm(xs, gs, bs, 1e-5).flatten,
                     x.layer_norm(g, b).to_a.flatten, tol * 4
        rms = xs.map { |r| Math.sqrt(r.sum { |v| v * v } / r.size + 1e-3) }
        want = xs.each_with_index.map { |r, i| r.each_with_index.map { |v, j| v / rms[i] * gs[j] } }
        assert_close want.flatten, x.rms_norm(g, eps: 1e-3).to_a.flatten, tol * 4
        got = x.softmax
        assert_instance_of k, got, where
        assert_close reference_softmax(xs).flatten, got.to_a.flatten, tol * 4
      end
    end
  end

  # Half and bfloat16 accumulate in single precision: a half row that
  # squares past 65504 still normalizes; a bfloat16 row that squares past
  # a float's range overflows the accumulator and answers zeros.
  def test_narrow_classes_accumulate_in_single_precision
    h = Cumo::HFloat[[300, 300, 300, -300]]
    assert_equal [1, 1, 1, -1], h.rms_norm(Cumo::HFloat.ones(4)).to_a[0]
    b = Cumo::BFloat[[-3e20, 3e20, 3e20, -3e20]]
    assert_equal [0, 0, 0, 0], b.rms_norm(Cumo::BFloat.ones(4)).to_a[0]
    d = Cumo::DFloat[[-3e20, 3e20, 3e20, -3e20]]
    assert_equal [-1, 1, 1, -1], d.rms_norm(Cumo::DFloat.ones(4)).to_a[0]
  end

  # softmax subtracts the row maximum: a masked element is zero, a row
  # masked whole is NaN (as the written-out form answers).
  def test_softmax_masks
    inf = Float::INFINITY
    s = Cumo::SFloat[[1, 2, -inf], [-inf, -inf, -inf], [1000, 1000, 1000]].softmax.to_a
    assert_close [0.2689414, 0.7310586, 0.0], s[0], 1e-6
    assert s[1].all?(&:nan?)
    assert_close [1.0 / 3] * 3, s[2], 1e-6
  end

  # A view goes in as it is: a transposed receiver normalizes its rows.
  def test_views
    x = Cumo::DFloat.new(6, 4).seq
    t = x.transpose
    want = reference_softmax(t.to_a)
    assert_close want.flatten, t.softmax.to_a.flatten, 1e-14
    assert_close reference_softmax(x[true, (3..0).step(-1)].to_a).flatten,
                 x[true, (3..0).step(-1)].softmax.to_a.flatten, 1e-14
    assert_equal [2, 3, 4], Cumo::SFloat.new(2, 3, 4).rand.softmax.shape
    assert_equal [0, 4], Cumo::SFloat.new(0, 4).softmax.shape
    assert_equal [3, 0], Cumo::SFloat.new(3, 0).layer_norm(Cumo::SFloat.new(0), Cumo::SFloat.new(0)).shape
  end

  # One kernel each, a row-wise one.
  def test_one_kernel_each
    y = Cumo::SFloat.new(8, 64).rand
    [y.layer_norm(Cumo::SFloat.ones(64), Cumo::SFloat.zeros(64)), y.rms_norm(Cumo::SFloat.ones(64)),
     y.softmax].each do |r|
      kernels = Cumo.explain(r).kernels.reject { |k| k[:kind] != :rowwise }
      assert_equal 1, kernels.size
    end
  end

  # ---- quantize_symmetric ------------------------------------------------

  # The spec's table: a tie goes away from zero, where numpy and torch
  # take it to even.
  def test_quantize_ties_away_from_zero
    x = Cumo::SFloat[[-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 127.0]] # scale 1
    xq, scale = x.quantize_symmetric
    assert_instance_of Cumo::Int8, xq
    assert_equal [[-3, -2, -1, 1, 2, 3, 127]], xq.to_a
    assert_equal [1.0], scale.to_a
  end

  def test_quantize_zero_infinite_and_nan_rows
    y = Cumo::SFloat[[0, 0, 0], [1, Float::INFINITY, 2], [1, Float::NAN, 3], [3, -6, 1.5]]
    xq, scale = y.quantize_symmetric
    assert_equal [[0, 0, 0], [0, 0, 0], [0, 0, 0], [64, -127, 32]], xq.to_a
    s = scale.to_a
    assert_equal [0.0, Float::INFINITY], s[0, 2]
    assert s[2].nan?, "a NaN row's scale is NaN"
    assert_in_delta 6.0 / 127, s[3], 1e-7
  end

  # Against the formula in Ruby's own arithmetic: scale = max|x| / 127 in
  # the accumulating class, xq = (x / scale).round, every class and shape.
  def test_quantize_every_class_against_the_formula
    [[Cumo::DFloat, Cumo::DFloat], [Cumo::SFloat, Cumo::SFloat], [Cumo::HFloat, Cumo::SFloat],
     [Cumo::BFloat, Cumo::SFloat]].each do |klass, scale_class|
      [[5, 3], [2, 3, 7], [4, 130]].each do |shape|
        x = klass.new(*shape).rand(-4, 4)
        xq, scale = x.quantize_symmetric
        assert_instance_of scale_class, scale
        assert_equal shape[0..-2], scale.shape
        assert_equal shape, xq.shape
        rows = x.to_a.flatten.each_slice(shape[-1]).to_a
        want_scale = rows.map { |r| scale_class[r.map(&:abs).max].to_a[0] / 127 }
        want_scale = scale_class[*want_scale].to_a # rounded to the class
        assert_equal want_scale, scale.to_a.flatten, "#{klass} #{shape}"
        got = xq.to_a.flatten.each_slice(shape[-1]).to_a
        rows.each_with_index do |r, i|
          q = r.map { |v| scale_class[v / want_scale[i]].to_a[0].round.clamp(-127, 127) }
          q.zip(got[i]).each_with_index do |(w, g), j|
            # The quotient is rounded to the class before Ruby rounds it; one
            # off only where that lands on a tie.
            assert_operator (w - g).abs, :<=, 1, "#{klass} #{shape} row #{i} element #{j}"
          end
        end
        # xq * scale is what the row stood for, to half a step.
        back = (xq.cast_to(scale_class) * scale[false, :new]).to_a.flatten
        x.to_a.flatten.zip(back).each_with_index do |(v, b), k|
          assert_in_delta v, b, want_scale[k / shape[-1]] * 0.51 + 1e-6
        end
      end
    end
  end

  def test_quantize_views_and_kernels
    x = Cumo::SFloat.new(6, 8).rand(-1, 1)
    view = x[true, (0..-1).step(2)]
    xq, scale = view.quantize_symmetric
    dense_q, dense_s = view.dup.quantize_symmetric
    assert_equal dense_q.to_a, xq.to_a
    assert_equal dense_s.to_a, scale.to_a
    y = Cumo::SFloat.new(8, 64).rand
    y.to_a
    q, s = y.quantize_symmetric
    # The scale's fold and its use are a row group: one kernel.
    assert_equal [:rowwise], Cumo.explain(q, s).kernels.map { |k| k[:kind] }
  end

  def test_quantize_bad_input
    e = assert_raises(TypeError) { Cumo::Int32[[1, 2]].quantize_symmetric }
    assert_equal "[quantize_symmetric] needs a float class, not Cumo::Int32", e.message
    assert_raises(TypeError) { Cumo::SComplex[[1, 2]].quantize_symmetric }
    e = assert_raises(Cumo::NArray::ShapeError) { Cumo::SFloat[1, 2].sum.quantize_symmetric }
    assert_match(/\[quantize_symmetric\] needs an array with a last axis/, e.message)
    assert_raises(ArgumentError) { @x.quantize_symmetric(1) }
  end

  def test_bad_input
    e = assert_raises(TypeError) { @x.layer_norm(Cumo::DFloat.ones(4), @zeros) }
    assert_equal "[layer_norm] gamma must be Cumo::SFloat, not Cumo::DFloat", e.message
    e = assert_raises(TypeError) { @x.layer_norm(@ones, Cumo::DFloat.zeros(4)) }
    assert_match(/\[layer_norm\] beta must be Cumo::SFloat/, e.message)
    e = assert_raises(Cumo::NArray::ShapeError) { @x.rms_norm(Cumo::SFloat.ones(3)) }
    assert_match(/\[rms_norm\] gamma must be one-dimensional of length 4/, e.message)
    assert_raises(Cumo::NArray::ShapeError) { @x.rms_norm(Cumo::SFloat.ones(1, 4)) }
    e = assert_raises(TypeError) { @x.rms_norm([1, 1, 1, 1]) }
    assert_match(/\[rms_norm\]/, e.message)
    e = assert_raises(TypeError) { Cumo::Int32[[1, 2]].softmax }
    assert_match(/\[softmax\] needs a float class/, e.message)
    assert_raises(TypeError) { Cumo::DComplex[[1, 2]].softmax }
    assert_raises(Cumo::NArray::ShapeError) { Cumo::SFloat.new([]).fill(1).softmax }
    e = assert_raises(TypeError) { @x.rms_norm(@ones, eps: "1") }
    assert_match(/\[rms_norm\] eps must be a Float/, e.message)
    e = assert_raises(ArgumentError) { @x.layer_norm(@ones, @zeros, epsilon: 1) }
    assert_match(/\[layer_norm\] unknown keyword/, e.message)
    assert_raises(ArgumentError) { @x.layer_norm(@ones) }
    assert_raises(ArgumentError) { @x.softmax(1) }
    # Nothing was lost: the receiver still reads as it was.
    assert_equal [[1, 2, 3, 4]], @x.to_a
  end
end
