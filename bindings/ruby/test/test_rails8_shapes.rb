# frozen_string_literal: true

# Rails 8.0, 8.1 and main (8.2) need Ruby >= 3.2, so they cannot run where this binding is
# proven (Debian 12's Ruby 3.1, Rails 7.2). Each test here reproduces on Rails 7.2 one
# shape of theirs that hark/rails must handle, found by what it is rather than by a
# version number, and is named after the Rails file it imitates:
#
#   isolated_execution_state.rb  share_with(other, except: keys) { ... }, which puts the
#                                thread's own state back after the block (8.1; 8.0
#                                without the block), as action_controller/metal/live.rb
#                                calls it
#   class_attribute.rb           a class_attribute writer that only updates the value
#                                its methods close over (ActiveSupport::ClassAttribute
#                                .redefine, 8.0)
#   abstract_controller/logger.rb  singleton_class.delegate :logger, to: :config (8.1)
#   configurable.rb              deprecated in 8.1 (loading it warns): never loaded by hark
#   structured_event_subscriber.rb  a silenced? that reads the event reporter's
#                                subscribers and debug mode (event_reporter.rb, 8.1)
#   notifications/fanout.rb      subscribe(..., prepend: true) (main)
#
# and the gate (Hark::RailsGate) on a Rails version faked in a child process. The shapes
# that must be in place before hark/rails is loaded run in a child process too. Needs
# ActiveSupport on the load path.
require "minitest/autorun"
require "rbconfig"
require_relative "rails_or_skip"
return unless hark_test_load_rails("test_rails8_shapes", "active_support/log_subscriber",
                                   "active_support/core_ext/class/attribute",
                                   "active_support/core_ext/module/delegation")
require "stringio"
require "tmpdir"
require "fileutils"

