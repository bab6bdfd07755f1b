#!/usr/bin/env bash
# Recomputes the hashes of tests/golden/streams.tsv from the current build (bin/lencod, bin/synth, bin/gme_tests)
# and rewrites the table in place; rows, clips and parameters stay. Prints the rows whose hashes changed. A commit
# that changes the table must say why the streams changed.
# Usage: tools/regen_golden.sh            (after `make`)
set -euo pipefail
cd "$(dirname "$0")/.."
table=tests/golden/streams.tsv
actual=$(mktemp)
trap 'rm -f "$actual" "$actual.new"' EXIT
GME_GOLDEN_ACTUAL="$actual" bin/gme_tests --gtest_filter='Streams/Golden.*' --gtest_brief=1 >/dev/null 2>&1 || true
rows=$(grep -cv '^#' "$table")
got=$(wc -l <"$actual")
if [ "$got" -ne "$rows" ]; then
  echo "regen_golden: only $got of $rows rows produced a stream (run bin/gme_tests --gtest_filter='Streams/Golden.*' to see why)" >&2
  exit 1
fi
awk -F'\t' -v OFS='\t' 'NR == FNR { s[$1] = $2; r[$1] = $3; next }
  /^#/ { print; next }
  { if ($5 != s[$1] || $6 != r[$1]) print "changed: " $1 > "/dev/stderr"; $5 = s[$1]; $6 = r[$1]; print }' \
  "$actual" "$table" >"$actual.new"
mv "$actual.new" "$table"
echo "regen_golden: $rows rows written to $table"
