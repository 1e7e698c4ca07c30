// Kernels users write (graph/user_kernels.h): NVRTC's compile of a program
// with name expressions, its two caches, the kernels read from a cubin's
// symbol table, and the checks made before anything runs. Launching needs
// a GPU: tests/ruby/test_user_kernels.rb does that on the gpu suite.
#include "core/stats.h"
#include "fusion/cuda/nvrtc_compiler.h"
#include "graph/cubin_symbols.h"
#include "graph/user_kernels.h"

#include "test_helpers.h"

#include <doctest/doctest.h>

#include <algorithm>

using namespace cumo;
using namespace cumo::test;

namespace {

const char *kSource = R"(
extern "C" __global__ void axpy(float* y, const float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
__device__ __noinline__ float twice(float v) { return v * 2; }
template <class T> __global__ void scale(T* a) { a[threadIdx.x] = twice(float(a[threadIdx.x])); }
)";

bool has(const std::vector<std::string> &v, const std::string &s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

} // namespace

TEST_CASE("a program's kernels, by their names, their mangled names and name expressions") {
  engine();
  std::shared_ptr<UserProgram> p =
      compileUserProgram(kSource, {}, {"scale<float>", "scale<double>"});
  const std::vector<std::string> &k = p->kernels();
  CHECK(has(k, "axpy"));
  CHECK(has(k, "_Z5scaleIfEvPT_"));
  CHECK(has(k, "_Z5scaleIdEvPT_"));
  // A device function is no entry point.
  CHECK(!has(k, "_Z5twicef"));
  CHECK(p->symbolOf("axpy") == "axpy");
  CHECK(p->symbolOf("scale<double>") == "_Z5scaleIdEvPT_");
  CHECK(p->symbolOf("_Z5scaleIfEvPT_") == "_Z5scaleIfEvPT_");
  std::optional<Error> e = errorOf([&] { p->symbolOf("scale<int>"); });
  REQUIRE(e);
  CHECK(e->kind() == ErrorKind::Argument);
  CHECK(e->message().find("[get_function] no kernel named scale<int>") == 0);
  // NVRTC itself refuses a name expression of a device function.
  std::optional<Error> d = errorOf([&] { compileUserProgram(kSource, {}, {"twice"}); });
  REQUIRE(d);
  CHECK(d->kind() == ErrorKind::Nvrtc);
}

TEST_CASE("a program is compiled once a machine: the disk cache") {
  engine();
  if (NvrtcCompiler::diskCacheDir().empty())
    return; // no usable cache directory here
  std::string source = std::string(kSource) + "// a variant no other test compiles\n";
  auto compile = [&](const char *define) {
    return NvrtcCompiler::get().compileProgram(source, {define}, {"scale<float>"}, 9, 0);
  };
  Stats::get().reset();
  NvrtcCompiler::Program a = compile("-DVARIANT=1");
  uint64_t seen = Stats::get().nvrtc_compiles + Stats::get().disk_cache_hits;
  CHECK(seen == 1);
  uint64_t compiles = Stats::get().nvrtc_compiles;
  NvrtcCompiler::Program b = compile("-DVARIANT=1");
  CHECK(Stats::get().nvrtc_compiles == compiles);
  CHECK(Stats::get().disk_cache_hits >= 1);
  CHECK(a.cubin == b.cubin);
  CHECK(a.lowered == b.lowered);
  // Other options are another program.
  uint64_t before = Stats::get().nvrtc_compiles + Stats::get().disk_cache_hits;
  compile("-DVARIANT=2");
  CHECK(Stats::get().nvrtc_compiles + Stats::get().disk_cache_hits == before + 1);
}

TEST_CASE("a compile error carries NVRTC's log") {
  engine();
  std::optional<Error> e = errorOf([] { compileUserProgram("not CUDA at all", {}, {}); });
  REQUIRE(e);
  CHECK(e->kind() == ErrorKind::Nvrtc);
  CHECK(e->message().find("[compile_with_cache]") == 0);
  CHECK(e->message().find("error") != std::string::npos);
  std::optional<Error> bad = errorOf([] { compileUserProgram(kSource, {"--no-such-option"}, {}); });
  REQUIRE(bad);
  CHECK(bad->kind() == ErrorKind::Nvrtc);
}

TEST_CASE("cubinKernels reads nothing from what is no cubin") {
  CHECK(cubinKernels("").empty());
  CHECK(cubinKernels("\x7f"
                     "ELF but truncated")
            .empty());
  std::string junk(200, '\0');
  junk.replace(0, 4,
               "\x7f"
               "ELF");
  junk[4] = 2;
  junk[5] = 1;
  junk[0x28] = char(0xff); // section headers far past the end
  CHECK(cubinKernels(junk).empty());
}

TEST_CASE("without a GPU a launch is refused before anything runs") {
  if (engine().gpu())
    return; // tests/ruby/test_user_kernels.rb launches on the GPU
  std::shared_ptr<UserProgram> p = compileUserProgram(kSource, {}, {});
  H y = upload(DType::SFloat, {4}, values<double>({1, 2, 3, 4}));
  std::optional<Error> e = errorOf([&] { requireGpu("launch"); });
  REQUIRE(e);
  CHECK(e->kind() == ErrorKind::Cuda);
  CHECK(e->message().find("[launch] a CUDA kernel runs on the GPU") == 0);
  std::optional<Error> l = errorOf([&] { launchUserKernel(*p, "axpy", {}, UserLaunchShape()); });
  REQUIRE(l);
  CHECK(l->kind() == ErrorKind::Cuda);
}
