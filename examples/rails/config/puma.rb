# Puma in cluster mode, as Rails applications run in production: the application is
# loaded once in the master (preload_app!), then forked into WEB_CONCURRENCY workers
# of RAILS_MAX_THREADS threads each.
#
#   puma -C config/puma.rb -b tcp://127.0.0.1:3000
workers Integer(ENV.fetch("WEB_CONCURRENCY", 2))
max_threads = Integer(ENV.fetch("RAILS_MAX_THREADS", 4))
threads max_threads, max_threads
preload_app!
environment ENV.fetch("RAILS_ENV", "production")
pidfile ENV["PIDFILE"] if ENV["PIDFILE"]
