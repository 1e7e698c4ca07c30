// The Cumo module's functions: explain, stats, sync, gpu?, compatible mode,
// and Cumo::CUDA::MemoryPool; and Cumo::Plan, what explain answers.
#include "core/profile.h"
#include "core/stats.h"
#include "fusion/plan_print.h"
#include "graph/engine.h"
#include "ops/matmul.h"
#include "ruby/compat.h"
#include "ruby/ruby_api.h"

namespace cumo::rb {

namespace {

VALUE toStringArray(const std::vector<std::string> &v) {
  VALUE ary = rb_ary_new_capa(long(v.size()));
  for (const std::string &s : v)
    rb_ary_push(ary, rb_utf8_str_new(s.data(), long(s.size())));
  return ary;
}

VALUE sym(const char *name) { return ID2SYM(rb_intern(name)); }

VALUE explainMethod(int argc, VALUE *argv, VALUE) {
  llvm::SmallVector<ArrayHandle *, 4> handles;
  for (int i = 0; i < argc; ++i)
    handles.push_back(&handleOf(argv[i], "explain"));
  struct Result {
    std::vector<KernelSummary> kernels;
    std::string text, dot;
  };
  Result r = guarded([&] {
    releaseDeadHandles();
    llvm::SmallVector<NodeRef, 4> roots;
    for (ArrayHandle *h : handles)
      roots.push_back(h->value());
    Plan plan = Engine::get().explain(roots);
    return Result{summarize(plan), planToText(plan), planToDot(plan)};
  });
  VALUE kernels = rb_ary_new_capa(long(r.kernels.size()));
  for (const KernelSummary &k : r.kernels) {
    VALUE h = rb_hash_new();
    rb_hash_aset(h, sym("kind"), sym(k.kind.c_str()));
    VALUE ops = rb_ary_new();
    for (const std::string &op : k.ops)
      rb_ary_push(ops, sym(op.c_str()));
    rb_hash_aset(h, sym("ops"), ops);
    rb_hash_aset(h, sym("inputs"), toStringArray(k.inputs));
    rb_hash_aset(h, sym("outputs"), toStringArray(k.outputs));
    rb_hash_aset(h, sym("why"), k.why.empty() ? Qnil : rb_utf8_str_new_cstr(k.why.c_str()));
    rb_ary_push(kernels, rb_hash_freeze(h));
  }
  VALUE plan = rb_obj_alloc(cPlan);
  rb_ivar_set(plan, rb_intern("@kernels"), rb_ary_freeze(kernels));
  rb_ivar_set(plan, rb_intern("@text"), rb_utf8_str_new(r.text.data(), long(r.text.size())));
  rb_ivar_set(plan, rb_intern("@dot"), rb_utf8_str_new(r.dot.data(), long(r.dot.size())));
  return plan;
}

VALUE statsMethod(VALUE) {
  Stats s = guarded([] { return Stats::get(); });
  VALUE h = rb_hash_new();
#define CUMO_STAT_ENTRY(name) rb_hash_aset(h, sym(#name), ULL2NUM(s.name));
  CUMO_STATS(CUMO_STAT_ENTRY)
#undef CUMO_STAT_ENTRY
  if (Profile::enabled()) {
    Profile p = guarded([] { return Profile::get(); });
    rb_hash_aset(h, sym("plan_ns"), ULL2NUM(p.planNs));
    rb_hash_aset(h, sym("execute_ns"), ULL2NUM(p.executeNs));
    rb_hash_aset(h, sym("wait_ns"), ULL2NUM(p.waitNs));
    rb_hash_aset(h, sym("device_ns"), ULL2NUM(p.deviceNs));
  }
  return h;
}

VALUE resetStatsMethod(VALUE) {
  guarded([] {
    Stats::get().reset();
    Profile::get() = Profile();
  });
  return Qnil;
}

VALUE syncMethod(VALUE) {
  guarded([] {
    releaseDeadHandles();
    Engine::get().sync();
  });
  return Qnil;
}

/// Cumo.flush: runs everything pending without waiting for it (no host
/// sync): a decode loop that flushes once a token replays one graph a token.
VALUE flushMethod(VALUE) {
  guarded([] {
    releaseDeadHandles();
    Engine::get().flush();
  });
  return Qnil;
}

VALUE gpuMethod(VALUE) { return guarded([] { return Engine::get().gpu(); }) ? Qtrue : Qfalse; }

VALUE deviceNameMethod(VALUE) {
  std::string name = guarded([] { return Engine::get().device().model().name; });
  return rb_utf8_str_new(name.data(), long(name.size()));
}

/// Cumo.device_model: what plans are made against, {name:, sm_count:,
/// compute_capability: [major, minor]}.
VALUE deviceModelMethod(VALUE) {
  DeviceModel m = guarded([] { return Engine::get().device().model(); });
  VALUE h = rb_hash_new();
  rb_hash_aset(h, ID2SYM(rb_intern("name")), rb_utf8_str_new(m.name.data(), long(m.name.size())));
  rb_hash_aset(h, ID2SYM(rb_intern("sm_count")), INT2NUM(m.smCount));
  rb_hash_aset(h, ID2SYM(rb_intern("compute_capability")),
               rb_ary_new_from_args(2, INT2NUM(m.ccMajor), INT2NUM(m.ccMinor)));
  return h;
}

VALUE enableCompat(VALUE) {
  setCompatibleMode(true);
  return Qnil;
}
VALUE disableCompat(VALUE) {
  setCompatibleMode(false);
  return Qnil;
}
VALUE compatEnabled(VALUE) { return compatibleMode() ? Qtrue : Qfalse; }

/// used_bytes / total_bytes [flush: true]: the pool's counts answer for
/// the work recorded so far, as an eager library's would: like a read they
/// run what is pending first (a flush: the device is not waited for), so
/// after `t = a + 1` t's buffer counts (the spec's "Reading The Memory
/// Numbers"). flush: false answers the pool as it stands, for a loop that
/// samples its memory without cutting its segment (examples/cg.rb).
template <size_t (MemoryPool::*Count)() const>
VALUE poolCount(int argc, VALUE *argv, VALUE) {
  const char *name = Count == &MemoryPool::usedBytes ? "used_bytes" : "total_bytes";
  VALUE opts;
  rb_scan_args(argc, argv, "0:", &opts);
  bool flush = true;
  if (!NIL_P(opts)) {
    ID kw[1] = {rb_intern("flush")};
    VALUE vals[1];
    rb_get_kwargs(opts, kw, 0, 1, vals);
    if (vals[0] != Qundef) {
      if (vals[0] != Qtrue && vals[0] != Qfalse)
        rb_raise(rb_eTypeError, "[%s] flush: must be true or false, not %" PRIsVALUE, name,
                 rb_obj_class(vals[0]));
      flush = vals[0] == Qtrue;
    }
  }
  return ULL2NUM(guarded([flush] {
    releaseDeadHandles();
    if (flush)
      Engine::get().flush();
    return (Engine::get().device().pool().*Count)();
  }));
}
VALUE poolFreeAll(VALUE) {
  guarded([] {
    releaseDeadHandles();
    Engine::get().sync();
    Engine::get().device().pool().freeCached();
  });
  return Qnil;
}
VALUE poolEnable(VALUE) {
  guarded([] { Engine::get().device().pool().setEnabled(true); });
  return Qnil;
}
VALUE poolDisable(VALUE) {
  guarded([] {
    Engine::get().sync();
    Engine::get().device().pool().setEnabled(false);
  });
  return Qnil;
}
VALUE poolEnabled(VALUE) {
  return guarded([] { return Engine::get().device().pool().enabled(); }) ? Qtrue : Qfalse;
}

VALUE planKernels(VALUE self) { return rb_ivar_get(self, rb_intern("@kernels")); }
VALUE planToS(VALUE self) { return rb_ivar_get(self, rb_intern("@text")); }
VALUE planToDotMethod(VALUE self) { return rb_ivar_get(self, rb_intern("@dot")); }
VALUE planInspect(VALUE self) {
  VALUE kernels = planKernels(self);
  return rb_sprintf("#<Cumo::Plan %ld kernel%s>", RARRAY_LEN(kernels),
                    RARRAY_LEN(kernels) == 1 ? "" : "s");
}

} // namespace

void initPlan() {
  using Fn = VALUE (*)(ANYARGS);
  cPlan = rb_define_class_under(mCumo, "Plan", rb_cObject);
  rb_define_method(cPlan, "kernels", Fn(planKernels), 0);
  rb_define_method(cPlan, "to_s", Fn(planToS), 0);
  rb_define_method(cPlan, "to_dot", Fn(planToDotMethod), 0);
  rb_define_method(cPlan, "inspect", Fn(planInspect), 0);
}

/// Cumo.allow_tf32?: whether CUMO_ALLOW_TF32 put SFloat products on TF32.
VALUE allowTf32Method(VALUE) { return allowTf32() ? Qtrue : Qfalse; }

void initCumoModule() {
  using Fn = VALUE (*)(ANYARGS);
  rb_define_module_function(mCumo, "explain", Fn(explainMethod), -1);
  rb_define_module_function(mCumo, "stats", Fn(statsMethod), 0);
  rb_define_module_function(mCumo, "reset_stats", Fn(resetStatsMethod), 0);
  rb_define_module_function(mCumo, "sync", Fn(syncMethod), 0);
  rb_define_module_function(mCumo, "flush", Fn(flushMethod), 0);
  rb_define_module_function(mCumo, "gpu?", Fn(gpuMethod), 0);
  rb_define_module_function(mCumo, "allow_tf32?", Fn(allowTf32Method), 0);
  rb_define_module_function(mCumo, "device_name", Fn(deviceNameMethod), 0);
  rb_define_module_function(mCumo, "device_model", Fn(deviceModelMethod), 0);
  rb_define_module_function(mCumo, "enable_compatible_mode", Fn(enableCompat), 0);
  rb_define_module_function(mCumo, "disable_compatible_mode", Fn(disableCompat), 0);
  rb_define_module_function(mCumo, "compatible_mode_enabled?", Fn(compatEnabled), 0);
  cMemoryPool = rb_define_module_under(mCUDA, "MemoryPool");
  rb_define_module_function(cMemoryPool, "used_bytes", Fn(poolCount<&MemoryPool::usedBytes>), -1);
  rb_define_module_function(cMemoryPool, "total_bytes", Fn(poolCount<&MemoryPool::totalBytes>), -1);
  rb_define_module_function(cMemoryPool, "free_all_blocks", Fn(poolFreeAll), 0);
  rb_define_module_function(cMemoryPool, "enable", Fn(poolEnable), 0);
  rb_define_module_function(cMemoryPool, "disable", Fn(poolDisable), 0);
  rb_define_module_function(cMemoryPool, "enabled?", Fn(poolEnabled), 0);
}

} // namespace cumo::rb
