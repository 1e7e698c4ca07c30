# frozen_string_literal: true

# Integer NArray indices in [] and []= stay on the device: no read-back, no
# host sync, the same plan whatever values they hold (a decode loop that
# gathers a different token id each step replays one plan). They select
# what the same values given as a Ruby Array select (Numo's orthogonal
# indexing), except that a 0-dim one removes its axis as an integer does.
# A position out of range raises IndexError at the next read, naming the op
# and the line that recorded it; a position written twice takes the last
# value.
require "minitest/autorun"
require "cumo/narray"
require_relative "child_ruby"

class TestDeviceIndex < Minitest::Test
  include ChildRuby

  INT_CLASSES = [Cumo::Int8, Cumo::Int16, Cumo::Int32, Cumo::Int64,
                 Cumo::UInt8, Cumo::UInt16, Cumo::UInt32, Cumo::UInt64].freeze

  # Host syncs while the block runs.
  def syncs
    Cumo.sync
    before = Cumo.stats[:host_syncs]
    result = yield
    [Cumo.stats[:host_syncs] - before, result]
  end

  def test_reads_select_what_the_same_host_values_select
    a = Cumo::DFloat.new(3, 4).seq
    INT_CLASSES.each do |k|
      idx = k[[5, 0], [11, 6]]
      assert_equal a[[[5, 0], [11, 6]]].to_a, a[idx].to_a, k.name
      assert_equal a[[2, 0, 2], true].to_a, a[k[2, 0, 2], true].to_a, k.name
      assert_equal a[1..2, [3, 1]].to_a, a[1..2, k[3, 1]].to_a, k.name
    end
    # Negative positions count from the end.
    assert_equal [11, 0, 3], a[Cumo::Int32[-1, -12, 3]].to_a
    assert_equal [[3, 1], [11, 9]], a[Cumo::Int64[0, -1], Cumo::Int16[-1, 1]].to_a
    assert_equal [[[11, 9]]], a[:new, Cumo::Int32[2], Cumo::Int32[3, 1]].to_a
    assert_equal [7, 4, 4, 5], a[1, Cumo::Int32[[3, 0], [0, 1]]].to_a # along one axis, row-major
    assert_equal [[3, 7], [1, 5]], a.transpose[Cumo::Int32[3, 1], 0..1].to_a
    assert_equal [], a[Cumo::Int32.new(0)].to_a
    assert_instance_of Cumo::DFloat, a[Cumo::Int32[1]]
  end

  def test_a_0_dim_index_removes_its_axis_as_an_integer_does
    a = Cumo::DFloat.new(3, 4).seq
    tok = Cumo::Int32[5, -2].max # a 0-dim Int32 on the device: 5
    tok = tok - 6                # -1: the last row
    assert_equal [], tok.shape
    row = a[tok, true]
    assert_equal [4], row.shape
    assert_equal a[-1, true].to_a, row.to_a
    assert_equal [3], a[true, tok].shape
    assert_equal [], a[tok, tok].shape
    assert_equal 11, Float(a[tok, tok])
    assert_equal [], a[tok].shape # a single index: flat
    assert_equal 11, Float(a[tok])
    assert_equal [[8], [9]], a[Cumo::Int64.new.fill(2), 0..1, :new].to_a
  end

  def test_recording_reads_nothing_back
    wte = Cumo::DFloat.new(50, 8).seq
    logits = Cumo::NMath.sin(Cumo::SFloat.new(50).seq)
    k_cache = Cumo::DFloat.zeros(16, 8)
    pos = Cumo::Int32[0].sum # a 0-dim Int64 on the device
    n, (x, y, z) = syncs do
      tok = logits.max_index
      x = wte[tok, true]
      k_cache[pos, true] = x * 2
      y = wte[Cumo::Int32[[1, 2], [3, 4]]]
      z = wte[Cumo::UInt8[3, 1], 2..4]
      [x, y, z]
    end
    assert_equal 0, n, "an integer NArray index must not sync"
    tok = logits.to_a.each_with_index.max[1]
    assert_equal wte[tok, true].to_a, x.to_a
    assert_equal (wte[tok, true] * 2).to_a, k_cache[0, true].to_a
    assert_equal [[1, 2], [3, 4]], y.to_a
    assert_equal [[26, 27, 28], [10, 11, 12]], z.to_a
  end

  def test_writes_at_device_positions
    b = Cumo::DFloat.new(3, 4).seq
    b[Cumo::Int32[2, 0], 1] = [100, 200]
    assert_equal [[0, 200, 2, 3], [4, 5, 6, 7], [8, 100, 10, 11]], b.to_a
    b[true, Cumo::UInt16[0]] = Cumo::DFloat[[7], [8], [9]]
    assert_equal [7, 8, 9], b[true, 0].to_a
    b[Cumo::Int64[1, -1]] = 0.5 # flat positions 1 and 11
    assert_equal [7, 0.5, 2, 3], b[0, true].to_a
    assert_equal 0.5, Float(b[2, 3])
    pos = Cumo::Int32[1].sum
    b[pos, true] = Cumo::DFloat[1, 2, 3, 4]
    assert_equal [1, 2, 3, 4], b[1, true].to_a
    # Through a view, into the array it views.
    a = Cumo::DFloat.new(3, 4).seq
    v = a[1, true]
    v[Cumo::Int8[0, 3]] = 55
    assert_equal [55, 5, 6, 55], a[1, true].to_a
    assert_equal [0, 1, 2, 3], a[0, true].to_a
  end

  def test_the_last_write_of_a_position_wins
    INT_CLASSES.each do |k|
      c = Cumo::Int32[1, 2, 3, 4]
      c[k[0, 0, 3, 0]] = Cumo::Int32[7, 8, 9, 6]
      assert_equal [6, 2, 3, 9], c.to_a, k.name
    end
    d = Cumo::DFloat.zeros(3, 2)
    d[Cumo::Int32[2, -1, 0], true] = Cumo::DFloat[[1, 1], [2, 2], [3, 3]]
    assert_equal [[3, 3], [0, 0], [2, 2]], d.to_a
    e = Cumo::DFloat.zeros(2, 3)
    e[Cumo::Int32[1, 1], Cumo::Int32[0, 0, 2]] = Cumo::DFloat[[1, 2, 3], [4, 5, 6]]
    assert_equal [[0, 0, 0], [5, 0, 6]], e.to_a
  end

  def test_a_position_out_of_range_raises_at_the_next_read
    a = Cumo::DFloat.new(3, 4).seq
    g = a[Cumo::Int32[1, 3], true]; line = __LINE__
    e = assert_raises(IndexError) { g.to_a }
    assert_match(/\A\[\[\]\] index out of range/, e.message)
    assert_includes e.message, "#{File.basename(__FILE__)}:#{line}:in `[]'"
    # Raised once; what was in range was read, the rest reads 0.
    assert_equal [[4, 5, 6, 7], [0, 0, 0, 0]], g.to_a
    assert_equal [0], a[Cumo::Int32[0]].to_a

    assert_raises(IndexError) { a[Cumo::Int64[-13]].to_a }
    assert_raises(IndexError) { Float(a[Cumo::UInt8[255]].sum) }

    b = Cumo::DFloat.new(3, 4).seq
    b[Cumo::Int32[9, 0], true] = 1; line = __LINE__
    e = assert_raises(IndexError) { Cumo.sync }
    assert_match(/\A\[\[\]=\] index out of range/, e.message)
    assert_includes e.message, "#{File.basename(__FILE__)}:#{line}:in `[]='"
    assert_equal [1, 1, 1, 1], b[0, true].to_a
    assert_equal [8, 9, 10, 11], b[2, true].to_a
  end

  # A gather from a settled array (a decode step's embedding tables) is
  # read by the kernel that uses it, its position table computed there too:
  # `wte[tok, true] + wpe[pos, true]` is one kernel, not four. It reads
  # what the index kernel reads, from strided arrays too, and checks its
  # positions as that does, naming the op and the line that failed.
  def test_gathers_from_settled_arrays_are_read_by_the_kernels_that_use_them
    wte = Cumo::DFloat.new(6, 4).seq
    wpe = Cumo::DFloat.new(5, 4).seq(100, 1)
    tok = Cumo::Int32[3].sum
    pos = Cumo::Int32[1].sum
    Cumo.sync
    x = wte[tok, true] + wpe[pos, true]
    plan = Cumo.explain(x)
    assert_equal 1, plan.kernels.size, plan.to_s
    assert_equal 2, plan.kernels[0][:ops].count(:gather), plan.to_s
    assert_equal wte.to_a[3].zip(wpe.to_a[1]).map { |a, b| a + b }, x.to_a

    t = wte.transpose # settled, strided
    flat = t.to_a.flatten
    assert_equal [[flat[5], flat[0]], [flat[11], flat[6]]], (t[Cumo::Int32[[5, 0], [11, 6]]] * 1).to_a
    assert_equal t.to_a.map { |r| [r[5], r[0]] }, (t[true, Cumo::Int64[5, -6]] + 0).to_a
    assert_equal t.to_a.map { |r| [r[5], r[0]] }, (t[true, [5, 0]] + 0).to_a

    g = wte[Cumo::Int32[1, 7], true] * 2; line = __LINE__
    e = assert_raises(IndexError) { g.to_a }
    assert_match(/\A\[\[\]\] index out of range/, e.message)
    assert_includes e.message, "#{File.basename(__FILE__)}:#{line}:in `[]'"
    assert_equal [[8, 10, 12, 14], [0, 0, 0, 0]], g.to_a
    assert_raises(IndexError) { Float((wte[Cumo::Int64[-25]] + 1).sum) }
  end

  # An inlined gather feeds every kind of kernel that inlines values: a
  # row program (softmax written out), a small product's epilogue, a
  # reduction. Each answers what the same gathers from a pending copy of
  # the table (read by index kernels) answer.
  def test_inlined_gathers_feed_rows_products_and_reductions
    table = Cumo::SFloat.new(7, 64).seq(-1, 0.03)
    w = Cumo::SFloat.new(64, 16).seq(0.5, -0.01)
    rows = Cumo::Int32[5, 0, 6]
    Cumo.sync
    run = lambda do |t|
      g = t[rows, true]
      e = Cumo::NMath.exp(g - g.max(axis: 1, keepdims: true))
      [e / e.sum(axis: 1, keepdims: true), g[0, true].dot(w) + t[rows[1], 0..15], g.sum(axis: 0)]
    end
    inlined = run.call(table)
    indexed = run.call(table + 0)
    inlined.zip(indexed).each { |a, b| assert_equal b.to_a, a.to_a }
  end

  # Writes one after another that nothing reads in between write into one
  # buffer: no copy of the array a write (a loop of n writes copied it n
  # times). A write something else read keeps its own values.
  def test_chained_writes_write_into_one_buffer
    a = Cumo::SFloat.zeros(6)
    Cumo.sync
    a[Cumo::Int32[1]] = 1.0
    a[Cumo::Int32[4]] = 2.0
    a[Cumo::Int32[1]] = 3.0
    kinds = Cumo.explain(a).kernels.map { |k| k[:kind] }
    assert_equal 3, kinds.count(:index), kinds.inspect
    assert_equal 1, kinds.count(:elementwise), kinds.inspect
    assert_equal [0, 3, 0, 0, 2, 0], a.to_a

    b = Cumo::SFloat.zeros(4)
    Cumo.sync
    b[Cumo::Int32[0]] = 1.0
    c = b * 2 # reads the first write's result
    b[Cumo::Int32[1]] = 5.0
    assert_equal [2, 0, 0, 0], c.to_a
    assert_equal [1, 5, 0, 0], b.to_a
  end

  # A loop of scalar writes stores each write's value (a fill) before the
  # write reads it. Those fills share a stage and a domain, but one kernel
  # computes at most 32 of them: a flush of 2000 writes had made one kernel
  # of 2000 stores, which NVRTC took about a minute to compile.
  def test_many_writes_spread_their_values_over_bounded_kernels
    a = Cumo::SFloat.zeros(4)
    ok = Cumo::Int32[1]
    100.times { |i| a[ok] = i }
    kernels = Cumo.explain(a).kernels
    assert_operator kernels.map { |k| k[:outputs].size }.max, :<=, 32
    assert(kernels.any? { |k| k[:why].to_s.include?("as many as one kernel holds") })
    assert_equal [0, 99, 0, 0], a.to_a
  end

  # Past the 4096 checks a read period names, a failure still names its op
  # (not its line: those checks share one tag).
  def test_a_failure_past_the_named_checks_names_its_op
    a = Cumo::SFloat.zeros(4)
    ok = Cumo::Int32[1]
    4100.times { a[ok] = 1.0 }
    a[Cumo::Int32[9]] = 2.0
    e = assert_raises(IndexError) { a.to_a }
    assert_match(/\A\[\[\]=\] index out of range/, e.message)
    assert_equal [0, 1, 0, 0], a.to_a
  end

  # A write's value that is a view of a pending value, when a flush falls
  # between the view and the write (the write records its position table
  # node by node): the flush settles the view, a materialized node without
  # its map, and the next flush must not ask it for the map (it crashed the
  # decode loop). A budget of 8 nodes puts flushes everywhere.
  def test_a_view_settled_inside_a_write_is_read_where_it_lies
    script = <<~RUBY
      require "cumo/narray"
      b = Cumo::SFloat.zeros(2, 4)
      10.times do |i|
        t = Cumo::SFloat.new(3, 4).seq * (i + 1)
        b[Cumo::Int32[i % 2], true] = t[1, true]
      end
      p b.to_a
    RUBY
    out, err, status = run_ruby({ "CUMO_PENDING_NODES" => "8" }, "-e", script)
    assert status.success?, err
    assert_equal "[[36.0, 45.0, 54.0, 63.0], [40.0, 50.0, 60.0, 70.0]]", out.strip
  end

  def test_checks_at_the_call_are_unchanged
    a = Cumo::DFloat.new(3, 4).seq
    assert_raises(TypeError) { a[Cumo::SFloat[1]] }
    assert_raises(IndexError) { a[Cumo::Int32[0], Cumo::Int32[1], Cumo::Int32[2]] }
    assert_raises(IndexError) { a[Cumo::Int32[0], 7] } # the integer is known: checked now
    assert_raises(Cumo::NArray::ShapeError) { a[Cumo::Int32[0, 1]] = Cumo::DFloat[1, 2, 3] }
    assert_raises(IndexError) { Cumo::DFloat.new.fill(1)[Cumo::Int32[0]] }
    assert_equal Cumo::DFloat.new(3, 4).seq.to_a, a.to_a
  end

  def test_host_indices_beside_a_device_index_are_parameters
    a = Cumo::DFloat.new(6, 5, 4).seq
    tok = Cumo::Int32[2].sum
    2.times { Float(a[tok, 0, 0..1].sum) }
    before = Cumo.stats
    sums = (0..4).map { |i| Float(a[tok, i, i % 3..(i % 3) + 1].sum) }
    after = Cumo.stats
    assert_equal before[:plan_cache_misses], after[:plan_cache_misses]
    assert_equal((0..4).map { |i| a[2, i, i % 3..(i % 3) + 1].to_a.sum }, sums)
  end

  def test_a_decode_loop_replays_one_plan_whatever_the_token
    wte = Cumo::DFloat.new(64, 16).seq(0, 0.01)
    k_cache = Cumo::DFloat.zeros(8, 16)
    tok = Cumo::Int32[3].sum
    pos = Cumo::Int32[0].sum
    step = lambda do
      x = wte[tok, true]
      k_cache[pos, true] = x
      logits = Cumo::NMath.sin((wte * x).sum(axis: 1) * 3.7)
      tok = logits.max_index
      pos = (pos + 1) % 8
      logits
    end
    5.times { step.call; Cumo.sync }
    before = Cumo.stats
    tokens = []
    6.times do
      step.call
      tokens << Integer(tok)
    end
    after = Cumo.stats
    assert_equal before[:plan_cache_misses], after[:plan_cache_misses], "a new plan for a new token"
    assert_operator after[:plan_cache_hits] - before[:plan_cache_hits], :>=, 6
    assert_operator tokens.uniq.size, :>, 1, "the loop should gather different rows: #{tokens}"
    assert_equal wte[tokens[-2], true].to_a, k_cache[(5 + 6 - 1) % 8, true].to_a
  end
end
