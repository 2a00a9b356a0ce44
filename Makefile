# hark -- top-level entry points. The real build is CMake; this file installs the
# Debian packages each target needs (when run as root) and drives CMake and CTest.
#
#   make            build the libraries, tests, examples and benchmarks
#   make test       build and run the fast test tier (CTest)
#   make check      the slower tiers: stress, sanitizers, valgrind, fuzz corpus replay
#   make demo       build and run the instrumented SQLite demo
#   make bench      run the benchmark suite and print ratios against its baselines
#   make install    install into PREFIX (default /usr/local)
#   make abi-baseline  rewrite abi/*.xml, the ABI the check tier compares against,
#                   from the tree as it is (docs/abi.md)
#   make format     clang-format the tree; make format-check fails if it would change
#   make ruby       build the Ruby extension (bindings/ruby) against the in-tree libhark
#   make ruby-test  its own tests, Rails 7.2's notification and ActiveRecord tests on
#                   hark's fanout, the gem built and installed on its own, an ASan pass

BUILD   ?= build
PREFIX  ?= /usr/local
JOBS    ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=

BUILD_PKGS = cmake gcc make pkg-config libpcre2-dev libcmocka-dev libsqlite3-dev libmicrohttpd-dev \
             libsystemd-dev python3 libcurl4-openssl-dev zlib1g-dev libgnutls28-dev libcrypt-dev \
             libyaml-dev
# The slow tiers also need clang (ASan+UBSan tier, libFuzzer), g++ (header test),
# valgrind and clang's sanitizer runtimes; bench-icount needs valgrind. The LTTng-UST
# bridge (hark::lttng) and its test need liblttng-ust-dev, lttng-tools, babeltrace2;
# W3C's Trace Context suite (tests/export/w3c_check.sh) needs python3-aiohttp; the TLS
# tests make their certificates with openssl; the ABI tier and make abi-baseline need
# libabigail's abidw and abidiff (ABI_PKGS: every library built, LTTng's bridge too).
CHECK_PKGS = $(BUILD_PKGS) g++ clang valgrind libclang-rt-14-dev prometheus systemd \
             liblttng-ust-dev lttng-tools babeltrace2 python3-aiohttp openssl abigail-tools
ABI_PKGS = $(BUILD_PKGS) abigail-tools liblttng-ust-dev
ICOUNT_PKGS = $(BUILD_PKGS) valgrind
# make bench: its hark/lttng_idle row needs the LTTng-UST bridge built (the Ruby rows
# install their own packages in bench/run.sh).
BENCH_PKGS = $(BUILD_PKGS) liblttng-ust-dev
# The Ruby extension and the Rails 7.2 tests it is checked with (Debian's gems): the
# whole stack (ActionPack, ActionView, railties) needs rack and the rest, and ActionPack's
# tests capybara, selenium-webdriver, launchy and rack-cache (../shared/rails-7.2/README.md;
# none of them brings Debian's Rails 6.1 in); Puma serves the example application in
# cluster mode (bindings/ruby/test/example_app.rb).
RUBY_PKGS = $(BUILD_PKGS) ruby ruby-dev ruby-minitest ruby-concurrent ruby-i18n ruby-tzinfo \
            ruby-connection-pool ruby-sqlite3 ruby-rack ruby-rack-test ruby-nokogiri ruby-crass \
            ruby-builder ruby-useragent ruby-zeitwerk ruby-thor ruby-webrick ruby-capybara \
            ruby-selenium-webdriver ruby-launchy ruby-rack-cache puma
# Rails 7.2's activesupport (library and tests), beside the repository -- or, in a
# clone made elsewhere from a local checkout, beside the checkout it came from.
ORIGIN_DIR := $(shell git -C $(CURDIR) config --get remote.origin.url 2>/dev/null)
RAILS72 ?= $(firstword $(wildcard $(CURDIR)/../shared/rails-7.2 $(CURDIR)/../../shared/rails-7.2 \
             $(if $(filter /%,$(ORIGIN_DIR)),$(ORIGIN_DIR)/../shared/rails-7.2 \
                                             $(ORIGIN_DIR)/../../shared/rails-7.2)))
