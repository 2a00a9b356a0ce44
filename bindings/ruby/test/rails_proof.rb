# frozen_string_literal: true

# Loaded with hark/rails before one of Rails' own test files: after the run, proves
# that the fanout under test was hark's (so a loading mistake cannot pass silently).
#
#   HARK_PROOF_FROM=DIR    hark's extension must have been loaded from under DIR
#                          (the installed gem, for the gem check)
#   HARK_PROOF_NOT_IN=DIR  no entry of the load path, and nothing of hark's that was
#                          loaded, may be under DIR (the repository, for the gem check)
require "minitest"

Minitest.after_run do
  fanout = ActiveSupport::Notifications::Fanout
  notifier = ActiveSupport::Notifications.notifier
  ext = $LOADED_FEATURES.grep(%r{/hark/hark_ext\.(so|bundle)\z}).first
  ok = fanout <= Hark::Fanout && notifier.is_a?(Hark::Fanout)
  problems = []
  if (from = ENV["HARK_PROOF_FROM"]) && !(ext && File.expand_path(ext).start_with?(File.expand_path(from) + "/"))
    problems << "extension not from #{from}"
  end
  if (outside = ENV["HARK_PROOF_NOT_IN"])
    prefix = File.expand_path(outside) + "/"
    paths = $LOAD_PATH.map { |p| File.expand_path(p.to_s) }.select { |p| (p + "/").start_with?(prefix) }
    mine = $LOADED_FEATURES.grep(%r{/hark(\.rb|/)}).select { |f| File.expand_path(f).start_with?(prefix) }
    problems << "load path has #{paths.join(', ')}" unless paths.empty?
    problems << "loaded #{mine.join(', ')}" unless mine.empty?
  end
  ok &&= problems.empty?
  line = "HARK-PROOF #{ok ? 'ok' : 'FAILED'}: Fanout=#{fanout} < #{fanout.superclass}, " \
         "notifier=#{notifier.class}, events through hark=#{Hark.handles_built}, extension=#{ext}"
  line << " (#{problems.join('; ')})" unless problems.empty?
  puts line
  $stdout.flush
  exit!(1) unless ok
end
