# bench/probes/sass_counts.rb CUBIN_DIR: the sm_90 instructions of each
# kernel that `kernel_times --dry-run --cubins CUBIN_DIR` wrote (the
# generated kernels and, with --variants, their hand-edited variants), as a
# Markdown table: each kernel's instructions (NOPs left out), its
# reciprocals (MUFU.RCP) and its exponentials (MUFU.EX2), and each
# variant's beside its kernel's.
#
#   kernel_times --dry-run --sources /tmp/src --cases written_softmax_32768x1024
#   ruby bench/probes/row_divisor_variants.rb /tmp/src /tmp/variants
#   kernel_times --dry-run --cases written_softmax_32768x1024 --variants /tmp/variants --cubins /tmp/cubins
#   ruby bench/probes/sass_counts.rb /tmp/cubins
#
# Why: with no GPU at hand, the static instruction count is the one
# measure of a change to a kernel bound by its instructions (the BFloat row
# programs, quantize_symmetric) that this machine can take. It counts every
# path, the slow ones too (a division's fallback for tiny or huge values),
# so it says which way a change goes, not by how much the time does.
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

rows = Dir[File.join(dir, "*.cubin")].sort.map do |path|
  sass, status = Open3.capture2e(env, "cuobjdump", "-sass", path)
  abort "cuobjdump -sass #{path}:\n#{sass}" unless status.success?
  stem, label = File.basename(path, ".cubin").split(".", 2)
  [stem, label || "generated", counts(sass)]
end
abort "no cubins in #{dir}" if rows.empty?

puts "| kernel | variant | instructions | MUFU.RCP | MUFU.EX2 | x generated |"
puts "|---|---|---:|---:|---:|---:|"
generated = rows.select { |_, label, _| label == "generated" }.to_h { |stem, _, c| [stem, c] }
rows.each do |stem, label, c|
  base = generated[stem]
  ratio = base && base[:all].positive? ? format("%.3f", c[:all].fdiv(base[:all])) : ""
  puts "| #{stem} | #{label} | #{c[:all]} | #{c[:rcp]} | #{c[:ex2]} | #{ratio} |"
end
