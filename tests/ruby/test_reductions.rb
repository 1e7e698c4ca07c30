# frozen_string_literal: true

# Reductions: sum, prod, max, min, mean over all axes (a 0-dim NArray, the
# spec's departure from Numo) or over some (axis:, negative, Array,
# positional), keepdims:, result classes, NaN handling of max and min, dot
# of 1-D arrays, count_true and count_false; Float() and Integer() of 0-dim
# results; compatible mode, from Ruby and from CUMO_COMPATIBLE_MODE.
require "minitest/autorun"
require "cumo/narray"
require_relative "child_ruby"

class TestReductions < Minitest::Test
  include ChildRuby

  SIGNED = [Cumo::Int8, Cumo::Int16, Cumo::Int32, Cumo::Int64].freeze
  UNSIGNED = [Cumo::UInt8, Cumo::UInt16, Cumo::UInt32, Cumo::UInt64].freeze
  FLOATS = [Cumo::SFloat, Cumo::DFloat].freeze

  def setup
    @i = Cumo::Int32.new(3, 4).seq   # [[0..3], [4..7], [8..11]]
    @d = Cumo::DFloat.new(3, 4).seq
  end

  def teardown
    Cumo.disable_compatible_mode
  end

  # ---- full reductions answer 0-dim arrays ------------------------------------

  def test_full_reductions_are_0_dim_narrays
    {sum: 66.0, prod: 0.0, max: 11.0, min: 0.0, mean: 5.5}.each do |op, want|
      r = @d.public_send(op)
      assert_instance_of Cumo::DFloat, r, op.to_s
      assert_equal [], r.shape, op.to_s
      assert_equal want, Float(r), op.to_s
    end
    assert_equal 39_916_800, Integer(Cumo::Int32.new(11).seq(1).prod)
    assert_equal "Cumo::Int64#shape=[]\n66", @i.sum.inspect
  end

  def test_float_and_integer_read_0_dim_results
    assert_equal 66.0, Float(@i.sum)
    assert_equal 66, Integer(@i.sum)
    assert_equal 5, Integer(@d.mean) # truncated, as Float#to_i
    assert_equal 3.0, Float(Cumo::DFloat[3]) # any size-1 array
    assert_equal 3, Integer(Cumo::DFloat[3.7])
    assert_instance_of Integer, Integer(@i.max)
  end

  # ---- axes ------------------------------------------------------------------

  def test_axis_keyword_integer_and_negative
    assert_equal [12, 15, 18, 21], @i.sum(axis: 0).to_a
    assert_equal [6, 22, 38], @i.sum(axis: 1).to_a
    assert_equal [6, 22, 38], @i.sum(axis: -1).to_a
    assert_equal [12, 15, 18, 21], @i.sum(axis: -2).to_a
  end

  def test_axis_array_and_positional_axes
    assert_equal 66, Integer(@i.sum(axis: [0, 1]))
    assert_equal [], @i.sum(axis: [0, 1]).shape
    assert_equal [12, 15, 18, 21], @i.sum(0).to_a
    assert_equal 66, Integer(@i.sum(0, 1))
    b = Cumo::Int32.new(2, 3, 4).seq
    assert_equal [60, 66, 72, 78], b.sum(0, 1).to_a
    assert_equal [[12, 15, 18, 21], [48, 51, 54, 57]], b.sum(axis: 1).to_a
  end

  def test_keepdims
    assert_equal [[66]], @i.sum(keepdims: true).to_a
    assert_equal [1, 1], @i.sum(keepdims: true).shape
    assert_equal [[12, 15, 18, 21]], @i.sum(axis: 0, keepdims: true).to_a
    assert_equal [[3.0], [7.0], [11.0]], @d.max(axis: 1, keepdims: true).to_a
  end

  def test_each_op_along_an_axis
    assert_equal [0, 840, 7920], @i.prod(axis: 1).to_a
    assert_equal [8, 9, 10, 11], @i.max(axis: 0).to_a
    assert_equal [0, 4, 8], @i.min(1).to_a
    assert_equal [4.0, 5.0, 6.0, 7.0], @d.mean(axis: 0).to_a
    assert_equal [1.5, 5.5, 9.5], @d.mean(axis: 1).to_a
  end

  def test_reduction_of_a_view
    v = @d[true, (0..).step(2)] # columns 0 and 2
    assert_equal [12.0, 18.0], v.sum(axis: 0).to_a
    assert_equal 30.0, Float(v.sum)
    assert_equal [3.0, 7.0, 11.0], @d.transpose.max(axis: 0).to_a
  end

  # ---- result classes --------------------------------------------------------

  def test_result_classes
    SIGNED.each do |k|
      x = k[1, 2]
      assert_instance_of Cumo::Int64, x.sum, k.name
      assert_instance_of Cumo::Int64, x.prod, k.name
      assert_instance_of k, x.max, k.name
      assert_instance_of k, x.min, k.name
    end
    UNSIGNED.each do |k|
      x = k[1, 2]
      assert_instance_of Cumo::UInt64, x.sum, k.name
      assert_instance_of Cumo::UInt64, x.prod, k.name
      assert_instance_of k, x.max, k.name
    end
    FLOATS.each do |k|
      x = k[1, 2]
      %i[sum prod max min mean].each { |op| assert_instance_of k, x.public_send(op), "#{k}##{op}" }
    end
  end

  def test_integer_sums_accumulate_in_64_bits
    assert_equal 200, Integer(Cumo::Int8[100, 100].sum)
    assert_equal 510, Integer(Cumo::UInt8[255, 255].sum)
    assert_equal 2**32, Integer(Cumo::Int32[65536, 65536].prod)
  end

  # ---- NaN -------------------------------------------------------------------

  # Both executors fold a reduction in the order the CUDA kernels do
  # (fusion/reduce_order.h). Added in row-major order, 1e8 + 1 rounds back
  # to 1e8 and these sums would be 1.
  def test_reductions_fold_in_the_kernels_tree
    # A full reduction: thread i takes element i, and the warp tree adds
    # lanes 0 and 2 (1e8 - 1e8) and lanes 1 and 3 (1 + 1) first.
    assert_equal 2.0, Float(Cumo::SFloat[1e8, 1, -1e8, 1].sum)
    # An axis of at most 32 elements: one thread per output, in order.
    assert_equal 1.0, Float(Cumo::SFloat[[1e8, 1, -1e8, 1]].sum(axis: 1)[0])
    # A longer axis: a warp per output, lane j takes elements j, j + 32 ...
    row = [0.0] * 40
    row[0], row[1], row[32], row[33] = 1e8, 1.0, -1e8, 1.0
    assert_equal 2.0, Float(Cumo::SFloat[row].sum(axis: 1)[0])
  end

  # var, stddev and rms as Numo defines them: var divides by n - 1.
  def test_var_stddev_rms
    x = Cumo::DFloat[[1, 2, 3, 4], [2, 4, 6, 9]]
    assert_in_delta 46.875 / 7, Float(x.var), 1e-12
    assert_equal Cumo::DFloat, x.var.class
    assert_equal [0, 0], [x.var.ndim, x.stddev.ndim]
    v = x.var(axis: 1).to_a
    assert_in_delta 5.0 / 3, v[0], 1e-12
    assert_in_delta 26.75 / 3, v[1], 1e-12
    assert_in_delta Math.sqrt(5.0 / 3), x.stddev(axis: 1).to_a[0], 1e-12
    assert_equal [2, 1], x.var(axis: 1, keepdims: true).shape
    assert_in_delta Math.sqrt(30.0 / 4), x.rms(1).to_a[0], 1e-12
    assert_in_delta Math.sqrt(167.0 / 8), Float(x.rms), 1e-12
    assert_equal [2.0, 4.5], Cumo::DFloat[[1, 3], [2, 5]].var(axis: 1).to_a
  end

  def test_var_of_complex_answers_the_real_class
    z = Cumo::DComplex[1 + 2i, 3 - 1i]
    assert_equal Cumo::DFloat, z.var.class
    assert_in_delta 6.5, Float(z.var), 1e-12
    assert_in_delta Math.sqrt((5 + 10) / 2.0), Float(z.rms), 1e-12
    assert_equal Cumo::SFloat, Cumo::SComplex[1i, 2].stddev.class
  end

  # The spec's Half Precision: the squares stay in the single-precision
  # accumulator; the variance itself saturates, its square root does not.
  def test_half_var_saturates_where_stddev_does_not
    a = Cumo::HFloat[2000.0, -2000.0, 1000.0, -1000.0]
    assert_equal Float::INFINITY, Float(a.var)
    assert_equal 1826.0, Float(a.stddev)
    assert_equal Cumo::HFloat, a.var.class
  end

  def test_ptp_minmax_mulsum
    x = Cumo::Int32[[3, -1, 7], [2, 2, 0]]
    assert_equal 8, Integer(x.ptp)
    assert_equal Cumo::Int32, x.ptp.class
    assert_equal [1, 3, 7], x.ptp(axis: 0).to_a
    lo, hi = x.minmax
    assert_equal [-1, 7], [Integer(lo), Integer(hi)]
    lo, hi = x.minmax(axis: 1)
    assert_equal [[-1, 0], [7, 2]], [lo.to_a, hi.to_a]
    y = Cumo::DFloat[[1, 2, 3], [4, 5, 6]]
    assert_equal 91.0, Float(y.mulsum(y))
    assert_equal [14.0, 77.0], y.mulsum(y, axis: 1).to_a
    assert_equal [5.0, 7.0, 9.0], y.mulsum(Cumo::DFloat[1], axis: 0).to_a
  end

  def test_statistics_check_their_arguments
    e = assert_raises(NoMethodError) { Cumo::Int32[1, 2].var }
    assert_match(/\[var\]/, e.message)
    e = assert_raises(Cumo::NArray::DimensionError) { Cumo::DFloat[1, 2].stddev(axis: 1) }
    assert_match(/\[stddev\] axis 1 is out of range/, e.message)
    assert_raises(NoMethodError) { Cumo::DComplex[1].ptp }
    assert_raises(NoMethodError) { Cumo::DComplex[1].minmax }
    e = assert_raises(ArgumentError) { Cumo::DFloat[1].rms(bogus: 1) }
    assert_match(/\[rms\] unknown keyword/, e.message)
    e = assert_raises(Cumo::NArray::ShapeError) { Cumo::DFloat[1, 2].mulsum(Cumo::DFloat[1, 2, 3]) }
    assert_match(/\[mulsum\] shapes \[2\] and \[3\] do not broadcast/, e.message)
    e = assert_raises(TypeError) { Cumo::DFloat[1, 2].mulsum("3") }
    assert_match(/\[mulsum\]/, e.message)
    assert_equal 9, Float(Cumo::DFloat[1, 2].mulsum(3)) # a number broadcasts, as in Numo
  end

  # Numo's own examples (its accum_index.c documentation).
  def test_max_index_and_min_index_answer_flat_indices
    a = Cumo::Int32[3, 4, 1, 2]
    assert_equal 2, Integer(a.min_index)
    assert_equal 1, Integer(a.max_index)
    b = Cumo::Int32[[3, 4, 1], [2, 0, 5]]
    assert_equal 4, Integer(b.min_index)
    assert_equal [2, 4], b.min_index(axis: 1).to_a
    assert_equal [3, 4, 2], b.min_index(axis: 0).to_a
    assert_equal 5, Integer(b.max_index)
    assert_equal [1, 5], b.max_index(axis: 1).to_a
    assert_equal [0, 1, 5], b.max_index(axis: 0).to_a
    assert_equal Cumo::Int32, b.max_index.class
    assert_equal [[1], [5]], b.max_index(axis: 1, keepdims: true).to_a
  end

  def test_argmax_and_argmin_answer_indices_along_the_axis
    b = Cumo::SFloat[[3, 4, 1], [2, 0, 5]]
    assert_equal [1, 2], b.argmax(axis: 1).to_a
    assert_equal [1, 1, 0], b.argmin(axis: 0).to_a
    assert_equal 5, Integer(b.argmax)
    # The first of equal extremes.
    assert_equal 1, Integer(Cumo::DFloat[1, 5, 5, 2].argmax)
    assert_equal [0, 0], Cumo::Int64[[7, 7], [1, 1]].argmin(axis: 1).to_a
  end

  # NaN is skipped; a row of nothing but NaN answers its first element.
  def test_index_reductions_skip_nan
    f = Cumo::DFloat[[Float::NAN, 2, 2], [Float::NAN, Float::NAN, Float::NAN]]
    assert_equal [1, 3], f.max_index(axis: 1).to_a
    assert_equal [1, 0], f.argmin(axis: 1).to_a
    assert_equal 1, Integer(f.max_index)
  end

  # Lines longer than a block folds well (8192), over many blocks: the
  # first extreme, NaN skipped or (nan: true) the first NaN, a line of
  # nothing but NaN its first element, as for short lines.
  def test_index_reductions_of_long_lines
    n = 9000
    a = Cumo::SFloat.new(3, n).rand(-2, 2).floor # many equal extremes
    a[1, 7] = Float::NAN
    a[2, true] = Float::NAN
    rows = a.to_a
    numbers = rows.map { |r| r.reject(&:nan?) }
    argmax = rows.zip(numbers).map { |r, v| v.empty? ? 0 : r.index(v.max) }
    argmin = rows.zip(numbers).map { |r, v| v.empty? ? 0 : r.index(v.min) }
    assert_equal argmax, a.argmax(axis: 1).to_a
    assert_equal argmin, a.argmin(axis: 1).to_a
    assert_equal [argmax[0], 7, 0], a.argmax(axis: 1, nan: true).to_a
    assert_equal argmax.each_with_index.map { |k, i| i * n + k }, a.max_index(axis: 1).to_a
    assert_equal argmax[0], Integer(a.max_index)
    # Down the columns of a transpose: strided lines, keepdims.
    assert_equal [[argmin[0], argmin[1], argmin[2]]], a.transpose.argmin(axis: 0, keepdims: true).to_a
    # BFloat rounds a sequence into runs of equal values: the first of the
    # last run. Int16 over the outer and inner axes around a kept one.
    b = Cumo::BFloat.new(50_257).seq
    values = b.to_a
    assert_equal values.index(values.max), Integer(b.argmax)
    assert_equal Cumo::Int32, b.argmax.class
    c = Cumo::Int16.new(2, 3, 5000).seq % 977
    assert_equal [976, 5861, 10_746], c.max_index(axis: [0, 2]).to_a
    assert_equal [976, 631], c.argmax(axis: [1, 2]).to_a
  end

  def test_index_reductions_check_their_arguments
    e = assert_raises(NoMethodError) { Cumo::DComplex[1].argmax }
    assert_match(/\[argmax\] undefined for Cumo::DComplex/, e.message)
    assert_raises(NoMethodError) { Cumo::Bit[1, 0].max_index }
    e = assert_raises(Cumo::NArray::DimensionError) { Cumo::DFloat[1, 2].min_index(axis: 2) }
    assert_match(/\[min_index\] axis 2 is out of range/, e.message)
    e = assert_raises(Cumo::NArray::ShapeError) { Cumo::DFloat.new(0).argmin }
    assert_match(/\[argmin\]/, e.message)
  end

  def test_max_and_min_skip_nan
    a = Cumo::DFloat[1, Float::NAN, 3]
    assert_equal 3.0, Float(a.max)
    assert_equal 1.0, Float(a.min)
    assert_equal 2.0, Float(Cumo::DFloat[Float::NAN, 2].max)
    assert_equal [2.0, 5.0], Cumo::SFloat[[Float::NAN, 2], [5, Float::NAN]].max(axis: 1).to_a
  end

  def test_sum_and_mean_propagate_nan
    assert Float(Cumo::DFloat[1, Float::NAN].sum).nan?
    assert Float(Cumo::DFloat[1, Float::NAN].mean).nan?
  end

  # ---- dot -------------------------------------------------------------------

  def test_dot_of_1d_arrays_is_0_dim
    r = Cumo::DFloat[1, 2, 3].dot(Cumo::DFloat[4, 5, 6])
    assert_instance_of Cumo::DFloat, r
    assert_equal [], r.shape
    assert_equal 32.0, Float(r)
    assert_equal 32, Integer(Cumo::Int32[1, 2, 3].dot(Cumo::Int32[4, 5, 6]))
    assert_instance_of Cumo::SFloat, Cumo::SFloat[1, 2].dot(Cumo::SFloat[3, 4])
  end

  # ---- count_true and count_false ----------------------------------------------

  def test_count_true_and_count_false
    b = Cumo::Bit[1, 0, 1, 1]
    assert_equal [], b.count_true.shape
    assert_equal 3, Integer(b.count_true)
    assert_equal 1, Integer(b.count_false)
    assert_equal 3, b.count_true_cpu
    assert_equal 1, b.count_false_cpu
    m = Cumo::Bit[[1, 0], [1, 1]]
    assert_equal [2, 1], m.count_true(axis: 0).to_a
    assert_equal [1, 0], m.count_false(axis: 1).to_a
  end

  def test_count_of_a_comparison
    assert_equal 4, Integer((@d > 7).count_true)
    assert_equal 8, Integer((@d > 7).count_false)
  end

  # ---- compatible mode ----------------------------------------------------------

  def test_compatible_mode_switch
    Cumo.enable_compatible_mode
    assert_equal true, Cumo.compatible_mode_enabled?
    Cumo.disable_compatible_mode
    assert_equal false, Cumo.compatible_mode_enabled?
  end

  # Numo 0.9.2.1's answers: no axis scans every element in row-major order
  # and keeps the shape; an axis scans along it.
  def test_cumsum_and_cumprod
    a = Cumo::DFloat.new(2, 3).seq
    assert_equal [[0, 1, 3], [6, 10, 15]], a.cumsum.to_a
    assert_equal [[0, 1, 2], [3, 5, 7]], a.cumsum(axis: 0).to_a
    assert_equal [[0, 0, 0], [3, 12, 60]], a.cumprod(1).to_a
    assert_equal [1, 2, 6, 24, 120], (Cumo::Int32.new(5).seq + 1).cumprod.to_a
    assert_instance_of Cumo::Int32, Cumo::Int32[1, 2].cumsum
    # Through a reversed view, as it lies.
    assert_equal [[2, 3, 3], [5, 9, 12]], a[true, (2..0).step(-1)].cumsum(axis: 1).to_a
    # Half accumulates in single precision, as sum does.
    assert_equal 3000.0, Float(Cumo::HFloat.new(3000).fill(1.0).cumsum[-1])
    assert_raises(Cumo::NArray::DimensionError) { a.cumsum(axis: 2) }
    assert_raises(NoMethodError) { Cumo::Bit[1, 0].cumsum }
    assert_equal 1, Cumo.explain(a.cumsum).kernels.count { |k| k[:kind] == :scan }
  end

  # Numo's examples: DFloat[3,4,1,2].sort is [1,2,3,4]; sort_index answers
  # Int32 flat indices. NaN sorts last; -0.0 before 0.0; ties keep their
  # order in sort_index.
  def test_sort_and_sort_index
    assert_equal [1, 2, 3, 4], Cumo::DFloat[3, 4, 1, 2].sort.to_a
    idx = Cumo::NArray[3, 4, 1, 2].sort_index
    assert_instance_of Cumo::Int32, idx
    assert_equal [2, 3, 0, 1], idx.to_a
    a = Cumo::DFloat[3, 1, Float::NAN, 2, -0.0, 0.0, -5]
    sorted = a.sort.to_a
    assert_equal [-5, 0, 0, 1, 2, 3], sorted[0, 6]
    assert sorted[6].nan?
    assert_equal [-Float::INFINITY, Float::INFINITY], sorted[1, 2].map { |z| 1.0 / z }
    assert_equal [6, 4, 5, 1, 3, 0, 2], a.sort_index.to_a
    assert_equal [1, 3, 0, 2], Cumo::Int16[9, 7, 9, 7].sort_index.to_a
    b = Cumo::Int32[[5, 2, 9], [1, 7, 3]]
    assert_equal [[2, 5, 9], [1, 3, 7]], b.sort(axis: 1).to_a
    assert_equal [[1, 2, 3], [5, 7, 9]], b.sort(0).to_a
    assert_equal [[1, 2, 3], [5, 7, 9]], b.sort.to_a # every element, row-major
    assert_equal [[1, 0, 2], [3, 5, 4]], b.sort_index(axis: 1).to_a
    assert_equal [[3, 1, 5], [0, 4, 2]], b.sort_index(axis: 0).to_a
    # Through a reversed view, as it lies; the view itself is unchanged.
    r = b[true, (2..0).step(-1)]
    assert_equal [[2, 5, 9], [1, 3, 7]], r.sort(axis: 1).to_a
    assert_equal [[9, 2, 5], [3, 7, 1]], r.to_a
    assert_equal [1, 2, 0], Cumo::HFloat[2.5, -1, 0.5].sort_index.to_a
    assert_equal [], Cumo::SFloat[].sort.to_a
    assert_raises(NoMethodError) { Cumo::DComplex[1, 2].sort }
    assert_raises(NoMethodError) { Cumo::Bit[1, 0].sort_index }
    assert_raises(Cumo::NArray::DimensionError) { b.sort(axis: 2) }
    assert_raises(ArgumentError) { b.sort(axis: [0, 1]) }
    assert_equal 1, Cumo.explain(b.sort).kernels.count { |k| k[:kind] == :sort }
  end

  # Numo's median: NaN ignored by default, propagated with nan: true; an
  # even count averages the middle pair in the class's arithmetic.
  def test_median
    assert_equal 2.5, Float(Cumo::DFloat[4, 1, 3, 2].median)
    assert_equal 0.5, Float(Cumo::DFloat[3, 1, Float::NAN, 2, -0.0, 0.0, -5].median)
    assert Float(Cumo::DFloat[1, Float::NAN].median(nan: true)).nan?
    assert Float(Cumo::DFloat[Float::NAN, Float::NAN].median).nan?
    b = Cumo::Int32[[5, 2, 9], [1, 7, 3]]
    assert_equal [5, 3], b.median(axis: 1).to_a
    assert_equal [3, 4, 6], b.median(0).to_a # (2 + 7) / 2 truncates
    assert_equal 4, Integer(b.median)
    assert_equal [[5], [3]], b.median(axis: 1, keepdims: true).to_a
    assert_instance_of Cumo::Int32, b.median
    assert_equal 127, Integer(Cumo::Int8[127, 127].median) # promoted, as C adds
    assert_equal 1.5, Float(Cumo::HFloat[1, 2].median)
    assert Float(Cumo::DFloat[].median).nan?
    assert_raises(NoMethodError) { Cumo::SComplex[1].median }
    assert_raises(Cumo::NArray::DimensionError) { b.median(axis: -3) }
  end

  # Numo's _nan functions: with nan: true, sum, prod and mean skip NaN,
  # max and min answer NaN for a line holding one (by default they skip
  # it), var, stddev and rms fold the numbers only.
  def test_nan_variants
    nan = Float::NAN
    a = Cumo::DFloat[[1, nan, 3], [4, 5, 6]]
    assert Float(a.sum).nan?
    assert_equal 19, Float(a.sum(nan: true))
    assert_equal [4, 15], a.sum(axis: 1, nan: true).to_a
    assert_equal 360, Float(a.prod(nan: true))
    assert_in_delta 3.8, Float(a.mean(nan: true)), 1e-15
    assert_equal [2, 5], a.mean(axis: 1, nan: true).to_a
    assert_equal 6, Float(a.max)
    assert Float(a.max(nan: true)).nan?
    mins = a.min(axis: 1, nan: true).to_a
    assert mins[0].nan?
    assert_equal 4, mins[1]
    assert_equal [4, 6], a.max(axis: 0, nan: true).to_a.values_at(0, 2)
    assert_in_delta 3.7, Float(a.var(nan: true)), 1e-15
    assert_in_delta Math.sqrt(2), a.stddev(axis: 1, nan: true).to_a[0], 1e-15
    assert_in_delta Math.sqrt(17.4), Float(a.rms(nan: true)), 1e-15
    assert_equal [[4], [15]], a.sum(axis: 1, keepdims: true, nan: true).to_a
    assert_equal [2, 2], a.ptp(axis: 1).to_a
    assert a.ptp(axis: 1, nan: true).to_a[0].nan?
    lo, hi = a.minmax(axis: 0, nan: true)
    assert_equal [1, 3], lo.to_a.values_at(0, 2)
    assert hi.to_a[1].nan?
    # The sixteen-bit floats fold in single precision, as their plain sums.
    assert_equal 3, Float(Cumo::HFloat[1, 2, nan].sum(nan: true))
    assert_equal 1.5, Float(Cumo::SFloat[1, 2, nan].mean(nan: true))
    z = Cumo::DComplex[1, Complex(nan, 0), 3].mean(nan: true)
    assert_equal Complex(2, 0), z.extract
    assert Float(Cumo::DFloat[nan].mean(nan: true)).nan? # no numbers: 0 / 0
    # Integer classes hold no NaN: the plain answer.
    assert_equal 3, Integer(Cumo::Int32[1, 2].sum(nan: true))
    # The index reductions: the first NaN's index with nan: true.
    assert_equal 5, Integer(a.max_index)
    assert_equal 1, Integer(a.max_index(nan: true))
    assert_equal [1, 0], a.min_index(axis: 1, nan: true).to_a.map { |i| i % 3 }
    assert_equal [1, 0, 1], a.argmax(axis: 0, nan: true).to_a
    assert_equal [1, 0], a.argmin(axis: 1, nan: true).to_a
    assert_equal 2, Integer(Cumo::Int32[3, 1, 9].max_index(nan: true))
    assert_raises(NoMethodError) { Cumo::Int32[1].var(nan: true) }
  end

  # Numo's m_cumsum_nan and m_cumprod_nan: once the scan holds a number it
  # skips NaN; a prefix of NaN alone stays NaN. m_mulsum_nan skips the
  # products with a NaN factor, while infinity times zero still counts.
  def test_nan_scans_and_mulsum
    nan = Float::NAN
    inf = Float::INFINITY
    c = Cumo::DFloat[nan, nan, 2, nan, 3].cumsum(nan: true).to_a
    assert c[0].nan? && c[1].nan?
    assert_equal [2, 2, 5], c[2..]
    assert Cumo::DFloat[1, nan, 3].cumsum.to_a[2].nan?
    assert_equal [[1.0, 1.0, 4.0], [nan, 5.0, 11.0]].to_s,
                 Cumo::DFloat[[1, nan, 3], [nan, 5, 6]].cumsum(axis: 1, nan: true).to_a.to_s
    assert_equal [[1.0, nan, 3.0], [1.0, 5.0, 9.0]].to_s,
                 Cumo::DFloat[[1, nan, 3], [nan, 5, 6]].cumsum(axis: 0, nan: true).to_a.to_s
    assert_equal [2, 2, 6, 24], Cumo::SFloat[2, nan, 3, 4].cumprod(nan: true).to_a
    assert_equal [1.5, 1.5, 4.0], Cumo::HFloat[1.5, nan, 2.5].cumsum(nan: true).to_a
    z = Cumo::DComplex[Complex(nan, 1), 1, Complex(0, 2)].cumsum(nan: true).to_a
    assert z[0].real.nan?
    assert_equal [Complex(1, 0), Complex(1, 2)], z[1..]
    assert_equal [1, 3, 6], Cumo::Int32[1, 2, 3].cumsum(nan: true).to_a
    assert_raises(ArgumentError) { Cumo::DFloat[1].cumsum(keepdims: true) }

    a = Cumo::DFloat[1, nan, 3, 4]
    b = Cumo::DFloat[2, 5, nan, 1]
    assert Float(a.mulsum(b)).nan?
    assert_equal 6, Float(a.mulsum(b, nan: true))
    assert Float(Cumo::DFloat[inf, 1].mulsum(Cumo::DFloat[0, 1], nan: true)).nan?
    assert_equal 2, Float(Cumo::DFloat[nan, 1].mulsum(Cumo::DFloat[inf, 2], nan: true))
    m = Cumo::DFloat[[1, nan], [3, 4]]
    assert_equal [3, 21], m.mulsum(Cumo::Int32[3, 3], axis: 1, nan: true).to_a
    assert_equal [[3], [21]], m.mulsum(3, 1, keepdims: true, nan: true).to_a
    assert_equal 12, Integer(Cumo::Int32[1, 2].mulsum(Cumo::Int32[4, 4], nan: true))
    assert_raises(Cumo::NArray::ShapeError) { m.mulsum(Cumo::DFloat[1, 2, 3], nan: true) }
  end

  # Numo's Bit#all?, any?, none?: Ruby's true or false over every element,
  # a Bit array along axes.
  def test_bit_truth
    b = Cumo::Bit[[1, 0, 1], [1, 1, 1]]
    assert_equal false, b.all?
    assert_equal true, b.any?
    assert_equal false, b.none?
    assert_equal [0, 1], b.all?(axis: 1).to_a
    assert_equal [1, 1, 1], b.any?(0).to_a
    assert_equal [1, 0, 1], b.all?(0).to_a
    assert_equal [0, 0], b.none?(axis: 1).to_a
    assert_equal true, Cumo::Bit[].all?
    assert_equal false, Cumo::Bit[].any?
    assert_equal true, Cumo::Bit[0, 0].none?
    assert_equal true, (Cumo::DFloat[1, 2] > 0).all?
    assert_raises(NoMethodError) { Cumo::DFloat[1].all? }
    # Every axis kept (keepdims: true): an array, not true or false (this
    # raised a NoMethodError from inside any? once).
    kept = b.any?(keepdims: true)
    assert_equal [[1]], kept.to_a
    assert_equal [[0]], b.all?(keepdims: true).to_a
  end

  def test_compatible_mode_answers_ruby_numbers
    Cumo.enable_compatible_mode
    assert_equal 66, @i.sum
    assert_instance_of Integer, @i.sum
    assert_equal 5.5, @d.mean
    assert_equal 11.0, @d.max
    assert_equal 32.0, Cumo::DFloat[1, 2, 3].dot(Cumo::DFloat[4, 5, 6])
    assert_equal 3, Cumo::Bit[1, 0, 1, 1].count_true
    assert_instance_of Cumo::Int64, @i.sum(axis: 0) # not 0-dim: unchanged
    # extract_cpu is an NArray method; the result is already a Ruby number.
    assert_raises(NoMethodError) { @d.sum.extract_cpu }
    # Kernel#Float reads either representation.
    assert_equal 66.0, Float(@d.sum)
  end

  def test_the_cpu_methods_do_not_depend_on_the_mode
    [false, true].each do |on|
      on ? Cumo.enable_compatible_mode : Cumo.disable_compatible_mode
      assert_equal false, Cumo::SFloat[5.0].aref_cpu(0) < 1.0
      assert_equal 66.0, Float(@d.sum)
    end
  end

  def test_cumo_compatible_mode_environment_flag
    script = 'require "cumo/narray"; print Cumo.compatible_mode_enabled?, " ", ' \
             'Cumo::DFloat[1, 2].sum.class'
    %w[1 on ON yes Yes true TRUE].each do |value|
      out, err = run_compatible(script, value)
      assert_equal "true Float", out, value
      assert_empty err, value
    end
    %w[0 off Off no NO false False].each do |value|
      out, err = run_compatible(script, value)
      assert_equal "false Cumo::DFloat", out, value
      assert_empty err, value
    end
    %w[maybe 2 enabled].each do |value|
      out, err = run_compatible(script, value)
      assert_equal "false Cumo::DFloat", out, value # keeps the default
      assert_match(/CUMO_COMPATIBLE_MODE/, err, value)
    end
  end

  private

  # Runs `script` in a child Ruby with CUMO_COMPATIBLE_MODE set, on the
  # executor this process uses (CUMO_DEVICE and RUBYLIB are inherited).
  def run_compatible(script, value)
    out, err, status = run_ruby({ "CUMO_COMPATIBLE_MODE" => value }, "-e", script)
    assert status.success?, "ruby -e failed for #{value}: #{err}"
    [out, err]
  end
end
