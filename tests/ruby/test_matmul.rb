# frozen_string_literal: true

# matmul, dot and gemm with numpy's gufunc semantics
# (../shared/seeds/002: the signature (n?,k),(k,m?)->(n?,m?), batch axes
# that broadcast, 1-D operands promoted and the added axis removed, 0-d
# operands and core mismatches refused), checked against a plain-Ruby
# product for every shape case of the seed; operands read in place when
# BLAS can take them (a transposed view: no copy, counted), copied once
# otherwise (a reversed view); the half classes accumulating in single
# precision and rounding once; inner, outer and kron as Numo has them.
#
# The values are small integers, so every product is exact in every float
# class whatever order the executor sums in: the same assertions hold on
# the CPU reference and on cuBLAS (tests/meson.build runs both).
require "minitest/autorun"
require "cumo/narray"

class TestMatmul < Minitest::Test
  ShapeError = Cumo::NArray::ShapeError

  # Small integers, varied enough that a wrong index shows.
  def values(count, salt = 0) = Array.new(count) { |i| ((i * 7 + salt * 3) % 11) - 5 }

  def array(klass, shape, salt = 0)
    count = shape.inject(1, :*)
    return klass.zeros(*shape) if count.zero?

    klass.cast(values(count, salt)).reshape(*shape)
  end

  # numpy's matmul on flat row-major Ruby arrays: [flat result, shape].
  def reference(a, a_shape, b, b_shape)
    a_vector = a_shape.size == 1
    b_vector = b_shape.size == 1
    a_shape = [1] + a_shape if a_vector
    b_shape += [1] if b_vector
    n, k = a_shape[-2..]
    m = b_shape[-1]
    a_batch = a_shape[0...-2]
    b_batch = b_shape[0...-2]
    rank = [a_batch.size, b_batch.size].max
    a_batch = [1] * (rank - a_batch.size) + a_batch
    b_batch = [1] * (rank - b_batch.size) + b_batch
    batch = a_batch.zip(b_batch).map { |x, y| x == 1 ? y : x }
    out = []
    each_index(batch) do |index|
      a_base = flat_offset(index, a_batch) * n * k
      b_base = flat_offset(index, b_batch) * k * m
      n.times do |i|
        m.times do |j|
          out << (0...k).sum { |l| a[a_base + i * k + l] * b[b_base + l * m + j] }
        end
      end
    end
    shape = batch + (a_vector ? [] : [n]) + (b_vector ? [] : [m])
    [out, shape]
  end

  def each_index(shape, &block)
    return yield([]) if shape.empty?

    shape[0].times { |i| each_index(shape[1..]) { |rest| block.call([i] + rest) } }
  end

  # The offset of `index` in a batch of extents `own`, broadcasting ones.
  def flat_offset(index, own)
    index.zip(own).inject(0) { |acc, (i, extent)| acc * extent + (extent == 1 ? 0 : i) }
  end

  def flat(result) = result.ndim.zero? ? [result.to_a].flatten : result.to_a.flatten

  def assert_product(a, b, message = nil)
    want, shape = reference(flat(a), a.shape, flat(b), b.shape)
    got = a.matmul(b)
    assert_equal shape, got.shape, "shape of #{a.shape} @ #{b.shape} #{message}"
    assert_equal want, flat(got), "values of #{a.shape} @ #{b.shape} #{message}"
    got
  end

  # ---- the seed's shape cases ------------------------------------------------

  SHAPE_CASES = [
    [[5, 7], [7, 3]],          # matrix @ matrix
    [[7], [7, 3]],             # a vector promoted to a row, the axis removed
    [[5, 7], [7]],             # a vector promoted to a column
    [[7], [7]],                # both: a 0-d answer
    [[2, 1, 5, 7], [3, 7, 4]], # batch axes broadcast: (2,1) with (3,)
    [[4, 5, 7], [7, 4]],       # a stack of matrices with one matrix
    [[7, 4], [3, 4, 2]],       # one matrix with a stack
    [[2, 3, 4], [4]],          # a stack of matrices with a vector
    [[4], [2, 4, 3]],          # a vector with a stack
    [[1, 7], [7, 1]],          # length-one core axes
    [[1, 1], [1, 1]],
    [[3, 1], [1, 4]],          # k = 1: an outer product
    [[1, 2, 3], [2, 3, 2]],    # a length-one batch broadcast
    [[3, 0], [0, 4]],          # empty k: zeros
    [[0, 3], [3, 4]],          # empty n
    [[3, 4], [4, 0]],          # empty m
    [[0, 2, 3], [3, 2]],       # empty batch
    [[0], [0]],                # empty vectors: 0
  ].freeze

  def test_every_shape_case_of_the_seed
    SHAPE_CASES.each do |a_shape, b_shape|
      assert_product(array(Cumo::DFloat, a_shape, 1), array(Cumo::DFloat, b_shape, 2))
    rescue StandardError => e
      # A device error (an illegal address) says nothing of the case.
      raise e.class, "#{a_shape} @ #{b_shape}: #{e.message}", e.backtrace
    end
  end

  def test_empty_k_gives_zeros_and_an_empty_vector_product_is_zero
    assert_equal [[0.0] * 4] * 3, Cumo::DFloat.zeros(3, 0).matmul(Cumo::DFloat.zeros(0, 4)).to_a
    assert_equal 0.0, Float(Cumo::DFloat.zeros(0).matmul(Cumo::DFloat.zeros(0)))
    # Nothing to sum is a fill of zeros, not a library call.
    c = Cumo::SFloat.zeros(2, 0).matmul(Cumo::SFloat.zeros(0, 3))
    assert_equal [:elementwise], Cumo.explain(c).kernels.map { |k| k[:kind] }
    assert_equal Cumo::SFloat, c.class
  end

  def test_vector_products_stay_0_dim
    r = Cumo::DFloat[1, 2, 3].matmul(Cumo::DFloat[4, 5, 6])
    assert_equal [], r.shape
    assert_equal 32.0, Float(r)
  end

  def test_every_float_and_complex_class
    [Cumo::DFloat, Cumo::SFloat, Cumo::HFloat, Cumo::BFloat].each do |klass|
      got = assert_product(array(klass, [2, 4, 6], 3), array(klass, [6, 5], 4), klass.name)
      assert_equal klass, got.class
    end
    [Cumo::DComplex, Cumo::SComplex].each do |klass|
      a = klass.cast([[Complex(1, 2), Complex(0, -1)], [Complex(3, 0), Complex(1, 1)]])
      b = klass.cast([[Complex(2, 0), Complex(1, -1)], [Complex(0, 1), Complex(-2, 3)]])
      # [[(1+2i)2 + (-i)(i), (1+2i)(1-i) + (-i)(-2+3i)], [6 + (1+i)i, 3(1-i) + (1+i)(-2+3i)]]
      want = [[Complex(3, 4), Complex(6, 3)], [Complex(5, 1), Complex(-2, -2)]]
      got = a.matmul(b)
      assert_equal klass, got.class
      assert_equal want, got.to_a, klass.name
    end
  end

  def test_integer_classes_are_exact_and_stay_integer
    [Cumo::Int32, Cumo::Int64, Cumo::Int16, Cumo::Int8, Cumo::UInt8].each do |klass|
      a = klass.cast([[1, 2, 3], [4, 5, 6]])
      b = klass.cast([[1, 0], [0, 1], [2, 2]])
      got = a.matmul(b)
      assert_equal klass, got.class
      assert_equal [[7, 8], [16, 17]], got.to_a, klass.name
    end
    # Wrapping as the class does, not widening.
    big = Cumo::Int32.cast([[2**30, 2**30]]).matmul(Cumo::Int32.cast([[2], [2]]))
    assert_equal [[0]], big.to_a
  end

  def test_classes_promote_as_in_arithmetic
    assert_equal Cumo::DFloat, Cumo::SFloat.ones(2, 2).matmul(Cumo::DFloat.ones(2, 2)).class
    assert_equal Cumo::DFloat, Cumo::Int32.ones(2, 2).matmul(Cumo::DFloat.ones(2, 2)).class
    assert_equal Cumo::SFloat, Cumo::HFloat.ones(2, 2).matmul(Cumo::BFloat.ones(2, 2)).class
    assert_equal Cumo::DComplex, Cumo::DFloat.ones(2, 2).matmul(Cumo::SComplex.ones(2, 2)).class
    assert_equal [[4.0, 4.0]], Cumo::Int32.ones(1, 2).matmul(Cumo::DFloat.ones(2, 2).fill(2)).to_a
  end

  def test_a_ruby_array_operand_is_cast_to_the_receivers_class
    got = Cumo::DFloat[[1, 2], [3, 4]].matmul([[1, 0], [0, 1]])
    assert_equal Cumo::DFloat, got.class
    assert_equal [[1.0, 2.0], [3.0, 4.0]], got.to_a
    assert_equal [5.0, 11.0], Cumo::DFloat[[1, 2], [3, 4]].dot([1, 2]).to_a
  end

  # ---- views and BLAS ---------------------------------------------------------

  def test_a_transposed_operand_is_read_in_place
    at = array(Cumo::SFloat, [7, 5], 1).transpose # (5, 7), column-major
    bt = array(Cumo::SFloat, [3, 7], 2).transpose # (7, 3)
    Cumo.reset_stats
    assert_product(at, bt)
    assert_equal 0, Cumo.stats[:matmul_copies], "a transposed view goes to BLAS with the transpose flag"
  end

  def test_a_batched_transpose_and_a_sliced_matrix_are_read_in_place
    a = array(Cumo::DFloat, [3, 6, 5], 1).swapaxes(-1, -2) # (3, 5, 6)
    b = array(Cumo::DFloat, [8, 4], 2)[0..5, true]         # rows of a wider matrix
    Cumo.reset_stats
    assert_product(a, b)
    assert_equal 0, Cumo.stats[:matmul_copies]
  end

  def test_views_with_negative_steps_are_copied_once
    a = array(Cumo::DFloat, [4, 6], 1).reverse(1)
    b = array(Cumo::DFloat, [6, 3], 2)[(-1..0).step(-1), true]
    Cumo.reset_stats
    assert_product(a, b)
    assert_equal 2, Cumo.stats[:matmul_copies], "each operand BLAS cannot read is copied once"
  end

  def test_a_strided_view_is_copied_and_right
    a = array(Cumo::DFloat, [5, 8], 1)[true, (0..7).step(2)] # column stride 2
    assert_product(a, array(Cumo::DFloat, [4, 3], 2))
  end

  def test_a_broadcast_operand
    b = Cumo::DFloat[1, 2, 3].reshape(3, 1) * Cumo::DFloat.ones(1, 4) # a lazy (3,4)
    assert_product(array(Cumo::DFloat, [2, 3], 1), b)
  end

  # A stored constant read through two layouts is two loads of one buffer
  # (the lowering once answered both from one cached instance).
  def test_a_pending_constant_with_its_own_transpose
    a = Cumo::DFloat.new(2, 3).fill(1)
    assert_equal [[3.0, 3.0], [3.0, 3.0]], a.matmul(a.transpose).to_a
    o = Cumo::DFloat.ones(3, 2)
    assert_equal [[2.0] * 3] * 3, o.matmul(o.transpose).to_a
  end

  def test_a_lazy_producer_and_consumer
    a = array(Cumo::DFloat, [3, 4], 1)
    b = array(Cumo::DFloat, [4, 2], 2)
    got = ((a * 2).matmul(b + 1) - 1).to_a
    want, = reference(flat(a * 2), [3, 4], flat(b + 1), [4, 2])
    assert_equal want.map { |x| x - 1 }, got.flatten
  end

  # ---- dot and gemm -------------------------------------------------------------

  def test_dot_follows_numo
    a = array(Cumo::DFloat, [3, 4], 1)
    b = array(Cumo::DFloat, [4, 2], 2)
    assert_equal a.matmul(b).to_a, a.dot(b).to_a
    v = Cumo::DFloat[1, 2, 3, 4]
    assert_equal 30.0, Float(v.dot(v))
    assert_equal a.matmul(v).to_a, a.dot(v).to_a
  end

  def test_gemm_scales_and_adds_without_overwriting_c
    a = Cumo::DFloat[[1, 2], [3, 4]]
    b = Cumo::DFloat[[1, 1], [0, 1]]
    c = Cumo::DFloat[[10, 20], [30, 40]]
    assert_equal [[2.0, 6.0], [6.0, 14.0]], a.gemm(b, alpha: 2).to_a
    assert_equal [[12.0, 26.0], [36.0, 54.0]], a.gemm(b, alpha: 2, beta: 1, c: c).to_a
    assert_equal [[6.0, 13.0], [18.0, 27.0]], a.gemm(b, alpha: 1, beta: 0.5, c: c).to_a
    assert_equal [[10.0, 20.0], [30.0, 40.0]], c.to_a, "c is read, not written"
    assert_equal a.matmul(b).to_a, a.gemm(b).to_a
    assert_equal a.matmul(b).to_a, a.gemm(b, beta: 0, c: c).to_a
  end

  # The spec: a half dot whose answer does not fit saturates, and alpha
  # applied inside the single-precision accumulator rounds once.
  def test_half_accumulates_in_single_precision_and_rounds_once
    a = Cumo::HFloat.ones(1, 1024)
    b = Cumo::HFloat.new(1024, 1).fill(100.0)
    assert_equal [[Float::INFINITY]], a.dot(b).to_a
    assert_equal [[102.375]], a.gemm(b, alpha: 0.001).to_a
    assert_equal [[102_400.0]], Cumo::SFloat.cast(a).dot(Cumo::SFloat.cast(b)).to_a
    assert_equal [[2048.0]], Cumo::HFloat.ones(1, 2049).matmul(Cumo::HFloat.ones(2049, 1)).to_a
  end

  def test_tf32_is_off_unless_asked
    skip "CUMO_ALLOW_TF32 is set in this environment" if ENV["CUMO_ALLOW_TF32"]
    refute Cumo.allow_tf32?
  end

  # ---- inner, outer, kron (Numo's examples) ------------------------------------------

  def test_inner_outer_kron
    a = array(Cumo::DFloat, [2, 3], 1)
    assert_equal (a * a).sum(axis: -1).to_a, a.inner(a).to_a
    assert_equal [[-2.0, -1.0, 0.0, 1.0, 2.0]] * 5,
                 Cumo::DFloat.ones(5).outer(Cumo::DFloat.linspace(-2, 2, 5)).to_a
    assert_equal [2, 3, 4], a.outer(Cumo::DFloat[1, 2, 3, 4]).shape
    assert_equal [5, 6, 7, 50, 60, 70, 500, 600, 700], Cumo::DFloat[1, 10, 100].kron([5, 6, 7]).to_a
    assert_equal [5, 50, 500, 6, 60, 600, 7, 70, 700], Cumo::DFloat[5, 6, 7].kron([1, 10, 100]).to_a
    assert_equal [[1, 1, 0, 0], [1, 1, 0, 0], [0, 0, 1, 1], [0, 0, 1, 1]],
                 Cumo::DFloat.eye(2).kron(Cumo::DFloat.ones(2, 2)).to_a
    assert_equal [2, 6], Cumo::DFloat.ones(2, 3).kron(Cumo::DFloat.ones(2)).shape
  end

  # ---- bad input ---------------------------------------------------------------------

  def test_a_0_dim_operand_is_refused_with_numpys_meaning
    a = Cumo::DFloat.ones(2, 3)
    e = assert_raises(ShapeError) { a.matmul(Cumo::DFloat[1, 2, 3][0]) }
    assert_match(/\[matmul\] operand 1 does not have enough dimensions \(has 0/, e.message)
    e = assert_raises(ShapeError) { Cumo::DFloat[1, 2][0].matmul(a) }
    assert_match(/\[matmul\] operand 0 does not have enough dimensions/, e.message)
    e = assert_raises(ShapeError) { a.matmul(3.0) }
    assert_match(/operand 1 does not have enough dimensions/, e.message)
  end

  def test_a_core_mismatch_names_the_sizes
    e = assert_raises(ShapeError) { Cumo::DFloat.ones(2, 3).matmul(Cumo::DFloat.ones(2, 3)) }
    assert_match(/\[matmul\] operand 1 has a mismatch in its core dimension 0/, e.message)
    assert_match(/size 2 is different from 3/, e.message)
    assert_raises(ShapeError) { Cumo::DFloat.ones(3).matmul(Cumo::DFloat.ones(4)) }
    assert_raises(ShapeError) { Cumo::DFloat.ones(2, 3).dot(Cumo::DFloat.ones(4)) }
  end

  def test_batches_that_do_not_broadcast
    e = assert_raises(ShapeError) { Cumo::DFloat.ones(2, 3, 4).matmul(Cumo::DFloat.ones(3, 4, 5)) }
    assert_match(/\[matmul\]/, e.message)
  end

  def test_bad_arguments
    a = Cumo::DFloat.ones(2, 2)
    assert_raises(TypeError) { a.matmul("x") }
    assert_raises(TypeError) { a.matmul(nil) }
    assert_raises(NoMethodError) { Cumo::Bit.ones(2, 2).matmul(Cumo::Bit.ones(2, 2)) }
    e = assert_raises(ArgumentError) { a.gemm(a, gamma: 1) }
    assert_match(/\[gemm\] unknown keyword/, e.message)
    assert_raises(ShapeError) { a.gemm(a, beta: 1, c: Cumo::DFloat.ones(3, 3)) }
    assert_raises(TypeError) { a.gemm(a, alpha: "two") }
    assert_raises(ArgumentError) { a.matmul }
    assert_raises(TypeError) { a.kron("x") }
    assert_raises(ArgumentError) { a.outer(a, axis: 5) }
  end

  def test_an_error_leaves_nothing_pending
    a = Cumo::DFloat.ones(2, 3)
    assert_raises(ShapeError) { a.matmul(a) }
    assert_equal [[3.0, 3.0], [3.0, 3.0]], a.matmul(a.transpose).to_a
  end
end
