# frozen_string_literal: true

module Hark
  # The instance variables of a finished event object, set in the order Rails' Event
  # sets them. The extension allocates the object (one per event, for all its
  # event-object subscribers) and calls this on it when its class includes this module
  # (Hark::Event, and Rails' Event under hark/rails): a Ruby method's instance-variable
  # writes are cached per class, where C's rb_ivar_set looks every name up (~1,000
  # instructions for the call and all eleven, against ~3,000). Any other event class
  # gets them from rb_ivar_set.
  #
  # A gc_finish of nil is read here, as Rails' Event#finish! reads it: GC.total_time,
  # once the extension has read the event's other finishing figures (one call into
  # Ruby fewer per event than reading it from C).
  module EventFill # :nodoc:
    private

    def _hark_fill(name, payload, time, transaction_id, ending, cpu_start, cpu_finish,
                   allocations_start, allocations_finish, gc_start, gc_finish)
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
      @gc_time_finish = gc_finish || GC.total_time
      self
    end
  end
end
