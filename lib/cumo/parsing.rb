# frozen_string_literal: true

# Numo's asarray and parse: arrays from Ruby values and from text.
module Cumo
  class NArray
    class << self
      # An array of this class (or, on NArray, the inferred one) for `a`:
      # an NArray as it is (a 0-dim one as one element), a number or a
      # Range as a 1-d array of its elements, anything else cast.
      def asarray(a)
        case a
        when NArray then a.ndim.zero? ? a[:new] : a
        when Numeric, Range then self[a]
        else cast(a)
        end
      end

      # An array from text laid out as MATLAB writes a matrix: numbers
      # split by spaces, rows by line ends or ";", and matrices of a 3-d
      # array by blank lines. Numbers are Ruby's literals (1, -2.5, 3e4,
      # 1/2r, 2i); anything else is refused.
      def parse(text, split1d: /\s+/, split2d: /;?$|;/, split3d: /\s*\n(\s*\n)+/m)
        raise TypeError, "[parse] text must be a String, not #{text.class}" unless text.is_a?(String)

        blocks = text.split(split3d).filter_map do |block|
          rows = block.split(split2d).filter_map do |line|
            items = line.strip.split(split1d).reject(&:empty?).map { |item| parse_number(item) }
            items unless items.empty?
          end
          rows unless rows.empty?
        end
        cast(blocks.size == 1 ? blocks[0] : blocks)
      end

      private

      def parse_number(item)
        Integer(item)
      rescue ArgumentError
        begin
          Float(item)
        rescue ArgumentError
          begin
            item.end_with?("r") ? Rational(item.chomp("r")) : Complex(item)
          rescue ArgumentError
            raise ArgumentError, "[parse] not a number: #{item.inspect}"
          end
        end
      end
    end
  end
end
