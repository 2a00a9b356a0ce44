# frozen_string_literal: true

# Log subscribers whose `logger` returns a class-level logger, as every framework log
# subscriber in Rails does (ActiveRecord: a class_attribute; ActiveJob, ActiveStorage: a
# cattr/mattr_accessor; ActionController, ActionMailer: a config_accessor; reached
# directly or through `delegate`): hark caches their silenced? answer and hears every
# change of the logger or of its level. hark knows each reader by how it was defined:
# the definers record what they make (Hark::Silence::Definers), and a hand-written
# `def logger = Some::Const.logger` is read from its source (Hark::MethodBody). Needs
# ActiveSupport on the load path.
require "minitest/autorun"
require_relative "rails_or_skip"
return unless hark_test_load_rails(
  "test_logger_sources",
  "active_support/log_subscriber",
  "active_support/configurable",
  "active_support/core_ext/class/attribute",
  "active_support/core_ext/module/attribute_accessors",
  "active_support/core_ext/module/delegation"
)
require "stringio"

module HarkSourceTest
  class AttributeBase # ActiveRecord::Base's shape
    class_attribute :logger, instance_writer: false
  end

  class AttributeChild < AttributeBase
  end

  class CattrBase # ActiveJob::Base's shape
    cattr_accessor :logger
  end

  module MattrHolder # ActiveStorage's shape
    mattr_accessor :logger
  end

  class ConfigBase # ActionController::Base / ActionMailer::Base's shape
    include ActiveSupport::Configurable
    config_accessor :logger
  end

  class ConfigChild < ConfigBase
  end

  class Recorder < ActiveSupport::LogSubscriber
    class << self
      attr_accessor :seen
    end
    self.seen = []

    def sql(event)
      Recorder.seen << event.payload[:n]
      debug { "SQL #{event.payload[:n]}" }
    end
    subscribe_log_level :sql, :debug
  end

  class AttributeSubscriber < Recorder
    def logger = HarkSourceTest::AttributeBase.logger
  end

  class AttributeChildSubscriber < Recorder
    def logger = AttributeChild.logger # lexical constant, as ActiveRecord writes it
  end

  class CattrSubscriber < Recorder
    def logger = CattrBase.logger
  end

  class MattrSubscriber < Recorder
    def logger = MattrHolder.logger
  end

  class ConfigSubscriber < Recorder
    def logger = ConfigChild.logger
  end

  class DelegatingSubscriber < Recorder
    delegate :logger, to: :"HarkSourceTest::CattrBase"
  end
end

