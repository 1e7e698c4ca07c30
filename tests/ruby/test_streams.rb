# frozen_string_literal: true

# Streams, events and pinned host memory (lib/cumo/stream.rb,
# ruby/device_queue_methods.cpp) as the spec's "Streams And Events" and
# "Pinned Host Memory" show them, on both executors. Cumo queues everything
# on one device stream, so the orderings hold; these check them, and the
# copies through pinned memory.
require "minitest/autorun"
require "cumo/narray"

class TestStreams < Minitest::Test
  def setup
    @a = Cumo::SFloat.new(3, 4).seq
    @b = Cumo::SFloat.new(4, 2).seq
  end

  def test_with_runs_the_block_on_the_stream_and_waits
    s = Cumo::CUDA::Stream.new(non_blocking: true)
    assert Cumo::CUDA::Stream.current.null?
    inside = nil
    c = s.with do
      inside = Cumo::CUDA::Stream.current
      @a.gemm(@b)
    end
    assert_same s, inside
    assert Cumo::CUDA::Stream.current.null?, "the previous stream is back"
    assert_equal [[28, 34], [76, 98], [124, 162]], c.to_a
    assert s.done?
    # Even when the block raises.
    assert_raises(ZeroDivisionError) { s.with { 1 / 0 } }
    assert Cumo::CUDA::Stream.current.null?
    assert_same s, s.use
    assert_same s, Cumo::CUDA::Stream.current
    Cumo::CUDA::Stream.null.use
  end

  def test_the_current_stream_is_the_threads
    s = Cumo::CUDA::Stream.new
    s.use
    other = Thread.new { Cumo::CUDA::Stream.current }.value
    assert other.null?
    assert_same s, Fiber.new { Cumo::CUDA::Stream.current }.resume, "fibers share it"
  ensure
    Cumo::CUDA::Stream.null.use
  end

  def test_events_time_the_work_between_them
    start = Cumo::CUDA::Event.new.record
    c = @a.gemm(@b)
    stop = Cumo::CUDA::Event.new.record
    assert stop.recorded?
    stop.synchronize
    assert stop.done?
    ms = Cumo::CUDA.get_elapsed_time(start, stop)
    assert_kind_of Float, ms
    assert_operator ms, :>=, 0
    assert_equal 28.0, c[0, 0].to_f
    s = Cumo::CUDA::Stream.new
    e = s.record
    assert_kind_of Cumo::CUDA::Event, e
    assert_same s, s.wait_event(e)
  end

  def test_pinned_copies
    pinned = Cumo::CUDA::PinnedMemory.new(@a.byte_size)
    assert_equal 48, pinned.size
    s = Cumo::CUDA::Stream.new(non_blocking: true)
    s.with { (@a * 2).get(pinned) }
    assert_equal (@a * 2).to_a, Cumo::SFloat.from_binary(pinned.read, @a.shape).to_a
    src = Cumo::CUDA::PinnedMemory.from_binary(Cumo::SFloat.new(3, 4).fill(7).to_binary)
    c = Cumo::SFloat.zeros(3, 4)
    kept = c.dup
    assert_same c, c.set(src, stream: s)
    assert_equal 84.0, (c + 0).sum.to_f, "what is recorded after the copy sees it"
    assert_equal 0.0, kept.sum.to_f
    # A view's copy lands in its base.
    base = Cumo::SFloat.zeros(2, 6)
    base[1, true].set(Cumo::CUDA::PinnedMemory.from_binary(Cumo::SFloat[1, 2, 3, 4, 5, 6].to_binary))
    assert_equal [[0] * 6, [1, 2, 3, 4, 5, 6]], base.to_a
    # Strings are the synchronous forms.
    assert_equal @a.to_binary, @a.get
    d = Cumo::SFloat.zeros(3, 4)
    d.set(@a.to_binary)
    assert_equal @a.to_a, d.to_a
    pinned.write("\0" * 48)
    assert_equal "\0" * 48, pinned.read
    pinned.free
    assert pinned.freed?
  end

  # The spec's "Select a GPU device ID": before the engine starts, the
  # device it opens; after (every test here has made arrays), only the one
  # in use.
  def test_choosing_the_device_after_the_engine_started
    Cumo::SFloat[1].to_a
    current = Cumo::CUDA::Runtime.cudaGetDevice
    if Cumo.gpu?
      assert_operator current, :>=, 0
      assert_nil Cumo::CUDA::Runtime.cudaSetDevice(current)
      e = assert_raises(ArgumentError) { Cumo::CUDA::Runtime.cudaSetDevice(current + 1) }
      assert_match(/\[cudaSetDevice\] the engine already runs on device #{current}/, e.message)
    else
      assert_equal(-1, current)
      e = assert_raises(ArgumentError) { Cumo::CUDA::Runtime.cudaSetDevice(0) }
      assert_match(/\[cudaSetDevice\] the engine already runs on the CPU/, e.message)
    end
    assert_raises(TypeError) { Cumo::CUDA::Runtime.cudaSetDevice("0") }
    assert_raises(ArgumentError) { Cumo::CUDA::Runtime.cudaSetDevice(-1) }
  end

  def test_bad_arguments
    pinned = Cumo::CUDA::PinnedMemory.new(8)
    {
      -> { Cumo::CUDA::Stream.new(non_blocking: 1) } => [TypeError, /\[Stream.new\]/],
      -> { Cumo::CUDA::Stream.new.with } => [ArgumentError, /\[with\] needs a block/],
      -> { Cumo::CUDA::Stream.new.wait_event(1) } => [TypeError, /\[wait_event\]/],
      -> { Cumo::CUDA::Stream.new.wait_event(Cumo::CUDA::Event.new) } => [ArgumentError, /never recorded/],
      -> { Cumo::CUDA::Event.new.record(:s) } => [TypeError, /\[record\]/],
      -> { Cumo::CUDA.get_elapsed_time(Cumo::CUDA::Event.new, Cumo::CUDA::Event.new) } =>
        [ArgumentError, /\[get_elapsed_time\] both events/],
      -> { Cumo::CUDA.get_elapsed_time(1, 2) } => [TypeError, /\[get_elapsed_time\]/],
      -> { Cumo::CUDA::PinnedMemory.new(-1) } => [ArgumentError, /\[PinnedMemory.new\]/],
      -> { Cumo::CUDA::PinnedMemory.new("8") } => [TypeError, /\[PinnedMemory.new\]/],
      -> { pinned.write("short") } => [ArgumentError, /\[write\] 5 bytes/],
      -> { pinned.write(8) } => [TypeError, /\[write\]/],
      -> { @a.get(pinned) } => [ArgumentError, /\[get\] the array holds 48 bytes/],
      -> { @a.get(:x) } => [TypeError, /\[get\]/],
      -> { @a.get(stream: 1) } => [TypeError, /\[get\] stream/],
      -> { @a.set(1) } => [TypeError, /\[set\]/],
      -> { @a.dup.freeze.set(Cumo::CUDA::PinnedMemory.new(48)) } => [FrozenError, /\[set\]/],
      -> { @a.transpose.get(Cumo::CUDA::PinnedMemory.new(48)) } => [ArgumentError, /\[get\] the array must be contiguous/],
      -> { Cumo::Bit[1, 0].get(Cumo::CUDA::PinnedMemory.new(1)) } => [TypeError, /\[get\] Cumo::Bit/],
      -> { Cumo::CUDA::Event.new.dup } => [TypeError, /cannot be copied/],
      -> { Cumo::CUDA::Event.allocate.recorded? } => [TypeError, /uninitialized/],
      -> { Cumo::CUDA::PinnedMemory.new(4).dup } => [TypeError, /cannot be copied/],
    }.each do |call, (error, message)|
      e = assert_raises(error) { call.call }
      assert_match message, e.message
    end
    pinned.free
    assert_raises(ArgumentError) { pinned.read }
    assert_nil pinned.free, "freeing twice is harmless"
  end
end
