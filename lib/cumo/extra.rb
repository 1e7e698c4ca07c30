# frozen_string_literal: true

# Numo's methods that numo/narray/extra.rb and its typed classes define on
# top of the core ones, written here on Cumo's public API (so they record
# ops like any user code, and both executors run them): copy, trace,
# tril/triu and their indices, diag and diag_indices, diff, poly,
# rad2deg/deg2rad, each_over_axis, at, nearly_eq; Bit's count aliases.
# lib/cumo/editing.rb has append, delete, insert and store;
# lib/cumo/statistics.rb percentile and cov; lib/cumo/parsing.rb asarray
# and parse.
module Cumo
  class NArray
    alias copy dup

    # Angles in radians as degrees, and back (a Ruby Float factor: an
    # integer array answers DFloat, as Numo's does).
    def rad2deg = self * (180 / Math::PI)
    def deg2rad = self * (Math::PI / 180)

    # A stack of square matrices (the last axis grown by |k|) with this
    # array along their k-th diagonal and zeros elsewhere.
    def diag(k = 0)
      k = integer_k("diag", k)
      raise Cumo::NArray::ShapeError, "[diag] needs an array of 1 or more dimensions" if ndim.zero?

      n = shape[-1] + k.abs
      out = self.class.zeros(*shape[0..-2], n, n)
      out.diagonal(k).store(self)
      out
    end

    # Flat indices of the k-th diagonal of the last two axes' m x n matrix.
    def diag_indices(k = 0)
      raise Cumo::NArray::ShapeError, "[diag_indices] needs an array of 2 or more dimensions" if ndim < 2

      NArray.diag_indices(*shape[-2..], integer_k("diag_indices", k))
    end

    # The n-th differences along `axis`: out[i] = sum over j of
    # (-1)**(n-j) * C(n, j) * a[i + j], accumulated from j = n down, in the
    # array's class, as Numo computes them (so a float answer is Numo's
    # bit for bit, not that of n first differences).
    def diff(n = 1, axis: -1)
      raise TypeError, "[diff] n must be an Integer, not #{n.class}" unless n.is_a?(Integer)
      axis = axis_index("diff", axis)
      length = shape[axis]
      raise Cumo::NArray::ShapeError, "[diff] n=#{n} is invalid for shape[#{axis}]=#{length}" if n.negative? || n >= length

      along = ->(range) { self[*Array.new(ndim) { |d| d == axis ? range : true }] }
      out = along.call(n..).dup
      (n - 1).downto(0) do |j|
        coefficient = (n - j).odd? ? -binomial(n, j) : binomial(n, j)
        out = out + along.call(j..(j + length - n - 1)) * coefficient
      end
      out
    end

    # The elements as strings, nested as to_a nests them: `fmt % element`,
    # or without a format Numo's own (%g for floats, %d for integers and
    # Bit, %g%+gi for complex numbers).
    def format_to_a(fmt = nil)
      raise TypeError, "[format_to_a] the format must be a String, not #{fmt.class}" unless fmt.nil? || fmt.is_a?(String)

      convert = lambda do |v|
        next v.map(&convert) if v.is_a?(Array)
        next fmt % v if fmt
        next Kernel.format("%g%+gi", v.real, v.imaginary) if v.is_a?(Complex)

        v.is_a?(Integer) ? v.to_s : Kernel.format("%g", v)
      end
      convert.call(to_a)
    end

    class << self
      # Flat indices of the k-th diagonal of an m x n matrix.
      def diag_indices(m, n, k = 0)
        offsets("diag_indices", m, n, k).eq(0).where
      end

      # Flat indices of an m x n matrix on and below its k-th diagonal.
      def tril_indices(m, n, k = 0)
        (offsets("tril_indices", m, n, k) <= 0).where
      end

      # Flat indices of an m x n matrix on and above its k-th diagonal.
      def triu_indices(m, n, k = 0)
        (offsets("triu_indices", m, n, k) >= 0).where
      end

      private

      # column - row - k over an m x n matrix.
      def offsets(op, m, n, k)
        [m, n, k].each do |v|
          raise TypeError, "[#{op}] m, n and k must be Integers, not #{v.class}" unless v.is_a?(Integer)
        end
        raise ArgumentError, "[#{op}] m and n must not be negative: #{m}, #{n}" if m.negative? || n.negative?

        Int64.new(1, n).seq - Int64.new(m, 1).seq - k
      end
    end

    # The sum of the diagonal (`diagonal(offset, axes)`) along its last
    # axis: a 0-dim array for a matrix.
    def trace(offset = nil, axes = nil, nan: false)
      args = [offset, axes].compact
      d = diagonal(*args)
      nan ? d.sum(axis: -1, nan: true) : d.sum(axis: -1)
    end

    # Flat indices of the elements on and below the k-th diagonal of the
    # last two axes (every matrix of a stack), as Numo answers them.
    def tril_indices(k = 0)
      triangle_mask("tril_indices", integer_k("tril_indices", k), lower: true).where
    end

    # Flat indices of the elements on and above the k-th diagonal.
    def triu_indices(k = 0)
      triangle_mask("triu_indices", integer_k("triu_indices", k), lower: false).where
    end

    # A copy with the elements above the k-th diagonal zero.
    def tril(k = 0)
      dup.send(:zero_where, triangle_mask("tril", integer_k("tril", k) + 1, lower: false))
    end

    # A copy with the elements below the k-th diagonal zero.
    def triu(k = 0)
      dup.send(:zero_where, triangle_mask("triu", integer_k("triu", k) - 1, lower: true))
    end

    # The elements above the k-th diagonal set to zero, in place.
    def tril!(k = 0)
      zero_where(triangle_mask("tril!", integer_k("tril!", k) + 1, lower: false))
    end

    # The elements below the k-th diagonal set to zero, in place.
    def triu!(k = 0)
      zero_where(triangle_mask("triu!", integer_k("triu!", k) - 1, lower: true))
    end

    # a0 + a1 * x + ... + an * x**n, by Horner's rule.
    def poly(*coefficients)
      raise ArgumentError, "[poly] needs at least one coefficient" if coefficients.empty?

      coefficients.reverse.drop(1).reduce(self * 0 + coefficients.last) do |acc, c|
        acc * self + c
      end
    end

    # Each slice along `axis`, a view, in order.
    def each_over_axis(axis = 0)
      return to_enum(:each_over_axis, axis) unless block_given?

      axis = axis_index("each_over_axis", axis)
      shape[axis].times do |i|
        yield self[*Array.new(ndim) { |d| d == axis ? i : true }]
      end
      self
    end

    # Elements picked by one index list per axis, element k from
    # (list0[k], list1[k], ...): numpy's tuple indexing (Numo's `at`).
    def at(*indices)
      return self[*indices] if ndim == 1 && indices.size == 1
      unless indices.size == ndim
        raise ArgumentError, "[at] needs #{ndim} index lists for a #{ndim}-d array, not #{indices.size}"
      end

      lists = indices.each_with_index.map do |list, d|
        unless list.is_a?(Array) || list.is_a?(NArray)
          raise TypeError, "[at] index lists are Arrays or NArrays, not #{list.class}"
        end

        i = Int64.cast(list)
        i + (i < 0).cast_to(Int64) * shape[d] # negative counts from the end, as a[] does
      end
      sizes = lists.map(&:size).uniq
      raise ArgumentError, "[at] index lists of different lengths: #{lists.map(&:size)}" if sizes.size > 1

      flat = lists.each_with_index.reduce(0) do |acc, (i, d)|
        acc * shape[d] + i
      end
      reshape(size)[flat]
    end

    private

    def binomial(n, k) = (1..k).reduce(1) { |acc, i| acc * (n - k + i) / i }

    def integer_k(op, k)
      raise TypeError, "[#{op}] k must be an Integer, not #{k.class}" unless k.is_a?(Integer)

      k
    end

    def zero_where(mask)
      self[mask] = 0
      self
    end

    def axis_index(op, axis)
      raise TypeError, "[#{op}] axis must be an Integer, not #{axis.class}" unless axis.is_a?(Integer)

      a = axis.negative? ? axis + ndim : axis
      raise ArgumentError, "[#{op}] axis #{axis} is out of range for a #{ndim}-d array" unless a.between?(0, ndim - 1)

      a
    end

    # Bit of this array's shape: 1 where column - row <= k (lower) or >= k
    # (not lower) in the last two axes.
    def triangle_mask(op, k, lower:)
      raise Cumo::NArray::ShapeError, "[#{op}] needs an array of 2 or more dimensions" if ndim < 2

      m, n = shape[-2..]
      rows = Int64.new(m, 1).seq
      cols = Int64.new(1, n).seq
      diagonal_offset = cols - rows
      mask = lower ? diagonal_offset <= k : diagonal_offset >= k
      ndim == 2 ? mask : mask.reshape(*([1] * (ndim - 2)), m, n).tile(*shape[0..-3], 1, 1)
    end
  end

  # Numo's names for Bit's counts.
  class Bit
    alias count count_true
    alias count_1 count_true
    alias count_0 count_false
  end

  # nearly_eq: |a - b| <= (|a| + |b|) * 2 * epsilon of the class, elementwise
  # (Numo's, for the float and complex classes).
  [[SFloat, 2.0**-23], [DFloat, 2.0**-52], [HFloat, 2.0**-10], [BFloat, 2.0**-7],
   [SComplex, 2.0**-23], [DComplex, 2.0**-52]].each do |klass, epsilon|
    klass.define_method(:nearly_eq) do |other|
      other = klass.cast(other) if other.is_a?(Array)
      unless other.is_a?(NArray) || other.is_a?(Numeric)
        raise TypeError, "[nearly_eq] expected Cumo::NArray, an Array or a number, not #{other.class}"
      end

      (self - other).abs <= (abs + other.abs) * (2 * epsilon)
    end
    klass.send(:alias_method, :close_to, :nearly_eq)
  end
end
