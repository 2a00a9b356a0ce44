# frozen_string_literal: true

# hark for Ruby: Hark::Fanout, a drop-in for ActiveSupport::Notifications::Fanout whose
# registry, listener snapshots, grouping by kind and silence are hark's (a C library).
# `require "hark/rails"` installs it behind ActiveSupport::Notifications.
require "set"
require "hark/hark_ext"
require "hark/silence"
require "hark/noop"
require "hark/stats"
require "hark/event_fill"
require "hark/method_watch"
require "hark/clocks"

# Hark::VERSION is defined by the extension: the version of the C library it was
# built from (include/hark/version.h), which is the gem's.
module Hark
  # Raised when several subscribers of one event fail (as Rails' class of the same
  # name; hark/rails uses Rails' own class instead).
  class InstrumentationSubscriberError < RuntimeError
    attr_reader :exceptions

    def initialize(exceptions)
      @exceptions = exceptions
      exception_class_names = exceptions.map { |e| e.class.name }
      super "Exception(s) occurred within instrumentation subscribers: #{exception_class_names.join(', ')}"
    end
  end

  class << self
    attr_writer :subscriber_error_class

    # Whether ActiveSupport::Notifications delivers through hark's fanout (hark/rails
    # loaded, and its notifier not replaced by one that is not hark's since).
    def active?
      defined?(::ActiveSupport::Notifications) && ::ActiveSupport::Notifications.notifier.is_a?(Fanout) ? true : false
    end

    def event_class=(klass)
      @event_class = klass
      _event_class_changed # the extension keeps the class it last built events of
    end

    def subscriber_error_class
      @subscriber_error_class || InstrumentationSubscriberError
    end

    # The class of event objects handed to event-object subscribers.
    def event_class
      @event_class || (defined?(::ActiveSupport::Notifications::Event) ? ::ActiveSupport::Notifications::Event : Event)
    end

    # Rails' FanoutIteration: one failure is re-raised as itself, several as one
    # InstrumentationSubscriberError (nested ones flattened), caused by the first.
    def raise_subscriber_errors(exceptions) # :nodoc:
      error_class = subscriber_error_class
      exceptions = exceptions.flat_map do |exception|
        exception.is_a?(error_class) ? exception.exceptions : [exception]
      end
      if exceptions.size == 1
        raise exceptions.first
      else
        raise error_class.new(exceptions), cause: exceptions.first
      end
    end
  end

  # A minimal event object for use without ActiveSupport (same instance variables
  # and readers as ActiveSupport::Notifications::Event).
  class Event
    include EventFill

    attr_reader :name, :transaction_id
    attr_accessor :payload

    def time = @time && @time / 1000.0
    def end = @end && @end / 1000.0
    def duration = @end - @time
    def cpu_time = @cpu_time_finish - @cpu_time_start
    def allocations = @allocation_count_finish - @allocation_count_start
    def gc_time = (@gc_time_finish - @gc_time_start) / 1_000_000.0

    def idle_time
      diff = duration - cpu_time
      diff > 0.0 ? diff : 0.0
    end
  end

  class Fanout
    KIND_TIMED = 1
    KIND_MONOTONIC = 2
    KIND_EVENT = 3
    KIND_EVENTED = 4

    SILENCE_NEVER = 0
    SILENCE_CACHED = 1
    SILENCE_DYNAMIC = 2

    def initialize
      @mutex = Mutex.new
      @subscriptions = [] # every live subscription, in subscribe order
      @other_count = 0    # subscriptions to a Regexp or to everything
      Silence.register(self)
    end

    # Subscriptions whose silence hark caches (kept current by Hark::Silence).
    def _cached_subscriptions # :nodoc:
      @subscriptions.select { |s| s.silence_mode == SILENCE_CACHED }
    end

    # Subscriptions whose listener has a silenced? method (Hark.stats).
    def _silenceable_subscriptions # :nodoc:
      @subscriptions.select(&:silenceable)
    end

    # Evented subscriptions (whose start and finish hark may leave out, Hark::Noop).
    def _evented_subscriptions # :nodoc:
      @subscriptions.select { |s| s.kind == KIND_EVENTED }
    end

    def inspect # :nodoc:
      "#<#{self.class} (#{_topic_count + @other_count} patterns)>"
    end

    # Rails' subscribe: the kind follows the listener (start/finish, a one-argument
    # callable for event objects, otherwise timed or monotonic).
    def subscribe(pattern = nil, callable = nil, monotonic: false, &block)
      subscriber = Subscribers.new(pattern, callable || block, monotonic)
      case pattern
      when String, NilClass, Regexp
      else
        raise ArgumentError, "pattern must be specified as a String, Regexp or empty"
      end
      @mutex.synchronize do
        subscriber.attach(self)
        @subscriptions << subscriber
        @other_count += 1 unless String === pattern
      end
      subscriber
    end

    # Rails' unsubscribe: a name removes every subscription to exactly that name and
    # makes pattern subscriptions ignore it from now on; a subscription is removed.
    def unsubscribe(subscriber_or_name)
      @mutex.synchronize do
        case subscriber_or_name
        when String
          _unsubscribe_name(subscriber_or_name)
          @subscriptions.reject! { |s| String === s.raw_pattern && s.raw_pattern == subscriber_or_name && (s.detached!; true) }
        else
          if Subscribers::Evented === subscriber_or_name && subscriber_or_name.fanout.equal?(self) &&
             @subscriptions.delete(subscriber_or_name)
            _unsubscribe_id(subscriber_or_name.id)
            @other_count -= 1 unless String === subscriber_or_name.raw_pattern
            subscriber_or_name.detached!
          end
        end
      end
      nil
    end

    def clear_cache(key = nil) # :nodoc:
      # hark keeps its listener lists current on every change: nothing is cached here.
    end

    def start(name, id, payload)
      handle_stack = (execution_state[:_fanout_handle_stack] ||= [])
      handle = build_handle(name, id, payload)
      handle_stack << handle
      handle.start
    end

    def finish(name, id, payload, listeners = nil)
      handle_stack = execution_state[:_fanout_handle_stack]
      handle = handle_stack.pop
      handle.finish_with_values(name, id, payload)
    end

    # Rails' order: the subscribers of exactly this name, then the others, each in
    # subscribe order. Which of them match is hark's answer, the one delivery uses: a
    # name is its bytes (:foo is "foo", "évt".b is "évt").
    def all_listeners_for(name)
      subs = @subscriptions.dup
      exact, other = subs.partition { |s| String === s.raw_pattern }
      (exact + other).select { |s| s.subscribed_to?(name) }
    end

    def listeners_for(name)
      all_listeners_for(name).reject { |s| s.silenced?(name) }
    end

    # This is a sync queue, so there is no waiting.
    def wait
    end

    private
      def execution_state
        if defined?(::ActiveSupport::IsolatedExecutionState)
          ::ActiveSupport::IsolatedExecutionState
        else
          Thread.current
        end
      end

    public

    module Subscribers # :nodoc:
      def self.new(pattern, listener, monotonic)
        subscriber_class = monotonic ? MonotonicTimed : Timed

        if listener.respond_to?(:start) && listener.respond_to?(:finish)
          subscriber_class = Evented
        else
          # A single argument block or callable like `proc { |x| }` gets event objects
          # (not `proc { |*x| }`, `proc { |**x| }` or `proc { |x, **y| }`).
          procish = listener.respond_to?(:parameters) ? listener : listener.method(:call)

          if procish.arity == 1 && procish.parameters.length == 1
            subscriber_class = EventObject
          end
        end

        subscriber_class.new(pattern, listener)
      end

      # Rails' Matcher: what `pattern` returns for a Regexp subscription.
      class Matcher # :nodoc:
        attr_reader :pattern, :exclusions

        def initialize(pattern, subscription)
          @pattern = pattern
          @subscription = subscription
          @exclusions = Set.new
        end

        def unsubscribe!(name)
          exclusions << -name if pattern === name
        end

        def ===(name)
          @subscription.subscribed_to?(name)
        end
      end

      class Evented # :nodoc:
        attr_reader :delegate, :silenceable, :id, :fanout, :raw_pattern

        def initialize(pattern, delegate)
          @raw_pattern = pattern
          @delegate = delegate
          @silenceable = delegate.respond_to?(:silenced?)
          @can_publish = delegate.respond_to?(:publish)
          @can_publish_event = delegate.respond_to?(:publish_event)
          @fanout = nil
          @id = nil
        end

        def pattern
          case @raw_pattern
          when String then @raw_pattern
          when nil then @all ||= AllMessages.new
          else @matcher ||= Matcher.new(@raw_pattern, self)
          end
        end

        def kind
          KIND_EVENTED
        end

        # How hark asks silenced?: never, per event (dynamic), or a cached answer
        # that Hark::Silence keeps current (fixed at subscribe time).
        attr_reader :silence_mode
        attr_accessor :hark_polls # :nodoc: poll_begin calls in force on this subscription
        # :nodoc: why silenced? is asked per event (nil: it is not, or never asked)
        attr_accessor :hark_why

        def attach(fanout) # :nodoc:
          @silence_mode, @hark_why = @silenceable ? Silence.mode_for(self) : [SILENCE_NEVER, nil]
          @hark_polls = 0
          answer, certain, @hark_why = Silence.evaluate(self) if @silence_mode == SILENCE_CACHED
          @fanout = fanout
          @id = fanout._subscribe(self, @delegate, @raw_pattern, kind, @silence_mode, @can_publish,
                                  @can_publish_event, answer ? true : false)
          Silence.adjust_polls(self, certain) if @silence_mode == SILENCE_CACHED
          refresh_noop
        end

        # Tells the extension whether start and finish do nothing (Hark::Noop).
        def refresh_noop # :nodoc:
          return unless kind == KIND_EVENTED && attached?
          @fanout._set_noop(@id, Noop.method?(@delegate, :start), Noop.method?(@delegate, :finish))
        end

        def detached! # :nodoc:
          @detached = true
        end

        def attached?
          @fanout && !@detached
        end

        def publish(name, *args)
          if @can_publish
            @delegate.publish name, *args
          end
        end

        def publish_event(event)
          if @can_publish_event
            @delegate.publish_event event
          else
            publish(event.name, event.time, event.end, event.transaction_id, event.payload)
          end
        end

        def silenced?(name)
          @silenceable && @delegate.silenced?(name)
        end

        def subscribed_to?(name)
          return false unless attached?
          @fanout._subscribed_to?(@id, name)
        end

        def unsubscribe!(name)
          @fanout&._unsubscribe_name(name)
        end
      end

      class AllMessages # :nodoc:
        def ===(name)
          true
        end

        def unsubscribe!(*)
          false
        end
      end

      class Timed < Evented # :nodoc:
        def kind
          KIND_TIMED
        end

        def publish(name, *args)
          @delegate.call name, *args
        end
      end

      class MonotonicTimed < Timed # :nodoc:
        def kind
          KIND_MONOTONIC
        end
      end

      class EventObject < Evented # :nodoc:
        def kind
          KIND_EVENT
        end

        def publish_event(event)
          @delegate.call event
        end
      end
    end
  end
end
