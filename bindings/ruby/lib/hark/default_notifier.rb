# frozen_string_literal: true

require "hark"

module Hark
  # hark's fanout behind ActiveSupport::Notifications: what hark's exporters (Recorder,
  # Metrics, OTLP) attach to when given no notifier. Raises ArgumentError when
  # ActiveSupport::Notifications does not deliver through it.
  def self.default_notifier
    notifier = ::ActiveSupport::Notifications.notifier if defined?(::ActiveSupport::Notifications)
    unless notifier.is_a?(Fanout)
      raise ArgumentError, "hark: ActiveSupport::Notifications does not deliver through hark's " \
                           "fanout (require \"hark/rails\" first), or give notifier:"
    end
    notifier
  end
end
