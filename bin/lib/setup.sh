# shellcheck shell=bash
# Shared set-up for bin/run, bin/test and .ci/run: source this file, then call
# cumo_setup. It
#   1. finds the tools the build needs, and on a Debian machine installs with
#      apt-get only those that are absent (or, on the GPU machine, where there
#      is no network and no Ruby, sources the carried .device/on-device.sh
#      instead and never calls apt);
#   2. configures the build folder with meson if it is not configured yet (or
#      was configured by another meson, for another source folder, or with
#      another ruby, compiler or CUMO_MESON_ARGS);
#   3. builds it with ninja, quietly unless something fails.
# Afterwards CUMO_ROOT, CUMO_BUILD (absolute paths) and CUMO_JOBS are set.
#
# Knobs (environment):
#   CUMO_BUILD_DIR    build folder (default: build/ in the repository root)
#   CUMO_MESON_ARGS   extra `meson setup` arguments (a change reconfigures
#                     the folder afresh; or use `meson configure build -D...`)
#   CUMO_JOBS         parallel compile jobs (default: the cores we may use)
#   CUMO_ON_DEVICE=1  force the GPU-machine path
#   CUMO_NO_INSTALL=1 never call apt-get; fail and say what is missing
#   CUMO_PREBUILT=1   bin/run only: no configure and no build; CUMO_BUILD_DIR
#                     names a folder bin/pack-prebuilt made (a stripped
#                     extension and bench tools built here), so a call on
#                     the GPU machine spends its minutes on the run
#
# Written for `set -euo pipefail` callers: every failure exits with a message.

CUMO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)

cumo_say() { printf 'cumo-setup: %s\n' "$*" >&2; }
cumo_die() { cumo_say "error: $*"; exit 1; }

# ---------------------------------------------------------------- tools

# The C++ compiler meson will pick: $CXX first, as meson does.
cumo_cxx() {
  local c
  for c in ${CXX:-} c++ g++ clang++; do
    if command -v "$c" >/dev/null 2>&1; then printf '%s\n' "$c"; return 0; fi
  done
  return 1
}

# Whether the compiler finds a header, with CPATH honoured (the GPU machine
# points CPATH at the carried doctest and LLVM headers); extra -I flags follow.
cumo_has_header() {
  local cxx hdr=$1; shift
  cxx=$(cumo_cxx) || return 1
  printf '#include <%s>\n' "$hdr" | "$cxx" -x c++ -std=c++17 -fsyntax-only "$@" - >/dev/null 2>&1
}

# libLLVMSupport.a where meson.build looks for it: Debian's llvm-14, or any
# folder on LIBRARY_PATH (the GPU machine has no llvm-config).
cumo_has_llvm() {
  local d dirs=(/usr/lib/llvm-14/lib)
  local IFS=:
  # shellcheck disable=SC2206
  dirs+=(${LIBRARY_PATH:-})
  unset IFS
  cumo_has_header llvm/ADT/SmallVector.h -I/usr/lib/llvm-14/include || return 1
  for d in "${dirs[@]}"; do
    [ -n "$d" ] && [ -f "$d/libLLVMSupport.a" ] && return 0
  done
  return 1
}

# Prints, one a line, the Debian packages that would supply the tools that are
# missing. Tools are probed directly (not dpkg records): what matters is what
# this shell finds, whoever installed it.
cumo_missing_packages() {
  if ! command -v ruby >/dev/null 2>&1; then
    echo ruby      # ruby-dev does not depend on the ruby package (/usr/bin/ruby)
    echo ruby-dev
    echo ruby-minitest
  else
    ruby -rrbconfig -e 'exit File.exist?(File.join(RbConfig::CONFIG["rubyhdrdir"].to_s, "ruby.h"))' \
      >/dev/null 2>&1 || echo ruby-dev
    ruby -e 'require "minitest"' >/dev/null 2>&1 || echo ruby-minitest
  fi
  command -v meson >/dev/null 2>&1 || echo meson
  command -v ninja >/dev/null 2>&1 || echo ninja-build
  cumo_cxx >/dev/null || echo g++
  command -v python3 >/dev/null 2>&1 || echo python3
  command -v pkg-config >/dev/null 2>&1 || command -v pkgconf >/dev/null 2>&1 || echo pkg-config
  # Header checks need a compiler; when it is missing, g++ comes first and the
  # headers are checked again after the install.
  if cumo_cxx >/dev/null; then
    cumo_has_header doctest/doctest.h || echo doctest-dev
    cumo_has_llvm || echo llvm-14-dev
  else
    [ -f /usr/include/doctest/doctest.h ] || echo doctest-dev
    [ -f /usr/lib/llvm-14/lib/libLLVMSupport.a ] || echo llvm-14-dev
  fi
}

