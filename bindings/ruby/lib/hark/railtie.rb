# frozen_string_literal: true

# hark's Railtie: config.hark.metrics, config.hark.otlp and config.hark.recorder, set in
# config/application.rb or an environment's file. hark/rails (the fanout, which must come
# first: config/boot.rb) defines it as the application class is defined.
#
#   config.hark.otlp = { sql: false }           # or true: the OTEL_* variables only
#   config.hark.metrics = { path: "/metrics" }  # or serve: "0.0.0.0:9464", tls_cert: ...
#   config.hark.recorder = { max_bytes: 16 << 20, payload_keys: %i[sql name] }
#
# otlp: Hark::OTLP.start with these options (see hark/otlp.rb), its middleware first in
#   the stack, and Rails.logger's lines sent as log records too (logs: false keeps them
#   out).
# metrics: a Hark::Metrics with `histograms:` ({ event name or Regexp => { labels:,
#   buckets:, value:, series: } }, or a list of [pattern, options] pairs; by default
#   DEFAULT_HISTOGRAMS) and `counters:` (the same shape: { labels:, series: }; none by
#   default), answered at `path:` by a middleware
#   and/or served by hark's own endpoint at `serve:` with the `server:` options
#   (tls_cert:, tls_key:, tls_client_ca:, basic_auth:, web_config_file:); metric:,
#   help:, buckets:, directory: (shared mode: Puma's cluster mode), counter_metric:,
#   counter_help: as
#   Hark::Metrics.new takes them.
# recorder: Hark::Recorder.start with these options; dump_on_error: a path writes a dump
#   when a request raises.
require "rails/railtie"

module Hark
  class Railtie < ::Rails::Railtie
    # yabeda-rails' request series -- the request's duration, its view and database
    # runtimes, per controller, action, status, method and format -- and SQL by its name
    # ("User Load").
    REQUEST_LABELS = %i[controller action status method format].freeze
    DEFAULT_HISTOGRAMS = [
      ["process_action.action_controller", { labels: REQUEST_LABELS }],
      ["process_action.action_controller", { labels: REQUEST_LABELS, value: :view_runtime,
                                             series: "rails.view_runtime" }],
      ["process_action.action_controller", { labels: REQUEST_LABELS, value: :db_runtime,
                                             series: "rails.db_runtime" }],
      ["sql.active_record", { labels: %i[name] }]
    ].freeze

    config.hark = ActiveSupport::OrderedOptions.new
    config.hark.metrics = nil
    config.hark.otlp = nil
    config.hark.recorder = nil

    class << self
      attr_reader :metrics # :nodoc:

      def options(value) # :nodoc:
        value == true ? {} : value.to_h.transform_keys(&:to_sym)
      end
    end

    # Before the middleware stack is built: Hark::OTLP::Middleware first in the stack,
    # for a server_event: nil configuration, whose root is the next event after it
    # (by default process_action.action_controller reads the traceparent itself).
    initializer "hark.middleware", before: :build_middleware_stack do |app|
      if app.config.hark.otlp
        require "hark/otlp"
        app.config.middleware.unshift(Hark::OTLP::Middleware)
      end
      if (m = app.config.hark.metrics) && (path = Railtie.options(m).fetch(:path, "/metrics"))
        require "hark/metrics"
        app.config.middleware.unshift(Hark::Metrics::Middleware, Railtie.start_metrics(app), path: path)
      end
    end

    def self.start_metrics(app) # :nodoc:
      return @metrics if @metrics

      require "hark/metrics"
      o = options(app.config.hark.metrics)
      @metrics = Hark::Metrics.new(metric: o[:metric], help: o[:help], buckets: o[:buckets],
                                   directory: o[:directory], counter_metric: o[:counter_metric],
                                   counter_help: o[:counter_help])
      o.fetch(:histograms, DEFAULT_HISTOGRAMS).each do |pattern, h|
        @metrics.histogram(pattern, **h.to_h.transform_keys(&:to_sym))
      end
      o.fetch(:counters, []).each do |pattern, h|
        @metrics.counter(pattern, **h.to_h.transform_keys(&:to_sym))
      end
      @metrics.serve(o[:serve], **o.fetch(:server, {}).to_h.transform_keys(&:to_sym)) if o[:serve]
      @metrics
    end

    config.after_initialize do |app|
      start_metrics(app) if app.config.hark.metrics
      if (o = app.config.hark.otlp)
        o = Railtie.options(o)
        logs = o.delete(:logs) != false
        Hark::OTLP.start(**o) unless Hark::OTLP.started?
        if logs && Rails.logger.respond_to?(:broadcast_to)
          # At the application's level: a broadcast logger at :debug would make
          # Rails.logger.debug? true, and every debug line be built, for nothing.
          Hark::OTLP.logger.level = Rails.logger.level
          Rails.logger.broadcast_to(Hark::OTLP.logger)
        end
      end
      if (o = app.config.hark.recorder)
        require "hark/recorder"
        o = Railtie.options(o)
        path = o.delete(:dump_on_error)
        recorder = Hark::Recorder.start(**o)
        recorder.dump_on_error(path) if path
      end
    end
  end
end
