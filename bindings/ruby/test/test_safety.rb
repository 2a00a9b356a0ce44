# frozen_string_literal: true

# Leaving an instrument block every way Ruby allows, failing start subscribers, the
# GC (stress and compaction) with subscribers referenced only by hark, threads
# instrumenting while others subscribe and unsubscribe, and the handle-building vs
# subscribing race that can deadlock Rails 7.2's own fanout.
require "minitest/autorun"
require_relative "rails_or_skip"
return unless hark_test_load_rails("test_safety")

class TestSafety < Minitest::Test
  N = ActiveSupport::Notifications
  # The CTest run (make test) races fewer rounds than make ruby-test.
  RACE_ROUNDS = ENV["HARK_RUBY_QUICK"] ? 2_000 : 20_000

  class Counting
    attr_reader :starts, :finishes, :payloads
    def initialize = (@starts = 0; @finishes = 0; @payloads = [])
    def start(_n, _i, _p) = @starts += 1
    def finish(_n, _i, p) = (@finishes += 1; @payloads << p)
  end

  def setup
    @old = N.notifier
    N.notifier = ActiveSupport::Notifications::Fanout.new
    @c = Counting.new
    N.subscribe("s.x", @c)
  end

  def teardown
    N.notifier = @old
  end

  def leave_with_break
    [1].each { N.instrument("s.x") { break } }
  end

  def leave_with_return
    N.instrument("s.x") { return :early }
    :late
  end

  def test_break_throw_return_and_raise_finish_the_event
    leave_with_break
    assert_equal :early, leave_with_return
    catch(:out) { N.instrument("s.x") { throw :out } }
    e = assert_raises(IOError) { N.instrument("s.x", { k: 1 }) { raise IOError, "io" } }
    assert_equal 4, @c.starts
    assert_equal 4, @c.finishes
    payload = @c.payloads.last
    assert_equal ["IOError", "io"], payload[:exception]
    assert_same e, payload[:exception_object]
    N.instrument("s.x") { } # not wedged
    assert_equal 5, @c.finishes
  end

  # As Rails does: payload[:exception] = [e.class.name, e.message], so an anonymous
  # class gives nil and a class's own `name` is used.
  def test_payload_exception_names_the_class_as_e_class_name
    anonymous = Class.new(StandardError)
    assert_raises(anonymous) { N.instrument("s.x") { raise anonymous, "anon" } }
    assert_equal [nil, "anon"], @c.payloads.last[:exception]
    renamed = Class.new(StandardError) { def self.name = "Renamed" }
    assert_raises(renamed) { N.instrument("s.x") { raise renamed, "re" } }
    assert_equal ["Renamed", "re"], @c.payloads.last[:exception]
  end

  def test_thread_kill_inside_the_block_finishes_the_event
    inside = Queue.new
    t = Thread.new { N.instrument("s.x") { inside << 1; sleep } }
    inside.pop
    t.kill
    t.join
    assert_equal 1, @c.starts
    assert_equal 1, @c.finishes
  end

  class BadStart
    def start(*) = raise("bad start")
    def finish(*) = raise("finish must not run")
  end

  def test_a_failing_start_subscriber_skips_the_block_and_every_finish
    N.subscribe("s.x", BadStart.new)
    ran = false
    e = assert_raises(RuntimeError) { N.instrument("s.x") { ran = true } }
    assert_equal "bad start", e.message
    refute ran
    assert_equal 1, @c.starts
    assert_equal 0, @c.finishes
    N.unsubscribe("s.x")
    GC.start
    N.instrument("s.x") { } # the discarded event left nothing wedged
  end

  def test_subscribers_survive_gc_stress_and_compaction
    got = []
    3.times { |i| N.subscribe("gc.x") { |*args| got << [i, args.size] } } # no reference kept
    N.subscribe("gc.x") { |event| got << [:event, event.name.dup] }
    GC.stress = true
    begin
      N.instrument("gc.x", { big: "x" * 100 }) { Array.new(10) { Object.new } }
    ensure
      GC.stress = false
    end
    GC.compact if GC.respond_to?(:compact)
    GC.verify_compaction_references(double_heap: true, toward: :empty) if GC.respond_to?(:verify_compaction_references)
    N.instrument("gc.x") { }
    assert_equal 8, got.size
    assert_equal [[0, 5], [1, 5], [2, 5], [:event, "gc.x"]], got.first(4)
  end

  # Fanouts that became garbage while hark re-asks cached answers (Hark::Silence walks
  # every fanout it knows): one found dead but not yet swept must not be brought back
  # (its instance variables may already be freed). In a child process: the failure is
  # a crash.
  def test_fanouts_dropped_while_cached_answers_are_asked_again
    script = <<~RUBY
      require "active_support"
      require "active_support/notifications"
      require "hark/rails"
      class Quiet
        def silenced?(_) = true
        def start(*) = nil
        def finish(*) = nil
      end
      #{ENV["HARK_RUBY_QUICK"] ? 2_000 : 6_000}.times do
        f = ActiveSupport::Notifications::Fanout.new
        3.times { |i| f.subscribe("dropped\#{i}", Quiet.new) }
        f = nil
        Array.new(2_000) { [Object.new, "x" * 10] }
        Hark::Silence.changed!
      end
      puts "survived"
    RUBY
    out = IO.popen([RbConfig.ruby, *$LOAD_PATH.flat_map { |d| ["-I", d] }, "-e", script], err: %i[child out], &:read)
    assert $?.success?, "the child died: #{out.lines.first(3).join}"
    assert_includes out, "survived"
  end

  def test_threads_instrument_while_others_subscribe_and_unsubscribe
    stable = Counting.new
    N.subscribe("t.x", stable)
    stop = false
    churn = 2.times.map do
      Thread.new do
        until stop
          s = N.subscribe("t.x") { |*| }
          r = N.subscribe(/t\./) { |*| }
          N.unsubscribe(s)
          N.unsubscribe(r)
        end
      end
    end
    workers = 3.times.map { Thread.new { 2000.times { N.instrument("t.x") { } } } }
    workers.each(&:join)
    stop = true
    churn.each(&:join)
    assert_equal 6000, stable.starts
    assert_equal 6000, stable.finishes
  end

  # Rails 7.2 can deadlock here: build_handle holds its listener cache's lock and waits
  # for the fanout mutex, while subscribe holds the mutex and clears the cache (on this
  # machine kind Rails 7.2's own fanout gets stuck within 20,000 rounds).
  def test_building_handles_while_subscribing_never_deadlocks
    instrumenter = N.instrumenter
    builder = Thread.new do
      RACE_ROUNDS.times do |i|
        h = instrumenter.build_handle("race.#{i % 7}", {})
        h.start
        h.finish
      end
    end
    subscriber = Thread.new do
      RACE_ROUNDS.times do |i|
        s = N.subscribe("race.#{i % 7}") { |*| }
        N.unsubscribe(s)
      end
    end
    assert builder.join(60), "handle builder stuck"
    assert subscriber.join(60), "subscriber stuck"
  end

  def test_hark_fanout_instrument_runs_the_block_once_and_finishes
    f = ActiveSupport::Notifications::Fanout.new
    c = Counting.new
    f.subscribe("i", c)
    assert_equal 42, f.instrument("i", "id", {}) { 42 }
    assert_equal [1, 1], [c.starts, c.finishes]
  end

  class PlainNotifier # not hark's: instrument must take Rails' own path
    attr_reader :events
    def initialize = @events = []
    def listening?(_name) = true
    def build_handle(name, _id, _payload) = Handle.new(self, name)
    def start(*) = nil
    def finish(*) = nil
    Handle = Struct.new(:notifier, :name) do
      def start = notifier.events << [:start, name]
      def finish = notifier.events << [:finish, name]
    end
  end

  def test_a_notifier_that_is_not_harks_gets_rails_own_instrument
    plain = PlainNotifier.new
    N.notifier = plain
    assert_equal 7, N.instrument("p", {}) { 7 }
    assert_equal [[:start, "p"], [:finish, "p"]], plain.events
  end
end
