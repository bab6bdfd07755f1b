// The wavefront's buffers (encoder/wavefront.h): a picture's in flight, kept in EncoderState between pictures.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "common/bitstream.h"
#include "common/mbinfo.h"
#include "common/quant_rounding.h"
#include "encoder/macroblock.h"
#include "encoder/mb_worker.h"
#include "encoder/thread_pool.h"

namespace gme {

// What the slices need of one decided macroblock besides its syntax.
struct DecidedMb {
  MbType type = MbType::I16x16;
  MbBits use;                    // its syntax's bits by element (the slice writer adds them up in coding order)
  bool skip = false;             // P_Skip: no syntax, counts into mb_skip_run
  int16_t pad_at = -1;           // I_PCM: bits before pcm_alignment_zero_bit (-1: none), and how many
  int8_t pad = 0;                //   alignment bits its own writer put there (the slice writer aligns anew)
};

// What the wavefront keeps between pictures (buffers reused). Each macroblock's syntax has a writer of its own, so
// a decided macroblock's bits stay put while its row goes on (SliceMode 2 commits them meanwhile).
struct WavefrontRows {
  std::vector<BitWriter> bits;   // per macroblock, raster order
  std::vector<DecidedMb> mbs;    // per macroblock
  std::vector<int> run_out;  // mb_skip_run pending at the end of each row (RDOptimization 1's P_Skip rate)
  ProgressBoard decided;     // per row: macroblocks decided and coded
  ProgressBoard deblocked;   // per row: macroblocks deblocked
};

// What a picture being coded has of its own, so that the next picture's rows can start before its last rows are
// done: the encoder keeps two and gives them to pictures in turn (encoder/picture.h).
struct PictureSlot {
  std::vector<MbInfo> mbs;  // the picture's macroblocks, raster order
  WavefrontRows rows;
  std::vector<std::unique_ptr<MbWorker>> workers;  // one per thread (RowScheduler's worker index)
  QuantRounding rounding;   // the quantiser's offsets, latched for the picture (wavefront pictures)
};

class FinalRows;
// The reference that a picture's rows read while it is still being coded (the picture before, in flight): row y
// waits until `rows` is final down to `reach` luma rows below its own bottom (-1: the whole picture), the farthest
// any of its vectors can point. Where the search windows are centred on the vector predictors (`window` > 0, their
// search range), no reach holds for a whole row: each macroblock waits for what its neighbours' vectors allow
// (predictor_gate_luma_rows).
struct RowGate {
  FinalRows* rows = nullptr;
  int reach = -1;
  int window = 0;
};

}  // namespace gme
