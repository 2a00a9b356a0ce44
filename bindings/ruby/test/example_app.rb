# frozen_string_literal: true

# The example application (examples/rails) as a user runs it: a copy of it, its
# database made with bin/rails db:prepare, served by `bin/rails server -u webrick` in
# production, once on Rails' own fanout (HARK=0) and once with hark loaded from
# config/boot.rb, at :info and at :debug. Every route answers as it should (the index
# page with its 100 articles rendered, the JSON action, the form and its CSRF-protected
# POST with and without the form's token, the action that raises, /up), the two
# servers answer alike, and production.log is the same line for line on both fanouts
# once what differs from run to run is masked (request ids, times, durations).
#
# Then the same under Debian's Puma in cluster mode, as Rails runs in production
# (config/puma.rb: 2 workers forked from a master that loaded the application,
# preload_app!, 4 threads each), with a batch of requests 8 at a time on top: the
# responses alike, production.log the same once sorted (two workers write it). With
# hark, the flight recorder of config/initializers/hark_recorder.rb writes a dump from
# the worker that served a request that raised, while the server runs.
#
#   ruby bindings/ruby/test/example_app.rb RAILS_DIR     (make ruby-test runs it)
#
# The differences the logs keep are masked too, and counted: where Rails logs a
# framework backtrace (the 422 of a POST without its token), its three frames of
# ActiveSupport's instrument (notifications.rb, instrumenter.rb) are hark's C method,
# which Ruby shows at its caller's line (bindings/ruby/README.md, Differences). And with
# hark the application runs the flight recorder of config/initializers/hark_recorder.rb,
# which listens to every event, process_middleware.action_dispatch among them: so Rails
# wraps each middleware in its instrumentation proxy (as it does for any such
# subscriber), whose three frames show in that backtrace once per middleware.
require "fileutils"
require "json"
require "net/http"
require "rbconfig"
require "socket"
require "tmpdir"
require "uri"

RAILS = File.expand_path(ARGV[0] || abort("usage: example_app.rb RAILS_DIR"))
ROOT = File.expand_path("../../..", __dir__)
HARK_LIB = File.join(ROOT, "bindings", "ruby", "lib")
SOURCE = File.join(ROOT, "examples", "rails")
$failures = []

def check(what, ok)
  $failures << what unless ok
  puts "#{ok ? 'ok  ' : 'FAIL'} #{what}"
end

def free_port
  server = TCPServer.new("127.0.0.1", 0)
  server.addr[1]
ensure
  server&.close
end

# A copy of the application without what a run leaves (logs, database, tmp).
def copy_app(dir)
  FileUtils.cp_r(SOURCE, dir)
  app = File.join(dir, "rails")
  %w[log storage tmp].each { |d| Dir.glob(File.join(app, d, "*")).each { |f| FileUtils.rm_rf(f) } }
  app
end

def env_for(hark, level)
  { "RAILS" => RAILS, "HARK_LIB" => HARK_LIB, "RAILS_ENV" => "production",
    "HARK" => hark ? "1" : "0", "RAILS_LOG_LEVEL" => level }
end

# Debian's Puma (the puma package), in cluster mode: WEB_CONCURRENCY workers of
# RAILS_MAX_THREADS threads (config/puma.rb).
PUMA = ENV.fetch("PUMA", "/usr/bin/puma")
PUMA_WORKERS = 2

# The command that serves the application: WEBrick in one process, or Puma's cluster.
def server_command(server, port)
  if server == :puma
    [{ "WEB_CONCURRENCY" => PUMA_WORKERS.to_s, "RAILS_MAX_THREADS" => "4" },
     [PUMA, "-C", "config/puma.rb", "-b", "tcp://127.0.0.1:#{port}"]]
  else
    [{}, [RbConfig.ruby, "bin/rails", "server", "-u", "webrick", "-b", "127.0.0.1", "-p", port.to_s]]
  end
end

# 32 JSON requests, 8 at a time: [label, response] in the order they were asked for.
def concurrent_requests(port)
  paths = (1..32).map { |i| "/articles/#{i}.json" }
  queue = Queue.new
  paths.each_with_index { |path, i| queue << [path, i] }
  results = Array.new(paths.size)
  8.times.map do
    Thread.new do
      http = Net::HTTP.new("127.0.0.1", port)
      http.read_timeout = 60
      loop do
        path, i = queue.pop(true) rescue break
        results[i] = ["GET #{path} (8 at a time)", http.request(Net::HTTP::Get.new(path))]
      end
    ensure
      http&.finish if http&.started?
    end
  end.each(&:join)
  results
end

