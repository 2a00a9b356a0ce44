# frozen_string_literal: true

# The preamble of the extension's tests that need ActiveSupport: loads its
# notifications, the `extra` files named, and hark/rails, and answers true; or, when
# ActiveSupport is not on the load path (make ruby-test adds Rails 7.2's), warns that
# `test` is skipped and answers false. A test file returns at its top when it is false.
def hark_test_load_rails(test, *extra)
  require "active_support"
  require "active_support/notifications"
  extra.each { |file| require file }
  require "hark/rails"
  true
rescue LoadError
  warn "#{test}: ActiveSupport not on the load path, skipped"
  false
end
