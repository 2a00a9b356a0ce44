# frozen_string_literal: true

# ActiveSupport::Notifications.instrument keeps the notifier it last read; every
# ActiveSupport::Notifications.notifier= must reach the next instrument, whether the new
# notifier is another hark fanout or an object of the application's own.
# Needs ActiveSupport on the load path (make ruby-test adds Rails 7.2's).
require "minitest/autorun"
require_relative "rails_or_skip"
return unless hark_test_load_rails("test_notifier_switch")

class TestNotifierSwitch < Minitest::Test
  N = ActiveSupport::Notifications

  # A notifier of the application's own, with the interface Rails' instrumenter uses.
  class Recorder
    Handle = Struct.new(:log, :name, :payload) do
      def start = log << [:start, name]
      def finish = log << [:finish, name, payload]
    end

    attr_reader :log

    def initialize = @log = []
    def listening?(_name) = true
    def build_handle(name, _id, payload) = Handle.new(@log, name, payload)
  end

  def setup
    @old = N.notifier
  end

  def teardown
    N.notifier = @old
  end

  def names_heard_by(notifier)
    heard = []
    notifier.subscribe("switch.test") { |event| heard << event.payload[:n] }
    heard
  end

  # The old notifier has nobody listening and the new one has: a stale notifier would
  # run the block alone and the event would be lost.
  def test_each_new_hark_fanout_is_the_one_instrumented
    quiet = N::Fanout.new
    N.notifier = quiet
    N.instrument("switch.test", n: 0) { }
    loud = N::Fanout.new
    N.notifier = loud
    heard = names_heard_by(loud)
    N.instrument("switch.test", n: 1) { }
    N.notifier = quiet
    N.instrument("switch.test", n: 2) { }
    N.notifier = loud
    N.instrument("switch.test", n: 3) { }
    assert_equal [1, 3], heard
  end

  def test_hark_is_active_while_the_notifier_is_harks
    assert Hark.active?
    N.notifier = Recorder.new
    refute Hark.active?
    N.notifier = N::Fanout.new
    assert Hark.active?
  end

  def test_a_notifier_of_its_own_and_back
    hark = N::Fanout.new
    N.notifier = hark
    N.instrument("switch.test", n: 0) { }
    recorder = Recorder.new
    N.notifier = recorder
    result = N.instrument("switch.test", n: 1) { :block }
    assert_equal :block, result
    assert_equal [[:start, "switch.test"], [:finish, "switch.test", { n: 1 }]], recorder.log
    N.notifier = hark
    heard = names_heard_by(hark)
    N.instrument("switch.test", n: 2) { }
    assert_equal [2], heard
    assert_equal 2, recorder.log.size
  end

  # Setting @notifier directly is not seen: instrument asks whether anyone listens and
  # delivers through the same notifier, the one it keeps until notifier= is called.
  def test_setting_the_notifier_variable_directly_is_not_seen
    got = []
    kept = N::Fanout.new
    N.notifier = kept
    kept.subscribe("x") { got << :kept_x }
    other = N::Fanout.new
    other.subscribe("x") { got << :other_x }
    other.subscribe("y") { got << :other_y }
    N.instrument("x") { }
    N.instance_variable_set(:@notifier, other)
    assert_equal :block, N.instrument("x") { :block }
    assert_equal :block, N.instrument("y") { :block }
    assert_equal [:kept_x, :kept_x], got
    N.notifier = other
    N.instrument("x") { }
    N.instrument("y") { }
    assert_equal [:kept_x, :kept_x, :other_x, :other_y], got
  end

  def test_setting_the_variable_directly_after_a_notifier_of_its_own_is_not_seen
    recorder = Recorder.new
    N.notifier = recorder
    N.instrument("switch.test", n: 0) { }
    hark = N::Fanout.new
    heard = names_heard_by(hark)
    N.instance_variable_set(:@notifier, hark)
    assert_equal :block, N.instrument("switch.test", n: 1) { :block }
    assert_equal [], heard
    assert_equal [[:start, "switch.test"], [:finish, "switch.test", { n: 0 }],
                  [:start, "switch.test"], [:finish, "switch.test", { n: 1 }]], recorder.log
  end

  def test_a_writer_that_raises_still_leaves_instrument_current
    quiet = N::Fanout.new
    N.notifier = quiet
    N.instrument("switch.test", n: 0) { }
    # A writer hook of the application's own that raises after storing.
    raising = Module.new do
      def notifier=(value)
        super
        raise ArgumentError, "after the store"
      end
    end
    N.singleton_class.prepend(raising)
    loud = N::Fanout.new
    heard = names_heard_by(loud)
    assert_raises(ArgumentError) { N.notifier = loud }
    N.instrument("switch.test", n: 1) { }
    assert_equal [1], heard
  ensure
    raising&.send(:remove_method, :notifier=)
  end
end
