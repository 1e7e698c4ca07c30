# frozen_string_literal: true

# Indexing with [] and []=: integers, ranges (with steps), true, false,
# :new, Numo's single flat index, views that share memory, writes of
# scalars, arrays and Ruby Arrays, and 0-dim results (a 0-dim NArray where
# Numo answers a Ruby number, unless compatible mode is on). Expectations
# follow notes/numo_semantics.md section 4 and the spec.
require "minitest/autorun"
require "cumo/narray"

class TestIndexing < Minitest::Test
  def setup
    @v = Cumo::DFloat.new(6).seq     # [0, 1, 2, 3, 4, 5]
    @a = Cumo::DFloat.new(3, 4).seq  # [[0..3], [4..7], [8..11]]
  end

  def teardown
    Cumo.disable_compatible_mode
  end

  # ---- integers --------------------------------------------------------------

  def test_integer_indices_and_negative_ones
    assert_equal 6.0, Float(@a[1, 2])
    assert_equal 11.0, Float(@a[-1, -1])
    assert_equal 8.0, Float(@a[-1, 0])
    assert_equal 5.0, Float(@v[-1])
  end

  def test_all_integer_indices_give_a_0_dim_narray
    x = @a[1, 2]
    assert_instance_of Cumo::DFloat, x
    assert_equal [], x.shape
    assert_equal [6.0], x.to_a
    assert_equal "Cumo::DFloat(view)#shape=[]\n6", x.inspect
  end

  def test_float_indices_are_truncated
    assert_equal 6.0, Float(@a[1.7, 2])
  end

  def test_one_index_on_a_2d_array_is_flat
    # Numo's rule: a single index counts row-major elements, not rows.
    assert_equal 1.0, Float(@a[1])
    assert_equal 5.0, Float(@a[5])
    assert_equal 11.0, Float(@a[-1])
  end

  # ---- ranges ------------------------------------------------------------------

  def test_inclusive_exclusive_and_endless_ranges
    assert_equal [1.0, 2.0, 3.0], @v[1..3].to_a
    assert_equal [1.0, 2.0], @v[1...3].to_a
    assert_equal [3.0, 4.0, 5.0], @v[3..].to_a
    assert_equal [3.0, 4.0, 5.0], @v[-3..-1].to_a
    assert_equal [[1.0, 2.0], [5.0, 6.0]], @a[0..1, 1...3].to_a
    assert_equal [[4.0, 5.0, 6.0, 7.0], [8.0, 9.0, 10.0, 11.0]], @a[1.., true].to_a
  end

  def test_ranges_with_steps
    assert_equal [0.0, 2.0, 4.0], @v[(0..5).step(2)].to_a
    assert_equal [0.0, 2.0, 4.0], @v[(0..5) % 2].to_a
    assert_equal [1.0, 4.0], @v[(1..).step(3)].to_a
    assert_equal [[0.0, 1.0, 2.0, 3.0], [8.0, 9.0, 10.0, 11.0]], @a[(0..).step(2), true].to_a
  end

  def test_negative_steps
    assert_equal [5.0, 4.0, 3.0, 2.0, 1.0, 0.0], @v[(5..0).step(-1)].to_a
    assert_equal [5.0, 3.0, 1.0], @v[5.step(0, -2)].to_a
    assert_equal [[3.0, 1.0], [7.0, 5.0], [11.0, 9.0]], @a[true, (3..0).step(-2)].to_a
  end

  # An empty selection takes nothing of a Ruby Array on the right (this
  # wrote through a null pointer once).
  def test_an_array_written_into_an_empty_selection_changes_nothing
    a = Cumo::Int32.new(2, 3).fill(1)
    a[true, []] = [1, 2]
    assert_equal [[1, 1, 1], [1, 1, 1]], a.to_a
    b = Cumo::SFloat.new(2, 3, 4).fill(1)
    b[0..1, -1, :new, []] = [[5, 6]]
    assert_equal 24.0, b.sum.to_f
  end

  def test_a_backwards_range_is_empty
    e = @v[3..1]
    assert_equal [0], e.shape
    assert_equal [], e.to_a
    assert_equal "Cumo::DFloat(view)#shape=[0][]", e.inspect
  end

  # ---- true, false, :new -------------------------------------------------------

  def test_true_takes_the_whole_axis
    assert_equal [4.0, 5.0, 6.0, 7.0], @a[1, true].to_a
    assert_equal [1.0, 5.0, 9.0], @a[true, 1].to_a
    assert_equal [3], @a[true, 1].shape
  end

  def test_false_takes_the_rest
    assert_equal [1.0, 5.0, 9.0], @a[false, 1].to_a
    assert_equal [4.0, 5.0, 6.0, 7.0], @a[1, false].to_a
    b = Cumo::Int32.new(2, 3, 4).seq
    assert_equal [2, 3], b[false, 0].shape
    assert_equal [3], b[1, false, 2].shape
    assert_equal [14, 18, 22], b[1, false, 2].to_a
  end

  def test_new_adds_an_axis
    assert_equal [1, 3, 4], @a[:new, true, true].shape
    assert_equal [3, 1, 4], @a[true, :new, true].shape
    assert_equal [3, 4, 1], @a[true, true, :new].shape
    assert_equal [[0.0, 1.0, 2.0, 3.0, 4.0, 5.0]], @v[:new, true].to_a
  end

  # ---- views share memory --------------------------------------------------------

  def test_slices_are_views
    assert_match(/\ACumo::DFloat\(view\)#shape=\[4\]/, @a[1, true].inspect)
    assert_match(/\ACumo::DFloat#shape=\[3,4\]/, @a.inspect)
  end

  def test_a_write_through_a_view_reaches_the_base
    a = Cumo::SFloat.new(4, 6).seq
    a[0..1, true][0, 0] = 77.0 # the spec's example
    assert_equal 77.0, a.aref_cpu(0, 0)
    r = @a[true, 1]
    r[0] = 100.0
    assert_equal 100.0, @a.aref_cpu(0, 1)
  end

  def test_a_view_sees_later_writes_to_the_base
    r = @a[1, true]
    @a[1, 2] = -1.0
    assert_equal [4.0, 5.0, -1.0, 7.0], r.to_a
  end

  def test_a_view_of_a_view
    inner = @a[1..2, 1..3][true, 1..]
    assert_equal [[6.0, 7.0], [10.0, 11.0]], inner.to_a
    inner[1, 0] = 0.0
    assert_equal 0.0, @a.aref_cpu(2, 2)
  end

  def test_a_value_read_before_a_write_keeps_its_value
    # y was computed from x[1] before the write: it must not see the write.
    x = Cumo::DFloat.new(3).seq
    y = x[1] + 1
    x[1] = 50
    assert_equal [2.0], y.to_a
    assert_equal [0.0, 50.0, 2.0], x.to_a
  end

  # ---- []= -----------------------------------------------------------------

  def test_assign_a_scalar
    @a[1, true] = 0
    assert_equal [[0.0, 1.0, 2.0, 3.0], [0.0, 0.0, 0.0, 0.0], [8.0, 9.0, 10.0, 11.0]], @a.to_a
    @a[-1, -1] = -1
    assert_equal(-1.0, @a.aref_cpu(2, 3))
    @a[4] = 40 # flat
    assert_equal 40.0, @a.aref_cpu(1, 0)
    @a[false, 0] = 9
    assert_equal [9.0, 9.0, 9.0], @a[true, 0].to_a
  end

  def test_assign_answers_the_value
    assert_equal 5, (@v[0] = 5)
  end

  def test_assign_converts_as_c_does
    x = Cumo::Int32.new(3).seq
    x[1] = 2.7
    assert_equal [0, 2, 2], x.to_a
    y = Cumo::DFloat.new(3).seq
    y[1] = nil # Numo stores nil as NaN in a float array
    assert y.to_a[1].nan?
  end

  def test_assign_an_array_broadcasts
    @a[true, true] = Cumo::DFloat[1, 2, 3, 4]
    assert_equal [[1.0, 2.0, 3.0, 4.0]] * 3, @a.to_a
    @v[(0..5).step(2)] = Cumo::DFloat[10, 20, 30]
    assert_equal [10.0, 1.0, 20.0, 3.0, 30.0, 5.0], @v.to_a
  end

  def test_assign_an_array_of_another_class_casts_it
    x = Cumo::SFloat.new(2, 2).seq
    x[0, true] = Cumo::DFloat[0.5, 1.5]
    assert_equal [[0.5, 1.5], [2.0, 3.0]], x.to_a
    assert_instance_of Cumo::SFloat, x
  end

  def test_assign_a_ruby_array_pads_with_zeros_and_ignores_extras
    # Numo's store_array: filled by nesting, no broadcasting.
    @v[1..3] = [7, 8]
    assert_equal [0.0, 7.0, 8.0, 0.0, 4.0, 5.0], @v.to_a
    @v[1..3] = [1, 2, 3, 4]
    assert_equal [0.0, 1.0, 2.0, 3.0, 4.0, 5.0], @v.to_a
    @a[true, true] = [1, 2, 3, 4]
    assert_equal [[1.0, 0.0, 0.0, 0.0], [2.0, 0.0, 0.0, 0.0], [3.0, 0.0, 0.0, 0.0]], @a.to_a
  end

  def test_assign_through_a_strided_view
    x = Cumo::DFloat.new(4, 6).seq
    x[1..2, 1..4][0, true] = 0
    assert_equal [6.0, 0.0, 0.0, 0.0, 0.0, 11.0], x.to_a[1]
    assert_equal [12.0, 13.0, 14.0, 15.0, 16.0, 17.0], x.to_a[2]
  end

  # ---- reading to the host ---------------------------------------------------------

  def test_aref_cpu_answers_ruby_numbers
    assert_equal 6.0, @a.aref_cpu(1, 2)
    assert_equal 5.0, @a.aref_cpu(5)
    assert_equal 3, Cumo::Int32.new(4).seq.aref_cpu(-1)
    assert_instance_of Integer, Cumo::Int32.new(4).seq.aref_cpu(0)
    # not all-integer: still an array
    assert_equal [4.0, 5.0, 6.0, 7.0], @a.aref_cpu(1, true).to_a
  end

  def test_extract_cpu
    assert_equal 6.0, @a[1, 2].extract_cpu
    row = @a[1, true]
    assert_same row, row.extract_cpu
  end

  def test_compatible_mode_answers_ruby_numbers
    Cumo.enable_compatible_mode
    x = @a[1, 2]
    assert_instance_of Float, x
    assert_equal 6.0, x
    assert_equal 3, Cumo::Int32.new(4).seq[3]
    assert_instance_of Cumo::DFloat, @a[1, true] # not 0-dim: unchanged
    Cumo.disable_compatible_mode
    assert_instance_of Cumo::DFloat, @a[1, 2]
  end

  def test_a_0_dim_bit_is_truthy_even_holding_0
    # The spec's warning: read it back before branching.
    a = Cumo::SFloat[5.0]
    cmp = a[0] < 1.0
    assert_instance_of Cumo::Bit, cmp
    assert_equal [0], cmp.to_a
    assert_equal :yes, (cmp ? :yes : :no)
    assert_equal false, a.aref_cpu(0) < 1.0
  end

  # Index arrays and masks, as Numo takes them: each selects along its own
  # axis (orthogonal), a single one among the elements in row-major order.
  def test_index_arrays_read
    a = Cumo::DFloat.new(3, 4).seq
    assert_equal [0, 2], a[[0, 2]].to_a
    assert_equal [[0, 1, 2, 3], [8, 9, 10, 11]], a[[0, 2], true].to_a
    assert_equal [[3, 3, 0], [7, 7, 4], [11, 11, 8]], a[true, [3, -1, 0]].to_a
    assert_equal [[4, 6]], a[[1], [0, 2]].to_a
    assert_equal [[5, 7]], a[1..1, [1, 3]].to_a
    assert_equal [5, 6], a[Cumo::Int32[5, 6]].to_a
    assert_equal [11, 0], a[Cumo::UInt8[11, 0]].to_a
    assert_equal [[0, 1], [2, 3]], a[[[0, 1], [2, 3]]].to_a # a single index keeps its shape
    assert_equal [4, 6], a[1, [0, 2]].to_a # an integer drops its axis
    assert_equal [[[4, 6]]], a[:new, 1..1, [0, 2]].to_a
    assert_equal [], a[[]].to_a
    # A copy: writing it leaves the array as it was.
    c = a[[0, 1]]
    c[0] = 99
    assert_equal 0, Float(a[0, 0])
    # A settled array's gather is read by one kernel.
    kernels = Cumo.explain(a[[1, 2]]).kernels
    assert_equal [[:gather]], kernels.map { |k| k[:ops] }
    assert_equal 1, Cumo.explain((a + 0)[[1, 2]]).kernels.count { |k| k[:kind] == :index }
  end

  def test_masks_read
    a = Cumo::DFloat.new(3, 4).seq
    assert_equal [7, 8, 9, 10, 11], a[a > 6].to_a
    assert_equal [[0, 3], [4, 7], [8, 11]], a[true, Cumo::Bit[1, 0, 0, 1]].to_a
    assert_equal [], a[a > 100].to_a
    assert_instance_of Cumo::Int16, Cumo::Int16[5, 6, 7][Cumo::Bit[0, 1, 1]]
    # Numo's Bit#mask: the elements of its argument where the bit is set.
    assert_equal [5, 7], Cumo::Bit[1, 0, 1].mask(Cumo::DFloat[5, 6, 7]).to_a
    assert_raises(NoMethodError) { Cumo::DFloat[1].mask(Cumo::DFloat[1]) }
  end

  def test_index_arrays_and_masks_write
    b = Cumo::DFloat.new(3, 4).seq
    b[[0, 2], 1] = [100, 200]
    assert_equal [[0, 100, 2, 3], [4, 5, 6, 7], [8, 200, 10, 11]], b.to_a
    b[b > 100] = -1
    assert_equal(-1, Float(b[2, 1]))
    assert_equal 100, Float(b[0, 1])
    b[true, [0]] = Cumo::DFloat[[7], [8], [9]]
    assert_equal [7, 8, 9], b[true, 0].to_a
    b[[1, 3]] = 0.5 # flat positions 1 and 3
    assert_equal [7, 0.5, 2, 0.5], b[0, true].to_a
    # The last write of a position wins, as Numo's loop writes it.
    c = Cumo::Int32[1, 2, 3, 4]
    c[[0, 0, 3]] = Cumo::Int32[7, 8, 9]
    assert_equal [8, 2, 3, 9], c.to_a
    # Through a view, into the array it views.
    a = Cumo::DFloat.new(3, 4).seq
    v = a[1, true]
    v[[0, 3]] = 55
    assert_equal [55, 5, 6, 55], a[1, true].to_a
    assert_equal [0, 1, 2, 3], a[0, true].to_a
  end

  def test_index_array_errors_leave_the_array_as_it_was
    a = Cumo::DFloat.new(3, 4).seq
    assert_raises(IndexError) { a[[12]] }
    assert_raises(IndexError) { a[true, [4]] }
    assert_raises(IndexError) { a[[-4], true] }
    assert_raises(TypeError) { a[Cumo::SFloat[1]] }
    assert_raises(Cumo::NArray::ShapeError) { a[Cumo::Bit[1, 0]] }
    assert_raises(Cumo::NArray::ShapeError) { a[true, Cumo::Bit[1, 0, 1]] }
    assert_raises(IndexError) { a[[0], [1], [2]] }
    assert_raises(IndexError) { a[true, [9]] = 1 }
    assert_raises(Cumo::NArray::ShapeError) { a[[0, 1]] = Cumo::DFloat[1, 2, 3] }
    assert_raises(IndexError) { Cumo::DFloat[] [[0]] }
    assert_equal Cumo::DFloat.new(3, 4).seq.to_a, a.to_a
  end
end
