# frozen_string_literal: true

# Library epilogues (fusion/library_epilogue.h): a product cuBLAS computes
# (more than 16 rows, or a batch) followed by a bias add or a residual add,
# in SFloat or DFloat, is one kernel: cublasLtMatmul writes the sum. When
# Ruby still holds the product as the plan runs, the product is written
# too and the addend added by a second cuBLAS call.
#
# The values are small integers, so every product and sum is exact
# whatever order an executor sums in: the fused answer equals the product
# read back and added in Ruby, bit for bit, on the CPU reference and on
# cuBLAS and cuBLASLt (tests/meson.build runs this file on both). What
# this checks on the GPU is the wiring: which axis the bias runs along,
# where a batch's residual lies, the held product, both routes.
require "minitest/autorun"
require "cumo/narray"

class TestLibraryEpilogue < Minitest::Test
  K = 24
  COLS = 40

  def ints(klass, *shape, salt: 0)
    count = shape.inject(1, :*)
    klass.cast(Array.new(count) { |i| ((i * 7 + salt * 5) % 9) - 4 }).reshape(*shape)
  end

  # [product, bias, residual] for a left operand shaped `rows_shape + [K]`.
  def operands(klass, rows_shape)
    h = ints(klass, *rows_shape, K, salt: 1)
    w = ints(klass, K, COLS, salt: 2)
    b = ints(klass, COLS, salt: 3)
    x = ints(klass, *rows_shape, COLS, salt: 4)
    Cumo.sync
    [h, w, b, x]
  end

  # Rows of an array of any rank (its last axis), as Ruby arrays.
  def rows_of(a) = a.to_a.flatten(a.ndim - 2)

  # The product's rows in Ruby's own arithmetic, with `addend` (a row, or
  # an array of the product's shape) added.
  def expected(h, w, addend)
    ws = w.to_a
    adds = addend.ndim == 1 ? nil : rows_of(addend)
    rows_of(h).each_with_index.map do |row, i|
      add = adds ? adds[i] : addend.to_a
      (0...COLS).map { |j| (0...K).sum { |l| row[l] * ws[l][j] } + add[j] }
    end
  end

  def kernels(y) = Cumo.explain(y).kernels.map { |k| k.values_at(:kind, :ops) }

  def test_bias_and_residual_adds_are_the_product_kernel
    [Cumo::SFloat, Cumo::DFloat].each do |klass|
      [[40], [2, 20]].each do |rows|
        h, w, b, x = operands(klass, rows)
        {
          "p + b" => [-> { h.dot(w) + b }, b],
          "b + p" => [-> { b + h.dot(w) }, b],
          "p + x" => [-> { h.dot(w) + x }, x],
          "x + p" => [-> { x + h.dot(w) }, x],
          "gemm(c:, beta: 1)" => [-> { h.gemm(w, beta: 1, c: x) }, x],
        }.each do |name, (form, addend)|
          y = form.call
          label = "#{klass} #{rows.inspect} #{name}"
          assert_equal [[:matmul, %i[matmul add]]], kernels(y), label
          assert_equal expected(h, w, addend), rows_of(y), label
        end
      end
    end
  end

  # The product's wrapper gone before the plan runs (the GC reached it):
  # cuBLASLt writes the sum alone. Held: both are written, and equal what
  # they are apart.
  #
  # (Shapes no other test uses: a cuBLAS call captured before with equal
  # work is replayed, not issued, and the counters count issues.)
  def test_the_product_dropped_or_held
    h, w, b, = operands(Cumo::SFloat, [3, 21])
    Cumo.reset_stats
    y = h.dot(w) + b
    GC.start
    assert_equal expected(h, w, b), rows_of(y)
    if Cumo.gpu?
      s = Cumo.stats
      assert_operator s[:library_epilogues] + s[:library_epilogue_adds], :>=, 1, s.inspect
    end

    h, w, _, x = operands(Cumo::SFloat, [3, 22])
    Cumo.reset_stats
    p = h.dot(w)
    z = x + p
    assert_equal expected(h, w, x), rows_of(z)
    assert_equal expected(h, w, Cumo::SFloat.zeros(COLS)), rows_of(p)
    assert_equal 1, Cumo.stats[:library_epilogue_adds] if Cumo.gpu?
  end

  # What cuBLASLt cannot add exactly keeps a kernel of its own: the
  # sixteen-bit classes (the written form rounds the product, then the
  # sum), a scaled product, an activation.
  def test_what_stays_a_separate_kernel
    [Cumo::BFloat, Cumo::HFloat].each do |klass|
      h, w, b, = operands(klass, [40])
      y = h.dot(w) + b
      assert_equal [[:matmul, %i[matmul]], [:elementwise, %i[add]]], kernels(y), klass.name
      assert_equal expected(h, w, b), rows_of(y)
    end
    h, w, b, = operands(Cumo::SFloat, [40])
    y = h.gemm(w, alpha: 2) + b
    assert_equal [[:matmul, %i[matmul]], [:elementwise, %i[add]]], kernels(y)
    g = Cumo::NMath.gelu_tanh(h.dot(w) + b)
    assert_equal [[:matmul, %i[matmul add]], [:elementwise, %i[gelu_tanh]]], kernels(g)
    want = Cumo::NMath.gelu_tanh(Cumo::SFloat.cast(expected(h, w, b)))
    assert_equal want.to_a, rows_of(g)
  end

  # Random operands: the sum agrees with the product read back and added
  # to within the few ulps a different summation order can move it.
  def test_random_operands_agree_with_the_unfused_sum
    Cumo::NArray.srand(3)
    h = Cumo::DFloat.new(64, 96).rand(-1, 1)
    w = Cumo::DFloat.new(96, 80).rand(-1, 1)
    b = Cumo::DFloat.new(80).rand(-1, 1)
    y = h.dot(w) + b
    p = h.dot(w)
    p.to_a
    want = p + b
    assert_operator (y - want).abs.max.to_f, :<=, 1e-12
  end
end
