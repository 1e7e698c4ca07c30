# The fused row operations of the spec's "Fused Operations": layer_norm,
# rms_norm and softmax along the last axis, one kernel each, with the
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