# The requests a user's browser would make, in order: [label, status, response].
def requests(port)
  http = Net::HTTP.new("127.0.0.1", port)
  http.read_timeout = 60
  out = []
  get = ->(path, headers = {}) { http.request(Net::HTTP::Get.new(path, headers)) }
  res = get.("/articles")
  out << ["GET /articles", res]
  out << ["GET /articles/1.json", get.("/articles/1.json")]
  res = get.("/articles/new")
  out << ["GET /articles/new", res]
  token = res.body[/name="authenticity_token" value="([^"]+)"/, 1]
  cookie = res["set-cookie"].to_s.split(";").first
  post = Net::HTTP::Post.new("/articles", "Cookie" => cookie.to_s)
  post.set_form_data("authenticity_token" => token.to_s, "article[title]" => "Posted",
                     "article[body]" => "With the form's token")
  out << ["POST /articles with the token", http.request(post)]
  forged = Net::HTTP::Post.new("/articles", "Cookie" => cookie.to_s)
  forged.set_form_data("article[title]" => "Forged")
  out << ["POST /articles without the token", http.request(forged)]
  out << ["GET /boom", get.("/boom")]
  out << ["GET /articles/999.json", get.("/articles/999.json")]
  out << ["GET /up", get.("/up")]
  out
ensure
  http&.finish if http&.started?
end

EXPECTED = {
  "GET /articles" => "200",
  "GET /articles/1.json" => "200",
  "GET /articles/new" => "200",
  "POST /articles with the token" => "302",
  "POST /articles without the token" => "422",
  "GET /boom" => "500",
  "GET /articles/999.json" => "404",
  "GET /up" => "200"
}.merge((1..32).to_h { |i| ["GET /articles/#{i}.json (8 at a time)", "200"] }).freeze

# The parent of a process (its pid's /proc entry).
def parent_of(pid)
  File.read("/proc/#{pid}/stat")[/\) \S+ (\d+)/, 1].to_i
rescue SystemCallError
  nil
end

# The paths of the requests whose action raises: the forged POST (422), /boom (500) and
# the missing record (404, ActiveRecord::RecordNotFound). Which worker serves which is
# Puma's choice, so a worker's dump may hold any of them.
RAISING_PATHS = %w[/articles /boom /articles/999.json].freeze

# While Puma's cluster runs with hark: the requests that raised (the 422 of the forged
# POST, /boom, the 404) made the worker that served them write a recorder dump, each into its own
# log/hark-recorder-<pid>-<n>.json. Waits for them (the recorder's thread writes them)
# while the server keeps running.
def check_worker_dumps(app, master, level)
  pattern = File.join(app, "log", "hark-recorder-*-*.json")
  dumps = {}
  deadline = Time.now + 60
  loop do
    Dir.glob(pattern).each do |path|
      dumps[path] ||= (JSON.parse(File.read(path)) rescue nil) # whole once it parses
    end
    dumps.compact!
    break if dumps.any? || Time.now > deadline
    sleep 0.1
  end
  side = "Puma cluster, hark, :#{level}"
  check("#{side}: a request that raised wrote a recorder dump while the server runs (#{dumps.size})",
        dumps.any? && Process.waitpid(master, Process::WNOHANG).nil?)
  dumps.each do |path, doc|
    pid = File.basename(path)[/hark-recorder-(\d+)-/, 1].to_i
    summary = doc.dig("otherData", "recorder") || {}
    failed = doc["traceEvents"].to_a.select do |ev|
      ev["name"] == "process_action.action_controller" && ev.dig("args", "exception")
    end
    check("#{side}: #{File.basename(path)} was written by a worker (pid #{pid}, master #{master})",
          pid != master && summary["pid"] == pid && parent_of(pid) == master)
    check("#{side}: #{File.basename(path)} is a trigger's dump holding the request that raised " \
          "(#{failed.map { |ev| ev.dig('args', 'path') }.inspect})",
          summary["reason"] == "trigger" && failed.any? { |ev| RAISING_PATHS.include?(ev.dig("args", "path")) })
  end
end

