# frozen_string_literal: true

# Loaded with hark/rails before one of Rails' own test files: after the run, proves
# that the fanout under test was hark's (so a loading mistake cannot pass silently).
require "minitest"

Minitest.after_run do
  fanout = ActiveSupport::Notifications::Fanout
  notifier = ActiveSupport::Notifications.notifier
  ok = fanout <= Hark::Fanout && notifier.is_a?(Hark::Fanout)
  line = "HARK-PROOF #{ok ? 'ok' : 'FAILED'}: Fanout=#{fanout} < #{fanout.superclass}, " \
         "notifier=#{notifier.class}, events through hark=#{Hark.handles_built}"
  puts line
  $stdout.flush
  exit!(1) unless ok
end
