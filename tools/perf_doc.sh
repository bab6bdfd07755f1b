#!/usr/bin/env bash
# Regenerates sections of doc/PERFORMANCE.md: runs the benchmark behind each section named and replaces the text
# between its markers
#     <!-- perf:NAME -->
#     ...
#     <!-- /perf -->
# with a stamp (command, machine, GPU, date, source version) and the benchmark's own printed output, verbatim: the
# document shows what the program printed, so a change in a benchmark's columns needs no change here.
#
# Usage: tools/perf_doc.sh [--doc FILE] SECTION...
#   cpu             = cpu-me cpu-encode                       (make perf-doc; any machine)
#   gpu             = gpu-integer-me gpu-e2e gpu-quality      (make perf-doc-gpu; a machine with a CUDA GPU)
#   cpu-me          bin/bench_me: CPU integer ME per picture and the pixel primitives' speeds
#   cpu-encode      tools/bench_encode.sh: encode speed and stage split on one core
#   gpu-integer-me  bin/bench_gpu $BENCH_GPU_ARGS: integer ME per picture on the GPU
#   gpu-e2e         PARTS=time tools/bench_gpu_e2e.sh: whole-clip encode time, GPU run against the unmodified run,
#                   Eq. 3 (one encode at a time, the unmodified run's encodes are the longest part)
#   gpu-quality     PARTS=rd tools/bench_gpu_e2e.sh: BD-rate of the GPU run (GPUTopK 1, 8, temporal centre)
#                   against the unmodified run on the real clips (parallel encodes: quality only)
# Needs the programs built (the make targets build them; GME_BIN names their folder, default bin) and, for the
# encodes, the clips of sequences/make_clips.sh. The stamp's source is the version the programs were built from (their
# --version), which made the figures; where it is not the tree's own (`git describe`: programs not rebuilt since a
# change, or a copy of the tree without its history), the script says so and the stamp names both. A section whose benchmark fails keeps its old text; the script then exits 1.
# The GPU sections refuse to run without a CUDA GPU: the CPU twin would stand in and the figures would not be the
# GPU's.
set -uo pipefail
cd "$(dirname "$0")/.."

doc=doc/PERFORMANCE.md
if [ "${1:-}" = "--doc" ]; then doc=${2:?usage: tools/perf_doc.sh [--doc FILE] SECTION...}; shift 2; fi
[ $# -gt 0 ] || { echo "usage: tools/perf_doc.sh [--doc FILE] SECTION... (cpu, gpu, or names in the script's header)" >&2; exit 2; }
[ -f "$doc" ] || { echo "perf_doc: $doc not found" >&2; exit 1; }

sections=()
for s in "$@"; do
  case "$s" in
    cpu) sections+=(cpu-me cpu-encode) ;;
    gpu) sections+=(gpu-integer-me gpu-e2e gpu-quality) ;;
    cpu-me|cpu-encode|gpu-integer-me|gpu-e2e|gpu-quality) sections+=("$s") ;;
    *) echo "perf_doc: unknown section '$s' (expected cpu, gpu, cpu-me, cpu-encode, gpu-integer-me, gpu-e2e, gpu-quality)" >&2
       exit 2 ;;
  esac
done
for s in "${sections[@]}"; do
  grep -q "^<!-- perf:$s -->\$" "$doc" ||
    { echo "perf_doc: $doc has no '<!-- perf:$s -->' marker" >&2; exit 1; }
done

cpu_model() { sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1; }
load() { cut -d' ' -f1-3 /proc/loadavg; }
gpu_name() {
  if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1 | sed 's/, /, driver /'
  else
    echo none
  fi
}
have_gpu() { [ "$(gpu_name)" != none ]; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

bin=${GME_BIN:-bin}

# The command behind a section, as one shell line (also what the stamp shows).
command_of() {
  case "$1" in
    cpu-me) echo "$bin/bench_me" ;;
    cpu-encode) echo "tools/bench_encode.sh" ;;
    gpu-integer-me) echo "$bin/bench_gpu${BENCH_GPU_ARGS:+ $BENCH_GPU_ARGS}" ;;
    gpu-e2e) echo "PARTS=time tools/bench_gpu_e2e.sh" ;;
    gpu-quality) echo "PARTS=rd tools/bench_gpu_e2e.sh" ;;
  esac
}

