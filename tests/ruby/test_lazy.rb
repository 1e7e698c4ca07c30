# frozen_string_literal: true

# The lazy engine as a user sees it: Cumo.explain and its Cumo::Plan (which
# runs nothing), fusion of elementwise chains, of a reduction's prologue and
# of the stencil's slice updates into one kernel each, 0-dim results that
# stay on the device, Cumo.stats and Cumo.reset_stats, Cumo.sync, the bound
# on a loop that never reads, and a memory pool that stays flat.
require "minitest/autorun"
require "tmpdir"
require "cumo/narray"
require_relative "child_ruby"

class TestLazy < Minitest::Test
  include ChildRuby

  STATS_KEYS = %i[kernels_launched graphs_built graph_instantiations graph_updates
                  graph_replays graph_cache_hits graph_cache_misses nvrtc_compiles
                  disk_cache_hits host_syncs bytes_allocated].freeze
  PLAN_KINDS = %i[elementwise reduction rowwise library copy].freeze

  # A * v for the 5-point Laplacian, written as examples/cg.rb writes it.
  def laplacian(v)
    ap = v * 4.0
    ap[1..-1, true] -= v[0..-2, true]
    ap[0..-2, true] -= v[1..-1, true]
    ap[true, 1..-1] -= v[true, 0..-2]
    ap[true, 0..-2] -= v[true, 1..-1]
    ap
  end

  # Arrays whose values are on the device already, so a plan shows only
  # what the test records after this.
  def materialized(*arrays)
    Cumo.sync
    arrays
  end

  # ---- explain -----------------------------------------------------------

  def test_explain_answers_a_plan
    a, b = materialized(Cumo::SFloat.new(4, 5).rand, Cumo::SFloat.new(5).rand)
    plan = Cumo.explain(a * b + 1.0)
    assert_instance_of Cumo::Plan, plan
    assert_instance_of Array, plan.kernels
    refute_empty plan.kernels
    plan.kernels.each do |k|
      assert_instance_of Hash, k
      assert_includes PLAN_KINDS, k[:kind]
      assert_instance_of Array, k[:ops]
      assert_instance_of Array, k[:inputs]
      assert_instance_of Array, k[:outputs]
      assert k.key?(:why)
    end
    assert_instance_of String, plan.to_s
    refute_empty plan.to_s
    assert plan.to_dot.start_with?("digraph"), plan.to_dot[0, 40]
  end

  def test_explain_runs_and_counts_nothing
    a, = materialized(Cumo::DFloat.new(100).rand)
    c = (a * 2.0 + 1.0).sum
    Cumo.reset_stats
    before = Cumo.stats
    first = Cumo.explain(c)
    assert_equal before, Cumo.stats
    # still pending: asked again, it gives the same plan
    assert_equal first.kernels, Cumo.explain(c).kernels
    want = a.to_a.sum { |v| v * 2.0 + 1.0 }
    assert_in_delta want, Float(c), 1e-9, "after explain, the read still runs"
  end

  def test_explain_includes_pending_inputs
    r = Cumo::DFloat.new(4).rand # pending itself
    ops = Cumo.explain(r * 2).kernels.flat_map { |k| k[:ops] }
    assert_includes ops, :rand
  end

  def test_explain_of_several_arrays
    a, = materialized(Cumo::DFloat.new(8).rand)
    plan = Cumo.explain(a + 1, a * 2)
    assert_equal 1, plan.kernels.size
  end

  def test_nothing_pending_after_sync
    a, = materialized(Cumo::DFloat.new(4).seq)
    c = a + 1
    Cumo.sync
    assert_empty Cumo.explain(c).kernels
    assert_equal [1.0, 2.0, 3.0, 4.0], c.to_a
  end

  # ---- fusion ----------------------------------------------------------------

  def test_an_elementwise_chain_with_broadcasts_is_one_kernel
    a, b, c = materialized(Cumo::SFloat.new(4, 5).rand, Cumo::SFloat.new(5).rand,
                           Cumo::SFloat.new(4, 1).rand)
    y = ((a * 2.0 + b) * (a - c) / (b + 1.0)) - 3.0
    kernels = Cumo.explain(y).kernels
    assert_equal 1, kernels.size, Cumo.explain(y).to_s
    assert_equal :elementwise, kernels[0][:kind]
  end

  def test_a_dot_product_written_out_is_one_kernel
    p_dir, ap = materialized(Cumo::SFloat.new(16, 16).rand, Cumo::SFloat.new(16, 16).rand)
    plan = Cumo.explain((p_dir * ap).sum)
    assert_equal 1, plan.kernels.size, plan.to_s
    assert_equal :reduction, plan.kernels[0][:kind]
    assert_includes plan.kernels[0][:ops], :mul
  end

  def test_the_stencil_written_with_slice_updates_is_one_kernel
    v, = materialized(Cumo::DFloat.new(8, 8).rand)
    ap = laplacian(v)
    plan = Cumo.explain(ap)
    assert_equal 1, plan.kernels.size, plan.to_s
    assert_equal :elementwise, plan.kernels[0][:kind]
    # and it computes the stencil
    vv = v.to_a
    want = Array.new(8) do |i|
      Array.new(8) do |j|
        nb = [[i - 1, j], [i + 1, j], [i, j - 1], [i, j + 1]]
             .select { |y, x| y.between?(0, 7) && x.between?(0, 7) }.sum { |y, x| vv[y][x] }
        4.0 * vv[i][j] - nb
      end
    end
    assert_nested_in_delta want, ap.to_a, 1e-12
  end

  # ---- 0-dim results stay on the device -------------------------------------------

  def test_a_0_dim_result_feeds_elementwise_ops_without_a_host_sync
    a, = materialized(Cumo::DFloat.new(100).rand)
    Cumo.reset_stats
    s = a.sum
    b = a * s + s / 2
    Cumo.explain(b)
    assert_equal 0, Cumo.stats[:host_syncs], "recording and explaining must not sync"
    got = b.to_a
    assert_operator Cumo.stats[:host_syncs], :>=, 1, "a read is a host sync"
    sum = a.to_a.sum
    assert_in_delta a.aref_cpu(3) * sum + sum / 2, got[3], 1e-9
  end

  def test_a_cg_style_loop_never_syncs_until_it_reads
    p_dir, r = materialized(Cumo::SFloat.new(16, 16).rand, Cumo::SFloat.new(16, 16).rand)
    x = Cumo::SFloat.zeros(16, 16)
    rs_old = (r * r).sum
    Cumo.reset_stats
    10.times do
      ap = laplacian(p_dir)
      alpha = rs_old / (p_dir * ap).sum
      x += p_dir * alpha
      r -= ap * alpha
      rs_new = (r * r).sum
      p_dir = r + p_dir * (rs_new / rs_old)
      rs_old = rs_new
    end
    assert_equal 0, Cumo.stats[:host_syncs]
    assert Float(rs_old).finite?
    assert_operator Cumo.stats[:host_syncs], :>=, 1
  end

  # ---- stats and sync ------------------------------------------------------------

  def test_stats_keys_and_reset
    a, = materialized(Cumo::DFloat.new(10).seq)
    (a + 1).to_a
    stats = Cumo.stats
    assert_instance_of Hash, stats
    STATS_KEYS.each do |k|
      assert stats.key?(k), "Cumo.stats lacks #{k.inspect}"
      assert_kind_of Integer, stats[k]
      assert_operator stats[k], :>=, 0
    end
    Cumo.reset_stats
    assert(Cumo.stats.values.all?(&:zero?), Cumo.stats.inspect)
  end

  def test_a_read_launches_kernels
    a, = materialized(Cumo::DFloat.new(10).seq)
    Cumo.reset_stats
    (a * 3).to_a
    assert_operator Cumo.stats[:kernels_launched], :>=, 1
  end

  def test_sync_answers_nil_and_runs_everything
    a = Cumo::DFloat.new(10).seq * 2
    assert_nil Cumo.sync
    assert_empty Cumo.explain(a).kernels
    assert_equal 18.0, a.aref_cpu(9)
  end

  # ---- CUMO_DUMP_GRAPH ---------------------------------------------------------------

  # Cumo.flush runs what is pending without a host sync; a loop that
  # flushes once an iteration runs one plan an iteration, the same one.
  def test_flush_runs_everything_without_a_sync
    a = Cumo::SFloat.new(8, 8).seq
    Cumo.sync
    Cumo.reset_stats
    x = a
    5.times do
      x = (x * 0.5 + 1.0).sum(axis: 1, keepdims: true) + a
      assert_nil Cumo.flush
    end
    s = Cumo.stats
    assert_equal 0, s[:host_syncs]
    assert_equal 5, s[:plans_run]
    assert_operator s[:plan_cache_hits], :>=, 3
    assert_nil Cumo.flush # nothing pending: nothing runs
    assert_equal 5, Cumo.stats[:plans_run]
    assert_equal 0, Cumo.explain(x).kernels.size
  end

  def test_dump_graph_writes_the_dag_the_plan_and_the_sources
    Dir.mktmpdir("cumo-dump") do |dir|
      script = <<~RUBY
        require "cumo/narray"
        x = Cumo::SFloat.new(4, 8).seq
        x.to_a
        e = Cumo::NMath.exp(x - x.max(axis: -1, keepdims: true))
        probs = e / e.sum(axis: -1, keepdims: true)
        print probs.to_a.flatten.sum.round(3)
      RUBY
      out, err, status = run_ruby({ "CUMO_DUMP_GRAPH" => dir }, "-e", script)
      assert status.success?, err
      assert_equal "4.0", out
      # The second plan is the softmax (the first materialized x).
      stem = File.join(dir, "plan-0001")
      dag = File.read("#{stem}-dag.dot")
      %w[max sub exp sum div].each { |op| assert_match(/label="#{op}\\nSFloat\[4,[18]\]"/, dag, op) }
      refute_match(/cluster_/, dag, "before fusion there are no kernels")
      fused = File.read("#{stem}.dot")
      assert_match(/subgraph cluster_0/, fused)
      assert_match(/style=bold/, fused, "the stored result is marked")
      text = File.read("#{stem}.txt")
      kernels = Integer(text[/Cumo::Plan: (\d+) kernel/, 1])
      kernels.times { |k| assert_match(/extern "C" __global__/, File.read("#{stem}-k#{k}.cu")) }
      assert File.exist?("#{stem}-cuda-graph.dot"), "the CUDA graph is printed" if Cumo.gpu?
    end
  end

  # ---- a loop that never reads stays bounded -----------------------------------------

  def test_a_loop_that_never_reads_flushes_on_its_own
    x = Cumo::DFloat.zeros(10)
    y = Cumo::Int32.zeros(3)
    Cumo.sync
    Cumo.reset_stats
    2000.times do
      x = x + 1
      y = y + 2
    end
    assert_operator Cumo.stats[:budget_flushes], :>, 0
    assert_equal [2000.0] * 10, x.to_a
    assert_equal [4000] * 3, y.to_a
  end

  def test_memory_stays_flat_over_many_iterations
    v = Cumo::SFloat.new(64, 64).rand
    x = Cumo::SFloat.zeros(64, 64)
    used = []
    600.times do |i|
      x += laplacian(v) * 0.01
      v = v * 0.5 + 0.25
      next unless [199, 599].include?(i)

      Cumo.sync
      GC.start
      used << Cumo::CUDA::MemoryPool.used_bytes
    end
    slack = 8 * 64 * 64 * 4 # a few buffers of the loop's size
    assert_operator used[1], :<=, used[0] + slack, "used_bytes grew: #{used.inspect}"
    assert x.to_a.flatten.all?(&:finite?)
  end

  # Ruby's GC hears of the device memory buffers hold (a sixteenth of the
  # pool's used bytes, noteDeviceMemory), not of results fusion never
  # writes: twenty pending 16 MB results report nothing, the 64 MB array a
  # read materializes reports its 4 MB share. (A wrapper used to report its
  # array's share when made, so the segments of a read-free loop between
  # two GCs added up to major GCs by `oldmalloc` at 2048x2048.)
  def test_only_buffers_are_reported_to_the_gc
    script = <<~RUBY
      require "cumo/narray"
      a = Cumo::SFloat.new(2048, 2048).seq
      Cumo.sync
      GC.start
      before = GC.stat(:oldmalloc_increase_bytes)
      b = a
      20.times { b = b * 1.5 }
      pending = GC.stat(:oldmalloc_increase_bytes) - before
      big = Cumo::SFloat.new(4096, 4096).seq
      big[0].to_f
      read = GC.stat(:oldmalloc_increase_bytes) - before
      print pending, " ", read
    RUBY
    out, err, status = run_ruby({}, "-e", script)
    assert status.success?, err
    pending, read = out.split.map { |s| Integer(s) }
    assert_operator pending, :<, 1 << 20, "reported for 20 pending results of 16 MB"
    assert_operator read, :>=, (64 << 20) / 16, "reported once 64 MB were materialized"
  end

  # CUMO_GC_BEFORE_FLUSH=on: a minor GC just before each plan runs tells
  # which outputs Ruby still holds, so the temporaries of `x += v * s` get
  # no memory and no writes, and the plans stay the same flush after flush;
  # off stores every temporary whose wrapper the GC has not reached. (The
  # default, auto, collects only when the optional outputs reach 64 MiB,
  # or more where a GC is slow: graph/gc_cost.h.)
  def test_gc_before_flush_stores_only_live_values_with_stable_plans
    script = <<~RUBY
      require "cumo/narray"
      def laplacian(v)
        ap = v * 4.0
        ap[1..-1, true] -= v[0..-2, true]
        ap[0..-2, true] -= v[1..-1, true]
        ap
      end
      n = 64
      v = Cumo::SFloat.new(n, n).rand
      x = Cumo::SFloat.zeros(n, n)
      r = v.dup
      s = (r * r).mean * 1e-3
      run = lambda do |k|
        k.times do
          x += v * s
          r -= laplacian(v) * s
          s = (r * r).mean * 1e-3 # small steps: the values stay finite
        end
      end
      run.call(50)
      Cumo.reset_stats
      run.call(400)
      st = Cumo.stats
      print st[:budget_flushes], " ", st[:stored_bytes].to_f / st[:budget_flushes], " ",
            st[:plan_cache_misses], " ", Float(x.sum)
    RUBY
    results = %w[on off].to_h do |mode|
      out, err, status = run_ruby({ "CUMO_GC_BEFORE_FLUSH" => mode, "CUMO_PENDING_NODES" => "256" }, "-e", script)
      assert status.success?, err
      flushes, bytes, misses, total = out.split.map(&:to_f)
      assert_operator flushes, :>=, 10, out
      [mode, { bytes: bytes, misses: misses, total: total }]
    end
    array = 64 * 64 * 4
    # x, r and the temporaries of the expression being evaluated when the
    # budget ran out (still on Ruby's stack): a few arrays per flush...
    assert_operator results["on"][:bytes], :<=, 8 * array, results.inspect
    # ...where storing every temporary of the segment is over a hundred.
    assert_operator results["off"][:bytes], :>=, 50 * array, results.inspect
    # Which outputs get memory changes neither the plans (the misses are
    # the first flushes' while the stored set settles) nor the answer.
    assert_operator results["on"][:misses], :<=, results["off"][:misses], results.inspect
    assert_operator results["on"][:misses], :<=, 4, results.inspect
    assert results["on"][:total].finite? && results["on"][:total] > 0, results.inspect
    assert_equal results["off"][:total], results["on"][:total]
  end

  # A budget cut falls between ops, never inside one: argmax records a
  # dozen nodes (an Int64 index sequence, a hit mask, candidates), which a
  # cut in their middle would store. At a budget of one node, eight
  # argmaxes store exactly what they store with no cut at all. (Few: on a
  # GPU each cut is a plan of its own, and new plans compile.)
  def test_budget_cuts_fall_between_ops
    script = <<~RUBY
      require "cumo/narray"
      a = Cumo::SFloat.new(100_000).seq
      Cumo.sync
      Cumo.reset_stats
      found = 8.times.map { |i| (a * (i + 1)).argmax }
      print found.map { |x| Integer(x) }.uniq.inspect, " ",
            Cumo.stats[:stored_bytes], " ", Cumo.stats[:budget_flushes]
    RUBY
    runs = [nil, "1"].map do |budget|
      env = budget ? { "CUMO_PENDING_NODES" => budget } : {}
      out, err, status = run_ruby(env, "-e", script)
      assert status.success?, err
      out.split
    end
    assert_equal [["[99999]", "0"], ["[99999]", "7"]], runs.map { |r| r.values_at(0, 2) }
    assert_equal runs[0][1], runs[1][1], "stored bytes without and with budget cuts"
  end

  # The spec's "Reading The Memory Numbers", as it prints them: the pool's
  # counts answer for the work recorded so far (they run what is pending,
  # as a read does), and a dropped array's buffer counts until the GC has
  # collected its wrapper. flush: false answers the pool as it stands,
  # before the pending work has taken anything.
  def test_the_spec_memory_numbers
    script = <<~RUBY
      require "cumo/narray"
      pool = Cumo::CUDA::MemoryPool
      a = Cumo::SFloat.new(1024, 1024).seq
      t = a + 1
      t = nil
      print pool.used_bytes(flush: false), " ", pool.total_bytes(flush: false), " "
      print pool.used_bytes, " "
      GC.start
      print pool.used_bytes, " ", a[0, 1].to_f
    RUBY
    out, err, status = run_ruby({}, "-e", script)
    assert status.success?, err
    before_used, before_total, used, after_gc, value = out.split
    assert_operator before_used.to_i, :<, 1 << 22, out
    assert_operator before_total.to_i, :<, 1 << 22, out
    assert_equal %w[8388608 4194304 1.0], [used, after_gc, value]
  end

  def test_pool_counts_check_their_keyword
    pool = Cumo::CUDA::MemoryPool
    %i[used_bytes total_bytes].each do |m|
      e = assert_raises(TypeError) { pool.public_send(m, flush: 1) }
      assert_match(/\[#{m}\] flush: must be true or false, not Integer/, e.message)
      assert_raises(ArgumentError) { pool.public_send(m, flsh: true) }
      assert_raises(ArgumentError) { pool.public_send(m, true) }
      assert_kind_of Integer, pool.public_send(m, flush: false)
    end
  end

  # A loop whose results die at once (each dropped before the next op)
  # gets its memory back only through a GC. Before a flush that would grow
  # the pool, once CUMO_GC_GROWTH_BYTES were handed out since the last GC,
  # a minor GC returns the dead results, so the pool stays near what is
  # alive; without it (a budget too large to reach) it grows until Ruby's
  # own GC happens to run.
  def test_a_loop_of_dropped_results_keeps_the_pool_small
    script = <<~RUBY
      require "cumo/narray"
      x = Cumo::SFloat.new(512, 512).seq
      200.times do
        h = x * 2
        Cumo.flush
        h = nil
      end
      Cumo.sync
      print Cumo::CUDA::MemoryPool.total_bytes, " ", Cumo::CUDA::MemoryPool.used_bytes
    RUBY
    array = 512 * 512 * 4
    totals = %w[4194304 100000000000].to_h do |budget|
      out, err, status = run_ruby({ "CUMO_GC_GROWTH_BYTES" => budget }, "-e", script)
      assert status.success?, err
      [budget, out.split.map(&:to_i)]
    end
    # x, the result held, and the budget's four dead ones...
    assert_operator totals["4194304"][0], :<=, 8 * array, totals.inspect
    # ...where only Ruby's own GCs (run by its heap, not by device memory)
    # returned any: 66 arrays in one run.
    assert_operator totals["100000000000"][0], :>=, 20 * array, totals.inspect
  end

  # CUMO_CPU_SKIP_KERNELS=1, the measuring aid for host time: plans are
  # made, cached and given memory as ever (the second flush of a loop hits
  # the plan cache), no kernel computes, and a scalar reads as zero.
  def test_skipping_kernels_keeps_the_planning_and_reads_scalars_as_zero
    script = <<~RUBY
      require "cumo/narray"
      x = Cumo::SFloat.new(64, 64).seq
      3.times { x = x * 2 + 1; Float(x.sum) }
      st = Cumo.stats
      print Float((x * 3).sum), " ", st[:kernels_launched], " ", st[:plan_cache_hits]
    RUBY
    out, err, status = run_ruby({ "CUMO_CPU_SKIP_KERNELS" => "1", "CUMO_DEVICE" => "cpu" }, "-e", script)
    assert status.success?, err
    sum, launched, hits = out.split.map(&:to_f)
    assert_equal 0.0, sum
    assert_operator launched, :>=, 3, out
    assert_operator hits, :>=, 1, out
  end

  private

  def assert_nested_in_delta(want, got, delta)
    want.flatten.zip(got.flatten).each_with_index do |(w, g), i|
      assert_in_delta w, g, delta, "element #{i}"
    end
  end
end
