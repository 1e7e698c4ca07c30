// The kernels a cubin defines, read from its ELF symbol table: entry
// points are the global functions CUDA marks with STO_CUDA_ENTRY. Plain
// C++, so Module#get_function can refuse a missing kernel by name on a
// machine without a GPU too.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace cumo {

/// The kernel entry points of `cubin` (symbol names, mangled where C++
/// mangles them), in table order; empty when it is no ELF64 cubin.
std::vector<std::string> cubinKernels(std::string_view cubin);

} // namespace cumo
