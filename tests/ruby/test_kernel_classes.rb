# frozen_string_literal: true

# Cumo::CUDA::ElementwiseKernel and ReductionKernel (lib/cumo/
# elementwise_kernel.rb, reduction_kernel.rb): the spec's examples and the
# rules of "Writing An Elementwise Kernel" and "Writing A Reduction Kernel",
# on both executors (the CPU executor builds the same generated source with
# the host compiler, graph/host_kernels.h). Values are small integers, or
# compared within a float's rounding where the GPU may contract a*b+c.
require "minitest/autorun"
require "cumo/narray"

class TestKernelClasses < Minitest::Test
  E = Cumo::CUDA::ElementwiseKernel
  R = Cumo::CUDA::ReductionKernel

  def squared_diff = @squared_diff ||= E.new("T x, T y", "T z", "z = (x - y) * (x - y)", "squared_diff")

  def test_the_specs_squared_difference
    x = Cumo::SFloat.new(2, 5).seq
    y = Cumo::SFloat.new(5).seq
    z = squared_diff.call(x, y)
    assert_instance_of Cumo::SFloat, z
    assert_equal [[0, 0, 0, 0, 0], [25, 25, 25, 25, 25]], z.to_a
    assert_equal [[25, 16, 9, 4, 1], [0, 1, 4, 9, 16]], squared_diff.call(x, 5).to_a
  end

  def test_types_from_outputs_arrays_and_numbers
    x = Cumo::Int32[1, 2, 3]
    out = Cumo::DFloat.zeros(3)
    # The output decides T: the input is cast to it.
    assert_same out, squared_diff.call(x.cast_to(Cumo::DFloat), 1, out)
    assert_equal [0.0, 1.0, 4.0], out.to_a
    # A letter only numbers reach: int64 for Integers, float64 for Floats.
    add = E.new("T a, T b", "T c", "c = a + b", "add_numbers")
    assert_instance_of Cumo::Int64, add.call(2, 3, size: 4)
    assert_equal [5] * 4, add.call(2, 3, size: 4).to_a
    assert_instance_of Cumo::DFloat, add.call(2.5, 1.0, size: 2)
    # Fixed types cast arrays to theirs.
    half = E.new("float32 x", "float64 y", "y = x / 2", "halve")
    assert_equal [0.5, 1.0], half.call(Cumo::Int32[1, 2]).to_a
    # Numbers alone: float64 as soon as one of them is not an Integer,
    # whatever their order.
    assert_instance_of Cumo::DFloat, add.call(1, 2.5, size: 1)
    assert_equal [3.5], add.call(1, 2.5, size: 1).to_a
    # Several outputs answer an Array.
    two = E.new("T x", "T s, T d", "s = x + x; d = x * x", "two")
    s, d = two.call(Cumo::Int32[1, 2, 3])
    assert_equal [2, 4, 6], s.to_a
    assert_equal [1, 4, 9], d.to_a
  end

  def test_frozen_inputs_0_dim_arrays_and_outputs_that_broadcast
    x = Cumo::Int32[1, 2, 3].freeze
    assert_equal [1, 4, 9], squared_diff.call(x, 0).to_a, "an input is only read"
    scalar = Cumo::SFloat.new(3).seq.sum # 0-dim
    z = squared_diff.call(scalar, 1)
    assert_equal [], z.shape
    assert_equal 4.0, z.to_f
    # The output takes part in the broadcast.
    out = Cumo::SFloat.zeros(2, 3)
    assert_same out, squared_diff.call(Cumo::SFloat[1, 2, 3], 0, out)
    assert_equal [[1, 4, 9], [1, 4, 9]], out.to_a
    to_half = E.new("uint64 x", "float16 y", "y = x", "widen_to_half")
    assert_equal [3.0, 2048.0], to_half.call(Cumo::UInt64[3, 2048]).to_a
  end

  def test_views_raw_arguments_and_the_index
    x = Cumo::Int32.new(2, 4).seq
    copy = E.new("T x", "T y", "y = x", "copy_through")
    assert_equal x[true, (3..0).step(-1)].to_a, copy.call(x[true, (3..0).step(-1)]).to_a
    assert_equal x[true, (0..3).step(2)].to_a, copy.call(x[true, (0..3).step(2)]).to_a
    assert_equal x.transpose.to_a, copy.call(x.transpose).to_a
    rev = E.new("raw T x", "T y", "y = x[_ind.size() - 1 - i]", "reverse_raw")
    assert_equal [3, 2, 1], rev.call(Cumo::Int32[1, 2, 3], Cumo::Int32.zeros(3)).to_a
    index = E.new("", "int64 y", "y = i * 10", "tens")
    assert_equal [0, 10, 20], index.call(size: 3).to_a
    # An input that is the output element for element is read in place;
    # one that overlaps it otherwise is copied first.
    a = Cumo::Int32[1, 2, 3, 4]
    inc = E.new("T x", "T y", "y = x + 1", "increment")
    inc.call(a, a)
    assert_equal [2, 3, 4, 5], a.to_a
    b = Cumo::Int32[1, 2, 3, 4]
    inc.call(b[(3..0).step(-1)], b)
    assert_equal [5, 4, 3, 2], b.to_a
  end

  def test_half_types_and_the_preamble
    relu = E.new("T x", "T y", "y = x > T(0) ? x : T(0)", "relu_half")
    assert_equal [0.0, 2.5], relu.call(Cumo::HFloat[-1.5, 2.5]).to_a
    assert_equal [0.0, 3.0], relu.call(Cumo::BFloat[-1, 3]).to_a
    mixed = E.new("T x", "T y", "y = x * 2", "mixed_half")
    assert_raises(Cumo::CUDA::NVRTCError) { mixed.call(Cumo::HFloat[1]) }
    cube = E.new("T x", "T y", "y = cube(x)", "cubed", preamble: "__device__ T cube(T v) { return v * v * v; }")
    assert_equal [8, 27], cube.call(Cumo::Int32[2, 3]).to_a
  end

  def test_elementwise_bad_arguments
    add = E.new("T a, int32 b", "T c", "c = a + b", "bad_args")
    x = Cumo::SFloat[1, 2]
    {
      -> { E.new(1, "T y", "y = x") } => [TypeError, /in_params/],
      -> { E.new("T", "T y", "y = 1") } => [ArgumentError, /not \[raw\] TYPE NAME/],
      -> { E.new("complex128 x", "T y", "y = x") } => [ArgumentError, /unknown type complex128/],
      -> { E.new("T x", "T x", "x = 1") } => [ArgumentError, /named twice/],
      -> { E.new("T i", "T y", "y = i") } => [ArgumentError, /uses itself/],
      -> { E.new("T x", "T y", "y = x", "1bad") } => [ArgumentError, /C identifier/],
      -> { add.call(x) } => [ArgumentError, /takes 2 inputs/],
      -> { add.call(x, 2.5) } => [TypeError, /b is int: it takes an Integer/],
      -> { add.call(x, 2**40) } => [RangeError, /does not fit b/],
      -> { add.call(x, "2") } => [TypeError, /b must be a Cumo::NArray or a number/],
      -> { add.call(x, 1, Cumo::SFloat.zeros(3)) } => [Cumo::NArray::ShapeError, /do not broadcast/],
      -> { add.call(Cumo::SFloat.zeros(2, 1), 1, Cumo::SFloat.zeros(2)) } =>
        [Cumo::NArray::ShapeError, /the output c is \[2\]/],
      -> { E.new("float32 x", "float64 y", "y = x").call(x, Cumo::SFloat.zeros(2)) } =>
        [TypeError, /the output y is SFloat, and its parameter double/],
      -> { add.call(x, 1, Cumo::SFloat.zeros(2).freeze) } => [FrozenError, /c is frozen/],
      -> { add.call(x, 1, [0, 0]) } => [TypeError, /the output c must be a Cumo::NArray/],
      -> { squared_diff.call(Cumo::SFloat.zeros(2), Cumo::SFloat.zeros(3)) } =>
        [Cumo::NArray::ShapeError, /do not broadcast/],
      -> { squared_diff.call(Cumo::SFloat[1], Cumo::DFloat[1]) } => [TypeError, /T is SFloat/],
      -> { squared_diff.call(1, 2) } => [ArgumentError, /size: must say/],
      -> { squared_diff.call(x, x, size: 2) } => [ArgumentError, /size: is taken only/],
      -> { squared_diff.call(Cumo::Bit[1], Cumo::Bit[1]) } => [TypeError, /Bit cannot be handed/],
      -> { E.new("T x", "T y", "y = x +", "broken").call(x) } => [Cumo::CUDA::NVRTCError, /broken/],
      -> { E.new("T x", "T y", "x = y", "writes_input").call(x) } => [Cumo::CUDA::NVRTCError, //],
    }.each do |call, (error, message)|
      e = assert_raises(error) { call.call }
      assert_match message, e.message
    end
  end

  def test_the_specs_l2_norm
    l2norm = R.new("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2norm")
    x = Cumo::SFloat.new(2, 5).seq
    rows = l2norm.call(x, axis: 1)
    assert_equal [2], rows.shape
    [Math.sqrt(30), Math.sqrt(255)].zip(rows.to_a).each { |want, got| assert_in_delta want, got, 1e-5 }
    all = l2norm.call(x)
    assert_equal [], all.shape
    assert_in_delta Math.sqrt(285), all.to_f, 1e-5
    kept = l2norm.call(x, axis: 0, keepdims: true)
    assert_equal [1, 5], kept.shape
  end

  def test_reductions_follow_sum
    sum = R.new("T x", "T y", "x", "a + b", "y = a", "0", "my_sum")
    x = Cumo::Int64.new(3, 4, 5).seq
    [nil, 0, 1, 2, -1, [0, 2], [1, 2]].each do |axis|
      assert_equal x.sum(axis: axis).to_a, sum.call(x, axis: axis).to_a, axis.inspect
    end
    assert_equal x.sum(axis: 1, keepdims: true).to_a, sum.call(x, axis: 1, keepdims: true).to_a
    # A view, broadcast inputs, a number, reduce_type, several outputs.
    assert_equal x[true, (3..0).step(-1), 0].sum(axis: 1).to_a,
                 sum.call(x[true, (3..0).step(-1), 0], axis: 1).to_a
    dot = R.new("T a, T b", "T y", "a * b", "a + b", "y = a", "0", "my_dot")
    assert_equal [[10, 20], [30, 40]].map { |r| r.sum * 0 + (r[0] * 1 + r[1] * 2) },
                 dot.call(Cumo::Int32[[10, 20], [30, 40]], Cumo::Int32[1, 2], axis: 1).to_a
    assert_equal [6, 14], dot.call(Cumo::Int32[[1, 2], [3, 4]], 2, axis: 1).to_a
    wide = R.new("T x", "T s, T m", "x", "a + b", "s = a; m = a / 2", "0", "sum_and_half",
                 reduce_type: "float64")
    s, m = wide.call(Cumo::SFloat[[1, 2], [3, 4]], axis: 1)
    assert_equal [3.0, 7.0], s.to_a
    assert_equal [1.5, 3.5], m.to_a
    max = R.new("T x", "T y", "x", "a > b ? a : b", "y = a", "-2147483648", "my_max")
    assert_equal [4, 9], max.call(Cumo::Int32[[4, 1, 2], [9, 8, 7]], axis: 1).to_a
    # An empty reduction is the identity post-mapped.
    assert_equal [0, 0], sum.call(Cumo::Int64.zeros(2, 0), axis: 1).to_a
  end

  def test_long_axes_split_across_blocks
    sum = R.new("T x", "T y", "x", "a + b", "y = a", "0", "long_sum")
    x = Cumo::Int64.new(3, 200_000).seq
    assert_equal x.sum(axis: 1).to_a, sum.call(x, axis: 1).to_a
    assert_equal x.sum.to_i, sum.call(x).to_i
  end

  def test_reduction_bad_arguments
    sum = R.new("T x", "T y", "x", "a + b", "y = a", "0", "bad_sum")
    x = Cumo::SFloat[[1, 2]]
    {
      -> { R.new("raw T x", "T y", "x", "a + b", "y = a", "0") } => [ArgumentError, /cannot be raw/],
      -> { R.new("T x", "", "x", "a + b", "y = a", "0") } => [ArgumentError, /names no output/],
      -> { R.new("T x", "T y", "x", "a + b", "y = a", 0) } => [TypeError, /identity must be a String/],
      -> { R.new("T x", "T y", "x", "a + b", "y = a", "0", reduce_type: "quad") } => [ArgumentError, /no type/],
      -> { sum.call(x, axis: 2) } => [ArgumentError, /axis 2 is out of range/],
      -> { sum.call(x, axis: [0, 0]) } => [ArgumentError, /axis repeats/],
      -> { sum.call(x, axis: "0") } => [TypeError, /axis must be an Integer/],
      -> { sum.call(x, keepdims: 1) } => [TypeError, /keepdims/],
      -> { sum.call(x, Cumo::SFloat.zeros(3), axis: 1) } => [Cumo::NArray::ShapeError, /the output y/],
      -> { R.new("float32 x", "float32 y", "x", "a + b", "y = a", "0").call(x, Cumo::DFloat.zeros(1), axis: 1) } =>
        [TypeError, /the output y is DFloat, and its parameter float/],
    }.each do |call, (error, message)|
      e = assert_raises(error) { call.call }
      assert_match message, e.message
    end
  end
end
