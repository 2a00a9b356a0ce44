# frozen_string_literal: true
#
# bench/rails_bench.rb -- the seed benchmark on ActiveSupport::Notifications, used by
# bench/run.sh when the project's anchor script is not checked out beside the
# repository. Same cases, same output: one line per case,
#   RESULT<TAB>label<TAB>jit<TAB>case<TAB>i/s<TAB>ns/op<TAB>error %
#
# Ten subscribers of each kind on one event name each, then `instrument(name) {}` in
# a benchmark-ips loop; plus a LogSubscriber whose sql handler logs at DEBUG, attached
# once with a logger at ERROR (nothing logged) and once with a logger at DEBUG
# writing to /dev/null.
#
# Env: WARMUP and TIME (benchmark-ips seconds, default 1 and 3), ONLY (comma-separated
# case names), LABEL (default: the ActiveSupport version).
require "set"
require "logger"
require "active_support"
require "active_support/notifications"
require "active_support/log_subscriber"
require "benchmark/ips"

AS_N = ActiveSupport::Notifications
label = ENV.fetch("LABEL", ActiveSupport::VERSION::STRING)
warmup = Float(ENV.fetch("WARMUP", "1"))
time = Float(ENV.fetch("TIME", "3"))
only = ENV["ONLY"]&.split(",")
jit = defined?(RubyVM::YJIT) && RubyVM::YJIT.enabled? ? "yjit" : "interp"

puts "RUBY      #{RUBY_DESCRIPTION}"
puts "AS        #{ActiveSupport::VERSION::STRING}"

class BenchEvented
  def start(_name, _id, _payload); end
  def finish(_name, _id, _payload); end
end

class BenchSilenced < BenchEvented
  def silenced?(_name) = true
end

plain_lines = proc { |_severity, _time, _progname, msg| "#{msg}\n" }
quiet_logger = Logger.new(File::NULL, level: Logger::ERROR, formatter: plain_lines)
loud_logger = Logger.new(File::NULL, level: Logger::DEBUG, formatter: plain_lines)
can_set_level = ActiveSupport::LogSubscriber.respond_to?(:subscribe_log_level, true)

[[:demo, quiet_logger], [:demo_active, loud_logger]].each do |namespace, lg|
  klass = Class.new(ActiveSupport::LogSubscriber) do
    define_method(:logger) { lg }
    define_method(:sql) { |event| debug { "  Demo SQL (#{event.duration.round(1)}ms)  SELECT 1" } }
  end
  klass.send(:subscribe_log_level, :sql, :debug) if can_set_level
  klass.attach_to(namespace)
end

10.times do
  AS_N.subscribe("timed") { |_name, _start, _finish, _id, _payload| }
  AS_N.monotonic_subscribe("timed_monotonic") { |_name, _start, _finish, _id, _payload| }
  AS_N.subscribe("event_object") { |_event| }
  AS_N.subscribe("evented", BenchEvented.new)
  AS_N.subscribe("silenced", BenchSilenced.new)
end

cases = {
  "baseline_empty" => nil,
  "timed" => "timed",
  "timed_monotonic" => "timed_monotonic",
  "event_object" => "event_object",
  "evented" => "evented",
  "unsubscribed" => "unsubscribed",
  "silenced" => "silenced",
  "logsub_sql_silenced" => "sql.demo",
  "logsub_sql_active" => "sql.demo_active",
}

rows = []
cases.each do |name, event|
  next if only && !only.include?(name)
  report = Benchmark.ips do |x|
    x.config(warmup: warmup, time: time)
    if event
      x.report(name) { AS_N.instrument(event) { } }
    else
      x.report(name) { }
    end
  end
  entry = report.entries.first
  rows << [name, entry.ips, 1e9 / entry.ips, entry.error_percentage]
end

rows.each do |name, ips, ns, err|
  printf("RESULT\t%s\t%s\t%s\t%.1f\t%.1f\t%.1f\n", label, jit, name, ips, ns, err)
end
