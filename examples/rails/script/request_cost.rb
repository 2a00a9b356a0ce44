# frozen_string_literal: true

# script/request_cost.rb -- what one request of this application costs, in one process:
# the application booted in production (config/environment.rb, so hark is loaded by
# config/boot.rb exactly as a user's application loads it), then the index page
# requested through the whole Rack stack (Rails.application.call, the body read and
# closed as a server does) over and over.
#
#   RAILS=../shared/rails-7.2 SIDE=hark LEVEL=info ruby script/request_cost.rb
#
# (bin/measure runs it for every side and level and prints the comparison; bench/run.sh
# runs it for `make bench`.)
#
# Environment:
#   SIDE       hark (the default: config/boot.rb loads hark/rails), rails (HARK=0: Rails'
#              own fanout), or floor (Rails' fanout, then ActiveSupport::Notifications'
#              instrument and Instrumenter#instrument reduced to a bare yield: what the
#              request costs with no notification at all); or one of
#              script/telemetry.rb's sides: otel, prom (Rails' fanout and
#              opentelemetry-ruby, yabeda-rails), hark_otlp, hark_metrics (hark's fanout
#              and Hark::Metrics, Hark::OTLP)
#   LEVEL      the log level, info or debug (RAILS_LOG_LEVEL at boot, as production.rb
#              reads it)
#   REQ_PATH   the page (default /articles)
#   WARMUP     requests before measuring (default 50)
#   TIME       seconds of CLOCK time to measure (default 2); batches of about 50 ms,
#              the median batch is the result
#   CLOCK      thread (the default: thread CPU time, which the garbage collector's work
#              is part of, as it runs on the requesting thread) or wall (elapsed time)
#   REQUESTS   measure exactly this many requests instead, in one batch (callgrind runs)
#   CALLGRIND_MARKS  path of bench's libhark_callgrind_marks.so: instrumentation and
#              collection are switched on around the REQUESTS (under valgrind
#              --tool=callgrind --instr-atstart=no --collect-atstart=no), so the count is
#              the requests' alone
#   KEEP_GC=1  leave the garbage collector as the application has it while REQUESTS run
#              (no GC.start before, no GC.disable): its work is then counted too
#   COUNT=1    also count the notifications of one request (a second pass, afterwards)
#   DROP       listeners to unsubscribe after boot, for a cost breakdown by listener:
#              comma-separated Class@name, each unsubscribing every listener of the
#              event `name` whose delegate is a Class (e.g.
#              ActiveRecord::ExplainSubscriber@sql.active_record; Proc for a block)
#
# Output lines (tab-separated):
#   RESULT  side  level  path  requests/s  ns per request (CLOCK)  spread %
#   GC      side  level  heap slots after boot  live slots after boot  minor GCs and
#           major GCs per 100 requests while measuring
#   ALLOC   side  level  objects allocated per request
#   COUNT   side  level  instrument calls per request  of them with a listener
#   STATS   Hark.stats without its subscriptions (hark only, when the binding has it)
#   SUBSCRIPTION  event  subscriber  cached or asked per event  silenced now or open
#           why (one line per subscription of Hark.stats)
require "rbconfig"

side = ENV.fetch("SIDE", "hark")
level = ENV.fetch("LEVEL", "info")
require_relative "telemetry"
unless %w[hark rails floor].include?(side) || TELEMETRY_SIDES.include?(side)
  abort "request_cost: SIDE must be hark, rails, floor or #{TELEMETRY_SIDES.join(', ')}"
end
abort "request_cost: LEVEL must be info or debug" unless %w[info debug].include?(level)
hark_side = side.start_with?("hark")
ENV["HARK"] = hark_side ? "1" : "0"
ENV["RAILS_ENV"] = "production"
ENV["RAILS_LOG_LEVEL"] = level
# What is measured is the notification path: the flight recorder of
# config/initializers/hark_recorder.rb (hark's side only) records every event, a cost
# of its own that Rails' side has no counterpart of. HARK_RECORDER=1 puts it back in.
ENV["HARK_RECORDER"] ||= "0"

if TELEMETRY_SIDES.include?(side)
  require_relative "../config/application"
  telemetry_setup(side)
end
require_relative "../config/environment"

# No notification at all: every instrument only runs its block.
require_relative "no_notifications" if side == "floor"

ENV.fetch("DROP", "").split(",").each do |spec|
  klass, name = spec.split("@", 2)
  abort "request_cost: DROP wants Class@name, not #{spec}" unless name
  notifier = ActiveSupport::Notifications.notifier
  gone = notifier.all_listeners_for(name).select { |s| s.delegate.class.name == klass }
  abort "request_cost: DROP #{spec}: no such listener" if gone.empty?
  gone.each { |s| notifier.unsubscribe(s) }
end

hark = ActiveSupport::Notifications.notifier.class.ancestors.any? { |c| c.name == "Hark::Fanout" }
abort "request_cost: SIDE=#{side} but the fanout is #{hark ? '' : 'not '}hark's" if hark != hark_side

APP = Rails.application
REQ_PATH = ENV.fetch("REQ_PATH", "/articles")
ENV_TEMPLATE = Rack::MockRequest.env_for(REQ_PATH, "REMOTE_ADDR" => "127.0.0.1",
                                                   "HTTP_HOST" => "localhost",
                                                   "HTTP_ACCEPT" => "text/html").freeze