RUBY_LIB = $(CURDIR)/bindings/ruby/lib

.PHONY: all deps build test check demo bench bench-icount fuzz install clean format format-check \
        ruby ruby-test ruby-asan ruby-gem-check node-deps abi-baseline

all: build

# Installs missing Debian packages: PKGS is the list to check.
define ensure_pkgs
	@missing=""; for p in $(1); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing:$$missing"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing) >/dev/null || exit 1; \
	  else \
	    echo "missing Debian packages; run: sudo apt-get install -y$$missing"; exit 1; \
	  fi; \
	fi
endef

deps:
	$(call ensure_pkgs,$(BUILD_PKGS))

$(BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)

# --no-print-directory: the generated Makefiles call make recursively, and each
# level would say which directory it enters and leaves.
build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS) -- --no-print-directory

# The fast tier: everything but the tests labelled `integration`, which start real
# outside tools (Prometheus, lttng-sessiond, Ruby); `make check` runs those too.
# Quiet (tests/fast.sh): the configure and build logs are shown when they fail,
# a failing test's output in full, then CTest's summary.
test: deps
	@bash tests/fast.sh $(BUILD) $(JOBS) $(CMAKE_FLAGS)

# The OTLP receiver test decodes with OpenTelemetry's own codec: its npm packages,
# pinned in tests/export/otlp/package-lock.json, are installed there by `npm ci`.
OTLP_NODE_DIR = tests/export/otlp

check:
	$(call ensure_pkgs,$(CHECK_PKGS))
	@# node and npm: Debian's, unless the machine has a Node.js of its own (whose
	@# package conflicts with Debian's npm).
	@command -v npm >/dev/null 2>&1 || $(MAKE) --no-print-directory NODE_PKGS="nodejs npm" node-deps
	@[ -d $(OTLP_NODE_DIR)/node_modules ] || (cd $(OTLP_NODE_DIR) && npm ci --no-audit --no-fund)
	bash tests/check.sh

node-deps:
	$(call ensure_pkgs,$(NODE_PKGS))

# Options for the demo: make demo DEMO_ARGS="--metrics 127.0.0.1:9464 --trace /tmp/demo.json"
DEMO_ARGS ?=

# Builds the library and the demo only (not the tests or benchmarks), with the
# compiler's output kept in a log that is shown only when the build fails.
demo: deps
	@if [ ! -f $(BUILD)/CMakeCache.txt ]; then \
	  echo "make demo: configuring $(BUILD)/ (log: $(BUILD)/configure.log)"; mkdir -p $(BUILD); \
	  cmake -S . -B $(BUILD) $(CMAKE_FLAGS) >$(BUILD)/configure.log 2>&1 || \
	    { cat $(BUILD)/configure.log; exit 1; }; \
	fi
	@echo "make demo: building libhark and the demo (log: $(BUILD)/demo-build.log)"
	@cmake --build $(BUILD) --target hark_demo -j $(JOBS) >$(BUILD)/demo-build.log 2>&1 || \
	  { tail -n 60 $(BUILD)/demo-build.log; echo "make demo: build failed; see $(BUILD)/demo-build.log"; exit 1; }
	@bash examples/run_demo.sh $(BUILD) $(DEMO_ARGS)

bench:
	$(call ensure_pkgs,$(BENCH_PKGS))
	bash bench/run.sh

bench-icount:
	$(call ensure_pkgs,$(ICOUNT_PKGS))
	bash bench/icount.sh

fuzz:
	$(call ensure_pkgs,$(CHECK_PKGS))
	bash fuzz/run.sh

ruby: build
	$(call ensure_pkgs,$(RUBY_PKGS))
	mkdir -p $(BUILD)/ruby-ext
	cd $(BUILD)/ruby-ext && HARK_BUILD_DIR=$(abspath $(BUILD)) \
	  ruby $(CURDIR)/bindings/ruby/ext/hark/extconf.rb >/dev/null && $(MAKE) --no-print-directory -s V=0
	cp $(BUILD)/ruby-ext/hark_ext.so $(RUBY_LIB)/hark/hark_ext.so.tmp && mv -f $(RUBY_LIB)/hark/hark_ext.so.tmp $(RUBY_LIB)/hark/hark_ext.so

