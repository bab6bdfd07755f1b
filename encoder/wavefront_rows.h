// The wavefront's buffers (encoder/wavefront.h), kept in EncoderState between pictures.
#pragma once
#include <atomic>
#include <cstdint>
#include <vector>

#include "common/bitstream.h"
#include "common/mbinfo.h"
#include "encoder/macroblock.h"
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
  std::atomic<int> next_row{0};  // the next row a worker takes
};

}  // namespace gme