# apt-get as root, or through password-less sudo; nothing else.
cumo_apt() {
  if [ "$(id -u)" -eq 0 ]; then
    env DEBIAN_FRONTEND=noninteractive LC_ALL=C apt-get "$@"
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo env DEBIAN_FRONTEND=noninteractive LC_ALL=C apt-get "$@"
  else
    return 1
  fi
}

# True when apt's package lists know a package (a fresh image has no lists).
cumo_apt_knows() {
  LC_ALL=C apt-cache policy "$1" 2>/dev/null | grep -q 'Candidate: [^(]'
}

cumo_install() {
  local pkgs=("$@") p updated=0 log
  command -v apt-get >/dev/null 2>&1 ||
    cumo_die "missing ${pkgs[*]} and no apt-get here: install them by hand"
  [ "$(id -u)" -eq 0 ] || { command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; } ||
    cumo_die "missing ${pkgs[*]}: run as root, or: sudo apt-get install ${pkgs[*]}"
  cumo_say "installing ${pkgs[*]} (apt-get)"
  log=$(mktemp)
  # `apt-get update` only when the lists lack a package: it is the slow,
  # network-bound step, and most machines have current lists.
  for p in "${pkgs[@]}"; do
    if ! cumo_apt_knows "$p"; then
      cumo_apt update -qq >>"$log" 2>&1 || { cat "$log" >&2; rm -f "$log"; cumo_die "apt-get update failed"; }
      updated=1
      break
    fi
  done
  # --no-install-recommends: recommends add hundreds of MB (docs, dpkg-dev)
  # and nothing the build uses. Stale lists (404s) get one update and a retry.
  until cumo_apt install -y -qq --no-install-recommends -o Dpkg::Use-Pty=0 "${pkgs[@]}" >>"$log" 2>&1; do
    if [ "$updated" -eq 1 ]; then
      cat "$log" >&2; rm -f "$log"; cumo_die "apt-get install ${pkgs[*]} failed"
    fi
    cumo_apt update -qq >>"$log" 2>&1 || true
    updated=1
  done
  rm -f "$log"
  hash -r   # new commands on PATH
}

# Whether we are on the GPU machine: it has the carried .device/, no Ruby of
# its own and a GPU driver (or the caller says so). The driver test is what
# tells it from a fresh development machine where ../shared/device/prepare
# ran before anything was installed: that one has .device/ and no Ruby too,
# and must install with apt, not refuse.
cumo_on_device() {
  [ "${CUMO_ON_DEVICE:-}" = 1 ] && return 0
  [ -f "$CUMO_ROOT/.device/on-device.sh" ] && ! command -v ruby >/dev/null 2>&1 &&
    { command -v nvidia-smi >/dev/null 2>&1 || [ -e /dev/nvidiactl ]; }
}

# On the GPU machine: the carried Ruby, headers and LLVM library (there is
# no network there, so they replace apt).
cumo_device_env() {
  [ -f "$CUMO_ROOT/.device/on-device.sh" ] ||
    cumo_die "CUMO_ON_DEVICE=1 but no .device/on-device.sh: run ../shared/device/prepare and carry .device"
  # on-device.sh is not ours and may use unset variables.
  set +u
  # shellcheck source=/dev/null
  . "$CUMO_ROOT/.device/on-device.sh"
  set -u
  export CUMO_ON_DEVICE=1
}

cumo_tools() {
  local missing
  if cumo_on_device; then
    cumo_device_env
    missing=$(cumo_missing_packages | grep -vx 'pkg-config\|python3' || true)
    [ -z "$missing" ] ||
      cumo_die "on the GPU machine, still missing: ${missing//$'\n'/ } (re-run ../shared/device/prepare, carry .device)"
    return 0
  fi
  missing=$(cumo_missing_packages)
  [ -z "$missing" ] && return 0
  [ "${CUMO_NO_INSTALL:-}" = 1 ] && cumo_die "missing: ${missing//$'\n'/ } (CUMO_NO_INSTALL=1)"
  # shellcheck disable=SC2086
  cumo_install $missing
  # Headers were only guessed while the compiler was missing: look again.
  missing=$(cumo_missing_packages)
  if [ -n "$missing" ]; then
    # shellcheck disable=SC2086
    cumo_install $missing
    missing=$(cumo_missing_packages)
  fi
  [ -z "$missing" ] ||
    cumo_die "installed, but the tools for these are still not found: ${missing//$'\n'/ }"
}

