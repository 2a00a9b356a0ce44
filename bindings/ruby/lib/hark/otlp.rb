# frozen_string_literal: true

# Hark::OTLP: OpenTelemetry traces and logs of a Rails application from the events that go
# through hark's fanout, exported by hark's C exporter (hark/otlp.h) over OTLP/HTTP.
#
#   require "hark/otlp"
#   Hark::OTLP.start                       # OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_SERVICE_NAME, ...
#   use Hark::OTLP::Middleware             # first in the stack: the request's traceparent
#   Rails.logger.broadcast_to(Hark::OTLP.logger)   # log lines as OTLP log records
#   Hark::OTLP.current_traceparent         # for an outgoing call's `traceparent` header
#
# Every matched event is a span; its parent is the event that encloses it (hark's ids).
# process_action.action_controller is the request's span, of kind SERVER, the child of
# the `traceparent` (and `tracestate`) of the Rack env when it is valid: its start reads
# them from the payload's request, before the exporter notes it open, so it is the root
# that continues the caller whatever the middleware instrumented before it.
# sql.active_record, instantiation.active_record, render_*.action_view and
# cache_*.active_support are its children. Attributes follow OpenTelemetry's semantic conventions (http.request.method,
# http.route, http.response.status_code, url.path, db.system.name, db.operation.name,
# code.namespace, code.function, code.filepath, ...); the SQL text (db.query.text) only
# with sql: true, since it may hold personal data.
#
# The exporter's worker is a C thread that never holds the GVL; a collector that is slow
# or down costs the application the spans the queue drops, counted in stats.
require "hark"
require "hark/default_notifier"
require "logger"

module Hark
  module OTLP
    # Rails' controller, ActiveRecord, ActionView and cache events (request.action_dispatch,
    # which encloses process_action, is left out: the request's span is process_action's).
    DEFAULT_PATTERN = /\A(?:process_action\.action_controller|sql\.active_record|instantiation\.active_record|render_[a-z_]+\.action_view|cache_[a-z_]+\.active_support)\z/.freeze

    # The event that is the request's span by default.
    SERVER_EVENT = "process_action.action_controller"

    class << self
      # The name of the event that is the request's SERVER span, or nil when it is the
      # next root after Middleware (see start's server_event:).
      attr_reader :server_event

      # Starts the exporter on `notifier` (hark's fanout behind
      # ActiveSupport::Notifications by default) for the events `pattern` matches.
      #   sql:       keep the SQL text as db.query.text (default false)
      #   db_system: db.system.name of sql.active_record spans (default: from
      #              ActiveRecord's adapter when loaded, e.g. "sqlite")
      #   server_event: the event that is the request's SERVER span, continuing the
      #              traceparent of its payload's request (default
      #              "process_action.action_controller"; used when `pattern` matches it).
      #              nil: the next root after Middleware is, as for a Rack application
      #              without Rails' controllers.
      #   endpoint:, service_name:, resource_attributes:, schedule_delay_ms:,
      #   export_timeout_ms:, timeout_ms: instead of the OTEL_* variables.
      def start(pattern: DEFAULT_PATTERN, notifier: nil, sql: false, db_system: nil,
                server_event: SERVER_EVENT, **exporter)
        raise NotImplementedError, "hark: built without hark's OTLP exporter (libcurl)" unless NATIVE

        notifier ||= Hark.default_notifier
        server_event = server_event&.to_s
        server_event = nil unless server_event && (pattern.nil? || pattern === server_event) # rubocop:disable Style/CaseEquality
        options = exporter.merge(keep_sql: sql, db_system: db_system || guess_db_system,
                                 server_event: server_event)
        _start(notifier, pattern, options.transform_values { |v| v.is_a?(Symbol) ? v.to_s : v })
        @notifier = notifier # kept alive while started
        @server_event = server_event
        at_exit { stop } unless @at_exit
        @at_exit = true
        true
      end

      # Exports what is queued within `timeout` seconds, then stops. True when nothing
      # was ever dropped.
      def stop(timeout: 5)
        done = _stop((timeout * 1000).to_i)
        @notifier = nil
        @server_event = nil
        done
      end

      # Exports what is queued, waiting `timeout` seconds at most (without the GVL).
      # True when everything went out; false when something was dropped (see stats).
      def flush(timeout: 5)
        _flush((timeout * 1000).to_i)
      end

      # The `traceparent` header to send on from inside the current event (a request's
      # span), or nil outside any.
      def current_traceparent
        _current&.first
      end

      # The `tracestate` to send with it, or nil.
      def current_tracestate
        _current&.last
      end

      # A Logger whose lines become OTLP log records carrying the trace and span of the
      # event current on the logging thread.
      def logger
        @logger ||= Logger.new
      end


      private

      def guess_db_system
        return nil unless defined?(::ActiveRecord::Base) && ::ActiveRecord::Base.respond_to?(:connection_db_config)

        adapter = ::ActiveRecord::Base.connection_db_config&.adapter.to_s
        { "sqlite3" => "sqlite", "postgresql" => "postgresql", "mysql2" => "mysql",
          "trilogy" => "mysql" }.fetch(adapter, adapter.empty? ? nil : adapter)
      rescue StandardError
        nil
      end
    end

    # Sends each line as a log record (Logger's severities are hark's levels).
    class Logger < ::Logger
      def initialize(level: ::Logger::DEBUG)
        super(nil, level: level)
      end

      def add(severity, message = nil, progname = nil)
        severity ||= UNKNOWN
        return true if severity < level

        if message.nil?
          if block_given?
            message = yield
          else
            message = progname
          end
        end
        OTLP._log(severity, text_of(message))
        true
      end
      alias log add

      private

      # The line's text; a message whose to_s raises is logged by its class, never
      # raised into the code that logs.
      def text_of(message)
        return message if message.is_a?(String)
        return "#{message.message} (#{message.class})" if message.is_a?(Exception)

        message.to_s
      rescue StandardError
        "(a #{message.class} that cannot be shown)"
      end
    end

    # The first middleware, for a pattern without the server event (start's
    # server_event: nil, or a pattern that does not match it): makes the request's next
    # root event its SERVER span, continuing the caller's `traceparent`/`tracestate` (a
    # malformed one is counted in stats and the request gets a trace of its own). With
    # the server event watched (the default), that event reads them from the Rack env
    # itself, and this passes the request on untouched.
    class Middleware
      def initialize(app)
        @app = app
      end

      def call(env)
        OTLP._begin_request(env["HTTP_TRACEPARENT"], env["HTTP_TRACESTATE"]) unless OTLP.server_event
        @app.call(env)
      end
    end
  end
end
