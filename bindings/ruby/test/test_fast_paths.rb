# frozen_string_literal: true

# What hark's cheaper ways to the same answers must still answer as Rails does: event
# names looked up by their bytes, Rails' instrumenter found where Rails keeps it, the
# event object's instance variables, and Time.now read without a method call only while
# it is Ruby's own.
require "minitest/autorun"
require "minitest/mock"
require_relative "rails_or_skip"
return unless hark_test_load_rails("test_fast_paths")

class TestFastPaths < Minitest::Test
  N = ActiveSupport::Notifications

  def setup
    @subs = []
  end

  def teardown
    @subs.each { |s| N.unsubscribe(s) }
  end

  def subscribe(name, &block)
    @subs << N.subscribe(name, &block)
  end

  # Names built anew for every call (ActionView's "render_#{kind}.action_view") reach
  # the subscribers of their bytes, whichever String object carries them.
  def test_names_that_are_not_frozen_reach_the_subscribers_of_their_bytes
    got = []
    %w[render_partial render_template render_layout render_collection].each do |kind|
      subscribe("#{kind}.fast.test") { |name, *| got << name }
    end
    3.times do
      %w[partial template layout collection].each do |kind|
        name = +"render_#{kind}.fast.test"
        N.instrument(name) { }
      end
    end
    assert_equal %w[render_partial render_template render_layout render_collection].map { |k| "#{k}.fast.test" } * 3, got
  end

  # A String changed in place between two events is its new name the second time.
  def test_a_name_changed_in_place_is_looked_up_again
    got = []
    subscribe("mutable.fast.one") { |name, *| got << [:one, name.dup] }
    subscribe("mutable.fast.two") { |name, *| got << [:two, name.dup] }
    name = +"mutable.fast.one"
    N.instrument(name) { }
    name[-3..] = "two"
    N.instrument(name) { }
    name.replace("mutable.fast.on")
    N.instrument(name) { }
    assert_equal [[:one, "mutable.fast.one"], [:two, "mutable.fast.two"]], got
  end

  # Names of one length that share their first and last eight bytes share a slot of
  # the recent-names table: each is compared in full.
  def test_names_sharing_their_ends_are_told_apart
    names = (0...64).map { |i| "aaaaaaaa.#{format('%03d', i)}.zzzzzzzz" }
    got = Hash.new(0)
    names.each_with_index { |n, i| subscribe(n) { got[i] += 1 } if i.even? }
    2.times { names.each { |n| N.instrument(+n) { } } }
    assert_equal (0...64).select(&:even?).to_h { |i| [i, 2] }, got
  end

  # Invalid names raise as before, also once a valid name has been looked up.
  def test_a_name_with_a_nul_byte_still_raises
    N.instrument(+"valid.fast.test") { }
    assert_raises(ArgumentError) { N.instrument(+"valid.fast.test\0") { } }
    assert_raises(ArgumentError) { N.instrument(+"") { } }
  end

  # The module's instrument uses Rails' instrumenter of the current execution state:
  # its id is the events' transaction id, a new one after the state is cleared, another
  # one on another thread -- what ActiveSupport::Notifications.instrumenter says.
  def test_the_transaction_id_is_the_instrumenter_rails_would_use
    ids = []
    subscribe("id.fast.test") { |_name, _start, _finish, id, _payload| ids << id }
    N.instrument("id.fast.test") { }
    assert_equal N.instrumenter.id, ids.last
    ActiveSupport::IsolatedExecutionState.clear
    N.instrument("id.fast.test") { }
    assert_equal N.instrumenter.id, ids.last
    refute_equal ids[0], ids[1]
    other = Thread.new { N.instrument("id.fast.test") { }; N.instrumenter.id }.value
    assert_equal other, ids.last
    refute_equal ids[1], ids[2]
    N.instrument("id.fast.test") { }
    assert_equal ids[1], ids.last
  end

  def test_with_fiber_isolation_each_fiber_has_its_instrumenter
    ids = []
    subscribe("fiber.fast.test") { |_name, _start, _finish, id, _payload| ids << id }
    saved = ActiveSupport::IsolatedExecutionState.isolation_level
    ActiveSupport::IsolatedExecutionState.isolation_level = :fiber
    begin
      N.instrument("fiber.fast.test") { }
      mine = N.instrumenter.id
      theirs = Fiber.new { N.instrument("fiber.fast.test") { }; N.instrumenter.id }.resume
      assert_equal [mine, theirs], ids
      refute_equal mine, theirs
    ensure
      ActiveSupport::IsolatedExecutionState.isolation_level = saved
    end
  end

  # The event object has Rails' Event's instance variables, in Rails' order; an event
  # class of the application's own gets them too.
  def test_event_objects_have_rails_instance_variables
    events = []
    subscribe("event.fast.test") { |event| events << event }
    N.instrument("event.fast.test", a: 1) { }
    rails = ActiveSupport::Notifications::Event.new("event.fast.test", nil, nil, "id", {})
    assert_equal rails.instance_variables, events.last.instance_variables
    assert_equal({ a: 1 }, events.last.payload)
    assert_operator events.last.duration, :>=, 0
  end

  def test_an_event_class_of_its_own_gets_the_same_instance_variables
    own = Class.new do
      attr_reader :name, :payload, :transaction_id

      def duration = @end - @time
    end
    events = []
    subscribe("own.fast.test") { |event| events << event }
    Hark.event_class = own
    begin
      N.instrument("own.fast.test", b: 2) { }
    ensure
      Hark.event_class = ActiveSupport::Notifications::Event
    end
    assert_instance_of own, events.last
    rails = ActiveSupport::Notifications::Event.new("own.fast.test", nil, nil, "id", {})
    assert_equal rails.instance_variables, events.last.instance_variables
    assert_equal "own.fast.test", events.last.name
    assert_equal({ b: 2 }, events.last.payload)
  end

  # Time.now stubbed (as travel_to does) reaches timed subscribers; once the stub is
  # gone hark reads the clock itself again, and the times are now's.
  def test_a_stubbed_time_now_is_seen_and_the_real_one_after_it
    times = []
    subscribe("time.fast.test") { |_name, start, finish, *| times << [start, finish] }
    frozen = Time.at(1_000_000_000)
    Time.stub(:now, frozen) { N.instrument("time.fast.test") { } }
    assert_equal [frozen, frozen], times.last
    before = Time.now
    N.instrument("time.fast.test") { }
    after = Time.now
    assert times.last.all? { |t| t.is_a?(Time) && t >= before && t <= after }, times.last.inspect
  end

  # GC.total_time as a module prepended to GC's singleton class makes it (a stub made
  # with Minitest's stub would alias a method another test prepends; a prepended module
  # does not): the readings given, else Ruby's.
  module GCReadings
    class << self
      attr_accessor :readings
    end

    def total_time
      GCReadings.readings&.shift || super
    end
  end
  GC.singleton_class.prepend(GCReadings) if GC.respond_to?(:total_time)

  # The GC time of an event-object event: a collection inside the block is counted, and
  # a GC.total_time that is not Ruby's own is called.
  def test_gc_time_counts_a_collection_in_the_block_and_a_redefinition_is_called
    skip "no GC.total_time" unless GC.respond_to?(:total_time)
    events = []
    subscribe("gc.fast.test") { |event| events << event }
    N.instrument("gc.fast.test") { }
    N.instrument("gc.fast.test") { GC.start }
    assert_operator events.last.gc_time, :>, 0.0
    N.instrument("gc.fast.test") { }
    assert_equal 0.0, events.last.gc_time
    GCReadings.readings = [5_000_000, 9_000_000]
    N.instrument("gc.fast.test") { }
    assert_equal 4.0, events.last.gc_time
  ensure
    GCReadings.readings = nil
  end
end
