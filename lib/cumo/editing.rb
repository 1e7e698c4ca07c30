# frozen_string_literal: true

# Numo's methods that make an array with elements added or removed, and
# `store`, which writes another array's elements into this one: written on
# Cumo's public API, as lib/cumo/extra.rb's are. The positions they take
# are host values (Integers, Ranges, Arrays): each answer's shape depends
# on them, as numpy's does.
module Cumo
  class NArray
    # Writes `other` (an array broadcast to this shape, an Array or a
    # number) into every element, cast to this class; answers self. On a
    # view it writes the elements the view sees.
    def store(other)
      raise FrozenError, "[store] can't modify a frozen #{self.class}" if frozen?

      elements_arg("store", other)

      self[*Array.new(ndim, true)] = other
      self
    end

    # This array followed by `other` (cast to this class): flattened
    # without an axis; along `axis` (both of one rank) with one.
    def append(other, axis: nil)
      other = self.class.cast(elements_arg("append", other))
      unless axis
        return self.class.zeros(0) if size.zero? && other.size.zero?

        return flatten.concatenate(other.flatten, axis: 0)
      end
      unless other.ndim == ndim
        raise Cumo::NArray::DimensionError, "[append] dimension mismatch: #{ndim}-d and #{other.ndim}-d"
      end

      concatenate(other, axis: axis)
    end

    # A copy without the positions `indices` (an Integer, a Range, a step
    # sequence or an Array of them) along `axis`, or of the flattened array
    # without one.
    def delete(indices, axis = nil)
      if axis.nil?
        positions_arg("delete", indices, size, -size...size)
        keep = Bit.ones(size)
        keep[indices] = 0
        return flatten[keep.where].dup
      end

      axis = axis_index("delete", axis)
      positions_arg("delete", indices, shape[axis], -shape[axis]...shape[axis])
      keep = Bit.ones(shape[axis])
      keep[indices] = 0
      self[*Array.new(ndim) { |d| d == axis ? keep.where : true }].dup
    end

    # A new array with `values` inserted before the positions `indices`
    # along `axis` (of the flattened array without one), as Numo inserts:
    # one index takes all the values there; several take one value each,
    # at positions of the original array.
    def insert(indices, values, axis: nil)
      values = self.class.asarray(elements_arg("insert", values))
      axis = axis_index("insert", axis) unless axis.nil?
      length = axis.nil? ? size : shape[axis]
      # Positions 0..length: before an element, or after the last.
      positions_arg("insert", indices, length, 0..length)
      if axis
        values = insert_values_along(values, axis, indices.is_a?(Numeric))
      else
        values = values.flatten
      end
      at = Int64.asarray(indices).flatten
      count = at.size
      if count == 1
        count = values.shape[axis || 0]
        at = at + Int64.new(count).seq
      else
        # Positions in the original array: each moves on by the number of
        # insertions before it, in sorted order (ties keep their order).
        order = at.sort_index
        at[order] += Int64.new(count).seq
      end
      if axis
        length += count
        kept = Bit.ones(length)
        kept[at] = 0
        out = self.class.zeros(*shape.each_with_index.map { |e, d| d == axis ? length : e })
        out[*Array.new(ndim) { |d| d == axis ? kept.where : true }] = self
        out[*Array.new(ndim) { |d| d == axis ? at : true }] = values
      else
        kept = Bit.ones(size + count)
        kept[at] = 0
        out = self.class.zeros(size + count)
        out[kept.where] = flatten
        out[at] = values
      end
      out
    end

    private

    # `value` when it can be elements: an NArray, a number, an Array or a
    # Range; a TypeError naming `op` otherwise.
    def elements_arg(op, value)
      return value if value.is_a?(NArray) || value.is_a?(Numeric) || value.is_a?(Array) ||
                      value.is_a?(Range) || value == true || value == false

      raise TypeError, "[#{op}] expected an NArray, a number or an Array, not #{value.class}"
    end

    # Checks host positions along an axis of `length`: an Integer, a Range,
    # a step sequence, or an Array of Integers, each within `valid`; an
    # integer NArray is checked where it is used (a device value).
    def positions_arg(op, indices, length, valid)
      list = case indices
             when Integer then [indices]
             when Array then indices.flatten
             when Range, Enumerator::ArithmeticSequence then nil
             when NArray
               return if indices.is_a?(Int8) || indices.is_a?(Int16) || indices.is_a?(Int32) ||
                         indices.is_a?(Int64) || indices.is_a?(UInt8) || indices.is_a?(UInt16) ||
                         indices.is_a?(UInt32) || indices.is_a?(UInt64)

               raise TypeError, "[#{op}] positions must be integers, not #{indices.class}"
             else
               raise TypeError, "[#{op}] positions are an Integer, a Range or an Array, not #{indices.class}"
             end
      return if list.nil?

      bad = list.find { |i| !i.is_a?(Integer) }
      raise TypeError, "[#{op}] positions must be Integers, not #{bad.class}" if bad

      out = list.find { |i| !valid.cover?(i) }
      raise IndexError, "[#{op}] position #{out} is out of range for length #{length}" if out
    end

    # The values laid out to fill the inserted slices along `axis`: leading
    # axes added, and for a single Integer position the slice's own axis.
    def insert_values_along(values, axis, single)
      rank = values.ndim
      if rank > ndim || (single && rank == ndim)
        raise Cumo::NArray::ShapeError,
              "[insert] #{rank}-d values do not fit #{single ? 'one position' : 'positions'} " \
              "along an axis of a #{ndim}-d array"
      end

      index = Array.new(ndim - rank, :new) + Array.new(rank, true)
      if single
        index[-rank - 1] = true
        index[axis] = :new
      end
      values[*index]
    end
  end
end