class TestLoggerSources < Minitest::Test
  include HarkSourceTest
  N = ActiveSupport::Notifications
  LINE = proc { |_sev, _time, _prog, msg| "#{msg}\n" }

  def setup
    @old_notifier = N.notifier
    N.notifier = ActiveSupport::Notifications::Fanout.new
    @io = StringIO.new
    @quiet = ActiveSupport::Logger.new(@io, level: Logger::ERROR, formatter: LINE)
    @loud_io = StringIO.new
    @loud = ActiveSupport::Logger.new(@loud_io, level: Logger::DEBUG, formatter: LINE)
    Recorder.seen = []
    AttributeBase.logger = @quiet
    CattrBase.logger = @quiet
    MattrHolder.logger = @quiet
    ConfigBase.logger = @quiet
    @attached = []
  end

  def teardown
    @attached.each { |klass, ns| klass.detach_from(ns) }
    N.notifier = @old_notifier
  end

  def attach(klass, namespace)
    klass.attach_to(namespace, inherit_all: true)
    @attached << [klass, namespace]
    N.notifier.all_listeners_for("sql.#{namespace}").first
  end

  # How often anything was asked about silence during the block.
  def questions
    count = 0
    tp = TracePoint.new(:call) { |t| count += 1 if %i[silenced? debug? level logger].include?(t.method_id) }
    tp.enable { yield }
    count
  end

  def instrument(namespace, n)
    N.instrument("sql.#{namespace}", n: n) { }
  end

  # Cached (nothing asked per event), and every change below is seen on the next event.
  def assert_followed(klass, namespace)
    sub = attach(klass, namespace)
    assert_equal 0, sub.hark_polls, "#{klass} must be cached"
    assert_equal 0, questions { 5.times { instrument(namespace, :quiet) } }
    yield
    assert_equal 0, sub.hark_polls, "#{klass} is still cached"
  end

  def test_class_attribute
    assert_followed(AttributeSubscriber, :src_attr) do
      AttributeBase.logger = @loud
      instrument(:src_attr, 1)
      @loud.level = Logger::ERROR
      instrument(:src_attr, 2)
      @loud.debug!
      instrument(:src_attr, 3)
      AttributeBase.logger = nil # no logger: silenced, and setting one is heard
      instrument(:src_attr, 4)
      AttributeBase.logger = @loud
      instrument(:src_attr, 5)
      assert_equal [1, 3, 5], Recorder.seen
      assert_equal "SQL 1\nSQL 3\nSQL 5\n", @loud_io.string
    end
  end

  def test_class_attribute_of_a_subclass
    assert_followed(AttributeChildSubscriber, :src_attr_child) do
      AttributeBase.logger = @loud # inherited
      instrument(:src_attr_child, 1)
      AttributeChild.logger = @quiet # its own
      instrument(:src_attr_child, 2)
      AttributeChild.logger = @loud
      @loud.level = Logger::INFO
      instrument(:src_attr_child, 3)
      assert_equal [1], Recorder.seen
    end
  ensure
    AttributeChild.singleton_class.remove_method(:logger) if AttributeChild.singleton_class.method_defined?(:logger, false)
  end

  def test_cattr_accessor
    assert_followed(CattrSubscriber, :src_cattr) do
      CattrBase.logger = @loud
      instrument(:src_cattr, 1)
      CattrBase.new.logger = @quiet # the instance writer sets the same class variable
      instrument(:src_cattr, 2)
      CattrBase.class_variable_set(:@@logger, @loud)
      instrument(:src_cattr, 3)
      assert_equal [1, 3], Recorder.seen
    end
  end

  def test_mattr_accessor
    assert_followed(MattrSubscriber, :src_mattr) do
      MattrHolder.logger = @loud
      instrument(:src_mattr, 1)
      MattrHolder.logger.level = Logger::WARN
      instrument(:src_mattr, 2)
      assert_equal [1], Recorder.seen
    end
  end

  def test_config_accessor
    assert_followed(ConfigSubscriber, :src_config) do
      ConfigBase.logger = @loud # the child's config inherits it
      instrument(:src_config, 1)
      ConfigChild.config.logger = @quiet
      instrument(:src_config, 2)
      ConfigChild.config[:logger] = @loud
      instrument(:src_config, 3)
      ConfigChild.config.delete(:logger) # back to the parent's
      ConfigBase.config.merge!(logger: @quiet)
      instrument(:src_config, 4)
      ConfigBase.logger = @loud
      instrument(:src_config, 5)
      assert_equal [1, 3, 5], Recorder.seen
    end
  end

  def test_delegated_logger
    assert_followed(DelegatingSubscriber, :src_delegate) do
      CattrBase.logger = @loud
      instrument(:src_delegate, 1)
      @loud.level = Logger::FATAL
      instrument(:src_delegate, 2)
      assert_equal [1], Recorder.seen
    end
  end

  class Redefined
    cattr_accessor :logger
  end

  class RedefinedSubscriber < Recorder
    def logger = Redefined.logger
  end

  # A new definition of the class-level reader is seen (and, a block over a variable
  # being something hark does not follow, asked per event from then on).
  def test_redefining_the_class_level_reader_is_seen
    Redefined.logger = @quiet
    sub = attach(RedefinedSubscriber, :src_redefine)
    assert_equal 0, sub.hark_polls
    loud = @loud
    Redefined.singleton_class.prepend(Module.new { define_method(:logger) { loud } })
    instrument(:src_redefine, 1)
    assert_equal [1], Recorder.seen
    assert_equal 1, sub.hark_polls
  end

  # A class-level reader hark cannot follow (a method computing its answer) is asked per
  # event, so a change no hook hears is still seen.
  class Computed < Recorder
    class << self
      attr_accessor :current
    end

    def logger = Computed.current
  end

  def test_an_unfollowed_class_level_reader_is_asked_per_event
    Computed.current = @quiet
    sub = attach(Computed, :src_computed)
    assert_equal 1, sub.hark_polls, "asked per event"
    instrument(:src_computed, 1)
    Computed.instance_variable_set(:@current, @loud)
    instrument(:src_computed, 2)
    assert_equal [2], Recorder.seen
  end

  # The definers still name the methods they make after the line that called them (the
  # hooks in front of them are C methods, which have no line of their own): the
  # readers' source_location, and so backtraces through them, are as without hark.
  class Located
    class_attribute :attr_logger; ATTR_LINE = __LINE__
    cattr_accessor :cvar_logger; CVAR_LINE = __LINE__
    delegate :logger, to: :"HarkSourceTest::CattrBase", prefix: :base; DELEGATE_LINE = __LINE__
  end

  def test_definers_keep_their_callers_line
    assert_equal [__FILE__, Located::ATTR_LINE], Located.method(:attr_logger).source_location
    assert_equal [__FILE__, Located::CVAR_LINE], Located.method(:cvar_logger).source_location
    assert_equal [__FILE__, Located::DELEGATE_LINE], Located.instance_method(:base_logger).source_location
    reader = Hark::Silence::Definers.reader(Located.new.method(:base_logger))
    assert_equal [:delegate, :base_logger, :logger], [reader.kind, reader.name, reader.target_method]
    assert_equal :class_attribute, Hark::Silence::Definers.reader(Located.method(:attr_logger)).kind
    assert_equal :class_variable, Hark::Silence::Definers.reader(Located.method(:cvar_logger)).kind
  end

  # ... and are as callable as before: config_accessor stays private.
  def test_definers_keep_their_visibility
    assert_raises(NoMethodError) { Class.new { include ActiveSupport::Configurable }.config_accessor :foo }
    assert Class.public_method_defined?(:class_attribute)
    assert Module.public_method_defined?(:delegate)
  end

  # A reader hark did not see being made (here: class_attribute called past hark's hook,
  # as for a class loaded before hark/rails) is not followed: asked per event, exact, and
  # the subscription says why.
  class Unseen
    Class.instance_method(:class_attribute).super_method.bind_call(self, :logger)
  end

  class UnseenSubscriber < Recorder
    def logger = Unseen.logger
  end

  def test_a_reader_made_out_of_sight_is_asked_per_event
    Unseen.logger = @quiet
    sub = attach(UnseenSubscriber, :src_unseen)
    assert_equal 1, sub.hark_polls, "asked per event"
    assert_match(/Unseen.logger .*is not a logger reader hark follows/, sub.hark_why)
    instrument(:src_unseen, 1)
    Unseen.logger = @loud # heard or not, the next event asks
    instrument(:src_unseen, 2)
    assert_equal [2], Recorder.seen
  end

  # A delegation to a method of the subscriber that returns a class (not an
  # ActiveSupport::OrderedOptions, as Rails 8.1's `delegate :logger, to: :config` reads)
  # is not followed.
  class DelegatingToAMethod < Recorder
    delegate :logger, to: :holder
    def holder = HarkSourceTest::CattrBase
  end

  def test_a_delegation_to_a_method_is_asked_per_event
    sub = attach(DelegatingToAMethod, :src_to_method)
    assert_equal 1, sub.hark_polls
    assert_match(/DelegatingToAMethod#logger .* delegates to .*DelegatingToAMethod#holder .*, which returns a Class, not an ActiveSupport::OrderedOptions/, sub.hark_why)
    CattrBase.logger = @loud
    instrument(:src_to_method, 1)
    assert_equal [1], Recorder.seen
  end

  # The same reader defined again by hand elsewhere is not the definer's any more.
  class Overridden
    class_attribute :logger
  end

  class OverriddenSubscriber < Recorder
    def logger = Overridden.logger
  end

  def test_a_reader_defined_again_elsewhere_is_not_the_definers
    Overridden.logger = @quiet
    sub = attach(OverriddenSubscriber, :src_overridden)
    assert_equal 0, sub.hark_polls
    current = @quiet
    Overridden.singleton_class.class_eval { define_method(:logger) { current } }
    assert_equal 1, sub.hark_polls, "no longer followed"
    current = @loud
    instrument(:src_overridden, 1)
    assert_equal [1], Recorder.seen
  end
end
