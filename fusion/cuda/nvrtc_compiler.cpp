// NVRTC and the kernel caches (see nvrtc_compiler.h).
//
// A disk entry is "CUMOCUBN", the payload length (8 bytes, little endian),
// the SHA-256 of the payload, then the cubin. An entry that is short, long,
// or whose checksum does not match is recompiled and rewritten, never
// loaded: a cubin is code the process will run. Entries are written to a
// temporary file and renamed into place, so a reader sees a whole entry or
// none, whatever other processes do.
#include "fusion/cuda/nvrtc_compiler.h"

#include "core/content_hash.h"
#include "core/error.h"
#include "core/stats.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SHA256.h"

#include <nvrtc.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace cumo {

namespace {

constexpr char kMagic[8] = {'C', 'U', 'M', 'O', 'C', 'U', 'B', 'N'};
constexpr size_t kHeaderBytes = sizeof(kMagic) + 8 + 32;
/// Changes when the entry format or what the key covers changes.
constexpr char kKeyVersion[] = "cumo-cubin-v1";
constexpr char kHeaderName[] = "cumo_portable_ops.h";

std::array<uint8_t, 32> sha256(llvm::StringRef data) {
  return llvm::SHA256::hash(llvm::ArrayRef<uint8_t>(
      reinterpret_cast<const uint8_t *>(data.data()), data.size()));
}

void nvrtcCheck(nvrtcResult r, const std::string &what) {
  if (r != NVRTC_SUCCESS)
    throw Error(ErrorKind::Nvrtc,
                "[nvrtc] " + what + ": " + nvrtcGetErrorString(r));
}

std::string nvrtcVersionString() {
  int major = 0, minor = 0;
  nvrtcCheck(nvrtcVersion(&major, &minor), "nvrtcVersion");
  return std::to_string(major) + "." + std::to_string(minor);
}

/// Everything a cubin depends on, hashed: the disk cache's file name.
std::string diskKey(const KernelSource &src, const std::string &arch) {
  std::string all = kKeyVersion;
  auto add = [&](std::string_view part) {
    all += '\0';
    all += std::to_string(part.size());
    all += ':';
    all.append(part.data(), part.size());
  };
  add(src.entry);
  add(src.source);
  add(portableOpsHeader()); // the source includes it
  for (const char *o : nvrtcOptions())
    add(o);
  add(arch);
  add(nvrtcVersionString());
  return sha256Hex(all);
}

/// Creates `dir` and its missing parents, mode 0700.
bool makeDirs(const std::string &dir) {
  struct stat st;
  if (::stat(dir.c_str(), &st) == 0)
    return S_ISDIR(st.st_mode);
  size_t slash = dir.find_last_of('/');
  if (slash != std::string::npos && slash > 0 &&
      !makeDirs(dir.substr(0, slash)))
    return false;
  return ::mkdir(dir.c_str(), 0700) == 0 || errno == EEXIST;
}

bool readAll(int fd, std::string &out) {
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return false;
    if (n == 0)
      return true;
    out.append(buf, size_t(n));
  }
}

bool writeAll(int fd, const char *data, size_t size) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    data += n;
    size -= size_t(n);
  }
  return true;
}

/// The cubin stored at `path`, or false when it is missing or damaged.
bool readEntry(const std::string &path, std::string &cubin) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return false;
  std::string data;
  struct stat st;
  bool ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && readAll(fd, data);
  ::close(fd);
  if (!ok || data.size() < kHeaderBytes ||
      std::memcmp(data.data(), kMagic, sizeof(kMagic)) != 0)
    return false;
  uint64_t length = 0;
  for (int i = 0; i < 8; ++i)
    length |= uint64_t(uint8_t(data[sizeof(kMagic) + i])) << (8 * i);
  if (length != data.size() - kHeaderBytes)
    return false;
  llvm::StringRef payload(data.data() + kHeaderBytes, length);
  std::array<uint8_t, 32> sum = sha256(payload);
  if (std::memcmp(sum.data(), data.data() + sizeof(kMagic) + 8, 32) != 0)
    return false;
  cubin = payload.str();
  return true;
}

