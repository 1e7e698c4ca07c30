# frozen_string_literal: true

require_relative "kernel_params"

# Cumo::CUDA::ElementwiseKernel: one piece of CUDA C applied to every
# element, as CuPy's ElementwiseKernel does (the spec's "Writing An
# Elementwise Kernel"). A call computes what was recorded before it, then
# runs a kernel generated for its classes, its numbers and its rank (cached):
# on the GPU through NVRTC, on the CPU executor through the host compiler
# (graph/host_kernels.h). Inputs are read through their own strides;
# outputs are written into the arrays given, or new ones.
module Cumo
  module CUDA
    class ElementwiseKernel
      attr_reader :name

      # in_params and out_params: "T x, raw T y"; operation: C statements
      # over them (i the element's index, _ind.size() the count); preamble:
      # code placed before the kernel, after the letters' typedefs.
      def initialize(in_params, out_params, operation, name = "kernel", preamble: "", options: [])
        op = "ElementwiseKernel.new"
        raise TypeError, "[#{op}] operation must be a String, not #{operation.class}" unless operation.is_a?(String)
        raise TypeError, "[#{op}] preamble must be a String, not #{preamble.class}" unless preamble.is_a?(String)
        @inputs, @outputs = KernelParams.signature(op, name, in_params, out_params)
        @operation = operation
        @name = name
        @preamble = preamble
        @options = Array(options)
        @functions = {}
      end

      # Applies the operation: the inputs, then optionally the outputs
      # (allocated otherwise). Answers the output, or an Array of them.
      def call(*args, size: nil)
        op = @name
        unless [@inputs.size, @inputs.size + @outputs.size].include?(args.size)
          raise ArgumentError, "[#{op}] takes #{@inputs.size} inputs (and optionally #{@outputs.size} outputs), " \
                               "not #{args.size} arguments"
        end
        params = @inputs + @outputs
        given = args + [nil] * (params.size - args.size)
        KernelParams.check_arguments(op, params, given, @inputs.size)
        classes = KernelParams.resolve(op, params, given, (@inputs.size...params.size).to_a)
        shape = broadcast_shape(op, params, given, size)
        count = shape.inject(1, :*)
        values = prepare(op, params, given, classes, shape)
        outputs = values[@inputs.size..]
        return answer(outputs) if count.zero?

        run(op, params, values, classes, shape, count)
        answer(outputs)
      end

      private

      def answer(outputs) = outputs.size == 1 ? outputs.first : (outputs.empty? ? nil : outputs)

      # The shape every non-raw array broadcasts to (size: where there is none).
      def broadcast_shape(op, params, given, size)
        # Every non-raw array, inputs and given outputs, broadcast together.
        shapes = params.each_index.select { |i| !params[i].raw && given[i].is_a?(NArray) }.map { |i| given[i].shape }
        if shapes.empty?
          unless size.is_a?(Integer) && size >= 0
            raise ArgumentError, "[#{op}] every argument is raw or a number: size: must say how many elements"
          end

          return [size]
        end
        raise ArgumentError, "[#{op}] size: is taken only when every argument is raw or a number" unless size.nil?

        shape = KernelParams.broadcast(op, shapes)
        params.each_with_index do |p, i|
          next unless i >= @inputs.size && !p.raw && given[i]
          unless given[i].shape == shape
            raise Cumo::NArray::ShapeError, "[#{op}] the output #{p.name} is #{given[i].shape.inspect}, " \
                                            "and the elements are #{shape.inspect}"
          end
        end
        shape
      end

      # The arrays and packed numbers the kernel gets: inputs cast to their
      # parameter's class, copied where the kernel could not read them as
      # they lie; outputs allocated.
      def prepare(op, params, given, classes, shape)
        outputs = given[@inputs.size..]
        params.each_with_index.map do |p, i|
          a = given[i]
          klass = classes[i]
          if i >= @inputs.size
            next klass.new(*(p.raw ? [shape.inject(1, :*)] : shape)) unless a
            unless a.instance_of?(klass)
              raise TypeError, "[#{op}] the output #{p.name} is #{a.class.name.split('::').last}, " \
                               "and its parameter #{KernelParams::C_TYPES[klass]}"
            end

            next a
          end
          next KernelParams.pack_scalar(op, p.name, a, klass) unless a.is_a?(NArray)

          a = a.cast_to(klass) unless a.instance_of?(klass)
          # A transposed view is read a row apart per thread, and one that
          # shares an output's memory other than element for element would
          # read what another thread already wrote: both copied first.
          overlaps = outputs.compact.any? { |o| a.send(:__same_memory?, o) && !(o.equal?(a) && !p.raw) }
          a = a.dup if overlaps || KernelParams.reordered?(a) || (p.raw && !a.contiguous?)
          a
        end
      end

      def run(op, params, values, classes, shape, count)
        rank = shape.size
        kinds = values.map { |v| v.is_a?(String) ? :scalar : :array }
        key = [classes, kinds, rank, Cumo.gpu?]
        function = (@functions[key] ||= compile(params, classes, kinds, rank))
        ext = (shape + [1] * ([rank, 1].max - shape.size)).pack("q*") # a 0-dim call: one element
        args = [[count].pack("q"), ext]
        access = [nil, nil]
        values.each_with_index do |v, i|
          if v.is_a?(String)
            args << v
            access << nil
            next
          end
          args << v
          output = i >= @inputs.size
          if params[i].raw
            access << (output ? 0 : 3)
          else
            access << (output ? 2 : 1)
            args << pack_strides(KernelParams.broadcast_strides(v, shape), rank)
            access << nil
          end
        end
        threads = 256
        blocks = [[(count + threads - 1) / threads, 1].max, 65_535 * 32].min
        function.send(:__launch, args, [blocks, 1, 1], [threads, 1, 1], 0, access.map { |a| a || 0 })
      end

      def pack_strides(values, rank) = (values + [0] * ([rank, 1].max - values.size)).pack("q*")

      def compile(params, classes, kinds, rank)
        source = generate(params, classes, kinds, rank)
        return Module.__compile_host(source, @name).get_function(@name) unless Cumo.gpu?

        _, options = KernelParams.half_support(classes.uniq)
        Compiler.new.compile_with_cache(source, options: options + @options).get_function(@name)
      rescue NVRTCError => e
        raise NVRTCError, "[#{@name}] #{e.message}"
      end

      # The kernel: a grid-stride loop over the elements, each argument
      # reached through its strides (or a raw pointer, or a number).
      def generate(params, classes, kinds, rank)
        includes, = KernelParams.half_support(classes.uniq)
        letters = params.each_index.select { |i| params[i].letter? }.map { |i| [params[i].type, classes[i]] }.uniq
        width = [rank, 1].max
        src = +"#ifndef CUMO_HOST\n#{includes}#endif\n"
        letters.each { |l, k| src << "typedef #{KernelParams::C_TYPES[k]} #{l};\n" }
        src << @preamble << "\n"
        src << "struct CumoSteps { long long s[#{width}]; };\n"
        src << "struct CumoIndex { long long n_; __device__ long long size() const { return n_; } };\n"
        decl = ["long long cumo_n", "CumoSteps cumo_ext"]
        host = ["*(long long *)a[0]", "*(CumoSteps *)a[1]"]
        slot = 2
        body = +""
        offsets = []
        params.each_with_index do |p, i|
          ctype = KernelParams::C_TYPES[classes[i]]
          output = i >= @inputs.size
          qual = output ? "" : "const "
          if kinds[i] == :scalar
            decl << "#{ctype} cumo_v#{i}"
            host << "*(#{ctype} *)a[#{slot}]"
            slot += 1
            body << "    const #{ctype} #{p.name} = cumo_v#{i};\n"
          elsif p.raw
            decl << "#{qual}#{ctype} *#{p.name}"
            host << "*(#{qual}#{ctype} **)a[#{slot}]"
            slot += 1
          else
            decl << "#{qual}#{ctype} *cumo_p#{i}" << "CumoSteps cumo_s#{i}"
            host << "*(#{qual}#{ctype} **)a[#{slot}]" << "*(CumoSteps *)a[#{slot + 1}]"
            slot += 2
            offsets << i
            body << (output ? "    #{ctype} &#{p.name} = cumo_p#{i}[cumo_o#{i}];\n"
                            : "    const #{ctype} #{p.name} = cumo_p#{i}[cumo_o#{i}];\n")
          end
        end
        src << "extern \"C\" __global__ void #{@name}(#{decl.join(', ')}) {\n"
        src << "  const CumoIndex _ind{cumo_n};\n"
        src << "  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < cumo_n;\n"
        src << "       i += (long long)gridDim.x * blockDim.x) {\n"
        unless offsets.empty?
          src << "    long long " << offsets.map { |k| "cumo_o#{k} = 0" }.join(", ") << ";\n"
          src << "    long long cumo_rest = i;\n"
          src << "    for (int d = #{width - 1}; d >= 0; --d) {\n"
          src << "      long long c = cumo_rest % cumo_ext.s[d];\n"
          src << "      cumo_rest /= cumo_ext.s[d];\n"
          offsets.each { |k| src << "      cumo_o#{k} += c * cumo_s#{k}.s[d];\n" }
          src << "    }\n"
        end
        src << body
        src << "    {\n#{@operation};\n    }\n  }\n}\n"
        src << "#ifdef CUMO_HOST\nextern \"C\" void #{@name}_host(void **a) {\n"
        src << "  #{@name}(#{host.join(', ')});\n}\n#endif\n"
        src
      end
    end
  end
end
