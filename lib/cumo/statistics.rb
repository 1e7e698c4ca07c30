# frozen_string_literal: true

# Numo's percentile and cov, written on Cumo's public API (lib/cumo/extra.rb
# says why): both answer on the device, percentile a 0-dim array for a
# flattened array, cov a matrix of the rows' covariances.
module Cumo
  class NArray
    # The q-th percentile (0 to 100) along `axis` (of the flattened array
    # without one), interpolating linearly between the two sorted
    # neighbours of position q / 100 * (n - 1), as Numo does.
    def percentile(q, axis: nil)
      raise TypeError, "[percentile] q must be a number, not #{q.class}" unless q.is_a?(Numeric) && q.real?
      # Written so that NaN, which compares false with both ends, is out too.
      raise ArgumentError, "[percentile] q=#{q} is out of range 0..100" unless q >= 0 && q <= 100

      x = axis.nil? ? flatten : self
      axis = axis.nil? ? 0 : axis_index("percentile", axis)
      raise Cumo::NArray::ShapeError, "[percentile] of an empty axis" if x.shape[axis].zero?

      sorted = x.sort(axis: axis)
      position = q / 100.0 * (sorted.shape[axis] - 1)
      lower = position.floor
      fraction = position % 1
      at = ->(i) { sorted[*Array.new(sorted.ndim) { |d| d == axis ? i : true }] }
      return at.call(lower) if lower == sorted.shape[axis] - 1

      below = at.call(lower)
      below + (at.call(lower + 1) - below) * fraction
    end

    # The covariance matrix of the rows (variables) over the last axis
    # (observations), with `y`'s rows appended; ddof 1 divides by n - 1.
    # fweights (integer repeat counts) and aweights (relative weights),
    # one per observation, weight them as numpy's cov does.
    def cov(y = nil, ddof: 1, fweights: nil, aweights: nil)
      raise TypeError, "[cov] ddof must be an Integer, not #{ddof.class}" unless ddof.is_a?(Integer)

      unless y.nil? || y.is_a?(NArray) || y.is_a?(Array)
        raise TypeError, "[cov] y must be an NArray or an Array, not #{y.class}"
      end

      # A 0-dim receiver is one observation of one variable, as numpy's cov
      # takes a scalar.
      x = ndim.zero? ? reshape(1) : self
      m = y.nil? ? x : NArray.vstack([x, y.is_a?(NArray) ? y : self.class.cast(y)])
      weights = [fweights, aweights].compact.map { |w| cov_weights(w, m) }
      w = weights.reduce(:*)
      if w
        w_sum = w.sum(axis: -1, keepdims: true)
        factor = if ddof.zero? then w_sum
                 elsif aweights.nil? then w_sum - ddof
                 else w_sum - ddof * (w * weights.last).sum(axis: -1, keepdims: true) / w_sum
                 end
        raise ArgumentError, "[cov] degrees of freedom <= 0" if (factor <= 0).any?

        centred = m - (m * w).sum(axis: -1, keepdims: true) / w_sum
        weighted = centred * w
      else
        factor = m.shape[-1] - ddof
        raise ArgumentError, "[cov] degrees of freedom <= 0" if factor <= 0

        centred = m - m.mean(axis: -1, keepdims: true)
        weighted = centred
      end
      transposed = centred.ndim < 2 ? centred : centred.swapaxes(-2, -1)
      weighted.dot(transposed.conj) / factor
    end

    # How often each value 0, 1, ... occurs along the last axis (an integer
    # class's non-negative values): UInt32 counts (UInt64 past 2**32 - 1
    # bins), or with `weight` (one per element along the last axis) the
    # sums of the weights, DFloat unless the weight is an SFloat. At least
    # `minlength` bins. The number of bins is the largest value + 1: a read
    # of that value, as Numo's answer's shape needs it.
    def bincount(weight = nil, minlength: nil)
      unless is_a?(Int8) || is_a?(Int16) || is_a?(Int32) || is_a?(Int64) || is_a?(UInt8) ||
             is_a?(UInt16) || is_a?(UInt32) || is_a?(UInt64)
        raise NoMethodError, "[bincount] an integer class's method, not #{self.class}'s"
      end
      raise Cumo::NArray::ShapeError, "[bincount] needs an array of 1 or more dimensions" if ndim.zero?
      unless minlength.nil? || (minlength.is_a?(Integer) && minlength >= 0)
        raise ArgumentError, "[bincount] minlength must be a non-negative Integer, not #{minlength.inspect}"
      end

      weight = bincount_weight(weight) unless weight.nil?
      low, high = size.zero? ? [0, -1] : minmax.map(&:to_i)
      raise ArgumentError, "[bincount] array items must be non-negative (#{low})" if low.negative?

      bins = [high + 1, minlength || 0].max
      klass = weight ? weight.class : (bins > 2**32 - 1 ? UInt64 : UInt32)
      # One pass a chunk of elements against every bin, so the comparison
      # never holds more than about 2**24 flags.
      step = [(2**24 / [bins, 1].max), 1].max
      out = klass.zeros(*shape[0..-2], bins)
      values = Int64.new(bins).seq
      (0...shape[-1]).step(step) do |from|
        part = self[false, from...[from + step, shape[-1]].min]
        hits = part[false, :new].eq(values[:new, true]) # [..., n, bins]
        if weight
          w = weight[false, from...[from + step, shape[-1]].min]
          out += (w[false, :new] * hits).sum(axis: -2)
        else
          out += hits.count_true(axis: -2).cast_to(klass)
        end
      end
      out
    end

    private

    def bincount_weight(weight)
      w = weight.is_a?(SFloat) || weight.is_a?(DFloat) ? weight : DFloat.cast(weight)
      unless w.shape[-1] == shape[-1] && (w.ndim == 1 || w.shape == shape)
        raise Cumo::NArray::ShapeError,
              "[bincount] the weight must have #{shape[-1]} elements along its last axis, not #{w.shape}"
      end
      w
    end

    def cov_weights(w, m)
      w = w.is_a?(NArray) ? w : DFloat.cast(w)
      unless w.ndim == 1 && w.size == m.shape[-1]
        raise Cumo::NArray::ShapeError,
              "[cov] weights must be 1-d with one per observation (#{m.shape[-1]}), not #{w.shape}"
      end
      raise ArgumentError, "[cov] weights must not be negative" if (w < 0).any?

      w
    end
  end
end
