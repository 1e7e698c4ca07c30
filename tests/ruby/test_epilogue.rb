# frozen_string_literal: true

# Epilogue fusion (fusion/epilogue.h): the elementwise consumers of a small
# matrix product (1 to 16 rows, a real float class, no batch) run inside the
# product's kernel, as GPT-2's decode step writes them: `h.dot(w) + b`,
# `gelu_tanh(h.dot(w) + b)`, `x + (h.dot(w) + b)`.
#
# Fusion computes what was written: the product rounds to its class, then
# each consumer runs in the user's classes, exactly as the separate kernel
# did. So the fused answer equals, bit for bit, the same expression with the
# product read back first (the read forces the product, and its consumers
# run in a kernel of their own), on the CPU executor and on the CUDA one
# (tests/meson.build runs this file on both: the generated matrix-vector
# kernel sums in the same order fused or not).
require "minitest/autorun"
require "cumo/narray"

class TestEpilogue < Minitest::Test
  N = Cumo::NMath
  CLASSES = [Cumo::SFloat, Cumo::DFloat, Cumo::BFloat, Cumo::HFloat].freeze
  K = 40
  COLS = 24

  FORMS = {
    "bias" => [->(p, b, _x) { p + b }, %i[matmul add]],
    "gelu_tanh of the bias add" => [->(p, b, _x) { N.gelu_tanh(p + b) }, %i[matmul add gelu_tanh]],
    "residual" => [->(p, b, x) { x + (p + b) }, %i[matmul add add]],
  }.freeze

  def setup
    Cumo::NArray.srand(5)
  end

  # h: `rows` rows of K (a vector when rows is nil); w: K x COLS, stored
  # (COLS, K) and read transposed when `transposed` (a weight used as
  # x @ w.T), the other layout of the generated kernel; a bias along the
  # last axis; a residual of the product's shape. All on the device.
  def operands(klass, rows, transposed: false)
    h = klass.new(*[rows, K].compact).rand(-1, 1)
    w = transposed ? klass.new(COLS, K).rand(-0.5, 0.5).transpose : klass.new(K, COLS).rand(-0.5, 0.5)
    b = klass.new(COLS).rand(-1, 1)
    x = klass.new(*[rows, COLS].compact).rand(-1, 1)
    Cumo.sync
    [h, w, b, x]
  end

  # The product forced first: its consumers run in a kernel of their own.
  def unfused(h, w, op = :dot)
    p = h.public_send(op, w)
    p.to_a
    yield p
  end

  def kernels(*arrays)
    Cumo.explain(*arrays).kernels.map { |k| [k[:kind], k[:ops]] }
  end

  def test_consumers_run_in_the_product_kernel_with_the_unfused_answer
    CLASSES.each do |klass|
      [1, 8, nil].each do |rows|
        [false, true].each do |transposed|
          h, w, b, x = operands(klass, rows, transposed: transposed)
          FORMS.each do |name, (form, ops)|
            what = "#{klass} #{name}, #{rows || 'vector'} rows#{transposed ? ', w transposed' : ''}"
            fused = form.call(h.dot(w), b, x)
            assert_equal [[:matmul, ops]], kernels(fused), what
            want = unfused(h, w) { |p| form.call(p, b, x) }
            assert_instance_of klass, fused, what
            assert_equal want.to_a, fused.to_a, what
          end
        end
      end
    end
  end

  def test_explain_shows_the_merged_kernel
    h, w, b, = operands(Cumo::SFloat, 1)
    text = Cumo.explain(N.gelu_tanh(h.dot(w) + b)).to_s
    assert_match(/\A.*1 kernel\n\s+\[0\] matmul \(matmul, add, gelu_tanh\)\n/, text)
  end

  # The raw product kept in a Ruby variable still gets its value: the same
  # kernel stores it, so reading it afterwards launches nothing.
  def test_a_held_product_is_stored_by_the_same_kernel
    CLASSES.each do |klass|
      h, w, b, x = operands(klass, 8)
      p = h.dot(w)
      y = x + N.gelu_tanh(p + b)
      assert_equal [[:matmul, %i[matmul add gelu_tanh add]]], kernels(y), klass.name
      Cumo.reset_stats
      got = y.to_a
      raw = p.to_a
      assert_equal 1, Cumo.stats[:kernels_launched], klass.name
      want_raw = unfused(h, w, &:itself).to_a
      assert_equal want_raw, raw, klass.name
      assert_equal unfused(h, w) { |q| x + N.gelu_tanh(q + b) }.to_a, got, klass.name
    end
  end

  # An operand still pending is computed where the epilogue reads it (and
  # stored by a kernel of its own, since Ruby holds it); a bias along the
  # first axis broadcasts like any other.
  def test_pending_and_column_operands
    h, w, b, x = operands(Cumo::DFloat, 6)
    col = Cumo::DFloat.new(6, 1).rand(-1, 1)
    Cumo.sync
    scaled = b * 2.5
    y = (h.dot(w) + scaled) * col - x
    assert_equal [[:elementwise, %i[mul]], [:matmul, %i[mul matmul add mul sub]]], kernels(y)
    assert_equal unfused(h, w) { |p| (p + scaled) * col - x }.to_a, y.to_a
  end

  # A consumer of another shape (the product broadcast against a larger
  # array), or one that reads a fold of the product, cannot run where the
  # product's elements are written: it stays a kernel of its own, and the
  # answers hold.
  def test_consumers_that_cannot_join
    h, w, b, = operands(Cumo::DFloat, 4)
    big = Cumo::DFloat.new(3, 4, COLS).rand(-1, 1)
    Cumo.sync
    wide = (h.dot(w) + b) * big
    assert_equal [3, 4, COLS], wide.shape
    assert_includes kernels(wide).map(&:first), :elementwise
    assert_equal unfused(h, w) { |p| (p + b) * big }.to_a, wide.to_a

    centred = h.dot(w).then { |p| p - p.mean }
    assert_includes kernels(centred).map(&:first), :reduction
    assert_equal unfused(h, w) { |p| p - p.mean }.to_a, centred.to_a
  end

  # A loop's Ruby Floats are the epilogue's parameters: the cached plan
  # runs again with each flush's value.
  def test_a_cached_plan_takes_each_flush_scalar
    h, w, b, = operands(Cumo::SFloat, 2)
    Cumo.reset_stats
    [0.5, -1.25, 3.0, 7.5].each do |s|
      y = h.dot(w) * s + b
      got = y.to_a
      assert_equal unfused(h, w) { |p| p * s + b }.to_a, got, "scale #{s}"
    end
    assert_operator Cumo.stats[:plan_cache_hits], :>=, 3
  end

  # gemm's alpha scales the product before it rounds, and beta * c is an
  # epilogue like any other consumer.
  def test_gemm_with_c
    h, w, b, = operands(Cumo::SFloat, 3)
    c = Cumo::SFloat.new(3, COLS).rand(-1, 1)
    Cumo.sync
    y = h.gemm(w, alpha: 0.5, beta: 2, c: c) + b
    assert_equal 1, Cumo.explain(y).kernels.size
    want = h.gemm(w, alpha: 0.5)
    want.to_a
    assert_equal (want + c * 2 + b).to_a, y.to_a
  end

  # A batch of small products takes its epilogue too (decode's scores,
  # scaled and masked).
  def test_a_batch_of_small_products_takes_its_epilogue
    klass = Cumo::SFloat
    q = klass.new(2, 3, 1, K).rand
    keys = klass.new(2, 3, COLS, K).rand
    mask = klass.new(COLS).rand
    Cumo.sync
    y = q.matmul(keys.swapaxes(2, 3)) * 0.125 + mask
    assert_equal [[:matmul, %i[matmul mul add]]], kernels(y)
    assert_equal unfused(q, keys.swapaxes(2, 3), :matmul) { |p| p * 0.125 + mask }.to_a, y.to_a
  end

  # A decode step's cache writes: views of the product's bias add written
  # into settled caches at a device position. The product's kernel writes
  # them where it computes those elements (fusion/epilogue_writes.h), with
  # the answer of the product read back and written through a host index.
  # (The product's row is computed in the same flush, as a decode step's
  # is, so that the table's kernel runs before the product's: a product of
  # settled arrays runs in the first kernels, beside the table's, and its
  # write stays an index kernel.)
  def test_cache_writes_of_the_product_run_in_its_kernel
    CLASSES.each do |klass|
      settled, w, b, = operands(klass, 1)
      kc = klass.new(1, 2, 6, 4).rand
      vc = klass.new(1, 2, 6, 4).rand
      pos = Cumo::Int32[3]
      want_k = kc.dup
      want_v = vc.dup
      Cumo.sync
      unfused(settled * 0.5, w) do |p|
        want = (p + b).reshape(1, 3, 2, 1, 4)
        want_k[true, true, 3..3, true] = want[true, 1, true, true, true]
        want_v[true, true, 3..3, true] = want[true, 2, true, true, true]
      end
      Cumo.sync
      qkv = ((settled * 0.5).dot(w) + b).reshape(1, 3, 2, 1, 4)
      kc[true, true, pos, true] = qkv[true, 1, true, true, true]
      vc[true, true, pos, true] = qkv[true, 2, true, true, true]
      plan = kernels(kc, vc)
      assert_equal 1, plan.count { |kind, ops| kind == :matmul && ops.count(:index_write) == 2 },
                   "#{klass}: #{plan}"
      refute plan.any? { |kind, _| kind == :index }, "#{klass}: #{plan}"
      assert_equal want_k.to_a, kc.to_a, klass.name
      assert_equal want_v.to_a, vc.to_a, klass.name
    end
  end

  # Such a write at a position out of range writes nothing and raises
  # IndexError at the next read, naming []= and the line, as the write's
  # own kernel does.
  def test_a_cache_write_out_of_range_raises_at_the_next_read
    settled, w, b, = operands(Cumo::SFloat, 1)
    kc = Cumo::SFloat.new(1, 2, 6, 4).rand
    before = kc.to_a
    qkv = ((settled * 0.5).dot(w) + b).reshape(1, 3, 2, 1, 4)
    kc[true, true, Cumo::Int32[6], true] = qkv[true, 1, true, true, true]; line = __LINE__
    assert_equal 1, kernels(kc).count { |kind, ops| kind == :matmul && ops.include?(:index_write) }
    e = assert_raises(IndexError) { Cumo.sync }
    assert_match(/\A\[\[\]=\] index out of range/, e.message)
    assert_includes e.message, "#{File.basename(__FILE__)}:#{line}"
    assert_equal before, kc.to_a
  end

  # Positions that may repeat (a device index of two elements) need the
  # search for the last write that the index kernel does: such a write
  # stays a kernel of its own, and the last write of a position wins.
  def test_a_write_at_positions_that_may_repeat_keeps_its_kernel
    settled, w, b, = operands(Cumo::DFloat, 1)
    kc = Cumo::DFloat.new(2, 6, 4).rand
    want = kc.dup
    Cumo.sync
    unfused(settled * 0.5, w) do |p|
      want[true, 3..3, true] = (p + b).reshape(2, 3, 4)[true, 1..1, true]
    end
    Cumo.sync
    qkv = ((settled * 0.5).dot(w) + b).reshape(2, 3, 4)
    kc[true, Cumo::Int32[3, 3], true] = qkv[true, 0..1, true]
    assert_includes kernels(kc).map(&:first), :index
    assert_equal want.to_a, kc.to_a
  end

  # Products cuBLAS computes (more than 16 rows, alone or in a batch) keep
  # their consumers in a kernel of their own, but for the bias or residual
  # add cuBLASLt computes exactly (SFloat and DFloat:
  # test_library_epilogue.rb).
  def test_library_products_keep_a_separate_consumer
    klass = Cumo::BFloat
    b = klass.new(COLS).rand
    [klass.new(17, K).rand, klass.new(2, 17, K).rand].each do |h|
      w = klass.new(K, COLS).rand
      Cumo.sync
      y = h.dot(w) + b
      assert_equal [[:matmul, %i[matmul]], [:elementwise, %i[add]]], kernels(y), h.shape.inspect
      assert_equal unfused(h, w) { |p| p + b }.to_a, y.to_a
    end
  end
end
