# bench/lib/json_lines.rb: the JSON lines a benchmark run printed, as
# Hashes with symbol keys, for the scripts that turn a run into a table.
# Anything else in the log (a warning, a line cut off) is skipped.
require "json"

module JsonLines
  module_function

  def read(io)
    io.each_line.filter_map do |line|
      JSON.parse(line, symbolize_names: true) if line.start_with?("{")
    rescue JSON::ParserError
      nil
    end
  end
end
