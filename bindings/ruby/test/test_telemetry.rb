# frozen_string_literal: true

# Hark::Metrics and Hark::OTLP on hark's fanout, against the real tools: series labelled by
# payload keys whose counts match the events sent, payload values of every Ruby type and
# missing keys counted and never raised, the exposition scraped by real Prometheus from
# hark's own endpoint over TLS with basic auth (native histograms on); spans, parents,
# kinds, attributes and log records decoded by the node receiver of tests/export/otlp
# (OpenTelemetry's own codec), a request's parent taken from its traceparent, a malformed
# one counted, an unreachable collector counted and never raised. Then a Rails
# application configured by the Railtie (config.hark.otlp / .metrics), served requests
# with a traceparent: one SERVER span per request with its controller, SQL and render
# children, log records of the same trace, and the metrics' counts.
#
# Needs ActiveSupport on the load path (make ruby-test puts Rails 7.2's there), node with
# tests/export/otlp's packages (make node-deps) and prometheus; a case whose tool is
# missing is skipped, saying which.
require "minitest/autorun"
require_relative "rails_or_skip"
return unless hark_test_load_rails("test_telemetry")
require "hark/metrics"
require "hark/otlp"
require "json"
require "net/http"
require "open3"
require "rbconfig"
require "socket"
require "timeout"
require "tmpdir"

module TelemetryTools
  ROOT = File.expand_path("../../..", __dir__)
  RECEIVER = File.join(ROOT, "tests", "export", "otlp", "receiver.js")

  def self.node_ready?
    system("node", "--version", out: File::NULL, err: File::NULL) &&
      File.directory?(File.join(File.dirname(RECEIVER), "node_modules", "@opentelemetry"))
  end

  # The node receiver, started for the test: [pid, io, port].
  def self.receiver
    io = IO.popen(["node", RECEIVER], err: File::NULL)
    line = Timeout.timeout(30) { io.gets }
    raise "receiver did not start: #{line.inspect}" unless line&.start_with?("PORT ")

    [io, Integer(line.split.last)]
  end

  def self.post(port, path, body = "")
    Net::HTTP.start("127.0.0.1", port) { |h| h.post(path, body) }
  end

  def self.received(port)
    JSON.parse(post(port, "/received").body)
  end

  def self.stop_receiver(io, port)
    post(port, "/quit")
  rescue StandardError
    nil
  ensure
    Process.kill("TERM", io.pid) rescue nil # rubocop:disable Style/RescueModifier
    io.close
  end

  # Prometheus started on a plain HTTP target for the time of the queries: their values,
  # each asked until a scrape has answered it.
  def self.prometheus(prometheus, target, dir, native, queries)
    FileUtils.mkdir_p(dir)
    port = free_port
    File.write(File.join(dir, "prometheus.yml"), <<~YAML)
      global:
        scrape_interval: 1s
      scrape_configs:
        - job_name: hark
          static_configs: [{ targets: ["127.0.0.1:#{target}"] }]
    YAML
    pid = spawn(prometheus, "--config.file=#{File.join(dir, 'prometheus.yml')}",
                "--storage.tsdb.path=#{File.join(dir, 'data')}", "--web.listen-address=127.0.0.1:#{port}",
                *(native ? ["--enable-feature=native-histograms"] : []), out: File::NULL, err: File::NULL)
    queries.map do |query|
      Timeout.timeout(60) do
        loop do
          uri = URI("http://127.0.0.1:#{port}/api/v1/query?query=#{URI.encode_www_form_component(query)}")
          res = Net::HTTP.get_response(uri)
          result = (JSON.parse(res.body).dig("data", "result") if res.is_a?(Net::HTTPSuccess))
          break Float(result[0]["value"][1]) if result && !result.empty?

          sleep 0.5
        rescue Errno::ECONNREFUSED
          sleep 0.5
        end
      end
    end
  ensure
    if pid
      Process.kill("TERM", pid)
      Process.wait(pid)
    end
  end

  def self.free_port
    s = TCPServer.new("127.0.0.1", 0)
    s.addr[1]
  ensure
    s&.close
  end
end

