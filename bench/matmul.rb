# bench/matmul.rb: matrix products through cuBLAS (issue 7): square n x n x n
# for n in 1024..8192 and the GPT-2 shapes (m x k x n: 1x768x2304,
# 1x768x50257, 256x768x50257) in SFloat, HFloat and BFloat. One JSON line
# per (dtype, shape), and one per dtype for a copy of the gemv's weight (the
# bandwidth the device reaches, the gemv's bound).
#
#   CUMO_PROFILE=1 bin/run bench/matmul.rb [--shapes 1024,1x768x2304,...]
#                          [--dtypes SFloat,HFloat,BFloat] [--repeats 3]
#
# Each product is one flush (one plan, one graph replay whose node is the
# captured cuBLAS call), timed on the device by CUMO_PROFILE=1's events
# around the replay: us is device microseconds per product, the graph's
# launch included; wall_us the host's view. TFLOP/s counts 2mkn; GB/s the
# operands read and the answer written once. bench/peers/matmul.py times
# torch.matmul with CUDA events over back-to-back calls.
require "json"
require "optparse"
require "cumo/narray"
require_relative "lib/device_timing"

SHAPES = "1024,2048,4096,8192,1x768x2304,1x768x50257,256x768x50257"
# The bias epilogue (fusion/library_epilogue.h): GPT-2's products with more
# than 16 rows, `x.matmul(w.transpose) + b`.
BIAS_SHAPES = "256x768x2304,256x768x50257,2048x768x3072"
opts = { shapes: SHAPES, dtypes: "SFloat,HFloat,BFloat", repeats: 3, bias_shapes: BIAS_SHAPES,
         bias_dtypes: "SFloat,DFloat" }
OptionParser.new do |o|
  o.on("--shapes LIST") { |v| opts[:shapes] = v }
  o.on("--dtypes LIST") { |v| opts[:dtypes] = v }
  o.on("--repeats N", Integer) { |v| opts[:repeats] = v }
  o.on("--bias-shapes LIST", "empty: none") { |v| opts[:bias_shapes] = v }
  o.on("--bias-dtypes LIST") { |v| opts[:bias_dtypes] = v }
end.parse!(ARGV)

# Enough iterations for about 50 ms of work (at least 5, at most 200).
def iterations_for(flops) = (5e10 / [flops, 1].max).clamp(5, 200).to_i

def dims(spec)
  parts = spec.split("x").map { |v| Integer(v) }
  parts.size == 1 ? [parts[0]] * 3 : parts
end

# The seeded operands: an m x k input, and the weight as a model stores it,
# (n, k), to multiply transposed (read in place with the transpose flag:
# matmul_copies counts 0).
def operands(dtype, m, k, n)
  Cumo::NArray.srand(1)
  [dtype.new(m, k).rand(-1, 1), dtype.new(n, k).rand(-1, 1)]
end

opts[:dtypes].split(",").each do |dname|
  dtype = Cumo.const_get(dname)
  el = dtype::ELEMENT_BYTE_SIZE
  opts[:shapes].split(",").each do |spec|
    m, k, n = dims(spec)
    a, w = operands(dtype, m, k, n)
    Cumo.sync
    flops = 2.0 * m * k * n
    bytes = (m * k + k * n + m * n) * el
    r = DeviceTiming.measure(iterations_for(flops), opts[:repeats]) { a.matmul(w.transpose) }
    line = { bench: "matmul", impl: "cumo", dtype: dname, m: m, k: k, n: n,
             us: r[:us]&.round(3), wall_us: r[:wall_us].round(3),
             tflops: r[:us] && (flops / (r[:us] * 1e6)).round(2),
             gbps: r[:us] && (bytes / (r[:us] * 1e3)).round(1),
             matmul_copies: r[:stats][:matmul_copies], library_captures: r[:stats][:library_captures],
             tf32: Cumo.allow_tf32?, device: Cumo.gpu? ? "cuda" : "cpu" }
    puts JSON.generate(line)
    $stdout.flush
    next unless m == 1 && n > 10_000

    # The gemv's bound: the device copying its weight. The copy is held
    # until the flush: a dropped one may be collected first, and then its
    # plan copies nothing (on the H100 of 2026-12-05 two calls in three
    # did, and the line claimed 9.5 TB/s). kernels says each call copied.
    copy = nil
    c = DeviceTiming.measure(50, opts[:repeats]) { copy = w.dup }
    puts JSON.generate({ bench: "matmul", impl: "cumo", op: "copy", dtype: dname, m: n, k: k,
                         us: c[:us]&.round(3), gbps: c[:us] && (2 * n * k * el / (c[:us] * 1e3)).round(1),
                         kernels: c[:kernels].round(2) })
    copy = nil
  end
end

# The product with a bias add, two ways (one JSON line each, bench
# "matmul_bias"): "dropped", the product's wrapper collected before the
# plan runs, so cuBLASLt writes the sum in one call (library_epilogues
# counts it); "held", Ruby still holding the product, so it is written and
# the bias added by a second cuBLAS call (library_epilogue_adds), what two
# kernels cost. The GC in the loop costs host time, not device time.
opts[:bias_dtypes].split(",").each do |dname|
  dtype = Cumo.const_get(dname)
  opts[:bias_shapes].split(",").each do |spec|
    m, k, n = dims(spec)
    a, w = operands(dtype, m, k, n)
    b = dtype.new(n).rand(-1, 1)
    Cumo.sync
    flops = 2.0 * m * k * n
    # Outside the blocks, so no GC before the flush takes them.
    held = sum = nil
    variants = {
      "dropped" => lambda do
        sum = a.matmul(w.transpose) + b
        GC.start(full_mark: false)
      end,
      "held" => lambda do
        held = a.matmul(w.transpose)
        sum = held + b
      end,
    }
    variants.each do |variant, body|
      r = DeviceTiming.measure(iterations_for(flops), opts[:repeats]) { body.call }
      s = r[:stats]
      puts JSON.generate({ bench: "matmul_bias", impl: "cumo", variant: variant, dtype: dname,
                           m: m, k: k, n: n, us: r[:us]&.round(3), wall_us: r[:wall_us].round(3),
                           kernels: r[:kernels].round(2),
                           library_epilogues: s[:library_epilogues],
                           library_epilogue_adds: s[:library_epilogue_adds],
                           device: Cumo.gpu? ? "cuda" : "cpu" })
      $stdout.flush
    end
  end
end
