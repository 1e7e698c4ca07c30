# bin/lib/gpu_test_list.rb BUILD_DIR SOURCE_DIR OUT_DIR: the gpu suite as
# meson defines it (`meson introspect --tests`), written to
# OUT_DIR/gpu_tests.json with the build folder, the source folder and the
# Ruby interpreter as placeholders, and each program the suite runs from the
# build folder copied there stripped. bin/pack-prebuilt calls it, so that
# bin/test-prebuilt runs the same tests on the GPU machine without
# configuring or building there (the list follows tests/meson.build: it is
# read from the build, never written by hand).
require "fileutils"
require "json"
require "open3"
require "rbconfig"

build, source, out = ARGV.map { |p| File.expand_path(p) }
abort "usage: gpu_test_list.rb BUILD_DIR SOURCE_DIR OUT_DIR" unless out

json, err, status = Open3.capture3("meson", "introspect", build, "--tests")
abort "meson introspect: #{err}" unless status.success?
tests = JSON.parse(json).select { |t| t["suite"].any? { |s| s.split(":").last == "gpu" } }
abort "no gpu tests in #{build}" if tests.empty?

ruby = RbConfig.ruby
# meson names some files through the build folder ("build/../tests/..."):
# each absolute path is normalized first, then the folders replaced.
placeholders = lambda do |s|
  s = s.split(":", -1).map { |part| part.start_with?("/") ? File.expand_path(part) : part }.join(":")
  s.gsub(build, "@BUILD@").gsub(source, "@SOURCE@")
end
# The interpreter meson found (a path of this machine's) becomes the GPU
# machine's own.
interpreter = ->(s) { s == ruby || File.basename(s).match?(/\Aruby[\d.]*\z/) ? "@RUBY@" : s }
programs = []
list = tests.map do |t|
  cmd = t["cmd"].map(&placeholders)
  cmd[0] = interpreter.(cmd[0])
  programs << cmd[0] if cmd[0].start_with?("@BUILD@/")
  { "name" => t["name"], "cmd" => cmd, "timeout" => t["timeout"],
    "env" => t["env"].transform_values(&placeholders) }
end
programs.uniq.each do |p|
  from = p.sub("@BUILD@", build)
  to = p.sub("@BUILD@", out)
  FileUtils.mkdir_p(File.dirname(to))
  system("strip", "-o", to, from, exception: true)
end
File.write(File.join(out, "gpu_tests.json"), JSON.pretty_generate(list))
puts "#{list.size} gpu tests, #{programs.uniq.size} programs in #{out}"