class TestTelemetryMetrics < Minitest::Test
  N = ActiveSupport::Notifications

  def setup
    skip "built without hark's metrics (libhark-export)" unless Hark::Metrics::NATIVE
  end

  def teardown
    @m&.stop
    FileUtils.rm_rf(@dir) if @dir
  end

  def test_series_by_payload_keys_count_the_events
    @m = Hark::Metrics.new(metric: "t_seconds")
    @m.histogram("t.request", labels: %i[controller status])
    @m.histogram(/\At\.sql\z/, labels: { name: "query" })
    3.times { N.instrument("t.request", controller: "Users", status: 200) {} }
    N.instrument("t.request", controller: "Posts", status: 500) {}
    2.times { N.instrument("t.sql", name: "User Load", sql: "SELECT 1") {} }
    text = @m.exposition
    assert_includes text, "# TYPE t_seconds histogram"
    assert_includes text, %(t_seconds_count{event="t.request",controller="Users",status="200"} 3)
    assert_includes text, %(t_seconds_count{event="t.request",controller="Posts",status="500"} 1)
    assert_includes text, %(t_seconds_count{event="t.sql",query="User Load"} 2)
    assert_equal 6, @m.stats[:recorded]
    refute_empty @m.exposition(:protobuf)
  end

  ToSRaises = Class.new { def to_s = raise("no") }

  def test_any_payload_value_and_a_missing_key_are_counted_never_raised
    @m = Hark::Metrics.new
    @m.histogram("t.odd", labels: %i[v])
    values = [2**80, [1, 2], { a: 1 }, ToSRaises.new, nil, 1.5, :sym, true, "a\0b", -7]
    values.each { |v| N.instrument("t.odd", v: v) {} }
    N.instrument("t.odd", other: 1) {}
    N.instrument("t.odd") {}
    text = @m.exposition
    { "Integer" => 1, "Array" => 1, "Hash" => 1, "TestTelemetryMetrics::ToSRaises" => 1, "" => 3, "1.5" => 1, "sym" => 1,
      "true" => 1, "a" => 1, "-7" => 1 }.each do |label, count|
      assert text.include?(%(_count{event="t.odd",v="#{label}"} #{count})), label
    end
    st = @m.stats
    assert_equal 12, st[:recorded]
    assert_equal 4, st[:other_values] # the Bignum, the Array, the Hash, the object
    assert_equal 2, st[:missing_keys]
  end

  # Shared mode, as Puma's cluster mode uses it: forked workers record into files of
  # their own, and the parent's exposition sums them with its own counts.
  # Rails' runtimes: a payload value in milliseconds, recorded in a series of its own.
  def test_a_payload_value_in_milliseconds_is_a_histogram_of_its_own
    @m = Hark::Metrics.new(metric: "t_seconds")
    @m.histogram("t.action", labels: %i[action], value: :view_runtime, series: "t.view_runtime")
    @m.histogram("t.action", labels: %i[action], value: :db_runtime) # series t.action.db_runtime
    N.instrument("t.action", action: "index", view_runtime: 12.5, db_runtime: 3) {}
    N.instrument("t.action", action: "index", view_runtime: 7.5, db_runtime: nil) {}
    N.instrument("t.action", action: "index") {}
    text = @m.exposition
    assert_includes text, %(t_seconds_count{event="t.view_runtime",action="index"} 2)
    assert_includes text, %(t_seconds_sum{event="t.view_runtime",action="index"} 0.02)
    assert_includes text, %(t_seconds_count{event="t.action.db_runtime",action="index"} 1)
    assert_includes text, %(t_seconds_sum{event="t.action.db_runtime",action="index"} 0.003)
    refute_includes text, %(event="t.action",)
    assert_equal 3, @m.stats[:missing_values] # nil, and two missing keys
  end

  def test_forked_workers_are_summed_in_shared_mode
    @dir = Dir.mktmpdir("hark-telemetry")
    @m = Hark::Metrics.new(directory: File.join(@dir, "metrics"))
    @m.histogram("t.worker", labels: %i[route])
    2.times { N.instrument("t.worker", route: "/a") {} }
    pids = 2.times.map do |i|
      fork do
        (3 + i).times { N.instrument("t.worker", route: "/a") {} }
        N.instrument("t.worker", route: "/b") {}
        exit!(0)
      end
    end
    statuses = pids.map { |pid| Process.wait2(pid).last }
    assert statuses.all?(&:success?), statuses.inspect
    text = @m.exposition
    assert_includes text, %(_count{event="t.worker",route="/a"} 9) # 2 + 3 + 4
    assert_includes text, %(_count{event="t.worker",route="/b"} 2)
    assert_equal 3, Dir[File.join(@dir, "metrics", "hark-metrics-*.db")].size, "one file per process"
  end

  def test_a_rack_application_and_its_content_negotiation
    @m = Hark::Metrics.new
    @m.histogram("t.rack")
    N.instrument("t.rack") {}
    status, headers, body = @m.call("HTTP_ACCEPT" => "text/plain")
    assert_equal [200, Hark::Metrics::TEXT_TYPE], [status, headers["content-type"]]
    assert_includes body.join, %(_count{event="t.rack"} 1)
    accept = "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.7"
    _, headers, body = @m.call("HTTP_ACCEPT" => accept)
    assert_equal Hark::Metrics::PROTOBUF_TYPE, headers["content-type"]
    assert_equal Encoding::BINARY, body.join.encoding
  end

  def test_bad_label_names_are_refused_at_configuration
    @m = Hark::Metrics.new
    assert_raises(ArgumentError) { @m.histogram("t.x", labels: %i[le]) }
    assert_raises(ArgumentError) { @m.histogram("t.x", labels: ["a-b"]) }
    assert_raises(ArgumentError) { @m.histogram("t.x", labels: { a: "x", b: "x" }) }
    assert_raises(ArgumentError) { @m.histogram(/t/, labels: %i[a], buckets: [0.1]) }
  end

  def test_counters_count_the_events_by_payload_keys
    @m = Hark::Metrics.new(metric: "t_seconds", counter_metric: "t_events_total", counter_help: "Events.")
    @m.histogram("t.timed", labels: %i[status])
    @m.counter("t.hit", labels: %i[hit])
    @m.counter(/\At\.(?:read|write)\z/, labels: { store: "cache" }, series: "t.cache")
    3.times { N.instrument("t.hit", hit: true) {} }
    N.instrument("t.hit", hit: false) {}
    N.instrument("t.hit") {} # a missing key: "", counted
    2.times { N.instrument("t.read", store: "mem") {} }
    N.instrument("t.write", store: "mem") {}
    N.instrument("t.timed", status: 200) {}
    text = @m.exposition
    assert_includes text, "# HELP t_events_total Events.\n# TYPE t_events_total counter\n"
    assert_includes text, %(t_events_total{event="t.hit",hit="true"} 3\n)
    assert_includes text, %(t_events_total{event="t.hit",hit="false"} 1\n)
    assert_includes text, %(t_events_total{event="t.hit",hit=""} 1\n)
    assert_includes text, %(t_events_total{event="t.cache",cache="mem"} 3\n)
    assert_includes text, %(t_seconds_count{event="t.timed",status="200"} 1\n)
    refute_match(/t_seconds_\w+\{event="t\.(?:hit|cache)"/, text, "a counter's series is in no histogram")
    assert_equal 1, @m.stats[:missing_keys]
    # The protobuf exposition carries the counter family too (a second MetricFamily).
    assert_includes @m.exposition(:protobuf).b, "t_events_total".b
    # A name is a counter's or a histogram's, not both; a Regexp needs series:.
    assert_raises(ArgumentError) { @m.histogram("t.hit") }
    assert_raises(ArgumentError) { @m.counter("t.timed") }
    assert_raises(ArgumentError) { @m.counter(/t/) }
    assert_raises(ArgumentError) { @m.counter("t.x", labels: %i[le]) }
  end

  def test_counters_of_forked_workers_are_summed_in_shared_mode
    @dir = Dir.mktmpdir("hark-telemetry")
    @m = Hark::Metrics.new(directory: File.join(@dir, "metrics"))
    @m.counter("t.job", labels: %i[queue])
    N.instrument("t.job", queue: "mail") {}
    pids = 2.times.map do |i|
      fork do
        (2 + i).times { N.instrument("t.job", queue: "mail") {} }
        exit!(0)
      end
    end
    assert(pids.map { |pid| Process.wait2(pid).last }.all?(&:success?))
    assert_includes @m.exposition, %(hark_events_total{event="t.job",queue="mail"} 6) # 1 + 2 + 3
  end

  # A shared directory's exposition while a worker is killed and another forked in its
  # place, as a forking server restarts one: every scrape answers, and no series'
  # count ever goes down (a killed worker's counts stay in its file).
  def test_scrapes_during_a_worker_restart_succeed_and_never_go_backwards
    @dir = Dir.mktmpdir("hark-telemetry")
    @m = Hark::Metrics.new(directory: File.join(@dir, "metrics"))
    @m.counter("t.served", labels: %i[route])
    @m.histogram("t.timed")
    port = @m.serve("127.0.0.1:0")
    worker = lambda do
      r, w = IO.pipe
      pid = fork do
        r.close
        20.times do
          N.instrument("t.served", route: "/a") {}
          N.instrument("t.timed") {}
        end
        w.write("r")
        w.close
        sleep # recording done; killed from outside, as a stuck worker is
      end
      w.close
      assert_equal "r", r.read(1), "the worker recorded"
      r.close
      pid
    end
    counts = []
    scrape = lambda do
      res = Net::HTTP.get_response(URI("http://127.0.0.1:#{port}/metrics"))
      assert_equal "200", res.code, res.body
      served = res.body[/^hark_events_total\{event="t\.served",route="\/a"\} (\d+)$/, 1]
      timed = res.body[/^hark_event_duration_seconds_count\{event="t\.timed"\} (\d+)$/, 1]
      counts << [served.to_i, timed.to_i]
      rack = @m.call("HTTP_ACCEPT" => "text/plain") # the Rack application too
      assert_equal 200, rack[0]
    end
    scraper = Thread.new { loop { scrape.call } } # scrapes all along
    pids = [worker.call]
    3.times do
      Process.kill("KILL", pids.last)
      Process.wait(pids.last)
      scrape.call
      pids << worker.call # the replacement
    end
    scraper.kill
    scraper.join
    scrape.call
    Process.kill("KILL", pids.last)
    Process.wait(pids.last)
    scrape.call
    assert_operator counts.size, :>=, 5
    counts.each_cons(2) do |a, b|
      assert_operator b[0], :>=, a[0], "the counter went backwards: #{counts.inspect}"
      assert_operator b[1], :>=, a[1], "the histogram's count went backwards: #{counts.inspect}"
    end
    assert_equal [80, 80], counts.last, "four workers' 20 events each, the killed ones' kept"
  ensure
    @m&.stop_serving
  end

  # Counters scraped by real Prometheus, from hark's own endpoint in the protobuf format
  # (native histograms on) and from the text format: the counts of the events sent.
  def test_prometheus_scrapes_the_counters
    prometheus = ENV.fetch("PROMETHEUS", "prometheus")
    skip "prometheus not installed" unless system(prometheus, "--version", out: File::NULL, err: File::NULL)
    @dir = Dir.mktmpdir("hark-telemetry")
    @m = Hark::Metrics.new(directory: File.join(@dir, "metrics"), counter_metric: "rails_events_total")
    @m.counter("t.counted", labels: %i[status])
    @m.histogram("t.timed")
    pid = fork do
      4.times { N.instrument("t.counted", status: 200) {} }
      exit!(0)
    end
    Process.wait(pid)
    N.instrument("t.counted", status: 500) {}
    N.instrument("t.timed") {}
    port = @m.serve("127.0.0.1:0")
    [true, false].each do |native|
      values = TelemetryTools.prometheus(prometheus, port, File.join(@dir, native.to_s), native,
                                         ['rails_events_total{event="t.counted",status="200"}',
                                          'rails_events_total{event="t.counted",status="500"}',
                                          "sum(rails_events_total)"])
      assert_equal [4.0, 1.0, 5.0], values, native ? "protobuf" : "text"
    end
  end

  # hark's own endpoint over TLS with basic auth, scraped by real Prometheus with native
  # histograms on; its counts are the events sent.
  def test_prometheus_scrapes_the_endpoint_over_tls_with_basic_auth
    prometheus = ENV.fetch("PROMETHEUS", "prometheus")
    skip "prometheus not installed" unless system(prometheus, "--version", out: File::NULL, err: File::NULL)
    @dir = Dir.mktmpdir("hark-telemetry")
    certs = File.join(@dir, "certs")
    assert system("bash", File.join(TelemetryTools::ROOT, "tests", "support", "make_certs.sh"), certs)
    # (Without the ASan runtime make ruby-asan preloads: its crypt() is not libxcrypt's.)
    hash, = Open3.capture2({ "LD_PRELOAD" => nil }, "python3", "-W", "ignore", "-c",
                           'import crypt; print(crypt.crypt("s3cret", crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=32)))')
    hash = hash.strip
    skip "no bcrypt from python3's crypt" unless hash.start_with?("$2")
    @m = Hark::Metrics.new(metric: "rails_event_duration_seconds")
    @m.histogram("t.scraped", labels: %i[controller])
    7.times { N.instrument("t.scraped", controller: "Users") {} }
    port = @m.serve("127.0.0.1:0", tls_cert: File.join(certs, "server.pem"),
                                   tls_key: File.join(certs, "server.key"),
                                   basic_auth: { "prometheus" => hash })
    assert_equal port, @m.stats[:port]
    prom_port = TelemetryTools.free_port
    File.write(File.join(@dir, "prometheus.yml"), <<~YAML)
      global:
        scrape_interval: 1s
      scrape_configs:
        - job_name: hark
          scheme: https
          basic_auth: { username: prometheus, password: s3cret }
          tls_config: { ca_file: #{File.join(certs, 'ca.pem')}, server_name: localhost }
          static_configs: [{ targets: ["127.0.0.1:#{port}"] }]
    YAML
    pid = spawn(prometheus, "--config.file=#{File.join(@dir, 'prometheus.yml')}",
                "--storage.tsdb.path=#{File.join(@dir, 'data')}",
                "--web.listen-address=127.0.0.1:#{prom_port}", "--enable-feature=native-histograms",
                out: File::NULL, err: File::NULL)
    query = 'histogram_count(rails_event_duration_seconds{event="t.scraped",controller="Users"})'
    count = nil
    Timeout.timeout(60) do
      loop do
        res = Net::HTTP.get_response(URI("http://127.0.0.1:#{prom_port}/api/v1/query?query=#{URI.encode_www_form_component(query)}"))
        result = (JSON.parse(res.body).dig("data", "result") if res.is_a?(Net::HTTPSuccess))
        break count = Float(result[0]["value"][1]) if result && !result.empty?

        sleep 0.5
      rescue Errno::ECONNREFUSED
        sleep 0.5
      end
    end
    assert_equal 7.0, count, "a native histogram (protobuf scrape) of the 7 events"
  ensure
    if pid
      Process.kill("TERM", pid)
      Process.wait(pid)
    end
  end
end

class TestTelemetryOTLP < Minitest::Test
  N = ActiveSupport::Notifications

  def setup
    skip "built without hark's OTLP exporter (libcurl)" unless Hark::OTLP::NATIVE
    skip "node or tests/export/otlp's packages missing (make node-deps)" unless TelemetryTools.node_ready?
    @io, @port = TelemetryTools.receiver
  end

  def teardown
    Hark::OTLP.stop(timeout: 5) if Hark::OTLP.started?
    TelemetryTools.stop_receiver(@io, @port) if @io
  end

  def start(**options)
    Hark::OTLP.start(endpoint: "http://127.0.0.1:#{@port}", service_name: "hark-ruby-test",
                     schedule_delay_ms: 50, db_system: "sqlite", **options)
  end

  def attrs(span) = span["attributes"].transform_values { |v| v["value"] }

  Request = Struct.new(:env) # what Rails' payload[:request] is read for: its @env

  # A request as Rails 7.2 serves it: request.action_dispatch (not exported by default)
  # around a cache read in a middleware (a root of its own, before the controller) and
  # process_action.action_controller, whose payload's request holds the Rack env.
  def request(traceparent: nil, tracestate: nil, sql: "SELECT * FROM users WHERE id = 7")
    env = { "REQUEST_METHOD" => "GET", "PATH_INFO" => "/users/7", "rack.url_scheme" => "http",
            "action_dispatch.route_uri_pattern" => "/users/:id(.:format)",
            "HTTP_TRACEPARENT" => traceparent, "HTTP_TRACESTATE" => tracestate }.compact
    req = Object.new
    req.instance_variable_set(:@env, env)
    app = lambda do |rack_env|
      N.instrument("request.action_dispatch", request: req) do
        N.instrument("cache_read.active_support", key: "throttle", store: "MemoryStore") {}
        payload = { controller: "UsersController", action: "show", method: "GET",
                    path: "/users/7?x=1", request: req }
        N.instrument("process_action.action_controller", payload) do
          N.instrument("sql.active_record", sql: sql, name: "User Load", row_count: 1) {}
          @inside = Hark::OTLP.current_traceparent
          Hark::OTLP.logger.info("inside the action")
          N.instrument("render_template.action_view", identifier: "/app/views/users/show.html.erb") {}
          payload[:status] = 200
        end
      end
      [200, {}, [rack_env]]
    end
    Hark::OTLP::Middleware.new(app).call(env)
  end

  ACTION_ATTRIBUTES = { "http.request.method" => "GET", "url.path" => "/users/7", "url.scheme" => "http",
                        "http.response.status_code" => "200", "code.namespace" => "UsersController",
                        "code.function" => "show", "http.route" => "/users/:id" }.freeze

  def test_a_request_is_a_server_span_with_its_children_and_attributes
    start
    assert_equal "process_action.action_controller", Hark::OTLP.server_event
    incoming = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    request(traceparent: incoming, tracestate: "congo=t61rcWkgMzE")
    request # no traceparent: a trace of its own, still SERVER
    assert Hark::OTLP.flush(timeout: 20)
    got = TelemetryTools.received(@port)
    spans = got["spans"]
    assert_equal 8, spans.size, spans.map { |s| s["name"] }.inspect
    assert_empty spans.select { |s| s["name"] == "request.action_dispatch" }, "not in the default pattern"
    roots = spans.select { |s| s["name"] == "process_action.action_controller" }
    continued = roots.find { |s| s["traceId"] == "4bf92f3577b34da6a3ce929d0e0e4736" }
    refute_nil continued, "process_action continues the traceparent"
    assert_equal "00f067aa0ba902b7", continued["parentSpanId"]
    assert_equal "congo=t61rcWkgMzE", continued["traceState"]
    own = (roots - [continued]).first
    assert_nil own["parentSpanId"]
    assert_equal [2, 2], roots.map { |s| s["kind"] }, "both requests' spans are SERVER spans"
    roots.each { |root| assert_equal ACTION_ATTRIBUTES, attrs(root) }
    # The middleware's cache read came first: a trace of its own, INTERNAL, not the caller's.
    reads = spans.select { |s| s["name"] == "cache_read.active_support" }
    assert_equal 2, reads.size
    reads.each do |read|
      assert_nil read["parentSpanId"]
      assert_equal 1, read["kind"]
      refute_includes roots.map { |r| r["traceId"] }, read["traceId"]
    end
    by_id = spans.to_h { |s| [s["spanId"], s] }
    [continued, own].each do |root|
      tree = spans.select { |s| s["traceId"] == root["traceId"] }
      assert_equal 3, tree.size
      %w[sql.active_record render_template.action_view].each do |child|
        span = tree.find { |s| s["name"] == child }
        assert_equal root["spanId"], span["parentSpanId"], child
        assert_equal 1, span["kind"], child
        assert by_id.key?(span["parentSpanId"])
      end
    end
    sql = spans.find { |s| s["name"] == "sql.active_record" }
    assert_equal({ "db.system.name" => "sqlite", "db.operation.name" => "SELECT",
                   "rails.active_record.name" => "User Load", "db.response.returned_rows" => "1" },
                 attrs(sql), "no SQL text unless asked")
    render = spans.find { |s| s["name"] == "render_template.action_view" }
    assert_equal({ "code.filepath" => "/app/views/users/show.html.erb" }, attrs(render))
    # The log lines carry the trace and span of the action they were logged in.
    logs = got["logs"].select { |l| l["body"]["value"] == "inside the action" }
    assert_equal 2, logs.size
    logs.each do |l|
      action = spans.find { |s| s["spanId"] == l["spanId"] }
      refute_nil action, "a log record's span is exported"
      assert_equal "process_action.action_controller", action["name"]
      assert_equal action["traceId"], l["traceId"]
    end
    # The traceparent to send on names the current span in the trace.
    assert_match(/\A00-[0-9a-f]{32}-[0-9a-f]{16}-0[0-3]\z/, @inside)
  end

  # A forked worker (Puma's cluster mode) exports its own spans: the exporter's thread
  # starts again in the child, and the spans carry the child's process.pid.
  def test_a_forked_worker_exports_its_own_spans
    start
    pid = fork do
      request
      exit!(Hark::OTLP.flush(timeout: 20) ? 0 : 1)
    end
    _, status = Process.wait2(pid)
    assert status.success?, "the child's flush"
    request
    assert Hark::OTLP.flush(timeout: 20)
    got = TelemetryTools.received(@port)
    assert_equal 8, got["spans"].size
    pids = got["resources"].map { |r| r.dig("process.pid", "value") }.uniq
    assert_equal [pid.to_s, Process.pid.to_s].sort, pids.sort
  end

  BadToS = Class.new { def to_s = raise("no") }

  def test_a_log_message_of_any_type_is_sent_never_raised
    start
    N.instrument("request.action_dispatch", request: nil) do
      Hark::OTLP.logger.info(BadToS.new)
      Hark::OTLP.logger.warn(:sym)
      Hark::OTLP.logger.error(RuntimeError.new("boom"))
      Hark::OTLP.logger.info { "from a block" }
      Hark::OTLP.logger.debug("a\0b")
    end
    assert Hark::OTLP.flush(timeout: 20)
    bodies = TelemetryTools.received(@port)["logs"].map { |l| l["body"]["value"] }
    assert_equal ["(a TestTelemetryOTLP::BadToS that cannot be shown)", "sym", "boom (RuntimeError)",
                  "from a block", "a"], bodies
  end

  def test_sql_text_only_when_asked
    start(sql: true)
    request(sql: "SELECT email FROM users")
    assert Hark::OTLP.flush(timeout: 20)
    sql = TelemetryTools.received(@port)["spans"].find { |s| s["name"] == "sql.active_record" }
    assert_equal "SELECT email FROM users", attrs(sql)["db.query.text"]
  end

  def test_a_malformed_traceparent_is_counted_and_the_request_gets_its_own_trace
    start
    before = Hark::OTLP.stats[:bad_traceparents]
    ["00-zz", "00-00000000000000000000000000000000-00f067aa0ba902b7-01", "a\0b", "x" * 10_000].each do |tp|
      request(traceparent: tp)
    end
    assert_equal before + 4, Hark::OTLP.stats[:bad_traceparents], "each counted once"
    assert Hark::OTLP.flush(timeout: 20)
    roots = TelemetryTools.received(@port)["spans"].select { |s| s["name"] == "process_action.action_controller" }
    assert_equal 4, roots.size
    assert(roots.all? { |s| s["parentSpanId"].nil? && s["kind"] == 2 })
  end

  # A pattern without the server event (a Rack application's own root, here
  # request.action_dispatch): the middleware marks the next root as the SERVER span.
  def test_without_the_server_event_the_middleware_marks_the_next_root
    start(pattern: /\A(?:request\.action_dispatch|process_action\.action_controller)\z/, server_event: nil)
    assert_nil Hark::OTLP.server_event
    request(traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
    assert Hark::OTLP.flush(timeout: 20)
    spans = TelemetryTools.received(@port)["spans"]
    root = spans.find { |s| s["name"] == "request.action_dispatch" }
    action = spans.find { |s| s["name"] == "process_action.action_controller" }
    assert_equal [2, "00f067aa0ba902b7", "4bf92f3577b34da6a3ce929d0e0e4736"],
                 [root["kind"], root["parentSpanId"], root["traceId"]]
    assert_equal [1, root["spanId"], root["traceId"]], [action["kind"], action["parentSpanId"], action["traceId"]]
  end

  def test_payload_values_of_any_type_never_break_the_event
    start(pattern: /\At\./)
    [2**80, [1], Object.new, nil, "a\0b", :s, 1.5].each do |v|
      N.instrument("t.odd", sql: v, method: v, path: v, status: v, exception: [v, v]) {}
      N.instrument("t.odd", v) {} # a payload that is not even a Hash
    end
    assert Hark::OTLP.flush(timeout: 20)
    assert_equal 14, TelemetryTools.received(@port)["spans"].size
  end

  def test_an_unreachable_collector_is_counted_never_raised
    Hark::OTLP.start(endpoint: "http://127.0.0.1:#{TelemetryTools.free_port}", schedule_delay_ms: 10,
                     export_timeout_ms: 200, timeout_ms: 100)
    3.times { request }
    refute Hark::OTLP.flush(timeout: 5), "flush says spans were dropped"
    st = Hark::OTLP.stats
    assert_equal 12, st[:spans][:dropped], st.inspect
    assert_equal 0, st[:spans][:exported]
    refute Hark::OTLP.stop(timeout: 1)
  end
end

# A Rails application configured by the Railtie as the README says, served requests.
class TestTelemetryRails < Minitest::Test
  APP = <<~RUBY
    require "hark/rails"
    require "rails"
    require "active_record/railtie"
    require "action_controller/railtie"
    require "action_view/railtie"
    require "json"
    class TelemetryApp < Rails::Application
      config.root = ARGV[0]
      config.eager_load = false
      config.logger = ActiveSupport::Logger.new(nil)
      config.log_level = :info
      config.secret_key_base = "x" * 64
      config.hosts.clear
      config.hark.otlp = { endpoint: ARGV[1], schedule_delay_ms: 50 }
      config.hark.metrics = { path: "/metrics" }
    end
    TelemetryApp.initialize!
    ActiveRecord::Schema.verbose = false
    ActiveRecord::Schema.define { create_table(:books) { |t| t.string :title } }
    class Book < ActiveRecord::Base; end
    class BooksController < ActionController::Base
      def index
        Rails.logger.info("listing books")
        render inline: "<%= Book.all.map(&:title).join(',') %>"
      end
    end
    TelemetryApp.routes.draw { get "/books" => "books#index" }
    Book.create!(title: "Dune")
    tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    statuses = 3.times.map do
      env = Rack::MockRequest.env_for("/books", "HTTP_TRACEPARENT" => tp)
      status, _, body = TelemetryApp.call(env)
      body.close if body.respond_to?(:close)
      status
    end
    metrics = TelemetryApp.call(Rack::MockRequest.env_for("/metrics"))[2].each.to_a.join
    flushed = Hark::OTLP.flush(timeout: 20)
    puts JSON.generate(statuses: statuses, metrics: metrics, flushed: flushed)
  RUBY

  def test_the_railtie_exports_requests_spans_logs_and_metrics
    skip "built without hark's OTLP exporter (libcurl)" unless Hark::OTLP::NATIVE
    skip "railties not on the load path" unless $LOAD_PATH.any? { |p| File.exist?(File.join(p.to_s, "rails.rb")) }
    skip "the sqlite3 gem is missing" unless (begin
      require "sqlite3"
    rescue LoadError
      false
    end)
    skip "node or tests/export/otlp's packages missing (make node-deps)" unless TelemetryTools.node_ready?
    io, port = TelemetryTools.receiver
    Dir.mktmpdir("hark-telemetry-app") do |dir|
      paths = $LOAD_PATH.select { |p| p.to_s.include?("rails-7.2") || File.exist?(File.join(p.to_s, "hark.rb")) }
      env = { "DATABASE_URL" => "sqlite3::memory:", "RAILS_ENV" => "production" }
      out, err, status = Open3.capture3(env, RbConfig.ruby, *paths.flat_map { |p| ["-I", p.to_s] },
                                        "-e", APP, dir, "http://127.0.0.1:#{port}")
      assert status.success?, err
      result = JSON.parse(out.lines.last)
      assert_equal [200, 200, 200], result["statuses"]
      assert result["flushed"]
      assert_match(/_count\{event="process_action.action_controller",controller="BooksController",action="index",status="200",method="GET",format="html"\} 3$/,
                   result["metrics"])
      assert_match(/_count\{event="rails.view_runtime",controller="BooksController",action="index",status="200",method="GET",format="html"\} 3$/,
                   result["metrics"])
      got = TelemetryTools.received(port)
      spans = got["spans"]
      servers = spans.select { |s| s["kind"] == 2 }
      assert_equal 3, servers.size, spans.map { |s| [s["name"], s["kind"]] }.inspect
      assert_empty spans.select { |s| s["name"] == "request.action_dispatch" }
      servers.each do |action|
        assert_equal "process_action.action_controller", action["name"]
        assert_equal "4bf92f3577b34da6a3ce929d0e0e4736", action["traceId"]
        assert_equal "00f067aa0ba902b7", action["parentSpanId"]
        assert_equal({ "http.request.method" => "GET", "url.path" => "/books", "url.scheme" => "http",
                       "http.route" => "/books", "http.response.status_code" => "200" },
                     action["attributes"].slice("http.request.method", "url.path", "url.scheme", "http.route",
                                                "http.response.status_code").transform_values { |v| v["value"] })
        root = action
        below = spans.select { |s| s["parentSpanId"] == action["spanId"] }.map { |s| s["name"] }
        assert_includes below, "render_template.action_view"
        sql = spans.select { |s| s["name"] == "sql.active_record" && s["traceId"] == root["traceId"] }
        refute_empty sql
      end
      logs = got["logs"].select { |l| l["body"]["value"] == "listing books" }
      assert_equal 3, logs.size
      assert(logs.all? { |l| l["traceId"] == "4bf92f3577b34da6a3ce929d0e0e4736" })
      assert(logs.all? { |l| spans.any? { |s| s["spanId"] == l["spanId"] } })
    end
  ensure
    TelemetryTools.stop_receiver(io, port) if io
  end
end

# docs/rails.md's comparison, checked: the example application's index page traced by
# opentelemetry-ruby and by Hark::OTLP (examples/rails/script/span_tree.rb, the anchors'
# gems at bench/telemetry_gems.sh's versions in build/gems), both trees decoded by the
# node receiver. Every span of opentelemetry-ruby's has its counterpart in hark's, of the
# same kind and number, under the counterpart of its parent, as the table says.
class TestTelemetrySpanTrees < Minitest::Test
  RAILS_DIR = $LOAD_PATH.map(&:to_s).find { |p| p.end_with?("rails-7.2/railties/lib") }&.delete_suffix("/railties/lib")
  # opentelemetry-ruby's span => hark's (docs/rails.md); the others have the same name.
  COUNTERPART = { "GET /articles" => "process_action.action_controller", "Article query" => "sql.active_record",
                  "(remote caller)" => "(remote caller)" }.freeze
  PARENT = {}.freeze

  def test_every_opentelemetry_ruby_span_has_its_counterpart_in_harks_tree
    skip "built without hark's OTLP exporter (libcurl)" unless Hark::OTLP::NATIVE
    skip "Rails 7.2 not on the load path" unless RAILS_DIR
    skip "node or tests/export/otlp's packages missing (make node-deps)" unless TelemetryTools.node_ready?
    gems, err, st = Open3.capture3("bash", File.join(TelemetryTools::ROOT, "bench", "telemetry_gems.sh"),
                                   File.join(TelemetryTools::ROOT, "build", "gems"))
    skip "the anchors' gems are not installed (bench/telemetry_gems.sh): #{err.lines.last}" unless st.success?
    load_path = gems.split.reject { |f| f == "-I" }.join(":")
    io, port = TelemetryTools.receiver
    Dir.mktmpdir("hark-span-trees") do |dir|
      FileUtils.cp_r(File.join(TelemetryTools::ROOT, "examples", "rails"), dir)
      app = File.join(dir, "rails")
      %w[log storage tmp].each { |d| Dir.glob(File.join(app, d, "*")).each { |f| FileUtils.rm_rf(f) } }
      env = { "RAILS" => RAILS_DIR, "HARK_LIB" => File.join(TelemetryTools::ROOT, "bindings", "ruby", "lib"),
              "RAILS_ENV" => "production", "TELEMETRY_LOAD_PATH" => load_path,
              "OTEL_EXPORTER_OTLP_ENDPOINT" => "http://127.0.0.1:#{port}" }
      _, err, st = Open3.capture3(env, RbConfig.ruby, "bin/rails", "db:prepare", chdir: app)
      assert st.success?, err
      trees = %w[otel hark_otlp].to_h do |side|
        out, err, st = Open3.capture3(env.merge("SIDE" => side), RbConfig.ruby, "script/span_tree.rb", chdir: app)
        assert st.success?, "#{side}: #{err}"
        [side, JSON.parse(out)]
      end
      hark = trees["hark_otlp"]
      refute_empty trees["otel"]
      trees["otel"].each do |span|
        name = COUNTERPART.fetch(span["name"], span["name"])
        parents = PARENT.fetch(span["parent"]) { [COUNTERPART.fetch(span["parent"], span["parent"])] }
        match = hark.find { |h| h["name"] == name && parents.include?(h["parent"]) }
        refute_nil match, "#{span['name']} <- #{span['parent']}: no #{name} under #{parents.join(' or ')} in #{hark.map { |h| [h['name'], h['parent']] }}"
        assert_equal [span["kind"], span["count"]], [match["kind"], match["count"]], span["name"]
      end
    end
  ensure
    TelemetryTools.stop_receiver(io, port) if io
  end
end

# Puma in cluster mode (two workers forked from a preloaded application configured
# through the Railtie): both workers' spans arrive, each carrying its own process.pid,
# and the metrics any worker answers are the sum of both (shared mode).
class TestTelemetryPumaCluster < Minitest::Test
  CONFIG_RU = <<~RUBY
    require "hark/rails"
    require "rails"
    require "action_controller/railtie"
    class ClusterApp < Rails::Application
      config.eager_load = false
      config.logger = ActiveSupport::Logger.new(nil)
      config.secret_key_base = "x" * 64
      config.hosts.clear
      config.hark.otlp = { endpoint: ENV.fetch("TEST_OTLP"), schedule_delay_ms: 50 }
      config.hark.metrics = { path: "/metrics", directory: ENV.fetch("TEST_METRICS_DIR"),
                              histograms: { "process_action.action_controller" => { labels: %i[action] } } }
    end
    ClusterApp.initialize!
    class PingController < ActionController::Base
      # Slow enough that a worker with its one thread busy leaves the next to the other.
      def show
        sleep 0.3
        render plain: Process.pid.to_s
      end
    end
    ClusterApp.routes.draw { get "/ping" => "ping#show" }
    run ClusterApp
  RUBY

  def http_get(port, path)
    Net::HTTP.start("127.0.0.1", port, read_timeout: 30) { |h| h.get(path, "Connection" => "close") }
  end

  def test_both_workers_export_their_spans_and_their_metrics_are_summed
    skip "built without hark's OTLP exporter (libcurl)" unless Hark::OTLP::NATIVE
    skip "Rails 7.2 not on the load path" unless TestTelemetrySpanTrees::RAILS_DIR
    skip "node or tests/export/otlp's packages missing (make node-deps)" unless TelemetryTools.node_ready?
    gems, err, st = Open3.capture3("bash", File.join(TelemetryTools::ROOT, "bench", "telemetry_gems.sh"),
                                   File.join(TelemetryTools::ROOT, "build", "gems"))
    skip "Puma is not installed (bench/telemetry_gems.sh): #{err.lines.last}" unless st.success?
    puma = gems.split.find { |f| f.include?("/puma-") }.sub(%r{/lib\z}, "/bin/puma")
    io, otlp_port = TelemetryTools.receiver
    Dir.mktmpdir("hark-puma") do |dir|
      File.write(File.join(dir, "config.ru"), CONFIG_RU)
      port = TelemetryTools.free_port
      paths = $LOAD_PATH.select { |p| p.to_s.include?("rails-7.2") || File.exist?(File.join(p.to_s, "hark.rb")) }
      includes = (paths.map(&:to_s) + gems.split.reject { |f| f == "-I" }).flat_map { |p| ["-I", p] }
      env = { "TEST_OTLP" => "http://127.0.0.1:#{otlp_port}", "TEST_METRICS_DIR" => File.join(dir, "metrics"),
              "RAILS_ENV" => "production" }
      pid = spawn(env, RbConfig.ruby, *includes, puma, "-w", "2", "-t", "1:1", "--preload", "-b",
                  "tcp://127.0.0.1:#{port}", File.join(dir, "config.ru"), chdir: dir,
                  out: File.join(dir, "puma.log"), err: [:child, :out])
      begin
        Timeout.timeout(60) do
          sleep 0.2 until (http_get(port, "/metrics") rescue nil)&.code == "200" # rubocop:disable Style/RescueModifier
        end
        # Pairs of requests at once: a worker busy with one leaves the other to the other.
        pids = []
        rounds = 0
        until pids.uniq.size == 2 || rounds == 10
          pids += 2.times.map { Thread.new { http_get(port, "/ping").body } }.map(&:value)
          rounds += 1
        end
        assert_equal 2, pids.uniq.size, "both workers served: #{File.read(File.join(dir, 'puma.log'))}"
        metrics = http_get(port, "/metrics").body
        assert_match(/_count\{event="process_action.action_controller",action="show"\} #{pids.size}$/, metrics)
        seen = []
        Timeout.timeout(30) do
          until pids.uniq.all? { |p| seen.include?(p) }
            got = TelemetryTools.received(otlp_port)
            # The request's spans, by the process.pid of the resource they came with.
            seen.concat(got["spans"].select { |s| s["name"] == "process_action.action_controller" }
                                    .map { |s| s["_pid"].to_s })
            sleep 0.2
          end
        end
        assert_equal pids.uniq.sort, (seen.uniq & pids.uniq).sort
      ensure
        Process.kill("TERM", pid)
        Process.wait(pid)
      end
    end
  ensure
    TelemetryTools.stop_receiver(io, otlp_port) if io
  end
end
