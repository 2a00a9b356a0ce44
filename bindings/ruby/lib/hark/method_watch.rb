# frozen_string_literal: true

module Hark
  # Code of hark's that must hear when a method of a given name is (re)defined, removed
  # or undefined anywhere, or a module defining one is included, prepended or extended:
  # the hooks of hark/silence.rb report every such change to Hark::Silence, and this
  # passes those about the names watched on to their watchers. (Rare events: nothing on
  # an instrument path.)
  module MethodWatch
    @watchers = Hash.new { |h, k| h[k] = [] }

    class << self
      # Calls the block now and whenever a method named one of `names` may have changed.
      def on(*names, &block)
        names.each { |name| @watchers[name] << block }
        block.call
      end

      def method_changed(name) # :nodoc:
        @watchers.fetch(name, nil)&.each(&:call)
      end

      def module_changed(mod) # :nodoc:
        defined = @watchers.select { |name, _| mod.method_defined?(name) || mod.private_method_defined?(name) }
        defined.values.flatten.uniq.each(&:call)
      end
    end

    # In front of Hark::Silence's two reports.
    module Hook # :nodoc:
      def method_changed(name)
        super
        MethodWatch.method_changed(name)
      end

      def module_changed(mod)
        super
        MethodWatch.module_changed(mod)
      end
    end
  end

  Silence.singleton_class.prepend(MethodWatch::Hook)
end
