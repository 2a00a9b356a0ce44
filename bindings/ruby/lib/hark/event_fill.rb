# frozen_string_literal: true

module Hark
  # The instance variables of a finished event object, set in the order Rails' Event
  # sets them, for an event class that includes this module (Hark::Event, and Rails'
  # Event under hark/rails): a Ruby method's instance-variable writes are cached per
  # class, where C's rb_ivar_set looks every name up (~1,000 instructions for the call
  # and all eleven, against ~3,000).
  #
  # The extension allocates the object when the event starts, before it reads the
  # starting figures (as Rails makes its Event before start!), and calls this when it
  # finishes with gc_finish nil: GC.total_time is read here, as Rails' finish! reads it
  # (one call into Ruby fewer per event than reading it from C). Any other event class
  # is built once the event has finished, with rb_ivar_set.
  module EventFill # :nodoc:
    private

    def _hark_fill(name, payload, time, transaction_id, ending, cpu_start, cpu_finish,
                   allocations_start, allocations_finish, gc_start, gc_finish)
      gc_finish ||= GC.total_time # first: setting what follows may allocate
      @name = name
      @payload = payload
      @time = time
      @transaction_id = transaction_id
      @end = ending
      @cpu_time_start = cpu_start
      @cpu_time_finish = cpu_finish
      @allocation_count_start = allocations_start
      @allocation_count_finish = allocations_finish
      @gc_time_start = gc_start
      @gc_time_finish = gc_finish
      self
    end
  end
end
