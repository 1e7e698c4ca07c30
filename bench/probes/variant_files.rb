# bench/probes/variant_files.rb: what the variant scripts
# (lm_head_variants.rb, row_variants.rb) share: an edit that stops the
# script when its text is gone (the generator changed, and the edits must
# follow it), and the files bench/kernel_times --variants reads,
# OUT_DIR/<stem>.<label>.cu.
require "fileutils"

module VariantFiles
  module_function

  # `text` with `from` (a String or a Regexp) replaced by `to` once.
  def edit(text, from, to, where)
    found = from.is_a?(Regexp) ? text.match?(from) : text.include?(from)
    abort "#{where}: #{from.inspect} not found" unless found
    text.sub(from, to)
  end

  # Each SRC_DIR/<glob> kernel's variants, as the block makes them from
  # its text and stem (a Hash of label to source), written to `out_dir`;
  # stops when there are none.
  def write_all(src_dir, out_dir, glob, what)
    FileUtils.mkdir_p(out_dir)
    written = 0
    Dir[File.join(src_dir, glob)].sort.each do |path|
      stem = File.basename(path, ".cu")
      yield(File.read(path), stem, path).each do |label, body|
        File.write(File.join(out_dir, "#{stem}.#{label}.cu"), body)
        written += 1
      end
    end
    abort "no #{what} sources in #{src_dir}" if written.zero?
    puts "#{written} variants in #{out_dir}"
  end
end
