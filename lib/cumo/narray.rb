# frozen_string_literal: true

# Cumo: a lazy GPU array library with Numo's API. The extension records
# every operation in an expression DAG and runs it, fused, when a value is
# read. See README.md.
require "cumo_ext"
require_relative "products"
require_relative "extra"
require_relative "editing"
require_relative "statistics"
require_relative "parsing"
require_relative "byte_order"
require_relative "cuda"
require_relative "stream"
require_relative "elementwise_kernel"
require_relative "reduction_kernel"

module Cumo
  VERSION = "0.1.0"

  # Numo's spellings of the class aliases.
  Int = Int32 unless const_defined?(:Int)
end
