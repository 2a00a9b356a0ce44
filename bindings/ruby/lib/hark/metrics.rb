# frozen_string_literal: true

# Hark::Metrics: Prometheus histograms and counters of the ActiveSupport::Notifications
# events that go through hark's fanout, labelled by payload keys named up front --
# recorded in C, on the instrumenting thread, with no Ruby block per event
# (hark/metrics.h).
#
#   require "hark/metrics"
#   metrics = Hark::Metrics.new(metric: "rails_event_duration_seconds")
#   metrics.histogram("process_action.action_controller", labels: %i[controller action status method])
#   metrics.histogram("sql.active_record", labels: %i[name])
#   metrics.counter("cache_read.active_support", labels: %i[hit])   # hark_events_total
#   metrics.serve("0.0.0.0:9464", tls_cert: "server.pem", tls_key: "server.key",
#                 basic_auth: { "prometheus" => "$2y$10$..." })   # hark's own endpoint
#   # or, in config/routes.rb: mount metrics => "/metrics"   (a Rack application)
#
# One histogram family: every series has event="<event name>" and its own labels. Each
# histogram is classic (`le` buckets, hark's default ladder or `buckets:`) and native
# (Prometheus' protobuf format, 16 buckets per power of two), whichever the scraper asks
# for; its `_count` is the counter of the events, which rate() reads.
#
# A label's value is the payload value: a String or Symbol as its text, an Integer, a
# Float, true, false as themselves, nil as "". A key missing from the payload gives "",
# any other value its class name; both are counted in #stats, never raised.
require "hark"
require "hark/default_notifier"

