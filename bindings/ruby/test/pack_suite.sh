#!/usr/bin/env bash
# Every ActionPack, ActionView and railties 7.2 test file, both ways (both_ways.sh pack).
#   pack_suite.sh [RAILS72_DIR [TEST_FILE...]]
exec "$(dirname "$0")/both_ways.sh" pack "$@"
