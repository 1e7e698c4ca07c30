# frozen_string_literal: true

# Kernels users write in CUDA C (the spec's "Launching Your Own Kernel" and
# "Structs And Template Kernels"; lib/cumo/cuda.rb, graph/user_kernels.h).
# Compiling, the module cache and looking kernels up run on both executors
# (NVRTC needs no GPU); launching runs on the GPU, and on the CPU executor
# is refused with Cumo::CUDA::RuntimeError before anything runs.
require "minitest/autorun"
require "cumo/narray"

class TestUserKernels < Minitest::Test
  SOURCE = <<~CUDA
    extern "C" __global__ void axpy(float* y, const float* x, float a, int n) {
      for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        y[i] = a * x[i] + y[i];
      }
    }
    struct Vec3 { double x, y, z; };
    extern "C" __global__ void add3(const double* lhs, Vec3 rhs, double* out, int n) {
      int i = threadIdx.x;
      if (i < n) {
        out[3 * i] = lhs[3 * i] + rhs.x;
        out[3 * i + 1] = lhs[3 * i + 1] + rhs.y;
        out[3 * i + 2] = lhs[3 * i + 2] + rhs.z;
      }
    }
    template <class T> __global__ void scaled(const T* a, const T* b, const T* c, T* out) {
      int i = threadIdx.x;
      out[i] = a[i] * c[0] + b[i];
    }
    extern "C" __global__ void fill_index(long long* out, long long n) {
      long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
      if (i < n) out[i] = i * 10;
    }
  CUDA

  def compile(source = SOURCE, **opts) = Cumo::CUDA::Compiler.new.compile_with_cache(source, **opts)

  def test_the_same_source_answers_the_same_module
    a = compile(name_expressions: ["scaled<float>"])
    assert_same a, compile(name_expressions: ["scaled<float>"])
    refute_same a, compile(name_expressions: ["scaled<double>"])
    refute_same a, compile(options: ["-DOTHER"], name_expressions: ["scaled<float>"])
    Cumo::CUDA::Compiler.clear_modules
    refute_same a, compile(name_expressions: ["scaled<float>"])
    a.unload
    refute a.loaded?
    assert_raises(ArgumentError) { a.get_function("axpy") }
  end

  def test_kernels_by_name_mangled_name_and_name_expression
    mod = compile(name_expressions: ["scaled<float>", "scaled<double>"])
    assert_includes mod.kernels, "axpy"
    assert_includes mod.kernels, "_Z6scaledIfEvPKT_S2_S2_PS0_"
    assert_equal "axpy", mod.get_function("axpy").name
    assert_equal "scaled<double>", mod.get_function("scaled<double>").name
    mod.get_function("_Z6scaledIfEvPKT_S2_S2_PS0_")
    e = assert_raises(ArgumentError) { mod.get_function("scaled<int>") }
    assert_match(/\[get_function\] no kernel named scaled<int>/, e.message)
  end

  def test_bad_arguments_raise_at_the_call
    f = compile.get_function("axpy")
    y = Cumo::SFloat.ones(4)
    {
      -> { compile(42) } => [TypeError, /\[compile_with_cache\] the source/],
      -> { compile(options: [1]) } => [TypeError, /\[compile_with_cache\] options/],
      -> { compile("not CUDA") } => [Cumo::CUDA::NVRTCError, /\[compile_with_cache\].*error/m],
      -> { compile.get_function(:axpy) } => [TypeError, /\[get_function\]/],
      -> { f.launch(y, grid: 1, block: 1) } => [TypeError, /\[launch\] args/],
      -> { f.launch([y, Object.new], grid: 1, block: 1) } => [TypeError, /\[launch\] argument 1/],
      -> { f.launch([y, ""], grid: 1, block: 1) } => [ArgumentError, /\[launch\] argument 1 is an empty/],
      -> { f.launch([y, 2**70], grid: 1, block: 1) } => [RangeError, //],
      -> { f.launch([y.dup.freeze], grid: 1, block: 1) } => [FrozenError, /\[launch\]/],
      -> { f.launch([y], grid: 0, block: 1) } => [ArgumentError, /\[launch\] grid/],
      -> { f.launch([y], grid: [1, 1, 1, 1], block: 1) } => [ArgumentError, /\[launch\] grid/],
      -> { f.launch([y], grid: 1, block: 1.5) } => [ArgumentError, /\[launch\] block/],
      -> { f.launch([y], grid: 1, block: 1, shared_mem: -1) } => [ArgumentError, /\[launch\] shared_mem/],
      -> { f.launch([y], grid: 1, block: 1, stream: :s) } => [TypeError, /\[launch\] stream/],
      -> { f.send(:__launch, [y], 1, 1, 0, nil) } => [ArgumentError, /\[launch\] grid must be three sizes/],
      -> { f.launch([Cumo::SFloat.allocate], grid: 1, block: 1) } => [TypeError, /uninitialized/],
    }.each do |call, (error, message)|
      e = assert_raises(error) { call.call }
      assert_match message, e.message
    end
    assert_equal [1.0] * 4, y.to_a
  end

  def test_the_specs_axpy
    x = Cumo::SFloat.new(1000).seq
    y = Cumo::SFloat.ones(1000)
    axpy = compile.get_function("axpy")
    unless Cumo.gpu?
      e = assert_raises(Cumo::CUDA::RuntimeError) do
        axpy.launch([y, x, [2.5].pack("f"), [1000].pack("l")], grid: 4, block: 256)
      end
      assert_match(/\[launch\] a CUDA kernel runs on the GPU/, e.message)
      assert_equal [1.0] * 1000, y.to_a, "nothing ran"
      return
    end
    axpy.launch([y, x, [2.5].pack("f"), [1000].pack("l")], grid: 4, block: 256)
    assert_equal Array.new(1000) { |i| 2.5 * i + 1 }, y.to_a
  end

  # What comes before the kernel is computed first; what comes after sees
  # its writes; an array that shares its values with another (a dup) is
  # written alone; one never written is allocated on the way.
  def test_ordering_and_ownership
    skip "launching needs the GPU" unless Cumo.gpu?
    axpy = compile.get_function("axpy")
    x = Cumo::SFloat.new(8).seq * 2 # pending when the kernel is launched
    y = Cumo::SFloat.ones(8)
    kept = y.dup
    axpy.launch([y, x, [1.0].pack("f"), [8].pack("l")], grid: 1, block: 32)
    z = y + 1 # recorded after: sees the write
    assert_equal Array.new(8) { |i| 2.0 * i + 2 }, z.to_a
    assert_equal [1.0] * 8, kept.to_a
    fill = compile.get_function("fill_index")
    out = Cumo::Int64.new(5)
    fill.launch([out, 5], grid: 1, block: 32)
    assert_equal [0, 10, 20, 30, 40], out.to_a
    base = Cumo::Int64.zeros(10)
    fill.launch([base[2..6], 5], grid: 1, block: 32) # a view writes its base
    assert_equal [0, 0, 0, 10, 20, 30, 40, 0, 0, 0], base.to_a
    e = assert_raises(ArgumentError) { fill.launch([base[(0..9).step(2)], 5], grid: 1, block: 32) }
    assert_match(/\[launch\] the array must be contiguous/, e.message)
  end

  def test_structs_and_templates
    skip "launching needs the GPU" unless Cumo.gpu?
    mod = compile(name_expressions: ["scaled<float>", "scaled<double>"])
    lhs = Cumo::DFloat.new(4, 3).seq
    out = Cumo::DFloat.zeros(4, 3)
    mod.get_function("add3").launch([lhs, [10.0, 20.0, 30.0].pack("d3"), out, [4].pack("l")],
                                    grid: 1, block: 4)
    assert_equal (lhs + Cumo::DFloat[10, 20, 30]).to_a, out.to_a
    a = Cumo::DFloat[1, 2, 3]
    b = Cumo::DFloat[10, 20, 30]
    c = Cumo::DFloat[2]
    r = Cumo::DFloat.zeros(3)
    mod.get_function("scaled<double>").launch([a, b, c, r], grid: 1, block: 3)
    assert_equal [12.0, 24.0, 36.0], r.to_a
    s = Cumo::SFloat.zeros(3)
    mod.get_function("scaled<float>").launch([a.cast_to(Cumo::SFloat), b.cast_to(Cumo::SFloat),
                                              c.cast_to(Cumo::SFloat), s], grid: 1, block: 3)
    assert_equal [12.0, 24.0, 36.0], s.to_a
  end

  # Where the driver tells each parameter's size (CUDA 12.4 on), a wrong
  # count or size is refused before the launch.
  def test_parameter_sizes_are_checked_where_the_driver_tells_them
    axpy = compile.get_function("axpy")
    unless Cumo.gpu?
      assert_raises(Cumo::CUDA::RuntimeError) { axpy.parameter_sizes }
      return
    end
    sizes = axpy.parameter_sizes
    skip "this driver does not report kernel parameters (cuKernelGetParamInfo)" if sizes.nil?
    assert_equal [8, 8, 4, 4], sizes
    y = Cumo::SFloat.ones(4)
    x = Cumo::SFloat.ones(4)
    e = assert_raises(ArgumentError) { axpy.launch([y, x, 2.5, 4], grid: 1, block: 4) }
    assert_match(/\[launch\] argument 2 of axpy is 4 bytes, and 8 were given/, e.message)
    e = assert_raises(ArgumentError) { axpy.launch([y, x], grid: 1, block: 4) }
    assert_match(/\[launch\] axpy takes 4 arguments, not 2/, e.message)
    assert_equal [1.0] * 4, y.to_a
  end

  # More dynamic shared memory than the 48 KiB a kernel gets unasked.
  def test_large_dynamic_shared_memory
    skip "launching needs the GPU" unless Cumo.gpu?
    source = <<~CUDA
      extern "C" __global__ void through_shared(const float* x, float* y, int n) {
        extern __shared__ float staged[];
        for (int i = threadIdx.x; i < n; i += blockDim.x) staged[i] = x[i] * 2;
        __syncthreads();
        for (int i = threadIdx.x; i < n; i += blockDim.x) y[i] = staged[n - 1 - i];
      }
    CUDA
    n = 16_384 # 64 KiB of floats
    x = Cumo::SFloat.new(n).seq
    y = Cumo::SFloat.zeros(n)
    compile(source).get_function("through_shared").launch([x, y, [n].pack("l")], grid: 1, block: 256,
                                                                                 shared_mem: n * 4)
    assert_equal (x * 2).to_a.reverse, y.to_a
  end
end
