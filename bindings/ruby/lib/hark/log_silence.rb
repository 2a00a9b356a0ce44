# frozen_string_literal: true
# Silenced log subscribers at hark's cost (see Hark.silence_mode_for).
