# frozen_string_literal: true

# CUMO_SHOW_WARNING and CUMO_SHOW_WARNING_ONCE (the spec's "Show GPU
# synchronization warnings"): every read that waits for the device warns,
# naming the Ruby file and line that caused it, once per line unless
# CUMO_SHOW_WARNING_ONCE is off; ops that only record never warn. The flags
# are read once per process, so each case runs a child Ruby with its own
# environment (on the executor this test runs on: the child inherits
# CUMO_DEVICE).
require "minitest/autorun"
require "tmpdir"
require_relative "child_ruby"

class TestWarnings < Minitest::Test
  include ChildRuby

  # Line numbers below refer to this script.
  SCRIPT = <<~RUBY
    require "cumo/narray"
    a = Cumo::DFloat.new(3).seq
    b = a * 2 + 1
    c = b.reshape(3, 1).transpose
    b.to_a
    3.times { Float(b[0]) }
    b.inspect
    Cumo.sync
    b == a
    b.each { |x| x }
    b.extract_cpu
    b.aref_cpu(1)
    def helper(x) = x.to_a
    helper(c)
    b.sum.to_f
    b.to_binary
    b.map { |x| x }
  RUBY
  SYNC_LINES = [5, 6, 7, 8, 9, 10, 12, 13, 15, 16, 17].freeze

  def run_script(env)
    Dir.mktmpdir do |dir|
      path = File.join(dir, "sync_script.rb")
      File.write(path, SCRIPT)
      out, err, status = run_ruby(env, path)
      assert status.success?, "the script failed: #{err}"
      assert_empty out
      [path, err.lines.map(&:chomp)]
    end
  end

  def sync_warnings(lines) = lines.grep(/\[Cumo\] host sync/)

  def warned_lines(path, lines)
    sync_warnings(lines).map do |l|
      assert_match(/\Awarning: \[Cumo\] host sync at #{Regexp.escape(path)}:(\d+):in /, l)
      l[/#{Regexp.escape(path)}:(\d+)/, 1].to_i
    end
  end

  def test_off_by_default
    _, err = run_script({ "CUMO_SHOW_WARNING" => nil, "CUMO_SHOW_WARNING_ONCE" => nil })
    assert_empty sync_warnings(err)
    _, err = run_script({ "CUMO_SHOW_WARNING" => "OFF" })
    assert_empty err
  end

  def test_each_sync_names_its_line_once
    path, err = run_script({ "CUMO_SHOW_WARNING" => "ON" })
    lines = warned_lines(path, err)
    # Line 6 syncs three times (Float in a loop) and warns once; lines 2-4
    # only record, and line 11's extract_cpu of a 1-element array that is
    # not 0-dim answers self without reading.
    assert_equal SYNC_LINES, lines
    assert_includes err.join("\n"), "sync_script.rb:5:in `to_a'"
    assert_includes err.join("\n"), "sync_script.rb:13:in `to_a'", "the line inside helper, not its caller"
  end

  def test_every_sync_when_once_is_off
    path, err = run_script({ "CUMO_SHOW_WARNING" => "yes", "CUMO_SHOW_WARNING_ONCE" => "Off" })
    lines = warned_lines(path, err)
    assert_equal 3, lines.count(6), "Float in a loop of three syncs three times"
    assert_equal SYNC_LINES, lines.uniq
  end

  def test_flags_take_any_case_and_warn_on_nonsense
    %w[1 on TRUE Yes].each do |v|
      path, err = run_script({ "CUMO_SHOW_WARNING" => v })
      assert_equal SYNC_LINES, warned_lines(path, err), "CUMO_SHOW_WARNING=#{v}"
    end
    %w[0 no FALSE].each do |v|
      _, err = run_script({ "CUMO_SHOW_WARNING" => v })
      assert_empty err, "CUMO_SHOW_WARNING=#{v}"
    end
    _, err = run_script({ "CUMO_SHOW_WARNING" => "maybe" })
    assert_equal 1, err.size, err.join("\n")
    assert_match(/CUMO_SHOW_WARNING=maybe is not a flag.*keeping the default, off/, err[0])
    path, err = run_script({ "CUMO_SHOW_WARNING" => "on", "CUMO_SHOW_WARNING_ONCE" => "sometimes" })
    assert_match(/CUMO_SHOW_WARNING_ONCE=sometimes is not a flag.*keeping the default, on/, err.join("\n"))
    assert_equal SYNC_LINES, warned_lines(path, err)
  end

  def test_quiet_under_w0
    Dir.mktmpdir do |dir|
      path = File.join(dir, "s.rb")
      File.write(path, SCRIPT)
      _, err, status = run_ruby({ "CUMO_SHOW_WARNING" => "1" }, "-W0", path)
      assert status.success?
      assert_empty err
    end
  end
end
