# Graph replay on the CUDA executor: a loop of identical iterations builds
# its graph once and replays it, with Ruby Float scalars and fresh output
# addresses patched in, not compiled or instantiated again. Run through
# tests/ruby/gpu_runner.rb, which skips without a GPU.
require "minitest/autorun"
require "cumo/narray"

class TestReplay < Minitest::Test
  def setup
    skip "needs the CUDA executor" unless Cumo.gpu?
  end

  def step(x, v, scale)
    y = (x * scale + v).sum
    [x + v * y / 1000.0, y]
  end

  def test_identical_iterations_replay_one_graph
    x = Cumo::SFloat.new(256, 256).seq(0, 1e-4)
    v = Cumo::SFloat.ones(256, 256)
    # Warm up: compile and capture.
    3.times { |i| x, y = step(x, v, 0.5 + i); Float(y) }
    Cumo.reset_stats
    100.times do |i|
      x, y = step(x, v, 0.5 + i * 0.01) # a different Ruby Float each time
      Float(y)                          # one flush per iteration
    end
    s = Cumo.stats
    assert_equal 0, s[:graphs_built], "no graph is built after warm-up: #{s}"
    assert_equal 0, s[:graph_instantiations], s.inspect
    assert_equal 0, s[:nvrtc_compiles], s.inspect
    assert_operator s[:graph_replays], :>=, 100, s.inspect
    assert_equal s[:graph_replays], s[:graph_cache_hits], s.inspect
  end

  def test_replayed_answers_match_a_host_computation
    x = Cumo::DFloat.new(1000).seq
    total = 0.0
    host = (0...1000).map(&:to_f)
    20.times do |i|
      x = x * 0.5 + i
      host = host.map { |e| e * 0.5 + i }
      total = Float(x.sum)
    end
    assert_in_delta host.sum, total, 1e-9 * host.sum.abs
  end
end
