# frozen_string_literal: true

# inspect, to_a and each: Numo's exact inspect layout (notes section 2: the
# header, "(view)", ", \n " row breaks with their trailing space, elision
# past 80 columns and 20 rows, "(empty)"), %g for floats, and the Ruby
# values to_a and each answer. The expected strings were printed by Numo
# 0.9.2.1, with Numo renamed Cumo.
require "minitest/autorun"
require "cumo/narray"

class TestInspect < Minitest::Test
  # ---- layout --------------------------------------------------------------

  def test_two_dims_break_rows_with_a_trailing_space
    assert_equal "Cumo::DFloat#shape=[3,5]\n[[0, 1, 2, 3, 4], \n [5, 6, 7, 8, 9], \n [10, 11, 12, 13, 14]]",
                 Cumo::DFloat.new(3, 5).seq.inspect
    assert_equal "Cumo::Int32#shape=[2,2]\n[[1, 2], \n [3, 4]]", Cumo::Int32[[1, 2], [3, 4]].inspect
  end

  def test_one_dim
    assert_equal "Cumo::SFloat#shape=[2]\n[1.5, 2.25]", Cumo::SFloat[1.5, 2.25].inspect
    assert_equal "Cumo::Bit#shape=[3]\n[1, 0, 1]", Cumo::Bit[1, 0, 1].inspect
  end

  def test_three_dims_indent_each_reopened_dim
    want = "Cumo::Int32#shape=[2,3,4]\n" \
           "[[[0, 1, 2, 3], \n  [4, 5, 6, 7], \n  [8, 9, 10, 11]], \n" \
           " [[12, 13, 14, 15], \n  [16, 17, 18, 19], \n  [20, 21, 22, 23]]]"
    assert_equal want, Cumo::Int32.new(2, 3, 4).seq.inspect
  end

  def test_0_dim_is_the_element_alone
    assert_equal "Cumo::DFloat#shape=[]\n3.5", Cumo::DFloat.cast(3.5).inspect
    assert_equal "Cumo::DFloat(view)#shape=[]\n6", Cumo::DFloat.new(3, 4).seq[1, 2].inspect
    assert_equal "Cumo::Int64#shape=[]\n10", Cumo::Int32[1, 2, 3, 4].sum.inspect
  end

  def test_views_say_so
    assert_equal "Cumo::DFloat(view)#shape=[5]\n[5, 6, 7, 8, 9]",
                 Cumo::DFloat.new(3, 5).seq[1, true].inspect
    assert_equal "Cumo::DFloat(view)#shape=[2,1]\n[[1], \n [3]]",
                 Cumo::DFloat.new(2, 2).seq[true, 1..1].inspect
  end

  def test_empty_arrays
    assert_equal "Cumo::DFloat#shape=[3](empty)", Cumo::DFloat.new(3).inspect
    assert_equal "Cumo::DFloat#shape=[0,3](empty)", Cumo::DFloat.zeros(0, 3).inspect
    assert_equal "Cumo::DFloat(view)#shape=[0][]", Cumo::DFloat.new(6).seq[3..1].inspect
  end

  # ---- elision -------------------------------------------------------------

  def test_a_long_row_is_cut_at_80_columns
    assert_equal "Cumo::DFloat#shape=[1000]\n[#{(0..20).to_a.join(', ')}, ...]",
                 Cumo::DFloat.new(1000).seq.inspect
    want = "Cumo::DFloat#shape=[2,100]\n" \
           "[[#{(0..19).to_a.join(', ')}, ...], \n" \
           " [#{(100..113).to_a.join(', ')}, ...]]"
    assert_equal want, Cumo::DFloat.new(2, 100).seq.inspect
  end

  def test_more_than_20_rows_stop_without_closing_brackets
    rows = (0...20).map { |i| "[#{3 * i}, #{3 * i + 1}, #{3 * i + 2}]" }
    want = "Cumo::Int32#shape=[30,3]\n[#{rows.join(", \n ")}, \n ..."
    assert_equal want, Cumo::Int32.new(30, 3).seq.inspect
  end

  # ---- element formats ---------------------------------------------------------

  def test_floats_print_with_percent_g
    assert_equal "Cumo::DFloat#shape=[6]\n[1e-05, 1e+20, 0.333333, -0, 1.23457e+08, 123457]",
                 Cumo::DFloat[1e-5, 1e20, 1.0 / 3, -0.0, 123_456_789, 123_456.7].inspect
    assert_equal "Cumo::DFloat#shape=[5]\n[1e+15, nan, -nan, inf, -inf]",
                 Cumo::DFloat[1e15, Float::NAN, -Float::NAN, Float::INFINITY, -Float::INFINITY].inspect
    # single precision is printed from its widened double
    assert_equal "Cumo::SFloat#shape=[2]\n[0.1, 0.333333]", Cumo::SFloat[0.1, 1.0 / 3].inspect
  end

  def test_integer_extremes
    assert_equal "Cumo::UInt64#shape=[1]\n[18446744073709551615]", Cumo::UInt64[2**64 - 1].inspect
    assert_equal "Cumo::Int64#shape=[1]\n[-9223372036854775808]", Cumo::Int64[-2**63].inspect
    assert_equal "Cumo::Int8#shape=[2]\n[-128, 127]", Cumo::Int8[-128, 127].inspect
    assert_equal "Cumo::UInt8#shape=[1]\n[255]", Cumo::UInt8[255].inspect
  end

  def test_inspect_of_a_pending_result_runs_it
    a = Cumo::DFloat[1, 2] * 3 + 1
    assert_equal "Cumo::DFloat#shape=[2]\n[4, 7]", a.inspect
  end

  # ---- to_a --------------------------------------------------------------------

  def test_to_a_answers_nested_ruby_arrays
    assert_equal [[0.0, 1.0], [2.0, 3.0]], Cumo::DFloat.new(2, 2).seq.to_a
    assert_equal [[0, 1], [2, 3]], Cumo::Int64.new(2, 2).seq.to_a
    assert_equal [1, 0], Cumo::Bit[1, 0].to_a # Bit reads as Integers
    assert_equal [0.10000000149011612], Cumo::SFloat[0.1].to_a # widened
    assert_instance_of Float, Cumo::SFloat[1].to_a[0]
    assert_instance_of Integer, Cumo::UInt16[1].to_a[0]
  end

  def test_to_a_of_0_dim_is_a_one_element_array
    assert_equal [3.5], Cumo::DFloat.cast(3.5).to_a
    assert_equal [6], Cumo::Int32[1, 2, 3].sum.to_a
  end

  def test_to_a_of_a_view_is_in_logical_order
    assert_equal [[0.0, 2.0], [1.0, 3.0]], Cumo::DFloat.new(2, 2).seq.transpose.to_a
    assert_equal [3.0, 2.0, 1.0, 0.0], Cumo::DFloat.new(4).seq[(3..0).step(-1)].to_a
  end

  # ---- each ----------------------------------------------------------------------

  def test_each_yields_ruby_numbers_in_row_major_order
    seen = []
    a = Cumo::DFloat.new(2, 2).seq
    assert_same a, a.each { |x| seen << x }
    assert_equal [0.0, 1.0, 2.0, 3.0], seen
    assert(seen.all?(Float))
  end

  def test_each_over_a_view_and_over_bits
    seen = []
    Cumo::Int32.new(2, 3).seq.transpose.each { |x| seen << x }
    assert_equal [0, 3, 1, 4, 2, 5], seen
    bits = []
    Cumo::Bit[1, 0, 1].each { |x| bits << x }
    assert_equal [1, 0, 1], bits
  end

  def test_each_without_a_block_raises
    assert_raises(LocalJumpError) { Cumo::DFloat[1, 2].each }
  end
end
