# frozen_string_literal: true

# Hooks that tell Hark::Silence when a cached log-subscriber answer may have changed
# (loaded by hark/rails). Each calls the original first, then asks again.
require "logger"
require "active_support/logger"
require "active_support/log_subscriber"
begin
  require "active_support/broadcast_logger"
rescue LoadError # before Rails 7.1
end
require "hark/silence"

module Hark
  module Silence
    module LoggerHooks # :nodoc:
      def level=(severity)
        super.tap { Hark::Silence.changed! }
      end

      def sev_threshold=(severity)
        super.tap { Hark::Silence.changed! }
      end
    end

    module LocalLevelHooks # :nodoc:
      def local_level=(level)
        before = local_level
        super.tap { Hark::Silence.local_level_changed(before, local_level) }
      end
    end

    module BroadcastHooks # :nodoc:
      def broadcast_to(*loggers)
        super.tap { Hark::Silence.changed! }
      end

      def stop_broadcasting_to(logger)
        super.tap { Hark::Silence.changed! }
      end
    end

    module LogSubscriberClassHooks # :nodoc:
      def logger=(logger)
        super.tap { Hark::Silence.changed! }
      end

      def method_added(name)
        super
        Hark::Silence.changed! if name == :logger || name == :silenced?
      end
    end

    module LogSubscriberHooks # :nodoc:
      def event_levels=(levels)
        super.tap { Hark::Silence.changed! }
      end

      def singleton_method_added(name)
        super
        Hark::Silence.changed! if name == :logger || name == :silenced?
      end
    end
  end
end

::Logger.prepend(Hark::Silence::LoggerHooks)
::ActiveSupport::LoggerThreadSafeLevel.prepend(Hark::Silence::LocalLevelHooks)
::ActiveSupport::BroadcastLogger.prepend(Hark::Silence::BroadcastHooks) if defined?(::ActiveSupport::BroadcastLogger)
::ActiveSupport::LogSubscriber.singleton_class.prepend(Hark::Silence::LogSubscriberClassHooks)
::ActiveSupport::LogSubscriber.prepend(Hark::Silence::LogSubscriberHooks)
