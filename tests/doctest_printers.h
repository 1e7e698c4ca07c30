// How doctest prints what the suites compare: cumo::Error messages when
// one escapes a check, and vectors element by element.
#pragma once

#include "core/error.h"

#include <doctest/doctest.h>

#include <sstream>
#include <vector>

/// A cumo::Error escaping a check shows its message.
REGISTER_EXCEPTION_TRANSLATOR(const cumo::Error &e) {
  return doctest::String(e.message().c_str());
}

/// Vectors print their elements in failure messages.
namespace doctest {
template <class T> struct StringMaker<std::vector<T>> {
  static String convert(const std::vector<T> &v) {
    std::ostringstream out;
    out << "{";
    for (size_t i = 0; i < v.size(); ++i)
      out << (i ? ", " : "") << v[i];
    out << "}";
    return out.str().c_str();
  }
};
} // namespace doctest
