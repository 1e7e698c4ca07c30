# bench/probes/variants_table.rb FILE.jsonl: kernel_times' lines with
# --variants as Markdown, each variant's microseconds against its generated
# kernel's (the ratio under 1 is the faster variant).
require_relative "../lib/json_lines"

lines = JsonLines.read(ARGF)
rows = lines.select { |l| l[:bench] == "kernel_times" && l[:us] }
device = rows.first&.dig(:device) || "?"
puts "kernel_times variants, #{device}:"
puts
puts "| case | dtype | kernel | variant | grid | us | x generated |"
puts "|---|---|---:|---|---:|---:|---:|"
rows.group_by { |r| [r[:case], r[:dtype], r[:kernel]] }.each do |(kase, dtype, kernel), group|
  base = group.find { |r| r[:variant] == "generated" }
  group.each do |r|
    ratio = base ? format("%.3f", r[:us] / base[:us]) : ""
    puts "| #{kase} | #{dtype} | #{kernel} | #{r[:variant]} | #{r[:grid]} | #{format('%.2f', r[:us])} | #{ratio} |"
  end
end
