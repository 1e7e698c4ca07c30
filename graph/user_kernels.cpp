#include "graph/user_kernels.h"

#include "core/array.h"
#include "core/error.h"
#include "core/release_queue.h"
#include "graph/cubin_symbols.h"
#include "graph/engine.h"

#include <algorithm>
#include <optional>

#ifdef CUMO_HAVE_CUDA
#include "core/cuda/cuda_check.h"
#include "core/cuda/cuda_device.h"
#include "fusion/cuda/nvrtc_compiler.h"

#include <cuda_runtime_api.h>
#endif

namespace cumo {

UserProgram::UserProgram(std::string cubin, std::vector<std::string> expressions,
                         std::vector<std::string> lowered)
    : cubin_(std::move(cubin)), expressions_(std::move(expressions)), lowered_(std::move(lowered)),
      kernels_(cubinKernels(cubin_)) {}

#ifdef CUMO_HAVE_CUDA
namespace {
/// Unloads a library once the kernels queued before now have run (a
/// launch returns at once). At a safe point only: it waits for the device.
void unloadAfterQueue(void *library) {
  currentDevice().synchronize();
  cudaLibraryUnload(static_cast<cudaLibrary_t>(library)); // not checked: nothing to do
}
} // namespace
#endif

UserProgram::~UserProgram() {
#ifdef CUMO_HAVE_CUDA
  // The last holder may be a Ruby object the GC is freeing: no CUDA here.
  if (library_)
    ReleaseQueue::get().pushRelease(unloadAfterQueue, library_);
#endif
}

std::string UserProgram::symbolOf(const std::string &name) const {
  auto isKernel = [&](const std::string &symbol) {
    return std::find(kernels_.begin(), kernels_.end(), symbol) != kernels_.end();
  };
  for (size_t i = 0; i < expressions_.size(); ++i)
    if (expressions_[i] == name) {
      if (!isKernel(lowered_[i]))
        opError(ErrorKind::Argument, "get_function",
                name + " (" + lowered_[i] + ") is no __global__ kernel of the module");
      return lowered_[i];
    }
  if (isKernel(name))
    return name;
  std::string have;
  for (const std::string &k : kernels_)
    have += (have.empty() ? "" : ", ") + k;
  for (const std::string &e : expressions_)
    have += (have.empty() ? "" : ", ") + e;
  opError(ErrorKind::Argument, "get_function",
          "no kernel named " + name + " in the module (it has " +
              (have.empty() ? std::string("none") : have) +
              "); a C++ kernel is found by its extern \"C\" name, its mangled name, or a "
              "name expression given to compile_with_cache");
}

void *UserProgram::kernel(const std::string &symbol) {
#ifdef CUMO_HAVE_CUDA
  if (!library_) {
    cudaLibrary_t lib = nullptr;
    cudaCheck(cudaLibraryLoadData(&lib, cubin_.data(), nullptr, nullptr, 0, nullptr, nullptr, 0),
              "cudaLibraryLoadData");
    library_ = lib;
  }
  cudaKernel_t k = nullptr;
  cudaCheck(cudaLibraryGetKernel(&k, static_cast<cudaLibrary_t>(library_), symbol.c_str()),
            "cudaLibraryGetKernel");
  return reinterpret_cast<void *>(k);
#else
  (void)symbol;
  opError(ErrorKind::NotImplemented, "launch", "this build has no CUDA executor");
#endif
}

std::shared_ptr<UserProgram> compileUserProgram(const std::string &source,
                                                llvm::ArrayRef<std::string> options,
                                                llvm::ArrayRef<std::string> nameExpressions) {
#ifdef CUMO_HAVE_CUDA
  const DeviceModel &model = Engine::get().device().model();
  NvrtcCompiler::Program p = NvrtcCompiler::get().compileProgram(source, options, nameExpressions,
                                                                 model.ccMajor, model.ccMinor);
  return std::make_shared<UserProgram>(
      std::move(p.cubin), std::vector<std::string>(nameExpressions.begin(), nameExpressions.end()),
      std::move(p.lowered));
#else
  (void)source, (void)options, (void)nameExpressions;
  opError(ErrorKind::NotImplemented, "compile_with_cache", "this build has no NVRTC");
#endif
}

namespace {

/// Cumo::CUDA::RuntimeError, as any CUDA call without a device answers.
[[noreturn]] void needsGpu(const char *op) {
  opError(ErrorKind::Cuda, op,
          "a CUDA kernel runs on the GPU, and the engine has none (" + Engine::get().noGpuReason() +
              ")");
}

} // namespace

void requireGpu(const char *op) {
  if (!Engine::get().gpu())
    needsGpu(op);
}

#ifdef CUMO_HAVE_CUDA
namespace {

/// cuKernelGetParamInfo (CUDA 12.4 drivers on), asked of the runtime's own
/// driver: nothing links the driver library.
using ParamInfoFn = int (*)(void *kernel, size_t index, size_t *offset, size_t *size);
ParamInfoFn paramInfo() {
  static ParamInfoFn fn = [] {
    void *p = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    if (cudaGetDriverEntryPointByVersion("cuKernelGetParamInfo", &p, 12040, cudaEnableDefault,
                                         &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess) {
      cudaGetLastError();
      return ParamInfoFn(nullptr);
    }
    return reinterpret_cast<ParamInfoFn>(p);
  }();
  return fn;
}

/// Each parameter's size, when the driver tells them.
bool parameterSizes(void *kernel, std::vector<size_t> &sizes) {
  ParamInfoFn fn = paramInfo();
  if (!fn)
    return false;
  for (size_t i = 0;; ++i) {
    size_t offset = 0, size = 0;
    int r = fn(kernel, i, &offset, &size);
    if (r == 1 /* CUDA_ERROR_INVALID_VALUE: past the last */)
      return true;
    if (r != 0)
      return false;
    sizes.push_back(size);
  }
}

} // namespace
#endif

std::optional<std::vector<size_t>> userKernelParameterSizes(UserProgram &program,
                                                            const std::string &symbol) {
  requireGpu("parameter_sizes");
#ifdef CUMO_HAVE_CUDA
  std::vector<size_t> sizes;
  if (parameterSizes(program.kernel(symbol), sizes))
    return sizes;
#else
  (void)program, (void)symbol;
#endif
  return std::nullopt;
}

void launchUserKernel(UserProgram &program, const std::string &symbol,
                      llvm::ArrayRef<std::string> args, const UserLaunchShape &shape) {
  Engine &engine = Engine::get();
  requireGpu("launch");
#ifdef CUMO_HAVE_CUDA
  void *kernel = program.kernel(symbol);
  std::vector<size_t> sizes;
  if (parameterSizes(kernel, sizes)) {
    if (sizes.size() != args.size())
      opError(ErrorKind::Argument, "launch",
              symbol + " takes " + std::to_string(sizes.size()) + " arguments, not " +
                  std::to_string(args.size()));
    for (size_t i = 0; i < sizes.size(); ++i)
      if (sizes[i] != args[i].size())
        opError(ErrorKind::Argument, "launch",
                "argument " + std::to_string(i) + " of " + symbol + " is " +
                    std::to_string(sizes[i]) + " bytes, and " + std::to_string(args[i].size()) +
                    " were given (an Integer is a long long and a Float a double: pack a "
                    "narrower one, [n].pack(\"l\"))");
  }
  // Past the 48 KiB a kernel gets unasked, dynamic shared memory is opted
  // into per kernel.
  constexpr size_t kDefaultSharedBytes = 48 << 10;
  auto &device = static_cast<CudaDevice &>(engine.device());
  if (shape.sharedBytes > kDefaultSharedBytes)
    cudaCheck(cudaKernelSetAttributeForDevice(static_cast<cudaKernel_t>(kernel),
                                              cudaFuncAttributeMaxDynamicSharedMemorySize,
                                              int(shape.sharedBytes), device.ordinal()),
              "launch " + symbol);
  // Whatever the arrays were handed to it depends on is queued before it.
  engine.flush();
  std::vector<void *> pointers;
  for (const std::string &a : args)
    pointers.push_back(const_cast<char *>(a.data()));
  dim3 grid(shape.grid[0], shape.grid[1], shape.grid[2]);
  dim3 block(shape.block[0], shape.block[1], shape.block[2]);
  cudaCheck(cudaLaunchKernel(static_cast<const void *>(kernel), grid, block, pointers.data(),
                             shape.sharedBytes, device.stream()),
            "launch " + symbol);
#else
  (void)program, (void)symbol, (void)args, (void)shape;
#endif
}

} // namespace cumo
