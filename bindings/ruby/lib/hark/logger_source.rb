# frozen_string_literal: true

require "hark/method_body"
require "hark/definers"

module Hark
  module Silence
    # Where a log subscriber's `logger` comes from, known by how it was defined. For each
    # source followed, every way Rails offers to change what it returns calls
    # Hark::Silence.changed!, so the cached silenced? answer stays current without asking
    # per event:
    #
    #   ActiveSupport::LogSubscriber.logger / #logger  Rails' own (known by owner and
    #                               source_location); nil means "ask per event", since
    #                               Rails.logger may appear later
    #   a reader made by class_attribute, cattr_*/mattr_*, config_accessor or delegate
    #                               (Definers: recorded when the definer made it)
    #   def logger = CONSTANT (or nil)        read from its definition (MethodBody);
    #                               reassigning the constant is not seen
    #   def logger = Some::Const.reader       the same, where Some::Const.reader is one
    #                               of the above (ActiveRecord, ActionController,
    #                               ActionView, ActiveJob and ActionMailer write theirs
    #                               this way)
    #
    # Anything else (an attr_reader, a method computing its answer, a block over a
    # variable, a reader defined before hark/rails was loaded, ...) is not followed: its
    # subscriptions are asked per event, and `source` says why.
    module LoggerSource
      MAX_DEPTH = 4

      @writer_hooks = {}    # writer name => Module prepended where a class variable is written
      @config_keys = {}     # OrderedOptions keys read by a followed config_accessor
      @class_variables = {} # class variables read by a followed cattr/mattr reader
      @readers = {}         # names of followed class-level readers
      @class_attributes = {} # class_attribute name => the name of its private methods
                             # (Rails 8.0's ActiveSupport::ClassAttribute.redefine)

      class << self
        # [kind, why] for the Method `m`: kind :tracked (every change is heard), :memo
        # (Rails' LogSubscriber.logger, which reads Rails.logger while nil) or nil (not
        # followed, `why` says why).
        def source(m, depth = 0)
          return [nil, "#{describe(m)} goes through more than #{MAX_DEPTH} readers"] if depth > MAX_DEPTH
          return [:memo, nil] if rails_log_subscriber_logger?(m)
          if (reader = Definers.reader(m))
            return defined_reader(m, reader, depth)
          end
          body = MethodBody.of(m)
          case body&.kind
          when :constant, :literal then [:tracked, nil]
          when :reader then follow(m, resolve(m, body.path, body.top), body.reader, depth)
          else [nil, "#{describe(m)} is not a logger reader hark follows"]
          end
        rescue StandardError => e
          [nil, "#{describe(m)} could not be followed (#{e.class})"]
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

        # "Foo#logger (app/foo.rb:3)" or "Foo.logger (...)".
        def describe(m)
          owner = m.owner
          label =
            if owner.singleton_class?
              recv = m.receiver
              "#{recv.is_a?(Module) ? recv.name || recv.inspect : owner.inspect}.#{m.name}"
            else
              "#{owner.name || owner.inspect}##{m.name}"
            end
          file, line = m.source_location
          file ? "#{label} (#{file}:#{line})" : label
        end

        # ActiveSupport::ClassAttribute.redefine(owner, name, namespaced_name, value) ran
        # (Rails 8.0 and later: a class_attribute defined, or first written on a subclass).
        def class_attribute_redefined(owner, name, namespaced_name) # :nodoc:
          name = name.to_sym
          @class_attributes[name] = namespaced_name.to_sym
          return unless reader?(name)
          # A subclass's first write: its own writer, from now on, takes its later ones.
          hook_class_attribute_writers(owner, name)
          Silence.changed!
        end

        private

        def defined_reader(m, reader, depth)
          case reader.kind
          when :class_attribute
            # Rails 7.2: every write defines the reader again, which Silence's hooks hear.
            # Rails 8.0 and later: writes go through a private writer, hooked here.
            watch_reader(reader.name)
            hook_class_attribute_writers(m.receiver, reader.name)
            [:tracked, nil]
          when :class_variable then class_variable(reader)
          when :config then config(m, reader)
          when :delegate
            target = reader.target
            return delegated_to_reader(m, reader, depth) if method_name?(target)
            mod = target.is_a?(Module) ? target : resolve_name(reader.holder, target.to_s)
            return [nil, "#{describe(m)} delegates to #{target}, not a loaded class or module"] unless mod
            follow(m, mod, reader.target_method, depth)
          end
        end

        # cattr_accessor / mattr_accessor: the reader returns @@name. Its writers (on the
        # module, and on its instances unless instance_writer: false) get a hook.
        def class_variable(reader)
          holder = reader.holder
          hook = writer_hook(:"#{reader.name}=")
          [holder.singleton_class, holder].each do |target|
            next unless target.method_defined?(:"#{reader.name}=") || target.private_method_defined?(:"#{reader.name}=")
            target.prepend(hook) unless target.ancestors.include?(hook)
          end
          @class_variables[:"@@#{reader.name}"] = true
          watch_reader(reader.name)
          [:tracked, nil]
        end

        # The private writers ActiveSupport::ClassAttribute.redefine made for `name` on the
        # singleton classes `recv`'s value is read through (its own, then its ancestors'),
        # each with a hook in front: a write to any of them changes what `recv` reads.
        def hook_class_attribute_writers(recv, name)
          namespaced = @class_attributes[name.to_sym]
          return unless namespaced && recv.is_a?(Module)
          writer = :"#{namespaced}="
          recv.singleton_class.ancestors.each do |klass|
            break if klass.equal?(::Class) # past the singleton classes
            next unless klass.singleton_class? # a module extended or prepended (ActiveRecord::Base has some)
            private = klass.private_method_defined?(writer, false)
            next unless private || klass.method_defined?(writer, false)
            hook = writer_hook(writer, private: private)
            # Already in front of this class's own writer (prepended to it, not to a
            # superclass).
            next if klass.ancestors.take_while { |a| !a.equal?(klass) }.include?(hook)
            klass.prepend(hook)
          end
        end

        def method_name?(target)
          (target.is_a?(Symbol) || target.is_a?(String)) && /\A[a-z_]\w*\z/.match?(target.to_s)
        end

        # delegate :logger, to: :config (Rails 8.1's AbstractController::Logger): the
        # method returns config.logger, where `config` is a reader of the receiver's that
        # is followed (a class_attribute) and returns an ActiveSupport::OrderedOptions
        # whose `logger` is its own entry (read through Rails' method_missing, or a
        # reader Configurable compiled): a change of the entry is heard by the
        # OrderedOptions hooks, a new config by the reader's.
        def delegated_to_reader(m, reader, depth)
          recv = m.receiver
          via = recv.method(reader.target)
          kind, why = source(via, depth + 1)
          return [nil, why] unless kind
          options = via.call
          unless defined?(::ActiveSupport::OrderedOptions) && ::ActiveSupport::OrderedOptions === options
            return [nil, "#{describe(m)} delegates to #{describe(via)}, which returns a #{options.class}, not an ActiveSupport::OrderedOptions"]
          end
          key = reader.target_method
          unless rails_options_entry?(options, key)
            return [nil, "#{describe(m)} reads #{options.class}##{key}, which is not an entry of the options"]
          end
          @config_keys[key] = true
          watch_reader(reader.target)
          watch_reader(reader.name)
          return [kind, nil] if m.call.equal?(options[key])
          [nil, "#{describe(m)} does not return #{describe(via)}[#{key.inspect}]"]
        end

        # Whether options.key reads the entry: through OrderedOptions#method_missing, or
        # a reader ActiveSupport::Configurable::Configuration compiled (_get(key)).
        def rails_options_entry?(options, key)
          return false unless options.method(:[]).owner == ::ActiveSupport::OrderedOptions
          return options.method(:method_missing).owner == ::ActiveSupport::OrderedOptions unless options.class.method_defined?(key)
          owner = options.method(key).owner
          Definers.loaded?(::ActiveSupport, :Configurable) && owner == ::ActiveSupport::Configurable::Configuration
        end

        # A module whose `writer` calls the one behind it, then Silence.changed! (private
        # when the writer it goes in front of is: ClassAttribute.redefine's are).
        def writer_hook(writer, private: false)
          @writer_hooks[[writer, private]] ||= Silence.hook_module(Module.new do
            define_method(writer) do |value|
              super(value).tap { Hark::Silence.changed! }
            end
            private(writer) if private
          end)
        end

        # ActiveSupport::Configurable's config_accessor: the reader returns config.name.
        def config(m, reader)
          recv = m.receiver
          unless recv.method(:config).owner == ::ActiveSupport::Configurable::ClassMethods &&
                 ::ActiveSupport::OrderedOptions === recv.config
            return [nil, "#{describe(m)} reads a config that is not ActiveSupport::Configurable's"]
          end
          @config_keys[reader.name] = true
          watch_reader(reader.name)
          [:tracked, nil]
        end

        # `m` returns mod.reader: followed when that is.
        def follow(m, mod, reader, depth)
          return [nil, "#{describe(m)} names a constant that is not loaded (or not a module)"] unless mod
          target = mod.method(reader)
          unless target.arity.zero? || target.arity == -1
            return [nil, "#{describe(m)} calls #{describe(target)}, which takes arguments"]
          end
          kind, why = source(target, depth + 1)
          return [nil, why] unless kind
          watch_reader(reader)
          # The constant resolved here must be the one the method reads.
          return [kind, nil] if m.call.equal?(target.call)
          [nil, "#{describe(m)} does not return what #{describe(target)} returns"]
        end

        # A constant path written in the method's body, as seen from its owner; nil if any
        # part is not loaded yet (an autoload is never triggered from here).
        def resolve(m, names, top)
          scope = top ? Object : lexical_scope(m.owner, names.first)
          walk_path(scope, names)
        end

        # A delegate target's name ("X::Y" or "::X::Y"), as the generated method, compiled
        # in the owner, finds it.
        def resolve_name(owner, name)
          return nil unless /\A(::)?[A-Z]\w*(::[A-Z]\w*)*\z/.match?(name)
          top = name.start_with?("::")
          names = name.delete_prefix("::").split("::")
          walk_path(top ? Object : owner, names)
        end

        def walk_path(scope, names)
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
          @readers[name.to_sym] = true
        end
      end
    end
  end
end
