// bench/probes/bf16_arith.cu: are sm_90's own bfloat16 add, sub and mul
// (add.rn.bf16 ...) bit for bit what the library computes on the device
// for a BFloat op (cumo_ops::wadd ...: widen both to float, compute,
// round to bfloat16 with the NaN rule of core/element_types.h), for every
// pair of bit patterns (2^32 a op)? Not part of the library: a standalone
// program, built with nvcc from the repository's root.
//
//   nvcc -O2 -arch=sm_90 -std=c++17 -I. -o /tmp/bf16_arith bench/probes/bf16_arith.cu
//   /tmp/bf16_arith
//
// One JSON line an op: the pairs whose results differ, those where either
// result is a NaN, and the first sixteen others. If none differ, the row
// programs of bench/probes/bf16_variants.rb (one instruction an op where
// the generated code takes about six) give the same bits. Not yet run on
// a GPU (2026-12-06: the session's device time had run out).
#include "ops/portable_ops.h"

#include <cstdio>
#include <cstring>

__device__ __forceinline__ unsigned short hw(int op, unsigned short a, unsigned short b) {
  unsigned short r;
  if (op == 0) asm("add.rn.bf16 %0, %1, %2;" : "=h"(r) : "h"(a), "h"(b));
  else if (op == 1) asm("sub.rn.bf16 %0, %1, %2;" : "=h"(r) : "h"(a), "h"(b));
  else asm("mul.rn.bf16 %0, %1, %2;" : "=h"(r) : "h"(a), "h"(b));
  return r;
}
__device__ __forceinline__ unsigned short ours(int op, unsigned short a, unsigned short b) {
  using cumo_ops::bfloat16;
  bfloat16 x = bfloat16::of_bits(a), y = bfloat16::of_bits(b);
  bfloat16 r = op == 0 ? cumo_ops::wadd(x, y) : op == 1 ? cumo_ops::wsub(x, y) : cumo_ops::wmul(x, y);
  return r.bits;
}
struct Result { unsigned long long bad, badNan, badNonNan; unsigned int first[16][3]; unsigned int n; };
__global__ void check(int op, Result *res) {
  unsigned long long bad = 0, badNan = 0;
  for (unsigned long long p = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; p < (1ull << 32);
       p += (unsigned long long)gridDim.x * blockDim.x) {
    unsigned short a = (unsigned short)(p >> 16), b = (unsigned short)p;
    unsigned short h = hw(op, a, b), o = ours(op, a, b);
    if (h != o) {
      ++bad;
      bool nan = ((o & 0x7f80) == 0x7f80 && (o & 0x7f)) || ((h & 0x7f80) == 0x7f80 && (h & 0x7f));
      if (nan) ++badNan;
      else {
        unsigned int i = atomicAdd(&res->n, 1u);
        if (i < 16) { res->first[i][0] = a; res->first[i][1] = b; res->first[i][2] = (unsigned)h << 16 | o; }
      }
    }
  }
  atomicAdd(&res->bad, bad);
  atomicAdd(&res->badNan, badNan);
}
int main() {
  const char *names[] = {"add", "sub", "mul"};
  for (int op = 0; op < 3; ++op) {
    Result *r; cudaMallocManaged(&r, sizeof(Result)); memset(r, 0, sizeof(Result));
    check<<<132 * 16, 256>>>(op, r);
    cudaError_t e = cudaDeviceSynchronize();
    printf("{\"op\":\"%s\",\"error\":\"%s\",\"pairs\":4294967296,\"differ\":%llu,\"differ_nan\":%llu,\"differ_not_nan\":%u,\"first\":[",
           names[op], cudaGetErrorString(e), r->bad, r->badNan, r->n);
    for (unsigned i = 0; i < r->n && i < 16; ++i)
      printf("%s[\"%04x\",\"%04x\",\"hw %04x\",\"ours %04x\"]", i ? "," : "", r->first[i][0], r->first[i][1], r->first[i][2] >> 16, r->first[i][2] & 0xffff);
    printf("]}\n");
    cudaFree(r);
  }
}
