# frozen_string_literal: true

# Log subscribers silenced by their logger's level at hark's cost (cached answers kept
# current by hooks), and exact where the answer differs per thread or is unknown.
# Needs ActiveSupport on the load path (make ruby-test adds Rails 7.2's).
require "minitest/autorun"
require_relative "rails_or_skip"
return unless hark_test_load_rails("test_log_silence", "active_support/log_subscriber")
require "stringio"

class TestLogSilence < Minitest::Test
  N = ActiveSupport::Notifications
  LINE = proc { |_sev, _time, _prog, msg| "#{msg}\n" }

  class Demo < ActiveSupport::LogSubscriber
    class << self
      attr_accessor :calls, :seen
    end
    self.calls = 0
    self.seen = []

    def sql(event)
      Demo.calls += 1
      Demo.seen << event.payload[:n] # delivered (the logger may still drop the line)
      debug { "SQL #{event.payload[:n]}" }
    end
    subscribe_log_level :sql, :debug
  end

  def setup
    @old_notifier = N.notifier
    N.notifier = ActiveSupport::Notifications::Fanout.new
    @io = StringIO.new
    @logger = ActiveSupport::Logger.new(@io, level: Logger::ERROR, formatter: LINE)
    @old_logger = ActiveSupport::LogSubscriber.logger
    ActiveSupport::LogSubscriber.logger = @logger
    Demo.calls = 0
    Demo.seen = []
    Demo.attach_to :silence_test
  end

  def teardown
    Demo.detach_from :silence_test
    ActiveSupport::LogSubscriber.logger = @old_logger
    N.notifier = @old_notifier
  end

  def lines = @io.string.lines.map(&:chomp)

  # How often the logger was asked about its level during the block.
  def level_checks
    count = 0
    tp = TracePoint.new(:call) { |t| count += 1 if t.method_id == :debug? || t.method_id == :level }
    tp.enable { yield }
    count
  end

  def test_silenced_by_level_costs_no_question_per_event
    refute N.notifier.listening?("sql.silence_test")
    checks = level_checks { 50.times { |i| N.instrument("sql.silence_test", n: i) { } } }
    assert_equal 0, checks, "the cached answer must not ask the logger per event"
    assert_equal 0, Demo.calls
    assert_empty lines
  end

  def test_level_changes_are_seen_on_the_next_event
    N.instrument("sql.silence_test", n: 1) { }
    @logger.level = Logger::DEBUG
    assert N.notifier.listening?("sql.silence_test")
    N.instrument("sql.silence_test", n: 2) { }
    @logger.error!
    N.instrument("sql.silence_test", n: 3) { }
    @logger.debug!
    N.instrument("sql.silence_test", n: 4) { }
    @logger.sev_threshold = Logger::INFO
    N.instrument("sql.silence_test", n: 5) { }
    assert_equal ["SQL 2", "SQL 4"], lines
  end

  def test_log_subscriber_logger_assignment_is_seen
    loud_io = StringIO.new
    ActiveSupport::LogSubscriber.logger = ActiveSupport::Logger.new(loud_io, level: Logger::DEBUG, formatter: LINE)
    N.instrument("sql.silence_test", n: 1) { }
    assert_equal "SQL 1\n", loud_io.string
    ActiveSupport::LogSubscriber.logger = nil # no logger: silenced, asked per event
    N.instrument("sql.silence_test", n: 2) { }
    assert_equal "SQL 1\n", loud_io.string
  end

  def test_redefining_logger_is_seen
    loud_io = StringIO.new
    loud = Logger.new(loud_io, level: Logger::DEBUG, formatter: LINE)
    Demo.class_eval { define_method(:logger) { loud } }
    N.instrument("sql.silence_test", n: 1) { }
    assert_equal "SQL 1\n", loud_io.string
  ensure
    Demo.class_eval { remove_method(:logger) }
  end

  def test_thread_local_silence_is_exact_on_every_thread
    @logger.level = Logger::DEBUG
    inside = Queue.new
    release = Queue.new
    t = Thread.new do
      @logger.silence(Logger::ERROR) do
        inside << true
        release.pop
        N.instrument("sql.silence_test", n: "silenced thread") { }
      end
      N.instrument("sql.silence_test", n: "after silence") { }
    end
    inside.pop
    N.instrument("sql.silence_test", n: "other thread") { } # not silenced here
    release << true
    t.join
    assert_equal ["SQL other thread", "SQL after silence"], lines
    # and once no thread-local level is left, the answer is cached again
    @logger.level = Logger::ERROR
    assert_equal 0, level_checks { N.instrument("sql.silence_test", n: "x") { } }
  end

  def test_log_at_raises_and_restores
    assert_raises(RuntimeError) { @logger.log_at(Logger::DEBUG) { raise "boom" } }
    N.instrument("sql.silence_test", n: 1) { }
    assert_empty lines
    @logger.log_at(Logger::DEBUG) { N.instrument("sql.silence_test", n: 2) { } }
    assert_equal ["SQL 2"], lines
  end

  class OddLogger # not a ::Logger: asked per event, never cached
    attr_accessor :on
    def debug? = on
    def info? = on
    def error? = true
    def debug(*) = (yield if block_given?).then { |m| (@lines ||= []) << m }
    def lines = @lines || []
  end

  def test_an_unknown_logger_is_asked_per_event
    odd = OddLogger.new
    ActiveSupport::LogSubscriber.logger = odd
    odd.on = false
    N.instrument("sql.silence_test", n: 1) { }
    odd.on = true # no hook can see this: only asking per event gets it right
    N.instrument("sql.silence_test", n: 2) { }
    assert_equal ["SQL 2"], odd.lines
  end

  def test_a_broadcast_logger_is_cached_and_its_changes_are_seen
    skip "no BroadcastLogger before Rails 7.1" unless defined?(ActiveSupport::BroadcastLogger)
    quiet = ActiveSupport::Logger.new(StringIO.new, level: Logger::ERROR, formatter: LINE)
    broadcast = ActiveSupport::BroadcastLogger.new(quiet)
    ActiveSupport::LogSubscriber.logger = broadcast
    assert_equal 0, level_checks { N.instrument("sql.silence_test", n: 1) { } }
    loud_io = StringIO.new
    broadcast.broadcast_to(ActiveSupport::Logger.new(loud_io, level: Logger::DEBUG, formatter: LINE))
    N.instrument("sql.silence_test", n: 2) { }
    assert_equal "SQL 2\n", loud_io.string
    broadcast.level = Logger::ERROR # through the broadcast: every logger's level=
    N.instrument("sql.silence_test", n: 3) { }
    assert_equal "SQL 2\n", loud_io.string
    assert_equal 0, level_checks { N.instrument("sql.silence_test", n: 4) { } }
  end

  # ActionController::Live's streaming threads copy the parent's execution state with
  # IsolatedExecutionState.share_with, and with it the parent's local level: Rails keeps
  # silencing in the child after the parent's block has ended.
  def test_a_local_level_copied_by_share_with_silences_the_child
    skip "no IsolatedExecutionState before Rails 7.0" unless defined?(ActiveSupport::IsolatedExecutionState)
    @logger.level = Logger::DEBUG
    shared = Queue.new
    parent_done = Queue.new
    child = nil
    @logger.silence(Logger::ERROR) do
      parent = Thread.current
      child = Thread.new do
        in_child = lambda do
          shared << true
          parent_done.pop
          N.instrument("sql.silence_test", n: "child") { }
        end
        # Rails 8.1's share_with runs a block with the copy (and takes one); 7.2's copies.
        # (Asked of Rails' own method, behind hark's hook, which takes any form.)
        rails = ActiveSupport::IsolatedExecutionState.method(:share_with)
        rails = rails.super_method while rails.owner.name.to_s.start_with?("Hark::")
        if rails.parameters.any? { |kind, _| kind == :block }
          ActiveSupport::IsolatedExecutionState.share_with(parent, &in_child)
        else
          ActiveSupport::IsolatedExecutionState.share_with(parent)
          in_child.call
        end
      end
      shared.pop
    end
    N.instrument("sql.silence_test", n: "parent after silence") { }
    parent_done << true
    child.join
    assert_equal ["parent after silence"], Demo.seen, "the child is silenced, as in Rails"
    # once the child has ended, its copy is no longer in force: cached again
    @logger.level = Logger::ERROR
    assert_equal 0, level_checks { N.instrument("sql.silence_test", n: "x") { } }
  end

  # A Logger subclass whose level= does not call super: hark puts its hook in front.
  class RawLevelLogger < ActiveSupport::Logger
    def level=(severity)
      @level = severity
    end
  end

  def test_a_subclass_level_writer_without_super_is_seen
    raw = RawLevelLogger.new(@io, level: Logger::ERROR, formatter: LINE)
    raw.level = Logger::ERROR
    ActiveSupport::LogSubscriber.logger = raw
    N.instrument("sql.silence_test", n: 1) { }
    raw.level = Logger::DEBUG
    N.instrument("sql.silence_test", n: 2) { }
    raw.level = Logger::ERROR
    assert_equal 0, level_checks { N.instrument("sql.silence_test", n: 3) { } }, "still cached"
    assert_equal ["SQL 2"], lines
  end

  def test_a_level_writer_defined_on_the_logger_object_is_seen
    @logger.define_singleton_method(:level=) { |severity| @level = severity }
    ActiveSupport::LogSubscriber.logger = @logger
    @logger.level = Logger::DEBUG
    N.instrument("sql.silence_test", n: 1) { }
    assert_equal ["SQL 1"], lines
  end

  # An application keeping its thread-local level elsewhere: hark cannot see where, so
  # the subscription is asked per event, and silence on one thread is exact.
  class OwnLocalLevelLogger < ActiveSupport::Logger
    def local_level
      Thread.current[:hark_test_own_level]
    end

    def local_level=(level)
      Thread.current[:hark_test_own_level] = level
    end
  end

  def test_an_overridden_local_level_is_asked_per_event
    own = OwnLocalLevelLogger.new(@io, level: Logger::DEBUG, formatter: LINE)
    ActiveSupport::LogSubscriber.logger = own
    t = Thread.new do
      own.silence(Logger::ERROR) { N.instrument("sql.silence_test", n: "silenced thread") { } }
    end
    t.join
    N.instrument("sql.silence_test", n: "other thread") { }
    assert_equal ["other thread"], Demo.seen
  end

  # A `logger` hark cannot follow (an instance variable any code may set) is asked per
  # event: a change that calls no hook at all is still seen on the next event.
  def test_an_unfollowed_logger_reader_is_asked_per_event
    loud = Logger.new(@io, level: Logger::DEBUG, formatter: LINE)
    Demo.class_eval { attr_reader :own_logger; alias_method :logger, :own_logger }
    sub = N.notifier.all_listeners_for("sql.silence_test").first.delegate
    N.instrument("sql.silence_test", n: 1) { }
    sub.instance_variable_set(:@own_logger, loud)
    N.instrument("sql.silence_test", n: 2) { }
    assert_equal ["SQL 2"], lines
  ensure
    Demo.class_eval { remove_method(:logger); remove_method(:own_logger) }
  end
end
