#include "tests/cuda_emulator.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <stdexcept>

namespace cumo::test {

namespace {

/// What a kernel's source needs of CUDA, for the host compiler: a thread
/// is a fiber (ucontext) of the block's scheduler, which runs each fiber
/// until it waits at a barrier (__syncthreads, or a warp's meeting point
/// in a shuffle) and releases a barrier once every live thread of its
/// block or warp waits there. One OS thread runs it all, so atomics are
/// plain and shared memory is a static local (the block's, as blocks run
/// one after another).
constexpr const char *kPrelude = R"PRELUDE(
#include <ucontext.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <stdio.h>
#include <vector>

struct dim3 { unsigned x = 1, y = 1, z = 1; };
struct alignas(16) uint4 { unsigned x, y, z, w; };

namespace cumo_emu {
enum class Wait : unsigned char { None, Block, Warp, Done };
struct Fiber {
  ucontext_t ctx;
  Wait wait = Wait::None;
  std::vector<char> stack;
};
inline dim3 tid_, bid_, bdim_, gdim_;
inline std::vector<Fiber> fibers;
inline ucontext_t scheduler;
inline unsigned current = 0;
inline unsigned long long xchg[32][32];
alignas(16) inline unsigned char dyn_smem[1 << 16];
inline void (*kernel_fn)(const unsigned char *);
inline const unsigned char *kernel_params;

inline void yield(Wait w) {
  Fiber &f = fibers[current];
  f.wait = w;
  swapcontext(&f.ctx, &scheduler);
}
inline void trampoline() {
  kernel_fn(kernel_params);
  yield(Wait::Done);
}
} // namespace cumo_emu

#define threadIdx cumo_emu::tid_
#define blockIdx cumo_emu::bid_
#define blockDim cumo_emu::bdim_
#define gridDim cumo_emu::gdim_
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))

inline void __syncthreads() { cumo_emu::yield(cumo_emu::Wait::Block); }
inline void __threadfence() {}
template <class T> inline T __ldcg(const T *p) { return *p; }
inline unsigned atomicAdd(unsigned *p, unsigned v) { unsigned o = *p; *p = o + v; return o; }
inline unsigned atomicOr(unsigned *p, unsigned v) { unsigned o = *p; *p = o | v; return o; }
inline unsigned atomicMin(unsigned *p, unsigned v) { unsigned o = *p; if (v < o) *p = v; return o; }
inline float __int_as_float(int i) { float f; memcpy(&f, &i, 4); return f; }
inline double __longlong_as_double(long long i) { double d; memcpy(&d, &i, 8); return d; }
template <class A, class B> inline auto min(A a, B b) -> decltype(a + b) { return a < b ? a : b; }
template <class A, class B> inline auto max(A a, B b) -> decltype(a + b) { return a < b ? b : a; }

template <class T> inline T cumo_emu_exchange(T v, unsigned src) {
  unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
  static_assert(sizeof(T) <= 8, "a shuffle moves at most 8 bytes");
  memcpy(&cumo_emu::xchg[warp][lane], &v, sizeof(T));
  cumo_emu::yield(cumo_emu::Wait::Warp);
  T r;
  memcpy(&r, &cumo_emu::xchg[threadIdx.x >> 5][src & 31u], sizeof(T));
  cumo_emu::yield(cumo_emu::Wait::Warp);
  return r;
}
template <class T> inline T __shfl_sync(unsigned, T v, int src) {
  return cumo_emu_exchange(v, unsigned(src));
}
template <class T> inline T __shfl_down_sync(unsigned, T v, unsigned delta) {
  unsigned lane = threadIdx.x & 31u;
  return cumo_emu_exchange(v, lane + delta < 32u ? lane + delta : lane);
}
template <class T> inline T __shfl_xor_sync(unsigned, T v, int mask) {
  return cumo_emu_exchange(v, (threadIdx.x & 31u) ^ unsigned(mask));
}
)PRELUDE";

/// The launcher, after the kernel: runs the grid a block at a time.
constexpr const char *kLauncher = R"LAUNCHER(
extern "C" int cumo_emu_launch(void (*fn)(const unsigned char *), unsigned grid,
                               unsigned block, const unsigned char *params) {
  using namespace cumo_emu;
  kernel_fn = fn;
  kernel_params = params;
  bdim_ = {block, 1, 1};
  gdim_ = {grid, 1, 1};
  fibers.assign(block, Fiber());
  for (Fiber &f : fibers)
    f.stack.resize(256 * 1024);
  unsigned warps = (block + 31) / 32;
  for (unsigned b = 0; b < grid; ++b) {
    bid_ = {b, 0, 0};
    for (Fiber &f : fibers) {
      getcontext(&f.ctx);
      f.ctx.uc_stack.ss_sp = f.stack.data();
      f.ctx.uc_stack.ss_size = f.stack.size();
      f.ctx.uc_link = nullptr;
      makecontext(&f.ctx, trampoline, 0);
      f.wait = Wait::None;
    }
    for (;;) {
      for (unsigned t = 0; t < block; ++t)
        if (fibers[t].wait == Wait::None) {
          current = t;
          tid_ = {t, 0, 0};
          swapcontext(&scheduler, &fibers[t].ctx);
        }
      unsigned done = 0, atBlock = 0;
      for (const Fiber &f : fibers) {
        done += f.wait == Wait::Done;
        atBlock += f.wait == Wait::Block;
      }
      if (done == block)
        break;
      // A warp meets when every live lane waits at its meeting point.
      bool released = false;
      for (unsigned w = 0; w < warps; ++w) {
        unsigned live = 0, waiting = 0;
        for (unsigned t = w * 32; t < block && t < w * 32 + 32; ++t) {
          live += fibers[t].wait != Wait::Done;
          waiting += fibers[t].wait == Wait::Warp;
        }
        if (waiting && waiting == live) {
          for (unsigned t = w * 32; t < block && t < w * 32 + 32; ++t)
            if (fibers[t].wait == Wait::Warp)
              fibers[t].wait = Wait::None;
          released = true;
        }
      }
      if (!released && atBlock == block - done) {
        for (Fiber &f : fibers)
          if (f.wait == Wait::Block)
            f.wait = Wait::None;
        released = true;
      }
      if (!released)
        return int(b) + 1; // threads wait at barriers others never reach
    }
  }
  return 0;
}
)LAUNCHER";

