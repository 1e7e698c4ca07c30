# frozen_string_literal: true

# Runs one minitest file on the CUDA executor:
#
#   ruby tests/ruby/gpu_runner.rb tests/ruby/test_x.rb [minitest args...]
#
# tests/meson.build runs every Ruby test file twice: in suite `cpu` directly
# (CUMO_DEVICE=cpu), and in suite `gpu` through this file. Without a usable
# GPU it exits 77, which meson reports as "skipped" rather than as a pass or a
# failure, so CI (no GPU, no driver) stays green without pretending to have
# tested the GPU.

SKIP = 77

file = ARGV.shift or abort("usage: ruby #{$PROGRAM_NAME} TEST_FILE [minitest args...]")
path = File.expand_path(file)
abort("gpu_runner: no such test file: #{path}") unless File.file?(path)

def skip!(path, why)
  warn "gpu_runner: skipped #{File.basename(path)}: #{why}"
  exit SKIP
end

# Let the engine choose for itself while we ask: with CUMO_DEVICE=cuda a
# machine without a GPU raises at the first use instead of answering
# `Cumo.gpu?` false, and an inherited CUMO_DEVICE=cpu would hide the GPU.
ENV.delete("CUMO_DEVICE")

# A LoadError (the extension is missing or does not link) or a NameError is a
# broken build or a bug: let it fail. Other errors while loading or asking are
# the CUDA executor failing to open (driver, runtime, NVRTC): skip, and say why.
begin
  require "cumo"
  skip!(path, "Cumo.gpu? is false (no usable GPU or CUDA driver)") unless Cumo.gpu?
rescue LoadError, NameError
  raise
rescue StandardError => e
  skip!(path, "the CUDA executor failed to load: #{e.class}: #{e.message}")
end

# From here on the test runs on the CUDA executor; the variable also tells any
# child process (and a test that looks) which executor this run is for.
ENV["CUMO_DEVICE"] = "cuda"

# Run the file as if it were the program: minitest/autorun's at_exit hook runs
# the tests and sets our exit status; the remaining ARGV (e.g. -n /pattern/)
# goes to minitest; __FILE__ and require_relative resolve against the test.
$PROGRAM_NAME = path
load path

# A test that hangs on the GPU is killed by meson's timeout with nothing of
# minitest's report printed: say which test starts, so the log names it.
if defined?(Minitest::Test)
  Minitest::Test.prepend(Module.new do
    def before_setup
      warn "gpu_runner: start #{self.class}##{name}"
      super
    end
  end)
end
