# frozen_string_literal: true

# Prologue fusion (fusion/prologue.h): a layer_norm, rms_norm or softmax
# whose only reader is a small matrix product (1 to 16 rows, a real float
# class), as its first operand, runs inside the product's kernel, as GPT-2's
# decode step writes it: `x.layer_norm(g, b, eps: 1e-5).dot(w) + bias`, and
# each head's `scores.softmax.matmul(v_cache)`.
#
# The product's kernel folds each row in the row op's own order and rounds
# the normalized rows to their class before it multiplies, so the fused
# answer equals, bit for bit, the row op's rows read back first and then
# multiplied, on the CPU executor and on the CUDA one (tests/meson.build runs
# this file on both). Rows Ruby still holds are stored by the product's
# kernel, with the row op's values.
require "minitest/autorun"
require "cumo/narray"

class TestPrologue < Minitest::Test
  CLASSES = [Cumo::SFloat, Cumo::DFloat, Cumo::BFloat, Cumo::HFloat].freeze
  COLS = 24

  ROW_OPS = {
    layer_norm: ->(x, g, b) { x.layer_norm(g, b, eps: 1e-5) },
    rms_norm: ->(x, g, _b) { x.rms_norm(g, eps: 1e-6) },
    softmax: ->(x, _g, _b) { x.softmax },
  }.freeze

  def setup
    Cumo::NArray.srand(7)
  end

  # x: `rows` rows of k (a vector when rows is nil), not centred, so the
  # normalization matters; gamma, beta of k; w: k x COLS, stored (COLS, k)
  # and read transposed when `transposed` (the other layout of the
  # generated kernel); a bias of COLS. All on the device.
  def operands(klass, rows, k, transposed: false)
    x = klass.new(*[rows, k].compact).rand(-1, 3)
    g = klass.new(k).rand(0.5, 1.5)
    b = klass.new(k).rand(-0.5, 0.5)
    w = transposed ? klass.new(COLS, k).rand(-0.5, 0.5).transpose : klass.new(k, COLS).rand(-0.5, 0.5)
    bias = klass.new(COLS).rand(-1, 1)
    Cumo.sync
    [x, g, b, w, bias]
  end

  def kernels(*arrays)
    Cumo.explain(*arrays).kernels.map { |k| [k[:kind], k[:ops]] }
  end

  def test_the_row_op_runs_in_the_product_kernel_with_the_unfused_answer
    CLASSES.each do |klass|
      [1, 8, nil].each do |rows|
        [40, 100].each do |k|
          [false, true].each do |transposed|
            x, g, b, w, bias = operands(klass, rows, k, transposed: transposed)
            ROW_OPS.each do |name, row_op|
              what = "#{klass} #{name}, #{rows || 'vector'} rows of #{k}#{transposed ? ', w transposed' : ''}"
              fused = row_op.call(x, g, b).dot(w) + bias
              assert_equal [[:matmul, [name, :matmul, :add]]], kernels(fused), what
              rows_first = row_op.call(x, g, b)
              rows_first.to_a # the row op's own kernel
              want = rows_first.dot(w) + bias
              assert_instance_of klass, fused, what
              assert_equal want.to_a, fused.to_a, what
            end
          end
        end
      end
    end
  end

  def test_rows_ruby_holds_are_stored_by_the_product_kernel
    CLASSES.each do |klass|
      x, g, b, w, = operands(klass, 3, 64)
      h = x.layer_norm(g, b, eps: 1e-5)
      y = h.dot(w)
      assert_equal [[:matmul, %i[layer_norm matmul]]], kernels(y, h), klass.name
      y.to_a # runs the fused kernel, which stores h too
      assert_equal x.layer_norm(g, b, eps: 1e-5).to_a, h.to_a, klass.name
      assert_equal h.dot(w).to_a, y.to_a, klass.name
    end
  end

  def test_explain_shows_the_merged_kernel
    x, g, b, w, bias = operands(Cumo::SFloat, 1, 64)
    text = Cumo.explain(x.layer_norm(g, b).dot(w) + bias).to_s
    assert_match(/\A.*1 kernel\n\s+\[0\] matmul \(layer_norm, matmul, add\)\n/, text)
    assert_match(/its operand's row op in its prologue/, text)
  end

  def test_row_ops_that_cannot_join_keep_their_kernel
    x, g, b, w, = operands(Cumo::SFloat, 2, 64)
    h = x.layer_norm(g, b)
    # Something else reads the rows too.
    assert_equal 3, kernels(h.dot(w), h * 2).size
    # Seventeen rows: cuBLAS computes the product.
    x17, = operands(Cumo::SFloat, 17, 64)
    assert_equal 2, kernels(x17.layer_norm(g, b).dot(w)).size
    # A row too long for a warp's registers (the row op's kernel takes a
    # block a row).
    xl, gl, bl, wl, = operands(Cumo::SFloat, 1, 4096)
    assert_equal 2, kernels(xl.layer_norm(gl, bl).dot(wl)).size
    # The rows are the product's second operand.
    assert_equal 2, kernels(w.transpose.dot(x.layer_norm(g, b).transpose)).size
    # A batch whose matrices are read along k (keys through swapaxes): the
    # kernel's blocks would each take columns of several products.
    scores = Cumo::SFloat.new(2, 3, 1, 64).rand
    keys = Cumo::SFloat.new(2, 3, 16, 64).rand
    ks = kernels(scores.softmax.matmul(keys.swapaxes(2, 3)))
    assert_includes ks, [:rowwise, [:softmax]]
    assert_includes ks.map(&:first), :matmul
    # Rows that several products of the batch share (broadcast along it).
    values = Cumo::SFloat.new(2, 3, 64, 16).rand
    shared = Cumo::SFloat.new(1, 3, 1, 64).rand
    Cumo.sync
    ks = kernels(shared.softmax.matmul(values))
    assert_includes ks, [:rowwise, [:softmax]]
    probs = shared.softmax
    probs.to_a
    assert_equal probs.matmul(values).to_a, shared.softmax.matmul(values).to_a
  end

  # Attention as a decode step writes it: each head's softmax of its scores
  # times its values, a batch of one-row products.
  def test_a_batch_of_softmax_rows_times_values
    CLASSES.each do |klass|
      [[1, 4, 1, 37], [2, 3, 2, 64]].each do |shape|
        scores = klass.new(*shape).rand(-3, 3)
        values = klass.new(*shape[0..1], shape[3], 16).rand(-1, 1)
        Cumo.sync
        what = "#{klass} #{shape}"
        fused = scores.softmax.matmul(values)
        assert_equal [[:matmul, %i[softmax matmul]]], kernels(fused), what
        probs = scores.softmax
        probs.to_a
        assert_equal probs.matmul(values).to_a, fused.to_a, what
      end
    end
  end
end