# One request as a server makes it: the body read and closed (Rails::Rack::Logger
# finishes its request event when the body is closed).
def request
  status, _headers, body = APP.call(ENV_TEMPLATE.dup)
  body.each { |_chunk| }
  body.close if body.respond_to?(:close)
  abort "request_cost: #{REQ_PATH} answered #{status}" unless status == 200
end

CLOCK_ID = { "thread" => Process::CLOCK_THREAD_CPUTIME_ID, "wall" => Process::CLOCK_MONOTONIC }.fetch(ENV.fetch("CLOCK", "thread")) do
  abort "request_cost: CLOCK must be thread or wall"
end
def cpu_now = Process.clock_gettime(CLOCK_ID)

def batch(n)
  t0 = cpu_now
  n.times { request }
  cpu_now - t0
end

slots_after_boot = GC.stat(:heap_available_slots)
live_after_boot = GC.stat(:heap_live_slots)
Integer(ENV.fetch("WARMUP", "50")).times { request }

gc0 = GC.stat.slice(:minor_gc_count, :major_gc_count, :total_allocated_objects)
if (n = ENV["REQUESTS"])
  n = Integer(n)
  marks = nil
  if (lib = ENV["CALLGRIND_MARKS"])
    require "fiddle"
    handle = Fiddle.dlopen(lib)
    marks = Fiddle::Function.new(handle["hark_callgrind_marks"], [Fiddle::TYPE_INT], Fiddle::TYPE_VOID)
  end
  # The garbage collector is off while they run, so that the count is the requests'
  # own work, the same from run to run (a minor GC falling inside or outside a short
  # run would move it by more than the notifications cost); what they leave for the
  # collector is the ALLOC line's objects per request.
  keep_gc = ENV["KEEP_GC"] == "1"
  unless keep_gc
    GC.start
    GC.disable
  end
  marks&.call(1)
  seconds = batch(n)
  marks&.call(0)
  GC.enable unless keep_gc
  ns = seconds / n * 1e9
  spread = 0.0
  measured = n
else
  per = 1
  per *= 2 while batch(per) < 0.05 && per < 4096
  samples = []
  t_end = cpu_now + Float(ENV.fetch("TIME", "2"))
  samples << batch(per) / per * 1e9 while cpu_now < t_end || samples.size < 5
  samples.sort!
  q = ->(f) { samples[((samples.size - 1) * f).round] }
  ns = q.(0.5)
  spread = (q.(0.75) - q.(0.25)) / ns * 100
  measured = samples.size * per
end
gc1 = GC.stat.slice(:minor_gc_count, :major_gc_count, :total_allocated_objects)

printf("RESULT\t%s\t%s\t%s\t%.1f\t%.1f\t%.1f\n", side, level, REQ_PATH, 1e9 / ns, ns, spread)
printf("GC\t%s\t%s\t%d\t%d\t%.1f\t%.1f\n", side, level, slots_after_boot, live_after_boot,
       (gc1[:minor_gc_count] - gc0[:minor_gc_count]) * 100.0 / measured,
       (gc1[:major_gc_count] - gc0[:major_gc_count]) * 100.0 / measured)
printf("ALLOC\t%s\t%s\t%.1f\n", side, level,
       (gc1[:total_allocated_objects] - gc0[:total_allocated_objects]).to_f / measured)

if ENV["COUNT"] == "1" && side != "floor"
  # Every instrument of one request, and whether anyone listened (asked the notifier
  # as Rails' instrument asks it), counted by a hook in front of both instruments.
  counts = Hash.new(0)
  notifier = ActiveSupport::Notifications.notifier
  count = lambda do |name|
    counts[notifier.listening?(name) ? :listened : :silent] += 1
    counts[name] += 1
  end
  # The module's instrument hands an event someone listens to on to an instrumenter's:
  # each is counted once, where it ends.
  module_counter = Module.new do
    define_method(:instrument) do |name, payload = {}, &block|
      count.(name) unless notifier.listening?(name)
      super(name, payload, &block)
    end
  end
  instrumenter_counter = Module.new do
    define_method(:instrument) do |name, payload = {}, &block|
      count.(name)
      super(name, payload, &block)
    end
  end
  ActiveSupport::Notifications.singleton_class.prepend(module_counter)
  ActiveSupport::Notifications::Instrumenter.prepend(instrumenter_counter)
  request
  calls = counts[:listened] + counts[:silent]
  printf("COUNT\t%s\t%s\t%d\t%d\n", side, level, calls, counts[:listened])
  counts.reject { |k, _| k.is_a?(Symbol) }.sort_by { |k, v| [-v, k] }.each do |name, c|
    printf("NAME\t%s\t%s\t%s\t%d\n", side, level, name, c)
  end
end

if hark && Hark.respond_to?(:stats)
  stats = Hark.stats
  puts "STATS\t#{stats.except(:subscriptions).inspect}"
  stats[:subscriptions].each do |s|
    puts ["SUBSCRIPTION", s[:event], s[:subscriber], s[:cached] ? "cached" : "asked per event",
          s[:silenced] ? "silenced" : "open", s[:why]].join("\t")
  end
end