/// Stores `cubin` at `path` atomically; failures only cost a later
/// recompile, so they are ignored.
void writeEntry(const std::string &path, const std::string &cubin) {
  static std::atomic<uint64_t> serial{0};
  std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." +
                    std::to_string(serial++);
  int fd = ::open(tmp.c_str(),
                  O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    return;
  std::string header(kMagic, sizeof(kMagic));
  uint64_t length = cubin.size();
  for (int i = 0; i < 8; ++i)
    header += char(uint8_t(length >> (8 * i)));
  std::array<uint8_t, 32> sum = sha256(cubin);
  header.append(reinterpret_cast<const char *>(sum.data()), sum.size());
  bool ok = writeAll(fd, header.data(), header.size()) &&
            writeAll(fd, cubin.data(), cubin.size());
  ok = ::close(fd) == 0 && ok;
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0)
    ::unlink(tmp.c_str());
}

std::string archName(int ccMajor, int ccMinor) {
  return "sm_" + std::to_string(ccMajor) + std::to_string(ccMinor);
}

/// Threads for compileAll: CUMO_COMPILE_THREADS, else the cores, at most
/// 16 (NVRTC's memory per compile is a few hundred MB at worst).
size_t compileThreads() {
  if (const char *v = std::getenv("CUMO_COMPILE_THREADS"); v && *v)
    if (long n = std::strtol(v, nullptr, 10); n > 0)
      return size_t(n);
  unsigned cores = std::thread::hardware_concurrency();
  return std::clamp<size_t>(cores, 1, 16);
}

/// A program's compile log, its trailing NULs and newlines dropped (empty
/// when NVRTC has none).
std::string programLog(nvrtcProgram prog) {
  std::string log;
  size_t size = 0;
  if (nvrtcGetProgramLogSize(prog, &size) == NVRTC_SUCCESS && size > 1) {
    log.resize(size);
    if (nvrtcGetProgramLog(prog, log.data()) != NVRTC_SUCCESS)
      log.clear();
    while (!log.empty() && (log.back() == '\0' || log.back() == '\n'))
      log.pop_back();
  }
  return log;
}

/// Destroys an NVRTC program on every way out.
struct ProgramGuard {
  nvrtcProgram prog = nullptr;
  ~ProgramGuard() {
    if (prog)
      nvrtcDestroyProgram(&prog);
  }
};

} // namespace

NvrtcCompiler &NvrtcCompiler::get() {
  static NvrtcCompiler *compiler = new NvrtcCompiler(); // never destroyed
  return *compiler;
}

std::string NvrtcCompiler::diskCacheDir() {
  std::string dir;
  if (const char *env = std::getenv("CUMO_CACHE_DIR"); env && *env) {
    dir = env;
  } else {
    const char *home = std::getenv("HOME");
    if (!home || !*home) {
      struct passwd *pw = ::getpwuid(::geteuid());
      home = pw ? pw->pw_dir : nullptr;
    }
    if (!home || !*home)
      return "";
    dir = std::string(home) + "/.cache/cumo/kernels";
  }
  while (dir.size() > 1 && dir.back() == '/')
    dir.pop_back();
  if (!makeDirs(dir))
    return "";
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) ||
      st.st_uid != ::geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
    return "";
  return dir;
}

void NvrtcCompiler::clearMemoryCacheForTesting() {
  std::lock_guard<std::mutex> lock(mutex_);
  memory_.clear();
}

