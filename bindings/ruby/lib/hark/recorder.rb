# frozen_string_literal: true

# Hark::Recorder: hark's flight recorder (docs/recorder.md) for the events that go through
# hark's fanout. It keeps the most recent ActiveSupport::Notifications events of every
# thread in memory taken once, always on, and writes them out only when asked: #dump,
# a request that raises (#dump_on_error, the Rails hook), a slow event (#dump_on_slow),
# a signal (#dump_on_signal) or a crash of the process (#dump_on_crash).
#
#   require "hark/rails"
#   require "hark/recorder"
#   recorder = Hark::Recorder.start(max_bytes: 16 << 20, min_age: 10, payload_keys: %i[sql name])
#   ...
#   recorder.dump("tmp/last-seconds.json")      # Chrome trace JSON: open it in ui.perfetto.dev
#
# Each record keeps the event's name, start and finish, ids and parent id, thread,
# transaction id, whether it failed (an :exception in its payload), and the payload keys
# asked for: Strings and Symbols as strings, Integers, Floats, true, false and nil as
# themselves, anything else as its to_s (a to_s that raises leaves its key out).
require "hark"
require "hark/default_notifier"

module Hark
  class Recorder
    FORMATS = %i[chrome jsonl].freeze

    # The recorders started and not yet stopped: none is collected while it records.
    RUNNING = [] # rubocop:disable Style/MutableConstant
    private_constant :RUNNING

    class << self
      # The recorder started last and not stopped since, or nil.
      attr_reader :current

      # Starts a recorder on `notifier` (hark's fanout behind ActiveSupport::Notifications
      # by default) for the events `pattern` matches: nil for all, a String for one name,
      # a Regexp (matched by PCRE2, as hark's regex patterns are; its i, m and x options
      # carried over).
      #
      #   max_bytes:     memory for the records, taken now (default 8 MiB)
      #   min_age:       seconds: events younger than this are overwritten only by their
      #                  own thread (default 0)
      #   payload_keys:  the payload keys each record keeps (at most 16)
      #   thread_bytes:  each thread's share a busy thread cannot take (default
      #                  max_bytes / 16)
      #   payload_bytes: the bytes of each record's payload excerpt (default 256)
      #   max_threads:   threads that may hold records at once (default 256)
      def start(max_bytes: 8 << 20, min_age: 0, pattern: nil, payload_keys: [], thread_bytes: 0,
                payload_bytes: 0, max_threads: 0, notifier: nil)
        recorder = new(max_bytes: max_bytes, min_age: min_age, payload_keys: payload_keys,
                       thread_bytes: thread_bytes, payload_bytes: payload_bytes,
                       max_threads: max_threads)
        begin
          recorder.attach(notifier || default_notifier, pattern)
        rescue StandardError
          recorder.stop
          raise
        end
        @current = recorder
      end

      def default_notifier # :nodoc:
        Hark.default_notifier
      end

      def forget(recorder) # :nodoc:
        RUNNING.delete(recorder)
        @current = nil if @current.equal?(recorder)
      end
    end

    def initialize(max_bytes: 8 << 20, min_age: 0, payload_keys: [], thread_bytes: 0, payload_bytes: 0,
                   max_threads: 0)
      raise NotImplementedError, "hark: built without the flight recorder (libhark-export)" unless NATIVE

      @attachments = {}
      @crash_file = nil
      _setup(Integer(max_bytes), Integer(thread_bytes), (Float(min_age) * 1000).round,
             Integer(payload_bytes), Integer(max_threads), Array(payload_keys))
      RUNNING << self
    end

    # Records the events of `notifier` (a Hark::Fanout) that `pattern` matches, too.
    # Returns the attachment's id, for #detach.
    def attach(notifier, pattern = nil)
      raise ArgumentError, "hark: the notifier is not a Hark::Fanout" unless notifier.is_a?(Fanout)

      id = _attach(notifier, pattern)
      @attachments[id] = notifier # keeps the fanout (and its notifier) alive
      id
    end

    # Ends an attachment or a trigger.
    def detach(id)
      _detach(id)
      @attachments.delete(id)
      nil
    end

    # Writes everything the recorder holds to `path`, as Chrome trace JSON (:chrome,
    # which ui.perfetto.dev and chrome://tracing open) or JSON lines (:jsonl). Other
    # threads go on recording meanwhile. Returns the path.
    def dump(path, format: :chrome)
      _dump(path.to_s, check_format(format))
    end

    # The Rails hook: dumps into `path` (a template: %p the pid, %n the dump's number)
    # when a request raises -- when `event` finishes with an :exception, as Rails'
    # process_action.action_controller does -- at most once every `interval` seconds.
    # The dump is written by the recorder's own thread; #flush waits for it.
    def dump_on_error(path, event: "process_action.action_controller", interval: 60, format: :chrome,
                      notifier: nil)
      trigger(notifier, event, path, 0, true, interval, format)
    end

    # Dumps into `path` when an event matching `event` takes `threshold` seconds or
    # more, at most once every `interval` seconds.
    def dump_on_slow(path, event:, threshold:, interval: 60, format: :chrome, notifier: nil)
      trigger(notifier, event, path, Float(threshold) * 1000, false, interval, format)
    end

    # From now on a crash of the process (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT)
    # writes the recorder to `path` before the process dies of it as it would have.
    # The file is opened now (and truncated). A path with a "%" is a template instead,
    # as for #dump_on_error ("%p" the pid, "%n" the dump's number, "%%" a "%"): the
    # file is created when the process crashes, so each worker a server forks (Puma
    # in cluster mode) writes its own. nil turns it off.
    def dump_on_crash(path, format: :chrome)
      if path.nil?
        _dump_on_crash(-1, check_format(format))
        @crash_file&.close
        @crash_file = nil
        return nil
      end
      if path.to_s.include?("%")
        _dump_on_crash_path(path.to_s, check_format(format))
        @crash_file&.close
        @crash_file = nil
        return path
      end
      file = File.open(path.to_s, File::WRONLY | File::CREAT | File::TRUNC, 0o644)
      begin
        _dump_on_crash(file.fileno, check_format(format))
      rescue StandardError
        file.close
        raise
      end
      @crash_file&.close
      @crash_file = file
      path
    end

    # `kill -USR2 <pid>` (or another signal's) writes a dump into `path` (a template, as
    # for #dump_on_error). Mind servers that use the signal themselves (Puma restarts on
    # USR2). nil removes the handler.
    def dump_on_signal(path, signal: "USR2", format: :chrome)
      signo = signal.is_a?(Integer) ? signal : Signal.list.fetch(signal.to_s.delete_prefix("SIG"))
      _dump_on_signal(signo, path&.to_s, check_format(format))
      path
    end

    # Detaches everything, turns crash and signal dumps off and frees the recorder's
    # memory (what it held is gone). Returns true; false when it was stopped already.
    def stop
      return false unless running?

      dump_on_crash(nil) if @crash_file
      state = _stop
      @crash_file&.close
      @crash_file = nil
      @attachments.clear
      self.class.forget(self) unless state == :pending
      true
    end

    private

    def trigger(notifier, event, path, min_ms, failed_only, interval, format)
      fanout = notifier || self.class.default_notifier
      id = _trigger(fanout, event, path.to_s, min_ms, failed_only, (Float(interval) * 1000).round,
                    check_format(format))
      @attachments[id] = fanout
      id
    end

    def check_format(format)
      return format if FORMATS.include?(format)

      raise ArgumentError, "hark: format: is one of #{FORMATS.inspect}, not #{format.inspect}"
    end
  end
end
