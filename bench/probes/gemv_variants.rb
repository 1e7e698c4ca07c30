# bench/probes/gemv_variants.rb SRC_DIR OUT_DIR: the decode's (k, n)
# products launched with other splits of k over blocks, for bench/kernel_times
# --variants OUT_DIR to time beside the generated launch. SRC_DIR holds what
# kernel_times --dry-run --sources writes and, as dry_run.jsonl, the lines it
# prints (each kernel's grid and lanes):
#
#   C=qkv,fc,attn_proj,mlp_proj,plain_768x2304,plain_3072x768
#   kernel_times --dry-run --sources /tmp/src --cases $C > /tmp/src/dry_run.jsonl
#   ruby bench/probes/gemv_variants.rb /tmp/src /tmp/variants
#   kernel_times --cases $C --variants /tmp/variants
#
# Why: these products read 1-5 MB in 3.9-9.7 us (kernel_times, H100,
# 2026-12-05), bound by latency: ncu put the mid-size ones at 25% achieved
# occupancy, stalled on loads. bench/probes/gemv_layouts.cu's hand-written
# kernels did best at 1x3072x768 BFloat with k split four ways (6.65 us,
# H200) where the generator splits it three (8.46 us on the H100); the
# others at one split. A kernel finds its split from its grid (splits =
# grid / tiles, tiles = the columns over lanes x CV), so each variant is the
# generated source with `// kernel_times grid: tiles x S` for S in SPLITS
# other than the generator's; the harness sizes the partials' scratch for
# that grid. The source is unchanged, so the results are the same but for
# the order of the partial sums.
require_relative "../lib/json_lines"
require_relative "variant_files"

src_dir, out_dir = ARGV
abort "usage: gemv_variants.rb SRC_DIR OUT_DIR" unless src_dir && out_dir

# Each case's columns (the n of its (k, n) weight).
COLUMNS = { "qkv" => 2304, "fc" => 3072, "attn_proj" => 768, "mlp_proj" => 768,
            "plain_768x2304" => 2304, "plain_3072x768" => 768 }.freeze
SPLITS = [1, 2, 3, 4, 6].freeze

launches = File.open(File.join(src_dir, "dry_run.jsonl")) { |f| JsonLines.read(f) }
launch_of = ->(stem) { launches.find { |l| "#{l[:case]}_#{l[:dtype]}_#{l[:kernel]}" == stem } }

VariantFiles.write_all(src_dir, out_dir, "{#{COLUMNS.keys.join(',')}}_*_0.cu", "product") do |text, stem, path|
  launch = launch_of.(stem) or abort "#{path}: no line for #{stem} in dry_run.jsonl"
  cv = text[/constexpr int CV = (\d+);/, 1] or abort "#{path}: no CV"
  columns = COLUMNS.fetch(stem[/\A(.+)_[A-Za-z]+_0\z/, 1])
  tiles = -(-columns / (launch[:lanes] * Integer(cv)))
  generated = launch[:grid] / tiles
  abort "#{path}: grid #{launch[:grid]} is not a multiple of #{tiles} tiles" unless launch[:grid] % tiles == 0
  (SPLITS - [generated]).to_h do |s|
    ["splits#{s}", "// kernel_times grid: #{tiles * s}\n#{text}"]
  end
end
