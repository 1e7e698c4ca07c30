# frozen_string_literal: true

# Numo's append, delete, insert and store (lib/cumo/editing.rb); diag,
# diag_indices, the class forms of the triangle indices, diff,
# rad2deg/deg2rad and Bit's count aliases (lib/cumo/extra.rb); percentile
# and cov (lib/cumo/statistics.rb); asarray and parse (lib/cumo/parsing.rb);
# Ranges inside an Array literal. Expected answers are numo-narray's own
# documented examples where it prints one, numpy's otherwise.
require "minitest/autorun"
require "cumo/narray"

class TestEditing < Minitest::Test
  D = Cumo::DFloat
  I = Cumo::Int32
  ShapeError = Cumo::NArray::ShapeError

  def test_ranges_in_an_array_literal_are_their_elements
    assert_equal [0, 1, 2, 3, 4], I[0..4].to_a
    assert_equal [1, 3, 4, 5], Cumo::NArray[1, 3..5].to_a
    assert_equal [[0, 1], [5, 6]], D[[0...2], [5, 6]].to_a
    assert_equal [0, 5, 10], Cumo::Int64[(0..10).step(5)].to_a
    assert_equal [1.0, 2.0, 3.0], D.cast([1..3]).to_a
    e = assert_raises(ArgumentError) { I[1..] }
    assert_match(/\[\[\]\] a range without both ends/, e.message)
  end

  def test_append
    assert_equal [1, 2, 3, 4, 5, 6, 7, 8, 9], D[1, 2, 3].append([[4, 5, 6], [7, 8, 9]]).to_a
    assert_equal [[1, 2, 3], [4, 5, 6], [7, 8, 9]], D[[1, 2, 3]].append([[4, 5, 6], [7, 8, 9]], axis: 0).to_a
    assert_instance_of I, I[1, 2].append([2.5])
    assert_equal [1, 2, 2], I[1, 2].append([2.5]).to_a
    e = assert_raises(Cumo::NArray::DimensionError) { D[[1, 2, 3], [4, 5, 6]].append([7, 8, 9], axis: 0) }
    assert_match(/\[append\]/, e.message)
  end

  def test_delete
    a = D[[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]]
    assert_equal [[1, 2, 3, 4], [9, 10, 11, 12]], a.delete(1, 0).to_a
    assert_equal [[2, 4], [6, 8], [10, 12]], a.delete((0..-1).step(2), 1).to_a
    assert_equal [1, 3, 5, 7, 8, 9, 10, 11, 12], a.delete([1, 3, 5]).to_a
    assert_equal [[1, 2, 3], [5, 6, 7], [9, 10, 11]], a.delete(-1, -1).to_a
    assert_equal 12, a.size, "the receiver is left as it was"
    assert_raises(ArgumentError) { a.delete(0, 2) }
  end

  def test_insert_as_numo_documents_it
    a = I[[1, 1], [2, 2], [3, 3]]
    assert_equal [1, 5, 1, 2, 2, 3, 3], a.insert(1, 5).to_a
    assert_equal [[1, 5, 1], [2, 5, 2], [3, 5, 3]], a.insert(1, 5, axis: 1).to_a
    assert_equal [[1, 11, 1], [2, 12, 2], [3, 13, 3]], a.insert([1], [[11], [12], [13]], axis: 1).to_a
    assert_equal [[1, 11, 1], [2, 12, 2], [3, 13, 3]], a.insert(1, [11, 12, 13], axis: 1).to_a
    assert_equal [[1, 11, 12, 13, 1], [2, 11, 12, 13, 2], [3, 11, 12, 13, 3]],
                 a.insert([1], [11, 12, 13], axis: 1).to_a
    b = a.flatten
    assert_equal [1, 1, 15, 16, 2, 2, 3, 3], b.insert(2, [15, 16]).to_a
    assert_equal [1, 1, 15, 16, 2, 2, 3, 3], b.insert([2, 2], [15, 16]).to_a
    assert_equal [1, 16, 1, 15, 2, 2, 3, 3], b.insert([2, 1], [15, 16]).to_a
    assert_equal [16, 1, 17, 1, 15, 2, 2, 3, 3], b.insert([2, 0, 1], [15, 16, 17]).to_a
    assert_equal [1, 1, 15, 2, 16, 2, 3, 3], b.insert(2..3, [15, 16]).to_a
    assert_equal [1, 1, 7, 0, 2, 2, 3, 3], b.insert(2, [7.13, 0.5]).to_a
    assert_equal [[0, 999, 1, 2, 999, 3], [4, 999, 5, 6, 999, 7]],
                 D.new(2, 4).seq.insert([1, 3], 999, axis: 1).to_a
    e = assert_raises(ShapeError) { a.insert(1, [[1, 2, 3]], axis: 1) }
    assert_match(/\[insert\]/, e.message)
  end

  def test_store_writes_into_the_receiver_and_its_views
    z = D.zeros(2, 3)
    assert_same z, z.store(D[1, 2, 3])
    assert_equal [[1, 2, 3], [1, 2, 3]], z.to_a
    z[1, true].store(7)
    assert_equal [[1, 2, 3], [7, 7, 7]], z.to_a
    assert_raises(FrozenError) { D.zeros(2).freeze.store(1) }
  end

  def test_diag_and_diagonal_indices
    assert_equal [[1, 0, 0], [0, 2, 0], [0, 0, 3]], D[1, 2, 3].diag.to_a
    assert_equal [[0, 1, 0], [0, 0, 2], [0, 0, 0]], D[1, 2].diag(1).to_a
    assert_equal [[0, 0], [5, 0]], I[5].diag(-1).to_a
    assert_equal [2, 3, 3], D.new(2, 3).seq.diag.shape
    assert_equal [[[0, 0], [0, 1]], [[2, 0], [0, 3]]], I.new(2, 2).seq.diag.to_a
    assert_equal [0, 4, 8], D.new(3, 3).diag_indices.to_a
    assert_equal [1, 5], Cumo::NArray.diag_indices(2, 3, 1).to_a
    assert_equal [0, 3, 4, 6, 7, 8], Cumo::NArray.tril_indices(3, 3).to_a
    assert_equal [1, 2, 5], Cumo::NArray.triu_indices(3, 3, 1).to_a
    assert_raises(ShapeError) { D[1, 2].diag_indices }
    assert_raises(TypeError) { Cumo::NArray.diag_indices(2, 2.5) }
  end

  def test_diff_as_numo_computes_it
    x = D[[1, 3, 6, 10], [0, 5, 6, 8]]
    assert_equal [[2, 3, 4], [5, 1, 2]], x.diff.to_a
    assert_equal [[-1, 2, 0, -2]], x.diff(axis: 0).to_a
    assert_equal [[1, 1], [-4, 1]], x.diff(2).to_a
    assert_equal [0], I[1, 3, 6, 10].diff(3).to_a
    assert_equal [1, 3, 6, 10], I[1, 3, 6, 10].diff(0).to_a
    # Numo's single pass over binomial coefficients, not n first
    # differences: in floats the two round differently.
    v = D[0.1, 0.7, 0.2, 1.3]
    want = v.to_a.then { |a| [a[3] + a[2] * -3 + a[1] * 3 + a[0] * -1] }
    assert_equal want, v.diff(3).to_a
    e = assert_raises(ShapeError) { x.diff(4) }
    assert_match(/\[diff\]/, e.message)
  end

  def test_angles
    assert_in_delta Math::PI / 2, D[90].deg2rad[0].to_f, 1e-15
    assert_in_delta 180.0, D[Math::PI].rad2deg[0].to_f, 1e-12
    assert_instance_of D, I[180].deg2rad
  end

  def test_bit_counts
    b = Cumo::Bit[1, 0, 1, 1]
    assert_equal 3, b.count.to_i
    assert_equal 3, b.count_1.to_i
    assert_equal 1, b.count_0.to_i
  end

  def test_percentile
    assert_equal 2.5, D[1, 2, 3, 4].percentile(50).to_f
    assert_equal 4.0, D[4, 1, 3, 2].percentile(100).to_f
    assert_equal [1.5, 3.5], D[[1, 5, 2], [4, 3, 6]].percentile(25, axis: 1).to_a
    assert_raises(ArgumentError) { D[1, 2].percentile(101) }
    e = assert_raises(ArgumentError) { D[1, 2].percentile(Float::NAN) }
    assert_equal "[percentile] q=NaN is out of range 0..100", e.message
    assert_raises(TypeError) { D[1, 2].percentile("50") }
  end

  def test_cov_as_numpy_answers
    m = D[[0, 1, 2], [2, 1, 0]]
    assert_equal [[1, -1], [-1, 1]], m.cov.to_a
    {
      { fweights: [1, 2, 1] } => [2.0 / 3, -2.0 / 3, -2.0 / 3, 2.0 / 3],
      { aweights: [1, 2, 1] } => [0.8, -0.8, -0.8, 0.8],
    }.each do |weights, want|
      want.zip(m.cov(**weights).to_a.flatten).each { |w, v| assert_in_delta w, v, 1e-12, weights.inspect }
    end
    assert_equal [[1, -1], [-1, 1]], D[0, 1, 2].cov(D[2, 1, 0]).to_a
    assert_in_delta 1.0, D[0, 1, 2].cov.to_f, 1e-15
    assert_raises(ArgumentError) { D[1].cov }
    assert_raises(ShapeError) { m.cov(fweights: [1, 2]) }
    # A 0-dim receiver is one observation of one variable (numpy's scalar):
    # no degrees of freedom at ddof 1, a zero variance at ddof 0.
    e = assert_raises(ArgumentError) { D[3].reshape.cov }
    assert_match(/\[cov\] degrees of freedom/, e.message)
    assert_equal 0.0, D[3].reshape.cov(ddof: 0).to_f
    assert_equal [[0.0, 0.0], [0.0, 0.0]], D[3].reshape.cov(D[5].reshape, ddof: 0).to_a
  end

  def test_bincount_as_numo_documents_it
    assert_instance_of Cumo::UInt32, I[0..4].bincount
    assert_equal [1, 1, 1, 1, 1], I[0..4].bincount.to_a
    assert_equal [1, 3, 1, 1, 0, 0, 0, 1], I[0, 1, 1, 3, 2, 1, 7].bincount.to_a
    x = I[0, 1, 1, 3, 2, 1, 7, 23]
    assert_equal x.max.to_i + 1, x.bincount.size
    w = D[0.3, 0.5, 0.2, 0.7, 1.0, -0.6]
    got = I[0, 1, 1, 2, 2, 2].bincount(w)
    assert_instance_of D, got
    [0.3, 0.7, 1.1].zip(got.to_a).each { |want, v| assert_in_delta want, v, 1e-15 }
    assert_instance_of Cumo::SFloat, I[1, 1].bincount(Cumo::SFloat[0.5, 0.25])
    assert_equal [[1, 1, 0], [0, 2, 0]], I[[0, 1], [1, 1]].bincount(minlength: 3).to_a
    assert_equal [0, 0, 0], I[].bincount(minlength: 3).to_a
    # Past the chunk the comparison is made in.
    big = Cumo::UInt8.new(300_000).rand(0, 200)
    assert_equal 300_000, big.bincount.sum.to_i
    assert_equal (big.eq 7).count_true.to_i, big.bincount[7].to_i
    e = assert_raises(ArgumentError) { I[-1, 2].bincount }
    assert_match(/\[bincount\] array items must be non-negative/, e.message)
    assert_raises(ArgumentError) { I[1].bincount(minlength: -1) }
    assert_raises(Cumo::NArray::ShapeError) { I[1, 2].bincount(D[1.0]) }
    assert_raises(NoMethodError) { D[1].bincount }
  end

  # Each names the method, at the call.
  def test_bad_arguments
    a = D.new(3, 4).seq
    {
      -> { a.insert("x", 1) } => [TypeError, /\[insert\] positions/],
      -> { a.insert(1, Object.new) } => [TypeError, /\[insert\] expected/],
      -> { a.insert(99, 5) } => [IndexError, /\[insert\] position 99/],
      -> { a.insert([1, 2.5], 5) } => [TypeError, /\[insert\] positions must be Integers/],
      -> { a.delete(nil) } => [TypeError, /\[delete\] positions/],
      -> { a.delete(99) } => [IndexError, /\[delete\] position 99/],
      -> { a.delete(1, "a") } => [TypeError, /\[delete\] axis/],
      -> { a.delete(D[1]) } => [TypeError, /\[delete\] positions must be integers/],
      -> { a.append(Object.new) } => [TypeError, /\[append\]/],
      -> { a.diff(1.5) } => [TypeError, /\[diff\] n must be an Integer/],
      -> { a.diff(axis: "x") } => [TypeError, /\[diff\] axis/],
      -> { a.diag("k") } => [TypeError, /\[diag\]/],
      -> { a.percentile(nil) } => [TypeError, /\[percentile\]/],
      -> { a.percentile(50, axis: 7) } => [ArgumentError, /\[percentile\] axis 7/],
      -> { a.cov(ddof: "a") } => [TypeError, /\[cov\] ddof/],
      -> { a.cov(Object.new) } => [TypeError, /\[cov\] y/],
      -> { a.cov(aweights: [1, -1, 1, 1]) } => [ArgumentError, /\[cov\] weights/],
      -> { D.parse(nil) } => [TypeError, /\[parse\]/],
      -> { a.store(Object.new) } => [TypeError, /\[store\]/],
      -> { Cumo::NArray.tril_indices(-1, 2) } => [ArgumentError, /\[tril_indices\]/],
    }.each do |call, (error, message)|
      e = assert_raises(error) { call.call }
      assert_match message, e.message
    end
    assert_equal D.new(3, 4).seq.to_a, a.to_a, "nothing was written"
  end

  def test_asarray_and_parse
    assert_equal [3], Cumo::NArray.asarray(3).to_a
    assert_equal [2, 3, 4], I.asarray(2..4).to_a
    a = D[1, 2]
    assert_same a, D.asarray(a)
    assert_equal [5.0], D.asarray(D[5][0]).to_a
    assert_equal [[2, -3, 5], [4, 9, 7], [2, -1, 6]], D.parse("\n 2 -3 5\n 4 9 7\n 2 -1 6\n").to_a
    assert_equal [[1, 2], [3, 4]], D.parse("1 2; 3 4").to_a
    assert_equal [[[1, 2]], [[3, 4]]], I.parse("1 2\n\n3 4").to_a
    e = assert_raises(ArgumentError) { D.parse("1 x") }
    assert_match(/\[parse\] not a number/, e.message)
  end
end
