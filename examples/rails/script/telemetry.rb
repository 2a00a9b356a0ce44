# frozen_string_literal: true

# script/telemetry.rb -- the application with one of the telemetry stacks it is compared
# on (request_cost.rb's telemetry sides, make bench's otel/hark_otlp/prom/hark_metrics
# rows, docs/rails.md's span trees). Loaded after config/application.rb and before
# Rails.application.initialize!, as an application configures them:
#
#   otel          Rails' fanout + opentelemetry-ruby: the SDK, its Rails instrumentation
#                 (Rack, ActionPack, ActionView, ActiveRecord, ActiveSupport, ...) and its
#                 OTLP/HTTP exporter (OTEL_EXPORTER_OTLP_ENDPOINT)
#   hark_otlp     hark's fanout + Hark::OTLP (config.hark.otlp): the same requests as spans
#                 to the same endpoint, SQL text left out by both
#   prom          Rails' fanout + yabeda-rails' request series over prometheus-client
#   hark_metrics  hark's fanout + Hark::Metrics (config.hark.metrics): the same series
#                 (yabeda's requests_total is the duration histogram's _count)
#
# The anchors' gems come from TELEMETRY_LOAD_PATH (colon-separated lib directories:
# bench/telemetry_gems.sh installs them into build/gems at pinned versions), Rails from
# RAILS, as config/boot.rb finds it.
TELEMETRY_SIDES = %w[otel hark_otlp prom hark_metrics].freeze

def telemetry_setup(side)
  abort "telemetry: #{side} is none of #{TELEMETRY_SIDES.join(', ')}" unless TELEMETRY_SIDES.include?(side)
  # Without the flight recorder of config/initializers/hark_recorder.rb: its cost is not
  # the telemetry's.
  ENV["HARK_RECORDER"] = "0"
  ENV.fetch("TELEMETRY_LOAD_PATH", "").split(":").reject(&:empty?).reverse_each { |d| $LOAD_PATH.unshift(d) }
  app = Rails.application
  case side
  when "otel"
    require "opentelemetry/sdk"
    require "opentelemetry/exporter/otlp"
    require "opentelemetry/instrumentation/rails"
    # Quiet: a failed export is the exporter's to count, not the log's to show.
    OpenTelemetry.logger = Logger.new(nil)
    OpenTelemetry::SDK.configure do |c|
      c.service_name = "blog"
      c.use_all # as the Rails instrumentation says: it installs ActionPack, ActiveRecord, ...
    end
  when "hark_otlp"
    app.config.hark.otlp = { service_name: "blog" }
  when "prom"
    require "yabeda/rails"
    require "yabeda/prometheus"
    # Its Railtie installs the request series only under a server it recognises: as
    # `bin/rails server` would.
    app.initializer("telemetry.yabeda") { Yabeda::Rails.install! }
  when "hark_metrics"
    # yabeda-rails' series: the request's duration (its _count the requests' counter),
    # view and database runtimes, by controller, action, status, format and method.
    labels = %i[controller action status format method]
    app.config.hark.metrics = {
      metric: "rails_request_duration_seconds", path: "/metrics",
      histograms: [["process_action.action_controller", { labels: labels }],
                   ["process_action.action_controller", { labels: labels, value: :view_runtime,
                                                          series: "rails.view_runtime" }],
                   ["process_action.action_controller", { labels: labels, value: :db_runtime,
                                                          series: "rails.db_runtime" }]]
    }
  end
end