namespace {

/// A user program's disk entry payload: the lowered names, each ended by
/// a NUL, after their count and a newline; then the cubin.
std::string packProgram(const NvrtcCompiler::Program &p) {
  std::string out = std::to_string(p.lowered.size()) + "\n";
  for (const std::string &name : p.lowered) {
    out += name;
    out += '\0';
  }
  return out + p.cubin;
}

bool unpackProgram(const std::string &data, size_t names, NvrtcCompiler::Program &p) {
  size_t at = data.find('\n');
  if (at == std::string::npos || data.compare(0, at, std::to_string(names)) != 0)
    return false;
  ++at;
  p.lowered.clear();
  for (size_t i = 0; i < names; ++i) {
    size_t end = data.find('\0', at);
    if (end == std::string::npos)
      return false;
    p.lowered.push_back(data.substr(at, end - at));
    at = end + 1;
  }
  p.cubin = data.substr(at);
  return !p.cubin.empty();
}

} // namespace

NvrtcCompiler::Program NvrtcCompiler::compileProgram(const std::string &source,
                                                     llvm::ArrayRef<std::string> options,
                                                     llvm::ArrayRef<std::string> nameExpressions,
                                                     int ccMajor, int ccMinor) {
  std::string arch = archName(ccMajor, ccMinor);
  std::string key = "cumo-user-program-v1";
  auto add = [&](std::string_view part) {
    key += '\0';
    key += std::to_string(part.size());
    key += ':';
    key.append(part.data(), part.size());
  };
  add(source);
  add(std::to_string(options.size()));
  for (const std::string &o : options)
    add(o);
  add(std::to_string(nameExpressions.size()));
  for (const std::string &n : nameExpressions)
    add(n);
  add(arch);
  add(nvrtcVersionString());
  // No memory tier: within a process lib/cumo/cuda.rb keeps one Module per
  // program while it is held, and Compiler.clear_modules must make the
  // next compile read the disk or compile again.
  std::string dir = diskCacheDir();
  std::string path = dir.empty() ? "" : dir + "/" + sha256Hex(key) + ".program";
  Program p;
  std::string payload;
  if (!path.empty() && readEntry(path, payload) &&
      unpackProgram(payload, nameExpressions.size(), p)) {
    count(Found::OnDisk);
  } else {
    p = compileUser(source, options, nameExpressions, arch);
    count(Found::Compiled);
    if (!path.empty())
      writeEntry(path, packProgram(p));
  }
  return p;
}

NvrtcCompiler::Program NvrtcCompiler::compileUser(const std::string &source,
                                                  llvm::ArrayRef<std::string> options,
                                                  llvm::ArrayRef<std::string> nameExpressions,
                                                  const std::string &arch) {
  ProgramGuard guard;
  nvrtcCheck(nvrtcCreateProgram(&guard.prog, source.c_str(), "user_program.cu", 0, nullptr,
                                nullptr),
             "nvrtcCreateProgram");
  for (const std::string &n : nameExpressions)
    nvrtcCheck(nvrtcAddNameExpression(guard.prog, n.c_str()), "nvrtcAddNameExpression " + n);
  std::vector<const char *> opts;
  bool namesArch = false;
  for (const std::string &o : options) {
    opts.push_back(o.c_str());
    namesArch = namesArch || o.rfind("-arch", 0) == 0 || o.rfind("--gpu-architecture", 0) == 0;
  }
  std::string archOption = "--gpu-architecture=" + arch;
  if (!namesArch)
    opts.push_back(archOption.c_str());
  nvrtcResult r = nvrtcCompileProgram(guard.prog, int(opts.size()), opts.data());
  if (r != NVRTC_SUCCESS) {
    std::string log = programLog(guard.prog);
    throw Error(ErrorKind::Nvrtc, "[compile_with_cache] " + std::string(nvrtcGetErrorString(r)) +
                                      (log.empty() ? "" : ":\n" + log));
  }
  Program p;
  for (const std::string &n : nameExpressions) {
    const char *lowered = nullptr;
    nvrtcCheck(nvrtcGetLoweredName(guard.prog, n.c_str(), &lowered), "nvrtcGetLoweredName " + n);
    p.lowered.push_back(lowered);
  }
  size_t size = 0;
  nvrtcResult cubinSize = nvrtcGetCUBINSize(guard.prog, &size);
  if (cubinSize != NVRTC_SUCCESS || size == 0)
    throw Error(ErrorKind::Nvrtc, "[compile_with_cache] no cubin: the options asked for a "
                                  "virtual architecture (compute_XX) rather than sm_XX");
  p.cubin.resize(size);
  nvrtcCheck(nvrtcGetCUBIN(guard.prog, p.cubin.data()), "nvrtcGetCUBIN");
  return p;
}

