# frozen_string_literal: true

require "open3"
require "rbconfig"

# A fresh Ruby for the tests that need one (an environment variable read
# once at load, a script's own warnings, an example run as a user runs it),
# stopped after `limit` seconds. On a GPU a child that hangs (a deadlock, a
# kernel that never ends) would otherwise hold its whole test file until the
# suite's timeout, and that timeout kills the file without a word about which
# test was running; here the test that started it fails by name, with the
# child's standard error so far.
module ChildRuby
  LIMIT_S = 120

  # `ruby *args` with `env` added to this process's environment:
  # [stdout, stderr, status].
  def run_ruby(env, *args, limit: LIMIT_S)
    out, err, status = Open3.capture3(env, "timeout", limit.to_s, RbConfig.ruby, *args)
    if status.exitstatus == 124
      flunk "the child Ruby (#{args.first(3).join(" ")[0, 80]}) did not finish in #{limit} s " \
            "(#{env.inspect})\n#{err}"
    end
    [out, err, status]
  end
end
