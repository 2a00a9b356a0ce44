# frozen_string_literal: true

Gem::Specification.new do |s|
  s.name        = "hark"
  s.version     = "0.1.0"
  s.summary     = "hark's C fanout behind ActiveSupport::Notifications"
  s.description = "Hark::Fanout, a drop-in for ActiveSupport::Notifications::Fanout whose " \
                  "registry, listener snapshots, grouping and log-subscriber silence are " \
                  "the hark C library's. require \"hark/rails\" installs it."
  s.authors     = ["hark contributors"]
  s.files       = Dir["lib/**/*.rb", "ext/hark/*.{c,h,rb}", "README.md"]
  s.extensions  = ["ext/hark/extconf.rb"]
  s.require_paths = ["lib"]
  s.required_ruby_version = ">= 3.1"
  s.add_development_dependency "minitest", ">= 5"
end
