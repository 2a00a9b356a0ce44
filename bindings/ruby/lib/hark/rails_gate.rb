# frozen_string_literal: true

module Hark
  # Whether hark/rails puts hark's fanout behind ActiveSupport::Notifications on the Rails
  # that is loaded. Only on the versions whose own tests have been run on it (PROVEN):
  # on any other, Rails keeps its own fanout and hark/rails warns once, naming the version
  # and how to opt in (HARK_RAILS_UNTESTED=1). A Rails hark has not been run against must
  # not hang, lose a log line or fail to boot because hark was loaded.
  module RailsGate
    # [major, minor] of the Rails versions hark's fanout is proven on: Rails' notification,
    # subscriber and log-subscriber tests, ActiveRecord's, ActionPack's, ActionView's and
    # railties' (make ruby-test) pass on it.
    PROVEN = [[7, 2]].freeze
    OPT_IN = "HARK_RAILS_UNTESTED"

    class << self
      # :hark or :rails, the fanout hark/rails chose; nil before hark/rails is loaded.
      attr_reader :choice
      # Why it chose it (one sentence).
      attr_reader :why

      # Decides for the ActiveSupport version given (hark/rails: the one loaded) and the
      # environment; warns on `io` once when Rails' fanout is kept. Returns whether
      # hark's fanout is to be installed.
      def decide(version, env: ENV, io: $stderr)
        return @choice == :hark if @choice
        version = Gem::Version.new(version.to_s)
        label = "Rails #{version}"
        if proven?(version)
          @choice = :hark
          @why = "#{label} is a version hark's fanout is proven on"
        elsif env[OPT_IN] == "1"
          @choice = :hark
          @why = "#{label} is not a version hark's fanout is proven on (#{proven_list}); #{OPT_IN}=1 opted in"
        else
          @choice = :rails
          @why = "#{label} is not a version hark's fanout is proven on (#{proven_list}): " \
                 "ActiveSupport::Notifications keeps Rails' own fanout; set #{OPT_IN}=1 to use hark's"
          io&.puts("hark: #{@why}")
        end
        @choice == :hark
      end

      def proven?(version)
        major, minor = version.segments
        PROVEN.include?([major, minor])
      end

      private

      def proven_list
        PROVEN.map { |v| v.join(".") }.join(", ")
      end
    end
  end

  # Hark.active? and Hark.stats while hark itself is not loaded (hark/rails kept Rails'
  # fanout): extended into Hark, so that hark's own definitions take over once it is.
  module GatedAnswers
    def active?
      false
    end

    def stats(_fanout = nil)
      status = fanout_status
      none = { cached: 0, asked_per_event: 0 }
      { fanout: status[:fanout], fanout_why: status[:why], log_subscriptions: none, other_silenceable: none,
        thread_local_levels: false, silenced_calls: 0, subscriptions: [] }
    end
  end
  extend GatedAnswers

  class << self
    # Which fanout ActiveSupport::Notifications delivers through, and why:
    #   { fanout: :hark, why: "Rails 7.2.3 is a version hark's fanout is proven on" }
    #   { fanout: :rails, why: "Rails 8.1.3 is not a version ... set HARK_RAILS_UNTESTED=1 ..." }
    # fanout is nil when ActiveSupport::Notifications is not loaded; :other when its
    # notifier is neither hark's nor Rails' own fanout.
    def fanout_status
      return { fanout: nil, why: "ActiveSupport::Notifications is not loaded" } unless defined?(::ActiveSupport::Notifications)
      notifier = ::ActiveSupport::Notifications.notifier
      if defined?(Fanout) && notifier.is_a?(Fanout)
        { fanout: :hark, why: RailsGate.why || "the notifier was set to a #{notifier.class}" }
      elsif RailsGate.choice.nil?
        { fanout: :rails, why: "hark/rails is not loaded" }
      elsif RailsGate.choice == :hark
        { fanout: :other, why: "ActiveSupport::Notifications.notifier was replaced by a #{notifier.class} since hark/rails was loaded" }
      elsif defined?(::ActiveSupport::Notifications::Fanout) && notifier.is_a?(::ActiveSupport::Notifications::Fanout)
        { fanout: :rails, why: RailsGate.why }
      else
        { fanout: :other, why: "ActiveSupport::Notifications.notifier is a #{notifier.class}; #{RailsGate.why}" }
      end
    end
  end
end
