# frozen_string_literal: true

# script/span_tree.rb -- one request's spans as the node receiver of tests/export/otlp
# decodes them, for docs/rails.md's comparison of Hark::OTLP with opentelemetry-ruby:
# the application booted in production with script/telemetry.rb's side (otel or
# hark_otlp), one GET of REQ_PATH (default /articles) to warm it up and one carrying a
# traceparent, that one's spans
# flushed to the receiver at OTEL_EXPORTER_OTLP_ENDPOINT and read back from it
# (POST /received), printed as JSON: the tree, siblings of one name and kind counted
# once, each with its kind, parent's name and attributes.
#
#   RAILS=../shared/rails-7.2 SIDE=otel TELEMETRY_LOAD_PATH=... \
#     OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:PORT ruby script/span_tree.rb
require "json"
require "net/http"
require_relative "telemetry"

side = ENV.fetch("SIDE")
abort "span_tree: SIDE is otel or hark_otlp" unless %w[otel hark_otlp].include?(side)
ENV["HARK"] = side == "hark_otlp" ? "1" : "0"
ENV["RAILS_ENV"] = "production"
require_relative "../config/application"
telemetry_setup(side)
require_relative "../config/environment"

require "securerandom"
# A trace id of this run's own: what another process sent the receiver is left out.
TRACEPARENT = "00-#{SecureRandom.hex(16)}-00f067aa0ba902b7-01"
def get(headers = {})
  env = Rack::MockRequest.env_for(ENV.fetch("REQ_PATH", "/articles"),
                                  { "REMOTE_ADDR" => "127.0.0.1", "HTTP_HOST" => "localhost",
                                    "HTTP_ACCEPT" => "text/html" }.merge(headers))
  status, _, body = Rails.application.call(env)
  body.each { |_| }
  body.close if body.respond_to?(:close)
  abort "span_tree: #{status}" unless status == 200
end
get # the first request after boot also loads the schema: the one compared is the next
get("HTTP_TRACEPARENT" => TRACEPARENT)
if side == "otel"
  OpenTelemetry.tracer_provider.force_flush
else
  Hark::OTLP.flush(timeout: 20) or abort "span_tree: spans dropped: #{Hark::OTLP.stats}"
end
uri = URI(ENV.fetch("OTEL_EXPORTER_OTLP_ENDPOINT"))
got = JSON.parse(Net::HTTP.start(uri.host, uri.port) { |h| h.post("/received", "") }.body)
spans = got["spans"].select { |s| s["traceId"] == TRACEPARENT.split("-")[1] }
by_id = spans.to_h { |s| [s["spanId"], s] }
KINDS = { 1 => "INTERNAL", 2 => "SERVER", 3 => "CLIENT" }.freeze
nodes = Hash.new { |h, k| h[k] = { "count" => 0 } }
spans.each do |s|
  parent = by_id[s["parentSpanId"]]
  parent_name = parent ? parent["name"] : (s["parentSpanId"] ? "(remote caller)" : nil)
  n = nodes[[s["name"], s["kind"], parent_name]]
  n["count"] += 1
  n["attributes"] ||= s["attributes"].transform_values { |v| v["value"] }
end
puts JSON.pretty_generate(nodes.map do |(name, kind, parent), n|
  { "name" => name, "kind" => KINDS.fetch(kind, kind.to_s), "parent" => parent,
    "count" => n["count"], "attributes" => n["attributes"] }
end)
