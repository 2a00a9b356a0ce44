# frozen_string_literal: true

require "monitor"

module Hark
  # Silenced log subscribers at hark's cost.
  #
  # Rails asks ActiveSupport::LogSubscriber#silenced?(name) on every event: is there a
  # logger, and does its level drop the event's log level? hark instead caches the
  # answer per subscription (HARK_SILENCE_CACHED), so a silenced log subscriber costs
  # what an unsubscribed event costs, and re-asks when the answer may have changed:
  #
  #   - a logger's level changes (Logger#level=, #sev_threshold=, #debug! and friends,
  #     ActiveSupport::Logger, a BroadcastLogger gaining or losing a logger);
  #   - ActiveSupport::LogSubscriber.logger= or a subscriber's event levels change;
  #   - `logger` or `silenced?` is (re)defined on a log subscriber class.
  #
  # A thread-local level (Logger#silence, #log_at, #local_level=) makes the answer
  # differ per thread: while any is in force, every cached subscription is asked per
  # event again (hark_subscription_poll_begin), on the instrumenting thread.
  #
  # Where the answer cannot be known to be current, the subscription is asked per
  # event: a silenced? or logger that is not Rails' own (unless `logger` just returns
  # a constant), a nil logger (Rails.logger may appear later), a logger whose level
  # and level predicates are not Ruby's or ActiveSupport's, or a non-String pattern.
  module Silence
    @monitor = Monitor.new
    @fanouts = ObjectSpace::WeakMap.new
    @locals = 0

    # Instructions of a `logger` method that only returns a constant.
    CONSTANT_INSNS = %i[opt_getinlinecache getconstant opt_setinlinecache opt_getconstant_path
                        putobject putnil leave nop].freeze
    # Instructions of a `silenced?` that returns a literal (true, false, nil).
    LITERAL_INSNS = %i[putobject putnil leave nop].freeze
    # Methods whose (re)definition anywhere may change a cached answer.
    WATCHED = %i[silenced? logger level debug? info? error?].freeze

    class << self
      attr_reader :locals

      def register(fanout) # :nodoc:
        @fanouts[fanout] = true
      end

      # SILENCE_CACHED for Rails' log subscribers on an exact name and for subscribers
      # whose silenced? returns a literal; SILENCE_DYNAMIC (asked per event) otherwise.
      def mode_for(subscription)
        delegate = subscription.delegate
        return Fanout::SILENCE_CACHED if String === subscription.raw_pattern && log_subscriber?(delegate)
        return Fanout::SILENCE_CACHED if literal_silenced?(delegate)
        Fanout::SILENCE_DYNAMIC
      end

      # [silenced?, certain]: the answer now, and whether hooks will say when it changes.
      def evaluate(subscription)
        delegate = subscription.delegate
        certain = certain?(delegate)
        [delegate.silenced?(subscription.raw_pattern) ? true : false, certain]
      rescue Exception # rubocop:disable Lint/RescueException
        [false, false]
      end

      # Brings the subscription's polling in line: one poll while any thread-local
      # level is in force, one more while the answer is uncertain.
      def adjust_polls(subscription, certain)
        fanout = subscription.fanout
        desired = (@locals > 0 ? 1 : 0) + (certain ? 0 : 1)
        while subscription.hark_polls < desired
          fanout._poll(subscription.id, true)
          subscription.hark_polls += 1
        end
        while subscription.hark_polls > desired
          fanout._poll(subscription.id, false)
          subscription.hark_polls -= 1
        end
      end

      # Something the cached answers depend on may have changed: ask again.
      def changed!
        @monitor.synchronize do
          fanouts = []
          @fanouts.each_key { |f| fanouts << f }
          fanouts.each do |fanout|
            fanout._cached_subscriptions.each do |subscription|
              next unless subscription.attached?
              answer, certain = evaluate(subscription)
              fanout._set_silenced(subscription.id, answer)
              adjust_polls(subscription, certain)
            end
          end
        end
        nil
      end

      # A thread-local level was set (from none) or cleared (to none).
      def local_level_changed(before, after) # :nodoc:
        return if before.nil? == after.nil?
        @monitor.synchronize do
          @locals += after.nil? ? -1 : 1
          @locals = 0 if @locals < 0
          changed!
        end
      end

      private
        def log_subscriber?(delegate)
          defined?(::ActiveSupport::LogSubscriber) && ::ActiveSupport::LogSubscriber === delegate
        end

        def certain?(delegate)
          return literal_silenced?(delegate) unless log_subscriber?(delegate)
          return false unless delegate.method(:silenced?).owner == ::ActiveSupport::LogSubscriber
          return false unless trusted_logger_method?(delegate)
          trusted_logger?(delegate.logger)
        end

        def trusted_logger_method?(delegate)
          m = delegate.method(:logger)
          if m.owner == ::ActiveSupport::LogSubscriber
            ::ActiveSupport::LogSubscriber.method(:logger).owner == ::ActiveSupport::LogSubscriber.singleton_class
          else
            constant_method?(m)
          end
        end

        def literal_silenced?(delegate)
          constant_method?(delegate.method(:silenced?), LITERAL_INSNS)
        rescue StandardError
          false
        end

        def constant_method?(m, allowed = CONSTANT_INSNS)
          iseq = RubyVM::InstructionSequence.of(m)
          return false unless iseq
          insns = iseq.to_a.last.grep(Array).map(&:first)
          !insns.empty? && (insns - allowed).empty?
        rescue StandardError
          false
        end

        def trusted_logger?(logger, depth = 0)
          return false if logger.nil? || depth > 4
          if defined?(::ActiveSupport::BroadcastLogger) && ::ActiveSupport::BroadcastLogger === logger
            return false unless %i[level debug? info? error?].all? { |m| logger.method(m).owner == ::ActiveSupport::BroadcastLogger }
            return logger.broadcasts.all? { |l| trusted_logger?(l, depth + 1) }
          end
          return false unless defined?(::Logger) && ::Logger === logger
          owners = [::Logger]
          owners << ::ActiveSupport::LoggerThreadSafeLevel if defined?(::ActiveSupport::LoggerThreadSafeLevel)
          %i[level debug? info? error?].all? { |m| owners.include?(logger.method(m).owner) }
        end
    end

    # Any method named in WATCHED being defined, removed or undefined anywhere, or a
    # module defining one being included, prepended or extended, re-asks every cached
    # answer (these are rare; instrumenting pays nothing for them).
    module ModuleHooks # :nodoc:
      private

      def method_added(name)
        super
        Hark::Silence.changed! if WATCHED.include?(name)
      end

      def method_removed(name)
        super
        Hark::Silence.changed! if WATCHED.include?(name)
      end

      def method_undefined(name)
        super
        Hark::Silence.changed! if WATCHED.include?(name)
      end

      def append_features(base)
        super.tap { Hark::Silence.module_changed(self) }
      end

      def prepend_features(base)
        super.tap { Hark::Silence.module_changed(self) }
      end

      def extend_object(obj)
        super.tap { Hark::Silence.module_changed(self) }
      end
    end

    module ObjectHooks # :nodoc:
      private

      def singleton_method_added(name)
        super
        Hark::Silence.changed! if WATCHED.include?(name)
      end

      def singleton_method_removed(name)
        super
        Hark::Silence.changed! if WATCHED.include?(name)
      end

      def singleton_method_undefined(name)
        super
        Hark::Silence.changed! if WATCHED.include?(name)
      end
    end

    def self.module_changed(mod) # :nodoc:
      changed! if WATCHED.any? { |m| mod.method_defined?(m) || mod.private_method_defined?(m) }
    end
  end
end

::Module.prepend(Hark::Silence::ModuleHooks)
::BasicObject.prepend(Hark::Silence::ObjectHooks)