# ---------------------------------------------------------------- build

# Compile jobs: the cores this process may use. nproc honours CPU affinity
# but not a cgroup CPU quota (containers, CI runners), which ninja's default
# (nproc + 2) would overrun; each C++20 compile with LLVM headers also wants
# about 1.5 GB, so the memory we have caps it too.
cumo_jobs() {
  local n q p mem
  n=$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)
  if [ -r /sys/fs/cgroup/cpu.max ] && read -r q p </sys/fs/cgroup/cpu.max && [ "$q" != max ]; then
    q=$(((q + p - 1) / p))                                        # cgroup v2
  elif [ -r /sys/fs/cgroup/cpu/cpu.cfs_quota_us ] &&
       read -r q </sys/fs/cgroup/cpu/cpu.cfs_quota_us && [ "$q" -gt 0 ] &&
       read -r p </sys/fs/cgroup/cpu/cpu.cfs_period_us; then
    q=$(((q + p - 1) / p))                                        # cgroup v1
  else
    q=$n
  fi
  [ "$q" -ge 1 ] && [ "$q" -lt "$n" ] && n=$q
  mem=$(awk '/^MemAvailable:/ { print int($2 / 1500000) }' /proc/meminfo 2>/dev/null || echo "$n")
  [ "${mem:-0}" -ge 1 ] && [ "$mem" -lt "$n" ] && n=$mem
  [ "$n" -ge 1 ] || n=1
  echo "$n"
}

# What meson found at configure time and never looks for again by itself:
# the ruby (find_program keeps its path), the compiler, our extra arguments.
# Kept in the build folder; a change means configuring afresh.
CUMO_STAMP=cumo-setup.stamp
cumo_stamp() {
  local cxx
  cxx=$(cumo_cxx)
  printf 'ruby=%s\ncxx=%s %s\nmeson_args=%s\n' "$(command -v ruby)" "$cxx" \
    "$(realpath "$(command -v "$cxx")")" "${CUMO_MESON_ARGS:-}"
}

