# bench/record_bench.rb: the host cost of recording one op (DESIGN.md, "How
# a call flows": target 0.3 us), per kind of call the CG loop makes, on a
# small array so that the flushes the pending budget forces compute little.
# Prints one JSON line per kind: ns per call of the whole loop, and with
# CUMO_PROFILE=1 (or =cpu: CPU time, steadier on a shared machine) the part
# spent recording, i.e. with the flushes' plan and execute time taken out.
# Times are the best of --repeats runs.
#
#   CUMO_PROFILE=cpu bin/run bench/record_bench.rb [--calls 200000] [--repeats 5] [--n 4]
#                                                  [--kinds binary,view,...]
require "json"
require "optparse"
require "cumo/narray"

opts = { calls: 200_000, repeats: 5, n: 4, kinds: nil }
OptionParser.new do |o|
  o.on("--calls N", Integer) { |v| opts[:calls] = v }
  o.on("--repeats N", Integer) { |v| opts[:repeats] = v }
  o.on("--n N", Integer) { |v| opts[:n] = v }
  o.on("--kinds LIST") { |v| opts[:kinds] = v.split(",") }
end.parse!(ARGV)

n = opts[:n]
a = Cumo::SFloat.new(n, n).rand
b = Cumo::SFloat.new(n, n).rand
s = (a * b).sum
Cumo.sync
cpu = ENV["CUMO_PROFILE"] == "cpu"
clock = cpu ? Process::CLOCK_PROCESS_CPUTIME_ID : Process::CLOCK_MONOTONIC

# Each body is one Ruby call, but slice_update: a stencil line as CG's
# laplacian writes it, five calls (a * 4.0, two views, the subtraction and
# []=), counted as five.
kinds = {
  "binary" => -> { a * b },
  "scalar" => -> { a * 2.0 },
  "zero_dim" => -> { s / s },
  "view" => -> { a[1..-1, true] },
  "sum" => -> { a.sum },
  "slice_update" => lambda {
    c = a * 4.0
    c[1..-1, true] -= a[0..-2, true]
  },
}
calls_per = { "slice_update" => 5 }

kinds.each do |name, body|
  next if opts[:kinds] && !opts[:kinds].include?(name)
  best = nil
  opts[:repeats].times do
    GC.start
    Cumo.reset_stats
    i = 0
    calls = opts[:calls] / calls_per.fetch(name, 1)
    t0 = Process.clock_gettime(clock)
    while i < calls
      body.call
      i += 1
    end
    Cumo.sync
    elapsed = Process.clock_gettime(clock) - t0
    st = Cumo.stats
    total = calls * calls_per.fetch(name, 1)
    run = { ns_per_call: elapsed * 1e9 / total }
    if st[:plan_ns]
      run[:record_ns_per_call] = (elapsed * 1e9 - st[:plan_ns] - st[:execute_ns] - st[:wait_ns]) / total
      run[:plan_ns_per_call] = st[:plan_ns].to_f / total
    end
    best = run if best.nil? || run[:ns_per_call] < best[:ns_per_call]
  end
  puts JSON.generate({ bench: "record", kind: name, n: n, calls: opts[:calls],
                       clock: cpu ? "cpu" : "wall" }.merge(best.transform_values { |v| v.round(1) }))
  $stdout.flush
end
