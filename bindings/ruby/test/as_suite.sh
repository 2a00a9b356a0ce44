#!/usr/bin/env bash
# Every ActiveSupport 7.2 test file, both ways (both_ways.sh as).
#   as_suite.sh [RAILS72_DIR [TEST_FILE...]]
exec "$(dirname "$0")/both_ways.sh" as "$@"
