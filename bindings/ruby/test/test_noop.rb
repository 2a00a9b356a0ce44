# frozen_string_literal: true

# Evented subscribers whose start or finish does nothing (ActiveRecord's
# ExplainSubscriber#start): hark leaves the call out, and calls it again as soon as such
# a method is redefined anywhere.
require "minitest/autorun"
require "hark"

class TestNoop < Minitest::Test
  class Quiet
    attr_reader :finishes

    def start(name, id, payload); end

    def finish(_name, _id, _payload)
      @finishes = (@finishes || 0) + 1
    end
  end

  def setup
    @fanout = Hark::Fanout.new
    @sub = Quiet.new
    @fanout.subscribe("noop.test", @sub)
  end

  def instrument
    @fanout.instrument("noop.test", "id", {}) { }
  end

  def test_an_empty_start_is_recognised_and_a_real_one_is_not
    assert Hark::Noop.method?(@sub, :start)
    refute Hark::Noop.method?(@sub, :finish)
    refute Hark::Noop.method?(Object.new.tap { |o| def o.start(a, b, c, d); end }, :start), "not callable with 3 arguments"
    refute Hark::Noop.method?(Object.new.tap { |o| o.singleton_class.class_eval { private def start(a, b, c); end } }, :start), "private"
  end

  def test_the_empty_start_is_not_called_and_finish_is
    calls = 0
    tp = TracePoint.new(:call) { |t| calls += 1 if t.method_id == :start && t.defined_class == Quiet }
    tp.enable { 3.times { instrument } }
    assert_equal 0, calls
    assert_equal 3, @sub.finishes
  end

  def test_redefining_start_is_seen
    started = []
    @sub.define_singleton_method(:start) { |name, _id, _payload| started << name }
    instrument
    assert_equal ["noop.test"], started
    @sub.singleton_class.remove_method(:start) # the empty one again
    instrument
    assert_equal ["noop.test"], started
  end
end
