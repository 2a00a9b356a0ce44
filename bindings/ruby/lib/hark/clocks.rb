# frozen_string_literal: true

module Hark
  # Whether Time.now is Ruby's own. Timed subscribers get Time.now at start and finish,
  # as Rails reads it; while it is Ruby's own the extension reads the same clock itself
  # (a call of Time.now from C costs several thousand instructions), and it calls
  # Time.now, as Rails does, once it is redefined or stubbed (travel_to, Time.stub, a
  # module prepended to Time's singleton class).
  module Clocks
    class << self
      # Defined by Ruby itself: on the singleton class, in C or in Ruby's own prelude
      # (<internal:timev>), not in a file.
      def own?(mod, name)
        m = mod.method(name)
        return false unless m.owner.equal?(mod.singleton_class)
        file = m.source_location&.first
        file.nil? || file.start_with?("<internal:")
      rescue NameError
        false
      end
    end

    MethodWatch.on(:now) { Hark._set_own_time_now(own?(::Time, :now)) }
  end
end
