# bench/probes/sass_counts.rb CUBIN_DIR: the sm_90 code of each kernel that
# `kernel_times --dry-run --cubins CUBIN_DIR` wrote (the generated kernels
# and, with --variants, their hand-edited variants), as a Markdown table:
# each kernel's instructions (NOPs left out), its reciprocals (MUFU.RCP)
# and exponentials (MUFU.EX2), its registers and its stack (spills) a
# thread, and each variant's instructions against its kernel's.
#
#   kernel_times --dry-run --sources /tmp/src --cases written_softmax_32768x1024
#   ruby bench/probes/row_ahead_variants.rb /tmp/src /tmp/variants
#   kernel_times --dry-run --cases written_softmax_32768x1024 --variants /tmp/variants --cubins /tmp/cubins
#   ruby bench/probes/sass_counts.rb /tmp/cubins
#
# Why: with no GPU at hand, this is what a change to a kernel can be
# judged by here. Registers and spills decide how many blocks an SM holds
# (the row programs that read ahead took their launch bounds from them,
# 2026-12-08). The static instruction count includes every path, the
# slow ones too (a division's fallback for tiny or huge values), so it
# says which way a change goes, not its time: the divisor of quantize_
# symmetric made its count larger and its fast path shorter, and its time
# did not move (H100, 2026-12-08).
#
# Needs cuobjdump and nvdisasm, which the CUDA toolkit here lacks: PyPI's
# nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm have them (their
# nvidia/cu13/bin); put that folder on PATH or name it in CUMO_SASS_BIN.
require "open3"

dir = ARGV[0] or abort "usage: sass_counts.rb CUBIN_DIR"
bin = ENV["CUMO_SASS_BIN"]
env = bin ? { "PATH" => "#{bin}:#{ENV["PATH"]}" } : {}

# Instruction lines of `cuobjdump -sass`: "/*0a30*/  FFMA R4, R2, R3, R4 ;".
def counts(sass)
  instructions = sass.lines.grep(%r{^\s+/\*[0-9a-f]+\*/\s+\S})
  real = instructions.reject { |l| l.include?(" NOP") }
  { all: real.size, rcp: real.count { |l| l.include?("MUFU.RCP") },
    ex2: real.count { |l| l.include?("MUFU.EX2") } }
end

# `cuobjdump ARGS path`, stopping on failure.
def cuobjdump(env, args, path)
  out, status = Open3.capture2e(env, "cuobjdump", *args, path)
  abort "cuobjdump #{args.join(" ")} #{path}:\n#{out}" unless status.success?
  out
end

rows = Dir[File.join(dir, "*.cubin")].sort.map do |path|
  c = counts(cuobjdump(env, ["-sass"], path))
  usage = cuobjdump(env, ["-res-usage"], path)
  c[:reg] = usage[/REG:(\d+)/, 1]
  c[:stack] = usage[/STACK:(\d+)/, 1]
  stem, label = File.basename(path, ".cubin").split(".", 2)
  [stem, label || "generated", c]
end
abort "no cubins in #{dir}" if rows.empty?

puts "| kernel | variant | instructions | MUFU.RCP | MUFU.EX2 | registers | stack bytes | x generated |"
puts "|---|---|---:|---:|---:|---:|---:|---:|"
generated = rows.select { |_, label, _| label == "generated" }.to_h { |stem, _, c| [stem, c] }
rows.each do |stem, label, c|
  base = generated[stem]
  ratio = base && base[:all].positive? ? format("%.3f", c[:all].fdiv(base[:all])) : ""
  puts "| #{stem} | #{label} | #{c[:all]} | #{c[:rcp]} | #{c[:ex2]} | #{c[:reg]} | #{c[:stack]} | #{ratio} |"
end
