# bench/matmul_table.rb JSONL: the README's matmul table from the JSON lines
# of bench/matmul.rb and bench/peers/matmul.py (one run): per dtype and
# shape, ours and torch.matmul in device microseconds, their ratio, and for
# the gemv its bandwidth against the device's copy of the same weight.
require_relative "lib/json_lines"

lines = JsonLines.read(ARGF)
rows = lines.select { |l| l[:bench] == "matmul" }
find = lambda do |impl, dtype, m, k, n, op = nil|
  rows.find { |l| l[:impl] == impl && l[:dtype] == dtype && l[:m] == m && l[:k] == k && l[:n] == n && l[:op] == op }
end
fmt = ->(v, d = 1) { v.nil? ? "-" : format("%.#{d}f", v) }

puts "| dtype | m x k x n | ours us (TFLOP/s) | torch us (TFLOP/s) | torch / ours | GB/s ours, torch | copies |"
puts "|---|---|---|---|---|---|---|"
rows.select { |l| l[:impl] == "cumo" && l[:op].nil? }.each do |o|
  t = find.call("torch", o[:dtype], o[:m], o[:k], o[:n])
  ratio = t && o[:us] ? t[:us] / o[:us] : nil
  puts "| #{o[:dtype]} | #{o[:m]}x#{o[:k]}x#{o[:n]} | #{fmt.(o[:us], 2)} (#{fmt.(o[:tflops])}) | " \
       "#{fmt.(t && t[:us], 2)} (#{fmt.(t && t[:tflops])}) | #{fmt.(ratio, 3)} | " \
       "#{fmt.(o[:gbps], 0)}, #{fmt.(t && t[:gbps], 0)} | #{o[:matmul_copies]} |"
end
copies = rows.select { |l| l[:op] == "copy" }
unless copies.empty?
  puts
  puts "| dtype | weight copy GB/s ours (kernels a call), torch | gemv 1x768xn GB/s ours / faster copy |"
  puts "|---|---|---|"
  copies.select { |l| l[:impl] == "cumo" }.each do |c|
    tc = copies.find { |l| l[:impl] == "torch" && l[:dtype] == c[:dtype] && l[:m] == c[:m] }
    g = find.call("cumo", c[:dtype], 1, c[:k], c[:m])
    # A copy that did not run every call (kernels under 1) bounds nothing.
    ours = c[:kernels].nil? || c[:kernels] >= 1 ? c[:gbps] : nil
    bound = [ours, tc && tc[:gbps]].compact.max
    frac = g && bound && g[:gbps] ? g[:gbps] / bound : nil
    puts "| #{c[:dtype]} | #{fmt.(c[:gbps], 0)} (#{fmt.(c[:kernels], 2)}), #{fmt.(tc && tc[:gbps], 0)} | " \
         "#{fmt.(frac && frac * 100, 1)}% |"
  end
end

bias = lines.select { |l| l[:bench] == "matmul_bias" }
unless bias.empty?
  pick = lambda do |impl, variant, o|
    bias.find do |l|
      l[:impl] == impl && l[:variant] == variant && l[:dtype] == o[:dtype] &&
        [l[:m], l[:k], l[:n]] == [o[:m], o[:k], o[:n]]
    end
  end
  puts
  puts "| dtype | m x k x n + bias | ours: cuBLASLt epilogue us | ours: product held, 2 calls us | " \
       "torch addmm us | torch matmul + add us | addmm / ours |"
  puts "|---|---|---|---|---|---|---|"
  bias.select { |l| l[:impl] == "cumo" && l[:variant] == "dropped" }.each do |o|
    h = pick.call("cumo", "held", o)
    t = pick.call("torch", "addmm", o)
    u = pick.call("torch", "matmul_add", o)
    ratio = t && o[:us] ? t[:us] / o[:us] : nil
    puts "| #{o[:dtype]} | #{o[:m]}x#{o[:k]}x#{o[:n]} | #{fmt.(o[:us], 2)} | #{fmt.(h && h[:us], 2)} | " \
         "#{fmt.(t && t[:us], 2)} | #{fmt.(u && u[:us], 2)} | #{fmt.(ratio, 3)} |"
  end
end
