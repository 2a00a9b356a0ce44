# frozen_string_literal: true

module Hark
  module Silence
    # Which shapes of a log subscriber's `logger` method hark can follow: for each, every
    # way Rails offers to change what it returns calls Hark::Silence.changed!, so the
    # cached silenced? answer stays current without asking per event.
    #
    #   def logger = CONSTANT or a literal               (reassigning the constant is not seen)
    #   class_attribute :logger     the class-level reader; every write redefines it
    #                               (singleton_method_added)
    #   cattr_accessor / mattr_accessor :logger
    #                               the class-variable reader; the writers (class and
    #                               instance) are hooked, and Module#class_variable_set
    #   config_accessor :logger     (ActiveSupport::Configurable) config.logger; the
    #                               OrderedOptions writers are hooked
    #   ActiveSupport::LogSubscriber.logger  (Rails' own; nil means "ask per event",
    #                               since Rails.logger may appear later)
    #   def logger = Some::Const.logger     where Some::Const.logger is one of the above
    #                               (ActiveRecord, ActionController, ActionView,
    #                               ActiveJob and ActionMailer log subscribers), also
    #                               through `delegate :logger, to: Some::Const`
    #
    # Anything else (an attr_reader, a method computing its answer, a block over a
    # variable, ...) is not followed: its subscriptions are asked per event.
    module LoggerSource
      # Instructions of a constant path (Ruby 3.1: an inline cache around getconstant;
      # later Rubies: opt_getconstant_path).
      PATH_INSNS = %i[opt_getinlinecache getconstant opt_setinlinecache opt_getconstant_path putobject pop].freeze
      # What Rails' Module#delegate adds around the call for a constant target.
      DELEGATE_INSNS = %i[setlocal_WC_0 getlocal_WC_0 splatarray getblockparamproxy send nop].freeze
      MAX_DEPTH = 4

      @writer_hooks = {}  # writer name => Module prepended where a class variable is written
      @config_keys = {}   # OrderedOptions keys read by a followed config_accessor
      @class_variables = {} # class variables read by a followed cattr/mattr reader
      @readers = {}       # names of followed class_attribute readers

      class << self
        # :tracked (every change is heard), :memo (Rails' LogSubscriber.logger, which
        # reads Rails.logger while nil) or nil (not followed) for the Method `m`.
        def source(m, depth = 0)
          return nil if depth > MAX_DEPTH
          return :memo if rails_log_subscriber_logger?(m)
          iseq = RubyVM::InstructionSequence.of(m)
          return nil unless iseq
          data = iseq.to_a
          body = data.last.grep(Array)
          names = body.map(&:first) - [:nop]
          return :tracked if constant?(names)
          return class_attribute(m, data, names) if data[9] == :block
          return class_variable(m, body) if names == %i[getclassvariable leave]
          return config(m, body) if config_shape?(body)
          delegation(m, body, depth)
        rescue StandardError
          nil
        end

        # Whether `name` is something hark watches the (re)definition of.
        def reader?(name)
          @readers.key?(name)
        end

        def readers
          @readers.keys
        end

        def config_key?(key)
          @config_keys.key?(key)
        end

        def class_variable?(name)
          @class_variables.key?(name)
        end

        # Rails' ActiveSupport::LogSubscriber#logger or .logger, not redefined.
        def rails_log_subscriber_logger?(m)
          return false unless defined?(::ActiveSupport::LogSubscriber)
          owner = m.owner
          if owner == ::ActiveSupport::LogSubscriber.singleton_class
            file = m.source_location&.first
            return file&.end_with?("active_support/log_subscriber.rb") ? true : false
          end
          return false unless owner == ::ActiveSupport::LogSubscriber
          rails_log_subscriber_logger?(::ActiveSupport::LogSubscriber.method(:logger))
        end

        private

        def constant?(names)
          !names.empty? && (names - Silence::CONSTANT_INSNS).empty?
        end

        # class_attribute's writer defines the reader as a block returning its argument:
        # every write is a new definition, which Silence's singleton_method_added hears.
        def class_attribute(m, data, names)
          return nil unless names == %i[getlocal_WC_1 leave] && data[5] == "block in #{m.name}="
          watch_reader(m.name)
          :tracked
        end

        # cattr_accessor / mattr_accessor: `def self.x = @@x`. Its writers (on the
        # module, and on its instances unless instance_writer: false) get a hook.
        def class_variable(m, body)
          cvar = body.first[1]
          name = cvar.to_s.delete_prefix("@@")
          holder = definer(m)
          return nil unless holder
          hook = writer_hook(:"#{name}=")
          [holder.singleton_class, holder].each do |target|
            next unless target.method_defined?(:"#{name}=") || target.private_method_defined?(:"#{name}=")
            target.prepend(hook) unless target.ancestors.include?(hook)
          end
          @class_variables[cvar] = true
          :tracked
        end

        # The module whose class-level reader `m` is.
        def definer(m)
          recv = m.receiver
          return recv if recv.singleton_class == m.owner
          return nil unless recv.is_a?(Module)
          recv.ancestors.find { |a| a.singleton_class == m.owner }
        end

        def writer_hook(writer)
          @writer_hooks[writer] ||= Silence.hook_module(Module.new do
            define_method(writer) do |value|
              super(value).tap { Hark::Silence.changed! }
            end
          end)
        end

        # ActiveSupport::Configurable's config_accessor: `def self.x = config.x`.
        def config_shape?(body)
          body.size == 4 && body[0] == [:putself] && body[3] == [:leave] &&
            body[1][0] == :opt_send_without_block && body[1][1][:mid] == :config && body[1][1][:orig_argc] == 0 &&
            body[2][0] == :opt_send_without_block && body[2][1][:orig_argc] == 0
        end

        def config(m, body)
          return nil unless defined?(::ActiveSupport::Configurable) && defined?(::ActiveSupport::OrderedOptions)
          key = body[2][1][:mid]
          recv = m.receiver
          return nil unless recv.method(:config).owner == ::ActiveSupport::Configurable::ClassMethods
          return nil unless ::ActiveSupport::OrderedOptions === recv.config
          @config_keys[key] = true
          :tracked
        end

        # def logger = Some::Const.reader, or Rails' `delegate :logger, to: Some::Const`.
        def delegation(m, body, depth)
          path = body.take_while { |i| PATH_INSNS.include?(i[0]) }
          rest = body.drop(path.size)
          return nil if path.empty?
          call = rest.find { |i| i[0] == :opt_send_without_block || i[0] == :send }
          return nil unless call
          shape = rest.map(&:first) - [:nop]
          direct = shape == %i[opt_send_without_block leave] && call[1][:orig_argc] == 0
          delegated = shape.last == :leave && (shape[0...-1] - DELEGATE_INSNS).empty? && shape.count(:send) == 1 &&
                      call[0] == :send && m.arity < 0
          return nil unless direct || delegated
          recv = resolve(m, path)
          return nil if recv.nil?
          target = recv.method(call[1][:mid])
          return nil unless target.arity.zero? || target.arity == -1
          kind = source(target, depth + 1)
          return nil unless kind
          watch_reader(call[1][:mid])
          # The constant resolved here must be the one the method reads.
          m.call.equal?(target.call) ? kind : nil
        end

        # The module a constant path names, as seen from the method's owner; nil if any
        # part is not loaded yet (an autoload is never triggered from here).
        def resolve(m, path)
          names = path.select { |i| i[0] == :getconstant }.map { |i| i[1] }
          if (full = path.find { |i| i[0] == :opt_getconstant_path })
            names = full[1].dup
            top = names.first == :""
            names.shift if top
          else
            top = path.any? { |i| i[0] == :putobject && i[1] == Object }
          end
          return nil if names.empty?
          scope = top ? Object : lexical_scope(m.owner, names.first)
          return nil unless scope
          names.each do |n|
            return nil if scope.autoload?(n) || !scope.const_defined?(n)
            scope = scope.const_get(n)
            return nil unless scope.is_a?(Module)
          end
          scope
        end

        # The innermost enclosing namespace of `owner` (by name) that defines `first`.
        def lexical_scope(owner, first)
          owner = owner.superclass if owner.singleton_class? && owner.respond_to?(:superclass) && owner.name.nil?
          parts = owner.name.to_s.split("::")
          until parts.empty?
            mod = Object.const_get(parts.join("::")) rescue nil
            return mod if mod.is_a?(Module) && mod.const_defined?(first, false)
            parts.pop
          end
          Object if Object.const_defined?(first)
        end

        def watch_reader(name)
          @readers[name] = true
        end
      end
    end
  end
end
