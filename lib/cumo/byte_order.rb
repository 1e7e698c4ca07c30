# frozen_string_literal: true

# Numo's byte order: an array whose bytes are swapped (a file's network
# order, big endian) keeps its values; the flag says its raw bytes, what
# to_binary writes and store_binary reads, are in the other order. An
# element's bytes are reversed whole, as Numo reverses them (a complex
# element's 8 or 16 bytes at once). Ops answer arrays in the host's order.
# This host is little endian, as every machine CUDA runs on.
module Cumo
  class NArray
    # The reversal of each element's bytes of `bytes`, elements of `size`.
    def self.swap_element_bytes(bytes, size)
      case size
      when 1 then bytes.dup
      when 2 then bytes.unpack("S<*").pack("S>*")
      when 4 then bytes.unpack("L<*").pack("L>*")
      when 8 then bytes.unpack("Q<*").pack("Q>*")
      when 16
        # Each element's two halves, each reversed, in the other order.
        bytes.unpack("Q<*").each_slice(2).flat_map(&:reverse).pack("Q>*")
      else
        raise ArgumentError, "[swap_byte] no byte order for elements of #{size} bytes"
      end
    end

    # Whether this array's raw bytes are in the other order than the host's.
    def byte_swapped? = @byte_swapped == true
    def host_order? = !byte_swapped?
    alias network_order? byte_swapped?
    alias little_endian? host_order?
    alias vacs_order? host_order?

    # A copy with the same values whose raw bytes are in the other order.
    def swap_byte
      if is_a?(Bit)
        raise NotImplementedError, "[swap_byte] Bit packs its elements: it has no byte order"
      end

      copy = dup
      copy.instance_variable_set(:@byte_swapped, !byte_swapped?)
      copy
    end
    alias hton swap_byte

    # This array in network order (big endian), the host's (little endian,
    # VAX order), or swapped: self when it already is.
    def to_network = byte_swapped? ? self : swap_byte
    def to_vacs = byte_swapped? ? swap_byte : self
    alias to_host to_vacs
    def to_swapped = byte_swapped? ? self : swap_byte

    # The raw bytes in this array's byte order.
    module ByteOrderIO
      def to_binary(*args)
        bytes = super
        byte_swapped? ? NArray.swap_element_bytes(bytes, self.class::ELEMENT_BYTE_SIZE) : bytes
      end

      def store_binary(bytes, offset = 0)
        return super unless byte_swapped? && bytes.is_a?(String) && offset.is_a?(Integer)

        size = self.class::ELEMENT_BYTE_SIZE
        data = bytes.byteslice(offset..) || ""
        data = data.byteslice(0, data.bytesize - data.bytesize % size)
        super(NArray.swap_element_bytes(data, size), 0)
      end
    end
    prepend ByteOrderIO
  end
end
