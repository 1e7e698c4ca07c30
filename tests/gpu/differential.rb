# The differential test: every case of diff_cases.rb runs on the CUDA
# executor and on the CPU reference, each in a child process, and the
# answers must agree: bit for bit for integers, elementwise float
# arithmetic (no FMA contraction, the same element functions), rand and
# reductions (the CPU child plans against this GPU's SM count, so it folds
# in the same order); within a few ulps for transcendentals (pow, exp, log,
# and every case named "math:"). Exits 77 (skipped) without a GPU.
require "rbconfig"

here = __dir__
child = File.join(here, "diff_child.rb")

def run_child(child, device, env = {})
  out = IO.popen(env.merge("CUMO_DEVICE" => device), [RbConfig.ruby, child], "rb", &:read)
  raise "child on #{device} failed (#{$?.exitstatus})" unless $?.success?
  Marshal.load(out)
end

gpu_probe = IO.popen([RbConfig.ruby, "-e",
                      'require "cumo"; print Cumo.gpu?, " ", Cumo.device_model[:sm_count]'], &:read)
gpu, sm_count = gpu_probe.split
if gpu != "true"
  puts "no GPU: skipped"
  exit 77
end

cpu = run_child(child, "cpu", "CUMO_MODEL_SM_COUNT" => sm_count)
cuda = run_child(child, "cuda")

def close?(a, b, tol, floor = 1e-30)
  return a == b if a.is_a?(Integer) || b.is_a?(Integer)
  if a.is_a?(Complex) || b.is_a?(Complex)
    # Each part within the tolerance of the larger modulus.
    a = a.to_c
    b = b.to_c
    scale = [a.abs, b.abs].reject(&:nan?).max.to_f
    return [[a.real, b.real], [a.imag, b.imag]].all? do |x, y|
      close?(x, y, tol) || (x - y).abs <= tol * scale
    end
  end
  return true if a.equal?(b) || a == b
  return a.nan? && b.nan? if a.nan? || b.nan?
  return false if a.infinite? || b.infinite?
  (a - b).abs <= tol * [a.abs, b.abs, floor].max
end

failures = []
cpu.each do |name, want|
  got = cuda[name]
  if got.nil?
    failures << "#{name}: missing on cuda"
    next
  end
  want.zip(got).each_with_index do |(w, g), i|
    if w[:class] != g[:class] || w[:shape] != g[:shape]
      failures << "#{name}[#{i}]: #{g[:class]}#{g[:shape]} vs #{w[:class]}#{w[:shape]}"
      next
    end
    single = w[:class] =~ /SFloat|SComplex/
    complex = w[:class] =~ /Complex/
    # HFloat and BFloat: a result rounded to the type from single-precision
    # values a few ulps apart lands a unit of the type's last place apart
    # at most (2**-10 and 2**-7 of the value).
    narrow = { "Cumo::HFloat" => 2.0**-10, "Cumo::BFloat" => 2.0**-7 }[w[:class]]
    # Only transcendentals may differ: glibc and CUDA's library each answer
    # within a few ulps (CUDA's erfc, tan and acosh up to 4 or 5), so allow
    # about 16; complex formulas such as atanh's log((1 + z) / (1 - z))
    # cancel and magnify that in the real part. Everything else agrees bit
    # for bit, reductions included: the CPU child plans against this GPU's
    # SM count and folds in the kernels' order (fusion/reduce_order.h).
    tol = if narrow && name =~ /math:|pow/ then narrow
          elsif name.include?("math:") then single ? (complex ? 8e-6 : 2e-6) : 4e-15
          elsif name =~ /pow|exp|log/ then single ? 4e-7 : 1e-15
          else 0.0
          end
    # gelu's 1 + erf(x / sqrt(2)) cancels for negative x (the spec keeps
    # that form, as PyTorch does, so a large negative x answers zero): the
    # libraries' few-ulp erf differences stay a few ulps of 1, absolute, so
    # values under 1 are compared at an absolute tolerance.
    floor = name.end_with?("math:gelu") ? 1.0 : 1e-30
    # cuBLAS sums a product in its own order (blocked, split over k) and
    # the CPU reference in order over k: they agree to rounding of sums of
    # up to 768 terms of magnitude 16, compared at an absolute floor so a
    # sum that cancels to near zero is not held to a relative bound.
    if name.include?("matmul:")
      tol = narrow ? narrow * 2 : single ? 2e-5 : 1e-13
      floor = 10.0
    end
    bad = w[:values].each_with_index.reject do |x, j|
      close?(x, g[:values][j], tol, floor)
    end
    next if bad.empty?
    x, j = bad.first
    failures << "#{name}[#{i}]: #{bad.size} of #{w[:values].size} differ, " \
                "first at #{j}: cuda #{g[:values][j].inspect} cpu #{x.inspect}"
  end
end

puts "#{cpu.size} cases compared"
if failures.empty?
  puts "all agree"
  exit 0
end
puts failures
exit 1
