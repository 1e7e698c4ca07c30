#include "graph/host_kernels.h"

#include "core/content_hash.h"
#include "core/error.h"
#include "core/release_queue.h"
#include "fusion/cuda_codegen.h"
#include "graph/engine.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

#ifdef CUMO_HAVE_CUDA
#include "fusion/cuda/nvrtc_compiler.h"
#endif

namespace cumo {

namespace {

/// What the generated source needs of CUDA, for the host compiler.
constexpr const char *kPrelude = R"PRELUDE(
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __restrict__ __restrict
struct cumo_host_dim3 { unsigned x, y, z; };
// One thread: a grid-stride loop runs every element.
static const cumo_host_dim3 threadIdx{0, 0, 0}, blockIdx{0, 0, 0};
static const cumo_host_dim3 blockDim{1, 1, 1}, gridDim{1, 1, 1};
// CUDA's half types as the host sees them: converting to and from every
// arithmetic type, arithmetic only between two of them (a mix with another
// type is ambiguous, as it does not compile for the GPU either).
#define CUMO_HOST_HALF(Name, Storage)                                               \
  struct Name {                                                                     \
    unsigned short bits_;                                                           \
    Name() = default;                                                               \
    Name(float f) : bits_(cumo_ops::Storage(f).bits) {}                             \
    Name(double d) : bits_(cumo_ops::Storage(d).bits) {}                            \
    template <class I, class = typename std::enable_if<std::is_integral<I>::value>::type> \
    Name(I v) : Name(double(v)) {}                                                  \
    operator float() const {                                                        \
      cumo_ops::Storage s;                                                          \
      s.bits = bits_;                                                               \
      return float(s);                                                              \
    }                                                                               \
  };                                                                                \
  inline Name operator+(Name a, Name b) { return Name(float(a) + float(b)); }       \
  inline Name operator-(Name a, Name b) { return Name(float(a) - float(b)); }       \
  inline Name operator*(Name a, Name b) { return Name(float(a) * float(b)); }       \
  inline Name operator/(Name a, Name b) { return Name(float(a) / float(b)); }       \
  inline Name operator-(Name a) { return Name(-float(a)); }                         \
  inline Name &operator+=(Name &a, Name b) { return a = a + b; }                    \
  inline Name &operator-=(Name &a, Name b) { return a = a - b; }                    \
  inline Name &operator*=(Name &a, Name b) { return a = a * b; }                    \
  inline Name &operator/=(Name &a, Name b) { return a = a / b; }                    \
  inline bool operator==(Name a, Name b) { return float(a) == float(b); }           \
  inline bool operator!=(Name a, Name b) { return float(a) != float(b); }           \
  inline bool operator<(Name a, Name b) { return float(a) < float(b); }             \
  inline bool operator<=(Name a, Name b) { return float(a) <= float(b); }           \
  inline bool operator>(Name a, Name b) { return float(a) > float(b); }             \
  inline bool operator>=(Name a, Name b) { return float(a) >= float(b); }
CUMO_HOST_HALF(__half, half)
CUMO_HOST_HALF(__nv_bfloat16, bfloat16)
#define CUMO_HOST 1
)PRELUDE";

std::string hostCompiler() {
  if (const char *cxx = std::getenv("CUMO_HOST_CXX"); cxx && *cxx)
    return cxx;
#ifdef CUMO_BUILD_CXX
  return CUMO_BUILD_CXX;
#else
  return "c++";
#endif
}

constexpr const char *kFlags = " -std=c++17 -O2 -fPIC -shared -w";

/// `path` as one shell word.
std::string quoted(const std::string &path) {
  std::string out = "'";
  for (char c : path)
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

/// Where the libraries go: the kernel cache directory, else a folder of
/// this process's own.
std::string libraryDir() {
#ifdef CUMO_HAVE_CUDA
  std::string dir = NvrtcCompiler::diskCacheDir();
  if (!dir.empty())
    return dir;
#endif
  static const std::string *own = [] {
    char tmpl[] = "/tmp/cumo-host-kernels-XXXXXX";
    const char *d = mkdtemp(tmpl);
    if (!d)
      throw Error(ErrorKind::Internal, "[host kernels] cannot make a work folder");
    return new std::string(d);
  }();
  return *own;
}

bool writeFile(const std::string &path, std::string_view text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(text.data(), std::streamsize(text.size()));
  return bool(out);
}

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

} // namespace

HostProgram::HostProgram(std::string entry, void *library, void (*fn)(void **))
    : entry_(std::move(entry)), library_(library), fn_(fn) {}

HostProgram::~HostProgram() {
  // The last holder may be a Ruby object the GC is freeing: closed at the
  // next safe point, as every release from a GC free is.
  if (library_)
    ReleaseQueue::get().pushRelease([](void *library) { dlclose(library); }, library_);
}

std::shared_ptr<HostProgram> HostProgram::compile(const std::string &source,
                                                  const std::string &entry) {
  // The storage types' text is the first part of the header NVRTC gets.
  std::string_view ops = portableOpsHeader();
  std::string_view types = ops.substr(0, ops.find("#ifndef CUMO_PORTABLE_OPS_H"));
  std::string cxx = hostCompiler();
  std::string all = std::string(kPrelude) + '\0' + std::string(types) + '\0' + source + '\0' +
                    cxx + kFlags;
  std::string key = sha256Hex(all);
  std::string dir = libraryDir();
  std::string base = dir + "/host-" + key;
  std::string library = base + ".so";
  if (::access(library.c_str(), R_OK) != 0) {
    std::string tmp = base + ".tmp." + std::to_string(::getpid());
    // One file: the storage types (cumo_ops::half ...), the prelude, the kernel.
    if (!writeFile(tmp + ".cpp", std::string(types) + kPrelude + source))
      throw Error(ErrorKind::Internal, "[host kernels] cannot write into " + dir);
    // (The compiler is a command line of its own, a wrapper and a compiler
    // perhaps: not quoted; the paths are.)
    std::string cmd = cxx + kFlags + " -o " + quoted(tmp + ".so") + " " + quoted(tmp + ".cpp") +
                      " > " + quoted(tmp + ".log") + " 2>&1";
    int status = std::system(cmd.c_str());
    std::string log = readFile(tmp + ".log");
    std::remove((tmp + ".cpp").c_str());
    std::remove((tmp + ".log").c_str());
    if (status != 0) {
      std::remove((tmp + ".so").c_str());
      throw Error(ErrorKind::Nvrtc, "[" + entry + "] the host compiler (" + cxx +
                                        ") refused the kernel:\n" + log.substr(0, 4000));
    }
    if (std::rename((tmp + ".so").c_str(), library.c_str()) != 0)
      throw Error(ErrorKind::Internal, "[host kernels] cannot store " + library);
  }
  void *handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    throw Error(ErrorKind::Internal, std::string("[host kernels] dlopen: ") + dlerror());
  auto fn = reinterpret_cast<void (*)(void **)>(dlsym(handle, (entry + "_host").c_str()));
  if (!fn) {
    dlclose(handle);
    throw Error(ErrorKind::Internal, "[host kernels] " + entry + "_host is missing");
  }
  return std::shared_ptr<HostProgram>(new HostProgram(entry, handle, fn));
}

void HostProgram::run(llvm::ArrayRef<std::string> args) {
  Engine::get().flush(); // the CPU executor has run everything once flushed
  std::vector<void *> pointers;
  for (const std::string &a : args)
    pointers.push_back(const_cast<char *>(a.data()));
  fn_(pointers.data());
}

} // namespace cumo
