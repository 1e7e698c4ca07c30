# The cases the differential test runs on both executors. Each case is a
# name and a block that answers one array (or several); the runner
# evaluates them in a child process per executor and compares the results.
# Inputs come from Cumo's counter-based rand, which draws the same numbers
# on either executor for the same seed.
module DiffCases
  FLOAT_TYPES = %w[SFloat DFloat].freeze
  INT_TYPES = %w[Int8 Int16 Int32 Int64 UInt8 UInt16 UInt32 UInt64].freeze
  ALL_TYPES = (FLOAT_TYPES + INT_TYPES).freeze

  module_function

  def klass(name) = Cumo.const_get(name)

  # Random values of a class: floats in [-4, 4), integers in a range that
  # keeps products and powers interesting but mostly in range.
  def input(name, *shape, seed:)
    Cumo::NArray.srand(seed)
    k = klass(name)
    if FLOAT_TYPES.include?(name)
      k.new(*shape).rand(-4, 4)
    elsif name.start_with?("U")
      k.new(*shape).rand(0, 60)
    else
      k.new(*shape).rand(-30, 30)
    end
  end

  def cases
    list = {}
    ALL_TYPES.each do |t|
      %i[+ - * / % **].each do |op|
        next if op == :** && FLOAT_TYPES.include?(t) # pow of negatives: NaN either way, compared below
        list["#{t} #{op}"] = -> { input(t, 37, 53, seed: 1).send(op, input(t, 37, 53, seed: 2)) }
      end
      list["#{t} compare"] = -> { input(t, 301, seed: 3).lt(input(t, 301, seed: 4)) }
      list["#{t} broadcast"] = -> { input(t, 17, 1, seed: 5) + input(t, 1, 33, seed: 6) }
      list["#{t} scalar"] = -> { input(t, 129, seed: 7) * 3 - 2 }
      list["#{t} cast"] = -> { input(t, 64, seed: 8).cast_to(Cumo::DFloat) }
      list["#{t} sum"] = -> { input(t, 1000, seed: 9).sum }
      list["#{t} max axis"] = -> { input(t, 23, 41, seed: 10).max(axis: 0) }
      list["#{t} min axis1 keepdims"] = -> { input(t, 23, 41, seed: 11).min(axis: 1, keepdims: true) }
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
    list
  end
end
