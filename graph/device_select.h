// Cumo::CUDA::Runtime.cudaSetDevice (the spec's "Select a GPU device ID"):
// the GPU the engine opens when it starts. The engine runs on one device
// for its lifetime, so a choice after it started must name that device.
#pragma once

namespace cumo {

/// Chooses GPU `ordinal` for the engine: before it starts, the device it
/// will open; after, an ArgumentError unless it is the one in use. A Cuda
/// error where the runtime has no such device (or none at all).
void selectCudaDevice(int ordinal);

/// The GPU the engine runs on, or the one it will open (-1: none).
int currentCudaDevice();

/// Before the engine opens its GPU (on whichever thread starts it): makes
/// the chosen device current there.
void applyChosenDevice();

/// Makes the engine's GPU the current device of the calling thread (the
/// CUDA runtime's current device is per thread, and Ruby threads may all
/// use the engine). Cheap after a thread's first call.
void bindThreadToEngineDevice();

} // namespace cumo