# ActiveRecord 7.2's test files (of the 78 that subscribe, assert queries or use log
# subscribers and load on SQLite, bindings/ruby/test/ar_suite.sh runs all both ways)
# that ruby-test runs on hark's fanout: the log subscriber, instrumentation (also of
# transactions), EXPLAIN subscriber, query assertions, bind parameters logged, query
# logs and asynchronous queries.
RUBY_AR_TESTS = test/cases/log_subscriber_test.rb test/cases/instrumentation_test.rb \
                test/cases/transaction_instrumentation_test.rb test/cases/explain_subscriber_test.rb \
                test/cases/explain_test.rb test/cases/assertions/query_assertions_test.rb \
                test/cases/bind_parameter_test.rb test/cases/query_logs_test.rb \
                test/cases/asynchronous_queries_test.rb test/cases/relation/load_async_test.rb
# The load path of a whole Rails 7.2 application (../shared/rails-7.2/README.md).
RUBY_TEST_PATHS = -I $(RUBY_LIB) \
                  $(foreach d,activesupport activemodel activerecord actionpack actionview railties,-I $(RAILS72)/$(d)/lib) \
                  $(foreach g,$(wildcard $(RAILS72)/gems/*/lib),-I $(g))

# ActionPack's, ActionView's and railties' 7.2 test files that ruby-test runs on hark's
# fanout: every one that subscribes or asserts on instrumentation or log output (log
# subscribers, runtimes, routing, CSRF and unpermitted-parameter logs, log_at), and all of
# actionview/test/activerecord (bindings/ruby/test/pack_suite.sh runs every file of the
# three both ways).
RUBY_PACK_TESTS = $(addprefix actionpack/test/controller/,caching_test.rb live_stream_test.rb \
                    log_subscriber_test.rb logging_test.rb mime/respond_to_test.rb \
                    parameters/always_permitted_parameters_test.rb \
                    parameters/log_on_unpermitted_params_test.rb \
                    parameters/raise_on_unpermitted_params_test.rb redirect_test.rb \
                    request_forgery_protection_test.rb send_file_test.rb) \
                  $(addprefix actionpack/test/dispatch/,middleware_stack_test.rb \
                    routing/instrumentation_test.rb routing/log_subscriber_test.rb server_timing_test.rb) \
                  $(patsubst $(RAILS72)/%,%,$(sort $(wildcard $(RAILS72)/actionview/test/activerecord/*_test.rb))) \
                  actionview/test/template/log_subscriber_test.rb railties/test/rack_logger_test.rb

# The extension's own tests; Rails 7.2's notification, subscriber and log subscriber
# tests, ActiveRecord's (RUBY_AR_TESTS) and ActionPack's, ActionView's and railties'
# (RUBY_PACK_TESTS) with hark/rails loaded, each file's run ending with a line proving
# that the fanout under test was hark's (every run must say so: proved_run.sh); the
# example application (examples/rails) served both ways, its logs compared
# (example_app.rb); the gem built, installed into a temporary GEM_HOME and run the same
# way (gem_check.sh); the ASan pass.
ruby-test: ruby
	@if [ -z "$(RAILS72)" ]; then echo "ruby-test: no ../shared/rails-7.2: Rails' own tests NOT run"; exit 1; fi
	ruby $(RUBY_TEST_PATHS) -I bindings/ruby/test \
	  -e 'ARGV.each { |f| require File.expand_path(f) }' bindings/ruby/test/test_*.rb
	bash bindings/ruby/test/proved_run.sh ActiveSupport $(BUILD)/ruby-rails-tests.log $(RAILS72)/run-tests.sh
	bash bindings/ruby/test/proved_run.sh ActiveRecord $(BUILD)/ruby-ar-tests.log $(RAILS72)/run-ar-tests.sh \
	  $(RUBY_AR_TESTS)
	bash bindings/ruby/test/proved_run.sh ActionPack/ActionView/railties $(BUILD)/ruby-pack-tests.log \
	  $(RAILS72)/run-pack-tests.sh $(RUBY_PACK_TESTS)
	ruby bindings/ruby/test/example_app.rb $(RAILS72)
	$(MAKE) --no-print-directory ruby-gem-check
	$(MAKE) --no-print-directory ruby-asan

# `gem build bindings/ruby/hark.gemspec`, `gem install` of it into a temporary GEM_HOME
# (it compiles hark's C sources it carries, nothing of this build), then Rails' 78 tests
# and ActiveRecord's log subscriber and instrumentation tests through the installed gem.
ruby-gem-check:
	$(call ensure_pkgs,$(RUBY_PKGS))
	bash bindings/ruby/test/gem_check.sh $(RAILS72)

# The extension built with AddressSanitizer (heap checks; Ruby unwinds with
# __builtin_longjmp, which ASan cannot see, so stack redzones are off), running its own
# tests. ASan's runtime is preloaded into Ruby. Ruby gives each thread an alternate
# signal stack of its own (malloc'd); ASan must not install or unmap one
# (use_sigaltstack=0), or a thread's exit aborts trying to munmap Ruby's.
RUBY_ASAN = $(BUILD)/ruby-asan
ruby-asan: ruby
	rm -rf $(RUBY_ASAN)/lib && mkdir -p $(RUBY_ASAN)/lib/hark
	cd $(RUBY_ASAN) && HARK_BUILD_DIR=$(abspath $(BUILD)) \
	  HARK_EXT_CFLAGS="-fsanitize=address -fno-omit-frame-pointer --param=asan-stack=0" \
	  ruby $(CURDIR)/bindings/ruby/ext/hark/extconf.rb >/dev/null && $(MAKE) --no-print-directory -s V=0
	cp $(RUBY_ASAN)/hark_ext.so $(RUBY_ASAN)/lib/hark/hark_ext.so
	ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0:abort_on_error=1:use_sigaltstack=0 \
	  LD_PRELOAD=$$($(CC) -print-file-name=libasan.so) \
	  ruby -I $(RUBY_ASAN)/lib $(RUBY_TEST_PATHS) \
	  -e 'ARGV.each { |f| require File.expand_path(f) }' bindings/ruby/test/test_*.rb

# The ABI baseline (abi/<SONAME>.xml) written from the tree as it is, by the build the
# abi tier of make check uses (its own directory, the shared libraries only). Run it
# after a change the tier lists as compatible, to take it into the baseline, and in the
# commit that raises HARK_VERSION_MAJOR (it then removes the old major's files).
abi-baseline:
	$(call ensure_pkgs,$(ABI_PKGS))
	python3 tests/tools/abi_check.py baseline --build-dir $(BUILD)-abi --jobs $(JOBS)

# Installing the library needs a compiler, CMake, pkg-config and PCRE2, nothing else:
# its own build tree, without tests, benchmarks, examples or fuzz targets (optional
# parts such as the exporters are built when their libraries are already present).
INSTALL_PKGS = cmake gcc make pkg-config libpcre2-dev
INSTALL_BUILD ?= build-install

install:
	$(call ensure_pkgs,$(INSTALL_PKGS))
	cmake -S . -B $(INSTALL_BUILD) -DHARK_BUILD_TESTS=OFF -DHARK_BUILD_BENCH=OFF \
	  -DHARK_BUILD_EXAMPLES=OFF -DHARK_BUILD_FUZZ=OFF $(CMAKE_FLAGS)
	cmake --build $(INSTALL_BUILD) -j $(JOBS)
	cmake --install $(INSTALL_BUILD) --prefix $(PREFIX)

# Every C source and header the project owns (git ls-files, so a new file is covered
# as soon as it is added); format-check fails on any file clang-format would change.
FORMAT_FILES = $(shell git ls-files '*.c' '*.h' '*.hpp' '*.cpp' 2>/dev/null)

format:
	clang-format -i $(FORMAT_FILES)

format-check:
	clang-format --dry-run --Werror $(FORMAT_FILES)

clean:
	rm -rf $(BUILD) $(INSTALL_BUILD)
