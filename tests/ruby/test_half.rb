# frozen_string_literal: true

# Cumo::HFloat (IEEE binary16, also Cumo::Float16) and Cumo::BFloat
# (bfloat16, also Cumo::BFloat16): every value the spec prints under "Half
# Precision", "Brain Float" and "An index rounds here rather than
# saturating"; rounding to nearest even from float and from double (never
# through float), saturation to Infinity, subnormals; promotion exactly as
# SFloat's (BFloat with HFloat is SFloat); every op computing in single
# precision and rounding back; sums and means accumulating in single
# precision and rounding once, products not widening.
require "minitest/autorun"
require "cumo/narray"

class TestHalf < Minitest::Test
  INF = Float::INFINITY

  def first(a) = a.to_a.flatten.first

  # ---- the spec's values -----------------------------------------------------

  def test_half_precision_section
    assert_equal [2048.0], Cumo::HFloat[2049.0].to_a
    assert_equal [50_272.0], Cumo::HFloat[50_257.0].to_a
    assert_equal [INF], Cumo::HFloat[100_000].to_a
    assert_equal 40_000.0, Float(Cumo::HFloat.new(40_000).fill(1.0).sum)
    assert_in_delta 6.1e-05, Cumo::HFloat::MIN, 1e-7
    assert_equal 65_504.0, Cumo::HFloat::MAX
  end

  def test_brain_float_section
    assert_equal [9.969209968386869e+37], Cumo::BFloat[1.0e38].to_a
    assert_equal [INF], Cumo::HFloat[1.0e38].to_a
    assert_equal [256.0], Cumo::BFloat[257.0].to_a
    assert_equal [257.0], Cumo::HFloat[257.0].to_a
    assert_in_delta 3.3895314e+38, Cumo::BFloat::MAX, 1e31
    assert_equal Cumo::SFloat, (Cumo::BFloat[1.0] + Cumo::HFloat[1.0]).class
    assert_equal 39_936.0, Float(Cumo::BFloat.new(40_000).fill(1.0).sum)
  end

  def test_an_index_rounds_here_rather_than_saturating
    assert_equal [79_872.0], Cumo::BFloat[79_800].to_a
    assert_equal [INF], Cumo::HFloat[79_800].to_a
    # Within an ulp or two of single precision: glibc's cosf and CUDA's
    # may differ in the last bit.
    assert_in_delta(-0.9190999865531921, first(Cumo::NMath.cos(Cumo::SFloat[79_800])), 2e-7)
    assert_in_delta 0.989012598991394, first(Cumo::NMath.cos(Cumo::SFloat[79_872])), 2e-7
    assert_equal [1000.0], Cumo::BFloat[1000].to_a # a multiple of 8 is exact
    assert_equal [256.0, 258.0, 260.0, 260.0], Cumo::BFloat[256, 258, 259, 261].to_a
  end

  # Half holds exp(x) only to 11.09: written out, log(1 + exp(x)) overflows
  # at 22.26 ("Softplus").
  def test_written_out_softplus_overflows_in_half
    x = Cumo::HFloat[22.26]
    assert_equal [22.265625], x.to_a
    assert_equal [INF], Cumo::NMath.log(1.0 + Cumo::NMath.exp(x)).to_a
  end

  # A dot whose answer does not fit saturates: the single-precision
  # accumulator holds 102400, the half result cannot.
  def test_a_dot_that_does_not_fit_saturates
    a = Cumo::HFloat.ones(1024)
    b = Cumo::HFloat.new(1024).fill(100.0)
    assert_equal INF, Float(a.dot(b))
    assert_equal 102_400.0, Float((a.cast_to(Cumo::SFloat) * b).sum)
  end

  # ---- conversion --------------------------------------------------------------

  def test_round_to_nearest_even
    # Ties between neighbours two apart (2048..4096 in half) go to even.
    assert_equal [2048.0, 2052.0, 2052.0, 2054.0, 2056.0], Cumo::HFloat[2049, 2051, 2053, 2054, 2055].to_a
    assert_equal [65_504.0, 65_504.0, INF], Cumo::HFloat[65_504, 65_519.99, 65_520].to_a
    assert_equal [-INF], Cumo::HFloat[-1e6].to_a
    # bfloat16: 8 significant bits.
    assert_equal [1.0, 1.015625], Cumo::BFloat[1.00390625, 1.01171875].to_a
    assert_equal [INF], Cumo::BFloat[3.4e38].to_a
  end

  def test_a_double_rounds_once_not_through_float
    # Just above a tie of the narrow type, but below float's resolution: a
    # trip through float would land on the tie and round to even (down).
    assert_equal [1.0078125], Cumo::BFloat[1 + 2.0**-8 + 2.0**-30].to_a
    assert_equal [1.0009765625], Cumo::HFloat[1 + 2.0**-11 + 2.0**-40].to_a
    assert_equal [1.0078125], Cumo::BFloat.cast(Cumo::DFloat[1 + 2.0**-8 + 2.0**-30]).to_a
    # From an SFloat array the float is the value: a tie, to even.
    assert_equal [1.0], Cumo::BFloat.cast(Cumo::SFloat[1 + 2.0**-8]).to_a
  end

  def test_subnormals_zeros_and_nan
    tiny = 2.0**-24 # the smallest half subnormal
    assert_equal [tiny, 0.0, tiny, 2 * tiny, 4 * tiny], Cumo::HFloat[6.0e-8, 2.0**-25, 2.0**-25 * 1.0000001, 2.5 * tiny, 3.5 * tiny].to_a
    neg = Cumo::HFloat[-0.0].to_a.first
    assert_equal(-INF, 1.0 / neg) # the sign of zero survives
    assert Cumo::HFloat[Float::NAN].isnan.to_a.first == 1
    assert Cumo::BFloat[nil].isnan.to_a.first == 1
    assert_equal [2.0**-133], Cumo::BFloat[2.0**-133].to_a # bfloat16's smallest subnormal
  end

  def test_casts_between_classes
    h = Cumo::HFloat[2.7, -2.7, 70_000, 0.1]
    assert_equal [2, -2], Cumo::Int32.cast(h[0..1]).to_a
    assert_equal [0.0999755859375], Cumo::HFloat[0.1].to_a
    assert_equal [0.0999755859375], Cumo::DFloat.cast(Cumo::HFloat[0.1]).to_a
    assert_equal [INF], Cumo::SFloat.cast(h[2..2]).to_a
    assert_equal [2048.0], Cumo::BFloat.cast(Cumo::HFloat[2049]).to_a
    assert_equal [255, 0], Cumo::UInt8.cast(Cumo::HFloat[255.9, -0.5]).to_a
    assert_equal [Complex(2.5, 0.0)], Cumo::SComplex.cast(Cumo::HFloat[2.5]).to_a
    assert_equal [1, 0], Cumo::Bit.cast(Cumo::HFloat[0.5, 0.0]).to_a
    assert_instance_of Float, Cumo::HFloat[1].to_a.first
    assert_equal 3.5, Float(Cumo::HFloat[3.5])
    assert_equal 3, Integer(Cumo::HFloat[3.5])
    assert_equal 2.5, Cumo::BFloat[2.5].to_f
  end

  def test_aliases_and_constants
    assert_same Cumo::HFloat, Cumo::Float16
    assert_same Cumo::BFloat, Cumo::BFloat16
    assert_equal 2**-10, Cumo::HFloat::EPSILON
    assert_equal 2**-7, Cumo::BFloat::EPSILON
    assert_equal 2.0**-126, Cumo::BFloat::MIN
    assert_equal 2, Cumo::HFloat.new(3).byte_size / 3
  end

  def test_inspect
    assert_equal "Cumo::HFloat#shape=[2]\n[1.5, 2.25]", Cumo::HFloat[1.5, 2.25].inspect
    assert_equal "Cumo::BFloat#shape=[3]\n[256, 0.333984, inf]", Cumo::BFloat[257, 1.0 / 3, 1e39].inspect
    assert_equal "Cumo::HFloat#shape=[]\n0.0999756", Cumo::HFloat.cast(0.1).inspect
  end

  # ---- promotion: exactly SFloat's ---------------------------------------------

  def test_promotion_as_sfloat
    [Cumo::HFloat, Cumo::BFloat].each do |k|
      x = k[1, 2]
      [Cumo::Bit, Cumo::Int8, Cumo::Int16, Cumo::Int32, Cumo::Int64,
       Cumo::UInt8, Cumo::UInt16, Cumo::UInt32, Cumo::UInt64].each do |i|
        assert_equal k, (x + i[1, 1]).class, "#{k} + #{i}"
        assert_equal k, (i[1, 1] * x).class, "#{i} * #{k}"
      end
      assert_equal k, (x + 1).class
      assert_equal k, (x + 1.5).class
      assert_equal k, (2.5 - x).class
      assert_equal Cumo::SFloat, (x + Cumo::SFloat[1, 1]).class
      assert_equal Cumo::DFloat, (x + Cumo::DFloat[1, 1]).class
      assert_equal Cumo::SComplex, (x + Cumo::SComplex[1, 1]).class
      assert_equal Cumo::DComplex, (x + Cumo::DComplex[1, 1]).class
      assert_equal Cumo::SComplex, (x + 1i).class
      assert_equal k, Cumo::NMath.sqrt(x).class
      assert_equal Cumo::DFloat, Cumo::NMath.atan2(x, 2.0).class # a Ruby Float is a DFloat there
      assert_equal k, k::Math.atan2(x, 2.0).class
    end
    assert_equal Cumo::SFloat, (Cumo::HFloat[1] * Cumo::BFloat[1]).class
  end

  # ---- arithmetic in single precision, rounded back ------------------------------

  def test_every_op_rounds_back_to_the_class
    x = Cumo::HFloat[2048.0]
    assert_equal [2048.0], (x + 1).to_a # 2049 is not a half
    # A fused chain rounds every intermediate as the unfused ops store it.
    assert_equal [0.0], ((x + 1) - 2048).to_a
    y = Cumo::BFloat[256.0]
    assert_equal [0.0], ((y + 1) - 256).to_a
    assert_equal [0.333251953125], (Cumo::HFloat[1] / 3).to_a
    assert_equal [0.333984375], (Cumo::BFloat[1] / 3).to_a
    assert_equal [INF], (Cumo::HFloat[256] * 256).to_a
    assert_equal [65_536.0], (Cumo::BFloat[256] * 256).to_a
    assert_equal [1.4140625], Cumo::NMath.sqrt(Cumo::HFloat[2]).to_a
    assert_equal [1.4140625], Cumo::HFloat::Math.sqrt(Cumo::HFloat[2]).to_a
    assert_equal [1.4140625], (Cumo::HFloat[2]**0.5).to_a
    assert_equal [1, 0], (Cumo::HFloat[2049, 1] > 2047).to_a
    assert_equal [1], Cumo::HFloat[2049].eq(2048).to_a
    assert_equal [-1.5, 1.5, 1.0], [(-Cumo::HFloat[1.5]).to_a, Cumo::HFloat[-1.5].abs.to_a, Cumo::HFloat[7].sign.to_a].flatten
    assert_equal [2.0, -2.0, 3.0], [Cumo::HFloat[2.5].rint.to_a, Cumo::HFloat[-2.5].trunc.to_a, Cumo::HFloat[2.5].round.to_a].flatten
    assert_equal [3.0, 1.0], Cumo::HFloat.maximum(Cumo::HFloat[3, 1], Cumo::HFloat[2, Float::NAN]).to_a
    assert_equal [1.0, 2.0], Cumo::BFloat[0, 3].clip(1, 2).to_a
  end

  # ---- reductions ------------------------------------------------------------------

  def test_sum_and_mean_accumulate_in_single_precision
    h = Cumo::HFloat.new(40_000).fill(1.0)
    assert_equal Cumo::HFloat, h.sum.class
    assert_equal 1.0, Float(h.mean)
    assert_equal [40_000.0, 40_000.0], Cumo::HFloat.new(2, 40_000).fill(1.0).sum(axis: 1).to_a
    assert_equal [39_936.0], Cumo::BFloat.new(1, 40_000).fill(1.0).sum(axis: 1).to_a
    assert_equal 0.5, Float(Cumo::BFloat.new(40_000).fill(0.5).mean)
    x = Cumo::HFloat.new(3, 4).seq
    assert_equal [12.0, 15.0, 18.0, 21.0], x.sum(axis: 0).to_a
    assert_equal [1.5, 5.5, 9.5], x.mean(axis: 1).to_a
  end

  def test_prod_does_not_widen
    assert_equal INF, Float(Cumo::HFloat[300, 300].prod)
    # Both executors fold in the kernels' tree (fusion/reduce_order.h),
    # which multiplies the first element by the third before the second:
    # 256 * 256 leaves half's range and the product stays infinite, where a
    # single-precision accumulator would answer 256.
    assert_equal INF, Float(Cumo::HFloat[256, 1.0 / 256, 256].prod)
    assert_equal 256.0, Float(Cumo::SFloat[256, 1.0 / 256, 256].prod)
    assert_equal Cumo::BFloat, Cumo::BFloat[3, 5].prod.class
    assert_equal 288.0, Float(Cumo::BFloat[17, 17].prod) # 289 is not a bfloat16
  end

  def test_max_and_min_in_the_class
    x = Cumo::HFloat[1, 5, Float::NAN, 3]
    assert_equal Cumo::HFloat, x.max.class
    assert_equal 5.0, Float(x.max)
    assert_equal 1.0, Float(x.min)
    assert_equal [5.0, 3.0], Cumo::BFloat[[1, 5], [3, -2]].max(axis: 1).to_a
  end

  # ---- creation --------------------------------------------------------------------

  def test_fill_seq_rand
    assert_equal [2047.0, 2048.0, 2048.0, 2050.0, 2052.0], Cumo::HFloat.new(5).seq(2047, 1).to_a
    assert_equal [0.0999755859375] * 2, Cumo::HFloat.new(2).fill(0.1).to_a
    assert_equal [0.0, 0.5, 1.0], Cumo::BFloat.new(3).seq(0, 0.5).to_a
    Cumo::NArray.srand(7)
    r = Cumo::HFloat.new(1000).rand
    s = r.to_a
    assert(s.all? { |v| v >= 0.0 && v <= 1.0 })
    assert_equal s, s.map { |v| Cumo::HFloat[v].to_a.first } # every draw is a half
    # The single-precision draw of the same counter, rounded.
    Cumo::NArray.srand(7)
    f = Cumo::SFloat.new(1000).rand
    assert_equal s, Cumo::HFloat.cast(f).to_a
    Cumo::NArray.srand(7)
    b = Cumo::BFloat.new(10).rand(-4, 4).to_a
    assert(b.all? { |v| v >= -4.0 && v <= 4.0 })
    assert_equal [0.0, 0.0], Cumo::HFloat.zeros(2).to_a
    assert_equal [1.0, 1.0], Cumo::BFloat.ones(2).to_a
  end

  def test_stores_and_views
    a = Cumo::HFloat.zeros(4)
    a[1] = 2049
    a[2..3] = Cumo::DFloat[0.1, 70_000]
    assert_equal [0.0, 2048.0, 0.0999755859375, INF], a.to_a
    assert_equal [2048.0, 0.0999755859375], a[1..2].to_a
  end
end
