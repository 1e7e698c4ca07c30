// Cumo::CUDA::Module and Cumo::CUDA::Function: kernels users write in CUDA
// C (graph/user_kernels.h). Glue only: lib/cumo/cuda.rb has the Compiler,
// its module cache and launch's keywords; here a program is compiled, a
// kernel looked up, and arguments turned into the bytes a kernel takes.
#include "ruby/ruby_api.h"

#include "graph/direct_access.h"
#include "graph/host_kernels.h"
#include "graph/user_kernels.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace cumo::rb {

namespace {

VALUE cModule, cFunction;

/// A program for the GPU (NVRTC), or for the CPU executor (the host
/// compiler: ElementwiseKernel's and ReductionKernel's generated kernels).
struct ModuleData {
  std::shared_ptr<UserProgram> program;
  std::shared_ptr<HostProgram> host;
  bool loaded() const { return program || host; }
};
struct FunctionData {
  std::shared_ptr<UserProgram> program;
  std::shared_ptr<HostProgram> host;
  std::string name, symbol;
};

template <class T> void freeData(void *p) { delete static_cast<T *>(p); }
template <class T> size_t dataSize(const void *p) {
  const auto *d = static_cast<const T *>(p);
  return sizeof(T) + (d && d->program ? d->program->cubin().size() : 0);
}

const rb_data_type_t kModuleType = {
    "Cumo::CUDA::Module",
    {nullptr, freeData<ModuleData>, dataSize<ModuleData>, nullptr},
    nullptr,
    nullptr,
    RUBY_TYPED_FREE_IMMEDIATELY,
};
const rb_data_type_t kFunctionType = {
    "Cumo::CUDA::Function",
    {nullptr, freeData<FunctionData>, dataSize<FunctionData>, nullptr},
    nullptr,
    nullptr,
    RUBY_TYPED_FREE_IMMEDIATELY,
};

ModuleData &moduleOf(VALUE self, const char *op) {
  auto *d = static_cast<ModuleData *>(rb_check_typeddata(self, &kModuleType));
  if (!d->loaded())
    rb_raise(rb_eArgError, "[%s] the module was unloaded", op);
  return *d;
}

// (Every check that can raise runs before a C++ object that owns memory
// exists in the frame: a Ruby raise skips destructors.)

void checkStrings(VALUE ary, const char *op, const char *what) {
  if (!RB_TYPE_P(ary, T_ARRAY))
    rb_raise(rb_eTypeError, "[%s] %s must be an Array of Strings, not %" PRIsVALUE, op, what,
             rb_obj_class(ary));
  for (long i = 0; i < RARRAY_LEN(ary); ++i)
    if (!RB_TYPE_P(rb_ary_entry(ary, i), T_STRING))
      rb_raise(rb_eTypeError, "[%s] %s must be Strings, not %" PRIsVALUE, op, what,
               rb_obj_class(rb_ary_entry(ary, i)));
}

std::vector<std::string> stringsOf(VALUE ary) {
  std::vector<std::string> out;
  for (long i = 0; i < RARRAY_LEN(ary); ++i) {
    VALUE s = rb_ary_entry(ary, i);
    out.emplace_back(RSTRING_PTR(s), size_t(RSTRING_LEN(s)));
  }
  return out;
}

/// Module.__compile(source, options, name_expressions): a new module.
VALUE moduleCompile(VALUE klass, VALUE source, VALUE options, VALUE names) {
  if (!RB_TYPE_P(source, T_STRING))
    rb_raise(rb_eTypeError, "[compile_with_cache] the source must be a String, not %" PRIsVALUE,
             rb_obj_class(source));
  checkStrings(options, "compile_with_cache", "options");
  checkStrings(names, "compile_with_cache", "name_expressions");
  auto *d = new ModuleData;
  VALUE obj = TypedData_Wrap_Struct(klass, &kModuleType, d);
  DeferredRaise failure;
  {
    std::string src(RSTRING_PTR(source), size_t(RSTRING_LEN(source)));
    std::vector<std::string> opts = stringsOf(options), exprs = stringsOf(names);
    failure.engine([&] { d->program = compileUserProgram(src, opts, exprs); });
  }
  failure.raise();
  return obj;
}

/// Module.__compile_host(source, entry): the program for the CPU executor.
VALUE moduleCompileHost(VALUE klass, VALUE source, VALUE entry) {
  Check_Type(source, T_STRING);
  Check_Type(entry, T_STRING);
  auto *d = new ModuleData;
  VALUE obj = TypedData_Wrap_Struct(klass, &kModuleType, d);
  DeferredRaise failure;
  {
    std::string src(RSTRING_PTR(source), size_t(RSTRING_LEN(source)));
    std::string name(RSTRING_PTR(entry), size_t(RSTRING_LEN(entry)));
    failure.engine([&] { d->host = HostProgram::compile(src, name); });
  }
  failure.raise();
  return obj;
}

VALUE moduleGetFunction(VALUE self, VALUE name) {
  if (!RB_TYPE_P(name, T_STRING))
    rb_raise(rb_eTypeError, "[get_function] the name must be a String, not %" PRIsVALUE,
             rb_obj_class(name));
  ModuleData &m = moduleOf(self, "get_function");
  auto *f = new FunctionData{m.program, m.host,
                             std::string(RSTRING_PTR(name), size_t(RSTRING_LEN(name))),
                             std::string()};
  VALUE obj = TypedData_Wrap_Struct(cFunction, &kFunctionType, f);
  if (f->host) {
    if (f->name != f->host->entry())
      rb_raise(rb_eArgError, "[get_function] no kernel named %" PRIsVALUE " in the module",
               name);
    f->symbol = f->name;
    return obj;
  }
  // (f is the object's: nothing in this frame owns memory.)
  f->symbol = guarded([&] { return f->program->symbolOf(f->name); });
  return obj;
}

VALUE moduleKernels(VALUE self) {
  VALUE out = rb_ary_new();
  ModuleData &m = moduleOf(self, "kernels");
  if (m.host)
    rb_ary_push(out, rb_utf8_str_new(m.host->entry().data(), long(m.host->entry().size())));
  else
    for (const std::string &k : m.program->kernels())
      rb_ary_push(out, rb_utf8_str_new(k.data(), long(k.size())));
  return out;
}

/// Drops this object's hold on the program (its Functions keep theirs).
VALUE moduleUnload(VALUE self) {
  auto *d = static_cast<ModuleData *>(rb_check_typeddata(self, &kModuleType));
  guarded([&] {
    d->program.reset();
    d->host.reset();
  });
  return Qnil;
}

VALUE moduleLoaded(VALUE self) {
  auto *d = static_cast<ModuleData *>(rb_check_typeddata(self, &kModuleType));
  return d->loaded() ? Qtrue : Qfalse;
}

FunctionData &functionOf(VALUE self) {
  return *static_cast<FunctionData *>(rb_check_typeddata(self, &kFunctionType));
}

VALUE functionName(VALUE self) {
  const std::string &n = functionOf(self).name;
  return rb_utf8_str_new(n.data(), long(n.size()));
}

void checkDims(VALUE dims, const char *what) {
  if (!RB_TYPE_P(dims, T_ARRAY) || RARRAY_LEN(dims) != 3)
    rb_raise(rb_eArgError, "[launch] %s must be three sizes", what);
  for (long i = 0; i < 3; ++i)
    (void)NUM2UINT(rb_ary_entry(dims, i)); // a TypeError or RangeError here
}

unsigned dimOf(VALUE dims, long i) { return unsigned(NUM2UINT(rb_ary_entry(dims, i))); }

/// How an array argument is handed over (Function#__launch's `access`).
enum Access : int {
  kWriteContiguous = 0, ///< a user's kernel may write any array it gets
  kReadStrided = 1,     ///< a generated kernel's input, through its strides
  kWriteStrided = 2,    ///< a generated kernel's output
  kReadContiguous = 3,  ///< a generated kernel's raw input
};

void *addressFor(ArrayHandle &h, int access) {
  switch (access) {
  case kReadStrided:
    return stridedElements(h, "launch", false).address();
  case kWriteStrided:
    return stridedElements(h, "launch", true).address();
  case kReadContiguous:
    return readableElements(h, "launch").address();
  default:
    return writableElements(h, "launch").address();
  }
}

/// Function#__launch(args, grid3, block3, shared_bytes, access):
/// lib/cumo/cuda.rb checked the keywords; each argument becomes its bytes
/// here. `access` (nil: every array kWriteContiguous) says per argument
/// how an array is handed over.
VALUE functionLaunch(VALUE self, VALUE args, VALUE grid, VALUE block, VALUE shared,
                     VALUE access) {
  Check_Type(args, T_ARRAY);
  checkDims(grid, "grid");
  checkDims(block, "block");
  if (!NIL_P(access)) {
    Check_Type(access, T_ARRAY);
    if (RARRAY_LEN(access) != RARRAY_LEN(args))
      rb_raise(rb_eArgError, "[launch] one access per argument");
    for (long i = 0; i < RARRAY_LEN(access); ++i)
      (void)NUM2INT(rb_ary_entry(access, i));
  }
  FunctionData &f = functionOf(self);
  UserLaunchShape shape;
  for (long i = 0; i < 3; ++i) {
    shape.grid[i] = dimOf(grid, i);
    shape.block[i] = dimOf(block, i);
  }
  shape.sharedBytes = size_t(NUM2ULL(shared));
  // Every argument checked first (Ruby calls that may raise), then each
  // turned into its bytes, the arrays' addresses inside the engine.
  long n = RARRAY_LEN(args);
  for (long i = 0; i < n; ++i) {
    VALUE a = rb_ary_entry(args, i);
    if (isNArray(a)) {
      int mode = NIL_P(access) ? int(kWriteContiguous) : NUM2INT(rb_ary_entry(access, i));
      if (mode == kWriteContiguous || mode == kWriteStrided)
        checkFrozen(a, "launch"); // what a kernel only reads may be frozen
      handleOf(a, "launch");      // an NArray never initialized raises here
    } else if (RB_INTEGER_TYPE_P(a)) {
      if (!RB_FIXNUM_P(a))
        (void)NUM2LL(a); // a RangeError past a long long
    } else if (RB_TYPE_P(a, T_STRING)) {
      if (RSTRING_LEN(a) == 0)
        rb_raise(rb_eArgError, "[launch] argument %ld is an empty String", i);
    } else if (!RB_FLOAT_TYPE_P(a)) {
      rb_raise(rb_eTypeError,
               "[launch] argument %ld must be a Cumo::NArray, an Integer, a Float or a "
               "String of packed bytes, not %" PRIsVALUE,
               i, rb_obj_class(a));
    }
  }
  DeferredRaise failure;
  {
    std::vector<std::string> bytes(static_cast<size_t>(n));
    std::vector<long> arrays;
    std::vector<ArrayHandle *> handles;
    std::vector<int> modes;
    for (long i = 0; i < n; ++i) {
      VALUE a = rb_ary_entry(args, i);
      std::string &b = bytes[size_t(i)];
      if (isNArray(a)) {
        arrays.push_back(i);
        handles.push_back(&handleOf(a, "launch"));
        modes.push_back(NIL_P(access) ? int(kWriteContiguous) : NUM2INT(rb_ary_entry(access, i)));
      } else if (RB_INTEGER_TYPE_P(a)) {
        long long v = NUM2LL(a);
        b.assign(reinterpret_cast<const char *>(&v), sizeof(v));
      } else if (RB_FLOAT_TYPE_P(a)) {
        double v = RFLOAT_VALUE(a);
        b.assign(reinterpret_cast<const char *>(&v), sizeof(v));
      } else {
        b.assign(RSTRING_PTR(a), size_t(RSTRING_LEN(a)));
      }
    }
    failure.engine([&] {
      if (!f.host)
        requireGpu("launch"); // before any array is touched
      for (size_t k = 0; k < arrays.size(); ++k) {
        void *p = addressFor(*handles[k], modes[k]);
        bytes[size_t(arrays[k])].assign(reinterpret_cast<const char *>(&p), sizeof(p));
      }
      if (f.host)
        f.host->run(bytes);
      else
        launchUserKernel(*f.program, f.symbol, bytes, shape);
    });
  } // (the vectors are gone before a raise)
  RB_GC_GUARD(args);
  failure.raise();
  return Qnil;
}

/// Function#parameter_sizes: each parameter's bytes where the driver tells
/// them, else nil. The GPU only.
VALUE functionParameterSizes(VALUE self) {
  FunctionData &f = functionOf(self);
  if (f.host)
    return Qnil;
  std::optional<std::vector<size_t>> sizes =
      guarded([&] { return userKernelParameterSizes(*f.program, f.symbol); });
  if (!sizes)
    return Qnil;
  VALUE out = rb_ary_new();
  for (size_t s : *sizes)
    rb_ary_push(out, SIZET2NUM(s));
  return out;
}

/// NArray#__element_strides: the strides, in elements, a generated kernel
/// steps the array by (graph/direct_access.h, stridedElements).
VALUE elementStrides(VALUE self) {
  ArrayHandle &a = handleOf(self, "ElementwiseKernel");
  VALUE out = rb_ary_new();
  for (int64_t s : a.layout().strides)
    rb_ary_push(out, LL2NUM(s));
  return out;
}

/// NArray#__same_memory?(other): whether the two arrays view one storage.
VALUE sameMemory(VALUE self, VALUE other) {
  return &handleOf(self, "ElementwiseKernel").storage() ==
                 &handleOf(other, "ElementwiseKernel").storage()
             ? Qtrue
             : Qfalse;
}

} // namespace