std::string hostCompiler() {
  if (const char *cxx = std::getenv("CUMO_EMULATOR_CXX"); cxx && *cxx)
    return cxx;
#ifdef CUMO_HOST_CXX
  return CUMO_HOST_CXX;
#else
  return "c++";
#endif
}

std::string sourceRoot() {
#ifdef CUMO_SOURCE_ROOT
  return CUMO_SOURCE_ROOT;
#else
  return ".";
#endif
}

using Launch = int (*)(void (*)(const unsigned char *), unsigned, unsigned,
                       const unsigned char *);
struct Loaded {
  void *handle = nullptr;
  void (*kernel)(const unsigned char *) = nullptr;
  Launch launch = nullptr;
};

/// A folder of the process's own for the kernels' sources and libraries,
/// removed at exit.
std::string workDir() {
  // Never destroyed: the exit handler reads it after static destructors.
  static const std::string *dir = [] {
    char tmpl[] = "/tmp/cumo-emulator-XXXXXX";
    const char *d = mkdtemp(tmpl);
    if (!d)
      throw std::runtime_error("emulator: cannot make a work folder");
    auto *path = new std::string(d);
    std::atexit([] {
      std::error_code ignored;
      std::filesystem::remove_all(workDir(), ignored);
    });
    return path;
  }();
  return *dir;
}

Loaded build(const KernelSource &src) {
  std::string dir = workDir(), base = dir + "/" + src.entry;
  std::string source = src.source;
  const std::string include = "#include \"cumo_portable_ops.h\"";
  if (size_t at = source.find(include); at != std::string::npos)
    source.replace(at, include.size(), "#include \"ops/portable_ops.h\"");
  const std::string dynamic = "extern __shared__ __align__(16) unsigned char cumo_smem[];";
  for (size_t at; (at = source.find(dynamic)) != std::string::npos;)
    source.replace(at, dynamic.size(), "unsigned char *cumo_smem = cumo_emu::dyn_smem;");
  {
    std::ofstream out(base + ".cpp");
    out << kPrelude << source << kLauncher;
  }
  std::string cmd = hostCompiler() + " -std=c++20 -O1 -fPIC -shared -w -ffp-contract=off -I" +
                    sourceRoot() + " -o " + base + ".so " + base + ".cpp > " + base +
                    ".log 2>&1";
  if (std::system(cmd.c_str()) != 0) {
    std::ifstream log(base + ".log");
    std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
    throw std::runtime_error("emulator: " + src.entry + " does not compile:\n" +
                             text.substr(0, 4000));
  }
  Loaded l;
  l.handle = dlopen((base + ".so").c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!l.handle)
    throw std::runtime_error(std::string("emulator: dlopen: ") + dlerror());
  l.kernel = reinterpret_cast<void (*)(const unsigned char *)>(dlsym(l.handle, src.entry.c_str()));
  l.launch = reinterpret_cast<Launch>(dlsym(l.handle, "cumo_emu_launch"));
  if (!l.kernel || !l.launch)
    throw std::runtime_error("emulator: " + src.entry + " has no entry");
  return l;
}

} // namespace

bool emulatorAvailable() {
  static const bool ok = [] {
    std::string cmd = hostCompiler() + " --version > /dev/null 2>&1";
    return std::system(cmd.c_str()) == 0;
  }();
  return ok;
}

void emulateKernel(const KernelSource &src, const LaunchConfig &launch, const void *params) {
  static std::map<std::string, Loaded> cache;
  static std::mutex lock;
  std::lock_guard<std::mutex> guard(lock);
  auto it = cache.find(src.entry);
  if (it == cache.end())
    it = cache.emplace(src.entry, build(src)).first;
  if (launch.sharedBytes > (1u << 16))
    throw std::runtime_error("emulator: " + src.entry + " asks for more shared memory than 64 KiB");
  int failed = it->second.launch(it->second.kernel, launch.grid, launch.block,
                                 static_cast<const unsigned char *>(params));
  if (failed)
    throw std::runtime_error("emulator: " + src.entry + ": in block " +
                             std::to_string(failed - 1) +
                             " threads wait at barriers the others never reach");
}

} // namespace cumo::test
