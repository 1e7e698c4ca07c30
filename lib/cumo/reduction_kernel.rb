# frozen_string_literal: true

require_relative "kernel_params"

# Cumo::CUDA::ReductionKernel: a reduction along axes written as three
# pieces of CUDA C, as CuPy's ReductionKernel does (the spec's "Writing A
# Reduction Kernel"): a map of every element, a reduce of two mapped values
# a and b, a post map that writes the reduced value a to the outputs, and
# the identity every reduction starts from. On the GPU each output's
# elements are folded by a block (a long axis reduced to few outputs split
# across blocks, their partials folded in a second pass); on the CPU
# executor (graph/host_kernels.h) each output's elements in order.
module Cumo
  module CUDA
    class ReductionKernel
      attr_reader :name

      THREADS = 256
      # Partials per output at most, and elements per block at least, when
      # a long axis is split.
      MAX_CHUNKS = 64
      MIN_CHUNK = THREADS * 16

      def initialize(in_params, out_params, map_expr, reduce_expr, post_map_expr, identity,
                     name = "reduce_kernel", reduce_type: nil, preamble: "", options: [])
        op = "ReductionKernel.new"
        [[map_expr, "map_expr"], [reduce_expr, "reduce_expr"], [post_map_expr, "post_map_expr"],
         [identity, "identity"], [preamble, "preamble"]].each do |v, what|
          raise TypeError, "[#{op}] #{what} must be a String, not #{v.class}" unless v.is_a?(String)
        end
        @inputs, @outputs = KernelParams.signature(op, name, in_params, out_params)
        if (raw = (@inputs + @outputs).find(&:raw))
          raise ArgumentError, "[#{op}] a reduction indexes its arguments itself: #{raw.name} cannot be raw"
        end
        raise ArgumentError, "[#{op}] out_params names no output" if @outputs.empty?
        unless reduce_type.nil? || reduce_type.is_a?(String)
          raise TypeError, "[#{op}] reduce_type must be a String, not #{reduce_type.class}"
        end
        if reduce_type && !KernelParams::C_NAMES.key?(reduce_type) &&
           !KernelParams::CLASSES.key?(reduce_type) && !reduce_type.match?(/\A[A-Za-z]\z/)
          raise ArgumentError, "[#{op}] reduce_type #{reduce_type.inspect} is no type (a C type, a type " \
                               "name or a letter)"
        end

        @map = map_expr
        @reduce = reduce_expr
        @post = post_map_expr
        @identity = identity
        @name = name
        @reduce_type = reduce_type
        @preamble = preamble
        @options = Array(options)
        @functions = {}
      end

      # Reduces the inputs (broadcast against each other) along `axis` (an
      # Integer, an Array of them, or nil for every axis), as sum does;
      # outputs may follow the inputs. Answers the output, or an Array.
      def call(*args, axis: nil, keepdims: false)
        op = @name
        unless [@inputs.size, @inputs.size + @outputs.size].include?(args.size)
          raise ArgumentError, "[#{op}] takes #{@inputs.size} inputs (and optionally #{@outputs.size} outputs), " \
                               "not #{args.size} arguments"
        end
        raise TypeError, "[#{op}] keepdims must be true or false" unless [true, false].include?(keepdims)

        params = @inputs + @outputs
        given = args + [nil] * (params.size - args.size)
        KernelParams.check_arguments(op, params, given, @inputs.size)
        classes, reduced = resolve_classes(op, params, given)
        shape = input_shape(op, given)
        axes = axes_of(op, axis, shape.size)
        kept = shape.each_index.reject { |d| axes.include?(d) }
        out_shape = keepdims ? shape.each_index.map { |d| axes.include?(d) ? 1 : shape[d] } : kept.map { |d| shape[d] }
        outputs = @outputs.each_index.map do |k|
          o = given[@inputs.size + k]
          next classes[@inputs.size + k].new(*out_shape) unless o
          unless o.instance_of?(classes[@inputs.size + k])
            raise TypeError, "[#{op}] the output #{@outputs[k].name} is #{o.class.name.split('::').last}, " \
                             "and its parameter #{KernelParams::C_TYPES[classes[@inputs.size + k]]}"
          end
          unless o.shape == out_shape && o.contiguous?
            raise Cumo::NArray::ShapeError, "[#{op}] the output #{@outputs[k].name} must be contiguous " \
                                            "and #{out_shape.inspect}, not #{o.shape.inspect}"
          end

          o
        end
        outs = kept.map { |d| shape[d] }.inject(1, :*)
        run(op, given, classes, reduced, shape, axes, kept, outputs) if outs.positive?
        outputs.size == 1 ? outputs.first : outputs
      end

      private

      # The parameters' classes, and the class values are reduced in:
      # reduce_type as a C type, a type name or a letter, else the first
      # output's. A letter only an output names takes reduce_type's class.
      def resolve_classes(op, params, given)
        reduce_class = nil
        reduce_class = KernelParams::C_NAMES[@reduce_type] || KernelParams::CLASSES[@reduce_type] if @reduce_type
        args = given.dup
        if reduce_class
          @outputs.each_with_index do |p, k|
            i = @inputs.size + k
            next unless p.letter? && args[i].nil?
            next if params.each_with_index.any? { |q, j| j != i && q.type == p.type && args[j] }

            args[i] = reduce_class.new(0) # stands for the class
          end
        end
        classes = KernelParams.resolve(op, params, args, (@inputs.size...params.size).to_a)
        if reduce_class.nil? && @reduce_type
          idx = params.index { |p| p.type == @reduce_type }
          raise ArgumentError, "[#{op}] reduce_type #{@reduce_type} is no parameter's letter" unless idx

          reduce_class = classes[idx]
        end
        [classes, reduce_class || classes[@inputs.size]]
      end

      def input_shape(op, given)
        KernelParams.broadcast(op, given[0, @inputs.size].select { |a| a.is_a?(NArray) }.map(&:shape))
      end

      def axes_of(op, axis, rank)
        return (0...rank).to_a if axis.nil?

        list = axis.is_a?(Array) ? axis : [axis]
        list.map do |a|
          raise TypeError, "[#{op}] axis must be an Integer or an Array of them, not #{a.class}" unless a.is_a?(Integer)
          raise ArgumentError, "[#{op}] axis #{a} is out of range for #{rank} dimensions" unless a.between?(-rank, rank - 1)

          a.negative? ? a + rank : a
        end.tap do |axes|
          raise ArgumentError, "[#{op}] axis repeats: #{axis.inspect}" if axes.uniq.size != axes.size
        end.sort
      end

      def run(op, given, classes, reduced, shape, axes, kept, outputs)
        kept_shape = kept.map { |d| shape[d] }
        red_shape = axes.map { |d| shape[d] }
        outs = kept_shape.inject(1, :*)
        len = red_shape.inject(1, :*)
        kinds = given[0, @inputs.size].map { |a| a.is_a?(NArray) ? :array : :scalar }
        key = [classes, reduced, kinds, kept.size, axes.size, Cumo.gpu?]
        pass1, fold = (@functions[key] ||= compile(classes, reduced, kinds, kept.size, axes.size))
        chunks = Cumo.gpu? ? chunks_for(outs, len) : 1
        args = [[outs, len, chunks, (len + chunks - 1) / chunks].pack("q4"),
                steps(kept_shape), steps(red_shape)]
        access = [0, 0, 0]
        @inputs.each_with_index do |p, i|
          a = given[i]
          unless a.is_a?(NArray)
            args << KernelParams.pack_scalar(op, p.name, a, classes[i])
            access << 0
            next
          end
          a = a.cast_to(classes[i]) unless a.instance_of?(classes[i])
          a = a.dup if KernelParams.reordered?(a) || outputs.any? { |o| a.send(:__same_memory?, o) }
          full = KernelParams.broadcast_strides(a, shape)
          args << a << steps(kept.map { |d| full[d] }) << steps(axes.map { |d| full[d] })
          access << 1 << 0 << 0
        end
        outputs.each { |o| args << o && access << 2 }
        # Partials only where the axis is split (a null pointer otherwise).
        partial = chunks > 1 ? reduced.new(outs * chunks) : nil
        args << (partial || [0].pack("q"))
        access << (partial ? 2 : 0)
        blocks = [[outs * chunks, 1].max, 65_535 * 32].min
        pass1.send(:__launch, args, [blocks, 1, 1], [THREADS, 1, 1], 0, access)
        return if chunks == 1

        fold_args = [[outs].pack("q"), [chunks].pack("q"), partial] + outputs
        fold_blocks = [(outs + THREADS - 1) / THREADS, 65_535 * 32].min
        fold.send(:__launch, fold_args, [fold_blocks, 1, 1], [THREADS, 1, 1], 0,
                  [0, 0, 1] + [2] * outputs.size)
      end

      # A long reduction to few outputs splits across blocks: enough blocks
      # to fill the device twice over, each at least MIN_CHUNK elements.
      def chunks_for(outs, len)
        want = [(2 * 132 + outs - 1) / outs, (len + MIN_CHUNK - 1) / MIN_CHUNK, MAX_CHUNKS].min
        [want, 1].max
      end

      def steps(values) = (values + [0] * (8 - values.size)).pack("q8")

      def compile(classes, reduced, kinds, kept_rank, red_rank)
        if [kept_rank, red_rank].max > 8
          raise ArgumentError, "[#{@name}] a reduction of more than 8 axes, or to more than 8"
        end

        source = generate(classes, reduced, kinds, kept_rank, red_rank)
        unless Cumo.gpu?
          mod = Module.__compile_host(source, @name)
          return [mod.get_function(@name), nil]
        end

        _, options = KernelParams.half_support((classes + [reduced]).uniq)
        mod = Compiler.new.compile_with_cache(source, options: options + @options)
        [mod.get_function(@name), mod.get_function("#{@name}_fold")]
      rescue NVRTCError => e
        raise NVRTCError, "[#{@name}] #{e.message}"
      end

      def generate(classes, reduced, kinds, kept_rank, red_rank)
        params = @inputs + @outputs
        includes, = KernelParams.half_support((classes + [reduced]).uniq)
        rt = KernelParams::C_TYPES[reduced]
        letters = params.each_index.select { |i| params[i].letter? }.map { |i| [params[i].type, classes[i]] }.uniq
        ctype = ->(i) { KernelParams::C_TYPES[classes[i]] }
        src = +"#ifndef CUMO_HOST\n#{includes}#endif\n"
        letters.each { |l, k| src << "typedef #{KernelParams::C_TYPES[k]} #{l};\n" }
        src << @preamble << "\n"
        src << "struct CumoSteps { long long s[8]; };\n"
        map_args = @inputs.each_index.map { |i| "const #{ctype.(i)} #{@inputs[i].name}" }
        post_args = ["#{rt} a"] + @outputs.each_index.map { |k| "#{ctype.(@inputs.size + k)} &#{@outputs[k].name}" }
        src << "__device__ __forceinline__ #{rt} cumo_map(#{map_args.join(', ')}) { return (#{rt})(#{@map}); }\n"
        src << "__device__ __forceinline__ #{rt} cumo_reduce(#{rt} a, #{rt} b) { return (#{rt})(#{@reduce}); }\n"
        src << "__device__ __forceinline__ void cumo_post(#{post_args.join(', ')}) {\n#{@post};\n}\n"
        # The kernel's parameters: sizes, then the shapes, the inputs (an
        # array with its kept and reduced strides, or a number), the
        # outputs, the partials.
        decl = ["CumoSizes cumo_z", "CumoSteps cumo_kept", "CumoSteps cumo_red"]
        src << "struct CumoSizes { long long outs, len, chunks, chunk; };\n"
        host = ["*(CumoSizes *)a[0]", "*(CumoSteps *)a[1]", "*(CumoSteps *)a[2]"]
        slot = 3
        loads = []
        @inputs.each_with_index do |p, i|
          if kinds[i] == :scalar
            decl << "#{ctype.(i)} cumo_v#{i}"
            host << "*(#{ctype.(i)} *)a[#{slot}]"
            slot += 1
            loads << "cumo_v#{i}"
          else
            decl << "const #{ctype.(i)} *cumo_p#{i}" << "CumoSteps cumo_k#{i}" << "CumoSteps cumo_r#{i}"
            host << "*(const #{ctype.(i)} **)a[#{slot}]" << "*(CumoSteps *)a[#{slot + 1}]" << "*(CumoSteps *)a[#{slot + 2}]"
            slot += 3
            loads << "cumo_p#{i}[cumo_b#{i} + cumo_o#{i}]"
          end
        end
        @outputs.each_with_index do |_, k|
          i = @inputs.size + k
          decl << "#{ctype.(i)} *cumo_out#{k}"
          host << "*(#{ctype.(i)} **)a[#{slot}]"
          slot += 1
        end
        decl << "#{rt} *cumo_partial"
        host << "*(#{rt} **)a[#{slot}]"
        arrays = @inputs.each_index.select { |i| kinds[i] == :array }
        # Offsets of element `index` of a `rank`-axis shape: the arrays'
        # `into` (declared here) from their `steps` strides.
        decompose = lambda do |index, rank, shape, steps, into, rest, indent|
          s = +"#{indent}long long #{rest} = #{index};\n"
          arrays.each { |i| s << "#{indent}long long #{into}#{i} = 0;\n" }
          s << "#{indent}for (int d = #{rank - 1}; d >= 0; --d) {\n"
          s << "#{indent}  long long c = #{rest} % #{shape}.s[d];\n#{indent}  #{rest} /= #{shape}.s[d];\n"
          arrays.each { |i| s << "#{indent}  #{into}#{i} += c * #{steps}#{i}.s[d];\n" }
          s << "#{indent}}\n"
        end
        base = ->(index) { decompose.call(index, kept_rank, "cumo_kept", "cumo_k", "cumo_b", "cumo_rest", "    ") }
        offsets = ->(index, indent) { decompose.call(index, red_rank, "cumo_red", "cumo_r", "cumo_o", "cumo_left", indent) }
        outs_of = ->(o) { @outputs.each_index.map { |k| "cumo_out#{k}[#{o}]" }.join(", ") }
        signature = decl.join(", ")
        # GPU: a block folds a chunk of one output's elements; its partial,
        # or with one chunk the output itself.
        src << "#ifndef CUMO_HOST\n"
        src << "extern \"C\" __global__ void #{@name}(#{signature}) {\n"
        src << "  __shared__ __align__(16) unsigned char cumo_raw[#{THREADS} * sizeof(#{rt})];\n"
        src << "  #{rt} *cumo_buf = reinterpret_cast<#{rt} *>(cumo_raw);\n"
        src << "  for (long long task = blockIdx.x; task < cumo_z.outs * cumo_z.chunks; task += gridDim.x) {\n"
        src << "    long long o = task / cumo_z.chunks, piece = task % cumo_z.chunks;\n"
        src << base.call("o")
        src << "    #{rt} a = (#{rt})(#{@identity});\n"
        src << "    long long begin = piece * cumo_z.chunk;\n"
        src << "    long long end = begin + cumo_z.chunk < cumo_z.len ? begin + cumo_z.chunk : cumo_z.len;\n"
        src << "    for (long long r = begin + threadIdx.x; r < end; r += blockDim.x) {\n"
        src << offsets.call("r", "      ")
        src << "      a = cumo_reduce(a, cumo_map(#{loads.join(', ')}));\n    }\n"
        src << "    cumo_buf[threadIdx.x] = a;\n    __syncthreads();\n"
        src << "    for (int s = blockDim.x / 2; s > 0; s >>= 1) {\n"
        src << "      if (threadIdx.x < s) cumo_buf[threadIdx.x] = cumo_reduce(cumo_buf[threadIdx.x], cumo_buf[threadIdx.x + s]);\n"
        src << "      __syncthreads();\n    }\n"
        src << "    if (threadIdx.x == 0) {\n"
        src << "      if (cumo_z.chunks == 1) cumo_post(cumo_buf[0], #{outs_of.('o')});\n"
        src << "      else cumo_partial[task] = cumo_buf[0];\n    }\n"
        src << "    __syncthreads();\n  }\n}\n"
        # The second pass: each output's partials folded in order.
        fold_outs = @outputs.each_index.map { |k| "#{ctype.(@inputs.size + k)} *cumo_out#{k}" }
        src << "extern \"C\" __global__ void #{@name}_fold(long long cumo_outs, long long cumo_chunks, " \
               "const #{rt} *cumo_partial, #{fold_outs.join(', ')}) {\n"
        src << "  for (long long o = (long long)blockIdx.x * blockDim.x + threadIdx.x; o < cumo_outs;\n"
        src << "       o += (long long)gridDim.x * blockDim.x) {\n"
        src << "    #{rt} a = cumo_partial[o * cumo_chunks];\n"
        src << "    for (long long c = 1; c < cumo_chunks; ++c) a = cumo_reduce(a, cumo_partial[o * cumo_chunks + c]);\n"
        src << "    cumo_post(a, #{outs_of.('o')});\n  }\n}\n"
        src << "#else\n"
        # The CPU executor: each output's elements folded in order.
        src << "static void #{@name}(#{signature}) {\n"
        src << "  (void)cumo_partial;\n"
        src << "  for (long long o = 0; o < cumo_z.outs; ++o) {\n"
        src << base.call("o")
        src << "    #{rt} a = (#{rt})(#{@identity});\n"
        src << "    for (long long r = 0; r < cumo_z.len; ++r) {\n"
        src << offsets.call("r", "      ")
        src << "      a = cumo_reduce(a, cumo_map(#{loads.join(', ')}));\n    }\n"
        src << "    cumo_post(a, #{outs_of.('o')});\n  }\n}\n"
        src << "extern \"C\" void #{@name}_host(void **a) {\n  #{@name}(#{host.join(', ')});\n}\n"
        src << "#endif\n"
        src
      end
    end
  end
end