class TestRails8Shapes < Minitest::Test
  N = ActiveSupport::Notifications

  # Runs `script` in a child Ruby with this process's load path, from a file (hark reads
  # a `def logger = ...` from its source); returns [stdout+stderr, status].
  def child(script, env: {})
    Dir.mktmpdir("hark-rails8-shape") do |dir|
      file = File.join(dir, "shape.rb")
      File.write(file, script)
      out = IO.popen(env, [RbConfig.ruby, *$LOAD_PATH.flat_map { |d| ["-I", d] }, file],
                     err: %i[child out], &:read)
      [out, $?]
    end
  end

  def assert_child(script, env: {})
    out, status = child(script, env: env)
    assert status.success?, "the child failed:\n#{out}"
    assert_includes out, "child done", out
    out
  end

  # Lines: a log subscriber of `sql.<namespace>` that logs "SQL n" at debug (each test's
  # subclass says where its logger comes from), and check(what, ok).
  CHILD_SUBSCRIBER = <<~'RUBY'
    require "stringio"
    require "active_support/log_subscriber"
    LINE = proc { |_sev, _time, _prog, msg| "#{msg}\n" }
    def check(what, ok)
      raise "FAILED: #{what}" unless ok
      puts "ok: #{what}"
    end
    class Lines < ActiveSupport::LogSubscriber
      # attach_to subscribes the subscriber class's own public methods only.
      def self.inherited(klass)
        super
        klass.class_eval { def sql(event) = debug { "SQL #{event.payload[:n]}" } }
        klass.send(:subscribe_log_level, :sql, :debug)
      end
    end
    def entry_for(event)
      Hark.stats[:subscriptions].find { |s| s[:event] == event }
    end
    def polls_for(event)
      ActiveSupport::Notifications.notifier._silenceable_subscriptions.find { |s| s.raw_pattern == event }.hark_polls
    end
  RUBY

  # ---------------------------------------------------------------------------------
  # isolated_execution_state.rb (8.1) and action_controller/metal/live.rb

  def test_isolated_execution_state_share_with_except_and_a_block
    assert_child(<<~RUBY)
      require "hark/rails"
      #{CHILD_SUBSCRIBER}
      # Rails 8.1's share_with: copies other's state less the keys in except:, runs the
      # block with it, then puts the thread's own state back (8.0: no block, no restore).
      module ActiveSupport::IsolatedExecutionState
        class << self
          def share_with(other, except: [], &block)
            if (state = other.active_support_execution_state)
              copied = state.dup
              Array(except).each { |key| copied.delete(key) }
            end
            old = context.active_support_execution_state
            context.active_support_execution_state = copied
            block.call
          ensure
            context.active_support_execution_state = old
          end
        end
      end
      io = StringIO.new
      LIVE_LOGGER = ActiveSupport::Logger.new(io, level: Logger::INFO, formatter: LINE)
      logger = LIVE_LOGGER
      class LiveLines < Lines
        private def logger = LIVE_LOGGER
      end
      LiveLines.attach_to(:live)
      check "cached and silenced at info", entry_for("sql.live")[:cached] && entry_for("sql.live")[:silenced]
      ActiveSupport::IsolatedExecutionState[:excluded] = 1
      parent = Thread.current
      to_child = Queue.new
      to_parent = Queue.new
      child = nil
      logger.log_at(:debug) do
        child = Thread.new do
          result = ActiveSupport::IsolatedExecutionState.share_with(parent, except: [:excluded]) do
            to_parent << :shared
            to_child.pop # the parent has left log_at: only the copy is in force
            check "except: left the key out", !ActiveSupport::IsolatedExecutionState.key?(:excluded)
            check "the copied local level in force", Hark.stats[:thread_local_levels]
            ActiveSupport::Notifications.instrument("sql.live", n: 1)
            :value
          end
          check "the block's value returned", result == :value
          check "no local level in force after the restore", !Hark.stats[:thread_local_levels]
          ActiveSupport::Notifications.instrument("sql.live", n: 2)
          to_parent << :restored
          to_child.pop
        end
        to_parent.pop
      end
      to_child << :go
      to_parent.pop
      check "logged with the copied level, silenced after the restore", io.string == "SQL 1\\n"
      to_child << :end
      child.join
      # 8.0's share_with(other, except:) without a block still reaches Rails' method.
      module ActiveSupport::IsolatedExecutionState
        class << self
          def share_with(other, except: [])
            state = other.active_support_execution_state.dup
            Array(except).each { |key| state.delete(key) }
            context.active_support_execution_state = state
          end
        end
      end
      Thread.new do
        ActiveSupport::IsolatedExecutionState.share_with(parent, except: :excluded)
        check "8.0's form: except: applied", !ActiveSupport::IsolatedExecutionState.key?(:excluded)
      end.join
      puts "child done"
    RUBY
  end

  # ---------------------------------------------------------------------------------
  # class_attribute.rb (8.0): writes to the defining class only update a closure

  CLASS_ATTRIBUTE_8 = <<~'RUBY'
    require "active_support"
    require "active_support/core_ext/class/attribute"
    require "active_support/core_ext/module/redefine_method"
    # Rails 8.0's ActiveSupport::ClassAttribute and class_attribute, cut to what a
    # class-level logger uses: the reader calls a private reader that returns the value
    # redefine's methods close over; the private writer updates that value when written on
    # the class that owns it, and redefines them on a subclass written to the first time.
    module ActiveSupport
      module ClassAttribute
        def self.redefine(owner, name, namespaced_name, value)
          redefine_method(owner.singleton_class, namespaced_name, private: true) { value }
          redefine_method(owner.singleton_class, "#{namespaced_name}=", private: true) do |new_value|
            if owner.equal?(self)
              value = new_value
            else
              ::ActiveSupport::ClassAttribute.redefine(self, name, namespaced_name, new_value)
            end
          end
        end

        def self.redefine_method(owner, name, private: false, &block)
          owner.silence_redefinition_of_method(name)
          owner.define_method(name, &block)
          owner.send(:private, name) if private
        end
      end
    end
    class Class
      def class_attribute(*attrs, instance_accessor: true, instance_reader: instance_accessor,
                          instance_writer: instance_accessor, instance_predicate: true, default: nil)
        class_methods, methods = [], []
        attrs.each do |name|
          namespaced = :"__class_attr_#{name}"
          ::ActiveSupport::ClassAttribute.redefine(self, name, namespaced, default)
          class_methods << "def #{name}; #{namespaced}; end"
          class_methods << "def #{name}=(value); self.#{namespaced} = value; end"
          class_methods << "silence_redefinition_of_method def #{name}?; !!self.#{name}; end" if instance_predicate
          methods << "silence_redefinition_of_method def #{name}; defined?(@#{name}) ? @#{name} : self.class.#{name}; end" if instance_reader
          methods << "silence_redefinition_of_method(:#{name}=); attr_writer :#{name}" if instance_writer
        end
        location = caller_locations(1, 1).first
        class_eval(["class << self", *class_methods, "end", *methods].join(";"), location.path, location.lineno)
      end
    end
  RUBY

  def test_class_attribute_writer_that_only_updates_a_closure
    assert_child(<<~RUBY)
      #{CLASS_ATTRIBUTE_8}
      require "hark/rails"
      #{CHILD_SUBSCRIBER}
      class Base # ActiveRecord::Base's shape
        class_attribute :logger
        # ActiveRecord::Base's singleton class has modules prepended and extended too.
        singleton_class.prepend(Module.new { def to_s = super })
        extend(Module.new { def helper = nil })
      end
      class Child < Base
      end
      io = StringIO.new
      # As ActiveRecord: the log subscriber is attached before `self.logger ||= Rails.logger`.
      class BaseLines < Lines
        private def logger = Base.logger
      end
      class ChildLines < Lines
        private def logger = Child.logger
      end
      BaseLines.attach_to(:base)
      ChildLines.attach_to(:child)
      %w[sql.base sql.child].each do |event|
        check "\#{event} cached with no logger yet: \#{entry_for(event)[:why]}", entry_for(event)[:cached] && entry_for(event)[:silenced]
      end
      Base.logger ||= ActiveSupport::Logger.new(io, level: Logger::DEBUG, formatter: LINE)
      check "the write only updated a closure", Base.singleton_class.private_method_defined?(:__class_attr_logger=)
      ActiveSupport::Notifications.instrument("sql.base", n: 1)
      ActiveSupport::Notifications.instrument("sql.child", n: 2)
      check "a write on the owner is heard", io.string == "SQL 1\\nSQL 2\\n"
      Child.logger = ActiveSupport::Logger.new(io, level: Logger::ERROR, formatter: LINE) # redefines on Child
      ActiveSupport::Notifications.instrument("sql.child", n: 3)
      Child.logger = ActiveSupport::Logger.new(io, level: Logger::DEBUG, formatter: LINE) # Child's closure
      ActiveSupport::Notifications.instrument("sql.child", n: 4)
      Base.logger = nil # Child has its own now
      ActiveSupport::Notifications.instrument("sql.base", n: 5)
      ActiveSupport::Notifications.instrument("sql.child", n: 6)
      check "subclass writes heard, each class its own", io.string == "SQL 1\\nSQL 2\\nSQL 4\\nSQL 6\\n"
      check "still cached, never asked per event", Hark.stats[:log_subscriptions][:asked_per_event].zero? && polls_for("sql.base").zero? && polls_for("sql.child").zero?
      check "the hooked writer stays private", Child.singleton_class.private_method_defined?(:__class_attr_logger=)
      puts "child done"
    RUBY
  end

  # ---------------------------------------------------------------------------------
  # abstract_controller/logger.rb (8.1): the logger is the controller config's entry

  class ControllerBase # AbstractController::Base with 8.1's AbstractController::Logger
    class_attribute :config, instance_predicate: false, default: ActiveSupport::OrderedOptions.new
    singleton_class.delegate :logger, :logger=, to: :config

    def self.inherited(klass)
      klass.config = ActiveSupport::InheritableOptions.new(config)
      super
    end
  end

  class Controller < ControllerBase
  end

  class ControllerLines < ActiveSupport::LogSubscriber
    class << self
      attr_accessor :seen
    end
    self.seen = []

    def process_action(event)
      ControllerLines.seen << event.payload[:n]
      debug { "processed #{event.payload[:n]}" }
    end
    subscribe_log_level :process_action, :debug

    def logger = Controller.logger
  end

  def test_abstract_controller_logger_delegated_to_config
    notifier = N.notifier
    N.notifier = N::Fanout.new
    io = StringIO.new
    ControllerLines.seen = []
    ControllerLines.attach_to(:controller_shape, ControllerLines.new, N.notifier)
    entry = Hark.stats[:subscriptions].find { |s| s[:event] == "process_action.controller_shape" }
    assert entry[:cached], "cached: #{entry[:why]}"
    assert entry[:silenced], "no logger yet"
    ControllerBase.logger = ActiveSupport::Logger.new(io, level: Logger::DEBUG) # read through the child's config
    N.instrument("process_action.controller_shape", n: 1)
    Controller.config.logger = ActiveSupport::Logger.new(io, level: Logger::ERROR)
    N.instrument("process_action.controller_shape", n: 2)
    Controller.logger.level = Logger::DEBUG
    N.instrument("process_action.controller_shape", n: 3)
    Controller.config = ActiveSupport::InheritableOptions.new # a new config: no logger
    N.instrument("process_action.controller_shape", n: 4)
    assert_equal [1, 3], ControllerLines.seen
    assert_equal 0, Hark.stats[:log_subscriptions][:asked_per_event]
  ensure
    N.notifier = notifier
    Controller.config = ActiveSupport::InheritableOptions.new(ControllerBase.config)
    ControllerBase.config = ActiveSupport::OrderedOptions.new
  end

  # ---------------------------------------------------------------------------------
  # configurable.rb (8.1 deprecates it: loading it warns)

  def test_configurable_is_not_loaded_by_hark_and_hooked_once_loaded
    assert_child(<<~RUBY)
      require "hark/rails"
      #{CHILD_SUBSCRIBER}
      loaded = $LOADED_FEATURES.any? { |f| f.end_with?("active_support/configurable.rb") }
      check "hark/rails did not load ActiveSupport::Configurable", !loaded && ActiveSupport.autoload?(:Configurable)
      require "active_support/configurable" # as ActionController 7.2 and 8.0 do, later
      class Mailer # ActionMailer::Base's shape
        include ActiveSupport::Configurable
        config_accessor :logger
      end
      io = StringIO.new
      class MailerLines < Lines
        private def logger = Mailer.logger
      end
      MailerLines.attach_to(:mailer)
      check "config_accessor loaded later is followed: \#{entry_for("sql.mailer")[:why].inspect}", entry_for("sql.mailer")[:cached]
      Mailer.logger = ActiveSupport::Logger.new(io, level: Logger::DEBUG, formatter: LINE)
      ActiveSupport::Notifications.instrument("sql.mailer", n: 1)
      check "its write is heard", io.string == "SQL 1\\n"
      puts "child done"
    RUBY
  end

  # ---------------------------------------------------------------------------------
  # structured_event_subscriber.rb and event_reporter.rb (8.1)

  # Rails 8.1's shapes, cut to what silenced? reads: an event reporter whose subscribers
  # and debug mode (per fiber inside with_debug; Rails keeps it in Fiber storage, which
  # Ruby 3.1 lacks, so a fiber-local here) decide whether a structured event subscriber's
  # debug-only events are silenced. Written where hark recognises Rails' own file.
  STRUCTURED_8_1 = <<~'RUBY'
    require "active_support/subscriber"
    module ActiveSupport
      class EventReporter
        attr_writer :debug_mode
        attr_reader :subscribers

        def initialize
          @subscribers = []
          @debug_mode = false
        end

        def subscribe(subscriber, &filter)
          @subscribers << { subscriber: subscriber, filter: filter }
        end

        def unsubscribe(subscriber)
          @subscribers.delete_if { |s| subscriber === s[:subscriber] }
        end

        def with_debug
          prior = Thread.current[:event_reporter_debug_mode]
          Thread.current[:event_reporter_debug_mode] = true
          yield
        ensure
          Thread.current[:event_reporter_debug_mode] = prior
        end

        def debug_mode?
          @debug_mode || Thread.current[:event_reporter_debug_mode]
        end

        def notify(name, payload = nil)
          @subscribers.each { |s| s[:subscriber].emit(name: name, payload: payload) }
        end
        alias_method :debug, :notify
      end

      singleton_class.attr_accessor :event_reporter
      self.event_reporter = EventReporter.new

      class StructuredEventSubscriber < Subscriber
        class_attribute :debug_methods, instance_accessor: false, default: []
        DEBUG_CHECK = proc { !ActiveSupport.event_reporter.debug_mode? }

        class << self
          def attach_to(...)
            result = super
            set_silenced_events
            result
          end

          private
            def set_silenced_events
              subscriber&.silenced_events = debug_methods.to_h { |m| ["#{m}.#{namespace}", DEBUG_CHECK] }
            end

            def debug_only(method)
              debug_methods << method
              set_silenced_events
            end
        end

        def initialize
          super
          @silenced_events = {}
        end

        def silenced?(event)
          ActiveSupport.event_reporter.subscribers.none? || @silenced_events[event]&.call
        end

        attr_writer :silenced_events

        def emit_event(name, payload = nil) = ActiveSupport.event_reporter.notify(name, payload)
        def emit_debug_event(name, payload = nil) = ActiveSupport.event_reporter.debug(name, payload)
      end
    end
  RUBY

  def test_structured_event_subscriber_silenced_reads_an_event_reporter
    Dir.mktmpdir("hark-structured") do |dir|
      FileUtils.mkdir_p(File.join(dir, "active_support"))
      File.write(File.join(dir, "active_support", "structured_event_subscriber.rb"), STRUCTURED_8_1)
      assert_child(<<~RUBY)
        $LOAD_PATH.unshift(#{dir.inspect})
        require "hark/rails"
        #{CHILD_SUBSCRIBER}
        require "active_support/structured_event_subscriber"
        class ShapeEvents < ActiveSupport::StructuredEventSubscriber
          def sql(event) = emit_debug_event("shape.sql", n: event.payload[:n])
          debug_only :sql
          def process(event) = emit_event("shape.process", n: event.payload[:n])
        end
        ShapeEvents.attach_to(:shape) # silenced_events set after subscribing, as Rails does
        class Sink
          attr_reader :seen
          def initialize = @seen = []
          def emit(event) = @seen << [event[:name], event[:payload][:n]]
        end
        N = ActiveSupport::Notifications
        def cached?(event) = entry_for(event)[:cached]
        def fire(n) = %w[sql.shape process.shape].each { |e| N.instrument(e, n: n) }
        check "no reporter subscribers: both cached and silenced",
              cached?("sql.shape") && cached?("process.shape") && entry_for("sql.shape")[:silenced] && entry_for("process.shape")[:silenced]
        fire(0)
        sink = Sink.new
        ActiveSupport.event_reporter.subscribe(sink)
        check "a reporter subscriber: the plain event cached, open", cached?("process.shape") && !entry_for("process.shape")[:silenced]
        check "the debug-only one asked per event, saying why",
              !cached?("sql.shape") && entry_for("sql.shape")[:why].include?("sql.shape is debug-only")
        fire(1)
        ActiveSupport.event_reporter.with_debug { fire(2) }
        ActiveSupport.event_reporter.debug_mode = true
        check "debug mode: the debug-only one cached again, open", cached?("sql.shape") && !entry_for("sql.shape")[:silenced]
        fire(3)
        ActiveSupport.event_reporter.debug_mode = false
        ActiveSupport.event_reporter.unsubscribe(sink)
        check "no subscriber again: cached, silenced", cached?("sql.shape") && entry_for("sql.shape")[:silenced]
        fire(4)
        ActiveSupport.event_reporter = ActiveSupport::EventReporter.new
        ActiveSupport.event_reporter.subscribe(sink)
        fire(5)
        check "the plain one not asked per event so far", polls_for("process.shape").zero?
        # The reporter's own array, read and changed in place (as Rails' own tests do):
        # from then on asked per event.
        ActiveSupport.event_reporter.subscribers.clear
        check "asked per event once the array was handed out",
              !cached?("process.shape") && entry_for("process.shape")[:why].include?("subscribers was read outside")
        fire(6)
        ActiveSupport.event_reporter.subscribers << { subscriber: sink }
        fire(7)
        expected = [["shape.process", 1], ["shape.sql", 2], ["shape.process", 2], ["shape.sql", 3],
                    ["shape.process", 3], ["shape.process", 5], ["shape.process", 7]]
        check "delivered as Rails decides: \#{sink.seen.inspect}", sink.seen == expected
        puts "child done"
      RUBY
    end
  end

  # ---------------------------------------------------------------------------------
  # notifications/fanout.rb (main): subscribe(pattern, callable, monotonic:, prepend:)

  class Asked
    def initialize(log, tag)
      @log = log
      @tag = tag
    end

    def call(*) = @log << "call #{@tag}"

    def silenced?(_name)
      @log << "ask #{@tag}"
      false
    end
  end

  def test_fanout_prepended_subscriber
    fanout = N::Fanout.new
    log = []
    fanout.subscribe("p.x", Asked.new(log, "A"))
    fanout.subscribe("p.x", Asked.new(log, "B"))
    # As main's ActiveSupport::Notifications.subscribe passes it on.
    fanout.subscribe("p.x", Asked.new(log, "C"), monotonic: false, prepend: true)
    fanout.subscribe(/p\./, Asked.new(log, "R"))
    fanout.subscribe("p.y", Asked.new(log, "Y"), prepend: true)
    assert_equal %w[C A B R], fanout.all_listeners_for("p.x").map { |s| s.delegate.instance_variable_get(:@tag) }
    fanout.publish("p.x", 1, 2, "id", {})
    assert_equal ["ask C", "ask A", "ask B", "ask R", "call C", "call A", "call B", "call R"], log
    log.clear
    handle = fanout.build_handle("p.x", "id", {})
    handle.start
    handle.finish
    assert_equal ["call C", "call A", "call B", "call R"], log.grep(/call/)
    assert_equal ["ask C", "ask A", "ask B", "ask R"], log.grep(/ask/)

    error = assert_raises(ArgumentError) { fanout.subscribe(/p\./, Asked.new(log, "X"), prepend: true) }
    assert_equal "Cannot prepend Regex subscribers", error.message
    assert_raises(ArgumentError) { fanout.subscribe(nil, Asked.new(log, "X"), prepend: true) }
    assert_equal 4, fanout.all_listeners_for("p.x").size, "a refused prepend subscribes nothing"
  end

  # ---------------------------------------------------------------------------------
  # The gate: hark's fanout only on a proven Rails

  FAKE_8_1 = <<~'RUBY'
    require "active_support"
    def ActiveSupport.gem_version = Gem::Version.new("8.1.3")
  RUBY

  def test_gate_keeps_rails_fanout_on_a_version_not_proven
    out = assert_child(<<~RUBY, env: { "HARK_RAILS_UNTESTED" => nil })
      #{FAKE_8_1}
      require "hark/rails"
      require "hark/rails"
      N = ActiveSupport::Notifications
      raise "hark's fanout installed" if N.notifier.class.ancestors.any? { |a| a.name.to_s.start_with?("Hark::") } || Hark.active?
      raise "not Rails' own fanout" unless N.notifier.class.instance_method(:subscribe).source_location.first.end_with?("active_support/notifications/fanout.rb")
      raise "hark's instrumenter hook installed" if defined?(Hark::InstrumenterHooks)
      raise "hark loaded" if defined?(Hark::Fanout) || defined?(Hark::Silence) || $LOADED_FEATURES.any? { |f| f.include?("hark_ext") }
      raise "hark's method hooks installed" if ::Module.ancestors.any? { |m| m.name.to_s.start_with?("Hark::") }
      stats = Hark.stats
      raise "stats: \#{stats.inspect}" unless stats[:subscriptions] == [] && stats[:log_subscriptions] == { cached: 0, asked_per_event: 0 }
      Hark::RailsGate.decide(ActiveSupport.gem_version) # asked again: no second warning
      seen = []
      N.subscribe("g.x") { |*args| seen << args.first }
      N.instrument("g.x") { }
      raise "Rails' fanout does not deliver" unless seen == ["g.x"]
      puts "status: \#{Hark.fanout_status[:fanout]}: \#{Hark.fanout_status[:why]}"
      puts "stats: \#{Hark.stats[:fanout]}: \#{Hark.stats[:fanout_why]}"
      require "hark/recorder"
      begin
        Hark::Recorder.start
        raise "the recorder started on Rails' fanout"
      rescue ArgumentError => e
        puts "recorder: \#{e.message}"
      end
      puts "child done"
    RUBY
    warnings = out.lines.grep(/\Ahark: /)
    assert_equal 1, warnings.size, out
    assert_includes warnings.first, "Rails 8.1.3"
    assert_includes warnings.first, "HARK_RAILS_UNTESTED=1"
    assert_match(/^status: rails: Rails 8.1.3 is not a version hark's fanout is proven on \(7.2\)/, out)
    assert_match(/^stats: rails: Rails 8.1.3 is not/, out)
    # The exporters' error says why hark's fanout is not there: the gate's reason.
    assert_match(/^recorder: hark: ActiveSupport::Notifications does not deliver through hark's fanout \(Rails 8.1.3 is not a version hark's fanout is proven on \(7.2\): .*set HARK_RAILS_UNTESTED=1 to use hark's\), or give notifier:$/, out)
    refute_match(/^recorder: .*require "hark\/rails" first/, out)
  end

  def test_default_notifier_says_to_require_hark_rails_when_it_is_not
    out = assert_child(<<~RUBY, env: { "HARK_RAILS_UNTESTED" => nil })
      require "active_support/notifications"
      require "hark/recorder"
      begin
        Hark::Recorder.start
      rescue ArgumentError => e
        puts "recorder: \#{e.message}"
      end
      puts "child done"
    RUBY
    assert_match(/^recorder: hark: ActiveSupport::Notifications does not deliver through hark's fanout \(hark\/rails is not loaded: require "hark\/rails" first\), or give notifier:$/, out)
  end

  def test_gate_opt_in_installs_hark_fanout
    out = assert_child(<<~RUBY, env: { "HARK_RAILS_UNTESTED" => "1" })
      #{FAKE_8_1}
      require "hark/rails"
      raise "hark's fanout not installed" unless Hark.active?
      puts "status: \#{Hark.fanout_status[:fanout]}: \#{Hark.fanout_status[:why]}"
      puts "child done"
    RUBY
    refute_match(/^hark: /, out)
    assert_match(/^status: hark: Rails 8.1.3 is not a version hark's fanout is proven on \(7.2\); HARK_RAILS_UNTESTED=1 opted in$/, out)
  end

  def test_gate_on_the_proven_version
    notifier = N.notifier
    skip "Rails #{ActiveSupport.gem_version} is not proven" unless Hark::RailsGate.proven?(ActiveSupport.gem_version)
    assert Hark.active?
    status = Hark.fanout_status
    assert_equal :hark, status[:fanout]
    assert_equal "Rails #{ActiveSupport.gem_version} is a version hark's fanout is proven on", status[:why]
    assert_equal :hark, Hark.stats[:fanout]
    N.notifier = Object.new
    assert_equal :other, Hark.fanout_status[:fanout]
    refute Hark.active?
  ensure
    N.notifier = notifier
  end
end