module Hark
  class Metrics
    # Every started object, and through it the fanouts and payload keys it watches, for
    # the life of the process: an event in flight may still reach a watch after #stop.
    STARTED = [] # rubocop:disable Style/MutableConstant
    private_constant :STARTED

    LABEL_NAME = /\A[a-zA-Z_][a-zA-Z0-9_]*\z/.freeze
    TEXT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
    PROTOBUF_TYPE = "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; " \
                    "encoding=delimited"

    attr_reader :metric, :help, :counter_metric

    # metric:  the family's name (default "hark_event_duration_seconds")
    # help:    its HELP text
    # buckets: the classic `le` bounds in seconds, increasing (default: hark's ladder, 8
    #          per power of two from 1 us to 137 s)
    # notifier: hark's fanout (default ActiveSupport::Notifications.notifier)
    # directory: shared mode (a forking server's workers, Puma in cluster mode): every
    #          process records into a memory-mapped file of its own in this directory,
    #          made at its first record after fork(), and the exposition -- wherever it
    #          is served from -- sums them all, an exited worker's counts included (see
    #          hark/metrics.h). Empty it before the server starts. Default: the
    #          environment's HARK_METRICS_DIR, else this process only.
    # counter_metric: the counter family's name (default "hark_events_total")
    # counter_help: its HELP text
    def initialize(metric: nil, help: nil, buckets: nil, notifier: nil, directory: nil,
                   counter_metric: nil, counter_help: nil)
      raise NotImplementedError, "hark: built without hark's metrics (libhark-export)" unless NATIVE

      @metric = metric&.to_s
      @help = help&.to_s
      @counter_metric = counter_metric&.to_s&.freeze
      @counter_help = counter_help&.to_s&.freeze
      @counter_series = []
      @histogram_series = []
      @buckets = buckets&.map { |b| Float(b) }
      @event_buckets = []
      @notifier = notifier
      @watches = []
      _setup(directory&.to_s)
      STARTED << self
    end

    # Records the duration of every event `pattern` matches (a String for one name, a
    # Regexp, nil for all) in the series of its labels: `labels` names payload keys, as
    # an Array (the key is the label's name) or a Hash (payload key => label name).
    # `buckets:` gives the classic bounds of this event's series (a String pattern only).
    #
    # value: a payload key whose value, in milliseconds (as Rails' view_runtime and
    # db_runtime are), is recorded instead of the duration, in the series whose event
    # label is `series:` (default "<pattern>.<value>"). A value that is not a number is
    # counted (stats' missing_values) and not recorded.
    def histogram(pattern, labels: [], buckets: nil, notifier: nil, value: nil, series: nil)
      keys, names = label_pairs(labels)
      if value
        raise ArgumentError, "hark: value: needs series: for a pattern that is not a String" unless series || pattern.is_a?(String)

        series = (series || "#{pattern}.#{value}").to_s.dup.freeze
      end
      if buckets
        raise ArgumentError, "hark: buckets: needs a String pattern (one event name)" unless series || pattern.is_a?(String)

        @event_buckets << [(series || pattern).dup.freeze, buckets.map { |b| Float(b) }]
      end
      named = value ? series : (pattern.to_s if pattern.is_a?(String))
      if named && @counter_series.include?(named)
        raise ArgumentError, "hark: #{named.inspect} is a counter's series already"
      end

      series = nil unless value # the event's own name
      fanout = notifier || @notifier || Hark.default_notifier
      id = _watch(fanout, pattern, keys, names, value, series)
      @histogram_series << named.dup.freeze if named
      @watches << [fanout, pattern, keys, value, series, id]
      self
    end

    # Counts the events `pattern` matches (a String for one name, a Regexp, nil for all)
    # in the counter family (counter_metric:), one series per combination of the
    # `labels` (payload keys, as #histogram's), its event label `series:` (default: the
    # pattern, which must then be a String). A counter's series is in no histogram:
    # a name given to #histogram too is refused. Recorded as #histogram records, so a
    # shared directory's processes are summed alike.
    def counter(pattern, labels: [], notifier: nil, series: nil)
      keys, names = label_pairs(labels)
      raise ArgumentError, "hark: a counter needs series: for a pattern that is not a String" unless series || pattern.is_a?(String)

      series = (series || pattern).to_s.dup.freeze
      raise ArgumentError, "hark: #{series.inspect} is a histogram's series already" if @histogram_series.include?(series)

      fanout = notifier || @notifier || Hark.default_notifier
      id = _watch(fanout, pattern, keys, names, nil, series)
      @counter_series << series unless @counter_series.include?(series)
      @watches << [fanout, pattern, keys, nil, series, id]
      self
    end

    # The exposition: :text (Prometheus' text format 0.0.4, classic buckets) or
    # :protobuf (classic and native histograms).
    def exposition(format = :text)
      raise ArgumentError, "hark: format is :text or :protobuf" unless %i[text protobuf].include?(format)

      _exposition(format == :protobuf, @metric, @help, @buckets, @event_buckets, counters)
    end

    # A Rack application answering with the exposition, in the format the scraper's
    # Accept header prefers (protobuf for Prometheus with native histograms enabled).
    def call(env)
      protobuf = self.class.protobuf_wanted?(env["HTTP_ACCEPT"])
      body = exposition(protobuf ? :protobuf : :text)
      [200, { "content-type" => protobuf ? PROTOBUF_TYPE : TEXT_TYPE }, [body]]
    end

    def self.protobuf_wanted?(accept) # :nodoc:
      accept.is_a?(String) && accept.include?("application/vnd.google.protobuf") &&
        accept.include?("io.prometheus.client.MetricFamily")
    end

    # Serves the exposition from hark's own HTTP endpoint (a thread of its own, no GVL):
    # GET /metrics. Options as docs/exporters.md's web configuration: tls_cert:, tls_key:,
    # tls_client_ca: (file paths), basic_auth: { user => bcrypt hash }, or
    # web_config_file: (exporter-toolkit's YAML); timeout_ms:. Returns the port.
    def serve(address, tls_cert: nil, tls_key: nil, tls_client_ca: nil, basic_auth: nil,
              web_config_file: nil, timeout_ms: nil)
      options = { tls_cert: tls_cert, tls_key: tls_key, tls_client_ca: tls_client_ca,
                  basic_auth: basic_auth, web_config_file: web_config_file, timeout_ms: timeout_ms }
      _serve(address.to_s, options, @metric, @help, @buckets, @event_buckets, counters)
    end

    # Stops the endpoint and every watch. The object stays usable for nothing else.
    def stop
      _stop
    end

    # A Rack middleware answering GET `path` with the exposition, passing the rest on.
    class Middleware
      def initialize(app, metrics, path: "/metrics")
        @app = app
        @metrics = metrics
        @path = path
      end

      def call(env)
        return @metrics.call(env) if env["PATH_INFO"] == @path && env["REQUEST_METHOD"] == "GET"

        @app.call(env)
      end
    end

    private

    def counters
      [@counter_metric, @counter_help, @counter_series]
    end

    def label_pairs(labels)
      pairs = labels.is_a?(Hash) ? labels.to_a : Array(labels).map { |k| [k, k] }
      raise ArgumentError, "hark: at most 16 labels" if pairs.size > 16

      names = pairs.map do |_, name|
        name = name.to_s
        if !LABEL_NAME.match?(name) || %w[event le].include?(name) || name.start_with?("__")
          raise ArgumentError, "hark: #{name.inspect} is not a label name ([a-zA-Z_][a-zA-Z0-9_]*, " \
                               "not event, le or __...)"
        end
        name
      end
      raise ArgumentError, "hark: a label name given twice" if names.uniq.size != names.size

      keys = pairs.map { |k, _| k.is_a?(String) ? k.dup.freeze : k }
      [keys, names]
    end

  end
end
