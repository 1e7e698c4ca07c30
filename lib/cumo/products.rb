# frozen_string_literal: true

# Numo's inner, outer and kron, written (as Numo writes them) out of ops the
# engine already has: a multiply with broadcast axes, and for inner a fused
# multiply-sum. They stay lazy and fuse with what consumes them; the
# arguments are checked by the ops they call, at the caller's line.
module Cumo
  class NArray
    # Numo's NArray.cast for an operand: an NArray as it is, an Array as the
    # class its elements need, a number as a 0-d array of that class.
    def self.operand(b, op)
      case b
      when NArray then b
      when Array then NArray[*b]
      when Numeric then NArray[b][0]
      else raise TypeError, "[#{op}] expected an NArray, an Array or a number, not #{b.class}"
      end
    end

    # (self * b).sum(axis: axis), as one fused reduction.
    def inner(b, axis: -1)
      mulsum(b, axis: axis)
    end

    # self[..., i] * b[..., j] for every i, j: the last axis of self against
    # the last axis of b, leading axes broadcast. With axis: the new axis of
    # b is inserted there instead.
    def outer(b, axis: nil)
      b = NArray.operand(b, :outer)
      return self[false, :new] * (b.ndim.zero? ? b : b[false, :new, true]) if axis.nil?

      raise TypeError, "[outer] axis must be an Integer, not #{axis.class}" unless axis.is_a?(Integer)

      # As Numo: the axis counts in self's axes, then from the end of the
      # longer operand's, and must exist in the shorter one.
      low, high = [ndim, b.ndim].minmax
      own = axis.negative? ? axis + ndim : axis
      at = own - high
      raise ArgumentError, "[outer] axis=#{axis} is out of range for #{ndim}-d and #{b.ndim}-d operands" if own.negative? || own >= ndim || at < -low

      a_index = [true] * ndim
      a_index.insert(at + ndim + 1, :new)
      b_index = [true] * b.ndim
      b_index.insert(at + b.ndim, :new)
      self[*a_index] * b[*b_index]
    end

    # The Kronecker product: kron(a, b)[k0, k1, ...] = a[i0, ...] * b[j0, ...]
    # with k_n = i_n * b.shape[n] + j_n; the operand with fewer axes gains
    # leading ones.
    def kron(b)
      b = NArray.operand(b, :kron)
      na = ndim
      nb = b.ndim
      a_index = ([:new] * (2 * [nb - na, 0].max)) + ([true, :new] * na)
      b_index = ([:new] * (2 * [na - nb, 0].max)) + ([:new, true] * nb)
      shape_out = (-[na, nb].max..-1).map { |i| (shape[i] || 1) * (b.shape[i] || 1) }
      product = self[*a_index] * b[*b_index]
      shape_out.empty? ? product : product.reshape(*shape_out)
    end
  end
end
