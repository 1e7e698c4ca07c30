# frozen_string_literal: true

# Layout methods: the views (view, swapaxes, expand_dims, squeeze, reverse,
# flip, fliplr, flipud, rot90, diagonal, split and its relatives), the
# copies tile and repeat, and joining (concatenate, stack, vstack, hstack,
# dstack, column_stack). Expected values are Numo 0.9.2.1's, printed by
# Numo built from ruby-numo/numo-narray at 95c0525 (most are the examples
# of lib/numo/narray/extra.rb); where Cumo has a method Numo lacks
# (squeeze, flip, stack, concat) it follows numpy and says so.
require "minitest/autorun"
require "cumo/narray"

class TestLayout < Minitest::Test
  def setup
    @a = Cumo::Int32.new(2, 3).seq # [[0, 1, 2], [3, 4, 5]]
  end

  # ---- view, swapaxes, expand_dims, squeeze ------------------------------------

  def test_view_is_a_view_of_the_same_elements
    v = @a.view
    assert_equal "Cumo::Int32(view)#shape=[2,3]\n[[0, 1, 2], \n [3, 4, 5]]", v.inspect
    assert v.view?
    v[1, 1] = 40
    assert_equal [[0, 1, 2], [3, 40, 5]], @a.to_a, "a write through view reaches the array"
  end

  def test_transpose_and_flatten_are_views_as_in_numo
    assert Cumo::DFloat.new(3).seq.transpose.view?
    assert Cumo::DFloat.new(4).seq.flatten.view?
    assert Cumo::DFloat.new(2, 2).seq[true, true].view?
    refute Cumo::DFloat.new(2, 2).seq.view?
    refute Cumo::DFloat.new(2, 2).seq.reshape(4).view?
  end

  def test_swapaxes
    s = @a.swapaxes(0, 1)
    assert_equal "Cumo::Int32(view)#shape=[3,2]\n[[0, 3], \n [1, 4], \n [2, 5]]", s.inspect
    assert_equal [[0, 3], [1, 4], [2, 5]], @a.swapaxes(-1, 0).to_a
    b = Cumo::Int32.new(2, 3, 4).seq
    assert_equal [4, 3, 2], b.swapaxes(0, 2).shape
    assert_equal b.transpose(2, 1, 0).to_a, b.swapaxes(0, 2).to_a
    s[2, 0] = 20
    assert_equal 20, @a.to_a[0][2]
  end

  def test_expand_dims
    assert_equal [1, 2, 3], @a.expand_dims(0).shape
    assert_equal [2, 1, 3], @a.expand_dims(1).shape
    assert_equal [2, 3, 1], @a.expand_dims(2).shape
    assert_equal [2, 3, 1], @a.expand_dims(-1).shape
    assert_equal [1, 2, 3], @a.expand_dims(-3).shape
    assert_equal [[[0], [1], [2]], [[3], [4], [5]]], @a.expand_dims(-1).to_a
    assert @a.expand_dims(0).view?
  end

  # Numo has no squeeze: this is numpy's.
  def test_squeeze
    x = Cumo::DFloat.new(1, 3, 1).seq
    assert_equal [3], x.squeeze.shape
    assert_equal [3, 1], x.squeeze(axis: 0).shape
    assert_equal [1, 3], x.squeeze(-1).shape
    assert_equal [3], x.squeeze(axis: [0, 2]).shape
    assert_equal [0.0, 1.0, 2.0], x.squeeze.to_a
    assert_equal [], Cumo::DFloat.new(1, 1).seq.squeeze.shape
    x.squeeze[1] = 7
    assert_equal [[[0.0], [7.0], [2.0]]], x.to_a
  end

  def test_an_unknown_keyword_names_the_op_and_the_keyword
    x = Cumo::DFloat.new(1, 3).seq
    e = assert_raises(ArgumentError) { x.squeeze(axes: 0) }
    assert_equal "[squeeze] unknown keyword: :axes", e.message
    e = assert_raises(ArgumentError) { x.squeeze(axis: 0, "axis" => 0) }
    assert_equal '[squeeze] unknown keyword: "axis"', e.message
    e = assert_raises(ArgumentError) { x.split(3, axis: 1, at: 0) }
    assert_equal "[split] unknown keyword: :at", e.message
    assert_equal [3], x.squeeze(axis: 0).shape, "nothing changed by the calls that raised"
  end

  # ---- reverse, flip, rot90 ----------------------------------------------------------

  def test_reverse_is_a_view_with_negative_strides
    assert_equal [[5, 4, 3], [2, 1, 0]], @a.reverse.to_a
    assert_equal [[3, 4, 5], [0, 1, 2]], @a.reverse(0).to_a
    assert_equal [[2, 1, 0], [5, 4, 3]], @a.reverse(1).to_a
    assert_equal [[2, 1, 0], [5, 4, 3]], @a.reverse(-1).to_a
    assert_equal [[5, 4, 3], [2, 1, 0]], @a.reverse(0, 1).to_a
    r = @a.reverse
    assert r.view?
    refute r.contiguous?
    r[0, 0] = 50
    assert_equal 50, @a.to_a[1][2], "a write through the reversed view reaches the array"
  end

  def test_flip_fliplr_flipud
    d = Cumo::DFloat.new(2, 3).seq
    assert_equal "Cumo::DFloat(view)#shape=[2,3]\n[[2, 1, 0], \n [5, 4, 3]]", d.fliplr.inspect
    assert_equal [[3.0, 4.0, 5.0], [0.0, 1.0, 2.0]], d.flipud.to_a
    # flip is numpy's name for reverse
    assert_equal d.reverse.to_a, d.flip.to_a
    assert_equal d.reverse(1).to_a, d.flip(axis: 1).to_a
  end

  def test_a_reversed_view_computes
    x = Cumo::DFloat.new(5).seq
    assert_equal [4.0, 4.0, 4.0, 4.0, 4.0], (x + x.reverse).to_a
    assert_equal [[5.0, 3.0, 1.0], [11.0, 9.0, 7.0]],
                 (Cumo::DFloat.new(2, 3).seq.reverse(1) * 2 + 1).to_a
    assert_equal 7.0, Float(x.reverse[1..3].sum + 1)
  end

  def test_rot90_as_numo_composes_it
    a = Cumo::Int32.new(2, 2).seq
    assert_equal "Cumo::Int32(view)#shape=[2,2]\n[[1, 3], \n [0, 2]]", a.rot90.inspect
    assert_equal [[3, 2], [1, 0]], a.rot90(2).to_a
    assert_equal [[2, 0], [3, 1]], a.rot90(3).to_a
    assert_equal [[0, 1], [2, 3]], a.rot90(4).to_a
    assert_equal [[2, 0], [3, 1]], a.rot90(-1).to_a
    assert_equal [[2, 5], [1, 4], [0, 3]], @a.rot90.to_a
    b = Cumo::Int32.new(2, 3, 4).seq
    assert_equal b.swapaxes(0, 2).reverse(0).to_a, b.rot90(1, [0, 2]).to_a
  end

  # ---- diagonal ------------------------------------------------------------------

  def test_diagonal
    b = Cumo::Int32.new(4, 4).seq
    assert_equal "Cumo::Int32(view)#shape=[4]\n[0, 5, 10, 15]", b.diagonal.inspect
    assert_equal [1, 6, 11], b.diagonal(1).to_a
    assert_equal [8, 13], b.diagonal(-2).to_a
    assert_equal [0, 4], @a.diagonal.to_a
    assert_equal [[0, 4, 8], [9, 13, 17]], Cumo::Int32.new(2, 3, 3).seq.diagonal.to_a
    assert_equal [[0, 13], [3, 16], [6, 19], [9, 22]],
                 Cumo::Int32.new(2, 4, 3).seq.diagonal([0, 2]).to_a
    assert_equal [1, 6, 11], b.diagonal([0, 1], 1).to_a
  end

  def test_diagonal_writes_reach_the_array
    b = Cumo::DFloat.zeros(3, 3)
    b.diagonal[true] = 7
    assert_equal [[7.0, 0.0, 0.0], [0.0, 7.0, 0.0], [0.0, 0.0, 7.0]], b.to_a
    b.diagonal(1)[true] = Cumo::DFloat[1, 2]
    assert_equal [[7.0, 1.0, 0.0], [0.0, 7.0, 2.0], [0.0, 0.0, 7.0]], b.to_a
    assert_equal 21.0, Float(b.diagonal.sum)
  end

  # ---- split -------------------------------------------------------------------------

  def test_split_in_sections
    x = Cumo::DFloat.new(9).seq
    parts = x.split(3)
    assert_equal [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0], [6.0, 7.0, 8.0]], parts.map(&:to_a)
    assert(parts.all?(&:view?))
    # uneven: the first size % n parts are one longer
    assert_equal [[0.0, 1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], Cumo::DFloat.new(7).seq.split(3).map(&:to_a)
  end

  def test_split_at_indices
    x = Cumo::DFloat.new(8).seq
    parts = x.split([3, 5, 6, 10])
    assert_equal [[0.0, 1.0, 2.0], [3.0, 4.0], [5.0], [6.0, 7.0], []], parts.map(&:to_a)
    assert_equal "Cumo::DFloat(view)#shape=[0][]", parts.last.inspect
    assert_equal [[0.0, 1.0], [2.0, 3.0, 4.0, 5.0, 6.0, 7.0]], x.split(Cumo::Int32[2]).map(&:to_a)
    # A leading 0 gives an empty first part (Numo raises RangeError there,
    # from the range 0...0 it builds; numpy answers the empty part).
    assert_equal [[], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]], x.split([0]).map(&:to_a)
  end

  def test_hsplit_vsplit_dsplit
    x = Cumo::DFloat.new(4, 4).seq
    h = x.hsplit(2)
    assert_equal [[[0.0, 1.0], [4.0, 5.0], [8.0, 9.0], [12.0, 13.0]],
                  [[2.0, 3.0], [6.0, 7.0], [10.0, 11.0], [14.0, 15.0]]], h.map(&:to_a)
    assert_equal [[4, 3], [4, 1], [4, 0]], x.hsplit([3, 6]).map(&:shape)
    assert_equal [[2, 4], [2, 4]], x.vsplit(2).map(&:shape)
    assert_equal [[2, 3, 1], [2, 3, 1]], Cumo::DFloat.new(2, 3, 2).seq.dsplit(2).map(&:shape)
    assert_equal [[0.0, 1.0], [4.0, 5.0]], x.split(2, axis: 1)[0][0..1, true].to_a
    h[1][0, 0] = 99
    assert_equal 99.0, x.to_a[0][2], "the parts are views"
  end

  # ---- tile and repeat ------------------------------------------------------------

  def test_tile
    a = Cumo::NArray[0, 1, 2]
    assert_equal "Cumo::Int32#shape=[6]\n[0, 1, 2, 0, 1, 2]", a.tile(2).inspect
    assert_equal [[0, 1, 2, 0, 1, 2], [0, 1, 2, 0, 1, 2]], a.tile(2, 2).to_a
    assert_equal [[[0, 1, 2, 0, 1, 2]], [[0, 1, 2, 0, 1, 2]]], a.tile(2, 1, 2).to_a
    b = Cumo::NArray[[1, 2], [3, 4]]
    assert_equal [[1, 2, 1, 2], [3, 4, 3, 4]], b.tile(2).to_a
    assert_equal [[1, 2], [3, 4], [1, 2], [3, 4]], b.tile(2, 1).to_a
    c = Cumo::NArray[1, 2, 3, 4]
    assert_equal [[1, 2, 3, 4]] * 4, c.tile(4, 1).to_a
    # of a view, and a copy: writing it leaves the source alone
    t = Cumo::DFloat.new(3, 4).seq[1..2, (3..0).step(-2)].tile(1, 2)
    assert_equal [[7.0, 5.0, 7.0, 5.0], [11.0, 9.0, 11.0, 9.0]], t.to_a
    refute t.view?
    t[0, 0] = -1
    assert_equal [[0, 1, 2, 0, 1, 2]], a.tile(1, 2).to_a
  end

  def test_repeat
    assert_equal "Cumo::Int32#shape=[4]\n[3, 3, 3, 3]", Cumo::NArray[3].repeat(4).inspect
    x = Cumo::NArray[[1, 2], [3, 4]]
    assert_equal [1, 1, 2, 2, 3, 3, 4, 4], x.repeat(2).to_a
    assert_equal [[1, 1, 1, 2, 2, 2], [3, 3, 3, 4, 4, 4]], x.repeat(3, axis: 1).to_a
    assert_equal [[1, 2], [3, 4], [3, 4]], x.repeat([1, 2], axis: 0).to_a
    assert_equal [[1, 2, 2, 2], [3, 4, 4, 4]], x.repeat([1, 3], axis: -1).to_a
    assert_equal [[2], [4]], x.repeat([0, 1], axis: 1).to_a
    assert_equal [1, 3, 3, 4], x.repeat([1, 0, 2, 1]).to_a
    assert_equal [[3.0, 3.0, 2.0, 2.0]], Cumo::DFloat.new(1, 4).seq[true, 2..3].reverse.repeat(2, axis: 1).to_a
  end

  # ---- joining ---------------------------------------------------------------------

  def test_concatenate_class_method
    a = Cumo::DFloat[[1, 2], [3, 4]]
    b = Cumo::DFloat[[5, 6]]
    c = Cumo::NArray.concatenate([a, b], axis: 0)
    assert_equal "Cumo::DFloat#shape=[3,2]\n[[1, 2], \n [3, 4], \n [5, 6]]", c.inspect
    assert_equal [[1.0, 2.0, 5.0], [3.0, 4.0, 6.0]], Cumo::NArray.concatenate([a, b.transpose], axis: 1).to_a
    assert_equal [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], Cumo::NArray.concatenate([a, b]).to_a
    # the class upcasts, numbers and Arrays join too, shorter parts gain axes
    m = Cumo::NArray.concatenate([Cumo::Int32[1, 2], Cumo::DFloat[1.5], 7, [8, 9]])
    assert_instance_of Cumo::DFloat, m
    assert_equal [1.0, 2.0, 1.5, 7.0, 8.0, 9.0], m.to_a
    n = Cumo::NArray.concatenate([@a, Cumo::DFloat[[1.5, 2, 3]]])
    assert_equal [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0], [1.5, 2.0, 3.0]], n.to_a
    # a typed class converts every part to itself
    i = Cumo::Int32.concatenate([Cumo::DFloat[1.7, -1.7], Cumo::Int32[3]])
    assert_instance_of Cumo::Int32, i
    assert_equal [1, -1, 3], i.to_a
    refute c.view?
  end

  def test_concatenate_instance_method
    a = Cumo::DFloat[[1, 2], [3, 4]]
    assert_equal [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], a.concatenate(Cumo::DFloat[[5, 6]], axis: 0).to_a
    assert_equal [[1.0, 2.0, 5.0], [3.0, 4.0, 6.0]], a.concatenate(Cumo::DFloat[[5], [6]], axis: 1).to_a
    assert_equal [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]],
                 a.concatenate(Cumo::DFloat[5, 6], [[7, 8]]).to_a
    # self's class decides
    assert_equal [1, 2, 3, 4], Cumo::Int32[1, 2].concatenate(Cumo::DFloat[3.9, 4.2]).to_a
    assert_equal [1, 2, 3], Cumo::Int32[1, 2].concat(3).to_a
  end

  def test_concatenated_parts_fold_into_one_kernel
    x = Cumo::DFloat.new(4, 3).seq
    Cumo.sync
    c = Cumo::NArray.concatenate([x[0..1, true], x, x.reverse(0)])
    kernels = Cumo.explain(c).kernels
    assert_equal 1, kernels.size, Cumo.explain(c).to_s
    assert_equal 3, kernels[0][:ops].count(:update)
    want = x.to_a[0..1] + x.to_a + x.to_a.reverse
    assert_equal want, c.to_a
  end

  def test_stacking
    a = Cumo::Int32[1, 2, 3]
    b = Cumo::Int32[2, 3, 4]
    assert_equal "Cumo::Int32#shape=[2,3]\n[[1, 2, 3], \n [2, 3, 4]]", Cumo::NArray.vstack([a, b]).inspect
    assert_equal [1, 2, 3, 2, 3, 4], Cumo::NArray.hstack([a, b]).to_a
    assert_equal [[[1, 2], [2, 3], [3, 4]]], Cumo::NArray.dstack([a, b]).to_a
    assert_equal [[1, 2], [2, 3], [3, 4]], Cumo::NArray.column_stack([a, b]).to_a
    c = Cumo::Int32[[1], [2], [3]]
    d = Cumo::Int32[[2], [3], [4]]
    assert_equal [[1], [2], [3], [2], [3], [4]], Cumo::NArray.vstack([c, d]).to_a
    assert_equal [[1, 2], [2, 3], [3, 4]], Cumo::NArray.hstack([c, d]).to_a
    assert_equal [3, 1, 2], Cumo::NArray.dstack([c, d]).shape
    assert_equal [[[1, 2]], [[2, 3]], [[3, 4]]], Cumo::NArray.dstack([c, d]).to_a
    assert_instance_of Cumo::DFloat, Cumo::DFloat.vstack([a, b])
  end

  # Numo has no stack: this is numpy's, along a new axis.
  def test_stack
    a = Cumo::Int32[1, 2, 3]
    b = Cumo::Int32[2, 3, 4]
    assert_equal [[1, 2, 3], [2, 3, 4]], Cumo::NArray.stack([a, b]).to_a
    assert_equal [[1, 2], [2, 3], [3, 4]], Cumo::NArray.stack([a, b], axis: 1).to_a
    assert_equal [[1, 2], [2, 3], [3, 4]], Cumo::NArray.stack([a, b], axis: -1).to_a
    assert_equal [3, 2, 2], Cumo::NArray.stack([@a.transpose, @a.transpose], axis: 1).shape
  end

  # ---- bad calls ------------------------------------------------------------------

  def test_bad_axes
    assert_fails_at_call(Cumo::NArray::DimensionError, "swapaxes", @a) { @a.swapaxes(0, 2) }
    assert_fails_at_call(Cumo::NArray::DimensionError, "swapaxes", @a) { @a.swapaxes(-3, 0) }
    assert_fails_at_call(Cumo::NArray::DimensionError, "expand_dims", @a) { @a.expand_dims(3) }
    assert_fails_at_call(Cumo::NArray::DimensionError, "expand_dims", @a) { @a.expand_dims(-4) }
    assert_fails_at_call(Cumo::NArray::DimensionError, "reverse", @a) { @a.reverse(2) }
    assert_fails_at_call(Cumo::NArray::DimensionError, "fliplr", Cumo::DFloat[1, 2]) { Cumo::DFloat[1, 2].fliplr }
    assert_fails_at_call(Cumo::NArray::DimensionError, "rot90", @a) { @a.rot90(1, [0, 2]) }
    assert_fails_at_call(Cumo::NArray::DimensionError, "squeeze", @a) { @a.squeeze(axis: 2) }
    assert_fails_at_call(Cumo::NArray::DimensionError, "diagonal") { Cumo::DFloat.new(3).seq.diagonal }
    # Numo's check_axis of extra.rb raises ArgumentError
    assert_fails_at_call(ArgumentError, "split", @a) { @a.split(3, axis: 2) }
    assert_fails_at_call(ArgumentError, "repeat", @a) { @a.repeat(2, axis: 5) }
    assert_fails_at_call(ArgumentError, "concatenate", @a) { @a.concatenate(@a, axis: 2) }
    assert_fails_at_call(ArgumentError, "concatenate", @a) { Cumo::NArray.concatenate([@a, @a], axis: -3) }
    assert_fails_at_call(ArgumentError, "stack", @a) { Cumo::NArray.stack([@a, @a], axis: 3) }
    assert_fails_at_call(ArgumentError, "diagonal") { Cumo::DFloat.new(3, 3).seq.diagonal([0, 0]) }
    assert_fails_at_call(ArgumentError, "diagonal") { Cumo::DFloat.new(3, 3).seq.diagonal([0, 3]) }
  end

  def test_bad_arguments
    assert_fails_at_call(ArgumentError, "diagonal") { Cumo::DFloat.new(3, 3).seq.diagonal(3) }
    assert_fails_at_call(ArgumentError, "diagonal") { Cumo::DFloat.new(3, 3).seq.diagonal(-3) }
    assert_fails_at_call(ArgumentError, "tile", @a) { @a.tile(0) }
    assert_fails_at_call(ArgumentError, "tile", @a) { @a.tile(1.5) }
    assert_fails_at_call(ArgumentError, "repeat", @a) { @a.repeat(0) }
    assert_fails_at_call(ArgumentError, "repeat", @a) { @a.repeat([1, 2], axis: 1) }
    assert_fails_at_call(ArgumentError, "repeat", @a) { @a.repeat([1, -1], axis: 0) }
    assert_fails_at_call(ArgumentError, "split", @a) { @a.split(0) }
    assert_fails_at_call(TypeError, "split", @a) { @a.split("2") }
    assert_fails_at_call(ArgumentError, "squeeze", @a) { @a.squeeze(axis: :x) }
    assert_fails_at_call(ArgumentError, "squeeze", @a) { @a.squeeze(axes: 0) }
  end

  def test_mismatched_shapes
    assert_fails_at_call(Cumo::NArray::ShapeError, "concatenate", @a) do
      Cumo::NArray.concatenate([@a, Cumo::Int32.new(2, 2).seq])
    end
    assert_fails_at_call(Cumo::NArray::ShapeError, "concatenate", @a) do
      @a.concatenate(Cumo::Int32.new(3, 3).seq, axis: 1)
    end
    assert_fails_at_call(Cumo::NArray::ShapeError, "concatenate", @a) do
      @a.concatenate(Cumo::Int32.new(1, 2, 3).seq)
    end
    assert_fails_at_call(Cumo::NArray::ShapeError, "vstack", @a) do
      Cumo::NArray.vstack([@a, Cumo::Int32[1, 2]])
    end
    assert_fails_at_call(Cumo::NArray::ShapeError, "stack", @a) do
      Cumo::NArray.stack([@a, @a.transpose])
    end
    assert_fails_at_call(Cumo::NArray::ShapeError, "squeeze", @a) { @a.squeeze(0) }
    assert_fails_at_call(TypeError, "concatenate", @a) { Cumo::NArray.concatenate([@a, "x"]) }
  end

  private

  # The class, the op's name in brackets, the receiver unchanged, and a
  # result recorded before the bad call still reading back.
  def assert_fails_at_call(klass, op, array = nil)
    before = array&.to_a
    pending = @a * 2 + 1
    e = assert_raises(klass) { yield }
    assert_includes e.message, "[#{op}]", "#{klass} from #{op} should name it"
    assert_equal before, array.to_a, "#{op} changed the array" if array
    assert_equal [[1, 3, 5], [7, 9, 11]], pending.to_a
  end
end
