# bench/decode_table.rb FILE.jsonl: the README's GPT-2 decode table from the
# JSON lines of bench/decode_device_run.sh (ours and the peers', one run),
# as Markdown: per dtype and batch, ms per token, kernels, graph replays
# and host syncs per token, compiles and instantiations after token 2, and
# how many leading tokens agree with torch_eager's on the same weights;
# then issue 8's targets at batch 1, met or not.
require_relative "lib/json_lines"

lines = JsonLines.read(ARGF)
rows = lines.select { |l| l[:bench] == "decode" }
fmt = ->(x, digits = 2) { x.nil? ? "" : format("%.#{digits}f", x) }
profiled = ->(r) { rows.find { |p| p[:impl] == "cumo" && p[:tag] == "profiled" && p[:dtype] == r[:dtype] && p[:batch] == r[:batch] } }
leading = lambda do |a, b|
  return nil unless a && b

  a.zip(b).take_while { |x, y| x == y }.size
end
ours = ->(r) { r[:impl] == "cumo" && r[:tag].nil? }
device = rows.find { |r| r[:device] }&.dig(:device) || "?"
config = rows.find { |r| r[:config] }&.dig(:config)
if config
  puts "GPT-2 #{config[:n_layer]} layers, #{config[:n_head]} heads, #{config[:n_embd]} wide, " \
       "vocabulary #{config[:vocab_size]}, context #{config[:n_ctx]}; " \
       "#{rows.find { |r| r[:new_tokens] }&.dig(:new_tokens)} new tokens, greedy; #{device}."
  puts
end

groups = rows.reject { |r| r[:tag] == "profiled" }.group_by { |r| [r[:dtype], r[:batch]] }
groups.each do |(dtype, batch), group|
  graph = group.find { |r| r[:impl] == "torch_graph" && !r[:error] }
  eager = group.find { |r| r[:impl] == "torch_eager" && !r[:error] }
  puts "#{dtype}, batch #{batch}:"
  puts
  puts "| implementation | ms/token | x torch graph | kernels/token | graph replays/token | " \
       "host syncs/token | compiles, instantiations after token 2 | device ms/token | " \
       "host plan + launch ms/token | tokens = torch eager's |"
  puts "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  group.each do |r|
    if r[:error]
      puts "| #{r[:impl]} | #{r[:error].to_s.gsub('|', '/')[0, 80]} | | | | | | | | |"
      next
    end
    ratio = graph && r[:ms_per_token] ? fmt.(r[:ms_per_token] / graph[:ms_per_token]) : ""
    after2 = ours.(r) ? "#{r[:nvrtc_compiles_after_token2]}, #{r[:graph_instantiations_after_token2]}" : ""
    dev = ours.(r) ? fmt.(profiled.(r)&.dig(:device_ms_per_token), 3) : ""
    prof = ours.(r) ? profiled.(r) : nil
    host = prof && prof[:plan_ms_per_token] && prof[:execute_ms_per_token] &&
           prof[:plan_ms_per_token] + prof[:execute_ms_per_token]
    host = host ? fmt.(host, 3) : ""
    agree = leading.(r[:tokens], eager && eager[:tokens])
    agree = agree && r != eager ? "#{agree} of #{r[:tokens].size}" : ""
    name = r[:tag] ? "#{r[:impl]} (#{r[:tag]})" : r[:impl]
    puts "| #{name} | #{fmt.(r[:ms_per_token], 3)} | #{ratio} | #{fmt.(r[:kernels_per_token], 1)} | " \
         "#{fmt.(r[:graph_replays_per_token], 2)} | #{fmt.(r[:host_syncs_per_token], 2)} | #{after2} | " \
         "#{dev} | #{host} | #{agree} |"
  end
  puts
end

# Issue 8's targets, at batch 1.
targets = { "BFloat" => 0.30, "SFloat" => 0.40 }
checks = rows.select { |r| ours.(r) && r[:batch] == 1 && targets.key?(r[:dtype]) }
unless checks.empty?
  puts "| target (batch 1) | wanted | " + checks.map { |r| r[:dtype] }.join(" | ") + " |"
  puts "|---|---|" + checks.map { "---" }.join("|") + "|"
  yes = ->(ok) { ok ? "met" : "not met" }
  puts "| ms/token | bf16 <= 0.30, fp32 <= 0.40 | " +
       checks.map { |r| "#{fmt.(r[:ms_per_token], 3)} (#{yes.(r[:ms_per_token] <= targets[r[:dtype]])})" }.join(" | ") + " |"
  puts "| kernels/token | <= 110 | " +
       checks.map { |r| "#{fmt.(r[:kernels_per_token], 1)} (#{yes.(r[:kernels_per_token] <= 110)})" }.join(" | ") + " |"
  puts "| graph replays/token | 1 | " +
       checks.map { |r| "#{fmt.(r[:graph_replays_per_token])} (#{yes.(r[:graph_replays_per_token].positive? && r[:graph_replays_per_token] <= 1.0)})" }.join(" | ") + " |"
  puts "| host syncs/token | 0 | " +
       checks.map { |r| "#{fmt.(r[:host_syncs_per_token])} (#{yes.(r[:host_syncs_per_token].zero?)})" }.join(" | ") + " |"
  after2 = checks.map do |r|
    n = r[:nvrtc_compiles_after_token2].to_i + r[:graph_instantiations_after_token2].to_i
    "#{r[:nvrtc_compiles_after_token2]}, #{r[:graph_instantiations_after_token2]} (#{yes.(n.zero?)})"
  end
  puts "| compiles, instantiations after token 2 | 0, 0 | #{after2.join(' | ')} |"
end