# Whether $CUMO_BUILD is a build folder this meson can use as it stands:
# configured (build.ninja), by the same meson major.minor (a newer meson
# refuses a folder made by Debian's 1.0, and the reverse), for this source
# folder (a carried folder records the paths of the machine that made it),
# with the same tools (cumo_stamp).
cumo_configured() {
  local info=$CUMO_BUILD/meson-info/meson-info.json have want rec
  [ -f "$CUMO_BUILD/build.ninja" ] && [ -f "$info" ] || return 1
  rec=$(ruby -rjson -e '
    j = JSON.parse(File.read(ARGV[0]))
    v = j["meson_version"]
    puts "#{v["major"]}.#{v["minor"]}", j["directories"]["source"], j["directories"]["build"]' "$info" 2>/dev/null) ||
    return 1
  want=$(meson --version | cut -d. -f1,2)
  have=$(sed -n 1p <<<"$rec")
  if [ "$have" != "$want" ]; then
    cumo_say "$CUMO_BUILD was configured by meson $have, this is $want: configuring afresh"
    return 1
  fi
  if [ "$(realpath -m "$(sed -n 2p <<<"$rec")")" != "$CUMO_ROOT" ] ||
     [ "$(realpath -m "$(sed -n 3p <<<"$rec")")" != "$CUMO_BUILD" ]; then
    cumo_say "$CUMO_BUILD was configured for other paths: configuring afresh"
    return 1
  fi
  # A folder configured by hand (no stamp) is adopted as it is.
  if [ -f "$CUMO_BUILD/$CUMO_STAMP" ] && [ "$(cat "$CUMO_BUILD/$CUMO_STAMP")" != "$(cumo_stamp)" ]; then
    cumo_say "$CUMO_BUILD was configured with another ruby, compiler or CUMO_MESON_ARGS: configuring afresh"
    return 1
  fi
  cumo_stamp >"$CUMO_BUILD/$CUMO_STAMP"
}

cumo_configure() {
  local out extra=()
  cumo_configured && return 0
  if [ -e "$CUMO_BUILD" ]; then
    # Only ever delete what is plainly a meson build folder (or empty): the
    # folder may come from CUMO_BUILD_DIR, and a typo must not cost a tree.
    if [ -d "$CUMO_BUILD/meson-private" ] || [ -d "$CUMO_BUILD/meson-info" ] ||
       [ -f "$CUMO_BUILD/build.ninja" ] || [ -z "$(ls -A "$CUMO_BUILD")" ]; then
      rm -rf "$CUMO_BUILD"
    else
      cumo_die "$CUMO_BUILD exists and is not a meson build folder; not touching it"
    fi
  fi
  read -r -a extra <<<"${CUMO_MESON_ARGS:-}"
  cumo_say "configuring $CUMO_BUILD"
  if ! out=$(meson setup "${extra[@]}" "$CUMO_BUILD" "$CUMO_ROOT" 2>&1); then
    printf '%s\n' "$out" | tail -n 40 >&2
    cumo_die "meson setup failed (full log: $CUMO_BUILD/meson-logs/meson-log.txt)"
  fi
  cumo_stamp >"$CUMO_BUILD/$CUMO_STAMP"
  # The one line of the configure summary worth seeing: which executors built.
  printf '%s\n' "$out" | grep -m1 'CUDA executor' | sed 's/^ */cumo-setup: /' >&2 || true
}

# Quiet on success; on failure the compiler's messages without ninja's
# "[12/80] Compiling ..." progress lines, then the failed targets again and
# the first errors, since warnings from other files can bury them.
cumo_build() {
  local out
  if ! out=$(ninja -C "$CUMO_BUILD" -j "$CUMO_JOBS" 2>&1); then
    printf '%s\n' "$out" | grep -v '^\[[0-9]*/[0-9]*\] ' >&2 || true
    cumo_say "error: build failed:"
    printf '%s\n' "$out" | sed 's/\x1b\[[0-9;]*[A-Za-z]//g' |
      grep -E '^FAILED:|: (fatal )?error:|^ninja: error' | head -n 20 | sed 's/^/  /' >&2 || true
    return 1
  fi
}

# Everything before the build: tools, the device environment, configure.
# Kept apart from the build so that bin/test can report a failed build as
# a failed test rather than exiting.
cumo_prepare() {
  CUMO_BUILD=${CUMO_BUILD_DIR:-$CUMO_ROOT/build}
  CUMO_BUILD=$(realpath -m "$CUMO_BUILD")   # relative to the caller's folder
  cumo_tools
  CUMO_JOBS=${CUMO_JOBS:-$(cumo_jobs)}
  # meson test runs tests in parallel by its own count of CPUs; give it ours.
  export MESON_TESTTHREADS=${MESON_TESTTHREADS:-$CUMO_JOBS}
  export CUMO_ROOT CUMO_BUILD CUMO_JOBS
  cumo_configure
}

cumo_setup() {
  if [ "${CUMO_PREBUILT:-}" = 1 ]; then
    cumo_use_prebuilt
    return
  fi
  cumo_prepare
  cumo_build || exit 1
}

# CUMO_PREBUILT=1: the tools to run (on the GPU machine, the carried Ruby),
# and CUMO_BUILD_DIR's prebuilt extension as it is.
cumo_use_prebuilt() {
  [ -n "${CUMO_BUILD_DIR:-}" ] || cumo_die "CUMO_PREBUILT=1 needs CUMO_BUILD_DIR (bin/pack-prebuilt's folder)"
  CUMO_BUILD=$(realpath -m "$CUMO_BUILD_DIR")
  [ -f "$CUMO_BUILD/ruby/cumo_ext.so" ] ||
    cumo_die "CUMO_PREBUILT=1: no $CUMO_BUILD/ruby/cumo_ext.so (bin/pack-prebuilt makes it)"
  if cumo_on_device; then
    cumo_device_env
  fi
  command -v ruby >/dev/null 2>&1 || cumo_die "CUMO_PREBUILT=1: no ruby"
  [ ! -f "$CUMO_BUILD/BUILT_FROM" ] || cumo_say "prebuilt: $(cat "$CUMO_BUILD/BUILT_FROM")"
  CUMO_JOBS=${CUMO_JOBS:-1}
  export CUMO_ROOT CUMO_BUILD CUMO_JOBS
}
