# frozen_string_literal: true

# script/listener_cost.rb -- what each listener of the index page's delivered events
# costs on its own: the listener called the way a fanout calls it, with the arguments
# one real request gave it, over and over. This is Rails' own code (a LogSubscriber
# formatting and writing its line, ActiveRecord's runtime bookkeeping and its
# ExplainSubscriber) -- what any fanout pays per event, hark's or Rails'.
#
#   RAILS=../shared/rails-7.2 LEVEL=info valgrind --tool=callgrind --instr-atstart=no \
#     --collect-atstart=no ruby script/listener_cost.rb     (with CALLGRIND_MARKS set)
#
# Under callgrind with CALLGRIND_MARKS (bench's libhark_callgrind_marks.so), each
# listener's calls are dumped as a profile of their own, its `desc: Trigger:` line
# naming the listener and its `totals:` line counting its CALLS calls. Otherwise it
# prints thread CPU time per call.
#
# Environment: SIDE (rails or hark, default hark: which fanout the application boots
# with), LEVEL (info or debug), CALLS (per listener, default 50).
#
# Output, one line per listener (tab-separated):
#   LISTENER  event name  listener  kind  ns per call (thread CPU; 0 under callgrind)
require "rbconfig"

side = ENV.fetch("SIDE", "hark")
level = ENV.fetch("LEVEL", "info")
ENV["HARK"] = side == "hark" ? "1" : "0"
ENV["RAILS_ENV"] = "production"
ENV["RAILS_LOG_LEVEL"] = level
require_relative "../config/environment"

APP = Rails.application
ENV_TEMPLATE = Rack::MockRequest.env_for("/articles", "REMOTE_ADDR" => "127.0.0.1",
                                                     "HTTP_HOST" => "localhost").freeze
def request
  _status, _headers, body = APP.call(ENV_TEMPLATE.dup)
  body.each { |_chunk| }
  body.close if body.respond_to?(:close)
end

30.times { request }

# The arguments each listener gets, from one real request: every kind of capture on
# every name the request delivers.
N = ActiveSupport::Notifications
names = %w[start_processing.action_controller process_action.action_controller
           render_template.action_view render_layout.action_view render_partial.action_view
           render_collection.action_view sql.active_record]
captured = Hash.new { |h, k| h[k] = {} }
capturers = names.flat_map do |name|
  [N.subscribe(name) { |event| captured[name][:event] ||= event },
   N.subscribe(name) { |*args| captured[name][:timed] ||= args },
   N.monotonic_subscribe(name) { |*args| captured[name][:monotonic] ||= args },
   N.subscribe(name, Class.new {
     define_method(:start) { |n, id, payload| captured[n][:evented] ||= [n, id, payload] }
     define_method(:finish) { |*| }
   }.new)]
end
request
capturers.each { |s| N.unsubscribe(s) }

# Each listener of those names, called as a fanout calls it (and only when a fanout
# would: a listener silenced at this level is not called, as Rails does not call it).
calls = Integer(ENV.fetch("CALLS", "50"))
marks = dump = nil
if (lib = ENV["CALLGRIND_MARKS"])
  require "fiddle"
  handle = Fiddle.dlopen(lib)
  marks = Fiddle::Function.new(handle["hark_callgrind_marks"], [Fiddle::TYPE_INT], Fiddle::TYPE_VOID)
  dump = Fiddle::Function.new(handle["hark_callgrind_dump"], [Fiddle::TYPE_VOIDP], Fiddle::TYPE_VOID)
end
def cpu_now = Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID)

GC.start
GC.disable
marks&.call(1)
dump&.call("setup")
names.each do |name|
  args = captured[name]
  next if args.empty?
  N.notifier.all_listeners_for(name).each do |sub|
    delegate = sub.delegate
    next if sub.respond_to?(:silenced?) && sub.silenced?(name)
    # The subscription's kind, by its class's name (Rails' and hark's are named alike).
    kind = sub.class.name.to_s.split("::").last
    call =
      case kind
      when "Evented"
        n, id, payload = args[:evented]
        -> { delegate.start(n, id, payload); delegate.finish(n, id, payload) }
      when "MonotonicTimed" then -> { delegate.call(*args[:monotonic]) }
      when "Timed" then -> { delegate.call(*args[:timed]) }
      when "EventObject" then -> { delegate.call(args[:event]) }
      else abort "listener_cost: #{name}: a subscription of kind #{kind}"
      end
    label = "#{name} #{delegate.class.name || delegate.class.inspect}"
    t0 = cpu_now
    calls.times { call.call }
    ns = (cpu_now - t0) / calls * 1e9
    dump&.call(label)
    printf("LISTENER\t%s\t%s\t%s\t%.0f\n", name, delegate.class.name || delegate.class.inspect, kind,
           marks ? 0 : ns)
  end
end
marks&.call(0)
GC.enable
