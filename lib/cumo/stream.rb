# frozen_string_literal: true

# Streams, events and pinned host memory as the spec's "Streams And Events"
# and "Pinned Host Memory" show them (ruby/device_queue_methods.cpp has
# Event and PinnedMemory). Cumo queues all of its work, its own kernels and
# users' alike, on one device stream, in the order it is recorded, so every
# ordering the spec promises between streams holds; what it does not give
# is work of two streams running side by side.
module Cumo
  module CUDA
    class Event
      # Records the event after everything recorded so far (a force point:
      # pending work is computed first). Answers self.
      def record(stream = nil)
        unless stream.nil? || stream.is_a?(Stream)
          raise TypeError, "[record] expected a Cumo::CUDA::Stream, not #{stream.class}"
        end

        __record
      end
    end

    class Stream
      def initialize(non_blocking: false)
        unless [true, false].include?(non_blocking)
          raise TypeError, "[Stream.new] non_blocking must be true or false, not #{non_blocking.inspect}"
        end

        @non_blocking = non_blocking
      end

      def non_blocking? = @non_blocking
      def null? = equal?(Stream.null)
      def inspect = null? ? "#<Cumo::CUDA::Stream null>" : "#<Cumo::CUDA::Stream#{' non_blocking' if @non_blocking}>"

      class << self
        # The null stream, current until another is used.
        def null = @null ||= new

        # The stream of this thread (its fibers share it).
        def current = Thread.current.thread_variable_get(:cumo_cuda_stream) || null
      end

      # Makes this the thread's current stream. Answers self.
      def use
        Thread.current.thread_variable_set(:cumo_cuda_stream, self)
        self
      end

      # Runs the block with this stream current, waits for everything it
      # queued, and puts the previous stream back: what the block produced
      # is complete when this returns (its value is the block's).
      def with
        raise ArgumentError, "[with] needs a block" unless block_given?

        previous = Stream.current
        use
        begin
          yield
        ensure
          begin
            synchronize
          ensure
            previous.use
          end
        end
      end

      # Waits for everything queued on this stream.
      def synchronize
        Cumo.sync
        self
      end

      # An event recorded after everything queued so far.
      def record(event = Event.new)
        raise TypeError, "[record] expected a Cumo::CUDA::Event, not #{event.class}" unless event.is_a?(Event)

        event.record(self)
      end

      # Orders what is queued after this call after `event`.
      def wait_event(event)
        raise TypeError, "[wait_event] expected a Cumo::CUDA::Event, not #{event.class}" unless event.is_a?(Event)
        raise ArgumentError, "[wait_event] the event was never recorded" unless event.recorded?

        self # one queue: everything after it already follows it
      end

      # Whether everything queued on it has run (without waiting).
      def done? = CUDA.__queue_done?
    end

    class PinnedMemory
      # A pinned buffer holding `bytes`.
      def self.from_binary(bytes)
        raise TypeError, "[from_binary] expected a String of bytes, not #{bytes.class}" unless bytes.is_a?(String)

        new(bytes.bytesize).write(bytes)
      end

      alias bytesize size
    end
  end

  class NArray
    # The elements' bytes: without `pinned` the synchronous to_binary; with
    # a Cumo::CUDA::PinnedMemory of the array's byte size, an asynchronous
    # copy into it, queued after everything recorded before (its read waits
    # for it). Answers the buffer.
    def get(pinned = nil, stream: nil)
      check_stream("get", stream)
      return to_binary if pinned.nil?

      __get_pinned(pinned)
    end

    # Writes the elements from `source`: a String synchronously
    # (store_binary), a Cumo::CUDA::PinnedMemory of the array's byte size by
    # an asynchronous copy queued after everything recorded before (the
    # buffer's write waits for it). Answers self.
    def set(source, stream: nil)
      check_stream("set", stream)
      case source
      when String
        raise FrozenError, "[set] can't modify a frozen #{self.class}" if frozen?

        store_binary(source)
        self
      when Cumo::CUDA::PinnedMemory then __set_pinned(source)
      else raise TypeError, "[set] expected a String or a Cumo::CUDA::PinnedMemory, not #{source.class}"
      end
    end

    private

    def check_stream(op, stream)
      return if stream.nil? || stream.is_a?(Cumo::CUDA::Stream)

      raise TypeError, "[#{op}] stream: expects a Cumo::CUDA::Stream, not #{stream.class}"
    end
  end
end
