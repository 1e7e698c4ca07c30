// bench/probes/launch_overhead.cu: what a one-kernel plan pays on the
// device for being launched as a CUDA graph, measured the way
// bench/fused_ops.rb measures (events around one launch, then a wait) and
// the way PyTorch's peers do (events around many launches back to back).
// Not part of the library: a standalone program, built with nvcc.
//
//   nvcc -O3 -arch=sm_90 -std=c++17 -o /tmp/launch_overhead bench/probes/launch_overhead.cu
//   /tmp/launch_overhead
//
// Why: at 1x768 to 4096x768 our fused row ops took 6-11 us against
// torch's 5.6-8.7 (H100, 2026-12-05), on kernels of 2-8 us. Prints one JSON
// line per (work, launch, timing): work "empty" (a kernel that returns) or
// "copy_12MB" (4096 x 768 floats read and written, a softmax's bytes);
// launch "direct" (cudaLaunchKernel) or "graph" (a one-node graph
// replayed); timing "single" (events around each launch, a wait between)
// or "back_to_back" (events around 100 launches, divided by 100).
#include "probe_common.cuh"

namespace {

__global__ void emptyK() {}

__global__ void copyK(const float4 *in, float4 *out, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x)
    out[i] = in[i];
}

struct Work {
  const char *name;
  const float4 *in = nullptr;
  float4 *out = nullptr;
  size_t n = 0;
  void launch(cudaStream_t s) const {
    if (n == 0)
      emptyK<<<1, 32, 0, s>>>();
    else
      copyK<<<unsigned(sms * 8), kBlock, 0, s>>>(in, out, n);
  }
};

double timeIt(const Work &w, bool graph, int perEvent, int samples) {
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaGraphExec_t ge = nullptr;
  if (graph) {
    cudaGraph_t g;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    w.launch(s);
    CK(cudaStreamEndCapture(s, &g));
    CK(cudaGraphInstantiate(&ge, g, 0));
    CK(cudaGraphDestroy(g));
  }
  auto once = [&] {
    if (graph)
      CK(cudaGraphLaunch(ge, s));
    else
      w.launch(s);
  };
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  for (int i = 0; i < 20; ++i)
    once();
  CK(cudaStreamSynchronize(s));
  std::vector<float> ms;
  for (int r = 0; r < samples; ++r) {
    CK(cudaEventRecord(a, s));
    for (int i = 0; i < perEvent; ++i)
      once();
    CK(cudaEventRecord(b, s));
    CK(cudaEventSynchronize(b));
    float t = 0;
    CK(cudaEventElapsedTime(&t, a, b));
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  if (ge)
    CK(cudaGraphExecDestroy(ge));
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  CK(cudaStreamDestroy(s));
  return double(ms[ms.size() / 2]) * 1e3 / perEvent;
}

} // namespace

int main() {
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  size_t n = size_t(4096) * 768 / 4;
  float4 *in, *out;
  CK(cudaMalloc(&in, n * sizeof(float4)));
  CK(cudaMalloc(&out, n * sizeof(float4)));
  CK(cudaMemset(in, 0, n * sizeof(float4)));
  Work works[] = {{"empty"}, {"copy_12MB", in, out, n}};
  for (const Work &w : works)
    for (bool graph : {false, true})
      for (int perEvent : {1, 100}) {
        double us = timeIt(w, graph, perEvent, perEvent == 1 ? 200 : 20);
        std::printf("{\"probe\":\"launch_overhead\",\"device\":\"%s\",\"work\":\"%s\","
                    "\"launch\":\"%s\",\"timing\":\"%s\",\"us\":%.3f}\n",
                    prop.name, w.name, graph ? "graph" : "direct",
                    perEvent == 1 ? "single" : "back_to_back", us);
      }
  CK(cudaFree(in));
  CK(cudaFree(out));
  return 0;
}
