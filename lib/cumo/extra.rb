# frozen_string_literal: true

# Numo's methods that numo/narray/extra.rb and its typed classes define on
# top of the core ones, written here on Cumo's public API (so they record
# ops like any user code, and both executors run them): copy, trace,
# tril/triu and their indices, poly, each_over_axis, at, nearly_eq.
module Cumo
  class NArray
    alias copy dup

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

  # nearly_eq: |a - b| <= (|a| + |b|) * 2 * epsilon of the class, elementwise
  # (Numo's, for the float and complex classes).
  [[SFloat, 2.0**-23], [DFloat, 2.0**-52], [HFloat, 2.0**-10], [BFloat, 2.0**-7],
   [SComplex, 2.0**-23], [DComplex, 2.0**-52]].each do |klass, epsilon|
    klass.define_method(:nearly_eq) do |other|
      (self - other).abs <= (abs + (other.is_a?(NArray) ? other.abs : other.abs)) * (2 * epsilon)
    end
    klass.send(:alias_method, :close_to, :nearly_eq)
  end
end
