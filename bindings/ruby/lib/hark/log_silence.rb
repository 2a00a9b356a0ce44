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
# The definers whose readers hark knows (Hark::Silence::Definers): loaded before their
# hooks are put in front of them.
require "active_support/core_ext/class/attribute"
require "active_support/core_ext/module/attribute_accessors"
require "active_support/core_ext/module/delegation"
# ActiveSupport::Configurable is not loaded here: Rails 8.1 deprecates it (loading it
# warns) and nothing else of 8.1 loads it. Its config_accessor is hooked when something
# else has loaded it (Definers.install, and Definers.configurable_loaded when it is
# included or extended later, as ActionController 7.2 and 8.0 do).
require "hark/silence"
require "hark/logger_source"

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
        super.tap { Hark::Silence.local_level_set(self) }
      end
    end

    # ActionController::Live's threads copy the parent's execution state, thread-local
    # levels included: share_with(other) (Rails 7.2), share_with(other, except: keys)
    # (8.0), share_with(other, except: keys) { ... } (8.1, which runs the block with the
    # copy and then puts the thread's own state back). Whatever the signature, it is
    # Rails' own that is called, with what it was given; the local levels in force are
    # read again from the state the thread has after the copy and after the restore.
    module ExecutionStateHooks # :nodoc:
      def share_with(other, *rest, **options, &block)
        return super.tap { Hark::Silence.state_shared } unless block
        begin
          super(other, *rest, **options) do |*args|
            Hark::Silence.state_shared
            block.call(*args)
          end
        ensure
          Hark::Silence.state_shared
        end
      end
    end

    # Rails 8.0's class_attribute (ActiveSupport::ClassAttribute.redefine): a write to the
    # class that defined the attribute only updates the value its methods close over,
    # defining nothing; a write to a subclass defines the subclass's own methods, through
    # redefine again. The first is heard through a hook in front of the private writer
    # redefine makes (LoggerSource.class_attribute_writers puts it there for the readers
    # it follows), the second here.
    module ClassAttributeHooks # :nodoc:
      def redefine(owner, name, namespaced_name, value)
        super.tap { Hark::Silence::LoggerSource.class_attribute_redefined(owner, name, namespaced_name) }
      end
    end

    # config_accessor readers (ActionController::Base.logger, ActionMailer::Base.logger)
    # read ActiveSupport::Configurable's OrderedOptions.
    module OrderedOptionsHooks # :nodoc:
      def []=(key, value)
        super.tap { Hark::Silence.changed! if Hark::Silence::LoggerSource.config_key?(key.to_sym) }
      end

      %i[store delete].each do |name|
        define_method(name) do |key, *rest, &block|
          super(key, *rest, &block).tap do
            Hark::Silence.changed! if key.respond_to?(:to_sym) && Hark::Silence::LoggerSource.config_key?(key.to_sym)
          end
        end
      end

      %i[update merge! replace clear].each do |name|
        define_method(name) do |*args, &block|
          super(*args, &block).tap { Hark::Silence.changed! }
        end
      end
    end

    # cattr_accessor / mattr_accessor readers read a class variable.
    module ClassVariableHooks # :nodoc:
      def class_variable_set(name, value)
        super.tap { Hark::Silence.changed! if Hark::Silence::LoggerSource.class_variable?(name.to_sym) }
      end

      def remove_class_variable(name)
        super.tap { Hark::Silence.changed! if Hark::Silence::LoggerSource.class_variable?(name.to_sym) }
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

[Hark::Silence::LoggerHooks, Hark::Silence::LocalLevelHooks, Hark::Silence::ExecutionStateHooks,
 Hark::Silence::OrderedOptionsHooks, Hark::Silence::ClassVariableHooks].each { |m| Hark::Silence.hook_module(m) }
::Logger.prepend(Hark::Silence::LoggerHooks)
::ActiveSupport::LoggerThreadSafeLevel.prepend(Hark::Silence::LocalLevelHooks)
if defined?(::ActiveSupport::IsolatedExecutionState)
  ::ActiveSupport::IsolatedExecutionState.singleton_class.prepend(Hark::Silence::ExecutionStateHooks)
end
require "active_support/ordered_options"
::ActiveSupport::OrderedOptions.prepend(Hark::Silence::OrderedOptionsHooks)
::Module.prepend(Hark::Silence::ClassVariableHooks)
::ActiveSupport::BroadcastLogger.prepend(Hark::Silence::BroadcastHooks) if defined?(::ActiveSupport::BroadcastLogger)
::ActiveSupport::LogSubscriber.singleton_class.prepend(Hark::Silence::LogSubscriberClassHooks)
::ActiveSupport::LogSubscriber.prepend(Hark::Silence::LogSubscriberHooks)
if defined?(::ActiveSupport::ClassAttribute) && ::ActiveSupport::ClassAttribute.respond_to?(:redefine)
  Hark::Silence.hook_module(Hark::Silence::ClassAttributeHooks)
  ::ActiveSupport::ClassAttribute.singleton_class.prepend(Hark::Silence::ClassAttributeHooks)
end
Hark::Silence::Definers.install
