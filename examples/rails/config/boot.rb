# Finds Rails, then puts hark's fanout behind ActiveSupport::Notifications before
# anything subscribes -- the one line an application adds (bindings/ruby/README.md).
#
# Rails comes from Bundler (the Gemfile) when its gems are installed, or from a
# directory laid out as Rails' repository is (RAILS=../shared/rails-7.2: each
# framework's lib, gems/*/lib for the pure-Ruby gems Debian packages too old; the
# other gems from Debian). HARK=0 leaves Rails' own fanout in place, for comparison.
ENV["BUNDLE_GEMFILE"] ||= File.expand_path("../Gemfile", __dir__)

if (rails = ENV["RAILS"]) && !rails.empty?
  rails = File.expand_path(rails)
  abort "RAILS=#{rails}: no activesupport/lib there" unless File.directory?("#{rails}/activesupport/lib")
  frameworks = %w[activesupport activemodel activerecord actionpack actionview railties]
  $LOAD_PATH.unshift(*frameworks.map { |f| "#{rails}/#{f}/lib" }, *Dir["#{rails}/gems/*/lib"].sort)
  # hark from this repository when the application is still inside it, else the gem.
  hark_lib = ENV.fetch("HARK_LIB") { File.expand_path("../../../bindings/ruby/lib", __dir__) }
  if File.exist?("#{hark_lib}/hark/rails.rb")
    # The repository's Ruby files need the extension `make ruby` builds beside them.
    if ENV["HARK"] != "0" && Dir["#{hark_lib}/hark/hark_ext.{so,bundle}"].empty?
      abort "hark's extension is not built: run `make ruby` in #{File.expand_path('../../..', hark_lib)} " \
            "first (it builds bindings/ruby/lib/hark/hark_ext.so), or set HARK=0 for Rails' own fanout"
    end
    $LOAD_PATH.unshift(hark_lib)
  end
else
  require "bundler/setup" # Set up gems listed in the Gemfile.
end

require "hark/rails" unless ENV["HARK"] == "0"
