# Conjugate gradient on the 5-point Poisson problem, the spec's "Keeping
# Scalars On The Device" loop: alpha and beta stay 0-dim arrays on the
# device, so the loop never waits for the host unless it tests convergence.
#
#   bin/run examples/cg.rb [N=512] [ITERATIONS=1000] [CHECK_EVERY=0] [dtype=SFloat]
#
# CHECK_EVERY = 0 never reads the residual inside the loop; k > 0 reads it
# every k iterations and stops once it is under 1e-6.
require "cumo/narray"

n = Integer(ARGV[0] || 512)
iterations = Integer(ARGV[1] || 1000)
check_every = Integer(ARGV[2] || 0)
dtype = Cumo.const_get(ARGV[3] || "SFloat")
tolerance = 1e-6

# A * v for the 5-point Laplacian with zero Dirichlet boundary: 4 on the
# diagonal, -1 for each neighbour, written as slice updates.
def laplacian(v)
  ap = v * 4.0
  ap[1..-1, true] -= v[0..-2, true]
  ap[0..-2, true] -= v[1..-1, true]
  ap[true, 1..-1] -= v[true, 0..-2]
  ap[true, 0..-2] -= v[true, 1..-1]
  ap
end

Cumo::NArray.srand(0)
b = dtype.new(n, n).rand
x = dtype.zeros(n, n)
r = b.dup
p_dir = r.dup
rs_old = (r * r).sum
b_norm = Math.sqrt(Float((b * b).sum))

step = lambda do |k|
  ap = laplacian(p_dir)
  alpha = rs_old / (p_dir * ap).sum
  x += p_dir * alpha
  r -= ap * alpha
  rs_new = (r * r).sum
  return :converged if check_every > 0 && (k + 1) % check_every == 0 &&
                       Math.sqrt(Float(rs_new)) / b_norm < tolerance
  p_dir = r + p_dir * (rs_new / rs_old)
  rs_old = rs_new
  nil
end

# Warm-up: the first flushes compile kernels and capture graphs, and the
# first ones fall at other phases of the loop than the steady ones. It runs
# until three flushes in a row found their plan cached (at most half the
# iterations). No sync after it: a sync flushes a partial segment, and the
# loop's flushes would then fall at another phase, plans of their own.
Cumo.reset_stats
warmup_limit = [iterations / 2, 1].max
done = 0
plans_at_last_miss = 0
misses = 0
while done < warmup_limit
  break if step.call(done) == :converged
  done += 1
  seen = Cumo.stats
  if seen[:plan_cache_misses] != misses
    misses = seen[:plan_cache_misses]
    plans_at_last_miss = seen[:plans_run]
  end
  break if seen[:plans_run] - plans_at_last_miss >= 3
end
warmup = done
GC.start
pool = Cumo::CUDA::MemoryPool
memory = [[done, pool.used_bytes(flush: false), pool.total_bytes(flush: false)]]
Cumo.reset_stats
start = Process.clock_gettime(Process::CLOCK_MONOTONIC)
samples = [iterations / 4, iterations / 2, 3 * iterations / 4].uniq
(warmup...iterations).each do |k|
  done = k + 1
  break if step.call(k) == :converged
  if samples.include?(done)
    # The pool as it stands (flush: false): host bookkeeping that neither
    # waits for the device nor runs the pending work, so the loop still
    # never reads (a flush here would cut a partial segment, a plan of its
    # own, as a sync would).
    GC.start
    memory << [done, pool.used_bytes(flush: false), pool.total_bytes(flush: false)]
  end
end
# The loop's own flushes (every one at the same phase of the loop) are all
# launched by now; the final sync adds one partial segment.
loop_stats = Cumo.stats
Cumo.sync
elapsed = Process.clock_gettime(Process::CLOCK_MONOTONIC) - start
stats = Cumo.stats
GC.start
memory << [done, pool.used_bytes, pool.total_bytes]
timed = [done - warmup, 1].max

residual = Math.sqrt(Float((r * r).sum)) / b_norm
puts format("cg %dx%d %s on %s: %d iterations, relative residual %.6e",
            n, n, dtype.name.split("::").last, Cumo.device_name, done, residual)
puts format("steady state (%d iterations after %d of warm-up): %.2f us per iteration, " \
            "%.2f kernels per iteration, %d host syncs",
            timed, warmup, elapsed * 1e6 / timed, stats[:kernels_launched].to_f / timed,
            stats[:host_syncs])
puts format("plan cache: %d hits, %d misses; graph cache: %d hits, %d misses, in the loop's " \
            "%d flushes; the final sync's partial flush: %s",
            loop_stats[:plan_cache_hits], loop_stats[:plan_cache_misses],
            loop_stats[:graph_cache_hits], loop_stats[:graph_cache_misses],
            loop_stats[:plans_run],
            !Cumo.gpu? ? "no graphs on the CPU executor" :
            stats[:graph_cache_misses] > loop_stats[:graph_cache_misses] ? "a miss" : "a hit")
puts "device memory (iteration, used bytes, pool bytes): " +
     memory.map { |i, u, t| "(#{i}, #{u}, #{t})" }.join(" ")
puts "stats: #{stats}"
