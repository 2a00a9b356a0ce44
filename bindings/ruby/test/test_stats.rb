# frozen_string_literal: true

# Hark.stats (which silenceable subscriptions hark caches, which it asks per event and
# why, how many silenced? calls it made) and the one line a booted Rails application
# prints when a log subscriber cannot be cached. Needs ActiveSupport on the load path;
# the ActionView and application cases need ActionView and railties (make ruby-test puts
# Rails 7.2's whole stack there) and are skipped without them.
require "minitest/autorun"
require_relative "rails_or_skip"
return unless hark_test_load_rails("test_stats", "active_support/log_subscriber")
require "stringio"
require "open3"
require "rbconfig"

class TestStats < Minitest::Test
  LINE = proc { |_sev, _time, _prog, msg| "#{msg}\n" }
  QUIET = ActiveSupport::Logger.new(StringIO.new, level: Logger::ERROR, formatter: LINE)

  class CachedSubscriber < ActiveSupport::LogSubscriber
    def logger = QUIET

    def sql(event)
      debug { "SQL #{event.payload[:n]}" }
    end
    subscribe_log_level :sql, :debug
  end

  class ComputedSubscriber < ActiveSupport::LogSubscriber
    def logger = @logger ||= QUIET

    def sql(event)
      debug { "SQL #{event.payload[:n]}" }
    end
    subscribe_log_level :sql, :debug
  end

  class Literal
    def start(*); end
    def finish(*); end
    def silenced?(_name) = true
  end

  class Asked
    def start(*); end
    def finish(*); end
    def silenced?(_name) = @silenced
  end

  def setup
    @fanout = ActiveSupport::Notifications::Fanout.new
  end

  # A log subscriber as Rails attaches it (its methods' event levels set), else a
  # plain subscription.
  def attach(klass, name)
    sub = klass.new
    if sub.is_a?(ActiveSupport::LogSubscriber)
      klass.attach_to(name.delete_prefix("sql.").to_sym, sub, @fanout)
    else
      @fanout.subscribe(name, sub)
    end
    sub
  end

  def instrument(name)
    @fanout.instrument(name, "id", {}) { }
  end

  def test_counts_and_reasons
    attach(CachedSubscriber, "sql.stats_cached")
    attach(ComputedSubscriber, "sql.stats_computed")
    attach(Literal, "stats.literal")
    attach(Asked, "stats.asked")
    @fanout.subscribe("stats.plain") { |*| } # not silenceable: not counted
    stats = Hark.stats(@fanout)
    assert_equal({ cached: 1, asked_per_event: 1 }, stats[:log_subscriptions])
    assert_equal({ cached: 1, asked_per_event: 1 }, stats[:other_silenceable])
    by_event = stats[:subscriptions].to_h { |s| [s[:event], s] }
    assert_equal %w[sql.stats_cached sql.stats_computed stats.asked stats.literal], by_event.keys.sort
    cached = by_event["sql.stats_cached"]
    assert_equal [true, true, true, nil, "TestStats::CachedSubscriber"],
                 cached.values_at(:log_subscriber, :cached, :silenced, :why, :subscriber)
    computed = by_event["sql.stats_computed"]
    refute computed[:cached]
    assert_match(/\ATestStats::ComputedSubscriber#logger \(#{Regexp.escape(__FILE__)}:\d+\) is not a logger reader hark follows\z/,
                 computed[:why])
    assert by_event["stats.literal"][:cached]
    assert_match(/TestStats::Asked#silenced\? .* is not Rails' own silenced\? nor a literal/, by_event["stats.asked"][:why])
  end

  # silenced_calls counts every silenced? hark makes: none for a cached answer, one per
  # event for each subscription asked per event.
  def test_silenced_calls
    attach(CachedSubscriber, "sql.calls_cached")
    asked = attach(Asked, "stats.calls_asked")
    before = Hark.stats(@fanout)[:silenced_calls]
    5.times { instrument("sql.calls_cached") }
    assert_equal before, Hark.stats(@fanout)[:silenced_calls]
    asked.instance_variable_set(:@silenced, true)
    3.times { instrument("stats.calls_asked") }
    assert_equal before + 3, Hark.stats(@fanout)[:silenced_calls]
  end

  def test_thread_local_levels_are_reported
    refute Hark.stats(@fanout)[:thread_local_levels]
    QUIET.silence(Logger::DEBUG) do
      assert Hark.stats(@fanout)[:thread_local_levels]
    end
    refute Hark.stats(@fanout)[:thread_local_levels]
  end

  def test_warn_uncached_names_each_uncached_log_subscriber_once
    attach(CachedSubscriber, "sql.warn_cached")
    attach(Asked, "stats.warn_asked") # not a log subscriber: not named
    io = StringIO.new
    assert_nil Hark.warn_uncached(@fanout, io: io)
    assert_empty io.string

    attach(ComputedSubscriber, "sql.warn_one")
    attach(ComputedSubscriber, "sql.warn_two")
    line = Hark.warn_uncached(@fanout, io: io)
    assert_equal "#{line}\n", io.string, "one line"
    assert_match(/\Ahark: 2 log subscriptions are not cached and asked silenced\? on every event: /, line)
    assert_match(/TestStats::ComputedSubscriber \(sql.warn_one, sql.warn_two: TestStats::ComputedSubscriber#logger \(/, line)
    refute_match(/CachedSubscriber|Asked/, line)
  end

  def load_action_view
    require "uri" # as an application has loaded it by then (ActionView's helpers use it)
    require "action_view"
    require "action_view/log_subscriber"
    true
  rescue LoadError
    false
  end

  # ActionView's Start subscriber ("Rendering ..." at :debug) has a silenced? of its own,
  # Rails' (known by owner and file): cached like a LogSubscriber's.
  def test_action_views_start_subscriber_is_cached
    skip "ActionView not on the load path" unless load_action_view
    saved = ActionView::Base.logger
    io = StringIO.new
    logger = ActiveSupport::Logger.new(io, level: Logger::INFO, formatter: LINE)
    ActionView::Base.logger = logger
    begin
      start = ActionView::LogSubscriber::Start.new
      start.define_singleton_method(:rails_root) { "/app/" } # no application here
      @fanout.subscribe("render_template.action_view", start)
      entry = Hark.stats(@fanout)[:subscriptions].first
      assert_equal [false, true, true], entry.values_at(:log_subscriber, :cached, :silenced)
      before = Hark.stats(@fanout)[:silenced_calls]
      payload = { identifier: "/app/views/index.html.erb" }
      @fanout.instrument("render_template.action_view", "id", payload) { }
      assert_empty io.string
      logger.level = Logger::DEBUG # heard: the next event is rendered
      @fanout.instrument("render_template.action_view", "id", payload) { }
      assert_match(/Rendering .*index\.html\.erb/, io.string)
      assert_equal before, Hark.stats(@fanout)[:silenced_calls], "never asked"
    ensure
      ActionView::Base.logger = saved # only once it was read: a skip restores nothing
    end
  end

  APP = <<~RUBY
    require "hark/rails"
    require "rails"
    require "action_controller/railtie"
    require "tmpdir"
    Hark.boot_warning = false if ENV["QUIET"]
    class ComputedLogSubscriber < ActiveSupport::LogSubscriber
      def logger = @logger ||= Logger.new(nil)
      def thing(event) = info("thing")
    end
    ComputedLogSubscriber.attach_to :mine if ENV["UNCACHED"]
    class StatsApp < Rails::Application
      config.eager_load = false
      config.logger = Logger.new(nil)
      config.secret_key_base = "x" * 64
      config.root = Dir.mktmpdir
    end
    StatsApp.initialize!
    $stdout.puts "booted: \#{Hark.stats[:log_subscriptions]}"
  RUBY

  def boot(env)
    paths = $LOAD_PATH.select { |p| p.to_s.include?("rails-7.2") || File.exist?(File.join(p.to_s, "hark.rb")) }
    args = paths.flat_map { |p| ["-I", p.to_s] }
    Open3.capture3(env, RbConfig.ruby, *args, "-e", APP)
  end

  def test_a_booted_application_names_uncached_log_subscribers_in_one_line
    # (Not required here: the application is booted in processes of its own.)
    skip "railties not on the load path" unless $LOAD_PATH.any? { |p| File.exist?(File.join(p.to_s, "rails.rb")) }
    out, err, status = boot("UNCACHED" => "1")
    assert status.success?, err
    assert_match(/^booted: \{:cached=>\d+, :asked_per_event=>1\}$/, out)
    lines = err.lines.grep(/hark/)
    assert_equal 1, lines.size, err
    assert_match(/\Ahark: 1 log subscription is not cached and asked silenced\? on every event: ComputedLogSubscriber \(thing.mine: ComputedLogSubscriber#logger \(-e:\d+\) is not a logger reader hark follows\)$/, lines[0])

    out, err, status = boot("UNCACHED" => "1", "QUIET" => "1")
    assert status.success?, err
    assert_match(/^booted: /, out)
    assert_empty err.lines.grep(/hark/), "Hark.boot_warning = false"

    out, err, status = boot({})
    assert status.success?, err
    assert_match(/^booted: \{:cached=>\d+, :asked_per_event=>0\}$/, out)
    assert_empty err.lines.grep(/hark/), "every log subscriber of a stock application is cached"
  end
end
