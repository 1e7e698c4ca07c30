# frozen_string_literal: true

# Construction and host I/O: eye, linspace, logspace, logseq, rand_norm,
# new_zeros and friends, the class constants; the binary form (to_binary,
# from_binary, store_binary), Marshal and clone; map, each_with_index,
# map_with_index, Bit#where and where2; inspect_rows= and inspect_cols=.
# Expected values are Numo 0.9.2.1's (built from ruby-numo/numo-narray at
# 95c0525), most of them the examples of its documentation.
require "minitest/autorun"
require "cumo/narray"

class TestIO < Minitest::Test
  FLOAT_CLASSES = [Cumo::SFloat, Cumo::DFloat].freeze
  INT_CLASSES = [Cumo::Int8, Cumo::Int16, Cumo::Int32, Cumo::Int64,
                 Cumo::UInt8, Cumo::UInt16, Cumo::UInt32, Cumo::UInt64].freeze

  # ---- eye, linspace, logspace, logseq ------------------------------------------

  def test_eye
    assert_equal "Cumo::DFloat#shape=[3,3]\n[[1, 0, 0], \n [0, 1, 0], \n [0, 0, 1]]", Cumo::DFloat.eye(3).inspect
    assert_equal [[1, 0, 0], [0, 1, 0]], Cumo::Int32.eye(2, 3).to_a
    assert_equal [[0, 5, 0], [0, 0, 5]], Cumo::Int32.new(2, 3).eye(5, 1).to_a
    assert_equal [[0.0, 0.0], [2.5, 0.0], [0.0, 2.5]], Cumo::DFloat.new(3, 2).eye(2.5, -1).to_a
    assert_equal [[[1, 0], [0, 1]], [[1, 0], [0, 1]]], Cumo::UInt8.eye(2, 2, 2).to_a
    # the instance method writes into self and answers it, also through a view
    a = Cumo::DFloat.new(3, 4).seq
    assert_same a, a.eye
    b = Cumo::DFloat.zeros(3, 4)
    b[true, 1..3].eye(7)
    assert_equal [[0.0, 7.0, 0.0, 0.0], [0.0, 0.0, 7.0, 0.0], [0.0, 0.0, 0.0, 7.0]], b.to_a
    # NaN stays on the diagonal and nowhere else
    n = Cumo::DFloat.new(2, 2).eye(Float::NAN).to_a
    assert n[0][0].nan? && n[1][1].nan?
    assert_equal [0.0, 0.0], [n[0][1], n[1][0]]
  end

  def test_linspace
    assert_equal "Cumo::DFloat#shape=[7]\n[-5, -3.33333, -1.66667, 0, 1.66667, 3.33333, 5]",
                 Cumo::DFloat.linspace(-5, 5, 7).inspect
    assert_equal 100, Cumo::DFloat.linspace(0, 1).size
    assert_equal [0, 2, 5, 7, 10], Cumo::Int32.linspace(0, 10, 5).to_a
    assert_equal [1.0, 1.25, 1.5], Cumo::SFloat.linspace(1, 1.5, 3).to_a
  end

  def test_logspace_and_logseq
    assert_equal "Cumo::DFloat#shape=[5]\n[16, 8, 4, 2, 1]", Cumo::DFloat.logspace(4, 0, 5, 2).inspect
    assert_equal [1.0, 10.0, 100.0], Cumo::DFloat.logspace(0, 2, 3).to_a
    assert_equal 50, Cumo::DFloat.logspace(0, 1).size
    assert_equal [16.0, 8.0, 4.0, 2.0, 1.0], Cumo::DFloat.new(5).logseq(4, -1, 2).to_a
    assert_equal [1.0, 10.0, 100.0], Cumo::SFloat.new(3).logseq(0, 1).to_a
    assert_raises(NoMethodError) { Cumo::Int32.new(3).logseq(0, 1) }
    assert_raises(NoMethodError) { Cumo::Int32.logspace(0, 1) }
    # Complex classes: base ** (begin + i * step), in complex arithmetic.
    z = Cumo::DComplex.new(4).logseq(0, 1i).to_a
    4.times { |k| assert_in_delta 0, (z[k] - Complex.polar(1, k * Math.log(10))).abs, 1e-12 }
    assert_equal [2, 4], Cumo::SComplex.new(2).logseq(1, 1, 2).to_a.map(&:real)
  end

  # Numo's complex rand_norm: mu + sigma * (x + yi), x and y the two normals
  # of one Box-Muller pair.
  def test_complex_rand_norm
    Cumo::NArray.srand(12)
    z = Cumo::DComplex.new(100_000).rand_norm(5 + 5i, 2)
    m = z.mean.extract
    assert_in_delta 5, m.real, 0.03
    assert_in_delta 5, m.imag, 0.03
    assert_in_delta 2, Float(z.real.stddev), 0.03
    assert_in_delta 2, Float(z.imag.stddev), 0.03
    assert_in_delta 0, Float(((z.real - 5) * (z.imag - 5)).mean), 0.05 # independent parts
    Cumo::NArray.srand(3)
    a = Cumo::SComplex.new(5).rand_norm.to_a
    Cumo::NArray.srand(3)
    assert_equal a, Cumo::SComplex.new(5).rand_norm.to_a
  end

  # ---- rand_norm ----------------------------------------------------------------------

  def test_rand_norm_has_the_moments_asked_for
    FLOAT_CLASSES.each do |k|
      Cumo::NArray.srand(11)
      x = k.new(200_000).rand_norm
      assert_in_delta 0.0, Float(x.mean), 0.01, k.name
      assert_in_delta 1.0, Float(((x - x.mean)**2).mean), 0.02, k.name
      assert_operator Float(x.max), :>, 4.0
      assert_operator Float(x.min), :<, -4.0
      assert x.to_a.all?(&:finite?), "#{k.name}: a finite number everywhere"
      y = k.new(100_000).rand_norm(10, 0.5)
      assert_in_delta 10.0, Float(y.mean), 0.01
      assert_in_delta 0.25, Float(((y - y.mean)**2).mean), 0.01
    end
  end

  def test_rand_norm_is_reproducible_and_answers_self
    Cumo::NArray.srand(5)
    a = Cumo::DFloat.new(4, 5)
    assert_same a, a.rand_norm
    first = a.to_a
    Cumo::NArray.srand(5)
    assert_equal first, Cumo::DFloat.new(4, 5).rand_norm.to_a
    refute_equal first, Cumo::DFloat.new(4, 5).rand_norm.to_a
    assert_raises(NoMethodError) { Cumo::Int32.new(3).rand_norm }
  end

  # ---- arrays like self, constants ---------------------------------------------------

  def test_new_like
    a = Cumo::SFloat.new(2, 3).seq
    assert_equal [[0.0] * 3] * 2, a.new_zeros.to_a
    assert_equal [[1.0] * 3] * 2, a.new_ones.to_a
    assert_equal [[2.5] * 3] * 2, a.new_fill(2.5).to_a
    n = a.new_narray
    assert_instance_of Cumo::SFloat, n
    assert_equal "Cumo::SFloat#shape=[2,3](empty)", n.inspect
  end

  def test_constants
    assert_equal 1.7976931348623157e+308, Cumo::DFloat::MAX
    assert_equal 2.2250738585072014e-308, Cumo::DFloat::MIN
    assert_equal 2.2204460492503131e-16, Cumo::DFloat::EPSILON
    assert_equal 3.4028234663852886e+38, Cumo::SFloat::MAX
    assert_equal 1.1754943508222875e-38, Cumo::SFloat::MIN
    assert_equal 1.1920928955078125e-07, Cumo::SFloat::EPSILON
    assert_equal [-128, 127], [Cumo::Int8::MIN, Cumo::Int8::MAX]
    assert_equal [-2**63, 2**63 - 1], [Cumo::Int64::MIN, Cumo::Int64::MAX]
    assert_equal [0, 2**64 - 1], [Cumo::UInt64::MIN, Cumo::UInt64::MAX]
    assert_equal [0, 65_535], [Cumo::UInt16::MIN, Cumo::UInt16::MAX]
    refute Cumo::Int32.const_defined?(:EPSILON)
    refute Cumo::Bit.const_defined?(:MAX)
    assert_equal 0.125, Cumo::Bit::ELEMENT_BYTE_SIZE
    assert_equal 1, Cumo::Bit::ELEMENT_BIT_SIZE
    { Cumo::Int8 => 1, Cumo::UInt16 => 2, Cumo::Int32 => 4, Cumo::SFloat => 4,
      Cumo::DFloat => 8, Cumo::UInt64 => 8 }.each do |k, n|
      assert_equal n, k::ELEMENT_BYTE_SIZE, k.name
      assert_equal n * 8, k::ELEMENT_BIT_SIZE, k.name
    end
  end

  # ---- the binary form ------------------------------------------------------------------

  def test_to_binary_is_the_elements_in_host_order
    assert_equal [1.0, 2.5].pack("d*"), Cumo::DFloat[1, 2.5].to_binary
    assert_equal [1.5, -2.0].pack("f*"), Cumo::SFloat[1.5, -2].to_binary
    assert_equal [1, -2, 3].pack("s*"), Cumo::Int16[1, -2, 3].to_binary
    assert_equal [255, 0].pack("C*"), Cumo::UInt8[255, 0].to_binary
    assert_equal Cumo::Int32[[1, 2], [3, 4]].to_binary, Cumo::Int32[[1, 2], [3, 4]].to_string
    # a strided view answers its own elements, densely
    v = Cumo::Int32.new(3, 4).seq[(2..0).step(-1), 1..2]
    assert_equal [9, 10, 5, 6, 1, 2].pack("l*"), v.to_binary
    assert_equal Encoding::ASCII_8BIT, v.to_binary.encoding
  end

  def test_from_binary
    s = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0].pack("d*")
    a = Cumo::DFloat.from_binary(s)
    assert_equal "Cumo::DFloat#shape=[6]\n[1, 2, 3, 4, 5, 6]", a.inspect
    assert_equal [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], Cumo::DFloat.from_binary(s, [2, 3]).to_a
    assert_equal [1.0, 2.0], Cumo::DFloat.from_binary(s, 2).to_a, "a longer string is fine"
    assert_equal [1, 2], Cumo::Int16.from_string([1, 2, 3].pack("s*")[0, 5]).to_a, "whole elements only"
    assert_equal [[1, 2], [3, 4]], Cumo::Int32.from_binary(Cumo::Int32[[1, 2], [3, 4]].to_binary, [2, 2]).to_a
    (FLOAT_CLASSES + INT_CLASSES).each do |k|
      x = k.new(3, 5).seq(2, 3)
      assert_equal x.to_a, k.from_binary(x.to_binary, [3, 5]).to_a, k.name
    end
  end

  def test_bit_packs_eight_to_a_byte
    b = Cumo::Bit[1, 0, 1, 1, 0, 0, 0, 0, 1]
    assert_equal [13, 1], b.to_binary.bytes
    assert_equal 2, b.byte_size
    assert_equal [1, 0, 1, 1, 0, 0, 0, 0, 1], Cumo::Bit.from_binary("\x0d\x01".b, 9).to_a
    assert_equal [1, 0, 1, 1, 0, 0, 0, 0], Cumo::Bit.from_binary("\x0d".b).to_a
    assert_raises(ArgumentError) { Cumo::Bit.from_binary("\x0d".b, 9) }
  end

  def test_store_binary
    a = Cumo::DFloat.zeros(2, 2)
    assert_equal 32, a.store_binary([1.0, 2.0, 3.0, 4.0].pack("d*"))
    assert_equal [[1.0, 2.0], [3.0, 4.0]], a.to_a
    assert_equal 32, a.store_binary([9.0, 8.0, 7.0, 6.0, 5.0].pack("d*"), 8)
    assert_equal [[8.0, 7.0], [6.0, 5.0]], a.to_a
    # into a view: the array it came from sees the write
    a[1, true].store_binary([-1.0, -2.0].pack("d*"))
    assert_equal [[8.0, 7.0], [-1.0, -2.0]], a.to_a
  end

  def test_bad_binary_input
    s = [1.0, 2.0].pack("d*")
    assert_fails_at_call(ArgumentError, "from_binary") { Cumo::DFloat.from_binary(s, [3]) }
    assert_fails_at_call(ArgumentError, "from_binary") { Cumo::DFloat.from_binary(s, [2, 2]) }
    assert_fails_at_call(ArgumentError, "from_binary") { Cumo::DFloat.from_binary("abc") }
    assert_fails_at_call(ArgumentError, "from_binary") { Cumo::DFloat.from_binary("") }
    assert_fails_at_call(ArgumentError, "from_binary") { Cumo::DFloat.from_binary(s, "2") }
    assert_fails_at_call(TypeError, "from_binary") { Cumo::DFloat.from_binary(12) }
    assert_fails_at_call(TypeError, "from_binary") { Cumo::NArray.from_binary(s) }
    a = Cumo::DFloat.zeros(3)
    assert_fails_at_call(ArgumentError, "store_binary") { a.store_binary(s) }
    assert_fails_at_call(ArgumentError, "store_binary") { a.store_binary(s * 2, 17) }
    assert_fails_at_call(ArgumentError, "store_binary") { a.store_binary(s, 20) }
    assert_equal [0.0, 0.0, 0.0], a.to_a
  end

  # ---- Marshal and clone -------------------------------------------------------------

  def test_marshal_dump_is_numos_form
    a = Cumo::Int32[[1, 2, 3], [4, 5, 6]]
    assert_equal [1, [2, 3], 0, [1, 2, 3, 4, 5, 6].pack("l*")], a.marshal_dump
  end

  def test_marshal_round_trip
    arrays = [Cumo::DFloat.new(3, 4).seq(0.5), Cumo::SFloat[1.5, -2], Cumo::UInt64[2**64 - 1],
              Cumo::Int8.new(2, 3, 2).seq(-5), Cumo::Bit[1, 0, 1, 1, 0, 0, 0, 0, 1],
              Cumo::DFloat.new(4, 5).seq[1..2, (4..0).step(-2)], Cumo::DFloat.cast(3.5),
              Cumo::Int32.zeros(0, 3)]
    arrays.each do |a|
      b = Marshal.load(Marshal.dump(a))
      assert_instance_of a.class, b
      assert_equal a.shape, b.shape
      assert_equal a.to_a, b.to_a
      refute b.view?
    end
    nested = Marshal.load(Marshal.dump({ w: Cumo::DFloat[1, 2], list: [Cumo::Int16[3]] }))
    assert_equal [1.0, 2.0], nested[:w].to_a
    assert_equal [3], nested[:list][0].to_a
  end

  def test_marshal_load_checks_its_data
    a = Cumo::DFloat.allocate
    assert_fails_at_call(ArgumentError, "marshal_load") { a.marshal_load(3) }
    assert_fails_at_call(ArgumentError, "marshal_load") { a.marshal_load([1, [2]]) }
    assert_fails_at_call(ArgumentError, "marshal_load") { a.marshal_load([2, [1], 0, "\0" * 8]) }
    assert_fails_at_call(ArgumentError, "marshal_load") { a.marshal_load([1, [2], 0, "\0" * 8]) }
    assert_fails_at_call(TypeError, "to_a") { a.to_a }
    a.marshal_load([1, [1], 0, [4.5].pack("d")])
    assert_equal [4.5], a.to_a
    assert_fails_at_call(TypeError, "marshal_load") { a.marshal_load([1, [1], 0, [4.5].pack("d")]) }
  end

  def test_clone_copies
    a = Cumo::DFloat.new(2, 2).seq
    c = a.clone
    c[0, 0] = 9
    assert_equal [[0.0, 1.0], [2.0, 3.0]], a.to_a
    assert_equal [[9.0, 1.0], [2.0, 3.0]], c.to_a
    assert_equal [[1.0], [3.0]], a[true, 1..1].clone.to_a
  end

  # ---- block methods -------------------------------------------------------------------

  def test_map
    m = Cumo::Int32[1, 2].map { |x| x * 1.5 }
    assert_instance_of Cumo::Int32, m
    assert_equal [1, 3], m.to_a
    assert_equal [[0.0, 1.0], [4.0, 9.0]], Cumo::DFloat.new(2, 2).seq.map { |x| x * x }.to_a
    assert_equal [[3.0], [1.0]], Cumo::DFloat.new(2, 2).seq[(1..0).step(-1), 1..1].map(&:to_f).to_a
    assert_raises(LocalJumpError) { Cumo::DFloat[1].map }
    assert_raises(NoMethodError) { Cumo::Bit[1].map { |x| x } }
    assert_raises(TypeError) { Cumo::DFloat[1].map { |_| "x" } }
  end

  def test_each_with_index
    seen = []
    a = Cumo::Int32.new(2, 3).seq
    assert_same a, a.each_with_index { |x, i, j| seen << [x, i, j] }
    assert_equal [[0, 0, 0], [1, 0, 1], [2, 0, 2], [3, 1, 0], [4, 1, 1], [5, 1, 2]], seen
    seen = []
    Cumo::Int32.cast(7).each_with_index { |*x| seen << x }
    assert_equal [[[7, 0]]], seen, "Numo yields [x, 0] for a 0-dim array"
    assert_raises(LocalJumpError) { a.each_with_index }
  end

  def test_map_with_index
    a = Cumo::Int32.new(2, 3).seq
    assert_equal [[0, 101, 202], [13, 114, 215]], a.map_with_index { |x, i, j| x + 10 * i + 100 * j }.to_a
    assert_equal [[0.0, 1.0], [1.0, 2.0]], Cumo::DFloat.zeros(2, 2).map_with_index { |_, i, j| i + j }.to_a
  end

  def test_where
    b = Cumo::Int32[1, 2, 0, 3] > 1
    w = b.where
    assert_instance_of Cumo::Int32, w
    assert_equal [1, 3], w.to_a
    t, f = b.where2
    assert_equal [[1, 3], [0, 2]], [t.to_a, f.to_a]
    assert_equal [0, 1], (Cumo::DFloat.new(2, 2).seq[true, (1..0).step(-1)] < 2).where.to_a
    assert_equal [], Cumo::Bit.zeros(3).where.to_a
    assert_raises(NoMethodError) { Cumo::Int32[1].where }
  end

  # ---- inspect limits ------------------------------------------------------------------

  def test_inspect_rows_and_cols
    assert_equal 20, Cumo::NArray.inspect_rows
    assert_equal 80, Cumo::NArray.inspect_cols
    Cumo::NArray.inspect_cols = 20
    assert_equal "Cumo::DFloat#shape=[100]\n[0, 1, 2, 3, 4, ...]", Cumo::DFloat.new(100).seq.inspect
    Cumo::NArray.inspect_rows = 2
    assert_equal "Cumo::Int32#shape=[4,2]\n[[0, 1], \n [2, 3], \n ...", Cumo::Int32.new(4, 2).seq.inspect
    Cumo::NArray.inspect_cols = nil
    Cumo::NArray.inspect_rows = nil
    assert_nil Cumo::NArray.inspect_cols
    assert_nil Cumo::NArray.inspect_rows
    text = Cumo::DFloat.new(30, 10).seq.inspect
    assert_equal 31, text.lines.size, "no row elided"
    assert text.end_with?("299]]"), "no column elided"
    # A limit is nil or an Integer, checked with the setter's name.
    assert_fails_at_call(TypeError, "inspect_rows=") { Cumo::NArray.inspect_rows = true }
    assert_fails_at_call(TypeError, "inspect_cols=") { Cumo::NArray.inspect_cols = "8" }
    assert_fails_at_call(RangeError, "inspect_rows=") { Cumo::NArray.inspect_rows = 2**70 }
    assert_fails_at_call(RangeError, "inspect_cols=") { Cumo::NArray.inspect_cols = -Float::INFINITY }
    Cumo::NArray.inspect_rows = 2**40 # past int: no limit
    assert_equal 2**31 - 1, Cumo::NArray.inspect_rows
  ensure
    Cumo::NArray.inspect_cols = 80
    Cumo::NArray.inspect_rows = 20
  end

  private

  def assert_fails_at_call(klass, op)
    e = assert_raises(klass) { yield }
    assert_includes e.message, "[#{op}]", "#{klass} from #{op} should name it"
  end
end
