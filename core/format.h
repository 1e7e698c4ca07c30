// Numo's text form of an array, as inspect prints it: a header with the
// class and shape, then nested brackets with rows broken and elided the way
// Numo's loop_inspect does (80 columns, 20 rows by default).
#pragma once

#include "core/dtype.h"

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace cumo {

struct InspectLimits {
  int cols = 80; ///< 0: unlimited
  int rows = 20; ///< 0: unlimited
};

/// "Cumo::DFloat(view)#shape=[3,5]".
std::string inspectHeader(std::string_view className, bool view,
                          llvm::ArrayRef<int64_t> shape);

/// One element as Numo prints it: "%g" for floats (the sixteen-bit ones
/// widened), "%g%+gi" for complex values, decimal for integers, 0 or 1 for
/// Bit.
std::string formatElement(DType dtype, const void *element);

/// The whole text: header, then "(empty)" when never written, "[]" when an
/// axis is empty, the element alone for 0-dim, else the bracketed body.
/// `data` holds the elements densely in row-major order.
std::string inspectText(std::string_view header, DType dtype,
                        llvm::ArrayRef<int64_t> shape, const void *data,
                        bool neverWritten, const InspectLimits &limits);

} // namespace cumo
