# frozen_string_literal: true

# Cumo::SComplex (also Complex32) and Cumo::DComplex (also Complex64):
# literals and Ruby Complex values in and out, Numo's promotion (the SC and
# DC columns of notes/numo_semantics.md, and Ruby Complex operands),
# arithmetic with complex semantics, abs answering the real class, real,
# imag, conj, arg and angle, eq and ne but no ordering, the complex NMath
# functions, sums, products and means, fill, seq and rand (both parts drawn
# separately, default high 1+1i), casts (complex to real raises CastError as
# Numo does) and Numo's "%g%+gi" inspect.
require "minitest/autorun"
require "cumo/narray"

class TestComplex < Minitest::Test
  SC = Cumo::SComplex
  DC = Cumo::DComplex

  def assert_complex_close(want, got, tol = 1e-12, msg = nil)
    want = Array(want).flatten
    got = Array(got).flatten
    assert_equal want.size, got.size, msg
    want.zip(got).each do |w, g|
      scale = [w.abs, 1.0].max
      assert_operator (w - g).abs, :<=, tol * scale, "#{msg}: want #{w}, got #{g}"
    end
  end

  # ---- classes, literals, to_a, inspect ----------------------------------------

  def test_classes_and_aliases
    assert_same SC, Cumo::Complex32
    assert_same DC, Cumo::Complex64
    assert_equal 8, SC.new(1).byte_size
    assert_equal 16, DC.new(1).byte_size
  end

  def test_literals_and_to_a
    assert_equal [Complex(1.0, 2.0)], DC[1 + 2i].to_a
    assert_equal [Complex(1.0, 2.0), Complex(3.0, 0.0)], DC[1 + 2i, 3].to_a
    assert_equal [[Complex(0.5, -1.0)]], SC[[0.5 - 1i]].to_a
    assert_instance_of Complex, DC[1].to_a.first
    assert_equal DC, Cumo::NArray[1 + 2i, 3].class
    assert_equal [Complex(1.0, 2.0)], DC.cast(1 + 2i).to_a
    assert_equal Complex(1.0, 2.0), DC[1 + 2i].to_c
    # A single-precision part is the float nearest the value.
    assert_equal [Complex(0.10000000149011612, 0.0)], SC[0.1].to_a
  end

  def test_inspect_as_numo
    assert_equal "Cumo::DComplex#shape=[4]\n[1+2i, 1.5-0.5i, 0+0i, 0-1i]",
                 DC[1 + 2i, 1.5 - 0.5i, 0, -1i].inspect
    assert_equal "Cumo::SComplex#shape=[]\n3-4i", SC.cast(3 - 4i).inspect
    assert_equal "Cumo::DComplex#shape=[1]\n[nan+infi]",
                 DC[Complex(Float::NAN, Float::INFINITY)].inspect
  end

  # ---- promotion -----------------------------------------------------------------

  REAL_CLASSES = [Cumo::Bit, Cumo::Int8, Cumo::Int16, Cumo::Int32, Cumo::Int64,
                  Cumo::UInt8, Cumo::UInt16, Cumo::UInt32, Cumo::UInt64,
                  Cumo::SFloat, Cumo::HFloat, Cumo::BFloat].freeze

  def test_promotion_with_arrays
    REAL_CLASSES.each do |k|
      x = k.cast([1, 0])
      assert_equal SC, (x + SC[1, 2]).class, "#{k} + SComplex"
      assert_equal SC, (SC[1, 2] * x).class, "SComplex * #{k}"
      assert_equal DC, (x + DC[1, 2]).class, "#{k} + DComplex"
      assert_equal DC, (DC[1, 2] - x).class, "DComplex - #{k}"
    end
    assert_equal DC, (SC[1] + Cumo::DFloat[1]).class
    assert_equal DC, (Cumo::DFloat[1] * SC[1]).class
    assert_equal DC, (SC[1] + DC[1]).class
    assert_equal SC, (SC[1] + SC[1]).class
    assert_equal [Complex(3.0, 2.0)], (Cumo::Int32[2] + SC[1 + 2i]).to_a
  end

  def test_promotion_with_ruby_numbers
    assert_equal SC, (Cumo::SFloat[1, 2] + 1i).class
    assert_equal SC, (Cumo::HFloat[1, 2] + 1i).class
    assert_equal DC, (Cumo::DFloat[1, 2] + 1i).class
    assert_equal DC, (Cumo::Int32[1, 2] * (2 + 1i)).class
    assert_equal DC, (Cumo::UInt8[1, 2] - 1i).class
    assert_equal SC, (SC[1] + 1.5).class
    assert_equal SC, (SC[1] + 2).class
    assert_equal SC, (SC[1] + 1i).class
    assert_equal DC, (DC[1] + 1i).class
    assert_equal SC, ((1 + 1i) * Cumo::SFloat[2]).class # coerce
    assert_equal [Complex(2.0, 3.0)], (Cumo::SFloat[2] + 3i).to_a
    assert_equal [Complex(-1.0, 2.0)], (1i * DC[2 + 1i]).to_a
  end

  # ---- arithmetic ------------------------------------------------------------------

  def test_arithmetic
    a = DC[1 + 2i, -3 + 0.5i, 2i]
    b = DC[3 - 1i, 2 + 2i, 1 + 1i]
    ra = a.to_a
    rb = b.to_a
    assert_equal ra.zip(rb).map { |x, y| x + y }, (a + b).to_a
    assert_equal ra.zip(rb).map { |x, y| x - y }, (a - b).to_a
    assert_equal ra.zip(rb).map { |x, y| x * y }, (a * b).to_a
    assert_complex_close ra.zip(rb).map { |x, y| x / y }, (a / b).to_a
    assert_complex_close [Complex(0.1, 0.7)], (DC[1 + 2i] / DC[3 - 1i]).to_a
    assert_equal ra.map(&:-@), (-a).to_a
    assert_equal [Complex(5.0, 5.0)], (DC[1 + 2i] * (3 - 1i)).to_a
    assert_equal [Complex(3.0, 6.0)], (SC[1 + 2i] * 3).to_a
  end

  def test_powers
    # An integral exponent multiplies, exactly.
    assert_equal [Complex(-3.0, 4.0)], (DC[1 + 2i]**2).to_a
    assert_equal [Complex(-11.0, -2.0)], (DC[1 + 2i]**3).to_a
    assert_complex_close [(1 + 2i)**-2], (DC[1 + 2i]**-2).to_a
    assert_equal [Complex(1.0, 0.0)], (DC[1 + 2i]**0).to_a
    assert_equal [Complex(0.0, 0.0)], (DC[0]**2.5).to_a
    # Any other power is exp(y log x).
    assert_complex_close [(1 + 2i)**0.5], (DC[1 + 2i]**0.5).to_a
    assert_complex_close [(1 + 2i)**(0.5 + 1i)], (DC[1 + 2i]**(0.5 + 1i)).to_a
    assert_complex_close [Complex(-1, 0)**0.5], (DC[-1]**0.5).to_a
    assert_complex_close [(1 + 2i)**2], (SC[1 + 2i]**2).to_a, 1e-6
    assert_complex_close [2**(1i)], (2**DC[1i]).to_a
  end

  def test_abs_real_imag_conj_arg
    z = DC[3 + 4i, -1 - 1i]
    assert_equal Cumo::DFloat, z.abs.class
    assert_equal Cumo::SFloat, SC[3 + 4i].abs.class
    assert_complex_close [5.0, Math.sqrt(2)], z.abs.to_a # hypot: an ulp apart on CUDA
    assert_equal [3.0, -1.0], z.real.to_a
    assert_equal Cumo::DFloat, z.real.class
    assert_equal [4.0, -1.0], z.imag.to_a
    assert_equal Cumo::SFloat, SC[1i].imag.class
    assert_equal [Complex(3.0, -4.0), Complex(-1.0, 1.0)], z.conj.to_a
    assert_equal [Complex(3.0, -4.0), Complex(-1.0, 1.0)], z.conjugate.to_a
    assert_complex_close [Math.atan2(4, 3), Math.atan2(-1, -1)], z.arg.to_a
    assert_equal z.arg.to_a, z.angle.to_a
    assert_equal [0.5], Cumo::DFloat[0.5].conj.to_a # a real class's conj is a view
    assert_raises(NoMethodError) { Cumo::DFloat[1].real }
    assert_raises(NoMethodError) { Cumo::Int32[1].imag }
    # Fused with what follows: |z|^2 from the real class.
    assert_equal [25.0, 2.0], (z.abs**2).round.to_a
    assert_equal [25.0, 2.0], (z * z.conj).real.round.to_a
  end

  def test_im_set_real_set_imag
    z = DC[1 + 2i, 3 - 4i]
    assert_equal [Complex(-2.0, 1.0), Complex(4.0, 3.0)], z.im.to_a
    assert_equal [0.5], Cumo::DFloat[0.5].im.to_a # a real class's im is a view
    assert_equal 7, (z.real = 7)
    assert_equal [Complex(7.0, 2.0), Complex(7.0, -4.0)], z.to_a
    z.imag = Cumo::DFloat[0.5, -0.5]
    assert_equal [Complex(7.0, 0.5), Complex(7.0, -0.5)], z.to_a
    z[1..1].set_real(-1) # through a view
    assert_equal [Complex(7.0, 0.5), Complex(-1.0, -0.5)], z.to_a
    s = SC.zeros(2, 2)
    s.set_imag(Cumo::SFloat[1, 2]) # broadcast over the rows
    assert_equal [[Complex(0.0, 1.0), Complex(0.0, 2.0)]] * 2, s.to_a
    assert_raises(RangeError) { z.real = 1i }
    assert_raises(Cumo::NArray::CastError) { z.imag = DC[1, 2] }
    assert_raises(NoMethodError) { Cumo::DFloat[1].real = 2 }
    assert_raises(FrozenError) { DC[1].freeze.real = 2 }
  end

  def test_sign_square_reciprocal_rounding
    assert_equal [Complex(1.0, -1.0), Complex(0.0, 1.0)], DC[3 - 4i, 2i].sign.to_a
    assert_equal [Complex(-3.0, 4.0)], DC[1 + 2i].square.to_a
    assert_complex_close [1 / (1 + 2i)], DC[1 + 2i].reciprocal.to_a
    assert_equal [Complex(2.0, -2.0)], DC[2.5 - 2.5i].rint.to_a
    assert_equal [Complex(3.0, -3.0)], DC[2.5 - 2.5i].round.to_a
    assert_equal [Complex(2.0, -3.0)], DC[2.5 - 2.5i].floor.to_a
    assert_equal [Complex(3.0, -2.0)], DC[2.5 - 2.5i].ceil.to_a
    assert_equal [Complex(2.0, -2.0)], DC[2.5 - 2.5i].trunc.to_a
  end

  # ---- comparisons and what complex classes lack ----------------------------------

  def test_eq_and_ne_only
    a = DC[1 + 2i, 3]
    assert_equal [1, 0], a.eq(DC[1 + 2i, 3 + 1i]).to_a
    assert_equal [0, 1], a.ne(DC[1 + 2i, 3 + 1i]).to_a
    assert_equal [0, 1], a.eq(3).to_a
    assert_equal Cumo::Bit, a.eq(1 + 2i).class
    assert a == DC[1 + 2i, 3]
    refute a == DC[1 + 2i, 4]
    assert SC[1 + 2i] == DC[1 + 2i]
    %i[< <= > >= lt gt].each do |op|
      assert_raises(NoMethodError, op.to_s) { a.send(op, a) }
    end
    assert_raises(NoMethodError) { a % 2 }
    assert_raises(NoMethodError) { a.divmod(2) }
    assert_raises(NoMethodError) { a.max }
    assert_raises(NoMethodError) { a.min(axis: 0) }
    assert_raises(NoMethodError) { a.clip(0, 1) }
    assert_raises(NoMethodError) { a & 1 }
    assert_raises(NoMethodError) { DC.maximum(a, a) }
    assert_raises(NoMethodError) { a.modf }
  end

  def test_predicates
    x = DC[Complex(Float::NAN, 0), Complex(0, Float::INFINITY), Complex(-Float::INFINITY, 1), 1 + 1i]
    assert_equal [1, 0, 0, 0], x.isnan.to_a
    assert_equal [0, 1, 1, 0], x.isinf.to_a
    assert_equal [0, 1, 0, 0], x.isposinf.to_a
    assert_equal [0, 0, 1, 0], x.isneginf.to_a
    assert_equal [0, 0, 0, 1], x.isfinite.to_a
    assert_raises(NoMethodError) { x.signbit }
  end

  # ---- NMath ---------------------------------------------------------------------

  # Reference formulas in Ruby's own Complex arithmetic.
  def cexp(z) = Math.exp(z.real) * Complex(Math.cos(z.imag), Math.sin(z.imag))
  def clog(z) = Complex(Math.log(z.abs), z.arg)
  def csin(z) = Complex(Math.sin(z.real) * Math.cosh(z.imag), Math.cos(z.real) * Math.sinh(z.imag))
  def ccos(z) = Complex(Math.cos(z.real) * Math.cosh(z.imag), -Math.sin(z.real) * Math.sinh(z.imag))
  def csinh(z) = Complex(Math.sinh(z.real) * Math.cos(z.imag), Math.cosh(z.real) * Math.sin(z.imag))
  def ccosh(z) = Complex(Math.cosh(z.real) * Math.cos(z.imag), Math.sinh(z.real) * Math.sin(z.imag))

  def expected(fn, z)
    case fn
    when :sqrt then z**0.5
    when :cbrt then cexp(clog(z) / 3)
    when :exp then cexp(z)
    when :exp2 then cexp(z * Math.log(2))
    when :exp10 then cexp(z * Math.log(10))
    when :log then clog(z)
    when :log2 then clog(z) / Math.log(2)
    when :log10 then clog(z) / Math.log(10)
    when :sin then csin(z)
    when :cos then ccos(z)
    when :tan then csin(z) / ccos(z)
    when :sinh then csinh(z)
    when :cosh then ccosh(z)
    when :tanh then csinh(z) / ccosh(z)
    when :asin then -1i * clog(1i * z + (1 - z * z)**0.5)
    when :acos then -1i * clog(z + 1i * (1 - z * z)**0.5)
    when :atan then 0.5i * clog((1i + z) / (1i - z))
    when :asinh then clog(z + (z * z + 1)**0.5)
    when :acosh then clog(z + ((z + 1)**0.5) * ((z - 1)**0.5)) # the principal branch
    when :atanh then 0.5 * clog((1 + z) / (1 - z))
    when :sinc then csin(z) / z
    end
  end

  MATH = %i[sqrt cbrt exp exp2 exp10 log log2 log10 sin cos tan sinh cosh tanh
            asin acos atan asinh acosh atanh sinc].freeze

  def test_nmath_functions
    zs = [0.5 + 0.25i, -1.5 + 2i, 2 - 0.75i, -0.3 - 0.4i]
    MATH.each do |fn|
      want = zs.map { |z| expected(fn, z) }
      assert_equal DC, Cumo::NMath.send(fn, DC[*zs]).class, fn.to_s
      assert_complex_close want, Cumo::NMath.send(fn, DC[*zs]).to_a, 1e-12, fn.to_s
      assert_complex_close want, DC::Math.send(fn, DC[*zs]).to_a, 1e-12, fn.to_s
      assert_equal SC, SC::Math.send(fn, SC[*zs]).class, fn.to_s
      assert_complex_close want, SC::Math.send(fn, SC[*zs]).to_a, 2e-5, fn.to_s
    end
    assert_equal [Complex(1.0, 0.0)], Cumo::NMath.sinc(DC[0]).to_a
    assert_equal [Complex(0.0, 2.0)], Cumo::NMath.sqrt(DC[-4]).to_a
    assert_equal DC, Cumo::NMath.sqrt(-4 + 0i).class # a Ruby Complex is a DComplex
    assert_equal SC, Cumo::NMath.exp(SC[1]).class
    %i[atan2 hypot].each do |fn|
      assert_raises(NoMethodError, fn.to_s) { Cumo::NMath.send(fn, DC[1], DC[1]) }
    end
    %i[erf erfc log1p expm1].each do |fn|
      assert_raises(NoMethodError, fn.to_s) { DC::Math.send(fn, DC[1]) }
    end
  end

  # ---- reductions ------------------------------------------------------------------

  def test_sum_prod_mean
    a = DC[1 + 2i, 3, -1i]
    assert_equal DC, a.sum.class
    assert_equal Complex(4.0, 1.0), a.sum.to_a.first
    assert_equal Complex(6.0, -3.0), a.prod.to_a.first # (1+2i)*3*(-i) = 6-3i
    assert_complex_close [Complex(4.0 / 3, 1.0 / 3)], a.mean.to_a
    m = DC.new(2, 3).seq(1i, 1)
    assert_equal [Complex(3.0, 3.0), Complex(12.0, 3.0)], m.sum(axis: 1).to_a
    assert_equal [Complex(-1.0, 3.0), Complex(3.0, 5.0), Complex(9.0, 7.0)], m.prod(axis: 0).to_a
    assert_equal [Complex(1.0, 1.0), Complex(4.0, 1.0)], m.mean(axis: 1).to_a
    s = SC.new(1000).fill(0.5 + 0.25i)
    assert_equal SC, s.sum.class
    assert_equal Complex(500.0, 250.0), s.sum.to_a.first
    assert_equal Complex(0.0, 32.0), DC[1 + 1i].then { |z| (z**10).sum }.to_a.first
    assert_equal Complex(0.0, 32.0), (DC[1 + 1i] * DC.ones(10)).prod.to_a.first
    # The 1-D dot of complex vectors multiplies without conjugating.
    assert_equal Complex(-3.0, 4.0), DC[1 + 2i].dot(DC[1 + 2i]).to_a.first
  end

  # ---- creation --------------------------------------------------------------------

  def test_fill_seq_zeros_ones
    assert_equal [Complex(1.5, -2.0)] * 3, DC.new(3).fill(1.5 - 2i).to_a
    assert_equal [Complex(1.0, 1.0), Complex(1.0, 2.0), Complex(1.0, 3.0)], DC.new(3).seq(1 + 1i, 1i).to_a
    assert_equal [Complex(0.0, 0.0), Complex(1.0, 0.0)], SC.new(2).seq.to_a
    assert_equal [Complex(1.0, 0.0)] * 2, DC.ones(2).to_a
    assert_equal [Complex(0.0, 0.0)] * 2, SC.zeros(2).to_a
  end

  def test_rand_draws_both_parts
    Cumo::NArray.srand(3)
    z = DC.new(2000).rand.to_a
    assert(z.all? { |c| c.real >= 0 && c.real < 1 && c.imag >= 0 && c.imag < 1 })
    assert_operator z.map(&:imag).uniq.size, :>, 1900 # drawn, not copied from the real part
    refute_equal z.map(&:real), z.map(&:imag)
    Cumo::NArray.srand(3)
    w = SC.new(2000).rand(1 + 2i).to_a
    assert(w.all? { |c| c.real >= 0 && c.real < 1 && c.imag >= 0 && c.imag < 2 })
    assert_operator w.map(&:imag).max, :>, 1.9
    Cumo::NArray.srand(3)
    v = DC.new(100).rand(-1 - 1i, 1 + 3i).to_a
    assert(v.all? { |c| c.real >= -1 && c.real < 1 && c.imag >= -1 && c.imag < 3 })
    # The real part is the number the real class draws at the same counter.
    Cumo::NArray.srand(9)
    re = Cumo::SFloat.new(50).rand.to_a
    Cumo::NArray.srand(9)
    assert_equal re, SC.new(50).rand.real.to_a
  end

  # ---- casts and stores ------------------------------------------------------------

  def test_casts
    assert_equal [Complex(1.5, 0.0), Complex(-2.0, 0.0)], DC.cast(Cumo::DFloat[1.5, -2]).to_a
    assert_equal [Complex(3.0, 0.0)], SC.cast(Cumo::Int32[3]).to_a
    assert_equal [Complex(0.5, 0.25)], DC.cast(SC[0.5 + 0.25i]).to_a
    assert_equal [Complex(0.10000000149011612, 0.0)], DC.cast(SC.cast(DC[0.1])).to_a
    assert_equal [Complex(1.0, 0.0)], DC.cast(Cumo::Bit[1]).to_a
    [Cumo::DFloat, Cumo::SFloat, Cumo::Int32, Cumo::HFloat, Cumo::Bit].each do |k|
      e = assert_raises(Cumo::NArray::CastError) { k.cast(DC[1 + 2i]) }
      assert_match(/unknown conversion from Cumo::DComplex to #{k}/, e.message)
      assert_raises(Cumo::NArray::CastError) { SC[1].cast_to(k) }
    end
    assert_raises(Cumo::NArray::CastError) { Cumo::DFloat.zeros(2)[0..1] = DC[1, 2] }
  end

  def test_ruby_complex_into_a_real_class
    assert_raises(RangeError) { Cumo::DFloat.new(2).fill(1 + 2i) }
    assert_raises(RangeError) { Cumo::DFloat[1 + 2i] }
    assert_raises(RangeError) { Cumo::Int32.zeros(2)[0] = 1i }
    # An exact zero imaginary part converts, as Complex#to_f does.
    assert_equal [3.0, 3.0], Cumo::DFloat.new(2).fill(Complex(3, 0)).to_a
  end

  def test_float_and_integer_as_numo
    assert_raises(RangeError) { Float(DC[1 + 2i]) }
    assert_raises(RangeError) { Float(DC[1]) } # the imaginary part is 0.0, not exact
    assert_raises(RangeError) { Integer(SC[1]) }
    # Ruby's message, with the op's name.
    { to_f: "Float", to_i: "Integer" }.each do |m, target|
      e = assert_raises(RangeError) { DC[2 + 1i].public_send(m) }
      assert_equal "[#{m}] can't convert 2.0+1.0i into #{target}", e.message
      e = assert_raises(RangeError) { SC[-2].sum.public_send(m) }
      assert_equal "[#{m}] can't convert -2.0+0.0i into #{target}", e.message
    end
    assert_equal Complex(1.0, 0.0), DC[1].to_c
    assert_raises(TypeError) { DC[1, 2].to_c }
  end

  def test_stores_views_and_fusion
    a = DC.zeros(4)
    a[1] = 1 + 1i
    a[2..3] = DC[2i, 3]
    a[0] = 5
    assert_equal [Complex(5.0, 0.0), Complex(1.0, 1.0), Complex(0.0, 2.0), Complex(3.0, 0.0)], a.to_a
    b = DC.new(2, 3).seq(1i, 1 + 1i)
    assert_equal [Complex(1.0, 2.0), Complex(4.0, 5.0)], b[true, 1].to_a
    c = (b * 2 - 1i).conj * b.abs.cast_to(DC)
    want = b.to_a.flatten.map { |z| (z * 2 - 1i).conj * z.abs }
    assert_complex_close want, c.to_a
  end
end
