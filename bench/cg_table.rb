# bench/cg_table.rb FILE.jsonl: the README's CG table from the JSON lines of
# bench/cg_device_run.sh (ours and the peers', one run), as Markdown. Our
# us/iter is from the run without CUMO_PROFILE where there is one, as the
# peers' are; "us/iter profiled" and the columns after it from the run with.
require_relative "lib/json_lines"

lines = JsonLines.read(ARGF)
cg = lines.select { |l| l[:bench] == "cg" && !l[:error] }
floor = lines.find { |l| l[:bench] == "ruby_floor" }
memory = lines.find { |l| l[:bench] == "cg_memory" }
device = cg.find { |l| l[:device] }&.dig(:device) || "?"

fmt = ->(x, digits = 1) { x.nil? ? "" : format("%.#{digits}f", x) }
# Ours runs each configuration twice: without CUMO_PROFILE, the time the
# peers are compared with, and with it, for the device time and the host's
# parts. One row each, from the two lines.
config = lambda do |l|
  l.values_at(:impl, :scalars, :check_every, :gc_before_flush, :gc_min_bytes,
              :gc_store_bytes_per_ns, :early_start, :n, :dtype)
end
unprofiled = cg.select { |l| l[:impl] == "cumo" && l[:profile].nil? && !l[:device_us_per_iter] }
                .to_h { |l| [config.(l), l] }
profiled_configs = cg.select { |l| l[:device_us_per_iter] }.map(&config)
cg = cg.reject do |l|
  l[:impl] == "cumo" && l[:profile].nil? && !l[:device_us_per_iter] &&
    profiled_configs.include?(config.(l))
end
groups = cg.group_by { |l| [l[:n], l[:dtype].to_s.sub("float32", "SFloat").sub("float64", "DFloat")] }
groups.each do |(n, dtype), rows|
  jax = rows.find { |r| r[:impl] == "jax_fori" }
  torch_graph = rows.find { |r| r[:impl] == "torch_graph" }
  puts "#{n}x#{n} #{dtype}, #{device}:"
  puts
  puts "| implementation | scalars | test | us/iter | x JAX fori | x torch graph | us/iter profiled | kernels/iter | device us/iter | plan + launch us/iter | GC us/iter | stored MB/iter | host syncs | rel. residual |"
  puts "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  rows.each do |r|
    test = r[:check_every].to_i.zero? ? "never" : "every #{r[:check_every]}"
    plain = r[:device_us_per_iter] ? unprofiled[config.(r)] : nil
    profiled_us = plain ? r[:us_per_iter] : nil
    us = plain ? plain[:us_per_iter] : r[:us_per_iter]
    ratio = ->(peer) { peer && us ? fmt.(us / peer[:us_per_iter], 2) : "" }
    impl = r[:impl]
    gc = r[:gc_before_flush]
    impl += " (GC before flush #{gc})" if gc && gc != "auto"
    impl += " (GC at #{r[:gc_min_bytes] >> 20} MiB of temporaries)" if r[:gc_min_bytes]
    if r[:gc_store_bytes_per_ns]
      impl += r[:gc_store_bytes_per_ns].zero? ? " (GC threshold fixed)" : " (GC cost at #{r[:gc_store_bytes_per_ns]} B/ns)"
    end
    impl += " (no early starts)" if r[:early_start] == false
    host = r[:plan_us_per_iter] && r[:execute_us_per_iter] && r[:plan_us_per_iter] + r[:execute_us_per_iter]
    puts "| #{impl} | #{r[:scalars]} | #{test} | #{fmt.(us)} | #{ratio.(jax)} | " \
         "#{ratio.(torch_graph)} | #{fmt.(profiled_us)} | #{fmt.(r[:kernels_per_iter], 2)} | #{fmt.(r[:device_us_per_iter])} | " \
         "#{fmt.(host)} | #{fmt.(r[:gc_us_per_iter], 2)} | #{fmt.(r[:stored_mb_per_iter], 2)} | #{r[:host_syncs]} | #{r[:relative_residual] && format('%.4e', r[:relative_residual])} |"
  end
  puts
end
puts "Ruby floor of the loop body (objects that only allocate): #{fmt.(floor[:us_per_iter], 2)} us/iter." if floor
if memory
  s = memory[:samples]
  puts "Memory over #{memory[:iterations]} iterations (used / pool MB): " +
       s.map { |x| "#{x[:iteration]}: #{fmt.(x[:used_bytes] / 1e6)} / #{fmt.(x[:total_bytes] / 1e6)}" }.join(", ") + "."
end