# One server of the application on a fresh copy of its database; the responses and
# the log it wrote. Puma's cluster also serves a batch 8 at a time; a block is given
# the server's pid while it still runs, after the requests.
def serve(app, pristine, hark, level, server = :webrick)
  FileUtils.rm_rf(Dir.glob(File.join(app, "storage", "*")))
  FileUtils.cp_r(Dir.glob(File.join(pristine, "*")), File.join(app, "storage"))
  log = File.join(app, "log", "production.log")
  File.write(log, "")
  port = free_port
  out = File.join(app, "tmp", "server.#{server}.#{hark ? 'hark' : 'rails'}.#{level}.out")
  extra, command = server_command(server, port)
  pid = Process.spawn(env_for(hark, level).merge(extra), *command, chdir: app, out: out, err: out)
  deadline = Time.now + 120
  loop do
    Net::HTTP.get_response(URI("http://127.0.0.1:#{port}/up"))
    break
  rescue SystemCallError, IOError
    abort "server did not start:\n#{File.read(out)}" if Time.now > deadline || Process.waitpid(pid, Process::WNOHANG)
    sleep 0.2
  end
  File.write(log, "") # the boot's own /up
  responses = requests(port)
  responses += concurrent_requests(port) if server == :puma
  yield pid if block_given?
  [responses, File.read(log)]
ensure
  if pid
    Process.kill("TERM", pid)
    Process.wait(pid)
  end
end

