# frozen_string_literal: true

module Hark
  class << self
    # Whether hark/rails prints Hark.warn_uncached's line once the application has
    # booted (after_initialize). Default true.
    attr_writer :boot_warning

    def boot_warning
      @boot_warning.nil? ? true : @boot_warning
    end

    # What hark does about silence, for the fanout given, else ActiveSupport's notifier
    # when it is hark's, else every live hark fanout:
    #
    #   Hark.stats
    #   # => { fanout: :hark,
    #   #      fanout_why: "Rails 7.2.3 is a version hark's fanout is proven on",
    #   #      log_subscriptions: { cached: 22, asked_per_event: 0 },
    #   #      other_silenceable: { cached: 2, asked_per_event: 0 },
    #   #      thread_local_levels: false,
    #   #      silenced_calls: 0,
    #   #      subscriptions: [{ event: "sql.active_record",
    #   #                        subscriber: "ActiveRecord::LogSubscriber",
    #   #                        log_subscriber: true, cached: true, silenced: true,
    #   #                        why: nil }, ...] }
    #
    # `fanout` and `fanout_why` say which fanout ActiveSupport::Notifications delivers
    # through and why (Hark.fanout_status: :rails on a Rails hark/rails does not install
    # on, and then nothing below is hark's). `log_subscriptions` counts the subscriptions of ActiveSupport::LogSubscriber
    # instances: `cached` are those whose silenced? answer hark keeps and re-asks only
    # when something it depends on changes; `asked_per_event` are asked silenced? on
    # every event, as Rails asks, and each says `why`. `other_silenceable` counts the
    # other subscribers that have a silenced? method the same way. While a thread-local
    # level is in force (Logger#silence, #log_at: `thread_local_levels`), cached answers
    # are asked per event too, and counted as cached. `silenced_calls` is how many times
    # hark has called a subscriber's silenced? since the process started. `silenced` is
    # the answer for the event name now (nil for a pattern subscription).
    def stats(fanout = nil)
      subscriptions = fanouts_for_stats(fanout).flat_map { |f| f._silenceable_subscriptions }.map do |s|
        stats_entry(s)
      end
      log, other = subscriptions.partition { |s| s[:log_subscriber] }
      count = ->(list) { { cached: list.count { |s| s[:cached] }, asked_per_event: list.count { |s| !s[:cached] } } }
      status = fanout_status
      {
        fanout: status[:fanout],
        fanout_why: status[:why],
        log_subscriptions: count.call(log),
        other_silenceable: count.call(other),
        thread_local_levels: Silence.locals?,
        silenced_calls: _silenced_calls,
        subscriptions: subscriptions
      }
    end

    # Writes one line naming every log subscriber of which some subscription cannot be
    # cached (and why), when there is one; returns the line (nil when there is none).
    # hark/rails calls it once the application has booted.
    def warn_uncached(fanout = nil, io: $stderr)
      uncached = stats(fanout)[:subscriptions].select { |s| s[:log_subscriber] && !s[:cached] }
      return nil if uncached.empty?
      parts = uncached.group_by { |s| s[:subscriber] }.map do |subscriber, subs|
        "#{subscriber} (#{subs.map { |s| s[:event] }.join(', ')}: #{subs.map { |s| s[:why] }.uniq.join('; ')})"
      end
      n = uncached.size
      line = "hark: #{n} log subscription#{n == 1 ? ' is' : 's are'} not cached and asked silenced? " \
             "on every event: #{parts.join(' | ')}"
      io.puts(line)
      line
    end

    private

    def fanouts_for_stats(fanout)
      return [fanout] if fanout
      if defined?(::ActiveSupport::Notifications) && ::ActiveSupport::Notifications.notifier.is_a?(Fanout)
        return [::ActiveSupport::Notifications.notifier]
      end
      list = []
      Silence.each_fanout { |f| list << f }
      list
    end

    def stats_entry(subscription)
      delegate = subscription.delegate
      pattern = subscription.raw_pattern
      cached = subscription.silence_mode == Fanout::SILENCE_CACHED && subscription.hark_why.nil?
      silenced = begin
        String === pattern ? (delegate.silenced?(pattern) ? true : false) : nil
      rescue StandardError
        nil
      end
      {
        event: pattern.is_a?(String) ? pattern : pattern.inspect,
        subscriber: delegate.class.name || delegate.class.inspect,
        log_subscriber: defined?(::ActiveSupport::LogSubscriber) && ::ActiveSupport::LogSubscriber === delegate ? true : false,
        cached: cached,
        silenced: silenced,
        why: cached ? nil : subscription.hark_why
      }
    end
  end
end
