# frozen_string_literal: true

# Random calls of the Ruby API with wrong classes, out-of-range numbers and
# empty arrays, from fixed seeds: the process must never crash, and every
# exception must be one a caller can expect (TypeError, ArgumentError,
# ShapeError, ...) that names the op in brackets, but Ruby's own arity and
# keyword errors. The fuzz that found `SFloat[1, []]` and an Array written
# into an empty selection writing through a null pointer, and Ruby's
# RangeError for a Bignum axis, is this one; at four times its first
# length it also reaches a 0-dim cov, one of the bugs other seeds found
# (with nearly_eq(true), percentile(NaN) and reshape(nil, 0) of an empty
# array, each tested where its method is). CPU executor only: on the GPU
# each random call would compile a kernel.
require "minitest/autorun"
require "cumo/narray"

class TestBadInputFuzz < Minitest::Test
  CLASSES = [Cumo::SFloat, Cumo::DFloat, Cumo::BFloat, Cumo::HFloat, Cumo::Int32, Cumo::Int8,
             Cumo::UInt8, Cumo::UInt64, Cumo::Int64, Cumo::SComplex, Cumo::DComplex,
             Cumo::Bit].freeze
  SHAPES = [[], [3], [2, 3], [3, 1], [0], [2, 0, 3], [1, 4], [1], [2, 1, 3]].freeze
  BAD = [nil, "x", 1.5, -1, 0, 1, 2, -3, 7, 2**70, -(2**70), [1, 2], [0, -1], [[1], [2, 3]], [],
         Float::NAN, Float::INFINITY, true, 1..2, (0..), -100, Complex(1, 2), :sym].freeze
  INDICES = [nil, true, false, 0, -1, 5, -7, 2**40, -(2**70), 1.5, Float::NAN, "a", :*, :new, 0..1,
             1..-1, (0..), (..1), 5..9, (0..6).step(2), [0, 1], [0, -1, 5], [], [true, false]].freeze
  EXPECTED = [TypeError, ArgumentError, IndexError, RangeError, NoMethodError, ZeroDivisionError,
              NotImplementedError, FloatDomainError, LocalJumpError, Cumo::NArray::ShapeError,
              Cumo::NArray::CastError, Cumo::NArray::OperationError,
              Cumo::NArray::DimensionError].freeze
  # Raised by Ruby itself, at the call, before any of ours runs.
  RUBYS_OWN = Regexp.union("wrong number of arguments", "unknown keyword", "missing keyword",
                           "no block given", /can't convert .* into Float/)

  def array(rng)
    klass = CLASSES.sample(random: rng)
    a = klass.new(*SHAPES.sample(random: rng))
    klass == Cumo::Bit ? a.fill(1) : a.seq(-2)
  end

  def argument(rng)
    rng.rand < 0.4 ? array(rng) : BAD.sample(random: rng)
  end

  # `called`: the method called, whose absence (a class without it) is
  # Ruby's NoMethodError; one from inside ours is a bug.
  def check_call(what, called)
    yield
    @answered += 1
  rescue *EXPECTED => e
    @raised += 1
    return if e.message.start_with?("[") || e.message.match?(RUBYS_OWN)
    return if e.is_a?(NoMethodError) && e.name == called

    flunk "#{what}: #{e.class} without the op's name: #{e.message[0, 200]}"
  rescue StandardError => e
    flunk "#{what}: unexpected #{e.class}: #{e.message[0, 200]}"
  end

  def setup
    @answered = 0
    @raised = 0
  end

  # Both outcomes came up often: the fuzz reaches the methods' work, not
  # only their first check.
  def teardown
    assert_operator @answered, :>, 100
    assert_operator @raised, :>, 100
  end

  # Reads an NArray result back (so the recorded work runs); small ones
  # only, as a random shape may be huge and never meant to be allocated.
  def read_back(result)
    result.to_a if result.is_a?(Cumo::NArray) && result.size < 10_000
  end

  def describe(x)
    x.is_a?(Cumo::NArray) ? "#{x.class}#{x.shape.inspect}" : x.inspect[0, 30]
  end

  def test_instance_methods
    rng = Random.new(1)
    methods = (Cumo::SFloat.instance_methods(false) + Cumo::NArray.instance_methods(false)).uniq -
              %i[each map each_with_index map_with_index object_id display]
    methods.sort!
    6000.times do
      a = array(rng)
      m = methods.sample(random: rng)
      args = Array.new(rng.rand(0..3)) { argument(rng) }
      kw = rng.rand < 0.3 ? { %i[axis keepdims nan].sample(random: rng) => BAD.sample(random: rng) } : {}
      check_call("#{describe(a)}.#{m}(#{args.map { |x| describe(x) }.join(', ')} #{kw})", m) do
        read_back(a.public_send(m, *args, **kw))
      end
    end
  end

  def test_constructors
    rng = Random.new(2)
    methods = %i[new zeros ones eye linspace logspace cast [] seq rand from_binary]
    4000.times do
      klass = CLASSES.sample(random: rng)
      m = methods.sample(random: rng)
      args = Array.new(rng.rand(0..3)) { BAD.sample(random: rng) }
      check_call("#{klass}.#{m}(#{args.map { |x| describe(x) }.join(', ')})", m) do
        read_back(klass.public_send(m, *args))
      end
    end
  end

  def test_module_functions
    rng = Random.new(4)
    targets = Cumo::NMath.singleton_methods.sort.map { |m| [Cumo::NMath, m] } +
              %i[concatenate stack vstack hstack dstack column_stack cast].map { |m| [Cumo::NArray, m] }
    4000.times do
      mod, m = targets.sample(random: rng)
      args = Array.new(rng.rand(0..3)) { rng.rand < 0.2 ? [array(rng), array(rng)] : argument(rng) }
      check_call("#{mod}.#{m}(#{args.map { |x| describe(x) }.join(', ')})", m) do
        read_back(mod.public_send(m, *args))
      end
    end
  end

  def test_indexing_and_writes
    rng = Random.new(3)
    values = [1, 1.5, nil, "x", [1, 2], [[1, 2, 3]], Cumo::SFloat[1, 2], Cumo::DFloat.new(2, 3).seq,
              Cumo::SComplex[1], Float::NAN, 2**70]
    6000.times do
      a = array(rng)
      args = Array.new(rng.rand(0..4)) { INDICES.sample(random: rng) }
      if rng.rand < 0.5
        check_call("#{describe(a)}[#{args.map { |x| describe(x) }.join(', ')}]", :[]) do
          read_back(a[*args])
        end
      else
        v = values.sample(random: rng)
        check_call("#{describe(a)}[#{args.map { |x| describe(x) }.join(', ')}] = #{describe(v)}", :[]=) do
          a[*args] = v
          a.to_a
        end
      end
    end
  end
end
