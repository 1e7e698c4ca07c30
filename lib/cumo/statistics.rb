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
      raise ArgumentError, "[percentile] q=#{q} is out of range 0..100" if q.negative? || q > 100

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

      m = y.nil? ? self : NArray.vstack([self, y.is_a?(NArray) ? y : self.class.cast(y)])
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

    private

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
