# The CG solve the benchmarks share (DESIGN.md, "Shared definitions"): the
# 5-point Laplacian on an NxN interior grid with zero Dirichlet boundary, b
# uniform in [0, 1) from a fixed seed, x0 = 0, the relative residual
# ||r|| / ||b||. Written as a Ruby user writes it against Numo's API.
module CGSolver
  module_function

  def laplacian(v)
    ap = v * 4.0
    ap[1..-1, true] -= v[0..-2, true]
    ap[0..-2, true] -= v[1..-1, true]
    ap[true, 1..-1] -= v[true, 0..-2]
    ap[true, 0..-2] -= v[true, 1..-1]
    ap
  end

  # The problem: [b, x0].
  def problem(n, dtype)
    Cumo::NArray.srand(0)
    b = dtype.new(n, n).rand
    [b, dtype.zeros(n, n)]
  end

  # Runs `iterations` steps. scalars: :device keeps alpha and beta as 0-dim
  # arrays; :float reads them back as Ruby Floats (two reads an iteration).
  # check_every: read the residual every k iterations (0: never) and stop
  # under `tolerance`. Answers [x, r, iterations done].
  def solve(b, x, iterations:, scalars: :device, check_every: 0, tolerance: 0.0,
            on_iteration: nil)
    r = b - laplacian(x)
    p = r.dup
    rs_old = (r * r).sum
    b_norm = Math.sqrt(Float((b * b).sum))
    rs_old = Float(rs_old) if scalars == :float
    done = 0
    iterations.times do |k|
      ap = laplacian(p)
      pap = (p * ap).sum
      alpha = scalars == :float ? rs_old / Float(pap) : rs_old / pap
      x += p * alpha
      r -= ap * alpha
      rs_new = (r * r).sum
      rs_new = Float(rs_new) if scalars == :float
      done = k + 1
      if check_every > 0 && done % check_every == 0 &&
         Math.sqrt(Float(rs_new)) / b_norm < tolerance
        break
      end
      p = r + p * (rs_new / rs_old)
      rs_old = rs_new
      on_iteration&.call(done)
    end
    [x, r, done, b_norm]
  end
end
