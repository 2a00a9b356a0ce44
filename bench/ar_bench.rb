# frozen_string_literal: true
#
# bench/ar_bench.rb -- ActiveRecord 7.2 on in-memory SQLite, for bench/run.sh: one
# process per side and case, so that each run starts from the same state.
#
#   ruby -I rails-7.2/shim -I rails-7.2/activesupport/lib -I rails-7.2/activemodel/lib \
#        -I rails-7.2/activerecord/lib [-I bindings/ruby/lib -r hark/rails] bench/ar_bench.rb
#
# Cases (ONLY, comma-separated):
#   ar_sql_event_info    one sql.active_record event as ActiveRecord instruments it: the
#   ar_sql_event_debug   connection's own `log` (its instrumenter, the payload it builds)
#                        around an empty block, with the bind values of a real
#                        Book.find. ActiveRecord's LogSubscriber and ExplainSubscriber
#                        are attached, as in any application; ActiveRecord::Base.logger
#                        is an ActiveSupport::Logger at :info (nothing logged) or at
#                        :debug (the SQL line written to File::NULL).
#   find_info, find_debug  Book.find(id) on a 100-row table, ids in turn, same loggers.
#
# Times are the thread's CPU time (CLOCK_THREAD_CPUTIME_ID), so that time spent waiting
# for a CPU on a busy machine is not counted: batches of about 50 ms, the median batch.
#
# Env: LABEL (printed in RESULT lines), WARMUP and TIME (seconds of CPU time, default 1
# and 2), OPS (measure exactly this many operations instead, in one batch, after 200 of
# warm-up, the garbage collector off while they run; with CALLGRIND_MARKS, the path of
# bench's libhark_callgrind_marks.so, callgrind counts only them), ONLY, NOOP=1 (replace ActiveSupport::Notifications.instrument and
# Instrumenter#instrument by a bare yield(payload): what the application costs with no
# instrumentation at all). Output, one line per case (the spread is the interquartile
# range of the batches, in % of the median):
#   RESULT<TAB>label<TAB>jit<TAB>case<TAB>i/s<TAB>ns/op<TAB>spread %
require "set"
require "logger"
require "active_support"
require "active_support/logger"
require "active_record"

label = ENV.fetch("LABEL", "ar#{ActiveRecord::VERSION::STRING}")
warmup = Float(ENV.fetch("WARMUP", "1"))
time = Float(ENV.fetch("TIME", "2"))
only = ENV["ONLY"]&.split(",")
jit = defined?(RubyVM::YJIT) && RubyVM::YJIT.enabled? ? "yjit" : "interp"

require_relative "../examples/rails/script/no_notifications" if ENV["NOOP"] == "1"

ActiveRecord::Base.logger = ActiveSupport::Logger.new(File::NULL, level: :info)
ActiveRecord::Base.establish_connection(adapter: "sqlite3", database: ":memory:")
ActiveRecord::Migration.verbose = false
ActiveRecord::Schema.define do
  create_table :books do |t|
    t.string :title
    t.integer :pages
  end
end

class Book < ActiveRecord::Base
end

ROWS = 100
Book.insert_all!(Array.new(ROWS) { |i| { title: "Book #{i}", pages: 100 + i } })

# What a real Book.find hands to `log`.
captured = nil
grab = ActiveSupport::Notifications.subscribe("sql.active_record") do |*, payload|
  captured ||= payload.dup if payload[:name] == "Book Load"
end
Book.find(1)
ActiveSupport::Notifications.unsubscribe(grab)
abort "ar_bench: no Book Load event seen" unless captured || ENV["NOOP"] == "1"
captured ||= { sql: "SELECT 1", name: "Book Load", binds: [], type_casted_binds: [] }
conn = ActiveRecord::Base.lease_connection
sql, name, binds, casted = captured.values_at(:sql, :name, :binds, :type_casted_binds)

# Both listeners of sql.active_record in every ActiveRecord 7.2 application must be
# there (a benchmark without them would measure something else).
unless ENV["NOOP"] == "1"
  listeners = ActiveSupport::Notifications.notifier.all_listeners_for("sql.active_record")
  kinds = listeners.map { |l| l.respond_to?(:delegate) ? l.delegate.class : l.class }
  unless kinds.include?(ActiveRecord::LogSubscriber) && kinds.include?(ActiveRecord::ExplainSubscriber)
    abort "ar_bench: sql.active_record listeners are #{kinds.inspect}"
  end
end

puts "RUBY      #{RUBY_DESCRIPTION}"
puts "AR        #{ActiveRecord::VERSION::STRING} (sqlite3 #{SQLite3::VERSION}), notifier #{ActiveSupport::Notifications.notifier.class.ancestors.take(2).join(' < ')}"

def with_level(level)
  ActiveRecord::Base.logger.level = level
  yield
ensure
  ActiveRecord::Base.logger.level = :info
end

ids = (1..ROWS).to_a
cases = {
  "ar_sql_event_info" => [:info, -> { conn.send(:log, sql, name, binds, casted) { |p| p[:row_count] = 1 } }],
  "ar_sql_event_debug" => [:debug, -> { conn.send(:log, sql, name, binds, casted) { |p| p[:row_count] = 1 } }],
  "find_info" => [:info, -> { Book.find(ids[(@i = (@i || 0) + 1) % ROWS]) }],
  "find_debug" => [:debug, -> { Book.find(ids[(@i = (@i || 0) + 1) % ROWS]) }],
}

def cpu_now = Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID)

def batch(body, n)
  t0 = cpu_now
  i = 0
  while i < n
    body.call
    i += 1
  end
  cpu_now - t0
end

# [ns per op (median batch), spread %]
def measure(body, warmup, time)
  n = 1
  n *= 2 while batch(body, n) < 0.05 && n < 1 << 24
  t_end = cpu_now + warmup
  batch(body, n) while cpu_now < t_end
  samples = []
  t_end = cpu_now + time
  samples << batch(body, n) / n * 1e9 while cpu_now < t_end || samples.size < 5
  samples.sort!
  q = ->(f) { samples[((samples.size - 1) * f).round] }
  [q.(0.5), (q.(0.75) - q.(0.25)) / q.(0.5) * 100]
end

# [ns per op, 0]: exactly n operations (callgrind runs: OPS)
def measure_exactly(body, n, marks)
  batch(body, 200)
  GC.start
  GC.disable
  marks&.call(1)
  seconds = batch(body, n)
  marks&.call(0)
  GC.enable
  [seconds / n * 1e9, 0.0]
end

marks = nil
if (lib = ENV["CALLGRIND_MARKS"])
  require "fiddle"
  marks = Fiddle::Function.new(Fiddle.dlopen(lib)["hark_callgrind_marks"], [Fiddle::TYPE_INT], Fiddle::TYPE_VOID)
end
ops = ENV["OPS"] && Integer(ENV["OPS"])

rows = []
cases.each do |case_name, (level, body)|
  next if only && !only.include?(case_name)
  with_level(level) do
    ns, spread = ops ? measure_exactly(body, ops, marks) : measure(body, warmup, time)
    rows << [case_name, 1e9 / ns, ns, spread]
  end
end

rows.each do |case_name, ips, ns, err|
  printf("RESULT\t%s\t%s\t%s\t%.1f\t%.1f\t%.1f\n", label, jit, case_name, ips, ns, err)
end
