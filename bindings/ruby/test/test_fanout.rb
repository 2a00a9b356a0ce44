# frozen_string_literal: true

# Hark::Fanout on its own (no ActiveSupport): kinds, publish, handles, failures
# aggregated as Rails does, non-local exits from subscribers, unsubscribe rules.
require "minitest/autorun"
require "hark"

class TestFanout < Minitest::Test
  def setup
    @f = Hark::Fanout.new
  end

  def instrument(name, payload = {})
    h = @f.build_handle(name, "id", payload)
    h.start
    begin
      yield payload if block_given?
    ensure
      h.finish
    end
  end

  class Evented
    attr_reader :log
    def initialize = @log = []
    def start(name, id, payload) = @log << [:start, name, id, payload]
    def finish(name, id, payload) = @log << [:finish, name, id, payload]
  end

  def test_kinds_follow_the_listener
    got = []
    @f.subscribe("a") { |name, start, finish, id, payload| got << [:timed, name, start.class, finish.class, id, payload] }
    @f.subscribe("a", monotonic: true) { |name, start, finish, id, payload| got << [:mono, start.class, finish.class] }
    @f.subscribe("a") { |event| got << [:event, event.name, event.payload, event.duration >= 0, event.class] }
    ev = Evented.new
    @f.subscribe("a", ev)
    instrument("a", { k: 1 }) { }
    assert_equal [:timed, "a", Time, Time, "id", { k: 1 }], got[0]
    assert_equal [:mono, Float, Float], got[1]
    assert_equal [:event, "a", { k: 1 }, true, Hark.event_class], got[2]
    assert_equal [[:start, "a", "id", { k: 1 }], [:finish, "a", "id", { k: 1 }]], ev.log
  end

  def test_event_class_set_after_events_were_built_is_used
    got = []
    @f.subscribe("ec") { |event| got << event.class }
    instrument("ec")
    previous = Hark.event_class
    mine = Class.new(previous)
    Hark.event_class = mine
    begin
      instrument("ec")
    ensure
      Hark.event_class = previous
    end
    instrument("ec")
    assert_equal [previous, mine, previous], got
  end

  def test_listening_and_unsubscribe
    refute @f.listening?("x")
    s = @f.subscribe("x") { }
    assert @f.listening?("x")
    @f.unsubscribe(s)
    refute @f.listening?("x")
    @f.subscribe("x") { }
    @f.subscribe("x") { }
    all = @f.subscribe { }
    @f.unsubscribe("x")
    assert_equal [all], @f.all_listeners_for("x")
    assert_equal "#<Hark::Fanout (2 patterns)>", @f.inspect # "x" stays a pattern, as in Rails
  end

  def test_pattern_must_be_string_regexp_or_nil
    assert_raises(ArgumentError) { @f.subscribe(:symbol) { } }
    assert_raises(ArgumentError) { @f.subscribe(Object.new) { } }
  end

  def test_publish_passes_arguments_verbatim
    got = []
    @f.subscribe { |*args| got << args }
    @f.publish "p", 1, 2, 3
    @f.publish :sym
    assert_equal [["p", 1, 2, 3], [:sym]], got
  end

  def test_one_failure_is_reraised_as_itself_after_every_subscriber_ran
    ran = []
    @f.subscribe("e") { |*| ran << 1; raise ArgumentError, "one" }
    @f.subscribe("e") { |*| ran << 2 }
    e = assert_raises(ArgumentError) { instrument("e") }
    assert_equal "one", e.message
    assert_equal [1, 2], ran
  end

  def test_several_failures_are_aggregated
    @f.subscribe("e") { |*| raise ArgumentError, "one" }
    @f.subscribe("e") { |*| raise KeyError, "two" }
    e = assert_raises(Hark.subscriber_error_class) { instrument("e") }
    assert_equal [ArgumentError, KeyError], e.exceptions.map(&:class)
    assert_kind_of ArgumentError, e.cause
  end

  class BadStart < Evented
    def start(*) = raise("bad start")
  end

  def test_failing_start_raises_from_start_and_state_is_started
    good = Evented.new
    @f.subscribe("s", BadStart.new)
    @f.subscribe("s", good)
    h = @f.build_handle("s", "id", {})
    assert_raises(RuntimeError) { h.start }
    assert_equal :started, h.state
    assert_equal [:start], good.log.map(&:first)
    h = nil
    GC.start # the unfinished handle is discarded when collected
    @f.unsubscribe("s")
    refute @f.listening?("s")
  end

  def test_handle_states
    h = @f.build_handle("n", "id", {})
    e = assert_raises(ArgumentError) { h.finish }
    assert_equal "expected state to be :started but was :initialized", e.message
    h.start
    assert_raises(ArgumentError) { h.start }
    h.finish
    assert_raises(ArgumentError) { h.finish }
  end

  def test_finish_with_values
    got = []
    @f.subscribe("n") { |name, _s, _f, id, payload| got << [name, id, payload] }
    h = @f.build_handle("n", "id", { a: 1 })
    h.start
    h.finish_with_values("other", "id2", { b: 2 })
    assert_equal [["other", "id2", { b: 2 }]], got
  end

  def test_throw_from_a_subscriber_resumes_after_hark_returned
    ran = []
    @f.subscribe("t") { |*| ran << 1; throw :out }
    @f.subscribe("t") { |*| ran << 2 }
    catch(:out) { instrument("t") }
    assert_equal [1], ran
    ran.clear
    @f.unsubscribe("t")
    @f.subscribe("t") { |*| ran << 3 }
    instrument("t")
    assert_equal [3], ran # the notifier is not wedged
  end

  def test_legacy_start_finish_stack
    got = []
    @f.subscribe { |name, *| got << name }
    @f.start("outer", "id", {})
    @f.start("inner", "id", {})
    @f.finish("inner", "id", {})
    @f.finish("outer", "id", {})
    assert_equal %w[inner outer], got
  end

  # Finished out of order, the stack's top handle is finished with another event's
  # values: as Rails' EventObjectGroup, the Event keeps the name and id it was started
  # with and takes the finish's payload; timed and evented subscribers get the finish's.
  def test_legacy_finish_out_of_order_keeps_the_events_start_name_and_id
    events = []
    timed = []
    evented = Evented.new
    @f.subscribe(nil) { |e| events << [e.name, e.transaction_id, e.payload] }
    @f.subscribe(nil) { |name, _start, _finish, id, payload| timed << [name, id, payload] }
    @f.subscribe(nil, evented)
    @f.start("a", "id.a", { n: 1 })
    @f.start("b", "id.b", { n: 2 })
    @f.finish("a", "id.a", { n: 3 })
    @f.finish("b", "id.b", { n: 4 })
    assert_equal [["b", "id.b", { n: 3 }], ["a", "id.a", { n: 4 }]], events
    assert_equal [["a", "id.a", { n: 3 }], ["b", "id.b", { n: 4 }]], timed
    assert_equal [[:finish, "a", "id.a", { n: 3 }], [:finish, "b", "id.b", { n: 4 }]],
                 evented.log.select { |entry| entry[0] == :finish }
  end

  def test_silenced_subscribers_are_asked_per_event
    quiet = Class.new(Evented) { attr_accessor :quiet; def silenced?(_) = quiet }.new
    quiet.quiet = true
    @f.subscribe("q", quiet)
    refute @f.listening?("q")
    instrument("q")
    assert_empty quiet.log
    quiet.quiet = false
    assert @f.listening?("q")
    instrument("q")
    assert_equal [:start, :finish], quiet.log.map(&:first)
  end

  # Rails has no limit on silenceable subscriptions: neither has hark (past 256 on one
  # name an event allocates its record of who takes part).
  def test_hundreds_of_silenceable_subscriptions_on_one_name
    quiet_class = Class.new(Evented) { attr_accessor :quiet; def silenced?(_) = quiet }
    subs = Array.new(300) { |i| quiet_class.new.tap { |q| q.quiet = i % 3 == 0 } }
    subs.each_with_index { |q, i| @f.subscribe(i.even? ? "many" : /\Amany\z/, q) }
    instrument("many")
    subs.each_with_index do |q, i|
      assert_equal(q.quiet ? [] : [:start, :finish], q.log.map(&:first), "subscriber #{i}")
    end
  end

  def test_silenced_exception_propagates_from_listening_and_build_handle
    bad = Class.new(Evented) { def silenced?(_) = raise(IOError, "asked") }.new
    @f.subscribe("b", bad)
    assert_raises(IOError) { @f.listening?("b") }
    assert_raises(IOError) { @f.build_handle("b", "id", {}) }
  end

  def test_regexp_decides_with_ruby_semantics
    got = []
    @f.subscribe(/\Asql\.(?!skip)/) { |name, *| got << name }
    %w[sql.a sql.skip xsql.b sql.b].each { |n| instrument(n) }
    assert_equal %w[sql.a sql.b], got
  end

  class EveryOther < Regexp
    def ===(name) = name.to_s.end_with?("!")
  end

  def test_a_regexp_subclass_with_its_own_eqq_is_honoured
    got = []
    @f.subscribe(EveryOther.new("never")) { |name, *| got << name }
    instrument("a!")
    instrument("never")
    assert_equal ["a!"], got
  end

  class Asking < Regexp
    attr_accessor :log, :tag, :error
    def ===(name)
      log << tag
      raise error, tag.to_s if error && name.include?("boom")
      super
    end
  end

  def asking(log, tag, error = nil)
    Asking.new("order").tap { |re| re.log = log; re.tag = tag; re.error = error }
  end

  # Rails asks its pattern subscribers in the order they subscribed: visible through
  # an === with side effects, and through which error is raised first.
  def test_patterns_are_asked_about_a_new_name_in_subscription_order
    log = []
    @f.subscribe(asking(log, 0)) { }
    @f.subscribe(asking(log, 1, IOError)) { }
    @f.subscribe(asking(log, 2, ArgumentError)) { }
    @f.subscribe(asking(log, 3)) { }
    log.clear
    instrument("order.new")
    assert_equal [0, 1, 2, 3], log
    log.clear
    e = assert_raises(IOError) { instrument("order.boom") }
    assert_equal "1", e.message
    assert_equal [0, 1], log
  end

  # hark knows a name by its bytes (README, "Differences from Rails"): names equal in
  # bytes but not eql? are one name.
  def test_names_equal_in_bytes_are_one_name
    got = []
    @f.subscribe("évt") { |name, *| got << [:exact, name] }
    @f.subscribe(/x/) { |name, *| got << [:re, name] }
    @f.publish("évt".b)
    @f.unsubscribe("x")
    @f.publish(:x)
    @f.publish("x".b)
    @f.publish(:y)
    @f.publish("y")
    assert_equal [[:exact, "évt".b]], got
    assert_equal "#<Hark::Fanout (4 patterns)>", @f.inspect # évt, x, y and /x/
  end

  class Recording < Regexp
    attr_accessor :seen
    def ===(name)
      seen << [name, name.encoding, name.frozen?]
      super
    end
  end

  # A pattern is asked with the form a name was first seen in, whether it was
  # subscribed before the name was seen or after: the same answer either way.
  def test_a_pattern_subscribed_later_is_asked_with_the_form_first_seen
    got = []
    instrument("mötor")
    instrument("höst".b)
    instrument(:sym)
    @f.subscribe(/^m.tor$/) { |name, *| got << [:dot, name] }
    @f.subscribe(/ö/) { |name, *| got << [:umlaut, name] } # binary "höst": no match, no raise
    seen = []
    @f.subscribe(Recording.new("o").tap { |re| re.seen = seen }) { }
    assert_equal [["höst".b, Encoding::ASCII_8BIT, true], ["mötor".b, Encoding::UTF_8, true],
                  ["sym".b, Encoding::US_ASCII, true]], seen.sort_by(&:first).map { |n, e, f| [n.b, e, f] }
    instrument("mötor")
    instrument("mötor".b) # one name: the answer for "mötor" holds
    instrument("höst")
    assert_equal [[:dot, "mötor"], [:umlaut, "mötor"], [:dot, "mötor".b], [:umlaut, "mötor".b]], got
    # subscribed before: asked with the first form too
    got.clear
    @f.subscribe(/^b.se$/) { |name, *| got << [:dot2, name] }
    instrument("böse")
    instrument("böse".b)
    assert_equal [[:umlaut, "böse"], [:dot2, "böse"], [:umlaut, "böse".b], [:dot2, "böse".b]], got
  end

  # listeners_for and all_listeners_for answer as delivery does: by the name's bytes,
  # exact subscribers first, then the others, each in subscribe order (Rails' order).
  def test_listeners_for_a_name_in_another_form_are_those_it_is_delivered_to
    got = []
    quiet = Object.new
    def quiet.call(*) = nil
    def quiet.silenced?(_) = true
    all = @f.subscribe { |name, *| got << [:all, name] }
    re = @f.subscribe(/^fo|t$/) { |name, *| got << [:re, name] }
    foo = @f.subscribe("foo") { |name, *| got << [:foo, name] }
    evt = @f.subscribe("évt") { |name, *| got << [:evt, name] }
    silenced = @f.subscribe("foo", quiet)
    foo2 = @f.subscribe("foo") { |name, *| got << [:foo2, name] }
    @f.subscribe("bar") { }
    assert_equal [foo, silenced, foo2, all, re], @f.all_listeners_for(:foo)
    assert_equal [foo, foo2, all, re], @f.listeners_for(:foo)
    assert_equal [foo, foo2, all, re], @f.listeners_for("foo".b)
    assert_equal [evt, all, re], @f.listeners_for("évt".b)
    assert_equal [evt, all, re], @f.all_listeners_for(:évt)
    assert_equal [all], @f.listeners_for("other")
    @f.publish(:foo)
    @f.publish("évt".b)
    assert_equal [[:foo, :foo], [:foo2, :foo], [:all, :foo], [:re, :foo],
                  [:evt, "évt".b], [:all, "évt".b], [:re, "évt".b]], got
  end

  def test_unsubscribe_by_name_excludes_it_from_matching_regexps_only
    got = []
    @f.subscribe(/sub/) { |name, *| got << [:re, name] }
    @f.subscribe { |name, *| got << [:all, name] }
    @f.subscribe("named.sub") { |name, *| got << [:exact, name] }
    instrument("named.sub")
    @f.unsubscribe("named.sub")
    instrument("named.sub")
    instrument("other.sub")
    # exact subscribers first, then the others in subscribe order (Rails' order)
    assert_equal [[:exact, "named.sub"], [:re, "named.sub"], [:all, "named.sub"],
                  [:all, "named.sub"], [:re, "other.sub"], [:all, "other.sub"]], got
  end

  def test_a_failing_regexp_eqq_propagates_and_leaves_the_fanout_usable
    bad = Class.new(Regexp) { def ===(_) = raise(IOError, "eqq") }.new("x")
    @f.subscribe("known") { }
    assert_raises(IOError) { @f.subscribe(bad) { } }
    assert @f.listening?("known")
  end

  class SelfRemoving < Regexp
    attr_accessor :fanout, :subscription
    def ===(_name)
      fanout.unsubscribe(subscription) if subscription
      self.subscription = nil
      false
    end
  end

  # A pattern's === asked about a new name may unsubscribe (itself, here) while the
  # other patterns are still to be asked. Run in a child: before this was handled it
  # read a freed subscription and crashed the process.
  def test_a_pattern_unsubscribing_while_a_new_name_is_matched
    pid = fork do
      got = []
      @f.subscribe(/new/) { |name, *| got << name }
      3.times do
        re = SelfRemoving.new("x")
        re.fanout = @f
        re.subscription = @f.subscribe(re) { |*| got << :removed }
      end
      @f.subscribe(/name/) { |name, *| got << name }
      GC.start
      instrument("new.name")
      exit!(got == ["new.name", "new.name"] && @f.inspect == "#<Hark::Fanout (3 patterns)>" ? 0 : 1)
    end
    _, status = Process.wait2(pid)
    assert status.success?, "child: #{status.inspect}"
  end

  def drop_a_fanout_with_a_subscriber
    Hark::Fanout.new.subscribe("dropped") { |*| }
    nil
  end

  # A fanout collected while another thread is inside an event: freeing it must not
  # wait for that event, which needs the GVL the collecting thread holds to end.
  # Run in a child (a hang cannot be interrupted from Ruby).
  def test_collecting_a_fanout_does_not_wait_for_other_threads_events
    pid = fork do
      @f.subscribe("held") { |*| }
      inside = Queue.new
      release = Queue.new
      t = Thread.new { instrument("held") { inside << 1; release.pop } }
      inside.pop
      5.times { drop_a_fanout_with_a_subscriber }
      GC.start
      release << 1
      t.join
      5.times { drop_a_fanout_with_a_subscriber }
      GC.start
      Hark::Fanout.new # frees what the first collection left
      exit!(0)
    end
    status = nil
    100.times { break if (status = Process.wait2(pid, Process::WNOHANG)&.last); sleep 0.1 }
    unless status
      Process.kill(:KILL, pid)
      Process.wait(pid)
    end
    assert status&.success?, "child: #{status ? status.inspect : 'stuck in the collector'}"
  end

  # fork while another thread that instrumented is alive: a thread the child starts
  # may get that thread's TLS block, and Ruby keeps finished threads' native threads
  # for reuse. Subscribing and unsubscribing in the child must still end.
  def test_registry_changes_end_in_a_forked_child
    @f.subscribe("forked") { |*| }
    release = Queue.new
    t = Thread.new { instrument("forked"); release.pop }
    Thread.pass until t.status == "sleep"
    pid = fork do
      3.times { Thread.new { instrument("forked") }.join }
      s = @f.subscribe("forked.more") { |*| }
      @f.unsubscribe(s)
      exit!(0)
    end
    status = nil
    100.times { break if (status = Process.wait2(pid, Process::WNOHANG)&.last); sleep 0.1 }
    unless status
      Process.kill(:KILL, pid)
      Process.wait(pid)
    end
    release << 1
    t.join
    assert status&.success?, "child: #{status ? status.inspect : 'stuck'}"
  end

  def silenced_calls(receiver)
    count = 0
    tp = TracePoint.new(:call) { |t| count += 1 if t.method_id == :silenced? && t.self.equal?(receiver) }
    tp.enable { yield }
    count
  end

  def test_a_literal_silenced_is_cached_and_redefinitions_are_seen
    klass = Class.new(Evented) { def silenced?(_name) = true }
    quiet = klass.new
    @f.subscribe("lit", quiet)
    refute @f.listening?("lit")
    assert_equal 0, silenced_calls(quiet) { 10.times { instrument("lit") } }, "asked per event (thread-local levels in force: #{Hark::Silence.locals?})"
    assert_empty quiet.log

    klass.define_method(:silenced?) { |_name| false } # redefined: seen at once
    instrument("lit")
    assert_equal [:start, :finish], quiet.log.map(&:first)

    def quiet.silenced?(_name) = true # a singleton override
    instrument("lit")
    assert_equal 2, quiet.log.size

    klass.prepend(Module.new { def silenced?(_name) = @loud ? false : true })
    quiet.singleton_class.remove_method(:silenced?)
    instrument("lit") # not a literal any more: asked per event, still exact
    assert_equal 2, quiet.log.size
    quiet.instance_variable_set(:@loud, true)
    instrument("lit")
    assert_equal 4, quiet.log.size
  end
end
