# frozen_string_literal: true

# Interrupts (Thread#raise, Thread#kill, Timeout) and jumps out of Ruby code that
# hark's C calls while an event is being built, started or finished (GC.total_time,
# Time.now, silenced?): none may leave hark's state half changed. A jump through hark
# would leave the event's reader section open, and from then on nothing retired is
# ever reclaimed: unsubscribed subscriptions are never released and pile up.
# Reclamation is measured by counts (Hark._released_count: release callbacks run),
# never by time.
require "minitest/autorun"
require_relative "rails_or_skip"
return unless hark_test_load_rails("test_interrupts", "active_support/log_subscriber")
require "timeout"
require "objspace"

class TestInterrupts < Minitest::Test
  N = ActiveSupport::Notifications
  QUICK = ENV["HARK_RUBY_QUICK"]
  # Thread#raise lands where the target thread was preempted, once per time slice:
  # this many must have been delivered inside instrumenting threads.
  DELIVERIES = QUICK ? 15 : 60
  CYCLES = QUICK ? 1_000 : 10_000

  class Boom < StandardError; end

  # GC.total_time (read by hark's allocation counter while an event-object group
  # starts and finishes) fails as told; a stand-in for an interrupt delivered there.
  module GCFails
    class << self
      attr_accessor :action
    end

    def total_time
      action = GCFails.action
      GCFails.action = nil
      action ? action.call : super
    end
  end
  GC.singleton_class.prepend(GCFails) if GC.respond_to?(:total_time)

  class Evented
    def start(*) = nil
    def finish(*) = nil
  end

  class Logged < ActiveSupport::LogSubscriber
    def work(event) = debug { "work #{event.payload[:i]}" }
  end

  # The log device the subscriber writes to: no lock. Ruby's Logger::LogDevice writes
  # under a Monitor, and a Thread#raise landing inside Monitor#synchronize between its
  # lock and its ensure leaves that Monitor locked for good (Ruby's own race, with or
  # without hark): the next writer would wait forever.
  class Lines
    attr_reader :count

    def initialize = @count = 0
    def write(_line) = @count += 1
    def close = nil
  end

  def setup
    @old = N.notifier
    N.notifier = ActiveSupport::Notifications::Fanout.new
    @old_logger = ActiveSupport::LogSubscriber.logger
    logger = ActiveSupport::Logger.new(nil, level: Logger::DEBUG)
    logger.instance_variable_set(:@logdev, @lines = Lines.new)
    ActiveSupport::LogSubscriber.logger = logger
  end

  def teardown
    GCFails.action = nil
    Logged.detach_from :interrupts rescue nil
    ActiveSupport::LogSubscriber.logger = @old_logger
    N.notifier = @old
  end

  # Subscribes and unsubscribes n times; returns how many of those subscriptions
  # were released (reclaimed) by the end, and how many the fanout still holds.
  def churn(n)
    GC.start # handles other tests dropped unfinished are discarded
    f = N.notifier
    before = Hark._released_count
    size_before = ObjectSpace.memsize_of(f)
    n.times { N.unsubscribe(N.subscribe("interrupts.churn") { }) }
    N.unsubscribe(N.subscribe("interrupts.churn") { }) # reclaims what became ripe
    [Hark._released_count - before, ObjectSpace.memsize_of(f) - size_before]
  end

  def assert_reclamation_flows(what)
    released, growth = churn(CYCLES)
    # All but the last few (retired within the last two epochs) are released.
    assert_operator released, :>=, CYCLES - 2, "#{what}: only #{released} of #{CYCLES} released"
    assert_operator growth, :<=, 0, "#{what}: the fanout grew by #{growth} bytes"
  end

  def subscribe_every_kind
    N.subscribe("interrupts.event") { |event| event.duration }
    N.subscribe("interrupts.timed") { |_name, start, finish, _id, _payload| finish - start }
    N.subscribe("interrupts.evented", Evented.new)
    N.monotonic_subscribe("interrupts.evented") { |*| }
    Logged.attach_to :interrupts
    # Every lazy require on the instrumenting path (ActiveSupport autoloads, the
    # logger's) happens here, on the test's thread: a thread killed inside
    # RubyGems' require breaks RubyGems' own lock, which is not what is tested.
    instrument_all(0)
  end

  NAMES = %w[interrupts.event interrupts.timed interrupts.evented work.interrupts].freeze

  def instrument_all(i)
    NAMES.each { |name| N.instrument(name, i: i) { i } }
  end

  def test_a_raise_where_hark_reads_gc_total_time_leaves_reclamation_flowing
    skip "no GC.total_time" unless GC.respond_to?(:total_time)
    got = []
    N.subscribe("interrupts.event") { |event| got << event.name }
    assert_reclamation_flows("before")
    GCFails.action = -> { raise Boom, "gc" }
    e = assert_raises(Boom) { N.instrument("interrupts.event") { got << :block } }
    assert_equal "gc", e.message
    assert_empty got # raised at start: the block did not run, nobody was called
    assert_reclamation_flows("after a raise at start")

    GCFails.action = nil
    started = false
    e = assert_raises(Boom) do
      N.instrument("interrupts.event") { started = true; GCFails.action = -> { raise Boom, "finish" } }
    end
    assert_equal "finish", e.message
    assert started
    assert_reclamation_flows("after a raise at finish")
    N.instrument("interrupts.event") { }
    # Raised at finish before the group's subscribers ran: as in Rails, they are not called.
    assert_equal ["interrupts.event"], got
  end

  def test_a_throw_or_kill_where_hark_reads_gc_total_time_is_resumed_after_hark
    skip "no GC.total_time" unless GC.respond_to?(:total_time)
    N.subscribe("interrupts.event") { |_event| }
    GCFails.action = -> { throw :out, :thrown }
    assert_equal :thrown, catch(:out) { N.instrument("interrupts.event") { }; :done }
    h = N.notifier.build_handle("interrupts.event", "id", {})
    GCFails.action = -> { throw :out, :from_start }
    assert_equal :from_start, catch(:out) { h.start; :done }
    assert_equal :started, h.state
    h.finish
    t = Thread.new do
      GCFails.action = -> { Thread.current.kill }
      N.instrument("interrupts.event") { }
      :not_killed
    end
    assert_nil t.value
    assert_reclamation_flows("after throws and a kill")
  end

  def test_a_throw_from_time_now_or_silenced_leaves_instrument_as_rails_lets_it
    N.subscribe("interrupts.timed") { |*| }
    singleton = Time.singleton_class
    singleton.alias_method(:hark_test_now, :now)
    singleton.define_method(:now) { |*a, **k| throw :out, :clock }
    begin
      assert_equal :clock, catch(:out) { N.instrument("interrupts.timed") { }; :done }
    ensure
      singleton.alias_method(:now, :hark_test_now)
      singleton.remove_method(:hark_test_now)
    end
    quiet = Object.new
    def quiet.call(*) = nil
    def quiet.silenced?(_name) = throw(:out, :asked)
    N.subscribe("interrupts.silenced", quiet)
    assert_equal :asked, catch(:out) { N.instrument("interrupts.silenced") { }; :done }
    assert_equal :asked, catch(:out) { N.notifier.listening?("interrupts.silenced"); :done }
    assert_reclamation_flows("after throws from Time.now and silenced?")
  end

  # Starts instrumenting threads and hands each to the block; stops and joins them.
  def with_instrumenting_threads(count)
    stop = false
    ready = Queue.new
    delivered = Queue.new
    threads = Array.new(count) do
      Thread.new do
        Thread.handle_interrupt(Boom => :never) do
          ready << 1
          i = 0
          until stop
            begin
              Thread.handle_interrupt(Boom => :immediate) { instrument_all(i += 1) until stop }
            rescue Boom, ActiveSupport::Notifications::InstrumentationSubscriberError
              delivered << 1
            end
          end
        end
      end
    end
    count.times { ready.pop }
    yield threads, delivered
  ensure
    stop = true
    threads&.each { |t| t.report_on_exception = false }
    # A thread that does not end is a wedge: fail (and kill it) rather than hang.
    stuck = threads&.reject { |t| (t.join(30) rescue t) }
    stuck&.each(&:kill)
    assert_empty stuck.to_a, "instrumenting threads still running 30 s after the stop"
  end

  def test_hundreds_of_thread_raises_while_instrumenting_leave_reclamation_flowing
    subscribe_every_kind
    assert_reclamation_flows("before")
    sent = 0
    with_instrumenting_threads(4) do |threads, delivered|
      until delivered.size >= DELIVERIES
        threads.each { |t| t.raise(Boom) if t.alive? }
        sent += threads.size
        sleep 0.0005
      end
    end
    assert_operator sent, :>=, DELIVERIES
    assert_operator @lines.count, :>, 0, "the log subscriber wrote no line"
    assert_reclamation_flows("after #{sent} Thread#raise")
  end

  def test_killed_and_timed_out_instrumenting_threads_leave_reclamation_flowing
    subscribe_every_kind
    (QUICK ? 3 : 8).times do
      t = Thread.new { i = 0; loop { instrument_all(i += 1) } }
      sleep 0.001 until t.status == "run" || !t.alive?
      Thread.pass
      t.kill
      t.join
      begin
        Timeout.timeout(0.002) { i = 0; loop { instrument_all(i += 1) } }
      rescue Timeout::Error, ActiveSupport::Notifications::InstrumentationSubscriberError
      end
    end
    assert_reclamation_flows("after Thread#kill and Timeout")
  end
end
