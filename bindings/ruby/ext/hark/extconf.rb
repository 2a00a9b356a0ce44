# frozen_string_literal: true

# Builds hark_ext against the in-tree libhark: the headers of ../../include (relative to
# bindings/ruby) and the static library of the CMake build (HARK_BUILD_DIR, default
# <repo>/build). `make ruby` at the top of the repository builds libhark first.
require "mkmf"

root = File.expand_path("../../../..", __dir__)
build = ENV.fetch("HARK_BUILD_DIR", File.join(root, "build"))
include_dir = File.join(root, "include")
lib = File.join(build, "libhark.a")

abort "hark: #{lib} not found; run `make ruby` (or build libhark) first" unless File.exist?(lib)
abort "hark: #{include_dir}/hark.h not found" unless File.exist?(File.join(include_dir, "hark.h"))

$INCFLAGS << " -I#{include_dir}"
$CFLAGS << " -std=gnu11 -DHARK_STATIC -Wall -Wno-unused-parameter"
$LOCAL_LIBS << " #{lib} -lpthread"
# What libhark.a itself needs (its hark.pc's Requires.private: PCRE2, libsystemd ...).
pc = File.join(build, "hark.pc")
if File.exist?(pc)
  File.read(pc)[/^Requires\.private:(.*)$/, 1].to_s.split(/[\s,]+/).reject(&:empty?).each do |req|
    pkg_config(req) or abort "hark: pkg-config cannot find #{req}, which libhark needs"
  end
end
# Extra flags for checked builds, e.g. HARK_EXT_CFLAGS="-fsanitize=address -fno-omit-frame-pointer".
if (extra = ENV["HARK_EXT_CFLAGS"]) && !extra.empty?
  $CFLAGS << " #{extra}"
  $DLDFLAGS << " #{extra}"
end
# libhark's regex patterns are PCRE2 (libpcre2-dev); the static library needs it.
pkg_config("libpcre2-8") or abort "hark: libpcre2-8 not found (apt-get install libpcre2-dev)"

# The match-callback pattern (a Ruby Regexp deciding which topics match).
if try_compile(<<~C)
  #include <hark.h>
  static bool m(const char *n, void *d) { (void)n; (void)d; return true; }
  int main(void) { hark_pattern p = hark_match(m, 0); return p.kind == HARK_PATTERN_MATCH ? 0 : 1; }
C
  $defs << "-DHAVE_HARK_MATCH"
end

# Every C file of this directory is part of the extension (one file per concern; a new
# file needs no list), and every object depends on the private header.
$srcs = Dir.glob(File.join(__dir__, "*.c")).map { |f| File.basename(f) }.sort
abort "hark: no C sources in #{__dir__}" if $srcs.empty?

create_makefile("hark/hark_ext")
