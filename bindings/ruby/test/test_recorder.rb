# frozen_string_literal: true

# Hark::Recorder, hark's flight recorder behind hark's fanout: payload keys and their
# types, failures, a raising to_s kept from the application, patterns, both dump
# formats parsed back, the error and slow-event triggers, stop; a process killed by
# SIGSEGV leaves a crash dump; a Rails application whose initializer is the README's
# lines writes a dump holding the raising request's process_action and its
# sql.active_record events. Needs ActiveSupport on the load path (the application case
# also railties, actionpack and activerecord with the sqlite3 gem: make ruby-test puts
# Rails 7.2's whole stack there; skipped without them).
require "minitest/autorun"
require_relative "rails_or_skip"
return unless hark_test_load_rails("test_recorder")
require "hark/recorder"
require "json"
require "open3"
require "rbconfig"
require "tmpdir"

class TestRecorder < Minitest::Test
  N = ActiveSupport::Notifications

  def setup
    skip "built without the flight recorder (libhark-export)" unless Hark::Recorder::NATIVE
    @dir = Dir.mktmpdir("hark-recorder")
  end

  def teardown
    @rec&.stop
    FileUtils.rm_rf(@dir) if @dir
  end

  def path(name) = File.join(@dir, name)

  # The records of a JSON-lines dump, and its summary.
  def jsonl(file)
    lines = File.readlines(file).map { |l| JSON.parse(l) }
    [lines[0..-2], lines.last.fetch("recorder")]
  end

  def test_keeps_the_payload_keys_asked_for_in_their_types
    @rec = Hark::Recorder.start(payload_keys: %i[sql name binds rows cached took note missing])
    N.instrument("sql.active_record", sql: "SELECT * FROM books WHERE id = ?", name: :"Book Load",
                                      binds: [1, "x"], rows: 3, cached: false, took: 0.5, note: nil,
                                      secret: "not asked for") { }
    records, summary = jsonl(@rec.dump(path("keys.jsonl"), format: :jsonl))
    assert_equal 1, summary["events"]
    r = records.first
    assert_equal "sql.active_record", r["name"]
    assert_equal({ "sql" => "SELECT * FROM books WHERE id = ?", "name" => "Book Load",
                   "binds" => '[1, "x"]', "rows" => 3, "cached" => false, "took" => 0.5,
                   "note" => nil }, r["payload"])
    assert_equal false, r["failed"]
    assert_operator r["end_ns"], :>=, r["start_ns"]
    assert_equal Process.pid, r["pid"]
  end

  def test_a_failure_and_nesting_as_rails_instruments_them
    @rec = Hark::Recorder.start(payload_keys: %i[controller])
    assert_raises(RuntimeError) do
      N.instrument("process_action.action_controller", controller: "BooksController") do
        N.instrument("sql.active_record", sql: "SELECT 1") { }
        raise "boom"
      end
    end
    records, = jsonl(@rec.dump(path("fail.jsonl"), format: :jsonl))
    sql, action = records
    assert_equal %w[sql.active_record process_action.action_controller], [sql["name"], action["name"]]
    assert_equal action["id"], sql["parent_id"]
    assert action["failed"]
    assert_equal({ "controller" => "BooksController",
                   "exception" => { "type" => "RuntimeError", "message" => "boom" } }, action["payload"])
  end

  class Grumpy
    def to_s = raise(ArgumentError, "no")
  end

  def test_a_to_s_that_raises_leaves_its_key_out_and_the_application_alone
    @rec = Hark::Recorder.start(payload_keys: %i[bad good])
    assert_equal :done, N.instrument("grumpy.test", bad: Grumpy.new, good: "yes") { :done }
    records, = jsonl(@rec.dump(path("grumpy.jsonl"), format: :jsonl))
    assert_equal({ "good" => "yes" }, records.first["payload"])
  end

  def test_patterns
    @rec = Hark::Recorder.start(pattern: /\Asql\./)
    named = Hark::Recorder.new
    named.attach(N.notifier, "render.view")
    %w[sql.db render.view other].each { |n| N.instrument(n) { } }
    records, = jsonl(@rec.dump(path("re.jsonl"), format: :jsonl))
    assert_equal %w[sql.db], records.map { |r| r["name"] }
    records, = jsonl(named.dump(path("named.jsonl"), format: :jsonl))
    assert_equal %w[render.view], records.map { |r| r["name"] }
  ensure
    named&.stop
  end

  def test_the_chrome_dump_opens_as_a_trace
    @rec = Hark::Recorder.start
    N.instrument("outer.test") { N.instrument("inner.test") { } }
    doc = JSON.parse(File.read(@rec.dump(path("t.json"))))
    inner, outer = doc["traceEvents"]
    assert_equal %w[inner.test outer.test], [inner["name"], outer["name"]]
    assert_equal "X", outer["ph"]
    assert_equal outer["id"], inner["parent_id"]
    assert_operator inner["ts"], :>=, outer["ts"]
    assert_equal "dump", doc["otherData"]["recorder"]["reason"]
    assert_equal 2, @rec.stats[:recorded]
  end

  def test_dump_on_error_once_a_window
    @rec = Hark::Recorder.start
    @rec.dump_on_error(path("err-%n.json"), interval: 3600)
    3.times do
      assert_raises(RuntimeError) { N.instrument("process_action.action_controller") { raise "boom" } }
    end
    N.instrument("process_action.action_controller") { } # fine: no dump
    @rec.flush
    assert_equal [path("err-1.json")], Dir[path("err-*.json")]
    doc = JSON.parse(File.read(path("err-1.json")))
    assert_equal "trigger", doc["otherData"]["recorder"]["reason"]
    assert(doc["traceEvents"].any? { |e| e["args"]["exception"] })
    assert_equal 2, @rec.stats[:rate_limited]
  end

  def test_dump_on_slow
    @rec = Hark::Recorder.start
    @rec.dump_on_slow(path("slow-%n.jsonl"), event: "request.test", threshold: 0.05, format: :jsonl)
    N.instrument("request.test") { }
    N.instrument("request.test") { sleep 0.06 }
    @rec.flush
    files = Dir[path("slow-*.jsonl")]
    assert_equal 1, files.size
    records, summary = jsonl(files.first)
    assert_equal "trigger", summary["reason"]
    assert_operator records.last["end_ns"] - records.last["start_ns"], :>=, 50_000_000
  end

  def test_stop_and_bad_input
    rec = Hark::Recorder.start
    assert rec.running?
    assert_same rec, Hark::Recorder.current
    assert rec.stop
    refute rec.stop
    refute rec.running?
    assert_nil Hark::Recorder.current
    assert_raises(RuntimeError) { rec.dump(path("x.json")) }
    assert_raises(ArgumentError) { Hark::Recorder.new(max_bytes: 10) }
    assert_raises(ArgumentError) { Hark::Recorder.new(payload_keys: (1..17).map { |i| :"k#{i}" }) }
    assert_raises(TypeError) { Hark::Recorder.new(payload_keys: [1]) }
    @rec = Hark::Recorder.start
    assert_raises(ArgumentError) { @rec.dump(path("x.json"), format: :xml) }
    assert_raises(Errno::ENOENT) { @rec.dump(File.join(@dir, "no", "such", "x.json")) }
    assert_raises(ArgumentError) { @rec.dump_on_error(path("bad-%q.json")) }
  end

  def test_a_crash_is_dumped_and_the_process_still_dies_of_a_signal
    script = <<~RUBY
      require "hark/rails"
      require "hark/recorder"
      rec = Hark::Recorder.start(payload_keys: %i[i])
      rec.dump_on_crash(ARGV[0])
      100.times { |i| ActiveSupport::Notifications.instrument("work.crash", i: i) { } }
      Process.kill(:SEGV, Process.pid)
      sleep 10
    RUBY
    file = path("crash.json")
    env = { "ASAN_OPTIONS" => [ENV["ASAN_OPTIONS"], "handle_segv=0:handle_abort=0"].compact.join(":") }
    paths = $LOAD_PATH.select { |p| p.to_s.include?("rails-7.2") || File.exist?(File.join(p.to_s, "hark.rb")) }
    _out, err, status = Open3.capture3(env, RbConfig.ruby, *paths.flat_map { |p| ["-I", p.to_s] },
                                       "-e", script, file)
    assert status.signaled?, "the process must die of a signal: #{status.inspect}\n#{err}"
    doc = JSON.parse(File.read(file))
    summary = doc["otherData"]["recorder"]
    assert_equal ["crash", Signal.list["SEGV"]], [summary["reason"], summary["signal"]]
    assert_equal (0..99).to_a, doc["traceEvents"].map { |e| e["args"]["i"] }
  end

  def test_a_crash_of_a_forked_child_is_dumped_into_its_own_file
    script = <<~RUBY
      require "hark/rails"
      require "hark/recorder"
      rec = Hark::Recorder.start(payload_keys: %i[i])
      rec.dump_on_crash(File.join(ARGV[0], "crash-%p.json"))
      ActiveSupport::Notifications.instrument("work.parent", i: -1) { }
      pid = fork do
        7.times { |i| ActiveSupport::Notifications.instrument("work.child", i: i) { } }
        Process.kill(:SEGV, Process.pid)
        sleep 10
      end
      Process.wait(pid)
      puts JSON.generate(child: pid, signaled: $?.signaled?)
    RUBY
    env = { "ASAN_OPTIONS" => [ENV["ASAN_OPTIONS"], "handle_segv=0:handle_abort=0"].compact.join(":") }
    paths = $LOAD_PATH.select { |p| p.to_s.include?("rails-7.2") || File.exist?(File.join(p.to_s, "hark.rb")) }
    out, err, status = Open3.capture3(env, RbConfig.ruby, *paths.flat_map { |p| ["-I", p.to_s] },
                                      "-rjson", "-e", script, @dir)
    assert status.success?, "the parent lives on: #{status.inspect}\n#{err}"
    child = JSON.parse(out.lines.last)
    assert child["signaled"], "the child dies of its signal"
    assert_equal ["crash-#{child['child']}.json"], Dir.children(@dir).grep(/\Acrash-/)
    doc = JSON.parse(File.read(File.join(@dir, "crash-#{child['child']}.json")))
    summary = doc["otherData"]["recorder"]
    assert_equal ["crash", child["child"]], [summary["reason"], summary["pid"]]
    # The child's own events: its recorder started empty at the fork.
    assert_equal [["work.child", (0..6).to_a]],
                 doc["traceEvents"].group_by { |e| e["name"] }.map { |n, evs| [n, evs.map { |e| e["args"]["i"] }] }
  end

  # The README's initializer, as an application would have it.
  INITIALIZER = File.read(File.expand_path("../README.md", __dir__))[
    /^```ruby\n(# config\/initializers\/hark_recorder\.rb\n.*?)^```$/m, 1]

  APP = <<~RUBY
    require "hark/rails"
    require "rails"
    require "active_record/railtie"
    require "action_controller/railtie"
    require "json"
    root = ARGV[0]
    class RecorderApp < Rails::Application
      config.root = ARGV[0]
      config.eager_load = false
      config.logger = Logger.new(nil)
      config.secret_key_base = "x" * 64
      config.hosts.clear
      config.action_dispatch.show_exceptions = :all
    end
    RecorderApp.initialize!
    ActiveRecord::Schema.verbose = false
    ActiveRecord::Schema.define { create_table(:books) { |t| t.string :title } }
    class Book < ActiveRecord::Base; end
    class BooksController < ActionController::Base
      def ok = render(plain: Book.count.to_s)

      def boom
        Book.create!(title: "Dune")
        Book.where(title: "Dune").to_a
        raise "no more books"
      end
    end
    RecorderApp.routes.draw do
      get "/ok" => "books#ok"
      get "/boom" => "books#boom"
    end
    statuses = %w[/ok /boom].map { |p| RecorderApp.call(Rack::MockRequest.env_for(p)).first }
    Hark::Recorder.current.flush
    puts JSON.generate(statuses: statuses, dumps: Dir[File.join(root, "log", "hark-recorder-*.json")])
  RUBY

  def test_a_rails_request_that_raises_leaves_its_events_in_a_dump
    skip "railties not on the load path" unless $LOAD_PATH.any? { |p| File.exist?(File.join(p.to_s, "rails.rb")) }
    skip "the sqlite3 gem is missing" unless (begin
      require "sqlite3"
    rescue LoadError
      false
    end)
    refute_nil INITIALIZER, "README.md has the initializer"
    FileUtils.mkdir_p(path("config/initializers"))
    FileUtils.mkdir_p(path("log"))
    File.write(path("config/initializers/hark_recorder.rb"), INITIALIZER)
    paths = $LOAD_PATH.select { |p| p.to_s.include?("rails-7.2") || File.exist?(File.join(p.to_s, "hark.rb")) }
    env = { "DATABASE_URL" => "sqlite3::memory:", "RAILS_ENV" => "production" }
    out, err, status = Open3.capture3(env, RbConfig.ruby, *paths.flat_map { |p| ["-I", p.to_s] },
                                      "-e", APP, @dir)
    assert status.success?, err
    result = JSON.parse(out.lines.last)
    assert_equal [200, 500], result["statuses"]
    assert_equal 1, result["dumps"].size, "one request raised: one dump"
    events = JSON.parse(File.read(result["dumps"].first))["traceEvents"]
    actions = events.select { |e| e["name"] == "process_action.action_controller" }
    boom = actions.find { |e| e["args"]["action"] == "boom" }
    refute_nil boom, actions.inspect
    assert_equal({ "type" => "RuntimeError", "message" => "no more books" }, boom["args"]["exception"])
    by_id = events.to_h { |e| [e["id"], e] }
    inside = lambda do |e| # the event or one of its parents is the raising request's
      e = by_id[e["parent_id"]] until e.nil? || e["id"] == boom["id"]
      !e.nil?
    end
    sqls = events.select { |e| e["name"] == "sql.active_record" && inside.(e) }
    assert(sqls.any? { |e| e["args"]["sql"].to_s.start_with?("INSERT INTO \"books\"") }, sqls.inspect)
    assert(sqls.any? { |e| e["args"]["sql"].to_s.start_with?("SELECT \"books\".*") }, sqls.inspect)
  end
end
