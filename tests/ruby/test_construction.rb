# frozen_string_literal: true

# Construction and the basic properties of an array: new, zeros, ones, seq,
# rand, [] literals, cast, dup, fill, shape queries, contiguous?, reshape,
# reshape!, transpose and flatten. Every expectation is what Numo answers
# (notes/numo_semantics.md section 3) or what the spec prints, except where
# a comment says the spec departs from Numo on purpose.
require "minitest/autorun"
require "cumo/narray"

class TestConstruction < Minitest::Test
  INT_CLASSES = [Cumo::Int8, Cumo::Int16, Cumo::Int32, Cumo::Int64,
                 Cumo::UInt8, Cumo::UInt16, Cumo::UInt32, Cumo::UInt64].freeze
  FLOAT_CLASSES = [Cumo::SFloat, Cumo::DFloat].freeze

  # ---- new ---------------------------------------------------------------

  def test_new_is_uninitialized_and_inspects_as_empty
    a = Cumo::DFloat.new(3)
    assert_equal [3], a.shape
    assert_equal "Cumo::DFloat#shape=[3](empty)", a.inspect
    assert_equal "Cumo::Int32#shape=[2,3](empty)", Cumo::Int32.new(2, 3).inspect
  end

  def test_new_takes_a_shape_array_and_no_arguments_for_0_dim
    assert_equal [2, 3], Cumo::DFloat.new([2, 3]).shape
    assert_equal [], Cumo::DFloat.new.shape
    assert_equal 0, Cumo::DFloat.new.ndim
  end

  def test_a_size_0_array_was_never_allocated
    # Numo prints "(empty)" for any size-0 array that is not a view.
    assert_equal "Cumo::DFloat#shape=[0,3](empty)", Cumo::DFloat.zeros(0, 3).inspect
    assert_equal "Cumo::DFloat#shape=[0](empty)", Cumo::DFloat[].inspect
  end

  # ---- zeros and ones ----------------------------------------------------

  def test_zeros_and_ones_in_every_class
    (INT_CLASSES + FLOAT_CLASSES).each do |klass|
      z = klass.zeros(2, 3)
      o = klass.ones(2, 3)
      assert_instance_of klass, z
      assert_instance_of klass, o
      assert_equal [[0, 0, 0], [0, 0, 0]], z.to_a, klass.name
      assert_equal [[1, 1, 1], [1, 1, 1]], o.to_a, klass.name
    end
    assert_equal [1, 1, 1], Cumo::Bit.ones(3).to_a
    assert_equal [0, 0], Cumo::Bit.zeros(2).to_a
  end

  def test_zeros_without_a_shape_is_0_dim
    z = Cumo::DFloat.zeros
    assert_equal [], z.shape
    assert_equal "Cumo::DFloat#shape=[]\n0", z.inspect
  end

  # ---- seq -----------------------------------------------------------------

  def test_seq_quick_start
    a = Cumo::DFloat.new(3, 5).seq
    assert_equal "Cumo::DFloat#shape=[3,5]\n[[0, 1, 2, 3, 4], \n [5, 6, 7, 8, 9], \n [10, 11, 12, 13, 14]]",
                 a.inspect
    assert_equal [3, 5], a.shape
    assert_equal 2, a.ndim
    assert_equal Cumo::DFloat, a.class
    assert_equal 15, a.size
  end

  def test_seq_answers_self
    a = Cumo::DFloat.new(3)
    assert_same a, a.seq
  end

  def test_seq_with_begin_and_step
    assert_equal [1.0, 1.5, 2.0, 2.5], Cumo::DFloat.new(4).seq(1, 0.5).to_a
    assert_equal [10, 7, 4], Cumo::Int32.new(3).seq(10, -3).to_a
    assert_equal [[5, 6], [7, 8]], Cumo::Int64.new(2, 2).seq(5).to_a
  end

  def test_integer_seq_computes_in_double_then_converts
    # 1.5, 2.0, 2.5, 3.0, 3.5 truncated toward zero.
    assert_equal [1, 2, 2, 3, 3], Cumo::Int32.new(5).seq(1.5, 0.5).to_a
    # 199 does not fit Int8 and wraps, as Numo's C conversion does.
    assert_equal(-57, Cumo::Int8.new(200).seq.to_a.last)
  end

  def test_indgen_is_seq
    assert_equal [0, 1, 2], Cumo::Int16.new(3).indgen.to_a
  end

  # ---- rand --------------------------------------------------------------

  def test_float_rand_ranges
    FLOAT_CLASSES.each do |klass|
      assert_in_range klass.new(500).rand.to_a, 0.0, 1.0, klass
      assert_in_range klass.new(500).rand(3).to_a, 0.0, 3.0, klass
      assert_in_range klass.new(500).rand(-3, 2).to_a, -3.0, 2.0, klass
    end
  end

  def test_integer_rand_needs_a_maximum_and_stays_in_range
    Cumo::NArray.srand(1)
    INT_CLASSES.each do |klass|
      assert_raises(ArgumentError, klass.name) { klass.new(3).rand }
      values = klass.new(1000).rand(5).to_a
      assert values.all?(Integer)
      assert_equal [0, 1, 2, 3, 4], values.uniq.sort, klass.name
    end
    values = Cumo::Int32.new(1000).rand(-3, 2).to_a
    assert_equal [-3, -2, -1, 0, 1], values.uniq.sort
  end

  def test_srand_makes_rand_reproducible
    Cumo::NArray.srand(1)
    first = Cumo::DFloat.new(5).rand.to_a
    Cumo::NArray.srand(1)
    again = Cumo::DFloat.new(5).rand.to_a
    Cumo::NArray.srand(2)
    other = Cumo::DFloat.new(5).rand.to_a
    assert_equal first, again
    refute_equal first, other
    # The stream moves on between calls under one seed.
    Cumo::NArray.srand(1)
    Cumo::DFloat.new(5).rand.to_a
    refute_equal first, Cumo::DFloat.new(5).rand.to_a
  end

  def test_rand_answers_self
    a = Cumo::SFloat.new(2)
    assert_same a, a.rand
  end

  # ---- [] literals -------------------------------------------------------

  def test_narray_literal_infers_the_class
    assert_instance_of Cumo::Int32, Cumo::NArray[1, 2]
    assert_instance_of Cumo::Int32, Cumo::NArray[-2**31, 2**31 - 1]
    assert_instance_of Cumo::Int64, Cumo::NArray[2**31]
    assert_instance_of Cumo::Int64, Cumo::NArray[2**40]
    assert_instance_of Cumo::DFloat, Cumo::NArray[1.0, 2]
    assert_instance_of Cumo::DFloat, Cumo::NArray[[1, 2], [3, 4.5]]
    assert_instance_of Cumo::Bit, Cumo::NArray[true, false]
    assert_equal [1, 0], Cumo::NArray[true, false].to_a
    assert_equal [2**40], Cumo::NArray[2**40].to_a
  end

  def test_class_literal_converts_to_its_class
    a = Cumo::SFloat[[1, 2], [3, 4]]
    assert_instance_of Cumo::SFloat, a
    assert_equal [[1.0, 2.0], [3.0, 4.0]], a.to_a
    assert_equal [1, -1], Cumo::Int32[1.7, -1.7].to_a
    # A one-element literal is shape [1], not 0-dim.
    assert_equal [1], Cumo::DFloat[5].shape
  end

  def test_ragged_rows_are_zero_padded
    assert_equal [[1, 2], [3, 0]], Cumo::NArray[[1, 2], [3]].to_a
    assert_equal [[1.0, 2.0, 0.0], [3.0, 4.0, 5.0]], Cumo::SFloat[[1, 2], [3, 4, 5]].to_a
  end

  # A number beside an empty Array: rows of no elements, nothing stored
  # (this wrote through a null pointer once).
  def test_a_number_beside_an_empty_array_makes_empty_rows
    assert_equal [2, 0], Cumo::SFloat[1, []].shape
    assert_equal [[], []], Cumo::Int32[1.5, []].to_a
    assert_equal [2, 0], Cumo::SFloat[[], 1].shape
    assert_equal [2, 1, 0], Cumo::DFloat[[[]], 2].shape
  end

  # ---- cast ----------------------------------------------------------------

  def test_cast_of_the_same_class_answers_self
    a = Cumo::DFloat[1, 2]
    assert_same a, Cumo::DFloat.cast(a)
  end

  def test_cast_of_a_number_is_0_dim
    a = Cumo::DFloat.cast(3.5)
    assert_equal [], a.shape
    assert_equal "Cumo::DFloat#shape=[]\n3.5", a.inspect
    assert_equal [3], Cumo::Int32.cast(3).to_a
  end

  def test_cast_converts_other_classes_and_arrays
    b = Cumo::Int32.cast(Cumo::DFloat[1.7, -1.7])
    assert_instance_of Cumo::Int32, b
    assert_equal [1, -1], b.to_a
    assert_equal [[1.0, 2.0]], Cumo::SFloat.cast([[1, 2]]).to_a
    c = Cumo::DFloat[1, 2].cast_to(Cumo::Int64)
    assert_instance_of Cumo::Int64, c
  end

  # ---- dup and fill --------------------------------------------------------

  def test_dup_is_a_copy
    a = Cumo::DFloat[1, 2, 3]
    d = a.dup
    d[0] = 9.0
    assert_equal [1.0, 2.0, 3.0], a.to_a
    assert_equal [9.0, 2.0, 3.0], d.to_a
    # and the other way round
    a[2] = 7.0
    assert_equal [9.0, 2.0, 3.0], d.to_a
  end

  def test_dup_of_a_view_is_a_contiguous_copy
    v = Cumo::DFloat.new(2, 4).seq[true, 0...2]
    refute v.contiguous?
    d = v.dup
    assert d.contiguous?
    assert_equal [[0.0, 1.0], [4.0, 5.0]], d.to_a
  end

  def test_fill_answers_self_and_converts_as_c_does
    a = Cumo::DFloat.new(3)
    assert_same a, a.fill(2.5)
    assert_equal [2.5, 2.5, 2.5], a.to_a
    assert_equal [7, 7], Cumo::Int32.new(2).fill(7.9).to_a
    assert_equal [-7], Cumo::Int32.new(1).fill(-7.9).to_a
    assert_equal [255], Cumo::UInt8.new(1).fill(-1).to_a
    assert_equal [0], Cumo::UInt8.new(1).fill(256).to_a
    assert_equal [-56], Cumo::Int8.new(1).fill(200).to_a
    assert_equal [1, 1], Cumo::Bit.new(2).fill(true).to_a
  end

  # ---- shape queries -----------------------------------------------------

  def test_shape_ndim_size_class
    a = Cumo::Int16.new(2, 3, 4).seq
    assert_equal [2, 3, 4], a.shape
    assert_equal 3, a.ndim
    assert_equal 24, a.size
    assert_equal Cumo::Int16, a.class
    assert_kind_of Cumo::NArray, a
    assert_equal 48, a.byte_size
    refute a.empty?
    assert Cumo::DFloat.zeros(0).empty?
  end

  def test_class_aliases
    assert_same Cumo::DFloat, Cumo::Float64
    assert_same Cumo::SFloat, Cumo::Float32
  end

  # ---- contiguous? (the spec's "A Length-One Axis Does Not Break Contiguity")

  def test_a_length_one_axis_does_not_break_contiguity
    a = Cumo::DFloat.new(1, 4).seq
    # true where Numo gives false: the length-one axis cannot stride.
    assert a[true, 0...2].contiguous?
    assert_equal [[0.0, 1.0]], a[true, 0...2].to_a
    refute Cumo::DFloat.new(2, 4).seq[true, 0...2].contiguous?
    assert Cumo::DFloat.new(1, 1, 4).seq[true, true, 0...2].contiguous?
    assert Cumo::DFloat.new(1, 3).seq.transpose.contiguous?
  end

  def test_reshape_bang_accepts_a_view_with_a_length_one_axis
    v = Cumo::DFloat.new(1, 4).seq[true, 0...2]
    v.reshape!(2)
    assert_equal [2], v.shape
    assert_equal [0.0, 1.0], v.to_a
  end

  # ---- reshape copies, reshape! does not ------------------------------------

  def test_reshape_copies_and_slicing_views
    a = Cumo::SFloat.new(4, 6).seq
    a[0..1, true][0, 0] = 77.0     # a view, so a changes
    a.reshape(2, 12)[0, 0] = 99.0  # a copy, so a does not
    assert_equal 77.0, a.aref_cpu(0, 0)
    assert_equal [77.0, 1.0, 2.0], a.to_a[0][0, 3]
  end

  def test_reshape_of_a_settled_array_is_a_copy_to_its_writers
    # The reshape reads a's buffer where it lies (no kernel), but a write
    # through either array leaves the other as it was.
    a = Cumo::SFloat.new(4, 6).seq
    Cumo.sync
    b = a.reshape(2, 12)
    assert_empty Cumo.explain(b).kernels, Cumo.explain(b).to_s
    b[0, 0] = 99.0
    a[0, 1] = 55.0
    assert_equal [99.0, 1.0, 2.0], b.to_a[0][0, 3]
    assert_equal [0.0, 55.0, 2.0], a.to_a[0][0, 3]
    assert_equal 23.0, b.aref_cpu(1, 11)
  end

  def test_a_held_reshape_of_a_computed_value_views_its_buffer
    a = Cumo::DFloat.new(3, 4).seq
    Cumo.sync
    y = a * 2.0 + 1.0
    z = y.reshape(2, 2, 3)
    w = z.reshape(12)
    plan = Cumo.explain(y, z, w)
    assert_equal 1, plan.kernels.size, plan.to_s
    want = (0...12).map { |i| i * 2.0 + 1.0 }
    assert_equal want, w.to_a
    assert_equal want.each_slice(3).each_slice(2).to_a, z.to_a
    assert_equal want.each_slice(4).to_a, y.to_a
    # y alone was not held: the reshapes still read it.
    t = (a - 1.0).reshape(4, 3)
    assert_equal 1, Cumo.explain(t).kernels.size
    assert_equal (0...12).map { |i| i - 1.0 }.each_slice(3).to_a, t.to_a
  end

  def test_reshape_answers_the_new_shape
    a = Cumo::DFloat.new(2, 3).seq
    b = a.reshape(3, 2)
    assert_equal [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]], b.to_a
    assert_equal [2, 3], a.shape
    assert_equal [3, 2], a.reshape(nil, 2).shape
  end

  def test_reshape_of_a_view_reads_it_in_order
    t = Cumo::DFloat.new(2, 3).seq.transpose
    assert_equal [0.0, 3.0, 1.0, 4.0, 2.0, 5.0], t.reshape(6).to_a
  end

  def test_reshape_bang_changes_the_receiver_in_place
    x = Cumo::DFloat.new(2, 3).seq * 2.0 # a temporary nothing else holds
    assert_same x, x.reshape!(3, 2)
    assert_equal [3, 2], x.shape
    assert_equal [[0.0, 2.0], [4.0, 6.0], [8.0, 10.0]], x.to_a
  end

  def test_reshape_bang_of_a_whole_array_is_not_a_view
    # Numo's reshape! only changes the shape: the array stays what it was.
    a = Cumo::DFloat.new(2, 3).seq
    a.reshape!(6)
    assert_equal "Cumo::DFloat#shape=[6]\n[0, 1, 2, 3, 4, 5]", a.inspect
  end

  # ---- transpose and flatten ---------------------------------------------

  def test_transpose_is_a_view
    a = Cumo::DFloat.new(2, 3).seq
    t = a.transpose
    assert_equal [3, 2], t.shape
    assert_equal [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]], t.to_a
    assert_match(/\ACumo::DFloat\(view\)#shape=\[3,2\]/, t.inspect)
    t[2, 0] = 50.0 # writes through to a[0, 2]
    assert_equal 50.0, a.aref_cpu(0, 2)
  end

  def test_transpose_with_axes
    a = Cumo::Int32.new(2, 3, 4).seq
    t = a.transpose(2, 0, 1)
    assert_equal [4, 2, 3], t.shape
    assert_equal a.aref_cpu(1, 2, 3), t.aref_cpu(3, 1, 2)
  end

  def test_flatten
    a = Cumo::DFloat.new(2, 3).seq
    assert_equal [0.0, 1.0, 2.0, 3.0, 4.0, 5.0], a.flatten.to_a
    assert_equal [0.0, 3.0, 1.0, 4.0, 2.0, 5.0], a.transpose.flatten.to_a
    assert_equal [6], a.flatten.shape
  end

  private

  # Every value lies in [low, high) and the values are spread, not constant.
  def assert_in_range(values, low, high, klass)
    assert values.all? { |v| v >= low && v < high }, "#{klass}: out of [#{low}, #{high})"
    assert_operator values.max - values.min, :>, (high - low) * 0.5, "#{klass}: not spread"
  end
end
