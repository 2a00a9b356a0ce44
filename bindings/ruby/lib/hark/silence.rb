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
    @locals = {}     # [execution context, local-level key] => true, for each local level in force
    @level_keys = {} # every local-level key seen (to recognise them in a shared state)

    # Instructions of a `logger` method that only returns a constant.
    CONSTANT_INSNS = %i[opt_getinlinecache getconstant opt_setinlinecache opt_getconstant_path
                        putobject putnil leave nop].freeze
    # Instructions of a `silenced?` that returns a literal (true, false, nil).
    LITERAL_INSNS = %i[putobject putnil leave nop].freeze
    # Methods whose (re)definition anywhere may change a cached answer (with the readers
    # LoggerSource follows).
    WATCHED = %i[silenced? logger level debug? info? error? local_level level= sev_threshold= local_level=].freeze
    # Logger methods whose owner must be Ruby's or ActiveSupport's for an answer to be cached.
    LEVEL_READERS = %i[level debug? info? error?].freeze

    class << self
      def register(fanout) # :nodoc:
        # The fanout is the value too: WeakMap's iteration skips entries whose value is
        # no longer alive, not entries whose key is not (Ruby 3.1), and a fanout found
        # dead but not yet swept must not be brought back (its ivars may be gone).
        @fanouts[fanout] = fanout
      end

      def each_fanout(&block) # :nodoc:
        fanouts = []
        @fanouts.each_value { |f| fanouts << f }
        fanouts.each(&block)
      end

      # A method was defined, removed or undefined somewhere: re-ask what depends on it.
      def method_changed(name) # :nodoc:
        changed! if watched?(name)
        Noop.changed! if defined?(Noop) && Noop::NAMES.include?(name)
      end

      # Whether a thread-local level is in force anywhere (cached answers are then
      # asked per event).
      def locals?
        @monitor.synchronize do
          prune_locals
          !@locals.empty?
        end
      end

      def watched?(name) # :nodoc:
        WATCHED.include?(name) || LoggerSource.reader?(name)
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
      # An uncertain answer is asked per event anyway, so it is not asked here (asking
      # could load what `logger` names, e.g. ActiveRecord::Base, too early).
      def evaluate(subscription)
        delegate = subscription.delegate
        return [false, false] unless certain?(delegate)
        [delegate.silenced?(subscription.raw_pattern) ? true : false, true]
      rescue Exception # rubocop:disable Lint/RescueException
        [false, false]
      end

      # Brings the subscription's polling in line: one poll while any thread-local
      # level is in force, one more while the answer is uncertain.
      def adjust_polls(subscription, certain)
        fanout = subscription.fanout
        desired = (locals? ? 1 : 0) + (certain ? 0 : 1)
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
          each_fanout do |fanout|
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

      # `logger`'s thread-local level was set or cleared on the current execution
      # context (thread or fiber).
      def local_level_set(logger) # :nodoc:
        key = local_key(logger)
        present = !logger.local_level.nil?
        @monitor.synchronize do
          before = !@locals.empty?
          entry = [context, key]
          if present
            @level_keys[key] = true
            @locals[entry] = true
          else
            @locals.delete(entry)
          end
          prune_locals
          changed! if before != !@locals.empty?
        end
      end

      # The current context took a copy of another's execution state
      # (IsolatedExecutionState.share_with, as ActionController::Live's threads do): the
      # local levels it copied are in force here too.
      def state_shared # :nodoc:
        ctx = context
        state = ctx.respond_to?(:active_support_execution_state) ? ctx.active_support_execution_state : nil
        @monitor.synchronize do
          before = !@locals.empty?
          @locals.delete_if { |(c, _), _| c.equal?(ctx) }
          state&.each { |key, value| @locals[[ctx, key]] = true if !value.nil? && @level_keys.key?(key) }
          prune_locals
          changed! if before != !@locals.empty?
        end
      end

      private
        def context
          defined?(::ActiveSupport::IsolatedExecutionState) ? ::ActiveSupport::IsolatedExecutionState.context : Thread.current
        end

        def local_key(logger)
          logger.respond_to?(:local_level_key, true) ? logger.send(:local_level_key) : [:hark_logger, logger.object_id]
        end

        # Local levels of threads or fibers that have ended are no longer in force.
        def prune_locals
          @locals.delete_if { |(ctx, _), _| !ctx.alive? }
        end

        def log_subscriber?(delegate)
          defined?(::ActiveSupport::LogSubscriber) && ::ActiveSupport::LogSubscriber === delegate
        end

        def certain?(delegate)
          return literal_silenced?(delegate) unless log_subscriber?(delegate)
          return false unless delegate.method(:silenced?).owner == ::ActiveSupport::LogSubscriber
          reader = delegate.method(:logger) # may be private (ActiveRecord's is)
          kind = LoggerSource.source(reader)
          return false unless kind
          logger = reader.call
          # A nil logger is certain when the reader is followed (setting one is heard), not
          # for Rails' LogSubscriber.logger, which reads Rails.logger while it is nil.
          return kind == :tracked if logger.nil?
          trusted_logger?(logger)
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
            return false unless LEVEL_READERS.all? { |m| logger.method(m).owner == ::ActiveSupport::BroadcastLogger }
            return logger.broadcasts.all? { |l| trusted_logger?(l, depth + 1) }
          end
          return false unless defined?(::Logger) && ::Logger === logger
          owners = [::Logger]
          thread_safe = defined?(::ActiveSupport::LoggerThreadSafeLevel) && ::ActiveSupport::LoggerThreadSafeLevel === logger
          owners << ::ActiveSupport::LoggerThreadSafeLevel if thread_safe
          return false unless LEVEL_READERS.all? { |m| owners.include?(logger.method(m).owner) }
          # Whatever sets the level must reach hark: writers overridden in a subclass (or on
          # the object) get the hook in front of them.
          return false unless defined?(LoggerHooks)
          return false unless hooked?(logger, :level=, LoggerHooks) && hooked?(logger, :sev_threshold=, LoggerHooks)
          return true unless thread_safe
          # A local_level of the application's own may keep its level anywhere: asked per event.
          return false unless logger.method(:local_level).owner == ::ActiveSupport::LoggerThreadSafeLevel
          hooked?(logger, :local_level=, LocalLevelHooks)
        end

        def hooked?(logger, writer, hook)
          owner = logger.method(writer).owner
          return true if owner == hook
          target = logger.class.ancestors.include?(owner) ? logger.class : logger.singleton_class
          target.prepend(hook)
          logger.method(writer).owner == hook
        rescue StandardError
          false
        end
    end

    # Any method named in WATCHED being defined, removed or undefined anywhere, or a
    # module defining one being included, prepended or extended, re-asks every cached
    # answer (these are rare; instrumenting pays nothing for them).
    module ModuleHooks # :nodoc:
      private

      def method_added(name)
        super
        Hark::Silence.method_changed(name)
      end

      def method_removed(name)
        super
        Hark::Silence.method_changed(name)
      end

      def method_undefined(name)
        super
        Hark::Silence.method_changed(name)
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
        Hark::Silence.method_changed(name)
      end

      def singleton_method_removed(name)
        super
        Hark::Silence.method_changed(name)
      end

      def singleton_method_undefined(name)
        super
        Hark::Silence.method_changed(name)
      end
    end

    # hark's own hooks (prepended in front of a logger's writers) change no answer.
    @hooks = {}

    def self.hook_module(mod) # :nodoc:
      @hooks[mod] = true
      mod
    end

    def self.module_changed(mod) # :nodoc:
      return if @hooks.key?(mod)
      defines = ->(m) { mod.method_defined?(m) || mod.private_method_defined?(m) }
      changed! if watched_names.any?(&defines)
      Noop.changed! if defined?(Noop) && Noop::NAMES.any?(&defines)
    end

    def self.watched_names # :nodoc:
      WATCHED + LoggerSource.readers
    end
  end
end

require "hark/logger_source"

::Module.prepend(Hark::Silence::ModuleHooks)
::BasicObject.prepend(Hark::Silence::ObjectHooks)
