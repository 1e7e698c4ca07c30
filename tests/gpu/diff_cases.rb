# The cases the differential test runs on both executors. Each case is a
# name and a block that answers one array (or several); the runner
# evaluates them in a child process per executor and compares the results.
# Inputs come from Cumo's counter-based rand, which draws the same numbers
# on either executor for the same seed.
module DiffCases
  FLOAT_TYPES = %w[SFloat DFloat].freeze
  INT_TYPES = %w[Int8 Int16 Int32 Int64 UInt8 UInt16 UInt32 UInt64].freeze
  ALL_TYPES = (FLOAT_TYPES + INT_TYPES).freeze
  # The sixteen-bit floats and the complex classes have cases of their own
  # (half_cases, complex_cases): their answers are rounded to half or built
  # from hypot, so differential.rb gives them tolerances of their own.
  NARROW_TYPES = %w[HFloat BFloat].freeze
  COMPLEX_TYPES = %w[SComplex DComplex].freeze

  module_function

  def klass(name) = Cumo.const_get(name)

  # Random values of a class: floats in [-4, 4), integers in a range that
  # keeps products and powers interesting but mostly in range.
  def input(name, *shape, seed:)
    Cumo::NArray.srand(seed)
    k = klass(name)
    if FLOAT_TYPES.include?(name) || NARROW_TYPES.include?(name)
      k.new(*shape).rand(-4, 4)
    elsif COMPLEX_TYPES.include?(name)
      k.new(*shape).rand(-4 - 4i, 4 + 4i)
    elsif name.start_with?("U")
      k.new(*shape).rand(0, 60)
    else
      k.new(*shape).rand(-30, 30)
    end
  end

  # An integer division by zero raises ZeroDivisionError at the read, so
  # divisors of integer classes are made odd (never zero, either sign).
  def divisor(name, op, d)
    return d unless INT_TYPES.include?(name) && %i[/ % divmod].include?(op)

    d * 2 + 1
  end

  # Inputs inside the domain of a unary math function, from the [-4, 4)
  # floats of `input`.
  def math_input(name, fn, seed)
    x = input(name, 501, seed: seed)
    case fn
    when :sqrt, :log, :log2, :log10, :cbrt then x.abs + 0.01
    when :log1p then x.abs - 0.5
    when :asin, :acos, :atanh then x / 4.5
    when :acosh then x.abs + 1
    else x
    end
  end

  # Names of transcendental cases carry "math:", which gives them the ulp
  # tolerance in differential.rb; every other new op must agree exactly.
  def math_cases(list)
    FLOAT_TYPES.each do |t|
      %i[sqrt cbrt exp exp2 exp10 expm1 log log2 log10 log1p sin cos tan asin acos atan
         sinh cosh tanh asinh acosh atanh erf erfc sinc gelu gelu_tanh silu sigmoid softplus].each_with_index do |fn, i|
        list["#{t} math:#{fn}"] = -> { klass(t)::Math.send(fn, math_input(t, fn, 40 + i)) }
      end
      list["#{t} math:atan2"] = -> { Cumo::NMath.atan2(input(t, 13, 31, seed: 70), input(t, 31, seed: 71)) }
      list["#{t} math:hypot"] = -> { Cumo::NMath.hypot(input(t, 13, 31, seed: 72), input(t, 1, 31, seed: 73)) }
      list["#{t} math:fused"] = lambda {
        # kept away from zero, where a relative tolerance means nothing
        x = input(t, 777, seed: 74)
        Cumo::NMath.tanh(Cumo::NMath.sin(x) * 2) * Cumo::NMath.exp(x / 8) + 3
      }
      list["#{t} math:promoted"] = -> { Cumo::NMath.atan2(input(t, 99, seed: 75), 0.5) }
      list["#{t} ldexp"] = lambda {
        Cumo::NMath.ldexp(input(t, 300, seed: 76), input("Int32", 300, seed: 77).cast_to(klass(t)))
      }
      list["#{t} frexp"] = -> { klass(t)::Math.frexp(input(t, 300, seed: 78) * 1e5) }
      list["#{t} rounding"] = lambda {
        x = input(t, 400, seed: 79) * 3
        [x.floor, x.ceil, x.round, x.rint, x.trunc, x.modf].flatten
      }
      list["#{t} rounding ties"] = lambda {
        x = klass(t).new(41).seq(-10, 0.5)
        [x.round, x.rint]
      }
      list["#{t} sign square reciprocal"] = lambda {
        x = input(t, 300, seed: 80).round
        [x.sign, x.square, x.reciprocal, x.copysign(input(t, 300, seed: 81))]
      }
      list["#{t} predicates"] = lambda {
        x = input(t, 300, seed: 82).round # zeros of both signs
        inv = x.reciprocal # infinities of both signs
        nan = x / x # NaN where x is zero
        [inv.isinf, inv.isposinf, inv.isneginf, inv.isfinite, inv.signbit, x.signbit,
         nan.isnan, nan.isfinite, nan.isnan & (inv > 0)]
      }
      list["#{t} maximum minimum"] = lambda {
        x = input(t, 300, seed: 83).round
        a = x / x * input(t, 300, seed: 98) # NaN where x is zero
        b = input(t, 300, seed: 84)
        k = klass(t)
        [k.maximum(a, b), k.minimum(a, b), k.maximum(a, b, nan: true), k.minimum(b, a, nan: true)]
      }
      list["#{t} clip"] = lambda {
        x = input(t, 20, 30, seed: 85)
        [x.clip(-1, 2.5), x.clip(input(t, 30, seed: 86), nil), x.clip(nil, input(t, 20, 1, seed: 87))]
      }
    end
    INT_TYPES.each do |t|
      list["#{t} bitwise"] = lambda {
        a = input(t, 37, 53, seed: 88)
        b = input(t, 37, 53, seed: 89)
        [a & b, a | b, a ^ b, ~a, a & 6, 5 | b]
      }
      list["#{t} shifts"] = lambda {
        a = input(t, 400, seed: 90)
        n = klass(t).new(400).seq(-3, 1) % 70 # counts past the width too
        [a << n, a >> n, a << 3, a >> 2]
      }
      list["#{t} divmod"] = -> { input(t, 300, seed: 91).divmod(divisor(t, :divmod, input(t, 300, seed: 92))) }
      list["#{t} clip sign square"] = lambda {
        x = input(t, 300, seed: 93)
        [x.clip(3, 20), x.sign, x.square, (x * 2 + 1).reciprocal, klass(t).maximum(x, 10), klass(t).minimum(x, 10)]
      }
    end
    list["Bit bitwise"] = lambda {
      a = input("Int32", 301, seed: 94) > 0
      b = input("Int32", 301, seed: 95) > 0
      [a & b, a | b, a ^ b, ~a, a & input("Int32", 301, seed: 96), input("UInt8", 301, seed: 97) & a]
    }
    list
  end

  # Layout, construction and joining (issue 4): views with negative and
  # diagonal strides read inside kernels, joins whose parts fold into one
  # kernel, the copies tile and repeat, eye's scatter, and the generators.
  # The fused row operations fold in the kernels' order on both executors
  # (ops/row_layout.h): the norms agree bit for bit, softmax up to exp.
  def row_cases(list)
    (FLOAT_TYPES + NARROW_TYPES).each do |t|
      [[5, 7], [33, 768], [3, 3000], [2, 40_000]].each_with_index do |(rows, cols), i|
        x = -> { input(t, rows, cols, seed: 90 + i) }
        g = -> { input(t, cols, seed: 95 + i) }
        list["#{t} rows #{cols}"] = lambda {
          [x.call.layer_norm(g.call, g.call * 0.5), x.call.rms_norm(g.call, eps: 1e-3),
           x.call.transpose.dup.transpose.rms_norm(Cumo.const_get(t).ones(cols))]
        }
        list["#{t} math:softmax #{cols}"] = -> { [x.call.softmax, (x.call * 30).softmax] }
        list["#{t} quantize #{cols}"] = lambda {
          y = x.call
          y[1, 2] = Float::INFINITY if rows > 2
          y[-1, true] = 0
          y.quantize_symmetric + y[0, true].quantize_symmetric
        }
      end
    end
  end

  def layout_cases(list)
    ALL_TYPES.each do |t|
      list["#{t} layout views"] = lambda {
        a = input(t, 6, 6, seed: 100)
        [a.reverse + a.rot90(2), a.swapaxes(0, 1) - a.transpose, a.diagonal(1) + a.diagonal(-1),
         a.flip(axis: 1)[1..4, true] * 2, a.rot90 + a.rot90(3).flipud.fliplr,
         a.expand_dims(1).squeeze(axis: 1) + 1]
      }
      list["#{t} joins"] = lambda {
        a = input(t, 4, 5, seed: 101)
        b = input(t, 3, 5, seed: 102)
        [Cumo::NArray.concatenate([a * 2, b.reverse, a[1..2, true]]),
         a.concatenate(b[true, 0..3].transpose.transpose[0..1, true].tile(1, 1).reshape(2, 4)
                         .concatenate(a[0..1, 4..4], axis: 1), axis: 0),
         Cumo::NArray.stack([a, a.reverse], axis: 1), Cumo::NArray.vstack([a[0, true], b]),
         Cumo::NArray.hstack([a, a.fliplr]), Cumo::NArray.dstack([a, a + 1]),
         Cumo::NArray.column_stack([a[true, 0], a[true, 1]])]
      }
      list["#{t} tile repeat"] = lambda {
        a = input(t, 3, 4, seed: 103)
        [a.tile(2, 1, 3), a.reverse(1).tile(2), a.repeat(3, axis: 0), a.repeat(2),
         a.diagonal.repeat([2, 0, 3]), a.swapaxes(0, 1).repeat([1, 2, 0], axis: 1)]
      }
      list["#{t} eye"] = lambda {
        e = klass(t).new(5, 7).eye(3, 2)
        f = klass(t).zeros(4, 4)
        f.diagonal(-1)[true] = input(t, 3, seed: 104)
        [klass(t).eye(4), e, f, klass(t).new(2, 3, 3).seq.eye]
      }
      list["#{t} split parts"] = lambda {
        a = input(t, 9, 4, seed: 105)
        a.split([2, 5]).map { |p| p * 2 } + a.hsplit(2).map(&:reverse)
      }
    end
    FLOAT_TYPES.each do |t|
      list["#{t} linspace"] = -> { [klass(t).linspace(-5, 5, 77), klass(t).linspace(0, 1, 3) * 3] }
      list["#{t} math:logspace"] = -> { [klass(t).logspace(-2, 3, 40), klass(t).new(9).logseq(4, -1, 2)] }
      list["#{t} math:rand_norm"] = lambda {
        Cumo::NArray.srand(106)
        [klass(t).new(2000).rand_norm, klass(t).new(31, 7).rand_norm(3, 0.5)]
      }
    end
  end

  # HFloat and BFloat (issue 4): every op computes in single precision and
  # rounds back, so elementwise arithmetic, conversions and rand agree bit
  # for bit; math functions and reductions (accumulated in single
  # precision, rounded once) within a unit of the type's last place.
  def half_cases(list)
    NARROW_TYPES.each do |t|
      k = klass(t)
      %i[+ - * /].each do |op|
        list["#{t} #{op}"] = -> { input(t, 37, 53, seed: 110).send(op, input(t, 53, seed: 111)) }
      end
      list["#{t} fused chain"] = lambda {
        a = input(t, 333, seed: 112)
        [((a * 2 + 1) / (a.abs + 1) - a) * a, (a + 2048) - 2048, -a, a.sign]
      }
      list["#{t} compare"] = -> { [input(t, 301, seed: 113).lt(input(t, 301, seed: 114)), input(t, 301, seed: 113).eq(1)] }
      list["#{t} conversions"] = lambda {
        d = Cumo::DFloat.new(2000).rand(-70_000, 70_000)
        f = Cumo::SFloat.new(2000).rand(-1e-4, 1e-4) # subnormals of half
        i = Cumo::Int32.new(2000).rand(-100_000, 100_000)
        h = input(t, 500, seed: 115) * 1000
        [d.cast_to(k), f.cast_to(k), i.cast_to(k), h.cast_to(Cumo::Int16), h.cast_to(Cumo::DFloat),
         h.cast_to(Cumo::SComplex), k.cast(Cumo::HFloat.cast(d)), (h > 0).cast_to(k)]
      }
      list["#{t} rand"] = -> { Cumo::NArray.srand(116); [k.new(1000).rand, k.new(1000).rand(-3, 5)] }
      list["#{t} seq"] = -> { k.new(7, 9).seq(2040, 1.5) }
      list["#{t} sum"] = -> { input(t, 40_000, seed: 117).sum }
      list["#{t} mean axis"] = -> { [input(t, 64, 300, seed: 118).mean(axis: 1), input(t, 300, 64, seed: 119).sum(axis: 0)] }
      list["#{t} big axis sum"] = -> { input(t, 5, 200_000, seed: 120).sum(axis: 1) }
      list["#{t} ones sum"] = -> { [k.new(40_000).fill(1.0).sum, k.new(3, 40_000).fill(1.0).sum(axis: 1)] }
      list["#{t} statistics"] = -> { a = input(t, 23, 300, seed: 125); [a.var(axis: 1), a.stddev, a.rms(axis: 1)] }
      list["#{t} prod max min"] = lambda {
        a = input(t, 23, 41, seed: 121) / 2 + 1
        [a.prod(axis: 1), a.max(axis: 0), a.min, a.max]
      }
      list["#{t} dot"] = -> { input(t, 10_000, seed: 122).dot(input(t, 10_000, seed: 123)) }
      list["#{t} slice writes"] = lambda {
        a = input(t, 40, 30, seed: 124)
        a[3..20, 5] = 7.3
        a[(1..-1) % 3, 0..9] += 1.5
        a
      }
      %i[sqrt exp log sin tanh atan].each_with_index do |fn, j|
        list["#{t} math:#{fn}"] = -> { k::Math.send(fn, math_input(t, fn, 125 + j)) }
      end
      list["#{t} math:pow"] = -> { input(t, 200, seed: 131).abs**input(t, 200, seed: 132) }
    end
  end

  # SComplex and DComplex (issue 4): addition, subtraction and
  # multiplication agree bit for bit; division, abs, powers and the NMath
  # functions go through hypot, atan2 and the transcendentals, so their
  # cases are "math:".
  # Matrix products (issue 7): cuBLAS on the GPU, the in-order loops of the
  # CPU reference, so float answers agree to rounding ("matmul:" gives them
  # a tolerance scaled to the operands); the integer kernel agrees exactly.
  # Shapes: the seed's cases, a gemv, broadcast batches, a transposed
  # operand (read in place), a reversed one (copied), empty k.
  MATMUL_SHAPES = [
    [[64, 300], [300, 50]], [[1, 768], [768, 300]], [[300, 768], [768]],
    [[768], [768, 40]], [[3, 1, 17, 40], [2, 40, 9]], [[5, 33, 20], [20, 7]],
    [[0, 4], [4, 3]], [[4, 0], [0, 3]], [[1, 1], [1, 1]],
  ].freeze

  def matmul_cases(list)
    (FLOAT_TYPES + NARROW_TYPES + COMPLEX_TYPES + %w[Int32 Int64 Int8]).each do |t|
      list["#{t} matmul: shapes"] = lambda {
        MATMUL_SHAPES.each_with_index.map do |(sa, sb), i|
          input(t, *sa, seed: 120 + i).matmul(input(t, *sb, seed: 140 + i))
        end
      }
      list["#{t} matmul: views"] = lambda {
        a = input(t, 40, 30, seed: 160)
        b = input(t, 40, 20, seed: 161)
        [a.transpose.matmul(b), b.transpose.matmul(a), a.reverse(0).transpose.matmul(b[(-1..0).step(-1), true]),
         a[true, (0..29).step(3)].transpose.dot(b), a.gemm(a.transpose, alpha: 2, beta: -1, c: input(t, 40, 40, seed: 162))]
      }
    end
  end

  def complex_cases(list)
    COMPLEX_TYPES.each do |t|
      k = klass(t)
      %i[+ - *].each do |op|
        list["#{t} #{op}"] = -> { input(t, 37, 53, seed: 140).send(op, input(t, 53, seed: 141)) }
      end
      list["#{t} math:/"] = -> { input(t, 37, 53, seed: 142) / input(t, 37, 1, seed: 143) }
      list["#{t} math:pow"] = -> { [input(t, 200, seed: 144)**2, input(t, 200, seed: 145)**input(t, 200, seed: 146) / 1000] }
      list["#{t} parts"] = lambda {
        z = input(t, 301, seed: 147)
        [z.real, z.imag, z.conj, -z, z.eq(z.conj), z.ne(z), z.isfinite]
      }
      list["#{t} math:abs arg"] = -> { z = input(t, 301, seed: 148); [z.abs, z.arg, z.abs * z.real] }
      list["#{t} scalar"] = -> { input(t, 129, seed: 149) * (3 - 1i) - 2 }
      list["#{t} promoted"] = -> { [input("SFloat", 99, seed: 150) + input(t, 99, seed: 151), input("DFloat", 99, seed: 152) * 1i] }
      list["#{t} cast"] = -> { [input("Int16", 64, seed: 153).cast_to(k), input(t, 64, seed: 154).cast_to(Cumo::DComplex)] }
      list["#{t} sum"] = -> { [input(t, 1000, seed: 155).sum, input(t, 3_000_001, seed: 156).sum] }
      list["#{t} mean axis"] = -> { [input(t, 64, 300, seed: 157).mean(axis: 1), input(t, 5, 20_000, seed: 158).sum(axis: 1)] }
      list["#{t} math:prod"] = -> { (input(t, 23, 41, seed: 159) / 4).prod(axis: 1) }
      list["#{t} dot"] = -> { input(t, 10_000, seed: 160).dot(input(t, 10_000, seed: 161)) }
      list["#{t} rand"] = -> { Cumo::NArray.srand(162); [k.new(1000).rand, k.new(999).rand(-1 + 2i, 3 + 5i)] }
      list["#{t} seq"] = -> { k.new(7, 9).seq(1.5 - 1i, 0.25 + 0.5i) }
      list["#{t} slice writes"] = lambda {
        a = input(t, 40, 30, seed: 163)
        a[3..20, 5] = 7 - 1i
        a[(1..-1) % 3, 0..9] += 1.5i
        a
      }
      %i[sqrt exp log sin cos tan sinh tanh asin atanh cbrt].each_with_index do |fn, j|
        list["#{t} math:#{fn}"] = -> { k::Math.send(fn, input(t, 101, seed: 170 + j) / 4) }
      end
    end
  end

  def cases
    list = {}
    ALL_TYPES.each do |t|
      %i[+ - * / % **].each do |op|
        next if op == :** && FLOAT_TYPES.include?(t) # pow of negatives: NaN either way, compared below
        list["#{t} #{op}"] = -> { input(t, 37, 53, seed: 1).send(op, divisor(t, op, input(t, 37, 53, seed: 2))) }
      end
      list["#{t} compare"] = -> { input(t, 301, seed: 3).lt(input(t, 301, seed: 4)) }
      list["#{t} broadcast"] = -> { input(t, 17, 1, seed: 5) + input(t, 1, 33, seed: 6) }
      list["#{t} scalar"] = -> { input(t, 129, seed: 7) * 3 - 2 }
      list["#{t} cast"] = -> { input(t, 64, seed: 8).cast_to(Cumo::DFloat) }
      list["#{t} sum"] = -> { input(t, 1000, seed: 9).sum }
      list["#{t} max axis"] = -> { input(t, 23, 41, seed: 10).max(axis: 0) }
      list["#{t} min axis1 keepdims"] = -> { input(t, 23, 41, seed: 11).min(axis: 1, keepdims: true) }
      list["#{t} index arrays"] = lambda {
        a = input(t, 37, 41, seed: 39)
        b = a.dup
        b[[3, 0, 3], true] = input(t, 3, 41, seed: 40)
        b[b > 0] = 1
        [a[[5, -1, 0]], a[true, [40, 2]], a[(a > 0)], a.transpose[[1, 2], 3..9], b]
      }
      # The same with integer NArray indices, whose positions the device
      # computes (a gather or write kernel checks them; a write resolves a
      # repeated position on the device: the last one wins).
      list["#{t} device index arrays"] = lambda {
        a = input(t, 37, 41, seed: 43)
        tok = input("DFloat", 37, seed: 44).max_index
        b = a.dup
        b[Cumo::Int64[3, 0, 3], true] = input(t, 3, 41, seed: 45)
        b[tok, 2..5] = a[0, 2..5]
        c = a.dup
        c[Cumo::UInt16[[7, 7], [100, -7 + 37 * 41]]] = input(t, 2, 2, seed: 46)
        [a[Cumo::Int32[5, -1, 0, 5]], a[Cumo::Int32[[5, -1], [0, 9]], true],
         a[true, Cumo::Int8[40, -2]], a[tok, 3..9], a.transpose[Cumo::Int16[1, 2], 3..9],
         a[Cumo::UInt8[36], Cumo::Int64[0, 40]], b, c]
      }
      # Sorts of every class (the float classes add NaN and -0.0 below).
      list["#{t} sort plain"] = lambda {
        a = input(t, 37, 301, seed: 38)
        [a.sort, a.sort(axis: 0), a.sort_index(axis: 1), a.median(axis: 1), a.median]
      }
    end
    FLOAT_TYPES.each do |t|
      list["#{t} pow"] = -> { input(t, 200, seed: 12).abs ** input(t, 200, seed: 13) }
      list["#{t} mean"] = -> { input(t, 4096, seed: 15).mean }
      list["#{t} mean axis"] = -> { input(t, 64, 300, seed: 16).mean(axis: 1) }
      list["#{t} big sum"] = -> { input(t, 3_000_001, seed: 17).sum }
      list["#{t} big axis sum"] = -> { input(t, 5, 200_000, seed: 18).sum(axis: 1) }
      list["#{t} many rows"] = -> { input(t, 20_000, 7, seed: 19).sum(axis: 1) }
      list["#{t} rand"] = -> { Cumo::NArray.srand(20); klass(t).new(1000).rand }
      list["#{t} seq"] = -> { klass(t).new(7, 9).seq(1.5, 0.25) }
      list["#{t} chain"] = -> { a = input(t, 333, seed: 21); ((a * 2 + 1) / (a.abs + 1) - a) * a }
      list["#{t} dot"] = -> { input(t, 10_000, seed: 22).dot(input(t, 10_000, seed: 23)) }
      # Statistics are reductions of elementwise work: exact too.
      list["#{t} statistics"] = lambda {
        a = input(t, 37, 301, seed: 32)
        [a.var, a.stddev(axis: 1), a.rms(axis: 0), a.ptp(axis: 1), a.mulsum(a, axis: 1), *a.minmax]
      }
      list["#{t} index reductions"] = lambda {
        a = input(t, 37, 301, seed: 33)
        a[3, 5..9] = Float::NAN
        [a.max_index, a.min_index(axis: 1), a.argmax(axis: 0), a.argmin(axis: 1, keepdims: true)]
      }
      # Scans run in the reference's order on both executors: exact.
      list["#{t} scan"] = -> { [input(t, 7, 9, seed: 30).cumsum, input(t, 5, 6, 7, seed: 31)[true, true, (6..0).step(-1)].cumprod(axis: 2)] }
      list["#{t} nan reductions"] = lambda {
        a = input(t, 37, 301, seed: 37)
        a[3, 5..9] = Float::NAN
        a[7, true] = Float::NAN
        [a.sum(nan: true), a.mean(axis: 1, nan: true), a.max(nan: true), a.min(axis: 0, nan: true),
         a.var(axis: 1, nan: true), a.stddev(nan: true), a.rms(axis: 0, nan: true),
         (a / 8).prod(axis: 1, nan: true), a.sum(axis: 0, keepdims: true, nan: true),
         a.max_index(nan: true), a.argmin(axis: 1, nan: true)]
      }
      list["#{t} nan scans"] = lambda {
        a = input(t, 37, 301, seed: 38)
        a[true, 0..2] = Float::NAN # prefixes of NaN alone
        a[3, 5..9] = Float::NAN
        b = input(t, 301, seed: 39)
        b[7] = Float::NAN
        [a.cumsum(axis: 1, nan: true), a.cumsum(axis: 0, nan: true),
         (a / 8 + 1).cumprod(axis: 1, nan: true), a.mulsum(b, nan: true),
         a.mulsum(b, axis: 1, nan: true)]
      }
      # Sorts order by a total order (NaN last, -0.0 first, ties by
      # position): one answer, exact on either executor.
      list["#{t} sort"] = lambda {
        a = input(t, 37, 301, seed: 34)
        a[3, 5..9] = Float::NAN
        a[4, 0..99] = 0 # ties
        a[5, 0..49] = -a[5, 0..49] * 0 # -0.0 beside 0.0
        [a.sort, a.sort(axis: 0), a[true, (300..0).step(-3)].sort(axis: 1), a.sort_index,
         a.sort_index(axis: 1), a.median, a.median(axis: 0), a.median(axis: 1, nan: true),
         input(t, 5000, seed: 35).sort, input(t, 3, 0, seed: 36).sort(axis: 1)]
      }
      list["#{t} stencil"] = lambda {
        v = input(t, 64, 48, seed: 24)
        ap = v * 4.0
        ap[1..-1, true] -= v[0..-2, true]
        ap[0..-2, true] -= v[1..-1, true]
        ap[true, 1..-1] -= v[true, 0..-2]
        ap[true, 0..-2] -= v[true, 1..-1]
        ap
      }
      list["#{t} views"] = lambda {
        a = input(t, 12, 12, seed: 25)
        a[(9..0).step(-2), 1..-1] * a.transpose[2..6, 0..10]
      }
      list["#{t} slice writes"] = lambda {
        a = input(t, 40, 30, seed: 26)
        a[3..20, 5] = 7
        a[0, true] = input(t, 30, seed: 27)
        a[(1..-1) % 3, 0..9] += 1.5
        a
      }
      list["#{t} reshape"] = -> { (input(t, 6, 8, seed: 28) + 1).reshape(4, 12).sum(axis: 0) }
      list["#{t} cg"] = lambda {
        n = 32
        Cumo::NArray.srand(29)
        b = klass(t).new(n, n).rand
        x = klass(t).zeros(n, n)
        r = b.dup
        p = r.dup
        rs = (r * r).sum
        lap = lambda do |v|
          ap = v * 4.0
          ap[1..-1, true] -= v[0..-2, true]
          ap[0..-2, true] -= v[1..-1, true]
          ap[true, 1..-1] -= v[true, 0..-2]
          ap[true, 0..-2] -= v[true, 1..-1]
          ap
        end
        25.times do
          ap = lap.call(p)
          alpha = rs / (p * ap).sum
          x += p * alpha
          r -= ap * alpha
          rs_new = (r * r).sum
          p = r + p * (rs_new / rs)
          rs = rs_new
        end
        [x, r]
      }
    end
    math_cases(list)
    row_cases(list)
    layout_cases(list)
    half_cases(list)
    complex_cases(list)
    matmul_cases(list)
    list
  end
end
