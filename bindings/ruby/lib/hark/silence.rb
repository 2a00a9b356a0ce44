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
  # event (and the subscription's hark_why says why, for Hark.stats): a silenced? that
  # is not Rails' own (RAILS_SILENCED, or a literal: `def silenced?(_) = true`), a
  # `logger` whose source LoggerSource does not follow, a nil logger read from
  # ActiveSupport::LogSubscriber.logger (Rails.logger may appear later), a logger whose
  # level and level predicates are not Ruby's or ActiveSupport's, or a non-String
  # pattern. Every method is known by how it was defined (hark/logger_source.rb), never
  # by its bytecode.
  module Silence
    @monitor = Monitor.new
    @fanouts = ObjectSpace::WeakMap.new
    @locals = {}     # [execution context, local-level key] => true, for each local level in force
    @level_keys = {} # every local-level key seen (to recognise them in a shared state)

    # Rails' own silenced? methods other than LogSubscriber's, known by owner and file:
    # each answers "no logger, or its level drops this event" for the subscriber's own
    # `logger`, as LogSubscriber#silenced? does, so it is cached the same way.
    RAILS_SILENCED = {
      # render_template / render_layout's "Rendering ..." line, at :debug
      "ActionView::LogSubscriber::Start" => "action_view/log_subscriber.rb"
    }.freeze

    # Rails 8.1's ActiveSupport::StructuredEventSubscriber#silenced?(event), known by owner
    # and file: "Rails.event has no subscribers, or the event is debug-only and the event
    # reporter is not in debug mode". Cached where that answer is known without the
    # fiber-local debug mode (EventReporter#with_debug, inherited by every fiber and thread
    # started inside it, and settable with Fiber[]= from anywhere): while the reporter has
    # no subscribers (silenced), for an event that is not debug-only (not silenced), or
    # while the reporter is in debug mode (not silenced). Otherwise asked per event.
    STRUCTURED = ["ActiveSupport::StructuredEventSubscriber", "active_support/structured_event_subscriber.rb"].freeze

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
        return if Thread.current[:hark_silence_quiet]
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

      # Runs the block with the method hooks of this thread quiet: for loading code
      # that cannot change any answer (hark's own parser, Ripper).
      def quietly(&block)
        with_thread_flag(:hark_silence_quiet, &block)
      end

      # Runs the block with the thread-local `key` set, then as it was.
      def with_thread_flag(key) # :nodoc:
        saved = Thread.current[key]
        Thread.current[key] = true
        yield
      ensure
        Thread.current[key] = saved
      end

      # [mode, why]: SILENCE_CACHED for Rails' log subscribers (and Rails' own other
      # silenced? methods) on an exact name and for subscribers whose silenced? returns
      # a literal; SILENCE_DYNAMIC (asked per event, `why` says why) otherwise.
      def mode_for(subscription)
        delegate = subscription.delegate
        rails = log_subscriber?(delegate) || rails_silenced?(delegate) || structured?(delegate)
        if String === subscription.raw_pattern
          return [Fanout::SILENCE_CACHED, nil] if rails || literal_silenced?(delegate)
        elsif literal_silenced?(delegate)
          return [Fanout::SILENCE_CACHED, nil]
        elsif rails
          return [Fanout::SILENCE_DYNAMIC, "subscribed to a #{subscription.raw_pattern.class}, not one name"]
        end
        [Fanout::SILENCE_DYNAMIC, "#{LoggerSource.describe(delegate.method(:silenced?))} is not Rails' own silenced? nor a literal"]
      rescue StandardError
        [Fanout::SILENCE_DYNAMIC, "silenced? could not be examined"]
      end

      # [silenced?, certain, why]: the answer now, whether hooks will say when it
      # changes, and if not, why. An uncertain answer is asked per event anyway, so it is
      # not asked here (asking could load what `logger` names, e.g. ActiveRecord::Base,
      # too early).
      def evaluate(subscription)
        delegate = subscription.delegate
        why = uncertainty(delegate, subscription.raw_pattern)
        return [false, false, why] if why
        [delegate.silenced?(subscription.raw_pattern) ? true : false, true, nil]
      rescue Exception => e # rubocop:disable Lint/RescueException
        [false, false, "silenced? raised #{e.class}"]
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
              answer, certain, why = evaluate(subscription)
              fanout._set_silenced(subscription.id, answer)
              subscription.hark_why = why
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

        # nil when the cached answer will be kept current, else why not.
        def uncertainty(delegate, name)
          return structured_uncertainty(delegate, name) if structured?(delegate)
          silenced = delegate.method(:silenced?)
          unless log_subscriber?(delegate) || rails_silenced?(delegate)
            return literal_silenced?(delegate) ? nil : "#{LoggerSource.describe(silenced)} is not a literal any more"
          end
          unless silenced.owner == ::ActiveSupport::LogSubscriber || rails_silenced?(delegate)
            return "#{LoggerSource.describe(silenced)} is not Rails' own silenced?"
          end
          reader = delegate.method(:logger) # may be private (ActiveRecord's is)
          kind, why = LoggerSource.source(reader)
          return why unless kind
          logger = reader.call
          # A nil logger is certain when the reader is followed (setting one is heard), not
          # for Rails' LogSubscriber.logger, which reads Rails.logger while it is nil.
          if logger.nil?
            return kind == :tracked ? nil : "the logger is nil (ActiveSupport::LogSubscriber.logger reads Rails.logger while nil)"
          end
          trusted_logger?(logger) ? nil : "the logger (#{logger.class}) is not one whose level hark can follow"
        end

        # Rails 8.1's StructuredEventSubscriber#silenced? (STRUCTURED: owner and file, its
        # class loaded by something else); the hooks that hear what it reads go in the
        # first time one is seen.
        def structured?(delegate)
          return false unless Definers.loaded?(::ActiveSupport, :StructuredEventSubscriber)
          klass = ::ActiveSupport::StructuredEventSubscriber
          return false unless klass.name == STRUCTURED[0] && klass === delegate
          m = delegate.method(:silenced?)
          return false unless m.owner == klass && m.source_location&.first&.end_with?("/#{STRUCTURED[1]}")
          StructuredHooks.install
        rescue StandardError
          false
        end

        def structured_uncertainty(delegate, name)
          reporter = ::ActiveSupport.event_reporter
          unless Definers.loaded?(::ActiveSupport, :EventReporter) && reporter.instance_of?(::ActiveSupport::EventReporter) &&
                 %i[subscribers subscribe unsubscribe debug_mode?].all? { |m| [::ActiveSupport::EventReporter, StructuredHooks::Reporter].include?(reporter.method(m).owner) }
            return "the event reporter (#{reporter.class}) is not ActiveSupport::EventReporter"
          end
          if StructuredHooks.handed_out?(reporter)
            return "ActiveSupport.event_reporter.subscribers was read outside Rails' silenced?: " \
                   "the array may be changed in place (as Rails' own tests do)"
          end
          return nil if StructuredHooks.own_read { reporter.subscribers.empty? } # silenced, whatever the event
          check = delegate.instance_variable_get(:@silenced_events)&.[](name)
          return nil if check.nil? # not debug-only: not silenced
          klass = ::ActiveSupport::StructuredEventSubscriber
          unless klass.const_defined?(:DEBUG_CHECK, false) && check.equal?(klass::DEBUG_CHECK)
            return "#{name} is silenced by a check that is not Rails' debug-mode check"
          end
          return nil if reporter.instance_variable_get(:@debug_mode) # debug mode: not silenced
          "#{name} is debug-only and ActiveSupport.event_reporter has subscribers and is not in " \
            "debug mode: the answer is per fiber (with_debug)"
        end

        # Rails' own silenced? of RAILS_SILENCED (owner and file).
        def rails_silenced?(delegate)
          m = delegate.method(:silenced?)
          file = RAILS_SILENCED[m.owner.name]
          file && m.source_location&.first&.end_with?("/#{file}") ? true : false
        rescue StandardError
          false
        end

        # `def silenced?(_name) = true` (or false, nil), read from its definition.
        def literal_silenced?(delegate)
          MethodBody.of(delegate.method(:silenced?))&.kind == :literal
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
        Hark::Silence::Definers.configurable_loaded
        super.tap { Hark::Silence.module_changed(self) }
      end

      def prepend_features(base)
        Hark::Silence::Definers.configurable_loaded
        super.tap { Hark::Silence.module_changed(self) }
      end

      def extend_object(obj)
        Hark::Silence::Definers.configurable_loaded
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

    # What Rails 8.1's StructuredEventSubscriber#silenced? reads, heard where it changes:
    # the event reporter replaced, gaining or losing a subscriber, its debug mode set, a
    # subscriber's debug-only events set (attach_to and debug_only do, after subscribing).
    # EventReporter#subscribers hands out the reporter's own array, which can be changed
    # in place unheard: once anything but Rails' silenced? (or hark) has read it, that
    # reporter's answers are asked per event.
    module StructuredHooks # :nodoc:
      @handed_out = ObjectSpace::WeakMap.new

      class << self
        def handed_out?(reporter)
          @handed_out.key?(reporter)
        end

        # `reporter.subscribers` was read from `location`.
        def read(reporter, location)
          return if Thread.current[:hark_own_read] || @handed_out.key?(reporter)
          return if location&.path&.end_with?("/#{STRUCTURED[1]}")
          @handed_out[reporter] = true
          Silence.changed!
        end

        # Runs the block with hark's own reads of `subscribers` not counted.
        def own_read(&block)
          Silence.with_thread_flag(:hark_own_read, &block)
        end
      end

      module Reporter
        def subscribers
          Hark::Silence::StructuredHooks.read(self, caller_locations(1, 1).first)
          super
        end

        def subscribe(*args, &filter)
          super.tap { Hark::Silence.changed! }
        end

        def unsubscribe(*args)
          super.tap { Hark::Silence.changed! }
        end

        def debug_mode=(value)
          super.tap { Hark::Silence.changed! }
        end
      end

      module ReporterWriter
        def event_reporter=(reporter)
          super.tap { Hark::Silence.changed! }
        end
      end

      module Subscriber
        def silenced_events=(events)
          super.tap { Hark::Silence.changed! }
        end
      end

      @installed = false

      # Puts the hooks in, once; true.
      def self.install
        return true if @installed
        @installed = true
        [Reporter, ReporterWriter, Subscriber].each { |m| Silence.hook_module(m) }
        ::ActiveSupport::EventReporter.prepend(Reporter)
        ::ActiveSupport.singleton_class.prepend(ReporterWriter)
        ::ActiveSupport::StructuredEventSubscriber.prepend(Subscriber)
        true
      end
    end

    # hark's own hooks (prepended in front of a logger's writers) change no answer.
    @hooks = {}

    def self.hook_module(mod) # :nodoc:
      @hooks[mod] = true
      mod
    end

    def self.module_changed(mod) # :nodoc:
      return if @hooks.key?(mod) || Thread.current[:hark_silence_quiet]
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
