# frozen_string_literal: true

# Arithmetic and comparison operators: + - * / ** % unary minus and abs,
# broadcasting, Ruby numbers on either side (coerce), Numo's promotion table
# for every pair of classes, C semantics for integer division, remainder and
# overflow, comparisons answering Cumo::Bit and == as whole-array equality.
# The expectations are Numo's (notes/numo_semantics.md sections 1 and 7).
require "minitest/autorun"
require "cumo/narray"

class TestArithmetic < Minitest::Test
  CLASSES = {
    "Bit" => Cumo::Bit, "I8" => Cumo::Int8, "I16" => Cumo::Int16, "I32" => Cumo::Int32,
    "I64" => Cumo::Int64, "U8" => Cumo::UInt8, "U16" => Cumo::UInt16, "U32" => Cumo::UInt32,
    "U64" => Cumo::UInt64, "SF" => Cumo::SFloat, "DF" => Cumo::DFloat
  }.freeze

  # Numo's effective UPCAST table (row op column), read from its source and
  # checked against the built Numo: note Int8 op UInt8 is Int8 and a signed
  # and an unsigned class of one width give the signed one.
  PROMOTION = <<~TABLE
    .    Bit I8  I16 I32 I64 U8  U16 U32 U64 SF  DF
    Bit  Bit I8  I16 I32 I64 U8  U16 U32 U64 SF  DF
    I8   I8  I8  I16 I32 I64 I8  I32 I64 I64 SF  DF
    I16  I16 I16 I16 I32 I64 I16 I16 I32 I64 SF  DF
    I32  I32 I32 I32 I32 I64 I32 I32 I32 I64 SF  DF
    I64  I64 I64 I64 I64 I64 I64 I64 I64 I64 SF  DF
    U8   U8  I8  I16 I32 I64 U8  U16 U32 U64 SF  DF
    U16  U16 I32 I16 I32 I64 U16 U16 U32 U64 SF  DF
    U32  U32 I64 I32 I32 I64 U32 U32 U32 U64 SF  DF
    U64  U64 I64 I64 I64 I64 U64 U64 U64 U64 SF  DF
    SF   SF  SF  SF  SF  SF  SF  SF  SF  SF  SF  DF
    DF   DF  DF  DF  DF  DF  DF  DF  DF  DF  DF  DF
  TABLE

  def self.promotion_pairs
    header, *rows = PROMOTION.lines.map(&:split)
    rows.flat_map do |row|
      row[1..].each_with_index.map do |result, j|
        [CLASSES.fetch(row[0]), CLASSES.fetch(header[j + 1]), CLASSES.fetch(result)]
      end
    end
  end

  # ---- promotion -----------------------------------------------------------

  def test_promotion_table_for_every_pair
    self.class.promotion_pairs.each do |left, right, want|
      next if left == Cumo::Bit && right == Cumo::Bit # Bit has no arithmetic

      a = left.cast(operand_values(left, [1, 0, 1], [3, 0, 5]))
      b = right.cast(operand_values(right, [1, 1, 0], [2, 4, 1]))
      sum = a + b
      product = a * b
      label = "#{left} op #{right}"
      assert_instance_of want, sum, label
      assert_instance_of want, product, label
      assert_equal a.to_a.zip(b.to_a).map { |x, y| x + y }, sum.to_a, label
      assert_equal a.to_a.zip(b.to_a).map { |x, y| x * y }, product.to_a, label
    end
  end

  def test_int8_with_uint8_is_int8_and_wraps
    # UInt8 200 becomes Int8 -56, plus 1.
    r = Cumo::Int8[1] + Cumo::UInt8[200]
    assert_instance_of Cumo::Int8, r
    assert_equal [-55], r.to_a
  end

  def test_ruby_integer_never_widens
    r = Cumo::Int8[1] + 200
    assert_instance_of Cumo::Int8, r
    assert_equal [-55], r.to_a
    assert_equal [4], (Cumo::UInt8[250] + 10).to_a
    assert_instance_of Cumo::SFloat, Cumo::SFloat[1] + 1
  end

  def test_ruby_float_widens_integers_but_not_sfloat
    [Cumo::Int8, Cumo::Int32, Cumo::UInt64].each do |klass|
      r = klass[7] / 2.0
      assert_instance_of Cumo::DFloat, r, klass.name
      assert_equal [3.5], r.to_a
    end
    s = Cumo::SFloat[1] + 1.1
    assert_instance_of Cumo::SFloat, s
    # single precision arithmetic, read back widened
    assert_equal [2.0999999046325684], s.to_a
  end

  def test_ruby_array_operand_takes_the_receivers_class
    r = Cumo::Int32[1, 2] + [1.5, 2]
    assert_instance_of Cumo::Int32, r
    assert_equal [2, 4], r.to_a
  end

  def test_bit_operand_is_cast_to_the_other_class
    r = Cumo::Int32[1, 2] + Cumo::Bit[1, 1]
    assert_instance_of Cumo::Int32, r
    assert_equal [2, 3], r.to_a
  end

  def test_float_results_round_in_their_class
    assert_equal [0.30000001192092896], (Cumo::SFloat[0.1] * 3).to_a
    assert_equal [0.30000000000000004], (Cumo::DFloat[0.1] * 3).to_a
  end

  # ---- the operators -------------------------------------------------------

  def test_each_operator_on_floats
    a = Cumo::DFloat[1, 2, 3]
    b = Cumo::DFloat[4, 5, 6]
    assert_equal [5.0, 7.0, 9.0], (a + b).to_a
    assert_equal [-3.0, -3.0, -3.0], (a - b).to_a
    assert_equal [4.0, 10.0, 18.0], (a * b).to_a
    assert_equal [0.25, 0.4, 0.5], (a / b).to_a
    assert_equal [1.0, 32.0, 729.0], (a**b).to_a
    assert_equal [1.0, 2.0, 3.0], (a % b).to_a
    assert_equal [-1.0, -2.0, -3.0], (-a).to_a
    assert_equal [1.5, 2.0, 0.0], Cumo::DFloat[-1.5, 2, -0.0].abs.to_a
    assert_same a, +a
  end

  def test_float_division_follows_ieee
    r = (Cumo::DFloat[1, -1, 0] / 0).to_a
    assert_equal [Float::INFINITY, -Float::INFINITY], r[0, 2]
    assert r[2].nan?
  end

  def test_float_remainder_takes_the_dividends_sign
    # C fmod, not Ruby's %
    assert_equal [1.0, -1.0, 1.0, -1.0],
                 (Cumo::DFloat[7, -7, 7, -7] % Cumo::DFloat[2, 2, -2, -2]).to_a
  end

  def test_integer_division_truncates_and_remainder_takes_the_dividends_sign
    a = Cumo::Int32[7, -7, 7, -7]
    b = Cumo::Int32[2, 2, -2, -2]
    assert_equal [3, -3, -3, 3], (a / b).to_a
    assert_equal [1, -1, 1, -1], (a % b).to_a
    assert_equal [-3], (-7 / Cumo::Int32[2]).to_a
    assert_equal [1, 1], (7 % Cumo::Int32[3, -3]).to_a
  end

  def test_integer_division_by_zero_raises
    # Numo raises ZeroDivisionError; a lazy library may raise at the call
    # or at the read that runs the kernel, but it must not answer a number.
    assert_raises(ZeroDivisionError) { (Cumo::Int32[1, 2] / 0).to_a }
    assert_raises(ZeroDivisionError) { (Cumo::Int32[1, 2] % Cumo::Int32[1, 0]).to_a }
  end

  def test_integer_overflow_wraps
    assert_equal [-128], (Cumo::Int8[127] + 1).to_a
    assert_equal [255], (Cumo::UInt8[0] - 1).to_a
    assert_equal [255], (-Cumo::UInt8[1]).to_a
    assert_equal [0], (Cumo::Int32[65536] * Cumo::Int32[65536]).to_a
    assert_equal [4_294_967_295], (Cumo::UInt32[0] - 1).to_a
    assert_equal [-2**63], (Cumo::Int64[2**63 - 1] + 1).to_a
  end

  def test_integer_power
    r = Cumo::Int32[2, 3]**2
    assert_instance_of Cumo::Int32, r
    assert_equal [4, 9], r.to_a
    assert_equal [0], (Cumo::UInt8[16]**2).to_a # wraps
    assert_equal [0, 0], (Cumo::Int32[2, 1]**-1).to_a # a negative exponent gives 0
    f = Cumo::Int32[4, 9]**0.5
    assert_instance_of Cumo::DFloat, f
    # CUDA's pow is within 2 ulps of the true value (9 ** 0.5 may answer
    # 2.9999999999999996 there); glibc's is exact here.
    [2.0, 3.0].zip(f.to_a) { |want, got| assert_in_delta want, got, 4 * Float::EPSILON * want }
    assert_equal [0.25], (Cumo::DFloat[2]**-2).to_a
  end

  def test_abs_keeps_the_class
    r = Cumo::Int16[-3, 4].abs
    assert_instance_of Cumo::Int16, r
    assert_equal [3, 4], r.to_a
  end

  # ---- broadcasting --------------------------------------------------------

  def test_broadcasting_aligns_trailing_axes
    r = Cumo::DFloat[1, 2] + Cumo::DFloat[[1], [2], [3]]
    assert_equal [3, 2], r.shape
    assert_equal [[2.0, 3.0], [3.0, 4.0], [4.0, 5.0]], r.to_a
  end

  def test_broadcasting_a_row_and_a_0_dim_array
    m = Cumo::Int32.new(2, 3).seq
    assert_equal [[0, 2, 4], [3, 5, 7]], (m + Cumo::Int32[0, 1, 2]).to_a
    assert_equal [[0, 10, 20], [30, 40, 50]], (m * Cumo::Int32.cast(10)).to_a
  end

  # ---- Ruby numbers on either side (coerce) ------------------------------------

  def test_numbers_on_the_left
    assert_equal [0.0, -1.0], (1.0 - Cumo::DFloat[1, 2]).to_a
    r = 1.5 - Cumo::Int32[1, 2]
    assert_instance_of Cumo::DFloat, r
    assert_equal [0.5, -0.5], r.to_a
    i = 1 - Cumo::Int32[1, 2]
    assert_instance_of Cumo::Int32, i
    assert_equal [0, -1], i.to_a
    assert_equal [1], (3 / Cumo::Int32[2]).to_a
    assert_equal [2, 4], (2**Cumo::Int32[1, 2]).to_a
    assert_instance_of Cumo::DFloat, 2.0**Cumo::Int32[1, 2]
    assert_equal [9.0], (10 - Cumo::SFloat[1]).to_a
    assert_instance_of Cumo::SFloat, 2.5 * Cumo::SFloat[2]
  end

  # ---- comparisons -----------------------------------------------------------

  def test_comparisons_answer_bit
    a = Cumo::DFloat[1, 2, 3]
    {
      eq: [0, 1, 0], ne: [1, 0, 1], gt: [0, 0, 1], ge: [0, 1, 1], lt: [1, 0, 0], le: [1, 1, 0],
      :> => [0, 0, 1], :>= => [0, 1, 1], :< => [1, 0, 0], :<= => [1, 1, 0]
    }.each do |op, want|
      r = a.public_send(op, 2)
      assert_instance_of Cumo::Bit, r, op.to_s
      assert_equal want, r.to_a, op.to_s
    end
  end

  def test_comparisons_broadcast_and_promote
    assert_equal [1, 1, 0], (Cumo::Int32[1, 2, 3] <= Cumo::Int32[3, 2, 1]).to_a
    # 2.5 is not truncated to the Int32 2: the comparison is in DFloat.
    assert_equal [0, 0, 1], Cumo::Int32[1, 2, 3].gt(2.5).to_a
    r = Cumo::DFloat[[1], [2]].eq(Cumo::DFloat[1, 2])
    assert_equal [[1, 0], [0, 1]], r.to_a
    assert_equal [0, 1], (1 < Cumo::DFloat[0, 2]).to_a
  end

  def test_comparisons_with_nan_are_false
    a = Cumo::DFloat[Float::NAN, 1]
    assert_equal [0, 1], a.eq(a).to_a
    assert_equal [0, 1], a.gt(0).to_a
    assert_equal [1, 0], a.ne(1).to_a
  end

  # ---- == is whole-array equality ------------------------------------------------

  def test_double_equals_compares_whole_arrays
    assert_equal true, Cumo::DFloat[1, 2] == Cumo::DFloat[1, 2]
    assert_equal false, Cumo::DFloat[1, 2] == Cumo::DFloat[1, 3]
    assert_equal true, Cumo::Int32[1, 2] == [1, 2]
    assert_equal true, Cumo::Int32[1, 2] == Cumo::DFloat[1, 2]
    assert_equal false, Cumo::Int32[1, 1] == 1 # the 0-dim shape differs
    assert_equal true, Cumo::DFloat.cast(1) == 1
    assert_equal false, Cumo::DFloat[Float::NAN] == Cumo::DFloat[Float::NAN]
    assert_equal false, Cumo::DFloat[1, 2] == Cumo::DFloat[[1, 2]]
    assert_equal true, Cumo::DFloat[1, 2] != Cumo::DFloat[1, 3]
  end

  # ---- inplace (Numo's flag) -------------------------------------------------

  def test_an_op_on_an_inplace_view_writes_into_the_array_and_answers_the_view
    a = Cumo::DFloat[1, 2, 3]
    b = a.inplace
    assert b.inplace?
    refute a.inplace?
    assert_same b, b + 1
    assert_equal [2.0, 3.0, 4.0], a.to_a
    assert_same b, -b
    assert_equal [-2.0, -3.0, -4.0], a.to_a
  end

  def test_inplace_bang_flags_the_receiver_until_out_of_place
    a = Cumo::SFloat[1, 2]
    assert_same a, a.inplace!
    assert_same a, a * 3
    assert_same a, Cumo::NMath.sqrt(a)
    assert_in_delta 3.0**0.5, a[0].to_f, 1e-6
    a.out_of_place!
    refute a.inplace?
    b = a + 1
    refute_same a, b
    a.inplace!
    a.not_inplace!
    refute a.inplace?
  end

  def test_an_inplace_view_of_part_writes_into_that_part
    a = Cumo::Int32[1, 2, 3, 4]
    a[1..2].inplace * 10
    assert_equal [1, 20, 30, 4], a.to_a
  end

  # Numo answers a new array where the result's class or shape differs.
  def test_a_result_of_another_class_or_shape_is_a_new_array
    i = Cumo::Int32[1, 2].inplace
    r = i + 1.5
    assert_instance_of Cumo::DFloat, r
    assert_equal [1, 2], i.to_a
    c = i > 1
    assert_instance_of Cumo::Bit, c
    s = Cumo::DFloat[1, 2].inplace
    wide = s + Cumo::DFloat[[1], [2]]
    assert_equal [2, 2], wide.shape
    assert_equal [1.0, 2.0], s.to_a
  end

  def test_a_frozen_array_takes_no_inplace_flag
    a = Cumo::DFloat[1].freeze
    assert_raises(FrozenError) { a.inplace }
    assert_raises(FrozenError) { a.inplace! }
  end

  private

  # Bit holds 0 and 1 only; every other class takes the wider values.
  def operand_values(klass, bit_values, values)
    klass == Cumo::Bit ? bit_values : values
  end
end
