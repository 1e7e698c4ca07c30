// Cumo::CUDA::Event, Cumo::CUDA.get_elapsed_time, Cumo::CUDA::PinnedMemory
// and NArray#get / #set through it: the device's queue as the spec's
// "Streams And Events" and "Pinned Host Memory" show it. Glue only:
// lib/cumo/stream.rb has Stream; core/device.h the events and copies.
#include "ruby/ruby_api.h"

#include "ruby/convert.h"

#include "core/release_queue.h"
#include "graph/device_select.h"
#include "graph/direct_access.h"
#include "graph/engine.h"

#include <cstring>
#include <memory>
#include <string>

namespace cumo::rb {

namespace {

VALUE cEvent, cPinnedMemory;

struct EventData {
  std::unique_ptr<DeviceEvent> event;
};

/// A pinned buffer, and the copy in flight through it (its event, and the
/// memory of the array it copies so the array cannot go while it runs).
struct PinnedData {
  void *host = nullptr;
  size_t bytes = 0;
  std::unique_ptr<DeviceEvent> copy;
  Ref<Buffer> copying;
};

void freeEvent(void *p) {
  auto *d = static_cast<EventData *>(p);
  // A CUDA event is destroyed at the engine's next safe point, not in the GC.
  if (d->event)
    ReleaseQueue::get().pushRelease(
        [](void *e) { delete static_cast<DeviceEvent *>(e); }, d->event.release());
  delete d;
}
void freePinned(void *p) {
  auto *d = static_cast<PinnedData *>(p);
  // A dfree must not call CUDA (ruby/ext.cpp): the engine frees a buffer
  // still allocated at collection at its next safe point.
  if (d->host)
    ReleaseQueue::get().pushPinned(d->host, std::move(d->copy), std::move(d->copying));
  delete d;
}
size_t pinnedSize(const void *p) {
  const auto *d = static_cast<const PinnedData *>(p);
  return sizeof(PinnedData) + (d ? d->bytes : 0);
}

const rb_data_type_t kEventType = {"Cumo::CUDA::Event",
                                   {nullptr, freeEvent, nullptr, nullptr},
                                   nullptr,
                                   nullptr,
                                   RUBY_TYPED_FREE_IMMEDIATELY};
const rb_data_type_t kPinnedType = {"Cumo::CUDA::PinnedMemory",
                                    {nullptr, freePinned, pinnedSize, nullptr},
                                    nullptr,
                                    nullptr,
                                    RUBY_TYPED_FREE_IMMEDIATELY};

EventData &eventOf(VALUE v, const char *op, bool made = true) {
  if (!rb_typeddata_is_kind_of(v, &kEventType))
    rb_raise(rb_eTypeError, "[%s] expected a Cumo::CUDA::Event, not %" PRIsVALUE, op,
             rb_obj_class(v));
  auto *d = static_cast<EventData *>(RTYPEDDATA_DATA(v));
  if (made && !d->event)
    rb_raise(rb_eTypeError, "[%s] an uninitialized Cumo::CUDA::Event", op);
  return *d;
}

/// Events and pinned buffers are device resources: not copied.
VALUE refuseCopy(VALUE self, VALUE) {
  rb_raise(rb_eTypeError, "[dup] a %" PRIsVALUE " cannot be copied", rb_obj_class(self));
}

VALUE eventAlloc(VALUE klass) { return TypedData_Wrap_Struct(klass, &kEventType, new EventData); }

VALUE eventInitialize(VALUE self) {
  EventData &e = eventOf(self, "Event.new", false);
  if (e.event)
    rb_raise(rb_eTypeError, "[Event.new] already initialized");
  guarded([&] { e.event = Engine::get().device().newEvent(); });
  return self;
}

/// Event#record: everything recorded so far computed, and the event after it.
VALUE eventRecord(VALUE self) {
  EventData &e = eventOf(self, "record");
  guarded([&] {
    Engine::get().flush();
    e.event->record();
  });
  return self;
}

VALUE eventSynchronize(VALUE self) {
  EventData &e = eventOf(self, "synchronize");
  guarded([&] { e.event->synchronize(); });
  return self;
}

VALUE eventDone(VALUE self) {
  EventData &e = eventOf(self, "done?");
  return guarded([&] { return e.event->done(); }) ? Qtrue : Qfalse;
}

/// Cumo::CUDA.__queue_done?: everything recorded computed, and run.
VALUE queueDone(VALUE) {
  return guarded([&] {
           Engine::get().flush();
           return Engine::get().device().idle();
         })
             ? Qtrue
             : Qfalse;
}

VALUE eventRecorded(VALUE self) {
  return eventOf(self, "recorded?").event->recorded() ? Qtrue : Qfalse;
}

/// Cumo::CUDA.get_elapsed_time(start, stop): milliseconds, `stop` waited for.
VALUE elapsedTime(VALUE, VALUE start, VALUE stop) {
  EventData &a = eventOf(start, "get_elapsed_time");
  EventData &b = eventOf(stop, "get_elapsed_time");
  if (!a.event->recorded() || !b.event->recorded())
    rb_raise(rb_eArgError, "[get_elapsed_time] both events must be recorded first");
  double ms = guarded([&] {
    b.event->synchronize();
    return b.event->millisecondsSince(*a.event);
  });
  return DBL2NUM(ms);
}

PinnedData &pinnedOf(VALUE v, const char *op) {
  if (!rb_typeddata_is_kind_of(v, &kPinnedType))
    rb_raise(rb_eTypeError, "[%s] expected a Cumo::CUDA::PinnedMemory, not %" PRIsVALUE, op,
             rb_obj_class(v));
  auto *d = static_cast<PinnedData *>(RTYPEDDATA_DATA(v));
  if (!d->host)
    rb_raise(rb_eArgError, "[%s] the pinned memory was freed", op);
  return *d;
}

/// Waits for the copy in flight through `d`, if any, and lets its array go.
void finishCopy(PinnedData &d) {
  if (d.copy)
    d.copy->synchronize();
  d.copy.reset();
  d.copying.reset();
}

VALUE pinnedAlloc(VALUE klass) {
  return TypedData_Wrap_Struct(klass, &kPinnedType, new PinnedData);
}

VALUE pinnedInitialize(VALUE self, VALUE size) {
  int64_t bytes = int64Arg(size, "PinnedMemory.new", "size");
  if (bytes < 0)
    rb_raise(rb_eArgError, "[PinnedMemory.new] the size must not be negative: %lld",
             static_cast<long long>(bytes));
  auto *d = static_cast<PinnedData *>(RTYPEDDATA_DATA(self));
  if (d->host)
    rb_raise(rb_eArgError, "[PinnedMemory.new] already allocated");
  guarded([&] {
    d->host = Engine::get().device().allocatePinned(size_t(bytes));
    d->bytes = size_t(bytes);
  });
  return self;
}

VALUE pinnedSizeMethod(VALUE self) { return SIZET2NUM(pinnedOf(self, "size").bytes); }

VALUE pinnedRead(VALUE self) {
  PinnedData &d = pinnedOf(self, "read");
  guarded([&] { finishCopy(d); });
  return rb_str_new(static_cast<const char *>(d.host), long(d.bytes));
}

VALUE pinnedWrite(VALUE self, VALUE bytes) {
  PinnedData &d = pinnedOf(self, "write");
  if (!RB_TYPE_P(bytes, T_STRING))
    rb_raise(rb_eTypeError, "[write] expected a String of bytes, not %" PRIsVALUE,
             rb_obj_class(bytes));
  if (size_t(RSTRING_LEN(bytes)) != d.bytes)
    rb_raise(rb_eArgError, "[write] %ld bytes for a pinned buffer of %zu", RSTRING_LEN(bytes),
             d.bytes);
  guarded([&] { finishCopy(d); });
  std::memcpy(d.host, RSTRING_PTR(bytes), d.bytes);
  return self;
}

VALUE pinnedFree(VALUE self) {
  auto *d = static_cast<PinnedData *>(rb_check_typeddata(self, &kPinnedType));
  if (!d->host)
    return Qnil;
  guarded([&] {
    finishCopy(*d);
    Engine::get().device().freePinned(d->host);
    d->host = nullptr;
    d->bytes = 0;
  });
  return Qnil;
}

VALUE pinnedFreed(VALUE self) {
  return static_cast<PinnedData *>(rb_check_typeddata(self, &kPinnedType))->host ? Qfalse : Qtrue;
}

/// An asynchronous copy between `self`'s elements and `pinned` (`op` get:
/// into the buffer; set: from it), queued after everything recorded before
/// it; the buffer keeps the copy's event and the array's memory until its
/// next use waits for it.
void copyThroughPinned(VALUE self, VALUE pinned, const char *op, bool toHost) {
  if (!toHost)
    checkFrozen(self, op);
  ArrayHandle &a = handleOf(self, op);
  PinnedData &d = pinnedOf(pinned, op);
  size_t bytes = size_t(a.size()) * sizeOf(a.dtype());
  if (a.dtype() != DType::Bit && bytes != d.bytes)
    rb_raise(rb_eArgError, "[%s] the array holds %zu bytes and the pinned buffer %zu", op, bytes,
             d.bytes);
  guarded([&] {
    finishCopy(d);
    ElementMemory m = toHost ? readableElements(a, op) : writableElements(a, op);
    Device &device = Engine::get().device();
    if (toHost)
      device.downloadAsync(*m.buffer, m.offset, m.bytes, d.host);
    else
      device.uploadAsync(*m.buffer, m.offset, d.host, m.bytes);
    d.copy = device.newEvent();
    d.copy->record();
    d.copying = m.buffer;
  });
}

/// NArray#__get_pinned(pinned): the elements into the buffer; answers it.
VALUE getPinned(VALUE self, VALUE pinned) {
  copyThroughPinned(self, pinned, "get", true);
  return pinned;
}

/// NArray#__set_pinned(pinned): the buffer's bytes into the elements.
VALUE setPinned(VALUE self, VALUE pinned) {
  copyThroughPinned(self, pinned, "set", false);
  return self;
}

/// Cumo::CUDA::Runtime.cudaSetDevice(id): without starting the engine (as
/// guarded would), so that the choice comes before the device is opened.
VALUE runtimeSetDevice(VALUE, VALUE id) {
  int64_t n = int64Arg(id, "cudaSetDevice", "id");
  if (n < 0 || n > INT32_MAX)
    rb_raise(rb_eArgError, "[cudaSetDevice] no device %lld", static_cast<long long>(n));
  ErrorKind kind = ErrorKind::Internal;
  bool failed = false;
  std::string text;
  lockEngine();
  try {
    selectCudaDevice(int(n));
  } catch (const Error &e) {
    kind = e.kind();
    text = e.message();
    failed = true;
  }
  unlockEngine();
  if (!failed)
    return Qnil;
  VALUE message = rb_utf8_str_new(text.data(), long(text.size())); // (after the catch)
  std::string().swap(text); // nothing owned when the raise leaves this frame
  raiseError(kind, message);
}

VALUE runtimeGetDevice(VALUE) {
  lockEngine();
  int d = currentCudaDevice();
  unlockEngine();
  return INT2NUM(d);
}

} // namespace

void initDeviceQueue() {
  cEvent = rb_define_class_under(mCUDA, "Event", rb_cObject);
  rb_define_alloc_func(cEvent, eventAlloc);
  rb_define_method(cEvent, "initialize", RUBY_METHOD_FUNC(eventInitialize), 0);
  rb_define_method(cEvent, "initialize_copy", RUBY_METHOD_FUNC(refuseCopy), 1);
  rb_define_method(cEvent, "__record", RUBY_METHOD_FUNC(eventRecord), 0);
  rb_define_method(cEvent, "synchronize", RUBY_METHOD_FUNC(eventSynchronize), 0);
  rb_define_method(cEvent, "done?", RUBY_METHOD_FUNC(eventDone), 0);
  rb_define_method(cEvent, "recorded?", RUBY_METHOD_FUNC(eventRecorded), 0);
  rb_define_module_function(mCUDA, "get_elapsed_time", RUBY_METHOD_FUNC(elapsedTime), 2);
  rb_define_module_function(mCUDA, "__queue_done?", RUBY_METHOD_FUNC(queueDone), 0);
  VALUE mRuntime = rb_define_module_under(mCUDA, "Runtime");
  rb_define_module_function(mRuntime, "cudaSetDevice", RUBY_METHOD_FUNC(runtimeSetDevice), 1);
  rb_define_module_function(mRuntime, "cudaGetDevice", RUBY_METHOD_FUNC(runtimeGetDevice), 0);

  cPinnedMemory = rb_define_class_under(mCUDA, "PinnedMemory", rb_cObject);
  rb_define_alloc_func(cPinnedMemory, pinnedAlloc);
  rb_define_method(cPinnedMemory, "initialize", RUBY_METHOD_FUNC(pinnedInitialize), 1);
  rb_define_method(cPinnedMemory, "initialize_copy", RUBY_METHOD_FUNC(refuseCopy), 1);
  rb_define_method(cPinnedMemory, "size", RUBY_METHOD_FUNC(pinnedSizeMethod), 0);
  rb_define_method(cPinnedMemory, "read", RUBY_METHOD_FUNC(pinnedRead), 0);
  rb_define_method(cPinnedMemory, "write", RUBY_METHOD_FUNC(pinnedWrite), 1);
  rb_define_method(cPinnedMemory, "free", RUBY_METHOD_FUNC(pinnedFree), 0);
  rb_define_method(cPinnedMemory, "freed?", RUBY_METHOD_FUNC(pinnedFreed), 0);
  rb_define_private_method(cNArray, "__get_pinned", RUBY_METHOD_FUNC(getPinned), 1);
  rb_define_private_method(cNArray, "__set_pinned", RUBY_METHOD_FUNC(setPinned), 1);
}

} // namespace cumo::rb
