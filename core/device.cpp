#include "core/device.h"

#include "core/error.h"

namespace cumo {

namespace {
Device *gCurrent = nullptr;
}

Device &currentDevice() {
  if (!gCurrent)
    throw Error(ErrorKind::Internal, "[device] no device selected");
  return *gCurrent;
}

void setCurrentDevice(Device *device) { gCurrent = device; }
bool haveCurrentDevice() { return gCurrent != nullptr; }

} // namespace cumo
