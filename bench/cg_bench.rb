# bench/cg_bench.rb: the spec's CG benchmark (README "Keeping Scalars On The
# Device"). Solves the 5-point Poisson problem with the scalars kept as
# 0-dim arrays or read back as Ruby Floats, and the convergence test taken
# every iteration, every 20th, or never. Prints one JSON line per variant.
#
#   bin/run bench/cg_bench.rb [--n 512] [--iterations 1000] [--dtype SFloat]
#                             [--variants device:never,device:20,device:1,float:never]
#                             [--memory-iterations 0] [--warmup ITERATIONS]
#
# --memory-iterations N also runs the never-reading loop for N iterations
# and samples the pool's used and total bytes (after GC.start) ten times.
require "json"
require "optparse"
require "cumo/narray"
require_relative "lib/cg_solver"

opts = { n: 512, iterations: 1000, dtype: "SFloat",
         variants: "device:never,device:20,device:1,float:20,float:never",
         memory_iterations: 0, warmup: nil, write_b: nil }
OptionParser.new do |o|
  o.on("--n N", Integer) { |v| opts[:n] = v }
  o.on("--iterations N", Integer) { |v| opts[:iterations] = v }
  o.on("--dtype NAME") { |v| opts[:dtype] = v }
  o.on("--variants LIST") { |v| opts[:variants] = v }
  o.on("--memory-iterations N", Integer) { |v| opts[:memory_iterations] = v }
  o.on("--warmup N", Integer) { |v| opts[:warmup] = v }
  # The problem's b as raw elements, for bench/peers/cg_peers.py --b-file.
  o.on("--write-b PATH") { |v| opts[:write_b] = v }
end.parse!(ARGV)

dtype = Cumo.const_get(opts[:dtype])
if opts[:write_b]
  File.binwrite(opts[:write_b], CGSolver.problem(opts[:n], dtype)[0].to_binary)
end
now = -> { Process.clock_gettime(Process::CLOCK_MONOTONIC) }

opts[:variants].split(",").reject(&:empty?).each do |variant|
  scalars, check = variant.split(":")
  check_every = check == "never" ? 0 : Integer(check)
  b, x0 = CGSolver.problem(opts[:n], dtype)
  # Warm-up: by default the very solve that is timed, twice. Every plan a
  # solve runs (its first flush, the steady ones, the final partial one)
  # is then compiled and captured, and the timed solve only replays. Twice,
  # because the phase the loop was cut at carries over to the next solve:
  # the first solve anchors it afresh, and every later one cuts its first
  # segment at the anchor, a plan of its own.
  # Each ends with the sync the timed one ends with, so its tail flush is
  # the timed tail's plan and not the tail joined to the next solve's setup.
  2.times do
    CGSolver.solve(b, x0, iterations: opts[:warmup] || opts[:iterations],
                   scalars: scalars.to_sym, check_every: check_every)
    Cumo.sync
  end
  GC.start
  Cumo.reset_stats
  t0 = now.call
  x, r, done, b_norm = CGSolver.solve(b, x0, iterations: opts[:iterations],
                                      scalars: scalars.to_sym,
                                      check_every: check_every)
  Cumo.sync
  elapsed = now.call - t0
  stats = Cumo.stats
  residual = Math.sqrt(Float((r * r).sum)) / b_norm
  residual = nil unless residual.finite? # converged to 0/0: JSON has no NaN
  puts JSON.generate(
    bench: "cg", impl: "cumo", device: Cumo.device_name, n: opts[:n],
    # The GC before a flush (graph/engine.cpp): auto, on or off.
    gc_before_flush: ENV["CUMO_GC_BEFORE_FLUSH"].to_s.empty? ? "auto" : ENV["CUMO_GC_BEFORE_FLUSH"],
    # Its threshold of optional outputs (CUMO_GC_MIN_BYTES), where set.
    gc_min_bytes: ENV["CUMO_GC_MIN_BYTES"].to_s.empty? ? nil : Integer(ENV["CUMO_GC_MIN_BYTES"]),
    gc_store_bytes_per_ns: ENV["CUMO_GC_STORE_BYTES_PER_NS"].to_s.empty? ? nil : Float(ENV["CUMO_GC_STORE_BYTES_PER_NS"]),
    early_start: ENV["CUMO_EARLY_START"] != "0",
    # CUMO_PROFILE's events and clocks cost the host time: the peers run
    # without any, so the table's us/iter comes from a run without it.
    profile: ENV["CUMO_PROFILE"].to_s.empty? || ENV["CUMO_PROFILE"] == "0" ? nil : ENV["CUMO_PROFILE"],
    dtype: opts[:dtype], scalars: scalars, check_every: check_every,
    iterations: done, us_per_iter: (elapsed * 1e6 / done).round(3),
    relative_residual: residual,
    kernels_per_iter: (stats[:kernels_launched].to_f / done).round(3),
    graph_replays: stats[:graph_replays], graph_cache_hits: stats[:graph_cache_hits],
    graph_cache_misses: stats[:graph_cache_misses],
    graph_instantiations: stats[:graph_instantiations],
    nvrtc_compiles: stats[:nvrtc_compiles], host_syncs: stats[:host_syncs],
    nodes_per_iter: (stats[:nodes_recorded].to_f / done).round(2),
    plans_run: stats[:plans_run], plan_cache_misses: stats[:plan_cache_misses],
    # The minor GCs before flushes (graph/gc_cost.h) and what the plans
    # stored: host time against device writes.
    gcs_before_flush: stats[:gcs_before_flush],
    gc_us_per_iter: (stats[:gc_before_flush_ns] / 1e3 / done).round(3),
    # What a GC costs whatever it frees (graph/gc_cost.h): the average of
    # the bare GCs the rule sampled, which sets its threshold.
    gc_bare_us: stats[:gc_bare_samples].zero? ? nil : (stats[:gc_bare_ns] / 1e3 / stats[:gc_bare_samples]).round(1),
    stored_mb_per_iter: (stats[:stored_bytes] / 1e6 / done).round(3),
    # With CUMO_PROFILE=1: host time per iteration spent planning flushes,
    # launching them, and waiting for reads; the rest is recording.
    plan_us_per_iter: stats[:plan_ns] && (stats[:plan_ns] / 1e3 / done).round(3),
    execute_us_per_iter: stats[:execute_ns] && (stats[:execute_ns] / 1e3 / done).round(3),
    wait_us_per_iter: stats[:wait_ns] && (stats[:wait_ns] / 1e3 / done).round(3),
    # Device time of the replays (CUDA events around each launch).
    device_us_per_iter: stats[:device_ns] && (stats[:device_ns] / 1e3 / done).round(3)
  )
  $stdout.flush
end

if opts[:memory_iterations] > 0
  b, x0 = CGSolver.problem(opts[:n], dtype)
  pool = Cumo::CUDA::MemoryPool
  every = [opts[:memory_iterations] / 10, 1].max
  samples = []
  sample = lambda do |i|
    next unless (i % every).zero?
    Cumo.sync
    GC.start
    samples << [i, pool.used_bytes, pool.total_bytes]
  end
  t0 = now.call
  CGSolver.solve(b, x0, iterations: opts[:memory_iterations], on_iteration: sample)
  Cumo.sync
  puts JSON.generate(bench: "cg_memory", impl: "cumo", n: opts[:n], dtype: opts[:dtype],
                     iterations: opts[:memory_iterations],
                     seconds: (now.call - t0).round(3),
                     samples: samples.map { |i, u, t| { iteration: i, used_bytes: u, total_bytes: t } })
end