# What differs from one run to the next: request ids, times and durations, the tmp
# directory of the copy. Rails' three backtrace frames of instrument and hark's two
# become one marker line each, counted.
def masked(log, app)
  frames = 0
  text = log.gsub(app, "APP")
            .gsub(/\[\h{8}-\h{4}-\h{4}-\h{4}-\h{12}\]/, "[REQUEST-ID]")
            .gsub(/\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)? ?[+-]\d{4}/, "TIME")
            .gsub(/"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+"/, '"TIME"')
            .gsub(/\d+(\.\d+)?ms/, "Nms")
            .gsub(/127\.0\.0\.1:\d+/, "127.0.0.1:PORT")
  # Ruby 3.1 to 3.3 write "in `instrument'", Ruby 3.4 "in 'ActiveSupport::Notifications.instrument'".
  label = ->(m) { "(?:`#{m}'|'(?:[\\w:]+[#.])?#{m}')" }
  block = "(?:`block in instrument'|'block in (?:[\\w:]+[#.])?instrument')"
  rails = %r{^(\[REQUEST-ID\] )\S*active_support/notifications\.rb:\d+:in #{block}\n\1\S*active_support/notifications/instrumenter\.rb:\d+:in #{label.call('instrument')}\n\1\S*active_support/notifications\.rb:\d+:in #{label.call('instrument')}\n}
  hark = %r{^(\[REQUEST-ID\] )(\S*:\d+):in #{label.call('instrument')}\n(\1\2:in #{label.call('instrument')}\n)?(?=\1\S*:\d+:in #{label.call('process_action')})}
  proxy = %r{^(\[REQUEST-ID\] )\S*action_dispatch/middleware/stack\.rb:\d+:in (?:`block in call'|'block in (?:[\w:]+[#.])?call')\n\1\S*action_dispatch/middleware/stack\.rb:\d+:in #{label.call('instrument')}\n\1\S*action_dispatch/middleware/stack\.rb:\d+:in #{label.call('call')}\n}
  proxies = 0
  text = text.gsub(proxy) { proxies += 1; "" }
  text = text.gsub(rails) { frames += 1; "#{$1}<instrument frames>\n" }
  text = text.gsub(hark) { frames += 1; "#{$1}<instrument frames>\n" }
  [text, frames, proxies]
end

Dir.mktmpdir("hark-example-app") do |dir|
  app = copy_app(dir)
  pristine = File.join(dir, "pristine")
  FileUtils.mkdir_p(pristine)
  ok = system(env_for(false, "info"), RbConfig.ruby, "bin/rails", "db:prepare", chdir: app,
              out: File::NULL, err: File.join(dir, "db_prepare.log"))
  abort "bin/rails db:prepare failed:\n#{File.read(File.join(dir, 'db_prepare.log'))}" unless ok
  FileUtils.cp_r(Dir.glob(File.join(app, "storage", "*")), pristine)

  # Which fanout each side boots with, and what hark caches there (Hark.stats).
  probe = 'n = ActiveSupport::Notifications.notifier; h = defined?(Hark::Fanout) && n.is_a?(Hark::Fanout); ' \
          'puts JSON.generate(hark: h ? true : false, stats: h ? Hark.stats.reject { |k, _| k == :subscriptions } : nil)'
  [false, true].each do |hark|
    out = IO.popen(env_for(hark, "info"), [RbConfig.ruby, "bin/rails", "runner", probe], chdir: app, &:read)
    answer = JSON.parse(out.lines.last.to_s) rescue {}
    check("#{hark ? 'HARK=1' : 'HARK=0'}: the application's fanout is #{hark ? '' : 'not '}hark's", answer["hark"] == hark)
    next unless hark
    stats = answer["stats"] || {}
    log = stats["log_subscriptions"] || {}
    check("Hark.stats: every log subscription is cached (#{log.inspect})",
          log["cached"].to_i > 0 && log["asked_per_event"] == 0)
  end

  %w[info debug].each do |level|
    runs = [false, true].to_h { |hark| [hark, serve(app, pristine, hark, level)] }
    runs.each do |hark, (responses, _log)|
      side = hark ? "hark" : "Rails' fanout"
      responses.each do |label, res|
        check("#{side}, :#{level}: #{label} answers #{EXPECTED[label]} (#{res.code})", res.code == EXPECTED[label])
      end
      index = responses.assoc("GET /articles")[1].body
      check("#{side}, :#{level}: the index page renders 50 partials and a collection of 50",
            index.scan(/<article id="article_\d+">/).size == 50 && index.scan(/<li>Article \d+/).size == 50)
      json = JSON.parse(responses.assoc("GET /articles/1.json")[1].body) rescue {}
      check("#{side}, :#{level}: the JSON action answers the article", json["title"] == "Article 1")
    end
    bodies = runs.transform_values { |responses, _| responses.map { |label, res| [label, res.code, res.body.gsub(/value="[^"]+"|content="[^"]+"/, "X")] } }
    check(":#{level}: both servers answer alike", bodies[false] == bodies[true])
    (rails_log, rails_frames, rails_proxies), (hark_log, hark_frames, hark_proxies) =
      [false, true].map { |hark| masked(runs[hark][1], app) }
    check(":#{level}: the middleware proxies' frames are hark's alone, where the recorder listens " \
          "(#{rails_proxies} and #{hark_proxies} groups, masked)", rails_proxies.zero? && hark_proxies.positive?)
    if (keep = ENV["KEEP_LOGS"])
      File.write(File.join(keep, "rails.#{level}.log"), runs[false][1])
      File.write(File.join(keep, "hark.#{level}.log"), runs[true][1])
    end
    check(":#{level}: production.log is not empty (#{rails_log.lines.size} lines)", rails_log.lines.size > 20)
    check(":#{level}: Rails' log has the backtrace of the 422 (#{rails_frames} instrument frame groups)", rails_frames == 1)
    check(":#{level}: hark's has it at the same place (#{hark_frames})", hark_frames == rails_frames)
    same = rails_log == hark_log
    check(":#{level}: production.log is the same on both fanouts, line for line", same)
    next if same

    rails_log.lines.zip(hark_log.lines).each_with_index do |(a, b), i|
      next if a == b
      puts "  line #{i + 1}:\n    Rails: #{a.inspect}\n    hark:  #{b.inspect}"
      break
    end
  end

  # Puma in cluster mode: the workers fork from a master that loaded the application
  # (and, with hark, the fanout and the recorder).
  %w[info debug].each do |level|
    runs = [false, true].to_h do |hark|
      FileUtils.rm_f(Dir.glob(File.join(app, "log", "hark-recorder-*")))
      [hark, serve(app, pristine, hark, level, :puma) { |master| check_worker_dumps(app, master, level) if hark }]
    end
    runs.each do |hark, (responses, _log)|
      side = "Puma cluster, #{hark ? 'hark' : "Rails' fanout"}"
      bad = responses.reject { |label, res| res.code == EXPECTED[label] }
      check("#{side}, :#{level}: #{responses.size} requests answer as they should " \
            "(#{bad.map { |label, res| "#{label}: #{res.code}" }.inspect})", bad.empty?)
    end
    bodies = runs.transform_values { |responses, _| responses.map { |label, res| [label, res.code, res.body.gsub(/value="[^"]+"|content="[^"]+"/, "X")] } }
    check("Puma cluster, :#{level}: both fanouts answer alike", bodies[false] == bodies[true])
    rails_log, hark_log = [false, true].map { |hark| masked(runs[hark][1], app)[0].lines.sort }
    check("Puma cluster, :#{level}: production.log is not empty (#{rails_log.size} lines)", rails_log.size > 40)
    same = rails_log == hark_log
    check("Puma cluster, :#{level}: production.log, sorted, is the same on both fanouts", same)
    next if same

    (rails_log - hark_log).first(3).each { |line| puts "  only Rails': #{line.inspect}" }
    (hark_log - rails_log).first(3).each { |line| puts "  only hark's: #{line.inspect}" }
  end
end

if $failures.empty?
  puts "example_app: every route served and the logs the same on both fanouts, under WEBrick " \
       "and Puma's cluster; a worker's recorder dump for a request that raised"
else
  puts "example_app: #{$failures.size} check(s) failed"
  exit 1
end
