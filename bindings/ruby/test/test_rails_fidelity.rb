# frozen_string_literal: true

# Where hark's fanout could differ from Rails' in what a subscriber or a user sees:
# the order and number of silenced? questions (asked as Rails asks them), and the
# backtrace frames between an instrumented block and its caller (C methods: what the
# binding's README documents). Needs ActiveSupport on the load path.
require "minitest/autorun"
require_relative "rails_or_skip"
return unless hark_test_load_rails("test_rails_fidelity")

class TestRailsFidelity < Minitest::Test
  N = ActiveSupport::Notifications

  # A listener asked per event (its silenced? is neither Rails' own nor a literal),
  # noting each question.
  class Timed
    def initialize(log, tag, silenced)
      @log, @tag, @silenced = log, tag, silenced
    end

    def call(*) = nil

    def silenced?(_name)
      @log << @tag
      @silenced
    end
  end

  class Evented < Timed
    def start(*) = nil
    def finish(*) = nil
  end

  def setup
    @old = N.notifier
    N.notifier = N::Fanout.new
    @asked = []
  end

  def teardown
    N.notifier = @old
  end

  def timed(tag, silenced) = Timed.new(@asked, tag, silenced)
  def evented(tag, silenced) = Evented.new(@asked, tag, silenced)

  # [ActiveSupport::Notifications.instrument, Instrumenter#instrument, listening?]: the
  # questions each asks, in order.
  def questions(exact, patterns = [])
    N.notifier = N::Fanout.new
    exact.each { |s| N.subscribe("order.x", s) }
    patterns.each { |s| N.subscribe(/order/, s) }
    [-> { N.instrument("order.x") { } }, -> { N.instrumenter.instrument("order.x") { } },
     -> { N.notifier.listening?("order.x") }].map do |call|
      @asked.clear
      call.call
      @asked.join(" ")
    end
  end

  # What Rails 7.2's own fanout asks, case by case (run on it to get these): listening?
  # walks the listeners in their order (exact ones, then patterns) until one takes
  # part; building the handle asks every silenceable listener, group by group in the
  # order each kind first appears among them. So ActiveSupport::Notifications.instrument
  # asks those before the first open listener twice.
  def test_silenced_is_asked_in_rails_order_and_count
    assert_equal ["T1 E T1 T2 E", "T1 T2 E", "T1 E"],
                 questions([timed("T1", true), evented("E", false), timed("T2", false)])
  end

  def test_all_silenced_are_asked_once_each
    assert_equal ["T1 E T2", "T1 T2 E", "T1 E T2"],
                 questions([timed("T1", true), evented("E", true), timed("T2", true)])
  end

  def test_a_listener_that_is_never_silenced_ends_listening
    assert_equal ["T1 E", "T1 E", ""], questions([proc { |*| }, timed("T1", true), evented("E", false)])
    assert_equal ["T1 T1 T2", "T1 T2", "T1"], questions([timed("T1", true), proc { |*| }, timed("T2", false)])
  end

  # [publish, publish_event]: the questions each asks, in order.
  def published(exact, patterns = [])
    N.notifier = N::Fanout.new
    exact.each { |s| N.subscribe("order.x", s) }
    patterns.each { |s| N.subscribe(/order/, s) }
    [-> { N.notifier.publish("order.x", 1, 2, "id", {}) },
     -> { N.notifier.publish_event(N::Event.new("order.x", 1, 2, "id", {})) }].map do |call|
      @asked.clear
      call.call
      @asked.join(" ")
    end
  end

  # Rails' publish and publish_event (Fanout#listeners_for) ask every silenceable
  # listener, in listener order (exact ones, then patterns, each in subscription order),
  # before calling any: not group by group as building a handle does.
  def test_publish_asks_in_listener_order
    assert_equal ["T1 E T2", "T1 E T2"],
                 published([timed("T1", true), evented("E", false), timed("T2", false)])
    assert_equal ["T1 E2 T2 E1", "T1 E2 T2 E1"],
                 published([timed("T1", false), evented("E2", true), timed("T2", false)], [evented("E1", false)])
  end

  def test_build_asks_kinds_in_the_order_they_first_appear_among_the_silenceable
    plain = Object.new.tap { |o| def o.start(*) = nil; def o.finish(*) = nil }
    assert_equal ["T1 E1", "T1 E1", ""], questions([plain, timed("T1", false), evented("E1", false)])
  end

  def test_patterns_come_after_exact_names
    assert_equal ["T1 T2 T1 T2 PE", "T1 T2 PE", "T1 T2"],
                 questions([timed("T1", true), timed("T2", false)], [evented("PE", false)])
  end

  # Backtraces: Rails' instrument is Ruby, hark's is C. A C method's frame has no file or
  # line of its own, so Ruby shows it at the line that called it. Between the block and
  # its caller, Rails 7.2 has
  #   active_support/notifications.rb:210:in `block in instrument'
  #   active_support/notifications/instrumenter.rb:58:in `instrument'
  #   active_support/notifications.rb:210:in `instrument'
  # for a listened-to name (one instrumenter.rb:58 frame for Instrumenter#instrument, one
  # notifications.rb:212 frame when nobody listens); hark has, at the caller's line,
  #   CALLER:LINE:in `instrument'   (ActiveSupport::Notifications.instrument, which runs
  #                                  the event in place while Instrumenter#instrument is
  #                                  hark's own)
  # and one such frame for Instrumenter#instrument, and when nobody listens.
  # Ruby 3.4 writes a frame's method with its owner and in quotes ("in 'Foo#bar'",
  # "in 'block in Foo#test_x'"), Ruby 3.1 to 3.3 in a backtick and a quote ("in `bar'").
  def self.frame_label(method)
    /(?:`#{method}'|'(?:[\w:]+[#.])?#{method}')/
  end

  # The frames between the raise in the innermost block and the block that called
  # instrument (all written on one line).
  def frames_under
    yield
    flunk "no exception"
  rescue RuntimeError => e
    e.backtrace.drop(1).take_while { |f| !f.match?(/in [`'](?:block in )(?:[\w:]+#)?test_/) }
  end

  def assert_instrument_frame(line, frames)
    at = /\A#{Regexp.escape("#{__FILE__}:#{line}:in ")}#{self.class.frame_label('instrument')}\z/
    assert_equal 1, frames.size, frames.inspect
    assert_match at, frames.first
  end

  def test_backtrace_frames_between_the_block_and_its_caller
    N.subscribe("bt.heard") { |*| }
    line = __LINE__ + 1
    frames = frames_under { N.instrument("bt.heard") { raise "boom" } }
    assert_instrument_frame(line, frames)

    line = __LINE__ + 1
    frames = frames_under { N.instrumenter.instrument("bt.heard") { raise "boom" } }
    assert_instrument_frame(line, frames)

    line = __LINE__ + 1
    frames = frames_under { N.instrument("bt.nobody") { raise "boom" } }
    assert_instrument_frame(line, frames)
  end

  # Both formats, as written by Ruby 3.1 and by Ruby 3.4 (ruby.wasm 3.4.1 wrote the
  # second for a method defined at the top level).
  def test_frame_labels_of_both_formats
    label = self.class.frame_label("instrument")
    ["x.rb:1:in `instrument'", "x.rb:1:in 'ActiveSupport::Notifications.instrument'",
     "x.rb:1:in 'Hark::InstrumenterHooks#instrument'", "x.rb:1:in 'instrument'"].each do |frame|
      assert_match label, frame
    end
    refute_match label, "x.rb:1:in `instrumented'"
    refute_match label, "x.rb:1:in 'Foo#instrumented'"
  end
end
