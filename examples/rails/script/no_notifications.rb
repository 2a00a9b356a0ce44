# frozen_string_literal: true

# The floor a fanout is measured against: no notification at all, every `instrument`
# only runs its block (its payload still built by the caller, as with any fanout).
# Required after Rails is loaded by script/request_cost.rb (side "floor") and by
# make bench's ActiveRecord rows (bench/ar_bench.rb, NOOP=1).
module ActiveSupport
  module Notifications
    def self.instrument(_name, payload = {})
      yield payload if block_given?
    end

    class Instrumenter
      def instrument(_name, payload = {})
        yield payload if block_given?
      end
    end
  end
end
