#!/usr/bin/env bash
# ActiveRecord 7.2's test files that use notifications, both ways (both_ways.sh ar).
#   ar_suite.sh [RAILS72_DIR [TEST_FILE...]]
exec "$(dirname "$0")/both_ways.sh" ar "$@"
