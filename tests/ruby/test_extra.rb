# frozen_string_literal: true

# Numo's methods of numo/narray/extra.rb and its typed classes, written in
# lib/cumo/extra.rb on the public API: copy, trace, tril/triu and their
# indices, poly, each_over_axis, at, nearly_eq. Answers as Numo's.
require "minitest/autorun"
require "cumo/narray"

class TestExtra < Minitest::Test
  def setup
    @a = Cumo::DFloat.new(3, 3).seq # [[0, 1, 2], [3, 4, 5], [6, 7, 8]]
  end

  def test_copy_is_a_new_array_with_the_same_elements
    c = @a.copy
    refute_same @a, c
    c[0, 0] = 100
    assert_equal 0.0, @a[0, 0].to_f
  end

  def test_trace_sums_a_diagonal
    assert_equal 12.0, @a.trace.to_f
    assert_equal 6.0, @a.trace(1).to_f
    assert_equal [3, 11], Cumo::Int32.new(2, 2, 2).seq.trace(0, [1, 2]).to_a
  end

  def test_triangles_and_their_indices
    assert_equal [0, 3, 4, 6, 7, 8], @a.tril_indices.to_a
    assert_equal [0, 1, 2, 4, 5, 8], @a.triu_indices.to_a
    assert_equal [1, 2, 5], @a.triu_indices(1).to_a
    assert_equal [[0, 0, 0], [3, 4, 0], [6, 7, 8]], @a.tril.to_a
    assert_equal [[0, 1, 2], [0, 4, 5], [0, 0, 8]], @a.triu.to_a
    assert_equal [[0, 0, 0], [3, 0, 0], [6, 7, 0]], @a.tril(-1).to_a
    assert_equal [[0, 1, 2], [0, 0, 5], [0, 0, 0]], @a.triu(1).to_a
    # every matrix of a stack
    b = Cumo::Int32.new(2, 2, 3).seq
    assert_equal [[[0, 0, 0], [3, 4, 0]], [[6, 0, 0], [9, 10, 0]]], b.tril.to_a
    # the bang forms write into the receiver and answer it
    c = @a.dup
    assert_same c, c.triu!
    assert_equal @a.triu.to_a, c.to_a
    assert_equal [[0, 1, 2], [3, 4, 5], [6, 7, 8]], @a.to_a
  end

  def test_poly_evaluates_by_horner
    x = Cumo::DFloat[0, 1, 2]
    assert_equal [1.0, 6.0, 17.0], x.poly(1, 2, 3).to_a # 1 + 2x + 3x^2
    assert_equal [5.0, 5.0, 5.0], x.poly(5).to_a
  end

  def test_each_over_axis_yields_the_slices
    assert_equal [[0, 1, 2], [3, 4, 5], [6, 7, 8]], @a.each_over_axis.map(&:to_a)
    assert_equal [[0, 3, 6], [1, 4, 7], [2, 5, 8]], @a.each_over_axis(1).map(&:to_a)
    assert_equal [[0, 3, 6], [1, 4, 7], [2, 5, 8]], @a.each_over_axis(-1).map(&:to_a)
  end

  def test_at_picks_one_element_per_index_tuple
    assert_equal [0.0, 4.0, 8.0], @a.at([0, 1, 2], [0, 1, 2]).to_a
    assert_equal [7.0, 1.0], @a.at(Cumo::Int32[2, 0], [1, 1]).to_a
    assert_equal [6.0], @a.at([-1], [0]).to_a
    assert_equal [3.0, 1.0], Cumo::DFloat[1, 2, 3].at([2, 0]).to_a
  end

  def test_nearly_eq_within_twice_the_class_epsilon
    assert_equal [1, 0], Cumo::DFloat[1, 2].nearly_eq(Cumo::DFloat[1 + 1e-16, 2.1]).to_a
    assert_equal [1], Cumo::SFloat[1].nearly_eq(1.0000001).to_a
    assert_equal [0], Cumo::SFloat[1].nearly_eq(1.001).to_a
    assert_equal [1, 0], Cumo::DFloat[1, 2].nearly_eq([1, 2.1]).to_a # an Array is cast
    [true, nil, "1"].each do |other|
      e = assert_raises(TypeError) { Cumo::SFloat[1].nearly_eq(other) }
      assert_equal "[nearly_eq] expected Cumo::NArray, an Array or a number, not #{other.class}", e.message
    end
  end

  def test_bad_arguments_name_the_method
    e = assert_raises(Cumo::NArray::ShapeError) { Cumo::DFloat[1, 2].tril }
    assert_includes e.message, "[tril]"
    e = assert_raises(ArgumentError) { @a.at([0], [0], [0]) }
    assert_includes e.message, "[at]"
    e = assert_raises(ArgumentError) { @a.at([0, 1], [0]) }
    assert_includes e.message, "[at]"
    e = assert_raises(TypeError) { @a.at(0, 0) }
    assert_includes e.message, "[at]"
    e = assert_raises(ArgumentError) { @a.each_over_axis(3).to_a }
    assert_includes e.message, "[each_over_axis]"
    e = assert_raises(ArgumentError) { @a.poly }
    assert_includes e.message, "[poly]"
    e = assert_raises(TypeError) { @a.triu("1") }
    assert_includes e.message, "[triu]"
  end
end
