# bench/host_cost.rb: the host's instructions per unit of work, counted by
# callgrind on the CPU executor with kernels skipped (CUMO_CPU_SKIP_KERNELS=1),
# so that a change to the host's path is measured without a GPU and without
# the timing noise of a shared machine (2x between runs on the development
# machine of 2026-12-07; instruction counts repeat within 0.1%).
#
#   bin/run bench/host_cost.rb [--workloads cg,decode] [--env NAME=VALUE]...
#
# Each workload runs twice under valgrind, short and long, and the difference
# over the extra units is the steady state's cost a unit (compiles, warm-up
# and start-up cancel):
#   cg      bench/cg_bench.rb, 512x512 SFloat, the loop that never reads,
#           iterations 2000 and 4000 after a warm-up of 2000 (each solve run
#           twice before the timed one); unit: an iteration. With a GC before
#           every flush (CUMO_GC_BEFORE_FLUSH=on): the default rule follows
#           measured times, which valgrind stretches 50x.
#   decode  examples/gpt2_decode.rb, GPT-2 124M in BFloat, 20 and 60 tokens;
#           unit: a token. With no GC before a flush (CUMO_GC_BEFORE_FLUSH=off).
# One JSON line a workload: instructions a unit in all, and the inclusive
# share of the engine's flush (its GC before it included), of that GC, and of
# the plan key. Needs valgrind and callgrind_annotate (Debian's valgrind).
require "json"
require "open3"
require "optparse"
require "rbconfig"
require "tmpdir"

workloads = %w[cg decode]
extra_env = {}
OptionParser.new do |o|
  o.on("--workloads LIST") { |v| workloads = v.split(",") }
  o.on("--env NAME=VALUE") do |v|
    name, value = v.split("=", 2)
    extra_env[name] = value.to_s
  end
end.parse!(ARGV)

root = File.expand_path("..", __dir__)
ruby = RbConfig.ruby
WORKLOADS = {
  "cg" => {
    unit: "iteration",
    env: { "CUMO_GC_BEFORE_FLUSH" => "on" },
    counts: [2000, 4000],
    argv: ->(n) { ["#{root}/bench/cg_bench.rb", "--n", "512", "--iterations", n.to_s, "--warmup", "2000", "--variants", "device:never"] }
  },
  "decode" => {
    unit: "token",
    # No GC before a flush: the default rule collects every few dozen
    # tokens, at times valgrind's pace moves (so a run's difference held
    # one GC more or less); without, every token does the same work.
    env: { "CUMO_GC_BEFORE_FLUSH" => "off" },
    counts: [20, 60],
    argv: ->(n) { ["#{root}/examples/gpt2_decode.rb", "--dtype", "BFloat", "--tokens", n.to_s] }
  }
}.freeze

# Inclusive instructions of the functions whose names match, from
# callgrind_annotate's list (one line a function: "N (p%)  file:name [lib]").
# The function's own line (its source file, its name), not its inlined
# pieces (a header's file) nor its lambdas' lines (named after it).
PARTS = {
  "flush" => /\.cpp:cumo::Engine::flush\(\) \[/,
  "gc_before_flush" => /\.cpp:cumo::Engine::timeYoungGc\(\) \[/,
  "plan_key" => /\.cpp:cumo::PlanCache::keys\([^{]*$/
}.freeze

def annotate(out_file)
  # Run away from the checkout: there callgrind_annotate resolves some of
  # the build's relative source paths and lists a function twice, split.
  text, status = Open3.capture2("callgrind_annotate", "--inclusive=yes", "--threshold=100",
                                "--auto=no", out_file, chdir: File.dirname(out_file))
  raise "callgrind_annotate failed on #{out_file}" unless status.success?

  total = nil
  parts = Hash.new(0)
  text.each_line do |line|
    m = line.match(/^\s*([\d,]+) \(\s*[\d.]+%\)\s+(.*)$/) or next
    count = Integer(m[1].delete(","))
    name = m[2]
    total = count if name.start_with?("PROGRAM TOTALS")
    PARTS.each { |part, re| parts[part] += count if name.match?(re) }
  end
  [total, parts]
end

Dir.mktmpdir("cumo-host-cost") do |dir|
  runs = workloads.flat_map do |w|
    spec = WORKLOADS.fetch(w) { abort "unknown workload #{w} (#{WORKLOADS.keys.join(', ')})" }
    spec[:counts].map { |n| [w, n, File.join(dir, "#{w}.#{n}.out")] }
  end
  # Two at a time: the development machine has two cores.
  runs.each_slice(2) do |pair|
    started = pair.map do |w, n, out|
      spec = WORKLOADS.fetch(w)
      env = { "CUMO_DEVICE" => "cpu", "CUMO_CPU_SKIP_KERNELS" => "1" }.merge(spec[:env]).merge(extra_env)
      cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=#{out}", ruby, *spec[:argv].(n)]
      log = "#{out}.log"
      [w, n, log, Process.spawn(env, *cmd, out: log, err: log)]
    end
    started.each do |w, n, log, pid|
      Process.wait(pid)
      abort "#{w} with #{n} failed:\n#{File.read(log)[-2000..]}" unless $?.success?
    end
  end
  runs.group_by(&:first).each do |w, (short, long)|
    spec = WORKLOADS.fetch(w)
    t1, p1 = annotate(short[2])
    t2, p2 = annotate(long[2])
    units = (long[1] - short[1]).to_f
    line = { bench: "host_cost", workload: w, unit: spec[:unit],
             env: spec[:env].merge(extra_env),
             instructions_per_unit: ((t2 - t1) / units).round }
    PARTS.each_key { |part| line[:"#{part}_per_unit"] = ((p2[part] - p1[part]) / units).round }
    puts JSON.generate(line)
    $stdout.flush
  end
end
