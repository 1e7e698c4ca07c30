# bench/probes/lm_head_variants.rb SRC_DIR OUT_DIR: hand edits of the
# generated LM-head kernels, for bench/kernel_times --variants OUT_DIR to
# time beside the generated ones with the same harness.
#
#   kernel_times --dry-run --sources /tmp/src --cases lm_head,plain_lm_head,lm_head_b8,plain_lm_head_b8
#   ruby bench/probes/lm_head_variants.rb /tmp/src /tmp/variants
#   kernel_times --cases lm_head,plain_lm_head,lm_head_b8,plain_lm_head_b8 --variants /tmp/variants
#
# Why: on an H100 (2026-12-05) the generated along-k kernel took 30.9 us
# for the BFloat LM head where bench/probes/gemv_lm_head.cu's hand-written
# kernel of the same layout took 28.3 with its operands read from memory
# as ours are. Each variant removes one difference between the two, so the
# one that closes the gap shows what the generator should change:
#   - no_early: no early loads of the matrix before the wait for the
#     kernels before (the probe has none; kernel_times launches without
#     programmatic dependent launch, so the wait itself is free); only
#     where the kernel loads early (not plain_lm_head_b8);
#   - const_lanes: lanes a column and columns a lane group as constants
#     (the launch's: 32, and the kernel's CG) instead of read from the
#     parameters, so the loops' strides and the column arithmetic fold at
#     compile time;
#   - x_global (no prologue): the row read from global memory at every
#     use instead of widened into shared memory first;
#   - grid_2 and grid_6: 2 or 6 blocks an SM (264, 792 on 132 SMs)
#     instead of 3;
#   - all: no_early, const_lanes and (without a prologue) x_global;
#   - for the batch of 8 (lm_head_b8, plain_lm_head_b8; one column a lane
#     group), the probe's better layouts there: cg2 (two columns a lane
#     group), cg2_lanes16 (and 16 lanes a column, two columns a warp) and
#     cg2_lanes16_many (and a block for every 32 columns, 1571).
# An edit whose text is not found stops the script: the generator changed,
# and the edits must follow it.
require "fileutils"

src_dir, out_dir = ARGV
abort "usage: lm_head_variants.rb SRC_DIR OUT_DIR" unless src_dir && out_dir
FileUtils.mkdir_p(out_dir)

LANES_LINE = "const IX lanes = P.lanes, per_warp = 32 / lanes, cols = P.cols;"
EDITS = {
  no_early: ["const bool loaded_early = P.bvec != 0;", "const bool loaded_early = false;"],
  # The launch's lanes are 32 (k = 768); its columns the kernel's CG.
  const_lanes: ->(t) { [LANES_LINE, "const IX lanes = 32, per_warp = 1, cols = #{t[/constexpr int CG = (\d+);/, 1]};"] },
  x_global: [/const bool staged = \(long long\)M \* K \* \d+ <= \d+LL;/, "const bool staged = false;"],
  cg2: ["constexpr int CG = 1;", "constexpr int CG = 2;"],
  cols2: [LANES_LINE, "const IX lanes = 32, per_warp = 1, cols = 2;"],
  lanes16_cols2: [LANES_LINE, "const IX lanes = 16, per_warp = 2, cols = 2;"],
}.freeze

def edit(text, names, file)
  names.reduce(text) do |t, name|
    rule = EDITS.fetch(name)
    from, to = rule.respond_to?(:call) ? rule.call(t) : rule
    abort "#{file}: #{name}: #{from.inspect} not found" unless t.match?(from.is_a?(Regexp) ? from : Regexp.escape(from))
    t.sub(from, to)
  end
end

written = 0
Dir[File.join(src_dir, "{lm_head,plain_lm_head}_*_0.cu")].sort.each do |path|
  text = File.read(path)
  stem = File.basename(path, ".cu")
  prologue = stem.start_with?("lm_head")
  early = text.include?(EDITS[:no_early][0])
  all = (early ? %i[no_early] : []) + %i[const_lanes] + (prologue ? [] : %i[x_global])
  variants = {
    "const_lanes" => edit(text, [:const_lanes], path),
    "grid_2" => "// kernel_times grid: 264\n#{text}",
    "grid_6" => "// kernel_times grid: 792\n#{text}",
    "all" => edit(text, all, path),
  }
  variants["no_early"] = edit(text, [:no_early], path) if early
  variants["x_global"] = edit(text, [:x_global], path) unless prologue
  if stem.include?("_b8_")
    variants["cg2"] = edit(text, %i[cg2 cols2], path)
    variants["cg2_lanes16"] = edit(text, %i[cg2 lanes16_cols2], path)
    variants["cg2_lanes16_many"] = "// kernel_times grid: 1571\n#{variants["cg2_lanes16"]}"
  end
  variants.each do |label, body|
    File.write(File.join(out_dir, "#{stem}.#{label}.cu"), body)
    written += 1
  end
end
abort "no LM-head sources in #{src_dir}" if written.zero?
puts "#{written} variants in #{out_dir}"
