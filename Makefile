# hark -- top-level entry points. The real build is CMake; this file installs the
# Debian packages each target needs (when run as root) and drives CMake and CTest.
#
#   make            build the libraries, tests, examples and benchmarks
#   make test       build and run the fast test tier (CTest)
#   make check      the slower tiers: stress, sanitizers, valgrind, fuzz corpus replay
#   make demo       build and run the instrumented SQLite demo
#   make bench      run the benchmark suite and print ratios against its baselines
#   make install    install into PREFIX (default /usr/local)
#   make format     clang-format the tree; make format-check fails if it would change

BUILD   ?= build
PREFIX  ?= /usr/local
JOBS    ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=

BUILD_PKGS = cmake gcc make pkg-config libcmocka-dev libsqlite3-dev
# The slow tiers also need clang (ASan+UBSan tier, libFuzzer), g++ (header test),
# valgrind and clang's sanitizer runtimes; bench-icount needs valgrind.
CHECK_PKGS = $(BUILD_PKGS) g++ clang valgrind libclang-rt-14-dev
ICOUNT_PKGS = $(BUILD_PKGS) valgrind

.PHONY: all deps build test check demo bench bench-icount fuzz install clean format format-check

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

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

check:
	$(call ensure_pkgs,$(CHECK_PKGS))
	bash tests/check.sh

demo: build
	bash examples/run_demo.sh $(BUILD)

bench: deps
	bash bench/run.sh

bench-icount:
	$(call ensure_pkgs,$(ICOUNT_PKGS))
	bash bench/icount.sh

fuzz:
	$(call ensure_pkgs,$(CHECK_PKGS))
	bash fuzz/run.sh

install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

# Every C source and header the project owns (git ls-files, so a new file is covered
# as soon as it is added); format-check fails on any file clang-format would change.
FORMAT_FILES = $(shell git ls-files '*.c' '*.h' '*.hpp' '*.cpp' 2>/dev/null)

format:
	clang-format -i $(FORMAT_FILES)

format-check:
	clang-format --dry-run --Werror $(FORMAT_FILES)

clean:
	rm -rf $(BUILD)
