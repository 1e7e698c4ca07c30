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

Cumo.sync
Cumo.reset_stats
start = Process.clock_gettime(Process::CLOCK_MONOTONIC)
done = iterations
iterations.times do |k|
  ap = laplacian(p_dir)
  alpha = rs_old / (p_dir * ap).sum
  x += p_dir * alpha
  r -= ap * alpha
  rs_new = (r * r).sum
  if check_every > 0 && (k + 1) % check_every == 0 &&
     Math.sqrt(Float(rs_new)) / b_norm < tolerance
    done = k + 1
    break
  end
  p_dir = r + p_dir * (rs_new / rs_old)
  rs_old = rs_new
end
Cumo.sync
elapsed = Process.clock_gettime(Process::CLOCK_MONOTONIC) - start
stats = Cumo.stats

residual = Math.sqrt(Float((r * r).sum)) / b_norm
puts format("cg %dx%d %s on %s: %d iterations, relative residual %.6e",
            n, n, dtype.name.split("::").last, Cumo.device_name, done, residual)
puts format("%.2f us per iteration, %.2f kernels per iteration, %d host syncs",
            elapsed * 1e6 / done, stats[:kernels_launched].to_f / done,
            stats[:host_syncs])
puts "stats: #{stats}"
