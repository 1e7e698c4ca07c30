// The extension's entry point, its classes and error classes, and the
// wrapper that ties an ArrayHandle to a Ruby object's lifetime.
#include "ruby/ruby_api.h"

#include "core/host_hooks.h"
#include "core/release_queue.h"
#include "graph/device_select.h"
#include "graph/engine.h"

#include <ruby/debug.h>
#include <ruby/thread.h>

#include <atomic>
#include <mutex>

namespace cumo::rb {

VALUE mCumo, cNArray, cPlan, cScalarOperand, mCUDA, cMemoryPool;
VALUE eShapeError, eDimensionError, eCastError, eOperationError, eValueError,
    eCudaRuntimeError, eNvrtcError, eOutOfMemoryError;

namespace {

VALUE gClasses[kNumDTypes];

/// Device bytes reported to Ruby's GC as one byte of memory.
constexpr size_t kDeviceBytesPerReportedByte = 16;
/// The least change in reported bytes worth telling the GC of (16 MiB of
/// device memory): a call a flush or so, not one an op.
constexpr size_t kReportStep = size_t(1) << 20;

// A wrapper's data pointer is its ArrayHandle itself (null until `allocate`'s
// object is filled in): no separate block to allocate per op and to touch
// and free in the sweep.
void wrapperFree(void *p) {
  // Runs inside the GC: only queue. The node and its buffer are released
  // at the next safe point (ReleaseQueue), and nothing here calls CUDA.
  if (p)
    ReleaseQueue::get().push(static_cast<ArrayHandle *>(p));
}

size_t wrapperSize(const void *) { return sizeof(ArrayHandle); }

// Write-barrier protected: a wrapper holds no reference to another Ruby
// object (no dmark), so it needs no barriers, and the generational GC can
// age wrappers normally instead of keeping every old one in the remembered
// set it rescans at each minor GC.
const rb_data_type_t kWrapperType = {
    "Cumo::NArray",
    {nullptr, wrapperFree, wrapperSize, nullptr},
    nullptr,
    nullptr,
    RUBY_TYPED_FREE_IMMEDIATELY | RUBY_TYPED_WB_PROTECTED,
};

std::mutex gEngineMutex;

void *lockWithoutGvl(void *) {
  gEngineMutex.lock();
  return nullptr;
}

} // namespace

void lockEngine() {
  // Fast path; otherwise wait with the GVL released, so that a thread
  // holding the engine while it waits for the device can get the GVL back.
  if (gEngineMutex.try_lock())
    return;
  rb_thread_call_without_gvl(lockWithoutGvl, nullptr, RUBY_UBF_IO, nullptr);
}

void unlockEngine() { gEngineMutex.unlock(); }

void ensureEngine() {
  Engine::get();
  bindThreadToEngineDevice();
}

VALUE classOf(DType t) { return gClasses[int(t)]; }

bool dtypeOfClass(VALUE klass, DType *out) {
  for (int i = 0; i < kNumDTypes; ++i)
    if (gClasses[i] == klass) {
      *out = DType(i);
      return true;
    }
  return false;
}

bool isNArray(VALUE obj) {
  // rb_typeddata_is_kind_of's test without the call and the walk up parent
  // types (ours has none): every op asks it of each operand.
  return !RB_SPECIAL_CONST_P(obj) && RB_BUILTIN_TYPE(obj) == RUBY_T_DATA &&
         RTYPEDDATA_P(obj) && RTYPEDDATA_TYPE(obj) == &kWrapperType;
}

ArrayHandle &handleOf(VALUE obj, const char *op) {
  if (!isNArray(obj))
    rb_raise(rb_eTypeError, "[%s] expected Cumo::NArray, not %" PRIsVALUE, op,
             rb_obj_class(obj));
  auto *h = static_cast<ArrayHandle *>(RTYPEDDATA_DATA(obj));
  if (!h)
    rb_raise(rb_eTypeError, "[%s] uninitialized Cumo::NArray", op);
  return *h;
}

void checkFrozen(VALUE self, const char *op) {
  if (OBJ_FROZEN(self))
    rb_frozen_error_raise(self, "[%s] can't modify frozen %" PRIsVALUE, op,
                          rb_obj_class(self));
}

namespace {

void attach(VALUE obj, ArrayHandle *h) {
  RTYPEDDATA_DATA(obj) = h;
  if (h->frozen)
    rb_obj_freeze(obj);
}

/// An object with no handle yet: what `allocate` answers (Marshal.load
/// and clone fill it in); every method but those raises TypeError on it.
VALUE allocWrapper(VALUE klass) {
  return TypedData_Wrap_Struct(klass, &kWrapperType, nullptr);
}

} // namespace

VALUE wrapHandle(ArrayHandle *h) {
  // Allocate the Ruby object first: if that raises, the handle must not
  // leak, so it is attached only once the object exists.
  VALUE obj = TypedData_Wrap_Struct(classOf(h->dtype()), &kWrapperType, nullptr);
  attach(obj, h);
  return obj;
}

void attachHandle(VALUE obj, ArrayHandle *h, const char *op) {
  if (!isNArray(obj) || RTYPEDDATA_DATA(obj)) {
    {
      lockEngine();
      delete h;
      unlockEngine();
    }
    rb_raise(rb_eTypeError, "[%s] the object is already initialized", op);
  }
  attach(obj, h);
}

ArrayHandle *newHandle(NodeRef n) {
  lockEngine();
  auto *h = new ArrayHandle(std::move(n));
  unlockEngine();
  return h;
}

VALUE wrapNode(NodeRef n) { return wrapHandle(newHandle(std::move(n))); }

VALUE wrapPair(std::pair<NodeRef, NodeRef> p) {
  VALUE first = wrapNode(std::move(p.first));
  return rb_assoc_new(first, wrapNode(std::move(p.second)));
}

void releaseDeadHandles() {
  if (!ReleaseQueue::get().empty())
    ReleaseQueue::get().drain();
  noteDeviceMemory();
}

void noteDeviceMemory() {
  if (!haveCurrentDevice())
    return;
  MemoryPool &pool = currentDevice().pool();
  size_t now = pool.usedBytes() / kDeviceBytesPerReportedByte;
  size_t was = pool.reportedToHost;
  if (now >= was ? now - was < kReportStep : was - now < kReportStep)
    return;
  rb_gc_adjust_memory_usage(now >= was ? ssize_t(now - was) : -ssize_t(was - now));
  pool.reportedToHost = now;
}

void raiseError(ErrorKind kind, VALUE message) {
  VALUE klass = rb_eRuntimeError;
  switch (kind) {
  case ErrorKind::Type: klass = rb_eTypeError; break;
  case ErrorKind::Argument: klass = rb_eArgError; break;
  case ErrorKind::Shape: klass = eShapeError; break;
  case ErrorKind::Index: klass = rb_eIndexError; break;
  case ErrorKind::Range: klass = rb_eRangeError; break;
  case ErrorKind::Dimension: klass = eDimensionError; break;
  case ErrorKind::Frozen: klass = rb_eFrozenError; break;
  case ErrorKind::ZeroDivision: klass = rb_eZeroDivError; break;
  case ErrorKind::NoMethod: klass = rb_eNoMethodError; break;
  case ErrorKind::Operation: klass = eOperationError; break;
  case ErrorKind::Cast: klass = eCastError; break;
  case ErrorKind::NotImplemented: klass = rb_eNotImpError; break;
  case ErrorKind::Cuda: klass = eCudaRuntimeError; break;
  case ErrorKind::Nvrtc: klass = eNvrtcError; break;
  case ErrorKind::OutOfMemory: klass = eOutOfMemoryError; break;
  case ErrorKind::Internal: klass = rb_eRuntimeError; break;
  }
  rb_exc_raise(rb_exc_new_str(klass, message));
}

void initErrors() {
  eCastError = rb_define_class_under(cNArray, "CastError", rb_eStandardError);
  eShapeError = rb_define_class_under(cNArray, "ShapeError", rb_eStandardError);
  eOperationError =
      rb_define_class_under(cNArray, "OperationError", rb_eStandardError);
  eDimensionError =
      rb_define_class_under(cNArray, "DimensionError", rb_eStandardError);
  eValueError = rb_define_class_under(cNArray, "ValueError", rb_eStandardError);
  mCUDA = rb_define_module_under(mCumo, "CUDA");
  eCudaRuntimeError =
      rb_define_class_under(mCUDA, "RuntimeError", rb_eStandardError);
  eNvrtcError = rb_define_class_under(mCUDA, "NVRTCError", rb_eStandardError);
  eOutOfMemoryError =
      rb_define_class_under(mCUDA, "OutOfMemoryError", eCudaRuntimeError);
}

void initNArrayClasses() {
  cNArray = rb_define_class_under(mCumo, "NArray", rb_cObject);
  rb_undef_alloc_func(cNArray);
  for (int i = 0; i < kNumDTypes; ++i) {
    const DTypeInfo &t = info(DType(i));
    gClasses[i] = rb_define_class_under(mCumo, std::string(t.rubyName).c_str(),
                                        cNArray);
    // Marshal.load and clone allocate before they fill the object in.
    rb_define_alloc_func(gClasses[i], allocWrapper);
  }
  rb_define_const(mCumo, "Float64", classOf(DType::DFloat));
  rb_define_const(mCumo, "Float32", classOf(DType::SFloat));
  rb_define_const(mCumo, "Float16", classOf(DType::HFloat));
  rb_define_const(mCumo, "BFloat16", classOf(DType::BFloat));
  rb_define_const(mCumo, "Complex64", classOf(DType::DComplex));
  rb_define_const(mCumo, "Complex32", classOf(DType::SComplex));
}

namespace {

struct BlockingCall {
  const std::function<void()> *wait;
};

void *runWait(void *p) {
  (*static_cast<BlockingCall *>(p)->wait)();
  return nullptr;
}

/// Whether a frame's path is the user's: neither this library's Ruby
/// (lib/cumo) nor Ruby's own prelude (Kernel#Float runs in <internal:kernel>).
bool outsideCumo(std::string_view path) {
  return path.find("/lib/cumo") == std::string_view::npos && path.rfind("<internal:", 0) != 0;
}

/// "path:line:in `label'", as Location#to_s spells a frame.
std::string spellLocation(std::string_view path, int line, std::string_view label) {
  std::string where(path);
  where += ':';
  where += std::to_string(line);
  where += ":in `";
  where += label;
  where += '\'';
  return where;
}

/// The user's line that is calling into Cumo now, as Location#to_s of
/// caller_locations spells it ("path:line:in `label'"): the first frame
/// whose path is the user's. A C method's frame is its caller's line under
/// the method's name (`a[i] = v` is "x.rb:5:in `[]='"). Read with
/// rb_profile_frames, which allocates nothing: caller_locations built 32
/// Location objects a call, and the decode loop records 26 device-table
/// ops a token that each keep their line for an error, a quarter of its
/// host time (0.19 -> 0.145-0.155 ms a token, CUMO_CPU_SKIP_KERNELS=1 on the
/// development machine).
std::string walkedCallerLocation() {
  constexpr int kFrames = 32;
  VALUE frames[kFrames];
  int lines[kFrames];
  int n = rb_profile_frames(0, kFrames, frames, lines);
  auto pathOf = [&](int i) -> std::string_view {
    VALUE path = rb_profile_frame_path(frames[i]);
    if (!RB_TYPE_P(path, T_STRING))
      return {}; // a C method
    return {RSTRING_PTR(path), size_t(RSTRING_LEN(path))};
  };
  auto spell = [](std::string_view path, int line, VALUE label) {
    std::string_view name;
    if (RB_TYPE_P(label, T_STRING))
      name = {RSTRING_PTR(label), size_t(RSTRING_LEN(label))};
    return spellLocation(path, line, name);
  };
  for (int i = 0; i < n; ++i) {
    std::string_view path = pathOf(i);
    if (!path.empty()) {
      if (outsideCumo(path))
        return spell(path, lines[i], rb_profile_frame_label(frames[i]));
      continue;
    }
    int caller = i + 1;
    while (caller < n && pathOf(caller).empty())
      ++caller;
    if (caller < n && outsideCumo(pathOf(caller)))
      return spell(pathOf(caller), lines[caller], rb_profile_frame_method_name(frames[i]));
  }
  return "(unknown)";
}

/// The user's line calling into Cumo now, as walkedCallerLocation spells
/// it. Where the innermost Ruby frame (the running C method's caller) is
/// the user's, its path and line and the method's name are the answer,
/// read without walking the stack; otherwise (this library's Ruby, Ruby's
/// prelude) the walk. The walk took 3.3k of the 16k instructions of each
/// of a decode step's 24 cache writes: 1.847M -> 1.782M instructions a
/// GPT-2 BFloat token (callgrind, CPU executor, kernels skipped,
/// 2026-12-07); the two spelled the same line in every test of the suites.
std::string callerLocation() {
  const char *file = rb_sourcefile();
  if (file && outsideCumo(file)) {
    ID method = rb_frame_this_func();
    const char *name = method ? rb_id2name(method) : nullptr;
    if (name)
      return spellLocation(file, rb_sourceline(), name);
  }
  return walkedCallerLocation();
}

} // namespace

void initHostHooks() {
  HostHooks &hooks = HostHooks::get();
  hooks.collectGarbage = [] { rb_gc(); };
  hooks.collectYoungGarbage = [] {
    // GC.start(full_mark: false, immediate_sweep: true); the keywords hash
    // is built once and kept from the GC. Registered before it is built:
    // each step allocates and can run the GC (under device-memory pressure
    // it does), which would free a hash only this static holds, and the
    // next flush dup'ed whatever took its slot ([BUG] try to mark T_NONE
    // object, CG at 512x512 with the GC before flushes).
    static VALUE opts = Qnil;
    if (NIL_P(opts)) {
      static bool registered = false;
      if (!registered) {
        rb_gc_register_address(&opts);
        registered = true;
      }
      opts = rb_hash_new();
      rb_hash_aset(opts, ID2SYM(rb_intern("full_mark")), Qfalse);
      rb_hash_aset(opts, ID2SYM(rb_intern("immediate_sweep")), Qtrue);
      rb_obj_freeze(opts);
    }
    VALUE args = rb_hash_dup(opts);
    rb_funcallv_kw(rb_mGC, rb_intern("start"), 1, &args, RB_PASS_KEYWORDS);
  };
  hooks.blockingRegion = [](const std::function<void()> &wait) {
    BlockingCall call{&wait};
    rb_thread_call_without_gvl(runWait, &call, RUBY_UBF_IO, nullptr);
  };
  hooks.sourceLocation = callerLocation;
  hooks.warn = [](const std::string &msg) {
    // Called from inside engine code: a Warning.warn that raises must not
    // unwind through it.
    // Printed through Warning.warn without the "file:line:" prefix rb_warn
    // would add: that names the frame running now, which for Float() is
    // Ruby's prelude; the messages name the line that matters themselves.
    if (NIL_P(ruby_verbose))
      return; // ruby -W0, as rb_warn keeps quiet then
    int state = 0;
    std::string line = "warning: " + msg + "\n";
    VALUE text = rb_str_new(line.data(), long(line.size()));
    rb_protect([](VALUE t) -> VALUE {
      VALUE warning = rb_const_get(rb_cObject, rb_intern("Warning"));
      return rb_funcall(warning, rb_intern("warn"), 1, t);
    }, text, &state);
    if (state)
      rb_set_errinfo(Qnil);
  };
}

} // namespace cumo::rb

extern "C" __attribute__((visibility("default"))) void Init_cumo_ext() {
  using namespace cumo::rb;
  mCumo = rb_define_module("Cumo");
  initNArrayClasses();
  initErrors();
  initHostHooks();
  initConversions();
  initNArrayMethods();
  initMath();
  initIndexing();
  initReductions();
  initRowMethods();
  initLinalgMethods();
  initLayoutMethods();
  initConstructionMethods();
  initIOMethods();
  initUserKernels();
  initDeviceQueue();
  initPlan();
  initCumoModule();
}
