# frozen_string_literal: true

require "weakref"

# Kernels written in CUDA C (graph/user_kernels.h; the spec's "Launching
# Your Own Kernel"): Cumo::CUDA::Compiler compiles a source with NVRTC into
# a Module (a cubin cached on disk; within a process, one Module per
# source, options and name expressions while anything holds it), and a
# Module's Function launches on the arrays, after everything recorded
# before it and before everything recorded after it.
module Cumo
  module CUDA
    class Compiler
      @modules = {}
      @lock = Mutex.new

      class << self
        # Forgets the modules compiled so far: the next compile_with_cache
        # reads the disk cache or compiles again.
        def clear_modules
          @lock.synchronize { @modules.clear }
          nil
        end

        # The module cached for `key` while something holds it, else the
        # block's, cached.
        def cached_module(key)
          @lock.synchronize do
            mod = live(@modules[key])
            return mod if mod&.loaded?

            @modules.delete_if { |_, r| live(r).nil? }
          end
          mod = yield
          @lock.synchronize { @modules[key] = WeakRef.new(mod) }
          mod
        end

        # Drops `mod` from the cache (Module#unload).
        def forget(mod)
          @lock.synchronize { @modules.delete_if { |_, r| live(r).equal?(mod) } }
        end

        private

        # What `ref` still refers to, or nil (the GC may take it between a
        # liveness check and the read: one read, rescued).
        def live(ref)
          ref&.__getobj__
        rescue WeakRef::RefError
          nil
        end
      end

      # `source` compiled for this machine's GPU (or, without one, for the
      # device model the engine plans for); `options` are NVRTC's, and each
      # of `name_expressions` (a template instantiation such as
      # "kernel<float>") can then be asked of get_function by that text.
      def compile_with_cache(source, options: [], name_expressions: [])
        raise TypeError, "[compile_with_cache] the source must be a String, not #{source.class}" unless source.is_a?(String)

        options = Array(options)
        name_expressions = Array(name_expressions)
        key = [source, options, name_expressions].map { |part| Marshal.dump(part) }.join("\0")
        self.class.cached_module(key) { Module.__compile(source, options, name_expressions) }
      end
    end

    class Module
      # Lets the module go: the next compile_with_cache of its source makes
      # another, and its Functions keep the program loaded while they live.
      def unload
        Compiler.forget(self)
        __unload
      end
    end

    class Function
      # Launches the kernel on `args`: an NArray hands over its device
      # address (contiguous, not frozen; the kernel may write it), an
      # Integer a long long, a Float a double, a String its packed bytes
      # ([n].pack("l") is an int). grid and block take one to three sizes;
      # shared_mem is the dynamic shared memory in bytes. Cumo queues
      # everything on one stream (lib/cumo/stream.rb), so any stream: orders
      # it as the spec says.
      def launch(args, grid:, block:, shared_mem: 0, stream: nil)
        raise TypeError, "[launch] args must be an Array, not #{args.class}" unless args.is_a?(Array)
        unless stream.nil? || stream.is_a?(Stream)
          raise TypeError, "[launch] stream: expects a Cumo::CUDA::Stream, not #{stream.class}"
        end
        unless shared_mem.is_a?(Integer) && shared_mem >= 0
          raise ArgumentError, "[launch] shared_mem must be a non-negative Integer, not #{shared_mem.inspect}"
        end

        __launch(args, dims("grid", grid), dims("block", block), shared_mem, nil)
        nil
      end

      def inspect = "#<Cumo::CUDA::Function #{name}>"

      private

      def dims(what, value)
        sizes = value.is_a?(Array) ? value : [value]
        unless (1..3).cover?(sizes.size) && sizes.all? { |s| s.is_a?(Integer) && s.between?(1, 2**31 - 1) }
          raise ArgumentError, "[launch] #{what} takes one to three positive Integers, not #{value.inspect}"
        end

        sizes + [1] * (3 - sizes.size)
      end
    end
  end
end
