# frozen_string_literal: true

# Numo's math: Cumo::NMath and the per-class modules SFloat::Math and
# DFloat::Math (the spec's "Ruby Floats In NMath Promote To Double"), and
# the elementwise methods beside arithmetic: divmod, bitwise operators,
# clip, rounding, sign, square, reciprocal, the float predicates, copysign,
# modf, and the class methods maximum and minimum. Expected values are
# Numo's (its source: gen/spec.rb, numo/types/*_macro.h, gen/tmpl/*.c) and
# the spec's where it prints them. Transcendentals are compared within a few
# ulps, since this file runs on the CUDA executor too, whose math library
# differs from glibc in the last bit.
require "minitest/autorun"
require "cumo/narray"

class TestMath < Minitest::Test
  INF = Float::INFINITY
  NAN = Float::NAN

  def float32(x) = [x].pack("f").unpack1("f")

  # Relative closeness in the precision of `klass` (a few ulps).
  def assert_close(want, got, klass, msg = nil)
    want = Array(want).flatten
    got = Array(got).flatten
    assert_equal want.size, got.size, msg
    tol = klass == Cumo::SFloat ? 1e-6 : 1e-14
    want.zip(got).each_with_index do |(w, g), i|
      label = "#{msg} [#{i}]: want #{w}, got #{g}"
      if w.nan?
        assert g.nan?, label
      elsif w.infinite?
        assert_equal w, g, label
      else
        assert_operator (w - g).abs, :<=, tol * [w.abs, 1e-10].max, label
      end
    end
  end

  # ---- NMath: every function, in both float classes -------------------------

  UNARY = {
    sqrt: ->(x) { Math.sqrt(x) }, cbrt: ->(x) { Math.cbrt(x) },
    exp: ->(x) { Math.exp(x) }, exp2: ->(x) { 2.0**x }, exp10: ->(x) { 10.0**x },
    expm1: ->(x) { Math.exp(x) - 1 }, log: ->(x) { Math.log(x) },
    log2: ->(x) { Math.log2(x) }, log10: ->(x) { Math.log10(x) },
    log1p: ->(x) { Math.log(1 + x) }, sin: ->(x) { Math.sin(x) },
    cos: ->(x) { Math.cos(x) }, tan: ->(x) { Math.tan(x) }, asin: ->(x) { Math.asin(x) },
    acos: ->(x) { Math.acos(x) }, atan: ->(x) { Math.atan(x) },
    sinh: ->(x) { Math.sinh(x) }, cosh: ->(x) { Math.cosh(x) },
    tanh: ->(x) { Math.tanh(x) }, asinh: ->(x) { Math.asinh(x) },
    acosh: ->(x) { Math.acosh(x) }, atanh: ->(x) { Math.atanh(x) },
    erf: ->(x) { Math.erf(x) }, erfc: ->(x) { Math.erfc(x) },
    sinc: ->(x) { x.zero? ? 1.0 : Math.sin(x) / x }
  }.freeze

  # Inputs inside each function's domain, away from 0 where a relative
  # comparison of expm1 and log1p against exp - 1 and log(1 + x) would fail.
  def domain(name)
    case name
    when :asin, :acos, :atanh then [-0.75, -0.25, 0.5, 0.9]
    when :acosh then [1.0, 1.5, 3.0, 10.0]
    when :log1p then [-0.75, -0.25, 0.5, 3.0]
    when :sqrt, :log, :log2, :log10, :cbrt then [0.25, 1.0, 2.0, 1000.0]
    else [-2.5, -0.75, 0.5, 1.0, 3.0]
    end
  end

  def test_unary_functions_of_both_float_classes
    UNARY.each do |name, ref|
      xs = domain(name)
      [Cumo::SFloat, Cumo::DFloat].each do |klass|
        a = klass.cast(xs)
        inputs = klass == Cumo::SFloat ? xs.map { |x| float32(x) } : xs
        want = inputs.map { |x| ref.call(x) }
        [Cumo::NMath.send(name, a), klass::Math.send(name, a)].each do |r|
          assert_instance_of klass, r, "#{klass}::Math.#{name}"
          assert_close want, r.to_a, klass, "#{klass} #{name}"
        end
      end
    end
  end

  def test_edges_of_unary_functions
    a = Cumo::DFloat[0.0, -1.0, INF, -INF]
    assert_equal [0.0, NAN, INF, NAN].map(&:to_s), Cumo::NMath.sqrt(a).to_a.map(&:to_s)
    assert_equal [-INF, NAN, INF, NAN].map(&:to_s), Cumo::NMath.log(a).to_a.map(&:to_s)
    assert_equal [1.0, 0.0], Cumo::NMath.sinc(Cumo::DFloat[0, Math::PI]).to_a.map { |x| x.round(15) }
    assert_equal [1.0], Cumo::NMath.sinc(Cumo::SFloat[0]).to_a
    # sqrt is correctly rounded in single precision (sqrtf), not narrowed
    # from double.
    assert_equal [float32(Math.sqrt(2))], Cumo::SFloat::Math.sqrt(Cumo::SFloat[2]).to_a
  end

  def test_the_spec_quotient_that_overflows
    # The spec's Sigmoid section: written out, the quotient answers zero.
    assert_equal 0.0, (1.0 / (1.0 + Cumo::NMath.exp(Cumo::SFloat[100.0]))).to_a.first
    assert_equal [INF], Cumo::NMath.exp(Cumo::SFloat[100.0]).to_a
  end

  def test_binary_functions
    y = [1.0, -2.0, 0.5, -0.25]
    x = [2.0, 3.0, -1.5, -4.0]
    [Cumo::SFloat, Cumo::DFloat].each do |klass|
      a = klass.cast(y)
      b = klass.cast(x)
      ys = klass == Cumo::SFloat ? y.map { |v| float32(v) } : y
      xs = klass == Cumo::SFloat ? x.map { |v| float32(v) } : x
      assert_close ys.zip(xs).map { |u, v| Math.atan2(u, v) }, Cumo::NMath.atan2(a, b).to_a, klass, "atan2"
      assert_close ys.zip(xs).map { |u, v| Math.hypot(u, v) }, Cumo::NMath.hypot(a, b).to_a, klass, "hypot"
      assert_instance_of klass, Cumo::NMath.atan2(a, b)
    end
    assert_equal [4.0, -12.0, 0.375], Cumo::NMath.ldexp(Cumo::DFloat[1, -3, 1.5], Cumo::DFloat[2, 2, -2]).to_a
    assert_equal [Math.ldexp(1.0, 1023) * 2], Cumo::NMath.ldexp(Cumo::DFloat[1], 1024).to_a
    assert_equal [0.0], Cumo::NMath.ldexp(Cumo::DFloat[1], -1100).to_a
  end

  def test_ldexp_takes_its_exponent_in_the_class
    # Numo casts both arguments to the class, so a fraction is truncated.
    assert_equal [8.0], Cumo::DFloat::Math.ldexp(Cumo::DFloat[1], 3.9).to_a
    assert_equal [0.25], Cumo::DFloat::Math.ldexp(Cumo::DFloat[1], -2.5).to_a
    assert Cumo::DFloat::Math.ldexp(Cumo::DFloat[1], NAN).to_a.first.nan?
  end

  def test_frexp_answers_mantissa_and_exponent
    values = [8.0, 0.3, 0.0, -5.0, 1e-310, 3.5e300]
    m, e = Cumo::NMath.frexp(Cumo::DFloat.cast(values))
    assert_instance_of Cumo::DFloat, m
    assert_instance_of Cumo::Int32, e
    want = values.map { |v| Math.frexp(v) }
    assert_equal want.map(&:first), m.to_a
    assert_equal want.map(&:last), e.to_a
    m, e = Cumo::SFloat::Math.frexp(Cumo::SFloat[6.0, -0.75])
    assert_instance_of Cumo::SFloat, m
    assert_equal [[0.75, 3], [-0.75, 0]], m.to_a.zip(e.to_a)
    m, e = Cumo::NMath.frexp(Cumo::DFloat[INF, -INF, NAN])
    assert_equal [INF, -INF], m.to_a[0, 2]
    assert m.to_a[2].nan?
    assert_equal [0, 0, 0], e.to_a
    m, e = Cumo::NMath.frexp(Cumo::Int32[8])
    assert_instance_of Cumo::DFloat, m
    assert_equal [[0.5, 4]], m.to_a.zip(e.to_a)
  end

  # ---- NMath's choice of class --------------------------------------------------

  def test_the_spec_examples_of_promotion
    a = Cumo::SFloat[1, 2, 3]
    b = Cumo::SFloat[3, 2, 1]
    assert_instance_of Cumo::DFloat, Cumo::NMath.atan2(a, 2.0)
    assert_instance_of Cumo::SFloat, Cumo::NMath.atan2(a, b)
    assert_instance_of Cumo::SFloat, a + 2.0
    two = Cumo::SFloat[2.0][0] # a 0-dimensional Cumo::SFloat
    assert_equal 0, two.ndim
    assert_instance_of Cumo::SFloat, Cumo::NMath.atan2(a, two)
    assert_instance_of Cumo::SFloat, Cumo::SFloat::Math.atan2(a, 2.0)
    # The methods a Float reaches as a second argument.
    assert_instance_of Cumo::DFloat, Cumo::NMath.hypot(a, 2.0)
    assert_instance_of Cumo::DFloat, Cumo::NMath.ldexp(a, 2.0)
    assert_instance_of Cumo::SFloat, Cumo::NMath.ldexp(a, 2)
    assert_equal [4.0, 8.0, 12.0], Cumo::NMath.ldexp(a, 2).to_a
  end

  def test_the_promoted_call_computes_in_double
    a = Cumo::SFloat[0.1]
    want = Math.atan2(float32(0.1), 2.0)
    assert_close [want], Cumo::NMath.atan2(a, 2.0).to_a, Cumo::DFloat
    assert_close [float32(want)], Cumo::NMath.atan2(a, Cumo::SFloat[2.0][0]).to_a, Cumo::SFloat
  end

  def test_integer_arrays_become_double
    [Cumo::Int8, Cumo::Int16, Cumo::Int32, Cumo::Int64,
     Cumo::UInt8, Cumo::UInt16, Cumo::UInt32, Cumo::UInt64].each do |klass|
      r = Cumo::NMath.sqrt(klass[1, 4, 9])
      assert_instance_of Cumo::DFloat, r, klass.name
      assert_equal [1.0, 2.0, 3.0], r.to_a
    end
    # An integer array beside a float array takes the float's class.
    assert_instance_of Cumo::SFloat, Cumo::NMath.hypot(Cumo::SFloat[3], Cumo::Int32[4])
    assert_instance_of Cumo::SFloat, Cumo::NMath.atan2(Cumo::Int64[1], Cumo::SFloat[1])
    assert_instance_of Cumo::DFloat, Cumo::NMath.hypot(Cumo::Int32[3], Cumo::Int32[4])
    assert_instance_of Cumo::DFloat, Cumo::NMath.hypot(Cumo::SFloat[3], Cumo::DFloat[4])
    # A Ruby Integer is an integer class: it keeps SFloat.
    assert_instance_of Cumo::SFloat, Cumo::NMath.atan2(Cumo::SFloat[1], 2)
  end

  def test_numbers_and_ruby_arrays
    r = Cumo::NMath.sqrt(4.0)
    assert_instance_of Cumo::DFloat, r
    assert_equal 0, r.ndim
    assert_equal 2.0, r.extract_cpu
    assert_instance_of Cumo::DFloat, Cumo::NMath.sqrt(4)
    assert_equal [1.0, 2.0], Cumo::NMath.sqrt([1, 4]).to_a
    assert_instance_of Cumo::DFloat, Cumo::NMath.sqrt([1, 4])
    s = Cumo::SFloat::Math.sqrt([1, 4])
    assert_instance_of Cumo::SFloat, s
    assert_equal [1.0, 2.0], s.to_a
    assert_instance_of Cumo::SFloat, Cumo::SFloat::Math.sqrt(Cumo::Int32[4])
    assert_instance_of Cumo::DFloat, Cumo::DFloat::Math.sin(Cumo::SFloat[1])
    assert_equal [[1.0, 2.0], [3.0, 4.0]],
                 Cumo::NMath.hypot(Cumo::DFloat[[0], [0]], Cumo::DFloat[[1, 2], [3, 4]]).to_a
  end

  def test_nmath_errors
    e = assert_raises(TypeError) { Cumo::NMath.sqrt(Cumo::Bit[1, 0]) }
    assert_includes e.message, "[sqrt]"
    assert_raises(TypeError) { Cumo::NMath.sin("1") }
    assert_raises(ArgumentError) { Cumo::NMath.atan2(Cumo::DFloat[1]) }
    assert_raises(ArgumentError) { Cumo::SFloat::Math.sqrt(Cumo::SFloat[1], 2) }
    e = assert_raises(Cumo::NArray::ShapeError) { Cumo::NMath.atan2(Cumo::DFloat[1, 2], Cumo::DFloat[1, 2, 3]) }
    assert_includes e.message, "[atan2]"
    refute Cumo::Int32.const_defined?(:Math, false), "Numo's integer classes have no Math"
    refute Cumo::Bit.const_defined?(:Math, false)
  end

  # ---- rounding ----------------------------------------------------------------

  def test_round_takes_ties_away_from_zero_and_rint_to_even
    # The spec's table (quantize_symmetric and numpy's rule).
    x = Cumo::SFloat[-2.5, -1.5, -0.5, 0.5, 1.5, 2.5]
    assert_equal [-3, -2, -1, 1, 2, 3], x.round.to_a.map(&:to_i)
    assert_equal [-2, -2, 0, 0, 2, 2], x.rint.to_a.map(&:to_i)
    assert_equal [-2.0, -2.0, -0.0, 0.0, 2.0, 2.0].map(&:to_s), x.rint.to_a.map(&:to_s)
    # The spec's numpy spelling of the quantization: rint, then clip.
    assert_equal [-127, -127, -50, 50, 127, 127], (x * 100).rint.clip(-127, 127).to_a
  end

  def test_floor_ceil_trunc
    a = Cumo::DFloat[-1.5, -0.5, 0.5, 1.5, NAN, -INF]
    assert_equal [-2.0, -1.0, 0.0, 1.0], a.floor.to_a[0, 4]
    assert_equal [-1.0, -0.0, 1.0, 2.0].map(&:to_s), a.ceil.to_a[0, 4].map(&:to_s)
    assert_equal [-1.0, -0.0, 0.0, 1.0].map(&:to_s), a.trunc.to_a[0, 4].map(&:to_s)
    [:floor, :ceil, :round, :rint, :trunc].each do |m|
      r = a.send(m)
      assert_instance_of Cumo::DFloat, r
      assert r.to_a[4].nan?, m.to_s
      assert_equal(-INF, r.to_a[5], m.to_s)
    end
    assert_instance_of Cumo::SFloat, Cumo::SFloat[1.5].floor
  end

  def test_rounding_an_integer_class_is_a_view
    a = Cumo::Int32[1, -2, 3]
    [:floor, :ceil, :round, :rint, :trunc].each do |m|
      r = a.send(m)
      assert_instance_of Cumo::Int32, r
      assert_equal [1, -2, 3], r.to_a
    end
    v = a.floor
    v[0] = 7 # Numo's are aliases of view: a write goes through
    assert_equal [7, -2, 3], a.to_a
  end

  # ---- sign, square, reciprocal ---------------------------------------------------

  def test_sign
    r = Cumo::DFloat[-2.5, -0.0, 0.0, 3.0, NAN].sign
    assert_equal [-1.0, 0.0, 0.0, 1.0], r.to_a[0, 4]
    assert_equal "0.0", r.to_a[1].to_s # Numo answers 0.0 for -0.0
    assert r.to_a[4].nan?
    assert_equal [-1, 0, 1], Cumo::Int8[-100, 0, 7].sign.to_a
    assert_equal [0, 1], Cumo::UInt8[0, 200].sign.to_a
    assert_instance_of Cumo::UInt8, Cumo::UInt8[0, 200].sign
  end

  def test_square_and_reciprocal
    assert_equal [2.25, 4.0], Cumo::DFloat[-1.5, 2].square.to_a
    assert_equal [1, 16, 0], Cumo::Int8[-1, 4, 16].square.to_a # 256 wraps to 0
    assert_equal [0.5, -4.0, INF], Cumo::DFloat[2, -0.25, 0].reciprocal.to_a
    assert_instance_of Cumo::SFloat, Cumo::SFloat[2].reciprocal
    # Integers: 1 / x in C, so 1, -1 and 0 otherwise.
    assert_equal [1, -1, 0, 0], Cumo::Int32[1, -1, 2, -5].reciprocal.to_a
    assert_equal [1, 0], Cumo::UInt8[1, 2].reciprocal.to_a
    r = Cumo::Int32[1, 0].reciprocal
    assert_raises(ZeroDivisionError) { r.to_a }
  end

  # ---- predicates, copysign, modf ------------------------------------------------------

  def test_float_predicates_answer_bit
    a = Cumo::DFloat[1.0, NAN, INF, -INF, -0.0, 0.0]
    want = {
      isnan: [0, 1, 0, 0, 0, 0], isinf: [0, 0, 1, 1, 0, 0], isposinf: [0, 0, 1, 0, 0, 0],
      isneginf: [0, 0, 0, 1, 0, 0], isfinite: [1, 0, 0, 0, 1, 1], signbit: [0, 0, 0, 1, 1, 0]
    }
    [Cumo::DFloat, Cumo::SFloat].each do |klass|
      x = klass.cast(a.to_a)
      want.each do |m, bits|
        r = x.send(m)
        assert_instance_of Cumo::Bit, r, m.to_s
        assert_equal bits, r.to_a, "#{klass}##{m}"
      end
    end
    # a predicate fuses into a reduction
    assert_equal 2, Cumo::DFloat[NAN, 1, NAN].isnan.count_true_cpu
  end

  def test_copysign_and_modf
    assert_equal [-1.0, 2.0, -0.0].map(&:to_s),
                 Cumo::DFloat[1, -2, 0].copysign(Cumo::DFloat[-3, 1, -1]).to_a.map(&:to_s)
    assert_instance_of Cumo::SFloat, Cumo::SFloat[1].copysign(-1.0)
    assert_instance_of Cumo::DFloat, Cumo::Int32[1].copysign(Cumo::DFloat[-1])
    frac, int = Cumo::DFloat[1.25, -2.5, INF, -3.0].modf
    assert_equal [0.25, -0.5, 0.0, -0.0].map(&:to_s), frac.to_a.map(&:to_s)
    assert_equal [1.0, -2.0, INF, -3.0], int.to_a
  end

  # ---- divmod ------------------------------------------------------------------

  def test_divmod_follows_c
    q, r = Cumo::Int32[7, -7, 7, -7].divmod(Cumo::Int32[2, 2, -2, -2])
    assert_equal [3, -3, -3, 3], q.to_a
    assert_equal [1, -1, 1, -1], r.to_a
    # Floats: x / y and fmod, as Numo's m_divmod computes (not floored).
    q, r = Cumo::DFloat[7, -7].divmod(2)
    assert_equal [3.5, -3.5], q.to_a
    assert_equal [1.0, -1.0], r.to_a
    q, r = Cumo::Int32[7].divmod(2.0)
    assert_instance_of Cumo::DFloat, q
    q, r = 7.divmod(Cumo::Int32[2, -2])
    assert_equal [3, -3], q.to_a
    assert_equal [1, 1], r.to_a
    q, r = Cumo::Int32[1, 2].divmod(0)
    assert_raises(ZeroDivisionError) { q.to_a }
  end

  # ---- bitwise -----------------------------------------------------------------------

  def test_bitwise_operators_of_integer_classes
    a = Cumo::Int32[12, -1, 5]
    b = Cumo::Int32[10, 6, -4]
    assert_equal [8, 6, 4], (a & b).to_a
    assert_equal [14, -1, -3], (a | b).to_a
    assert_equal [6, -7, -7], (a ^ b).to_a
    assert_equal [-13, 0, -6], (~a).to_a
    assert_equal [255, 254], (~Cumo::UInt8[0, 1]).to_a
    assert_equal [3, 2], (Cumo::Int32[3, 6] & 3).to_a
    assert_equal [2, 3], (3 & Cumo::Int32[2, 7]).to_a
    assert_equal [7, 7], (3 | Cumo::Int32[4, 7]).to_a
    assert_equal [1, 4], (3 ^ Cumo::Int32[2, 7]).to_a
    # promotion as arithmetic: Int8 with UInt8 is Int8, with Int32 Int32
    assert_instance_of Cumo::Int8, Cumo::Int8[1] & Cumo::UInt8[3]
    assert_instance_of Cumo::Int32, Cumo::Int16[1] | Cumo::Int32[3]
    assert_instance_of Cumo::Int64, Cumo::UInt64[1] ^ Cumo::Int8[3]
  end

  def test_shifts
    assert_equal [2, 0, -128], (Cumo::Int8[1, -128, 64] << 1).to_a
    assert_equal [-64, 32, -1], (Cumo::Int8[-128, 64, -1] >> 1).to_a
    assert_equal [1024, 64], (Cumo::Int32[1, 16] << Cumo::Int32[10, 2]).to_a
    assert_equal [127], (Cumo::UInt8[255] >> 1).to_a
    assert_instance_of Cumo::Int32, Cumo::Int8[1] << Cumo::Int32[3]
    # A count outside the width shifts everything out (C leaves it undefined).
    assert_equal [0, 0], (Cumo::Int32[1, -1] << 32).to_a
    assert_equal [0, -1], (Cumo::Int32[5, -5] >> 40).to_a
    assert_equal [0, -1], (Cumo::Int64[5, -5] >> -1).to_a
    assert_equal [0], (Cumo::UInt64[5] << 64).to_a
  end

  def test_bit_operators
    a = Cumo::Bit[1, 1, 0, 0]
    b = Cumo::Bit[1, 0, 1, 0]
    assert_equal [1, 0, 0, 0], (a & b).to_a
    assert_equal [1, 1, 1, 0], (a | b).to_a
    assert_equal [0, 1, 1, 0], (a ^ b).to_a
    assert_equal [0, 0, 1, 1], (~a).to_a
    assert_instance_of Cumo::Bit, ~a
    # A Bit receiver converts the other operand to Bit (nonzero is 1).
    r = a & Cumo::Int32[2, 0, 5, 0]
    assert_instance_of Cumo::Bit, r
    assert_equal [1, 0, 0, 0], r.to_a
    assert_equal [1, 1, 0, 0], (a & 3).to_a
    assert_equal [1, 1, 1, 1], (a | 0.5).to_a
    assert_instance_of Cumo::Bit, 1 & a
    # An integer receiver promotes as arithmetic does.
    r = Cumo::Int32[2, 3, 4, 5] & a
    assert_instance_of Cumo::Int32, r
    assert_equal [0, 1, 0, 0], r.to_a
    # comparisons combine
    x = Cumo::DFloat[1, 5, 3]
    assert_equal [0, 0, 1], ((x > 2) & (x < 4)).to_a
  end

  def test_bitwise_refusals_raise_no_method_error
    e = assert_raises(NoMethodError) { Cumo::DFloat[1] & 1 }
    assert_includes e.message, "[bit_and]"
    e = assert_raises(NoMethodError) { Cumo::Int32[1] | 1.5 }
    assert_includes e.message, "[bit_or]"
    e = assert_raises(NoMethodError) { ~Cumo::SFloat[1] }
    assert_includes e.message, "[bit_not]"
    e = assert_raises(NoMethodError) { Cumo::Bit[1] << 1 }
    assert_includes e.message, "[left_shift]"
    e = assert_raises(NoMethodError) { Cumo::DFloat[1] >> Cumo::Int32[1] }
    assert_includes e.message, "[right_shift]"
    e = assert_raises(NoMethodError) { Cumo::Int32[1].isnan }
    assert_includes e.message, "[isnan]"
    e = assert_raises(NoMethodError) { Cumo::Bit[1].floor }
    assert_includes e.message, "[floor]"
    e = assert_raises(NoMethodError) { Cumo::Bit[1].clip(0, 1) }
    assert_includes e.message, "[clip]"
    e = assert_raises(NoMethodError) { Cumo::Int32[1].copysign(1) }
    assert_includes e.message, "[copysign]"
    assert_raises(NoMethodError) { Cumo::Bit[1].sign }
    assert_raises(NoMethodError) { Cumo::Bit.maximum(Cumo::Bit[1], Cumo::Bit[0]) }
  end

  # ---- clip --------------------------------------------------------------------------

  def test_clip_as_numo_documents
    a = Cumo::Int32.new(10).seq
    assert_equal [1, 1, 2, 3, 4, 5, 6, 7, 8, 8], a.clip(1, 8).to_a
    assert_equal [3, 4, 2, 3, 4, 5, 6, 7, 8, 8], a.clip([3, 4, 1, 1, 1, 4, 4, 4, 4, 4], 8).to_a
    assert_equal [0, 1, 2, 3, 4, 5, 5, 5, 5, 5], a.clip(nil, 5).to_a
    assert_equal [5, 5, 5, 5, 5, 5, 6, 7, 8, 9], a.clip(5, nil).to_a
    assert_instance_of Cumo::Int32, a.clip(1.5, 8.7)
    assert_equal [1, 1, 2, 8], Cumo::Int32[0, 1, 2, 9].clip(1.5, 8.7).to_a # bounds truncate
  end

  def test_clip_of_floats_with_nan_and_arrays
    a = Cumo::DFloat[-2, NAN, 0.5, 7]
    r = a.clip(-1, 1)
    assert_equal [-1.0, 1.0], r.to_a.values_at(0, 3)
    assert r.to_a[1].nan?, "a NaN element stays NaN"
    assert_equal [-2.0, 0.5, 7.0], a.clip(NAN, NAN).to_a.values_at(0, 2, 3) # a NaN bound clips nothing
    m = Cumo::DFloat.new(2, 3).seq
    assert_equal [[1.0, 1.0, 2.0], [3.0, 3.0, 3.0]], m.clip(1, Cumo::DFloat[3, 3, 3]).to_a
    assert_instance_of Cumo::SFloat, Cumo::SFloat[1, 2].clip(0.5, 1.5)
  end

  def test_clip_errors
    e = assert_raises(Cumo::NArray::OperationError) { Cumo::DFloat[1, 2].clip(3, 2) }
    assert_includes e.message, "[clip]"
    # compared once converted: Int32 clip(2.7, 2.2) is clip(2, 2)
    assert_equal [2, 2], Cumo::Int32[1, 5].clip(2.7, 2.2).to_a
    e = assert_raises(ArgumentError) { Cumo::DFloat[1].clip(nil, nil) }
    assert_includes e.message, "[clip]"
    assert_raises(Cumo::NArray::ShapeError) { Cumo::DFloat[1, 2].clip(Cumo::DFloat[1, 2, 3], 4) }
  end

  # ---- maximum and minimum ---------------------------------------------------------------

  def test_maximum_and_minimum_are_class_methods
    a = Cumo::DFloat[1, NAN, 3, NAN]
    b = Cumo::DFloat[2, 1, NAN, NAN]
    mx = Cumo::DFloat.maximum(a, b)
    assert_equal [2.0, 1.0, 3.0], mx.to_a[0, 3] # NaN is skipped
    assert mx.to_a[3].nan?
    assert_equal [1.0, 1.0, 3.0], Cumo::DFloat.minimum(a, b).to_a[0, 3]
    nx = Cumo::DFloat.maximum(a, b, nan: true)
    assert_equal 2.0, nx.to_a[0]
    assert nx.to_a[1..].all?(&:nan?)
    assert Cumo::DFloat.minimum(a, b, nan: true).to_a[1..].all?(&:nan?)
    # Operands are converted to the class the method is called on.
    r = Cumo::Int32.maximum(Cumo::DFloat[1.5, 7.9], 2.7)
    assert_instance_of Cumo::Int32, r
    assert_equal [2, 7], r.to_a
    assert_equal [[1, 1], [3, 2]], Cumo::Int16.minimum(Cumo::Int16[[1], [5]], [3, 2]).to_a
    assert_instance_of Cumo::SFloat, Cumo::SFloat.maximum(Cumo::DFloat[1], 2)
    assert_raises(ArgumentError) { Cumo::Int32.maximum(Cumo::Int32[1], 2, nan: true) }
  end

  # ---- laziness ----------------------------------------------------------------

  def test_math_chains_fuse_into_one_kernel
    x = Cumo::DFloat.new(100).seq(-5, 0.1)
    y = Cumo::NMath.tanh(Cumo::NMath.sin(x) * 2).clip(-0.5, 0.5).round
    plan = Cumo.explain(y)
    assert_equal 1, plan.kernels.size
    want = x.to_a.map { |v| Math.tanh(Math.sin(v) * 2).clamp(-0.5, 0.5).round.to_f }
    assert_equal want, y.to_a
  end

  # The spec's activations: its printed values and edges.
  def test_activations
    m = Cumo::NMath
    inf = Float::INFINITY
    # sigmoid keeps exp's argument negative; written out, it reaches zero.
    assert_in_delta 3.783506e-44, m.sigmoid(Cumo::SFloat[-100.0]).to_a.first, 1e-50
    assert_equal 0.0, (1.0 / (1.0 + m.exp(Cumo::SFloat[100.0]))).to_a.first
    { Cumo::HFloat => -17.5, Cumo::BFloat => -93.0, Cumo::SFloat => -104.0 }.each do |k, zero|
      assert_equal 0.0, m.sigmoid(k[zero]).to_a.first, k.name
      assert_operator m.sigmoid(k[zero + 1]).to_a.first, :>, 0.0, k.name
    end
    x = Cumo::DFloat[0, 0.5, 3, 40]
    assert_equal (1.0 / (1.0 + m.exp(-x))).to_a, m.sigmoid(x).to_a # non-negative: the plain quotient
    # softplus: the sum before the log, single-precision exp for half, x on overflow.
    h = Cumo::HFloat[22.26]
    assert_equal [inf], m.log(1.0 + m.exp(h)).to_a
    assert_equal [22.265625], m.softplus(h).to_a
    assert_equal [0.0], m.softplus(Cumo::SFloat[-17.0]).to_a
    assert_equal [0.0], m.softplus(Cumo::DFloat[-37.0]).to_a
    assert_equal [inf, 0.0, 800.0], m.softplus(Cumo::DFloat[inf, -inf, 800]).to_a
    assert_in_delta Math.log(1 + Math.exp(1.5)), Float(m.softplus(Cumo::DFloat[1.5])[0]), 1e-15
    # gelu, gelu_tanh and silu: -Infinity is NaN, a large negative x a signed zero.
    [:gelu, :gelu_tanh, :silu].each do |f|
      a = m.send(f, Cumo::DFloat[-inf, -800, 0]).to_a
      assert a[0].nan?, f.to_s
      assert_equal [0.0, 0.0], a[1, 2], f.to_s
      assert_equal(-Float::INFINITY, 1.0 / a[1], f.to_s)
    end
    assert_in_delta 0.5 * 1.3 * (1 + Math.erf(1.3 / Math.sqrt(2))), Float(m.gelu(Cumo::DFloat[1.3])[0]), 1e-15
    t = 0.5 * 1.3 * (1 + Math.tanh(Math.sqrt(2 / Math::PI) * (1.3 + 0.044715 * 1.3**3)))
    assert_in_delta t, Float(m.gelu_tanh(Cumo::DFloat[1.3])[0]), 1e-15
    assert_operator (m.gelu(Cumo::DFloat[1.3]) - m.gelu_tanh(Cumo::DFloat[1.3])).abs.to_a[0], :<, 4.1e-4
    assert_in_delta 2.0 / (1 + Math.exp(-2.0)), Float(m.silu(Cumo::DFloat[2.0])[0]), 1e-15
    # Half reaches silu's signed zero at -21, single at -89.
    assert_equal [-0.0], m.silu(Cumo::HFloat[-21]).to_a
    refute_equal 0.0, m.silu(Cumo::HFloat[-20]).to_a[0]
    assert_equal [-0.0], m.silu(Cumo::SFloat[-90]).to_a
    # One kernel each, and a class of their own for the float classes only.
    assert_equal 1, Cumo.explain(m.silu(Cumo::SFloat.new(8).seq)).kernels.size
    assert_instance_of Cumo::BFloat, m.gelu_tanh(Cumo::BFloat[1, 2])
    assert_instance_of Cumo::DFloat, m.sigmoid(Cumo::Int32[1, 2])
    assert_raises(NoMethodError) { m.silu(Cumo::DComplex[1]) }
  end
end
