# frozen_string_literal: true

# `gem build bindings/ruby/hark.gemspec` (from the repository) makes a gem that builds on
# its own: hark's C library sources and headers (src/{util,core,logger,subscriber}, the
# flight recorder's part of src/export, include/) are copied into ext/hark/libhark/ here,
# at build time, and extconf.rb
# compiles them into the extension with PCRE2 found through pkg-config. Installing it
# needs Ruby's headers, a C compiler and libpcre2-dev, nothing built beforehand.
require "fileutils"

# Absolute: `gem build` evaluates this file with a path relative to where it was started.
here = File.expand_path(__dir__)
repo = File.expand_path("../..", here)
stage = File.join(here, "ext", "hark", "libhark")
# The library layers the extension needs, and of the exporters only the flight recorder
# (Hark::Recorder: src/export/recorder/ and the two export files it builds on).
layers = %w[util core logger logger/sinks logger/async subscriber export/recorder]
export_files = %w[attach.c attach.h chrome_event.c chrome_event.h]

if File.exist?(File.join(repo, "include", "hark.h")) && File.directory?(File.join(repo, "src", "core"))
  FileUtils.rm_rf(stage)
  layers.each do |layer|
    dest = File.join(stage, "src", layer)
    FileUtils.mkdir_p(dest)
    Dir[File.join(repo, "src", layer, "*.{c,h}")].each { |f| FileUtils.cp(f, dest) }
  end
  export_files.each { |f| FileUtils.cp(File.join(repo, "src", "export", f), File.join(stage, "src", "export")) }
  Dir.glob("**/*.{h,hpp}", base: File.join(repo, "include")).each do |f|
    FileUtils.mkdir_p(File.join(stage, "include", File.dirname(f)))
    FileUtils.cp(File.join(repo, "include", f), File.join(stage, "include", f))
  end
end

# `gem build` packages files relative to where it runs: run it here (the gem is written
# here too, bindings/ruby/hark-<version>.gem), as `gem build -C bindings/ruby` would.
if defined?(Gem::Commands::BuildCommand) && File.expand_path(Dir.pwd) != here
  Dir.chdir(here)
end

# hark's version, written once in include/hark/version.h (the repository's, or the
# copy staged above): the gem's version is the version of the C library it carries.
version_h = [File.join(repo, "include", "hark", "version.h"), File.join(stage, "include", "hark", "version.h")]
            .find { |f| File.exist?(f) } or raise "hark.gemspec: no include/hark/version.h"
version = %w[MAJOR MINOR PATCH].map do |part|
  File.read(version_h)[/^#define HARK_VERSION_#{part} +(\d+)$/, 1] or raise "#{version_h}: no HARK_VERSION_#{part}"
end.join(".")

# The repository's own address when it was cloned from one; otherwise the gem's page on
# rubygems.org (where a published gem of this name lives).
origin = `git -C #{here.inspect} config --get remote.origin.url 2>/dev/null`.strip
homepage = origin.match?(%r{\Ahttps?://}) ? origin.delete_suffix(".git") : "https://rubygems.org/gems/hark"

Gem::Specification.new do |s|
  s.name        = "hark"
  s.version     = version
  s.summary     = "hark's C fanout behind ActiveSupport::Notifications"
  s.description = "Hark::Fanout, a drop-in for ActiveSupport::Notifications::Fanout whose " \
                  "registry, listener snapshots, grouping and log-subscriber silence are " \
                  "the hark C library's (bundled: built with the extension). " \
                  "require \"hark/rails\" installs it."
  s.authors     = ["hark contributors"]
  s.license     = "MIT"
  s.homepage    = homepage
  s.files = Dir.glob(["lib/**/*.rb", "ext/hark/*.{c,h,rb}", "ext/hark/libhark/**/*", "README.md"], base: here)
              .reject { |f| File.directory?(File.join(here, f)) || File.basename(f).start_with?("libhark_") }.sort

  s.extensions  = ["ext/hark/extconf.rb"]
  s.require_paths = ["lib"]
  s.required_ruby_version = ">= 3.1"
  s.requirements << "a C11 compiler, Ruby's headers (ruby-dev) and PCRE2 (libpcre2-dev)"
  s.add_development_dependency "minitest", "~> 5.15"
end
