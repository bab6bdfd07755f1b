// The wavefront's buffers (encoder/wavefront.h), kept in EncoderState between pictures.
#pragma once
#include <atomic>
#include <cstdint>
#include <vector>

#include "common/bitstream.h"
#include "common/mbinfo.h"
#include "encoder/thread_pool.h"

namespace gme {

// Where one macroblock's syntax sits in its row's bit writer.
struct MbBits {
  uint32_t start = 0, size = 0;  // bits
  MbType type = MbType::I16x16;
  bool skip = false;             // P_Skip: no syntax, counts into mb_skip_run
  int16_t pad_at = -1;           // I_PCM: bits before pcm_alignment_zero_bit (-1: none), and how many
  int8_t pad = 0;                //   alignment bits the row writer put there (the slice writer aligns anew)
};

// What the wavefront keeps between pictures (buffers reused): per row its syntax and its macroblocks' places.
struct WavefrontRows {
  std::vector<BitWriter> bits;
  std::vector<std::vector<MbBits>> mbs;
  std::vector<int> run_out;  // mb_skip_run pending at the end of each row (RDOptimization 1's P_Skip rate)
  ProgressBoard decided;     // per row: macroblocks decided and coded
  ProgressBoard deblocked;   // per row: macroblocks deblocked
  std::atomic<int> next_row{0};  // the next row a worker takes
};

}  // namespace gme
