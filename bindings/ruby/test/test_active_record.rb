# frozen_string_literal: true

# ActiveRecord's own log subscriber on hark: its `logger` is ActiveRecord::Base.logger (a
# class_attribute), which hark follows, so a silenced sql.active_record costs no question
# per event and every change of the logger or its level is seen on the next query.
# Needs ActiveRecord 7.2 and the sqlite3 gem (make ruby-test puts Rails 7.2's
# activesupport, activemodel and activerecord on the load path).
require "minitest/autorun"
begin
  require "set"
  require "logger"
  require "active_support"
  require "active_support/logger"
  require "hark/rails"
  require "active_record"
  require "sqlite3"
rescue LoadError => e
  warn "test_active_record: #{e.message}, skipped"
  return
end
require "stringio"
require "tmpdir"

class TestActiveRecord < Minitest::Test
  class Book < ActiveRecord::Base
  end

  LINE = proc { |_sev, _time, _prog, msg| "#{msg}\n" }

  def self.prepare
    return if @prepared
    # A file, so that another thread's connection sees the same table.
    dir = Dir.mktmpdir("hark-ar")
    Minitest.after_run { FileUtils.rm_rf(dir) }
    ActiveRecord::Base.establish_connection(adapter: "sqlite3", database: File.join(dir, "test.sqlite3"))
    ActiveRecord::Migration.verbose = false
    ActiveRecord::Schema.define { create_table(:books) { |t| t.string :title } }
    Book.create!(title: "one")
    @prepared = true
  end

  def setup
    self.class.prepare
    @io = StringIO.new
    @old_logger = ActiveRecord::Base.logger
    ActiveRecord::Base.logger = ActiveSupport::Logger.new(@io, level: :info, formatter: LINE)
    @sub = ActiveSupport::Notifications.notifier.all_listeners_for("sql.active_record")
                                       .find { |s| ActiveRecord::LogSubscriber === s.delegate }
  end

  def teardown
    ActiveRecord::Base.logger = @old_logger
  end

  def silenced_questions
    count = 0
    tp = TracePoint.new(:call) { |t| count += 1 if t.method_id == :silenced? || t.method_id == :debug? }
    tp.enable { yield }
    count
  end

  def sql_lines = @io.string.lines.grep(/Book Load/)

  def test_the_fanout_is_hark
    assert_kind_of Hark::Fanout, ActiveSupport::Notifications.notifier
    refute_nil @sub, "ActiveRecord's LogSubscriber listens to sql.active_record"
  end

  def test_silenced_sql_events_ask_nothing
    assert_equal 0, @sub.hark_polls, "cached"
    assert_equal 0, silenced_questions { 5.times { Book.find(1) } }
    assert_empty sql_lines
  end

  def test_level_and_logger_changes_are_seen
    ActiveRecord::Base.logger.level = :debug
    Book.find(1)
    assert_equal 1, sql_lines.size
    ActiveRecord::Base.logger.level = :info
    Book.find(1)
    assert_equal 1, sql_lines.size
    other = StringIO.new
    ActiveRecord::Base.logger = ActiveSupport::Logger.new(other, level: :debug, formatter: LINE)
    Book.find(1)
    assert_match(/Book Load/, other.string)
    ActiveRecord::Base.logger = nil
    Book.find(1) # no logger: silenced, as in Rails
    assert_equal 1, other.string.lines.grep(/Book Load/).size
    assert_equal 0, @sub.hark_polls
  end

  def test_silence_on_one_thread_only
    ActiveRecord::Base.logger.level = :debug
    Thread.new { ActiveRecord::Base.logger.silence(:info) { Book.find(1) } }.join
    assert_empty sql_lines
    Book.find(1)
    assert_equal 1, sql_lines.size
  end
end
