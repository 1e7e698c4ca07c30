# frozen_string_literal: true

# Numo's byte order (lib/cumo/byte_order.rb) and format_to_a
# (lib/cumo/extra.rb): a swapped array keeps its values, its raw bytes
# (to_binary, store_binary) are in the other order.
require "minitest/autorun"
require "cumo/narray"

class TestByteOrder < Minitest::Test
  def test_network_order_swaps_the_raw_bytes_only
    a = Cumo::Int32[1, 256]
    n = a.to_network
    assert n.byte_swapped?
    assert n.network_order?
    refute n.host_order?
    assert a.host_order?
    assert_equal [1, 256], n.to_a
    assert_equal [1, 256].pack("l>*"), n.to_binary
    assert_equal [1, 256].pack("l<*"), a.to_binary
    assert_same n, n.to_network
    assert_same n, n.to_swapped
    assert_same a, a.to_host
    assert_same a, a.to_vacs
    assert n.to_host.host_order?
    assert_equal a.to_binary, n.to_host.to_binary
    assert_equal n.to_binary, a.hton.to_binary
  end

  def test_every_element_size
    {
      Cumo::Int8 => [1, -2], Cumo::Int16 => [1, -2], Cumo::UInt16 => [1, 2],
      Cumo::SFloat => [1.5, -2.0], Cumo::DFloat => [1.5, -2.0], Cumo::Int64 => [1, -2],
      Cumo::HFloat => [1.5, -2.0], Cumo::BFloat => [1.5, -2.0],
      Cumo::SComplex => [Complex(1, 2)], Cumo::DComplex => [Complex(1, 2)],
    }.each do |klass, values|
      a = klass.cast(values)
      size = klass::ELEMENT_BYTE_SIZE
      want = a.to_binary.bytes.each_slice(size).flat_map(&:reverse).pack("C*")
      assert_equal want, a.swap_byte.to_binary, klass.name
      assert_equal a.to_a, a.swap_byte.to_a, klass.name
    end
  end

  def test_store_binary_reads_in_the_arrays_order
    s = Cumo::Int16.zeros(2).swap_byte
    s.store_binary([1, 2].pack("s>*"))
    assert_equal [1, 2], s.to_a
    t = Cumo::Int16.zeros(1).swap_byte
    t.store_binary("x" + [7].pack("s>"), 1)
    assert_equal [7], t.to_a
  end

  def test_ops_answer_the_hosts_order
    assert (Cumo::DFloat[1.5].swap_byte + 1).host_order?
    assert_raises(NotImplementedError) { Cumo::Bit[1, 0].swap_byte }
  end

  def test_format_to_a
    assert_equal [["1.5", "2"], ["3", "1e-05"]], Cumo::DFloat[[1.5, 2], [3, 1e-5]].format_to_a
    assert_equal %w[001 002], Cumo::Int32[1, 2].format_to_a("%03d")
    assert_equal ["1-2i"], Cumo::DComplex[Complex(1, -2)].format_to_a
    assert_equal %w[1 0], Cumo::Bit[1, 0].format_to_a
    assert_equal ["0.50"], Cumo::SFloat[0.5].format_to_a("%.2f")
    e = assert_raises(TypeError) { Cumo::SFloat[1].format_to_a(3) }
    assert_match(/\[format_to_a\]/, e.message)
  end
end
