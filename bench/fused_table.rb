# bench/fused_table.rb JSONL: the README's table of the fused row
# operations from the JSON lines of bench/fused_ops.rb and
# bench/peers/fused_ops.py (one run): per dtype, shape and op, ours fused
# and written out (with the bytes it stored against the fused op's),
# PyTorch's fused kernel, and the copy bandwidth of the
# same bytes on either side; ours also back to back (b2b_us: ops queued
# without a wait, timed as PyTorch's are; from a pass without
# CUMO_PROFILE where there is one) where the lines have it.
require_relative "lib/json_lines"

lines = JsonLines.read(ARGF)
all = lines.select { |l| l[:bench] == "fused_ops" }
# A line of the back-to-back pass (--timing b2b, without CUMO_PROFILE)
# gives its b2b_us to the profiled pass's line of the same case.
key = ->(l) { l.values_at(:impl, :op, :form, :dtype, :rows, :cols) }
b2b = all.select { |l| l[:timing] == "b2b" }.to_h { |l| [key.(l), l[:b2b_us]] }
rows = all.reject { |l| l[:timing] == "b2b" }.map do |l|
  b2b.key?(key.(l)) ? l.merge(b2b_us: b2b[key.(l)]) : l
end
find = lambda do |impl, op, form, dtype, r, c|
  rows.find do |l|
    l[:impl] == impl && l[:op] == op && l[:form] == form && l[:dtype] == dtype &&
      l[:rows] == r && l[:cols] == c
  end
end
fmt = ->(v, d = 1) { v.nil? ? "-" : format("%.#{d}f", v) }
# The written-out form's stored bytes a call against the fused op's: above
# 1 where the intermediates Ruby still held at the flush were stored too.
stored = lambda do |w, f|
  next "-" unless w && f && w[:stored_mb] && f[:stored_mb].to_f.positive?
  "#{fmt.(w[:stored_mb] / f[:stored_mb], 1)}x"
end

puts "| dtype | rows x cols | op | ours fused us (GB/s) | ours written out us (kernels, MB stored / fused's) | " \
     "PyTorch us (GB/s) | PyTorch / ours | ours back to back us | PyTorch / ours back to back | " \
     "copy GB/s ours, torch |"
puts "|---|---|---|---|---|---|---|---|---|---|"
shapes = rows.map { |l| [l[:dtype], l[:rows], l[:cols]] }.uniq
shapes.each do |dtype, r, c|
  copy = find.call("cumo", "copy", "fused", dtype, r, c)
  tcopy = find.call("torch", "copy", "fused", dtype, r, c)
  %w[layer_norm rms_norm softmax quantize_symmetric].each do |op|
    f = find.call("cumo", op, "fused", dtype, r, c)
    w = find.call("cumo", op, "written", dtype, r, c)
    t = find.call("torch", op, "fused", dtype, r, c)
    next unless f
    ratio = t && f[:us] ? t[:us] / f[:us] : nil
    b2b = t && f[:b2b_us] ? t[:us] / f[:b2b_us] : nil
    puts "| #{dtype} | #{r}x#{c} | #{op} | #{fmt.(f[:us], 2)} (#{fmt.(f[:gbps], 0)}) | " \
         "#{fmt.(w && w[:us], 2)} (#{fmt.(w && w[:kernels_per_op], 0)}, #{stored.(w, f)}) | " \
         "#{fmt.(t && t[:us], 2)} (#{fmt.(t && t[:gbps], 0)}) | #{fmt.(ratio, 2)} | " \
         "#{fmt.(f[:b2b_us], 2)} | #{fmt.(b2b, 2)} | " \
         "#{fmt.(copy && copy[:gbps], 0)}, #{fmt.(tcopy && tcopy[:gbps], 0)} |"
  end
end
