# frozen_string_literal: true

module Hark
  module Silence
    # Class-level readers as ActiveSupport's definers make them, recorded when they make
    # them: hark/rails puts a hook in front of each definer (the extension's definer.c),
    # so that hark knows what a log subscriber's `logger` reads, and what changes it, by
    # how it was defined:
    #
    #   class_attribute :logger    the reader returns the last value written; every
    #                              write defines it again (heard as a definition)
    #   mattr_reader / cattr_reader (and the *_accessor forms) :logger
    #                              the reader returns @@logger; LoggerSource hooks
    #                              the writers
    #   config_accessor :logger    the reader returns config.logger (ActiveSupport::
    #                              Configurable's OrderedOptions, whose writers are
    #                              hooked)
    #   delegate :logger, to: X    the method returns X.logger, X a constant, or the
    #                              object a followed reader named X returns (Rails 8.1's
    #                              controllers: `to: :config`, an OrderedOptions)
    #
    # A method is such a reader when its name, its source_location (the definer's caller
    # line, or configurable.rb's for config_accessor) and its owner are those recorded:
    # a method defined again anywhere else is not the definer's any more. Readers made
    # before hark/rails was loaded are not known (load it from config/boot.rb).
    module Definers
      Reader = Struct.new(:kind, :holder, :name, :target, :target_method)

      # Definer => kind of reader it makes.
      KINDS = {
        class_attribute: :class_attribute,
        mattr_reader: :class_variable,
        cattr_reader: :class_variable,
        config_accessor: :config,
        delegate: :delegate
      }.freeze

      @readers = {} # [name, source_location] => [Reader, ...]
      @mutex = Mutex.new
      @installed = false

      class << self
        # Puts the hooks in front of the definers ActiveSupport has loaded (hark/rails
        # loads them first): once.
        def install
          return if @installed
          @installed = true
          hook(::Class, %i[class_attribute])
          hook(::Module, %i[mattr_reader cattr_reader delegate])
          configurable_loaded
        end

        # ActiveSupport::Configurable's config_accessor gets its hook once something has
        # loaded it (hark never loads it: Rails 8.1 warns when it is). Called at install
        # and whenever a module is included, prepended or extended anywhere (cheap: a
        # constant check until it is loaded, nothing after), so the hook is in place
        # before the first class that includes it calls config_accessor.
        def configurable_loaded
          return if @configurable || !@installed || !Definers.loaded?(::ActiveSupport, :Configurable)
          # (Not while configurable.rb is still being loaded.)
          return unless Definers.loaded?(::ActiveSupport::Configurable, :ClassMethods)
          methods = ::ActiveSupport::Configurable::ClassMethods
          return unless methods.private_method_defined?(:config_accessor) || methods.method_defined?(:config_accessor)
          @configurable = true
          hook(::ActiveSupport::Configurable::ClassMethods, %i[config_accessor])
        end

        # Called by the hook after `definer` ran on `mod` with `args` (the keywords, if
        # any, last): records the readers it made. Never raises into the definer's caller.
        def defined(definer, mod, args, _result)
          kind = KINDS[definer]
          return unless kind && mod.is_a?(Module)
          args = args.dup
          options = args.last.is_a?(Hash) ? args.pop : {}
          kind == :delegate ? delegated(mod, args, options) : class_level(kind, mod, args)
          nil
        rescue StandardError
          nil
        end

        # Whether mod::name is defined and loaded (without triggering its autoload, as
        # defined?(mod::name::Other) would).
        def loaded?(mod, name)
          !mod.autoload?(name) && mod.const_defined?(name, false)
        end

        # The Reader that Method `m` is, or nil.
        def reader(m)
          location = m.source_location
          return nil unless location
          list = @mutex.synchronize { @readers[[m.original_name, location]] }
          return nil unless list
          if m.owner.singleton_class?
            attached = attached_of(m)
            return nil unless attached
            list.find do |r|
              # singleton_class.delegate :logger, to: :config (Rails 8.1's controllers)
              next m.owner.equal?(r.holder) if r.kind == :delegate
              r.kind == :class_attribute ? attached <= r.holder : attached.equal?(r.holder)
            end
          else
            list.find { |r| r.kind == :delegate && m.owner.equal?(r.holder) }
          end
        rescue StandardError
          nil
        end

        private

        def hook(target, names)
          hooks = Module.new
          Silence.hook_module(hooks)
          Hark._hook_definers(hooks, self, names.map(&:to_s))
          # As callable as the definer itself (config_accessor is private).
          names.each do |name|
            if target.private_method_defined?(name)
              hooks.send(:private, name)
            elsif target.protected_method_defined?(name)
              hooks.send(:protected, name)
            end
          end
          target.prepend(hooks)
        end

        def class_level(kind, mod, names)
          names.each do |name|
            next unless name.is_a?(Symbol) || name.is_a?(String)
            location = mod.singleton_class.instance_method(name).source_location
            record(location, Reader.new(kind, mod, name.to_sym)) if location
          end
        end

        # delegate :a, :b, to: X, prefix: ...: `prefix_a` returns X.a.
        def delegated(mod, methods, options)
          to = options[:to]
          return unless to
          prefix = options[:prefix]
          methods.each do |method|
            next if method.to_s.end_with?("=")
            name = prefix ? :"#{prefix == true ? to : prefix}_#{method}" : method.to_sym
            location = mod.instance_method(name).source_location
            record(location, Reader.new(:delegate, mod, name, to, method.to_sym)) if location
          end
        end

        def record(location, reader)
          @mutex.synchronize { (@readers[[reader.name, location]] ||= []) << reader }
        end

        # The module whose singleton class defines the class-level reader `m`.
        def attached_of(m)
          recv = m.receiver
          return nil unless recv.is_a?(Module)
          return recv if recv.singleton_class == m.owner
          recv.ancestors.find { |a| a.singleton_class == m.owner }
        end
      end
    end
  end
end
