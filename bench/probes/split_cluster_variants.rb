# bench/probes/split_cluster_variants.rb SRC_DIR OUT_DIR: a small product
# whose k is split over blocks, its splits folded through a thread block
# cluster's shared memory rather than global memory and a counter, for
# bench/kernel_times --variants OUT_DIR to time beside the generated kernels.
#
#   kernel_times --dry-run --sources /tmp/src --cases mlp_proj,plain_3072x768 > /tmp/src/dry_run.jsonl
#   ruby bench/probes/split_cluster_variants.rb /tmp/src /tmp/variants
#   kernel_times --early-start --cases mlp_proj,plain_3072x768 --variants /tmp/variants
#
# Why: the MLP projection (3072x768, k over three blocks a tile in BFloat,
# two in SFloat) took 6.30 us with early starts on an H100 against 3.98
# for qkv's plain product (768x2304, no split), and ncu put 12% of its
# stall samples at the barrier after the split's arrival (README, GPT-2
# decode). Its end is a chain: each block stores its partial sums to
# global memory, thread 0's acquire-release atomic counts it in, and the
# last block loads the others' partials back from the L2 and runs the
# epilogue. On sm_90 the splits of one tile can be one cluster
# (`__cluster_dims__`): each block leaves its partials in its own shared
# memory, a cluster barrier, and the block of rank 0 reads the others'
# through distributed shared memory, adds them in the same order (split
# 0, 1, 2: the same bits) and runs the epilogue; a second barrier keeps
# the others' shared memory alive until it has. The variant:
#   - cluster: the blocks of a tile's splits adjacent (split = block %
#     splits) and one cluster, as above.
# An edit whose text is not found stops the script: the generator changed.
#
# Measured on a lent H100 80GB HBM3, 2026-12-07 09:29-09:30 UTC
# (`KT_FLAGS=--early-start bench/variants_device_run.sh OUT split_cluster`
# three rounds, then without early starts; us, generated -> cluster):
#
#   kernel, class           early starts, rounds 1 / 2 / 3                  without
#   mlp_proj, SFloat        8.71 / 8.77 / 8.74 -> 9.12 / 9.09 / 9.15        9.94 -> 10.66
#   mlp_proj, BFloat        6.30 / 6.24 / 6.28 -> 6.31 / 6.32 / 6.28        8.03 -> 8.51
#   plain_3072x768, SFloat  8.79 / 8.82 / 8.83 -> 9.03 / 9.03 / 9.05        9.82 -> 10.82
#   plain_3072x768, BFloat  6.13 / 6.12 / 6.15 -> 6.27 / 6.25 / 6.24        7.92 -> 8.44
#
# Level or slower everywhere (1.00-1.10x): the split's end through global
# memory is not what the projection waits for, or a cluster's launch and
# barriers cost what they save. Not taken.
require "json"
require_relative "variant_files"

src_dir, out_dir = ARGV
abort "usage: split_cluster_variants.rb SRC_DIR OUT_DIR" unless src_dir && out_dir

# N of each case's product (bench/kernel_times.cpp).
COLUMNS = { "mlp_proj" => 768, "plain_3072x768" => 768 }.freeze

launches = File.readlines(File.join(src_dir, "dry_run.jsonl")).filter_map do |line|
  JSON.parse(line) if line.start_with?("{")
end

HELPERS = <<~CUDA
  namespace cumo_k {
  // A barrier of every thread of the cluster: its shared-memory writes
  // before it are visible to every block of the cluster after it.
  __device__ __forceinline__ void cluster_sync() {
    asm volatile("barrier.cluster.arrive.release.aligned;\\n\\t"
                 "barrier.cluster.wait.acquire.aligned;" ::: "memory");
  }
  // The float at `p` in the shared memory of the cluster's block `rank`.
  __device__ __forceinline__ float cluster_load(const float *p, unsigned rank) {
    unsigned local = (unsigned)__cvta_generic_to_shared(p), remote;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(local), "r"(rank));
    float v;
    asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(v) : "r"(remote) : "memory");
    return v;
  }
  } // namespace cumo_k

CUDA

TAIL = /  if \(splits == 1\) return;\n  __syncthreads\(\);\n  if \(threadIdx\.x == 0\)\n    last = cumo_k::arrive_last\(counters \+ bi \* tiles \+ tile, \(unsigned int\)splits\);\n  __syncthreads\(\);\n  if \(!last\) return;\n  for \(IX t = threadIdx\.x; t < M \* width; t \+= blockDim\.x\) \{\n    const IX r = t \/ width, j = tile \* width \+ t % width;\n    if \(j >= N\) continue;\n    float total = __ldcg\([^\n]*\);\n    #pragma unroll 8\n    for \(IX q = 1; q < splits; \+\+q\)\n      total = cumo_ops::wadd\(total, __ldcg\([^\n]*\)\);\n/

NEW_TAIL = <<~CUDA.gsub(/^/, "  ")
  if (splits == 1) return;
  cumo_k::cluster_sync();
  if (split == 0)
  for (IX t = threadIdx.x; t < M * width; t += blockDim.x) {
    const IX r = t / width, j = tile * width + t % width;
    if (j >= N) continue;
    float total = cl_part[r][t % width];
    for (IX q = 1; q < splits; ++q)
      total = cumo_ops::wadd(total, cumo_k::cluster_load(&cl_part[r][t % width], (unsigned)q));
CUDA

VariantFiles.write_all(src_dir, out_dir, "{mlp_proj,plain_3072x768}_*_0.cu", "split product") do |text, stem, path|
  name, dtype = stem.match(/\A(.+)_(SFloat|BFloat)_0\z/).captures
  launch = launches.find { |l| l["case"] == name && l["dtype"] == dtype } or abort "#{path}: not in the dry run"
  cv = text[/constexpr int CV = (\d+);/, 1].to_i
  tiles = (COLUMNS.fetch(name) + launch["lanes"] * cv - 1) / (launch["lanes"] * cv)
  splits = launch["grid"] / tiles
  abort "#{path}: #{splits} splits, more than a portable cluster" if splits > 8
  next {} if splits < 2
  v = text
  v = VariantFiles.edit(v, 'extern "C" __global__ void __launch_bounds__',
                        HELPERS + %(extern "C" __global__ void __cluster_dims__(#{splits}, 1, 1) __launch_bounds__), "#{path}: entry")
  v = VariantFiles.edit(v, "  __shared__ bool last;\n", "  __shared__ float cl_part[MR][32 * CV];\n", "#{path}: shared")
  v = VariantFiles.edit(v, "  const IX tile = (IX)blockIdx.x % tiles;\n  const IX split = (IX)blockIdx.x / tiles % splits;\n  const IX bi = (IX)blockIdx.x / tiles / splits;\n",
                        "  const IX split = (IX)blockIdx.x % splits;\n  const IX tile = (IX)blockIdx.x / splits % tiles;\n  const IX bi = (IX)blockIdx.x / splits / tiles;\n", "#{path}: block order")
  v = VariantFiles.edit(v, "else partials[(((long long)bi * splits + split) * M + r) * N + j] = total;",
                        "else cl_part[r][threadIdx.x] = total;", "#{path}: partials")
  v = VariantFiles.edit(v, TAIL, NEW_TAIL, "#{path}: tail")
  v = VariantFiles.edit(v, "  if (threadIdx.x == 0) counters[bi * tiles + tile] = 0u;\n", "  cumo_k::cluster_sync();\n", "#{path}: end")
  { "cluster" => v }
end