std::string NvrtcCompiler::compileToCubin(const KernelSource &src, int ccMajor,
                                          int ccMinor) {
  Found found;
  std::string cubin = cubinFor(src, archName(ccMajor, ccMinor), found);
  count(found);
  return cubin;
}

std::vector<std::string> NvrtcCompiler::compileAll(llvm::ArrayRef<KernelSource> sources,
                                                   int ccMajor, int ccMinor) {
  std::string arch = archName(ccMajor, ccMinor);
  size_t n = sources.size();
  std::vector<std::string> cubins(n);
  std::vector<Found> found(n, Found::InMemory);
  std::vector<std::exception_ptr> errors(n);
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next++) < n;) {
      try {
        cubins[i] = cubinFor(sources[i], arch, found[i]);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  size_t threads = std::min(n, compileThreads());
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t)
    pool.emplace_back(work);
  work(); // this thread is one of them
  for (std::thread &t : pool)
    t.join();
  for (size_t i = 0; i < n; ++i)
    if (!errors[i])
      count(found[i]);
  for (size_t i = 0; i < n; ++i)
    if (errors[i])
      std::rethrow_exception(errors[i]);
  return cubins;
}

void NvrtcCompiler::count(Found found) {
  if (found == Found::OnDisk)
    ++Stats::get().disk_cache_hits;
  else if (found == Found::Compiled)
    ++Stats::get().nvrtc_compiles;
}

std::string NvrtcCompiler::cubinFor(const KernelSource &src, const std::string &arch,
                                    Found &found) {
  std::string memoryKey = arch + '\0' + src.entry + '\0' + src.source;
  found = Found::InMemory;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = memory_.find(memoryKey);
    if (it != memory_.end())
      return it->second;
  }
  // Compiles run unlocked: two threads may compile the same source at
  // once, which wastes time but not correctness.
  std::string dir = diskCacheDir();
  std::string path = dir.empty() ? "" : dir + "/" + diskKey(src, arch) + ".cubin";
  std::string cubin;
  if (!path.empty() && readEntry(path, cubin)) {
    found = Found::OnDisk;
  } else {
    cubin = compile(src, arch);
    found = Found::Compiled;
    if (!path.empty())
      writeEntry(path, cubin);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  memory_.emplace(std::move(memoryKey), cubin);
  return cubin;
}

std::string NvrtcCompiler::compile(const KernelSource &src,
                                   const std::string &arch) {
  std::string header(portableOpsHeader());
  const char *headers[] = {header.c_str()};
  const char *names[] = {kHeaderName};
  ProgramGuard guard;
  nvrtcCheck(nvrtcCreateProgram(&guard.prog, src.source.c_str(),
                                (src.entry + ".cu").c_str(), 1, headers, names),
             src.entry);
  std::vector<const char *> options(nvrtcOptions().begin(),
                                    nvrtcOptions().end());
  std::string archOption = "--gpu-architecture=" + arch;
  options.push_back(archOption.c_str());
  nvrtcResult r =
      nvrtcCompileProgram(guard.prog, int(options.size()), options.data());
  if (r != NVRTC_SUCCESS) {
    std::string log = programLog(guard.prog);
    if (log.empty())
      log = nvrtcGetErrorString(r);
    throw Error(ErrorKind::Nvrtc, "[nvrtc] " + src.entry + ": " + log);
  }
  size_t size = 0;
  nvrtcCheck(nvrtcGetCUBINSize(guard.prog, &size), src.entry);
  std::string cubin(size, '\0');
  nvrtcCheck(nvrtcGetCUBIN(guard.prog, cubin.data()), src.entry);
  return cubin;
}

} // namespace cumo
