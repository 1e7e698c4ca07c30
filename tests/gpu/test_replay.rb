# Graph replay on the CUDA executor: a loop of identical iterations builds
# its graph once and replays it, with Ruby Float scalars and fresh output
# addresses patched in, not compiled or instantiated again. Run through
# tests/ruby/gpu_runner.rb, which skips without a GPU.
require "minitest/autorun"
require "cumo/narray"
require "open3"
require "rbconfig"

class TestReplay < Minitest::Test
  def setup
    skip "needs the CUDA executor" unless Cumo.gpu?
  end

  # Runs Ruby `script` in a process of its own with `env` (settings read
  # once, when the executor starts) and answers its output's words.
  def run_script(script, env)
    out, err, status = Open3.capture3(env, RbConfig.ruby, "-e", script)
    assert status.success?, err
    out.split
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

  # A decode-style loop: a one-row product, an elementwise epilogue and a
  # read. The product is the generated matrix-vector kernel (a small
  # product), whose pointers the replay patches: nothing is captured. (Through
  # cuBLAS it was a child graph captured again at every step, the operand's
  # address moving: 50 captures in 50 steps on the H200.)
  def test_a_one_row_product_loop_replays_without_captures
    w = Cumo::SFloat.new(64, 64).seq(0, 1e-3)
    x = Cumo::SFloat.ones(1, 64)
    step = ->(h, i) { Cumo::NMath.tanh(h.matmul(w) * (0.5 + i * 1e-3)) }
    3.times { |i| x = step.call(x, i); Float(x.sum) }
    Cumo.reset_stats
    host = x.to_a.flatten
    wh = w.to_a
    50.times do |i|
      x = step.call(x, i + 3)
      Float(x.sum)
      host = (0...64).map do |j|
        Math.tanh((0...64).sum { |k| host[k] * wh[k][j] } * (0.5 + (i + 3) * 1e-3))
      end
    end
    s = Cumo.stats
    assert_equal 0, s[:graphs_built], s.inspect
    assert_equal 0, s[:nvrtc_compiles], s.inspect
    assert_operator s[:graph_replays], :>=, 50, s.inspect
    assert_equal 0, s[:library_captures], s.inspect
    x.to_a.flatten.zip(host).each { |g, h| assert_in_delta h, g, 1e-4 }
  end

  # A decode-style loop: the next token is argmax on the device, it
  # indexes the embedding table and a row of the cache is written at a
  # device position. Different tokens each step, one graph, no sync but
  # the read of the token.
  def test_a_gather_at_a_device_token_replays_one_graph
    wte = Cumo::SFloat.new(512, 64).seq(0, 1e-3)
    k_cache = Cumo::SFloat.zeros(16, 64)
    tok = Cumo::Int32[3].sum
    pos = Cumo::Int32[0].sum
    step = lambda do
      x = wte[tok, true]
      k_cache[pos, true] = x
      tok = Cumo::NMath.sin((wte * x).sum(axis: 1) * 3.7).max_index
      pos = (pos + 1) % 16
    end
    5.times { step.call; Integer(tok) }
    Cumo.reset_stats
    tokens = Array.new(20) { step.call; Integer(tok) }
    s = Cumo.stats
    assert_equal 20, s[:host_syncs], s.inspect
    assert_equal 0, s[:graphs_built], s.inspect
    assert_equal 0, s[:graph_instantiations], s.inspect
    assert_equal 0, s[:nvrtc_compiles], s.inspect
    assert_operator s[:graph_replays], :>=, 20, s.inspect
    assert_equal s[:graph_replays], s[:graph_cache_hits], s.inspect
    assert_operator tokens.uniq.size, :>, 1, tokens.inspect
    assert_equal wte[tokens[-2], true].to_a, k_cache[(5 + 20 - 1) % 16, true].to_a
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

  # Early starts (programmatic dependent launch, compute capability 9.0
  # on): a kernel of a graph launches while the one before it finishes and
  # waits inside for its writes. A chain where every kernel reads what the
  # one before it reduced or wrote gives the same answers with and without
  # (CUMO_EARLY_START=0, in a process of its own), bit for bit.
  def test_early_started_kernels_read_what_the_kernels_before_them_wrote
    script = <<~RUBY
      require "cumo/narray"
      x = Cumo::SFloat.new(512, 512).seq(0, 1e-5)
      v = Cumo::SFloat.new(512, 512).seq(1, 2e-6)
      sums = []
      40.times do
        s = (x * v).sum          # a grid-wide reduction
        x = x + v * (s / 1e6)     # reads it in the next kernel
        v = v - x.mean(axis: 1).reshape(512, 1) * 1e-3 # an axis reduction
        sums << s
      end
      out = sums.map { |s| Float(s) } + [Float(x.sum), Float(v.sum)]
      puts [out.pack("e*").unpack1("H*"), Cumo.stats[:early_starts]].join(" ")
    RUBY
    early, early_count = run_script(script, {})
    plain, plain_count = run_script(script, { "CUMO_EARLY_START" => "0" })
    assert_equal plain, early, "early starts change no answer"
    assert_equal 0, plain_count.to_i
    if Cumo.device_model[:compute_capability][0] >= 9
      assert_operator early_count.to_i, :>, 0, "a graph of dependent kernels starts some early"
    end
  end

  # With CUMO_GRAPH_BRANCHES=1 a graph's kernels wait only for those they
  # share a buffer with (fusion/kernel_order.h): here gathers at a device
  # index and a mask share nothing, a cache is read and then written at a
  # device position, and reductions are folded by their readers. The
  # answers are those of the same graphs chained kernel after kernel (the
  # default), bit for bit, and each token's plan is one replay.
  def test_kernels_that_share_no_buffer_run_beside_each_other
    script = <<~RUBY
      require "cumo/narray"
      table = Cumo::SFloat.new(50, 64).seq(0, 1e-3)
      rows = Cumo::SFloat.new(20, 64).seq(1, 2e-3)
      cache = Cumo::SFloat.zeros(20, 64)
      positions = Cumo::Int32.new(20).seq
      tok = Cumo::Int32[3][0]
      pos = Cumo::Int32.zeros(1)
      out = []
      12.times do
        x = table[tok, true] + rows[pos, true]            # two gathers, side by side
        mask = Cumo::SFloat.cast(positions.gt(pos)) * -1e9 # shares nothing with them
        seen = (cache * x.reshape(1, 64)).sum(axis: 1)     # reads the cache
        cache[pos, true] = x * 0.5                         # then writes it in place
        score = (seen + mask).max
        tok = ((x.sum * 7 + score * 0).abs.floor % 50).cast_to(Cumo::Int32)
        pos = pos + 1
        Cumo.flush
        out << score << x.sum
      end
      vals = out.map { |v| Float(v) } + [Float(cache.sum)]
      puts [vals.pack("e*").unpack1("H*"), Cumo.stats[:graph_replays]].join(" ")
    RUBY
    branched, replays = run_script(script, { "CUMO_GRAPH_BRANCHES" => "1" })
    chained, = run_script(script, { "CUMO_GRAPH_BRANCHES" => "0" })
    assert_equal chained, branched, "branches change no answer"
    assert_operator replays.to_i, :>=, 10
  end

  # CUMO_PROFILE=1's device time: each replay is bracketed by the graph's
  # own first and last event nodes, so a replay on an idle stream (after a
  # read) counts the kernels' time, not the host's time to submit them.
  # A 64 MB copy read back 20 times: device time a replay below the wall
  # time and near what 128 MB of traffic takes at any HBM bandwidth.
  def test_profiled_device_time_counts_the_replay_alone
    script = <<~RUBY
      require "cumo/narray"
      x = Cumo::SFloat.new(4096, 4096).seq(0, 1e-6)
      3.times { y = x.dup; Float(y[0]) }
      Cumo.reset_stats
      t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC)
      20.times { y = x.dup; Float(y[-1]) }
      wall = Process.clock_gettime(Process::CLOCK_MONOTONIC) - t0
      s = Cumo.stats
      puts [s[:device_ns], s[:graph_replays], (wall * 1e9).round].join(" ")
    RUBY
    out, err, status = Open3.capture3({ "CUMO_PROFILE" => "1" }, RbConfig.ruby, "-e", script)
    assert status.success?, err
    device_ns, replays, wall_ns = out.split.map(&:to_i)
    assert_operator replays, :>=, 20, out
    per_replay_us = device_ns / 1e3 / replays
    assert_operator device_ns, :<, wall_ns, out
    # 128 MB at 1 to 10 TB/s: 13 to 134 us (a read of one element adds a
    # small replay of its own).
    assert_operator per_replay_us, :>, 5.0, out
    assert_operator per_replay_us, :<, 200.0, out
  end
end
