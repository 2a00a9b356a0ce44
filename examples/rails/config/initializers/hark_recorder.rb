# The flight recorder, as bindings/ruby/README.md sets it up: the last seconds of every
# thread kept in memory, and a request that raises writes them to log/. Only with hark's
# fanout (config/boot.rb; HARK=0 leaves Rails' own): the recorder records what it delivers.
# HARK_RECORDER=0 leaves it out (script/request_cost.rb, which measures the notification
# path, and its telemetry sides: see docs/rails.md).
if defined?(Hark::Fanout) && ENV["HARK_RECORDER"] != "0"
  require "hark/recorder"

  recorder = Hark::Recorder.start(
    max_bytes: 32 << 20,       # memory for records, taken now: about 200,000 events
    min_age: 10,               # seconds a thread's events are safe from other threads
    payload_keys: %i[sql name controller action method path status]
  )
  # A request that raises writes the last seconds to log/ (at most once a minute). Under
  # a forking server (Puma in cluster mode) each worker writes its own: %p is its pid.
  recorder.dump_on_error(Rails.root.join("log", "hark-recorder-%p-%n.json").to_s)
  # And a crash of the process (SIGSEGV, SIGABRT, ...) writes them before it dies, each
  # process into its own file:
  # recorder.dump_on_crash(Rails.root.join("log", "hark-crash-%p.json").to_s)
end