void initUserKernels() {
  cModule = rb_define_class_under(mCUDA, "Module", rb_cObject);
  rb_undef_alloc_func(cModule);
  rb_define_singleton_method(cModule, "__compile", RUBY_METHOD_FUNC(moduleCompile), 3);
  rb_define_method(cModule, "get_function", RUBY_METHOD_FUNC(moduleGetFunction), 1);
  rb_define_method(cModule, "kernels", RUBY_METHOD_FUNC(moduleKernels), 0);
  rb_define_method(cModule, "__unload", RUBY_METHOD_FUNC(moduleUnload), 0);
  rb_define_method(cModule, "loaded?", RUBY_METHOD_FUNC(moduleLoaded), 0);
  cFunction = rb_define_class_under(mCUDA, "Function", rb_cObject);
  rb_undef_alloc_func(cFunction);
  rb_define_method(cFunction, "name", RUBY_METHOD_FUNC(functionName), 0);
  rb_define_private_method(cFunction, "__launch", RUBY_METHOD_FUNC(functionLaunch), 5);
  rb_define_singleton_method(cModule, "__compile_host", RUBY_METHOD_FUNC(moduleCompileHost), 2);
  rb_define_private_method(cNArray, "__element_strides", RUBY_METHOD_FUNC(elementStrides), 0);
  rb_define_private_method(cNArray, "__same_memory?", RUBY_METHOD_FUNC(sameMemory), 1);
  rb_define_method(cFunction, "parameter_sizes", RUBY_METHOD_FUNC(functionParameterSizes), 0);
}

} // namespace cumo::rb
