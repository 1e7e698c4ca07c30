# bench/ruby_floor.rb: what the CG loop body costs Ruby itself. The same
# calls bench/lib/cg_solver.rb makes per iteration (arithmetic, slicing,
# slice updates, sums), on objects whose methods only allocate the result.
# Not a floor for a C extension: each stub op is a Ruby method that calls
# `new` (two Ruby calls and an initialize), where an extension's op is one C
# call; perf put Ruby's own share of our never-reading CG loop at about a
# quarter of its host time (README, "CG"). Compare its us_per_iter with
# cg_bench.rb's host time on the same machine.
#
#   bin/run bench/ruby_floor.rb [--iterations 200000]
require "json"
require "optparse"
require_relative "lib/cg_solver" # the very laplacian cg_bench.rb records

iterations = 200_000
OptionParser.new { |o| o.on("--iterations N", Integer) { |v| iterations = v } }.parse!(ARGV)

# Each op allocates one object holding its operands, as a lazy library's
# wrapper holds its node.
class FloorArray
  def initialize(a = nil, b = nil)
    @a = a
    @b = b
  end

  def +(other) = FloorArray.new(self, other)
  def -(other) = FloorArray.new(self, other)
  def *(other) = FloorArray.new(self, other)
  def /(other) = FloorArray.new(self, other)
  def [](*index) = FloorArray.new(self, index)
  def sum = FloorArray.new(self)

  def []=(*index, value)
    FloorArray.new(index, value)
  end
end

x = FloorArray.new
r = FloorArray.new
p_dir = FloorArray.new
rs_old = FloorArray.new
loop_body = lambda do |_|
  ap = CGSolver.laplacian(p_dir)
  alpha = rs_old / (p_dir * ap).sum
  x += p_dir * alpha
  r -= ap * alpha
  rs_new = (r * r).sum
  p_dir = r + p_dir * (rs_new / rs_old)
  rs_old = rs_new
end
1000.times(&loop_body)
t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC)
iterations.times(&loop_body)
elapsed = Process.clock_gettime(Process::CLOCK_MONOTONIC) - t0
puts JSON.generate(bench: "ruby_floor", iterations: iterations,
                   us_per_iter: (elapsed * 1e6 / iterations).round(3),
                   ruby: RUBY_VERSION)
