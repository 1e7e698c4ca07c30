# bench/fused_ops.rb: the fused row operations (issue 5) and
# quantize_symmetric against their
# written-out forms, rows x cols in SFloat and BFloat. Prints one JSON line
# per (op, form, dtype, shape), and a copy of each shape for the bandwidth
# the device reaches moving the same bytes.
#
#   CUMO_PROFILE=1 bin/run bench/fused_ops.rb [--shapes 1x768,64x768,...]
#                          [--dtypes SFloat,BFloat] [--iterations 50] [--repeats 3]
#
# Each op is read back (Cumo.sync) before the next, so every op is one
# flush and one graph replay, timed on the device by the event nodes
# CUMO_PROFILE=1 puts first and last in the graph: us is device
# microseconds per op (the kernel's launch inside the graph included),
# wall_us the host's view (recording, replay and the wait). b2b_us is
# wall microseconds per op with the ops queued back to
# back (each flushed, one sync at the end: DeviceTiming.back_to_back), as
# PyTorch's peers are timed; measure it without CUMO_PROFILE (whose
# per-replay events cost the host time): --timing b2b, as
# bench/fused_device_run.sh does in a second pass. GB/s counts the row's
# read and write once (and gamma, beta).
# bench/peers/fused_ops.py times PyTorch's kernels with CUDA events.
require "json"
require "optparse"
require "cumo/narray"
require_relative "lib/device_timing"

opts = { shapes: "1x768,64x768,4096x768,4096x4096,32768x1024", dtypes: "SFloat,BFloat",
         iterations: 50, repeats: 3, eps: 1e-5, timing: "both" }
OptionParser.new do |o|
  o.on("--timing single|b2b|both") { |v| opts[:timing] = v }
  o.on("--shapes LIST") { |v| opts[:shapes] = v }
  o.on("--dtypes LIST") { |v| opts[:dtypes] = v }
  o.on("--iterations N", Integer) { |v| opts[:iterations] = v }
  o.on("--repeats N", Integer) { |v| opts[:repeats] = v }
end.parse!(ARGV)

EPS = opts[:eps]
M = Cumo::NMath

# The written-out forms, as a Numo user writes them.
WRITTEN = {
  "layer_norm" => lambda { |x, g, b|
    m = x.mean(axis: -1, keepdims: true)
    d = x - m
    v = (d * d).mean(axis: -1, keepdims: true)
    d / M.sqrt(v + EPS) * g + b
  },
  "rms_norm" => ->(x, g, _b) { x / M.sqrt((x * x).mean(axis: -1, keepdims: true) + EPS) * g },
  "softmax" => lambda { |x, _g, _b|
    e = M.exp(x - x.max(axis: -1, keepdims: true))
    e / e.sum(axis: -1, keepdims: true)
  },
  # The spec's formula as operators (rows of zeros, infinities or NaN
  # aside, which it does not guard).
  "quantize_symmetric" => lambda { |x, _g, _b|
    s = x.abs.max(axis: -1, keepdims: true) / 127
    [(x / s).round.clip(-127, 127).cast_to(Cumo::Int8), s]
  },
}.freeze
FUSED = {
  "layer_norm" => ->(x, g, b) { x.layer_norm(g, b, eps: EPS) },
  "rms_norm" => ->(x, g, _b) { x.rms_norm(g, eps: EPS) },
  "softmax" => ->(x, _g, _b) { x.softmax },
  "quantize_symmetric" => ->(x, _g, _b) { x.quantize_symmetric },
  "copy" => ->(x, _g, _b) { x.dup },
}.freeze

opts[:dtypes].split(",").each do |dname|
  dtype = Cumo.const_get(dname)
  opts[:shapes].split(",").each do |shape|
    rows, cols = shape.split("x").map { |v| Integer(v) }
    Cumo::NArray.srand(1)
    x = dtype.new(rows, cols).rand(-2, 2)
    g = dtype.new(cols).rand(0.5, 1.5)
    b = dtype.new(cols).rand(-1, 1)
    Cumo.sync
    el = dtype::ELEMENT_BYTE_SIZE
    forms = FUSED.keys.map { |op| [op, "fused"] } + WRITTEN.keys.map { |op| [op, "written"] }
    forms.each do |op, form|
      fn = (form == "fused" ? FUSED : WRITTEN)[op]
      single = opts[:timing] != "b2b"
      r = single ? DeviceTiming.measure(opts[:iterations], opts[:repeats]) { fn.call(x, g, b) } : {}
      b2b = if opts[:timing] != "single"
              DeviceTiming.back_to_back(opts[:iterations], opts[:repeats]) { fn.call(x, g, b) }
            end
      params = { "layer_norm" => 2, "rms_norm" => 1 }.fetch(op, 0)
      bytes = if op == "quantize_symmetric" # x in, Int8 and a scale per row out
                rows * cols * (el + 1) + rows * [el, 4].max
              else
                (2 * rows * cols + params * cols) * el
              end
      line = { bench: "fused_ops", impl: "cumo", op: op, form: form, dtype: dname,
               rows: rows, cols: cols, us: r[:us]&.round(3), wall_us: r[:wall_us]&.round(3),
               b2b_us: b2b&.round(3), timing: opts[:timing],
               gbps: r[:us] && (bytes / (r[:us] * 1e3)).round(1),
               kernels_per_op: r[:kernels]&.round(2),
               # Bytes stored a call: the outputs, and any intermediate Ruby
               # still held at the flush (a written-out form's dead locals
               # before a GC collects them).
               stored_mb: r[:stats] && (r[:stats][:stored_bytes].to_f / 1e6 / opts[:iterations]).round(3),
               device: Cumo.gpu? ? "cuda" : "cpu" }
      puts JSON.generate(line)
      $stdout.flush
    end
  end
end