# The version the section's program was built from: the git field of its --version line ("unknown" without one).
built_version() {
  local prog
  case "$1" in
    cpu-me) prog=$bin/bench_me ;;
    gpu-integer-me) prog=$bin/bench_gpu ;;
    *) prog=$bin/lencod ;;  # the encodes behind the other sections
  esac
  local v
  v=$("$prog" --version 2>/dev/null | sed -n 's/^.*(git \([^,)]*\).*$/\1/p' | head -1)
  echo "${v:-unknown}"
}
tree_version=$(git describe --always --dirty --abbrev=12 2>/dev/null || echo unknown)

status=0
for s in "${sections[@]}"; do
  case "$s" in
    gpu-*) if ! have_gpu; then
             echo "perf_doc: $s needs a CUDA GPU (nvidia-smi finds none): section left as it was" >&2
             status=1; continue
           fi ;;
  esac
  cmd=$(command_of "$s")
  echo "perf_doc: $s: $cmd" >&2
  load_before=$(load)
  start=$(date -u '+%Y-%m-%d %H:%M UTC')
  # bench_gpu_e2e.sh keeps its rdsweep output under the directory it is given; a scratch one here.
  case "$s" in gpu-e2e|gpu-quality) run="$cmd $tmp/e2e_$s" ;; *) run=$cmd ;; esac
  if ! bash -c "$run" >"$tmp/$s.out" 2>"$tmp/$s.err"; then
    echo "perf_doc: $s: '$cmd' failed; section left as it was. Its last lines:" >&2
    tail -5 "$tmp/$s.err" "$tmp/$s.out" >&2
    status=1; continue
  fi
  # A benchmark that ran but says it could not do its job (e.g. an rdsweep failure inside bench_gpu_e2e.sh).
  if grep -q "failed" "$tmp/$s.out" "$tmp/$s.err"; then
    echo "perf_doc: $s: the benchmark reports a failure; section left as it was:" >&2
    grep -h "failed" "$tmp/$s.out" "$tmp/$s.err" >&2
    status=1; continue
  fi
  built=$(built_version "$s")
  if [ "$built" != "$tree_version" ]; then
    echo "perf_doc: $s: warning: the programs were built from $built, the tree is at $tree_version (rebuild with make" \
         "for figures of this tree); the stamp names both" >&2
    built="$built (the programs' build; the tree: $tree_version)"
  fi
  {
    echo "<!-- perf:$s -->"
    echo "Command: \`$cmd\` (regenerate: \`tools/perf_doc.sh $s\`)  "
    echo "Machine: $(cpu_model), $(nproc) cores online, load average $load_before before and $(load) after  "
    echo "GPU: $(gpu_name)  "
    echo "Date: $start; source: $built"
    echo
    echo '```text'
    sed 's/[[:space:]]*$//' "$tmp/$s.out"
    echo '```'
    echo "<!-- /perf -->"
  } >"$tmp/$s.section"
  # Replace the section in a copy, then move the copy over the document: never a half-written document.
  python3 - "$doc" "$s" "$tmp/$s.section" "$tmp/doc.new" <<'EOF' || { status=1; continue; }
import sys
doc, name, section, new = sys.argv[1:5]
lines = open(doc, encoding="utf-8").read().split("\n")
begin = "<!-- perf:%s -->" % name
try:
    b = lines.index(begin)
    e = lines.index("<!-- /perf -->", b + 1)
except ValueError:
    sys.exit("perf_doc: %s: no '%s' ... '<!-- /perf -->' pair" % (doc, begin))
body = open(section, encoding="utf-8").read().rstrip("\n").split("\n")
open(new, "w", encoding="utf-8").write("\n".join(lines[:b] + body + lines[e + 1:]))
EOF
  mv "$tmp/doc.new" "$doc"
  echo "perf_doc: $s: $doc updated" >&2
done
exit $status
