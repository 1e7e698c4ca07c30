# The timing loop of the device benchmarks (bench/fused_ops.rb,
# bench/matmul.rb): each call of the block is one flush (its plan, one
# graph replay), `iterations` of them after three that compile and
# capture, the best of `repeats` runs. us is device microseconds per call
# from CUMO_PROFILE=1's events (nil without them), wall_us the host's view.
# The block's value is held until its flush has run: a result dropped
# before it may be collected first, and a plan whose outputs are all dead
# stores nothing (the H100 run of 2026-12-05 timed a 134 MB copy so at
# 11.6 us, "11.6 TB/s").
module DeviceTiming
  module_function

  def now = Process.clock_gettime(Process::CLOCK_MONOTONIC)

  def measure(iterations, repeats)
    3.times { call_held(:sync) { yield } }
    best = nil
    repeats.times do
      Cumo.reset_stats
      t0 = now
      iterations.times { call_held(:sync) { yield } }
      wall = (now - t0) * 1e6 / iterations
      stats = Cumo.stats
      dev = stats[:device_ns].to_i.positive? ? stats[:device_ns] / 1e3 / iterations : nil
      cand = { us: dev, wall_us: wall, kernels: stats[:kernels_launched].to_f / iterations,
               stats: stats }
      best = cand if best.nil? || (cand[:us] || cand[:wall_us]) < (best[:us] || best[:wall_us])
    end
    best
  end

  # Wall microseconds per call with `iterations` calls queued back to back:
  # each flushed (Cumo.flush, one graph replay) but none waited for, then
  # one Cumo.sync; the best of `repeats`. How PyTorch's peers time their
  # kernels (events around launches queued back to back), so the device's
  # start of each replay overlaps the one before it; where the host's
  # recording and launch take longer than the device's work, it is the
  # host's time a call.
  def back_to_back(iterations, repeats)
    3.times { call_held(:flush) { yield } }
    Cumo.sync
    best = nil
    repeats.times do
      t0 = now
      iterations.times { call_held(:flush) { yield } }
      Cumo.sync
      us = (now - t0) * 1e6 / iterations
      best = us if best.nil? || us < best
    end
    best
  end

  # One call of the block, its value held until Cumo.`finish` (sync or
  # flush) has run its plan.
  def call_held(finish)
    _held = yield
    finish == :sync ? Cumo.sync : Cumo.flush
    _held = nil
  end
end
