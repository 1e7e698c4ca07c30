# frozen_string_literal: true

# One timed greedy decode, as examples/gpt2_decode.rb and
# bench/decode_bench.rb report it.
require_relative "model"

module GPT2
  module_function

  def now = Process.clock_gettime(Process::CLOCK_MONOTONIC)

  # Decodes `n` tokens (n >= 3) after `prompt` and answers a Hash:
  #   tokens:        n Arrays of `batch` Integers (read after the clock stopped)
  #   seconds:       the whole decode, recording to the last token on the device
  #   steady_seconds: tokens 3..n (the first two compile and capture)
  #   first2, steady: Cumo.stats deltas of tokens 1-2 and of tokens 3..n
  # The snapshot after token 2 reads nothing (generate has flushed the
  # token; the counters are the host's), so the loop's flushes keep their
  # phase; the run syncs once, at the end, which the steady delta holds and
  # `steady_host_syncs_per_token` leaves out. steady_seconds starts when
  # token 2 is recorded and flushed, its device work perhaps still running.
  def timed_decode(model, prompt, n)
    raise ArgumentError, "[gpt2] time at least 3 tokens, not #{n}" if n < 3

    Cumo.reset_stats
    t0 = now
    t2 = nil
    after2 = nil
    toks = model.generate(prompt, n) do |i, _tok|
      next unless i == 1

      t2 = now
      after2 = Cumo.stats
    end
    Cumo.sync
    t_end = now
    final = Cumo.stats
    steady = final.to_h { |k, v| [k, v - after2.fetch(k, 0)] }
    {
      tokens: toks.map { |t| Array(t.to_a).flatten },
      seconds: t_end - t0,
      steady_seconds: t_end - t2,
      first2: after2,
      steady: steady,
      steady_tokens: n - 2
    }
  end

  # The numbers of a timed_decode, per token (per step: a step makes
  # `batch` tokens), in the JSON-line fields of bench/decode_bench.rb.
  def summary(run, batch)
    st = run[:steady]
    k = run[:steady_tokens].to_f
    n = run[:tokens].size
    {
      ms_per_token: (run[:seconds] * 1e3 / n).round(4),
      steady_ms_per_token: (run[:steady_seconds] * 1e3 / k).round(4),
      tokens_per_s: (batch * n / run[:seconds]).round(1),
      kernels_per_token: (st[:kernels_launched] / k).round(2),
      graph_replays_per_token: (st[:graph_replays] / k).round(2),
      plans_per_token: (st[:plans_run] / k).round(2),
      host_syncs_per_token: ((st[:host_syncs] - 1) / k).round(2),
      nodes_per_token: (st[:nodes_recorded] / k).round(1),
      stored_mb_per_token: (st[:stored_bytes] / k / 1e6).round(2),
      nvrtc_compiles_after_token2: st[:nvrtc_compiles],
      graph_instantiations_after_token2: st[:graph_instantiations],
      plan_cache_misses_after_token2: st[:plan_cache_misses],
      # CUMO_PROFILE=1: the device time of the replays, per token.
      device_ms_per_token: st[:device_ns] && (st[:device_ns] / 1e6 / k).round(4),
      plan_ms_per_token: st[:plan_ns] && (st[:plan_ns] / 1e6 / k).round(4),
      # Host time handing the plans to the executor (on the GPU: packing
      # parameters, updating and launching the graph); what the host spends
      # beyond plan, execute and wait is recording.
      execute_ms_per_token: st[:execute_ns] && (st[:execute_ns] / 1e6 / k).round(4),
      wait_ms_per_token: st[:wait_ns] && (st[:wait_ns] / 1e6 / k).round(4)
    }
  end
end
