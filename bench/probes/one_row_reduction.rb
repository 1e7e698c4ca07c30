# bench/probes/one_row_reduction.rb: what a full reduction of one row
# costs as the device runs it, to place fusion/row_groups.h's
# kMaxOneRowLength. A build that makes such a reduction one row-wise kernel
# (one block folds the row) and one that leaves it to the reduction
# kernels (several, over many blocks) run this alternately in one call:
#
#   CUMO_PROFILE=1 CUMO_BUILD_DIR=DIR bin/run bench/probes/one_row_reduction.rb --tag NAME
#
# One JSON line per (dtype, op, length): device us per call (CUDA events
# around the call's replay) and kernels per call. The ops are a decode
# step's `logits.argmax` and a normalization of one row, `x / x.sum`.
require "json"
require "optparse"
require "cumo/narray"
require_relative "../lib/device_timing"

opts = { tag: "", lengths: "1024,4096,8192,16384,50257", dtypes: "SFloat,BFloat",
         iterations: 200, repeats: 3 }
OptionParser.new do |o|
  o.on("--tag NAME") { |v| opts[:tag] = v }
  o.on("--lengths LIST") { |v| opts[:lengths] = v }
  o.on("--dtypes LIST") { |v| opts[:dtypes] = v }
  o.on("--iterations N", Integer) { |v| opts[:iterations] = v }
  o.on("--repeats N", Integer) { |v| opts[:repeats] = v }
end.parse!(ARGV)

OPS = {
  "argmax" => ->(x) { x.argmax },
  "normalize" => ->(x) { x / x.sum },
}.freeze

opts[:dtypes].split(",").each do |dname|
  dtype = Cumo.const_get(dname)
  opts[:lengths].split(",").map { |v| Integer(v) }.each do |n|
    Cumo::NArray.srand(3)
    x = dtype.new(1, n).rand(0.5, 1.5)
    Cumo.sync
    OPS.each do |op, fn|
      r = DeviceTiming.measure(opts[:iterations], opts[:repeats]) { fn.call(x) }
      puts JSON.generate(probe: "one_row_reduction", tag: opts[:tag], dtype: dname, op: op,
                         length: n, us: r[:us]&.round(2), wall_us: r[:wall_us].round(2),
                         kernels: r[:kernels].round(2),
                         device: Cumo.gpu? ? "cuda" : "cpu")
      $stdout.flush
    end
  end
end
