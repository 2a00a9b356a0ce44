# frozen_string_literal: true

# Makes hark the fanout behind ActiveSupport::Notifications: require this before the
# application subscribes anything (in a Rails app: config/boot.rb, after bundler). Only
# on the Rails versions Hark::RailsGate names as proven, or with HARK_RAILS_UNTESTED=1.
#
#   ActiveSupport::Notifications::Fanout   is a subclass of Hark::Fanout
#   ActiveSupport::Notifications.notifier  is a new instance of it
require "active_support"
require "active_support/notifications"
require "hark/rails_gate"

# Only on a Rails hark's fanout is proven on (Hark::RailsGate); on any other, Rails keeps
# its own fanout, hark is not loaded (neither its extension nor its method hooks), and
# one warning says so; Hark.active?, Hark.fanout_status and Hark.stats say why.
return unless Hark::RailsGate.decide(ActiveSupport.gem_version)

require "hark"

module ActiveSupport
  module Notifications
    remove_const(:Fanout) if const_defined?(:Fanout, false) && !(const_get(:Fanout, false) <= ::Hark::Fanout)

    # hark's fanout under Rails' name (so that inspect and Fanout.new read as Rails').
    class Fanout < ::Hark::Fanout
    end

    self.notifier = Fanout.new
  end
end

module Hark
  # Rails' Instrumenter#instrument in C when the notifier is hark's (prepended, so an
  # instrumenter hook prepended later still runs first and reaches it through super).
  module InstrumenterHooks
  end
end

module ActiveSupport
  module Notifications
    class << self
      # Rails' instrumenter, for the notifier the C instrument keeps rather than the one
      # @notifier holds now: the event goes where the listening check looked.
      def hark_instrumenter_for(notifier) # :nodoc:
        registry[notifier] ||= Instrumenter.new(notifier)
      end

      # Rails' instrument, on the notifier the C instrument keeps when it is not hark's
      # (public: the C instrument passes its block on, which a private call refuses).
      def hark_instrument_with(notifier, name, payload) # :nodoc:
        if notifier.listening?(name)
          hark_instrumenter_for(notifier).instrument(name, payload) { yield payload if block_given? }
        else
          yield payload if block_given?
        end
      end
    end
  end
end

module Hark
  # ActiveSupport::Notifications.notifier= also tells the C instrument, which keeps the
  # notifier it last read (setting the @notifier variable directly is not seen).
  module NotifierWriterHook
    def notifier=(notifier)
      super
    ensure
      Hark._notifier_changed
    end
  end
end
ActiveSupport::Notifications.singleton_class.prepend(Hark::NotifierWriterHook)

# ActiveSupport::Notifications.instrument: nobody listening costs one lookup and one load;
# otherwise it goes through the kept notifier's instrumenter as Rails' does.
Hark._install_rails(ActiveSupport::Notifications, Hark::InstrumenterHooks)
ActiveSupport::Notifications::Instrumenter.prepend(Hark::InstrumenterHooks)

# The module's instrument runs the event in place, as Instrumenter#instrument would,
# while that method is hark's own (nothing prepended in front of it since).
Hark::MethodWatch.on(:instrument) do
  instrumenter = ActiveSupport::Notifications::Instrumenter
  ours = instrumenter.instance_method(:instrument).owner.equal?(Hark::InstrumenterHooks)
  Hark._rails_instrument_direct(ours ? instrumenter : nil)
end

# The module's instrument finds Rails' instrumenter where Rails keeps it (the current
# execution state's registry) without Rails' method calls, when that is where this
# version of Rails keeps it: checked here once, against Rails' own answer, and the
# isolation level read again whenever it changes.
if defined?(ActiveSupport::IsolatedExecutionState)
  module Hark
    # ActiveSupport::IsolatedExecutionState.isolation_level= also tells the extension
    # (while the layout checked at install time holds).
    module IsolationLevelHook
      class << self
        attr_accessor :layout # IsolatedExecutionState, or nil when the check failed
      end

      def isolation_level=(level)
        super
      ensure
        Hark._rails_instrumenter_layout(IsolationLevelHook.layout)
      end
    end
  end
  Hark::IsolationLevelHook.layout = ActiveSupport::IsolatedExecutionState
  Hark._rails_instrumenter_layout(ActiveSupport::IsolatedExecutionState)
  ours = Hark._rails_instrumenter(ActiveSupport::Notifications)
  unless ours.equal?(ActiveSupport::Notifications.hark_instrumenter_for(ActiveSupport::Notifications.notifier))
    Hark::IsolationLevelHook.layout = nil
    Hark._rails_instrumenter_layout(nil)
  end
  ActiveSupport::IsolatedExecutionState.singleton_class.prepend(Hark::IsolationLevelHook)
end

Hark.subscriber_error_class = ActiveSupport::Notifications::InstrumentationSubscriberError
ActiveSupport::Notifications::Event.include(Hark::EventFill)
Hark.event_class = ActiveSupport::Notifications::Event
require "hark/log_silence"

# Once a Rails application has booted, one line on stderr names any log subscriber hark
# could not cache (Hark.warn_uncached; Hark.boot_warning = false turns it off).
ActiveSupport.on_load(:after_initialize) { Hark.warn_uncached if Hark.boot_warning }

# hark's Railtie (config.hark.metrics, .otlp, .recorder), defined as the application class
# is: Rails is loaded by then, and config/application.rb can set config.hark.
ActiveSupport.on_load(:before_configuration) { require "hark/railtie" }
