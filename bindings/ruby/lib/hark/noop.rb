# frozen_string_literal: true

require "hark/method_body"

module Hark
  # Evented subscribers whose start or finish does nothing: ActiveRecord's
  # ExplainSubscriber#start, called on every sql.active_record, is `def start(name, id,
  # payload); end`. hark leaves such a call out (the outcome is the same: nil, nothing
  # changed) and asks again whenever a start or finish is defined, removed or brought
  # in by a module anywhere (the hooks of hark/silence.rb call Noop.changed!).
  module Noop
    NAMES = %i[start finish].freeze

    class << self
      # Whether obj.name(name, id, payload), as Rails calls it, runs a public Ruby
      # method defined with `def` and an empty body (read from its definition, see
      # Hark::MethodBody): any other kind of method (C, attr, method_missing, a block,
      # one taking keywords or more arguments, private) is called as usual.
      def method?(obj, name)
        m = obj.public_method(name)
        kinds = m.parameters.map(&:first)
        return false unless (kinds - %i[req rest block]).empty?
        req = kinds.count(:req)
        return false unless req == 3 || (req < 3 && kinds.include?(:rest))
        body = MethodBody.of(m)
        body ? body.kind == :empty && !body.block : false
      rescue StandardError
        false
      end

      # A start or finish may have been (re)defined: every evented subscription asks again.
      def changed!
        Silence.each_fanout do |fanout|
          fanout._evented_subscriptions.each(&:refresh_noop)
        end
        nil
      end
    end
  end
end
