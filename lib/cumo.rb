# frozen_string_literal: true

require "cumo/narray"
