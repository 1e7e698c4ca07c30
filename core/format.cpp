#include "core/format.h"

#include "core/shape.h"

#include <cinttypes>
#include <cstdio>
#include <cstring>

namespace cumo {

std::string inspectHeader(std::string_view className, bool view,
                          llvm::ArrayRef<int64_t> shape) {
  std::string h(className);
  if (view)
    h += "(view)";
  h += "#shape=";
  h += shapeToString(shape);
  return h;
}

std::string formatElement(DType dtype, const void *element) {
  char buf[48];
  dispatchDType(dtype, [&]<DType D, class T>() {
    T v;
    std::memcpy(&v, element, sizeof(T));
    if constexpr (D == DType::Bit)
      std::snprintf(buf, sizeof buf, "%1d", int(v != 0));
    else if constexpr (kIsComplexC<T>) // Numo's "%g%+gi"
      std::snprintf(buf, sizeof buf, "%g%+gi", double(v.re), double(v.im));
    else if constexpr (std::is_floating_point_v<T> || kIsNarrowFloatC<T>)
      std::snprintf(buf, sizeof buf, "%g", double(v));
    else if constexpr (std::is_signed_v<T>)
      std::snprintf(buf, sizeof buf, "%" PRId64, int64_t(v));
    else
      std::snprintf(buf, sizeof buf, "%" PRIu64, uint64_t(v));
  });
  return buf;
}

std::string inspectText(std::string_view header, DType dtype,
                        llvm::ArrayRef<int64_t> shape, const void *data,
                        bool neverWritten, const InspectLimits &limits) {
  std::string out(header);
  if (neverWritten)
    return out + "(empty)";
  int64_t n = numElements(shape);
  if (n == 0)
    return out + "[]";
  const char *bytes = static_cast<const char *>(data);
  size_t size = sizeOf(dtype);
  out += '\n';
  int64_t nd = int64_t(shape.size());
  if (nd == 0)
    return out + formatElement(dtype, bytes);

  // Walk the elements in row-major order, as Numo's loop_inspect does: one
  // bracket per axis, a line break (with the open axes as indent) whenever
  // an outer index moves, "..." where a line runs past the columns, and a
  // final "..." with no closing brackets once the rows run out.
  llvm::SmallVector<int64_t, 4> c(nd, 0);
  out.append(size_t(nd), '[');
  int64_t col = nd * 2;
  int64_t row = 0;
  int64_t flat = 0;
  while (true) {
    // One innermost row.
    int64_t len = shape[nd - 1];
    for (int64_t i = 0; i < len; ++i) {
      std::string s = formatElement(dtype, bytes + (flat + i) * size);
      int64_t w = int64_t(s.size()) + 2;
      if (i)
        out += ", ";
      if (limits.cols > 0 && col + w > limits.cols - 3) {
        out += "...";
        break;
      }
      out += s;
      col += w;
    }
    flat += len;
    out += ']';
    // Advance the outer axes, closing each one that wraps.
    int64_t d = nd - 2;
    while (d >= 0 && ++c[d] == shape[d]) {
      c[d] = 0;
      out += ']';
      --d;
    }
    if (d < 0)
      return out;
    out += ", \n";
    out.append(size_t(d + 1), ' ');
    ++row;
    col = nd * 2;
    if (limits.rows > 0 && row == limits.rows)
      return out + "...";
    out.append(size_t(nd - 1 - d), '[');
  }
}

} // namespace cumo
