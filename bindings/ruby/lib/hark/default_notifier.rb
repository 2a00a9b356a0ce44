# frozen_string_literal: true

require "hark"

module Hark
  # hark's fanout behind ActiveSupport::Notifications: what hark's exporters (Recorder,
  # Metrics, OTLP) attach to when given no notifier. Raises ArgumentError when
  # ActiveSupport::Notifications does not deliver through it, saying why
  # (Hark.fanout_status: hark/rails not loaded, the Rails gate kept Rails' fanout, the
  # notifier replaced since).
  def self.default_notifier
    notifier = ::ActiveSupport::Notifications.notifier if defined?(::ActiveSupport::Notifications)
    return notifier if notifier.is_a?(Fanout)

    status = fanout_status
    fix = RailsGate.choice.nil? ? "#{status[:why]}: require \"hark/rails\" first" : status[:why]
    raise ArgumentError, "hark: ActiveSupport::Notifications does not deliver through hark's " \
                         "fanout (#{fix}), or give notifier:"
  end
end
