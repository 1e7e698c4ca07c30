# What the fusion pass makes of two pieces of code: a softmax written out of
# operators and one iteration of examples/cg.rb. Prints each plan as
# Cumo.explain sees it; run with CUMO_DUMP_GRAPH=DIR to get the pictures
# too (the DAG before fusion, the fused plan, each kernel's CUDA source and,
# on a GPU, the CUDA graph: graph/plan_dump.h).
#
#   CUMO_DUMP_GRAPH=/tmp/fusion bin/run examples/show_fusion.rb
require "cumo/narray"

M = Cumo::NMath

scores = Cumo::SFloat.new(8, 64).rand
scores.to_a # on the device: the plans below hold only what follows
e = M.exp(scores - scores.max(axis: -1, keepdims: true))
probs = e / e.sum(axis: -1, keepdims: true)
puts "softmax written out:", Cumo.explain(probs)
probs.to_a

def laplacian(v)
  ap = v * 4.0
  ap[1..-1, true] -= v[0..-2, true]
  ap[0..-2, true] -= v[1..-1, true]
  ap[true, 1..-1] -= v[true, 0..-2]
  ap[true, 0..-2] -= v[true, 1..-1]
  ap
end

n = 64
x = Cumo::SFloat.zeros(n, n)
r = Cumo::SFloat.new(n, n).rand
p_dir = r.dup
rs_old = (r * r).sum
Cumo.sync
ap = laplacian(p_dir)
alpha = rs_old / (p_dir * ap).sum
x += p_dir * alpha
r -= ap * alpha
rs_new = (r * r).sum
p_dir = r + p_dir * (rs_new / rs_old)
puts "", "one CG iteration:", Cumo.explain(x, r, p_dir, rs_new)
Cumo.sync
