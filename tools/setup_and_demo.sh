#!/usr/bin/env bash
# First command on a fresh Debian machine: installs the missing packages (sudo apt-get), builds everything, makes
# the test clips (sequences/make_clips.sh: synthetic ones with bin/synth, real ones from opencv-doc), encodes the
# synthetic 640x480 clip with cfg/encoder_baseline.cfg and checks that FFmpeg decodes the stream to exactly the
# encoder's reconstruction, then runs a QP 28/32/36/40 sweep of the unmodified run against the GPU run and
# writes its RD report.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install_deps.sh
make -j2
sequences/make_clips.sh
mkdir -p out
set -x
bin/lencod -d cfg/encoder_baseline.cfg -p InputFile=sequences/synthetic_640x480.yuv -p SourceWidth=640 \
  -p SourceHeight=480 -p FramesToBeEncoded=10 -p OutputFile=out/demo.264 -p ReconFile=out/demo_rec.yuv
ffmpeg -nostdin -y -v error -i out/demo.264 -f rawvideo -pix_fmt yuv420p out/demo_dec.yuv
cmp out/demo_dec.yuv out/demo_rec.yuv
{ set +x; } 2>/dev/null
echo "demo: out/demo.264 decodes with FFmpeg to exactly out/demo_rec.yuv."
# The users' workflow on the same clip: QP 28/32/36/40, unmodified run (CPU fast full search) against the GPU run
# (the CPU twin when this machine has no GPU; the report says so), BD-rate/BD-PSNR table and RD plot.
bin/rdsweep -f cfg/encoder_baseline.cfg --frames 6 -j 2 --out out/demo_sweep \
  synthetic=sequences/synthetic_640x480.yuv:640x480:10:30
echo "report: out/demo_sweep/report.md (plot: out/demo_sweep/synthetic/rd.svg). Next: make test"
