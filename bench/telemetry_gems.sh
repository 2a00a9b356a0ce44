#!/usr/bin/env bash
# telemetry_gems.sh DIR -- installs the gems hark's telemetry is compared with (the
# otel and prom rows of make bench, docs/rails.md's span trees) and Puma (the cluster
# mode test of make ruby-test) into DIR (make bench
# and .ci/run give build/gems), at the pinned versions below, never over Debian's gems:
# Rails itself comes from ../shared/rails-7.2 and the rest from Debian, so every gem is
# installed without its dependencies, each of which is pinned here too. Versions: the
# newest that run on Ruby 3.1 (opentelemetry-sdk 1.11 asks for 3.3). Prints, on its
# last line, the -I flags that put their lib directories on a Ruby's load path.
#
# yabeda-rails and yabeda-prometheus (over prometheus-client) rather than
# prometheus_exporter: yabeda records in the request's process, as Hark::Metrics does,
# and serves its exposition from a Rack endpoint; prometheus_exporter sends every
# observation to a separate collector process, which would move the cost out of the
# measured request.
set -euo pipefail
dir=${1:?usage: telemetry_gems.sh DIR}
gems=(
  # OpenTelemetry: the SDK, the OTLP/HTTP exporter, Rails' instrumentation
  opentelemetry-api:1.8.0 opentelemetry-common:0.23.0 opentelemetry-registry:0.4.0
  opentelemetry-semantic_conventions:1.36.0 opentelemetry-sdk:1.10.0
  google-protobuf:4.30.2 googleapis-common-protos-types:1.22.0 opentelemetry-exporter-otlp:0.32.0
  opentelemetry-instrumentation-base:0.24.0 opentelemetry-instrumentation-rack:0.28.2
  opentelemetry-instrumentation-action_pack:0.14.1 opentelemetry-instrumentation-action_view:0.10.0
  opentelemetry-instrumentation-active_record:0.10.1 opentelemetry-instrumentation-active_support:0.9.1
  opentelemetry-instrumentation-active_job:0.9.2 opentelemetry-instrumentation-action_mailer:0.5.0
  opentelemetry-instrumentation-active_storage:0.2.0 opentelemetry-instrumentation-concurrent_ruby:0.23.1
  opentelemetry-instrumentation-rails:0.38.0
  # Prometheus: yabeda's Rails request series over prometheus-client
  prometheus-client:4.2.5 dry-initializer:3.2.0 ruby-next-core:1.2.1 anyway_config:2.9.1
  yabeda:0.16.0 yabeda-prometheus:0.9.1 yabeda-rails:0.11.0
  # Puma, for make ruby-test's cluster mode (Debian 12 has no ruby-puma); native, built
  # at install
  nio4r:2.7.5 puma:6.6.1
)
missing=()
for g in "${gems[@]}"; do
  [ -d "$dir/gems/${g%%:*}-${g##*:}" ] || compgen -G "$dir/gems/${g%%:*}-${g##*:}-*" >/dev/null || missing+=("$g")
done
# google-protobuf is native: its build for glibc x86-64 named as RubyGems 3.3 (Debian
# 12's) knows it -- it would take a later version's -musl build for this machine's.
# 4.30 is the last with "x86_64-linux" builds.
native=() pure=()
for g in ${missing[@]+"${missing[@]}"}; do
  case $g in google-protobuf:*) native+=("$g") ;; *) pure+=("$g") ;; esac
done
mkdir -p "$dir"
if [ ${#native[@]} -gt 0 ]; then
  gem install --install-dir "$dir" --no-document --ignore-dependencies \
    --platform "$(uname -m)-linux" "${native[@]}" >&2
fi
if [ ${#pure[@]} -gt 0 ]; then
  gem install --install-dir "$dir" --no-document --ignore-dependencies "${pure[@]}" >&2
fi
flags=""
for g in "${gems[@]}"; do
  lib=$(compgen -G "$dir/gems/${g%%:*}-${g##*:}*/lib" | head -n1)
  [ -n "$lib" ] || { echo "telemetry_gems.sh: ${g%%:*} ${g##*:} not in $dir" >&2; exit 1; }
  flags="$flags -I $lib"
done
echo "${flags# }"
