#include "fusion/consumer_folds.h"

#include "core/env_flag.h"
#include "fusion/cuda_kernel_shape.h"

#include "llvm/ADT/STLExtras.h"

namespace cumo {

namespace {

/// Folds a kernel takes at most (each costs a block reduction at its start).
constexpr size_t kMaxFolds = 4;

enum class Use { None, Loads, Other };

/// How kernel `k` uses buffer `b` of class `t`: not at all, only through
/// loads in its class (whatever their index: the buffer holds the one
/// element a full reduction makes), or some other way (an operand, a
/// store or the table it writes through, a reduction into it).
Use useOf(const Kernel &k, uint32_t b, DType t) {
  bool other = llvm::any_of(k.operands, [&](const Load &l) { return l.buffer == b; }) ||
               llvm::any_of(k.stores, [&](const Store &s) {
                 return s.buffer == b || (s.through && s.through->table == b);
               }) ||
               llvm::any_of(k.reduces, [&](const Reduce &r) {
                 return r.buffer == b || r.partials == int32_t(b);
               }) ||
               (k.prologue.stored && k.prologue.out.buffer == b);
  if (other)
    return Use::Other;
  bool loads = false;
  for (const Load &l : k.loads) {
    if (l.buffer != b)
      continue;
    if (l.dtype != t)
      return Use::Other;
    loads = true;
  }
  return loads ? Use::Loads : Use::None;
}

} // namespace

void foldInConsumers(Plan &plan, const DeviceModel &model) {
  static const bool enabled = envFlag("CUMO_FOLD_IN_CONSUMER", true);
  if (!enabled)
    return;
  // Every block of the reducing kernel leaves a partial: its grid's cap
  // (cuda_codegen.cpp, gridFor) is how many there can be.
  const int64_t slots = int64_t(std::max(model.smCount, 1)) * cudagen::kMaxBlocksPerSm;
  for (size_t a = 0; a < plan.kernels.size(); ++a) {
    if (plan.kernels[a].kind != Kernel::Kind::Elementwise)
      continue;
    for (size_t r = 0; r < plan.kernels[a].reduces.size(); ++r) {
      uint32_t result = plan.kernels[a].reduces[r].buffer;
      for (size_t b = a + 1; b < plan.kernels.size(); ++b) {
        Kernel &reader = plan.kernels[b];
        Use use = useOf(reader, result, plan.kernels[a].reduces[r].dtype);
        if (use == Use::None)
          continue;
        if (use == Use::Loads && reader.kind == Kernel::Kind::Elementwise &&
            reader.folds.size() < kMaxFolds) {
          Reduce &red = plan.kernels[a].reduces[r];
          PlanBuffer partials;
          partials.role = PlanBuffer::Role::Temp;
          partials.dtype = red.accumulator;
          partials.elements = slots;
          red.partials = int32_t(plan.buffers.size());
          red.slots = slots;
          plan.buffers.push_back(std::move(partials));
          Fold f;
          f.partials = uint32_t(red.partials);
          f.slots = slots;
          f.buffer = result;
          f.op = red.op;
          f.accumulator = red.accumulator;
          f.dtype = red.dtype;
          f.count = red.count;
          reader.folds.push_back(f);
        }
        break; // only the first reader can take it
      }
    }
  }
}

} // namespace cumo
