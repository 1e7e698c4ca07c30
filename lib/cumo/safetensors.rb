# frozen_string_literal: true

require "json"

module Cumo
  # A small reader (and writer) of the safetensors format, for loading model
  # weights: an 8-byte little-endian header length N, N bytes of JSON (each
  # key a tensor name, its value {"dtype", "shape", "data_offsets" => [begin,
  # end]} with the offsets relative to the data section after the header;
  # an optional "__metadata__" of strings), then the data, row-major and
  # little-endian.
  #
  #   st = Cumo::Safetensors.open("model.safetensors")  # reads the header only
  #   st.names                           #=> ["h.0.attn.c_attn.bias", ...]
  #   st["wte.weight"]                   #=> {dtype: "F32", shape: [50257, 768], ...}
  #   st.expect("wte.weight", shape: [50257, 768], dtypes: %w[F32 BF16])
  #   w = st.read("wte.weight", Cumo::SFloat)   # read, uploaded, cast
  #
  # Everything the header says is checked when the file is opened, before
  # any tensor is read or anything reaches the device: a file shorter than
  # its header, or whose tensors' data run past its end, raises IOError; a
  # header that is not the format's, IOError; a dtype this reader does not
  # know, TypeError. `expect` raises ArgumentError for a missing tensor or
  # a wrong shape and TypeError for a dtype outside those allowed. Every
  # message names the tensor and the file.
  class Safetensors
    # dtype name => [Cumo class, bytes per element]. Booleans and the
    # 8-bit floats have no Cumo class.
    DTYPES = {
      "F64" => [:DFloat, 8], "F32" => [:SFloat, 4], "F16" => [:HFloat, 2],
      "BF16" => [:BFloat, 2],
      "I64" => [:Int64, 8], "I32" => [:Int32, 4], "I16" => [:Int16, 2], "I8" => [:Int8, 1],
      "U64" => [:UInt64, 8], "U32" => [:UInt32, 4], "U16" => [:UInt16, 2], "U8" => [:UInt8, 1]
    }.freeze
    # The format's dtypes without a Cumo class, by element size: a file
    # holding one opens (its other tensors read), and reading it raises.
    UNREADABLE = { "BOOL" => 1, "F8_E4M3" => 1, "F8_E5M2" => 1 }.freeze
    # The format's limit on the header (the reference implementation's).
    MAX_HEADER = 100_000_000

    attr_reader :path, :metadata

    def self.open(path) = new(path)

    def initialize(path)
      @path = path.to_s
      raise IOError, "[safetensors] #{@path}: no such file" unless File.file?(@path)

      @file_size = File.size(@path)
      if @file_size < 8
        raise IOError, "[safetensors] #{@path} is truncated: #{@file_size} bytes, " \
                       "less than the 8-byte header length it starts with"
      end
      header_len = File.binread(@path, 8).unpack1("Q<")
      if header_len > MAX_HEADER
        raise IOError, "[safetensors] #{@path}: header length #{header_len} is over the " \
                       "format's limit of #{MAX_HEADER} bytes (not a safetensors file?)"
      end
      if 8 + header_len > @file_size
        raise IOError, "[safetensors] #{@path} is truncated: its header claims #{header_len} " \
                       "bytes, the file holds #{@file_size - 8} after the length"
      end
      @data_start = 8 + header_len
      @data_size = @file_size - @data_start
      @tensors = parse_header(File.binread(@path, header_len, 8))
    end

    def names = @tensors.keys
    def key?(name) = @tensors.key?(name)
    def each(&block) = @tensors.each_value(&block)

    # The header's entry for `name`: {name:, dtype:, shape:, offset:, bytes:}
    # (offset from the start of the file), or nil.
    def [](name) = @tensors[name]

    # Checks that `name` is present, of `shape` and of one of `dtypes`.
    def expect(name, shape:, dtypes: DTYPES.keys)
      t = @tensors[name]
      raise ArgumentError, "[safetensors] #{@path}: tensor #{name} is missing" unless t
      unless t[:shape] == shape.to_a
        raise ArgumentError, "[safetensors] #{@path}: tensor #{name} has shape #{t[:shape]}, " \
                             "expected #{shape.to_a}"
      end
      return t if dtypes.include?(t[:dtype])

      raise TypeError, "[safetensors] #{@path}: tensor #{name} is #{t[:dtype]}, expected " \
                       "#{dtypes.join(' or ')}"
    end

    # The raw little-endian bytes of `name` (a binary String).
    def bytes(name)
      t = @tensors[name] or raise ArgumentError, "[safetensors] #{@path}: tensor #{name} is missing"
      s = File.binread(@path, t[:bytes], t[:offset])
      if s.nil? || s.bytesize != t[:bytes]
        # The file shrank since it was opened.
        raise IOError, "[safetensors] #{@path} is truncated: tensor #{name} could not be read"
      end
      s
    end

    # `name` as an NArray of its own class, cast to `klass` when given.
    def read(name, klass = nil)
      t = @tensors[name] or raise ArgumentError, "[safetensors] #{@path}: tensor #{name} is missing"
      unless DTYPES.key?(t[:dtype])
        raise TypeError, "[safetensors] #{@path}: tensor #{name} is #{t[:dtype]}, which Cumo has " \
                         "no class for (#{DTYPES.keys.join(', ')})"
      end
      own = Cumo.const_get(DTYPES.fetch(t[:dtype])[0])
      a = own.from_binary(bytes(name), t[:shape])
      klass.nil? || klass == own ? a : klass.cast(a)
    end

    # Writes `tensors` (name => NArray, in that order) as a safetensors file,
    # with `metadata` (String => String). Reads every array back to the host.
    def self.write(path, tensors, metadata: nil)
      header = {}
      header["__metadata__"] = metadata.to_h { |k, v| [k.to_s, v.to_s] } if metadata
      offset = 0
      blobs = tensors.map do |name, a|
        dtype = DTYPES.find { |_, (cls, _)| a.class == Cumo.const_get(cls) }&.first
        raise TypeError, "[safetensors] #{name}: #{a.class} has no safetensors dtype" unless dtype

        blob = a.to_binary
        header[name.to_s] = { "dtype" => dtype, "shape" => a.shape,
                              "data_offsets" => [offset, offset + blob.bytesize] }
        offset += blob.bytesize
        blob
      end
      json = JSON.generate(header)
      json += " " * (-json.bytesize % 8) # the data starts 8-byte aligned
      File.open(path, "wb") do |f|
        f.write([json.bytesize].pack("Q<"), json)
        blobs.each { |b| f.write(b) }
      end
      path
    end

    private

    def parse_header(text)
      begin
        header = JSON.parse(text.force_encoding(Encoding::UTF_8))
      rescue JSON::ParserError => e
        raise IOError, "[safetensors] #{@path}: the header is not JSON (#{e.message[0, 80]})"
      end
      raise IOError, "[safetensors] #{@path}: the header is not a JSON object" unless header.is_a?(Hash)

      @metadata = header.delete("__metadata__") || {}
      header.to_h do |name, v|
        [name, entry(name, v)]
      end
    end

    def entry(name, v)
      unless v.is_a?(Hash) && v["dtype"].is_a?(String) && v["shape"].is_a?(Array) &&
             v["data_offsets"].is_a?(Array) && v["data_offsets"].size == 2 &&
             v["shape"].all? { |d| d.is_a?(Integer) && d >= 0 } &&
             v["data_offsets"].all? { |d| d.is_a?(Integer) && d >= 0 }
        raise IOError, "[safetensors] #{@path}: tensor #{name}: header entry #{JSON.generate(v)[0, 120]} " \
                       "is not {dtype, shape, data_offsets}"
      end
      dtype = v["dtype"]
      unless DTYPES.key?(dtype) || UNREADABLE.key?(dtype)
        raise TypeError, "[safetensors] #{@path}: tensor #{name} is #{dtype}, which this reader " \
                         "does not take (#{DTYPES.keys.join(', ')})"
      end
      shape = v["shape"]
      first, last = v["data_offsets"]
      size = (DTYPES.key?(dtype) ? DTYPES[dtype][1] : UNREADABLE[dtype]) * shape.inject(1, :*)
      if last < first || last - first != size
        raise IOError, "[safetensors] #{@path}: tensor #{name} (#{dtype} #{shape}) needs #{size} " \
                       "bytes, its data_offsets #{[first, last]} hold #{last - first}"
      end
      if last > @data_size
        raise IOError, "[safetensors] #{@path} is truncated: tensor #{name}'s data ends at byte " \
                       "#{last} of the data section, which holds #{@data_size}"
      end
      { name: name, dtype: dtype, shape: shape, offset: @data_start + first, bytes: size }
    end
  end
end
