# bench/probes/lm_head_variants.rb SRC_DIR OUT_DIR: hand edits of the
# generated LM-head kernels, for bench/kernel_times --variants OUT_DIR to
# time beside the generated ones with the same harness.
#
#   kernel_times --dry-run --sources /tmp/src --cases lm_head,plain_lm_head,lm_head_b8,plain_lm_head_b8
#   ruby bench/probes/lm_head_variants.rb /tmp/src /tmp/variants
#   kernel_times --cases lm_head,plain_lm_head,lm_head_b8,plain_lm_head_b8 --variants /tmp/variants
#
# Why: each variant removes one difference from the generated kernel, so
# the one that gains shows what the generator should change next. The
# first round (H100, 2026-12-05: the BFloat LM head at 30.9 us against 28.3
# for bench/probes/gemv_lm_head.cu's hand-written kernel) found constant
# lanes and columns (29.1), the single row read from global memory (29.8)
# and, for 8 rows, two columns of 16 lanes at once (119-148 -> 73-82 us);
# the generator now does all three. What is left to try:
#   - no_early: no early loads of the matrix before the wait for the
#     kernels before (kernel_times launches without programmatic
#     dependent launch, so the wait itself is free); only where the
#     kernel loads early;
#   - dynamic: the launch's lanes and columns read from the parameters
#     (the generic path every other launch takes), to see what the
#     constant path still gains;
#   - x_global (8 rows, no prologue): the rows read from global memory at
#     every use instead of widened into shared memory first;
#   - grid_2 and grid_6: 2 or 6 blocks an SM (264, 792 on 132 SMs)
#     instead of 3;
#   - lanes32 (8 rows): one column of 32 lanes at a time, the layout
#     before.
# An edit whose text is not found stops the script: the generator changed,
# and the edits must follow it.
require_relative "variant_files"

src_dir, out_dir = ARGV
abort "usage: lm_head_variants.rb SRC_DIR OUT_DIR" unless src_dir && out_dir

FIXED_CALL = /  if \(P\.lanes == (\d+) && P\.cols == CG\)\n    along_k\(cumo_k::fixed_int<\d+>\(\), cumo_k::fixed_int<CG>\(\)\);\n  else\n/
EDITS = {
  no_early: ["const bool loaded_early = P.bvec != 0;", "const bool loaded_early = false;"],
  dynamic: [FIXED_CALL, ""],
  x_global: [/const bool staged = M > 1 && \(long long\)M \* K \* \d+ <= \d+LL;/, "const bool staged = false;"],
  # One column of 32 lanes: the launch's P.lanes and P.cols with it.
  lanes32: ->(t) {
    [t[FIXED_CALL], "  if (true)\n    along_k(cumo_k::fixed_int<32>(), cumo_k::fixed_int<1>());\n  else\n"]
  },
}.freeze

def edit(text, names, file)
  names.reduce(text) do |t, name|
    rule = EDITS.fetch(name)
    from, to = rule.respond_to?(:call) ? rule.call(t) : rule
    VariantFiles.edit(t, from, to, "#{file}: #{name}")
  end
end

VariantFiles.write_all(src_dir, out_dir, "{lm_head,plain_lm_head}_*_0.cu", "LM-head") do |text, stem, path|
  prologue = stem.start_with?("lm_head")
  rows8 = stem.include?("_b8_")
  early = text.include?(EDITS[:no_early][0])
  variants = {
    "dynamic" => edit(text, [:dynamic], path),
    "grid_2" => "// kernel_times grid: 264\n#{text}",
    "grid_6" => "// kernel_times grid: 792\n#{text}",
  }
  variants["no_early"] = edit(text, [:no_early], path) if early
  variants["x_global"] = edit(text, [:x_global], path) if rows8 && !prologue
  variants["lanes32"] = edit(text, [:lanes32], path) if rows8
  variants
end
