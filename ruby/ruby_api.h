// Shared declarations of the Ruby extension: its classes, the wrapper of an
// ArrayHandle, and `guarded`, which runs engine code and turns a
// cumo::Error into the Ruby exception its kind names. ruby/ is glue only:
// argument conversion, classes, GC integration; every decision lives in
// the floors below.
#pragma once

#include "core/array.h"
#include "core/error.h"
#include "core/format.h"
#include "core/pending.h"
#include "ops/creation.h"

#include <ruby.h>
// ruby.h redefines memcpy as a macro, which breaks std::memcpy in headers
// included after it (LLVM's among them).
#undef memcpy

#include <optional>
#include <string>
#include <type_traits>
#include <utility>

namespace cumo::rb {

extern VALUE mCumo, cNArray, cPlan, cScalarOperand, mCUDA, cMemoryPool;
extern VALUE eShapeError, eDimensionError, eCastError, eOperationError,
    eValueError, eCudaRuntimeError, eNvrtcError, eOutOfMemoryError;

/// The Ruby class of each dtype (Cumo::DFloat ...).
VALUE classOf(DType t);
/// The dtype of a Ruby class, if it is one of ours.
bool dtypeOfClass(VALUE klass, DType *out);

/// The handle inside an NArray, or a TypeError naming `op`.
ArrayHandle &handleOf(VALUE obj, const char *op);
bool isNArray(VALUE obj);

/// Raises FrozenError naming `op` when `self` is frozen.
void checkFrozen(VALUE self, const char *op);

/// A new NArray object owning `h` (of its dtype's class).
VALUE wrapHandle(ArrayHandle *h);
/// A new NArray over a fresh storage holding `n`.
VALUE wrapNode(NodeRef n);
/// [first, second] as a Ruby Array of two new NArrays (divmod, modf ...).
VALUE wrapPair(std::pair<NodeRef, NodeRef> p);
/// A handle onto a fresh storage holding `n` (for wrapHandle and
/// attachHandle), made with the engine locked.
ArrayHandle *newHandle(NodeRef n);

/// Gives `obj`, an object `allocate` made (Marshal.load, clone), the handle
/// `h`; TypeError naming `op` when it already holds one.
void attachHandle(VALUE obj, ArrayHandle *h, const char *op);

/// The limits inspect prints within (Cumo::NArray.inspect_rows=, _cols=).
InspectLimits &inspectLimits();

/// Raises the Ruby exception for a cumo::Error whose message is the Ruby
/// String `message`. Call only outside any C++ catch block, with no C++
/// object that owns resources still alive in the calling frame.
[[noreturn]] void raiseError(ErrorKind kind, VALUE message);

/// Serializes engine calls between Ruby threads (a thread blocked on a
/// device wait releases the GVL but keeps the engine).
void lockEngine();
void unlockEngine();

/// Starts the engine (chooses the executor and the current device) the
/// first time it is asked; every op needs the device, whichever runs first.
void ensureEngine();

/// Tells Ruby's GC of the device memory arrays hold, so that it runs in
/// proportion to it: a sixteenth of the pool's used bytes, as they change
/// (by 16 MiB of device memory at least), at the end of each engine call
/// and after dead handles are released. Ruby's malloc limit (16 to 32 MB)
/// is tuned for host memory: whole device bytes ran a GC every 30 ops of a
/// 512x512 loop and tripled the host time per op (measured, 0.64 -> 2.4
/// us); the pool runs a GC itself before it grows
/// (MemoryPool::setPressureCallback). Only buffers count, not the results
/// fusion never writes: each wrapper used to report its array's bytes when
/// made, so a read-free loop reported every temporary of the segments it
/// recorded between two GCs, and with a pending budget over 1 GiB Ruby ran
/// major GCs (`major_by: oldmalloc`) at 2048x2048 (README, Known problems).
void noteDeviceMemory();

/// Runs `f` with the engine locked. A cumo::Error (or std::bad_alloc)
/// thrown inside is caught; answers whether one was, its kind and message
/// then in `kind` and `message`.
template <class F> bool engineCall(F &&f, ErrorKind &kind, VALUE &message) {
  lockEngine();
  std::string text;
  try {
    {
      // One Ruby call is one op: the pending list cuts before it, never in
      // the middle of its nodes. (Closed before the lock is let go.)
      PendingList::OpScope op;
      ensureEngine();
      f();
    }
    noteDeviceMemory();
    unlockEngine();
    return false;
  } catch (const Error &e) {
    kind = e.kind();
    text = e.message();
  } catch (const std::bad_alloc &) {
    kind = ErrorKind::OutOfMemory;
    text = "[host] out of memory";
  } catch (const std::exception &e) {
    kind = ErrorKind::Internal;
    text = std::string("[internal] ") + e.what();
  }
  unlockEngine();
  message = rb_utf8_str_new(text.data(), long(text.size()));
  return true;
}

/// Runs `f` with the engine locked. A cumo::Error (or std::bad_alloc)
/// thrown inside becomes a Ruby exception, raised after the C++ frames are
/// gone, so no destructor is skipped by the longjmp. (The caller's own C++
/// objects are skipped: where it owns some, use DeferredRaise.)
template <class F> auto guarded(F &&f) -> decltype(f()) {
  ErrorKind kind;
  VALUE message;
  if constexpr (std::is_void_v<decltype(f())>) {
    if (!engineCall(f, kind, message))
      return;
  } else {
    std::optional<decltype(f())> result;
    if (!engineCall([&] { result.emplace(f()); }, kind, message))
      return std::move(*result);
  }
  raiseError(kind, message);
}

/// For a method that holds C++ objects owning memory (a table of index
/// positions) across calls that can raise, Ruby's or the engine's: each
/// step runs through `ruby` (Ruby calls, under rb_protect) or `engine`
/// (as guarded), and the first failure is kept, not raised, and skips the
/// steps after it. The method raises it with raise() once those objects
/// are gone, so no destructor is skipped by the longjmp.
class DeferredRaise {
public:
  template <class F> void ruby(F &&f) {
    if (failed())
      return;
    auto call = [](VALUE p) -> VALUE {
      (*reinterpret_cast<std::remove_reference_t<F> *>(p))();
      return Qnil;
    };
    rb_protect(call, reinterpret_cast<VALUE>(&f), &rubyState_);
  }
  template <class F> void engine(F &&f) {
    if (!failed())
      engineFailed_ = engineCall(f, kind_, message_);
  }
  bool failed() const { return rubyState_ != 0 || engineFailed_; }
  /// Raises what failed, if anything.
  void raise() const {
    if (rubyState_)
      rb_jump_tag(rubyState_);
    if (engineFailed_)
      raiseError(kind_, message_);
  }

private:
  int rubyState_ = 0;
  bool engineFailed_ = false;
  ErrorKind kind_ = ErrorKind::Internal;
  VALUE message_ = Qnil;
};

/// Drops the queued handles of collected wrappers (a safe point).
void releaseDeadHandles();


/// The body of an op method: at a safe point, `f` (answering the op's new
/// NodeRef) runs as guarded runs it, and the handle of the NArray that
/// holds the node is made under the same engine lock (wrapNode would take
/// it once more: the lock's atomics were a few percent of the CG loop's
/// host time). Then the NArray.
template <class F> VALUE recordNode(F &&f) {
  ArrayHandle *h = guarded([&] {
    releaseDeadHandles();
    return new ArrayHandle(f());
  });
  return wrapHandle(h);
}

/// recordNode for an op on receiver `self` (handle `a`) that may carry
/// Numo's inplace flag: where it does and the result has the receiver's
/// class and shape, the result is written into the receiver's elements (a
/// view's reach its base) and the receiver answered, as Numo's ops answer
/// their inplace operand; otherwise a new array.
template <class F> VALUE recordInto(VALUE self, ArrayHandle &a, const char *op, F &&f) {
  if (!a.inplace)
    return recordNode(std::forward<F>(f));
  a.frozen = OBJ_FROZEN(self);
  bool wrote = false;
  ArrayHandle *h = guarded([&]() -> ArrayHandle * {
    releaseDeadHandles();
    NodeRef n = f();
    if (n->dtype() == a.dtype() && n->shape() == a.shape()) {
      assignValue(a, n, op);
      wrote = true;
      return nullptr;
    }
    return new ArrayHandle(std::move(n));
  });
  return wrote ? self : wrapHandle(h);
}

// Initializers of the extension's parts.
void initErrors();
void initNArrayClasses();
void initNArrayMethods();
void initMath();
void initIndexing();
void initReductions();
void initRowMethods();
void initLinalgMethods();
void initConversions();
void initCumoModule();
void initPlan();
void initHostHooks();
void initLayoutMethods();
void initConstructionMethods();
void initIOMethods();
void initUserKernels();
void initDeviceQueue();

} // namespace cumo::rb
