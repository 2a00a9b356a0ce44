# frozen_string_literal: true

# Rails accepts any number of subscriptions; so must hark's fanout, also for the
# silenceable ones (log subscribers, a `silenced?` listener): a test suite attaching
# a subscriber in each setup makes hundreds on one name.
require "minitest/autorun"
require_relative "rails_or_skip"
return unless hark_test_load_rails("test_many_subscribers", "active_support/log_subscriber")
require "stringio"

class TestManySubscribers < Minitest::Test
  N = ActiveSupport::Notifications

  class Counting < ActiveSupport::LogSubscriber
    class << self
      attr_accessor :calls
    end
    self.calls = 0

    def query(event)
      Counting.calls += 1
      debug { "query #{event.payload[:n]}" }
    end
    subscribe_log_level :query, :debug
  end

  def setup
    @old = N.notifier
    N.notifier = ActiveSupport::Notifications::Fanout.new
    @io = StringIO.new
    @old_logger = ActiveSupport::LogSubscriber.logger
    ActiveSupport::LogSubscriber.logger = ActiveSupport::Logger.new(@io, level: Logger::DEBUG)
    Counting.calls = 0
  end

  def teardown
    Counting.detach_from(:many)
    ActiveSupport::LogSubscriber.logger = @old_logger
    N.notifier = @old
  end

  def test_hundreds_of_log_subscribers_attach_to_one_name
    300.times { Counting.attach_to(:many, Counting.new) }
    quiet = Array.new(300) do
      Object.new.tap do |o|
        def o.call(*) = raise("silenced, must not be called")
        def o.silenced?(_name) = true
      end
    end
    quiet.each { |o| N.subscribe(/\Aquery\.many\z/, o) } # silenceable Regexp subscriptions
    N.instrument("query.many", n: 1) { }
    assert_equal 300, Counting.calls
    assert_equal 300, @io.string.lines.grep(/query 1/).size
    ActiveSupport::LogSubscriber.logger.level = Logger::INFO # now all silenced
    N.instrument("query.many", n: 2) { }
    assert_equal 300, Counting.calls
  end
end
