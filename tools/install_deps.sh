#!/usr/bin/env bash
# Installs what gme264 needs on Debian/Ubuntu, only the packages that are missing, quietly:
#   build-essential (g++, make), libgtest-dev (tests), zlib1g-dev (.yuv.gz input), pkg-config, ffmpeg (decoding
#   check, clip conversion), opencv-doc (its sample videos become the real test clips), clang with its sanitizer and
#   libFuzzer runtime (make fuzz; Debian keeps the runtime in libclang-rt-N-dev, a recommendation of clang).
# CUDA (nvcc) is optional and not installed here: without it the GPU path uses its CPU twin.
# Runs apt-get directly as root, through sudo otherwise.
set -euo pipefail
packages=(build-essential libgtest-dev zlib1g-dev pkg-config ffmpeg opencv-doc clang)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# libFuzzer's runtime: present when clang can link a fuzzer, else the libclang-rt package of clang's version.
fuzzer_links() {
  command -v clang++ >/dev/null &&
    echo 'extern "C" int LLVMFuzzerTestOneInput(const char*, unsigned long) { return 0; }' |
      clang++ -fsanitize=fuzzer -x c++ - -o /dev/null 2>/dev/null
}
if [ ${#missing[@]} -eq 0 ] && ! fuzzer_links; then
  major=$(clang++ --version | sed -n 's/.*clang version \([0-9]*\).*/\1/p' | head -1)
  missing+=("libclang-rt-${major}-dev")
fi
[ ${#missing[@]} -eq 0 ] && exit 0
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install_deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
echo "install_deps: installing ${missing[*]}"
$sudo apt-get update -qq >/dev/null || { echo "install_deps: apt-get update failed" >&2; exit 1; }
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
  || { echo "install_deps: apt-get install ${missing[*]} failed" >&2; exit 1; }
if ! fuzzer_links; then
  major=$(clang++ --version | sed -n 's/.*clang version \([0-9]*\).*/\1/p' | head -1)
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "libclang-rt-${major}-dev" \
    >/dev/null || { echo "install_deps: apt-get install libclang-rt-${major}-dev failed" >&2; exit 1; }
fi
