# frozen_string_literal: true

# The parameter lists of Cumo::CUDA::ElementwiseKernel and ReductionKernel
# ("T x, raw T y"), and how a call's arguments decide their types: what both
# kernel classes share (lib/cumo/elementwise_kernel.rb,
# lib/cumo/reduction_kernel.rb).
module Cumo
  module CUDA
    module KernelParams
      # The type names a parameter may give, with their classes.
      CLASSES = {
        "float64" => DFloat, "float32" => SFloat, "float16" => HFloat, "bfloat16" => BFloat,
        "int64" => Int64, "int32" => Int32, "int16" => Int16, "int8" => Int8,
        "uint64" => UInt64, "uint32" => UInt32, "uint16" => UInt16, "uint8" => UInt8,
      }.freeze
      # The C type a kernel sees for each class.
      C_TYPES = {
        DFloat => "double", SFloat => "float", HFloat => "__half", BFloat => "__nv_bfloat16",
        Int64 => "long long", Int32 => "int", Int16 => "short", Int8 => "signed char",
        UInt64 => "unsigned long long", UInt32 => "unsigned int", UInt16 => "unsigned short",
        UInt8 => "unsigned char",
      }.freeze
      # What a C type spelling (reduce_type:) names.
      C_NAMES = C_TYPES.invert.merge("long" => Int64, "unsigned long" => UInt64).freeze
      # Names the generated code uses itself.
      RESERVED = %w[i _ind].freeze

      Param = Struct.new(:raw, :type, :name) do
        def letter? = !CLASSES.key?(type)
      end

      module_function

      # "T x, raw T y" as Params; `what` names the list in errors.
      def parse(op, text, what)
        raise TypeError, "[#{op}] #{what} must be a String, not #{text.class}" unless text.is_a?(String)

        text.split(",").map(&:strip).reject(&:empty?).map do |item|
          words = item.split(/\s+/)
          raw = words.first == "raw"
          words.shift if raw
          unless words.size == 2 && words.all? { |w| w.match?(/\A[A-Za-z_]\w*\z/) }
            raise ArgumentError, "[#{op}] #{what}: #{item.inspect} is not [raw] TYPE NAME"
          end

          type, name = words
          if !CLASSES.key?(type) && !type.match?(/\A[A-Za-z]\z/)
            raise ArgumentError, "[#{op}] #{what}: unknown type #{type} (#{CLASSES.keys.join(', ')}, " \
                                 "or a single letter)"
          end
          raise ArgumentError, "[#{op}] #{what}: #{name} is a name the kernel uses itself" if RESERVED.include?(name)

          Param.new(raw, type, name)
        end
      end

      # A kernel's name (a C identifier) checked, and its parameter lists
      # parsed: [inputs, outputs].
      def signature(op, name, in_params, out_params)
        unless name.is_a?(String) && name.match?(/\A[A-Za-z_]\w*\z/)
          raise ArgumentError, "[#{op}] the name must be a C identifier, not #{name.inspect}"
        end

        inputs = parse(op, in_params, "in_params")
        outputs = parse(op, out_params, "out_params")
        check_names(op, inputs + outputs)
        [inputs, outputs]
      end

      # Checks the names are distinct and usable.
      def check_names(op, params)
        names = params.map(&:name)
        dup = names.find { |n| names.count(n) > 1 }
        raise ArgumentError, "[#{op}] the parameter #{dup} is named twice" if dup
      end

      # Checks what a call hands over: `given` the arguments by parameter
      # (nil for an output to allocate), the first `inputs` of them inputs.
      def check_arguments(op, params, given, inputs)
        params.each_with_index do |p, i|
          a = given[i]
          output = i >= inputs
          next if a.nil? && output
          if a.is_a?(NArray)
            unless C_TYPES.key?(a.class)
              raise TypeError, "[#{op}] #{p.name}: a #{a.class} cannot be handed to a kernel"
            end
            raise FrozenError, "[#{op}] #{p.name} is frozen" if output && a.frozen?
            next
          end
          raise TypeError, "[#{op}] the output #{p.name} must be a Cumo::NArray, not #{a.class}" if output
          raise TypeError, "[#{op}] the raw input #{p.name} must be a Cumo::NArray, not #{a.class}" if p.raw
          unless a.is_a?(Numeric) && a.real?
            raise TypeError, "[#{op}] #{p.name} must be a Cumo::NArray or a number, not #{a.class}"
          end
        end
      end

      # The shape `shapes` broadcast to, numpy's way; ShapeError naming `op`.
      def broadcast(op, shapes)
        rank = shapes.map(&:size).max || 0
        padded = shapes.map { |s| [1] * (rank - s.size) + s }
        (0...rank).map do |d|
          sizes = padded.map { |s| s[d] }.uniq - [1]
          if sizes.size > 1
            raise Cumo::NArray::ShapeError, "[#{op}] shapes #{shapes.map(&:inspect).join(', ')} do not broadcast"
          end

          sizes.first || 1
        end
      end

      # `array`'s strides, in elements, over `shape` it broadcasts to: 0
      # along an added or length-1 axis.
      def broadcast_strides(array, shape)
        strides = array.send(:__element_strides)
        lead = shape.size - array.ndim
        shape.each_index.map do |d|
          next 0 if d < lead

          array.shape[d - lead] == 1 ? 0 : strides[d - lead]
        end
      end

      # The class each parameter takes, from `args` (an NArray, a number or
      # nil for an output to allocate), outputs deciding a letter first: a
      # letter takes the class of the first array it reaches, a letter only
      # numbers reach int64 for Integers and float64 otherwise.
      def resolve(op, params, args, outputs_first)
        letters = {}
        order = outputs_first.map { |i| [params[i], args[i]] } +
                params.each_index.reject { |i| outputs_first.include?(i) }.map { |i| [params[i], args[i]] }
        order.each do |param, arg|
          next unless param.letter? && arg.is_a?(NArray)

          have = letters[param.type]
          if have && have != arg.class
            raise TypeError, "[#{op}] #{param.type} is #{have.name.split('::').last} from an earlier " \
                             "argument, and #{param.name} is #{arg.class.name.split('::').last}"
          end
          letters[param.type] ||= arg.class
        end
        numbers = {}
        order.each do |param, arg|
          next unless param.letter? && !letters.key?(param.type) && arg.is_a?(Numeric)

          (numbers[param.type] ||= []) << arg
        end
        numbers.each { |l, ns| letters[l] = ns.all?(Integer) ? Int64 : DFloat }
        params.map do |p|
          next CLASSES.fetch(p.type) unless p.letter?

          letters[p.type] or raise TypeError, "[#{op}] no argument decides the type #{p.type} of #{p.name}"
        end
      end

      # `value` as the bytes a kernel parameter of class `klass` takes.
      def pack_scalar(op, name, value, klass)
        unless value.is_a?(Numeric) && value.real?
          raise TypeError, "[#{op}] #{name} must be a number or a Cumo::NArray, not #{value.class}"
        end
        if integer_class?(klass)
          raise TypeError, "[#{op}] #{name} is #{C_TYPES[klass]}: it takes an Integer, not #{value.class}" unless value.is_a?(Integer)

          lo, hi = integer_range(klass)
          raise RangeError, "[#{op}] #{value} does not fit #{name}, a #{C_TYPES[klass]}" unless value.between?(lo, hi)
        end
        klass[value].to_binary
      end

      def integer_class?(klass) = [Int8, Int16, Int32, Int64, UInt8, UInt16, UInt32, UInt64].include?(klass)

      def integer_range(klass)
        bits = klass::ELEMENT_BIT_SIZE
        signed = [Int8, Int16, Int32, Int64].include?(klass)
        signed ? [-(2**(bits - 1)), 2**(bits - 1) - 1] : [0, 2**bits - 1]
      end

      # The CUDA toolkit's include directory, for cuda_fp16.h and cuda_bf16.h:
      # CUDA_PATH, else beside the nvcc on PATH, else /usr/local/cuda.
      def cuda_include_dir
        if (path = ENV["CUDA_PATH"]) && !path.empty?
          return File.join(path, "include")
        end

        nvcc = ENV.fetch("PATH", "").split(File::PATH_SEPARATOR).map { |d| File.join(d, "nvcc") }
                  .find { |f| File.executable?(f) }
        nvcc ? File.expand_path("../include", File.dirname(File.realpath(nvcc))) : "/usr/local/cuda/include"
      end

      # The NVRTC options and the includes for these classes.
      def half_support(classes)
        half = classes.include?(HFloat)
        bf16 = classes.include?(BFloat)
        includes = +""
        includes << "#include <cuda_fp16.h>\n" if half
        includes << "#include <cuda_bf16.h>\n" if bf16
        options = half || bf16 ? ["-I#{cuda_include_dir}"] : []
        [includes, options]
      end

      # Whether a view steps through memory in another order than its axes
      # (a transpose): the kernel would read it a row apart per thread.
      def reordered?(array)
        steps = array.send(:__element_strides).zip(array.shape).reject { |_, n| n <= 1 }.map { |s, _| s.abs }
        steps.each_cons(2).any? { |a, b| a < b }
      end
    end
  end
end
