#include "encoder/cavlc.h"

#include <cstdlib>

namespace gme {
namespace {

struct Vlc { uint8_t len, code; };

// Table 9-5, coeff_token for 0 <= nC < 2, 2 <= nC < 4, 4 <= nC < 8: {length, code} per [TotalCoeff][TrailingOnes].
const Vlc kCoeffToken[3][17][4] = {
  {
    {{1, 1}, {0, 0}, {0, 0}, {0, 0}},
    {{6, 5}, {2, 1}, {0, 0}, {0, 0}},
    {{8, 7}, {6, 4}, {3, 1}, {0, 0}},
    {{9, 7}, {8, 6}, {7, 5}, {5, 3}},
    {{10, 7}, {9, 6}, {8, 5}, {6, 3}},
    {{11, 7}, {10, 6}, {9, 5}, {7, 4}},
    {{13, 15}, {11, 6}, {10, 5}, {8, 4}},
    {{13, 11}, {13, 14}, {11, 5}, {9, 4}},
    {{13, 8}, {13, 10}, {13, 13}, {10, 4}},
    {{14, 15}, {14, 14}, {13, 9}, {11, 4}},
    {{14, 11}, {14, 10}, {14, 13}, {13, 12}},
    {{15, 15}, {15, 14}, {14, 9}, {14, 12}},
    {{15, 11}, {15, 10}, {15, 13}, {14, 8}},
    {{16, 15}, {15, 1}, {15, 9}, {15, 12}},
    {{16, 11}, {16, 14}, {16, 13}, {15, 8}},
    {{16, 7}, {16, 10}, {16, 9}, {16, 12}},
    {{16, 4}, {16, 6}, {16, 5}, {16, 8}},
  },
  {
    {{2, 3}, {0, 0}, {0, 0}, {0, 0}},
    {{6, 11}, {2, 2}, {0, 0}, {0, 0}},
    {{6, 7}, {5, 7}, {3, 3}, {0, 0}},
    {{7, 7}, {6, 10}, {6, 9}, {4, 5}},
    {{8, 7}, {6, 6}, {6, 5}, {4, 4}},
    {{8, 4}, {7, 6}, {7, 5}, {5, 6}},
    {{9, 7}, {8, 6}, {8, 5}, {6, 8}},
    {{11, 15}, {9, 6}, {9, 5}, {6, 4}},
    {{11, 11}, {11, 14}, {11, 13}, {7, 4}},
    {{12, 15}, {11, 10}, {11, 9}, {9, 4}},
    {{12, 11}, {12, 14}, {12, 13}, {11, 12}},
    {{12, 8}, {12, 10}, {12, 9}, {11, 8}},
    {{13, 15}, {13, 14}, {13, 13}, {12, 12}},
    {{13, 11}, {13, 10}, {13, 9}, {13, 12}},
    {{13, 7}, {14, 11}, {13, 6}, {13, 8}},
    {{14, 9}, {14, 8}, {14, 10}, {13, 1}},
    {{14, 7}, {14, 6}, {14, 5}, {14, 4}},
  },
  {
    {{4, 15}, {0, 0}, {0, 0}, {0, 0}},
    {{6, 15}, {4, 14}, {0, 0}, {0, 0}},
    {{6, 11}, {5, 15}, {4, 13}, {0, 0}},
    {{6, 8}, {5, 12}, {5, 14}, {4, 12}},
    {{7, 15}, {5, 10}, {5, 11}, {4, 11}},
    {{7, 11}, {5, 8}, {5, 9}, {4, 10}},
    {{7, 9}, {6, 14}, {6, 13}, {4, 9}},
    {{7, 8}, {6, 10}, {6, 9}, {4, 8}},
    {{8, 15}, {7, 14}, {7, 13}, {5, 13}},
    {{8, 11}, {8, 14}, {7, 10}, {6, 12}},
    {{9, 15}, {8, 10}, {8, 13}, {7, 12}},
    {{9, 11}, {9, 14}, {8, 9}, {8, 12}},
    {{9, 8}, {9, 10}, {9, 13}, {8, 8}},
    {{10, 13}, {9, 7}, {9, 9}, {9, 12}},
    {{10, 9}, {10, 12}, {10, 11}, {10, 10}},
    {{10, 5}, {10, 8}, {10, 7}, {10, 6}},
    {{10, 1}, {10, 4}, {10, 3}, {10, 2}},
  },
};
// Table 9-5, nC == -1 (chroma DC, 4:2:0).
const Vlc kCoeffTokenChromaDc[5][4] = {
  {{2, 1}, {0, 0}, {0, 0}, {0, 0}},
  {{6, 7}, {1, 1}, {0, 0}, {0, 0}},
  {{6, 4}, {6, 6}, {3, 1}, {0, 0}},
  {{6, 3}, {7, 3}, {7, 2}, {6, 5}},
  {{6, 2}, {8, 3}, {8, 2}, {7, 0}},
};
// Tables 9-7 and 9-8, total_zeros for 4x4 blocks: [TotalCoeff - 1][total_zeros].
const Vlc kTotalZeros[15][16] = {
  {{1, 1}, {3, 3}, {3, 2}, {4, 3}, {4, 2}, {5, 3}, {5, 2}, {6, 3}, {6, 2}, {7, 3}, {7, 2}, {8, 3}, {8, 2}, {9, 3}, {9, 2}, {9, 1}},
  {{3, 7}, {3, 6}, {3, 5}, {3, 4}, {3, 3}, {4, 5}, {4, 4}, {4, 3}, {4, 2}, {5, 3}, {5, 2}, {6, 3}, {6, 2}, {6, 1}, {6, 0}},
  {{4, 5}, {3, 7}, {3, 6}, {3, 5}, {4, 4}, {4, 3}, {3, 4}, {3, 3}, {4, 2}, {5, 3}, {5, 2}, {6, 1}, {5, 1}, {6, 0}},
  {{5, 3}, {3, 7}, {4, 5}, {4, 4}, {3, 6}, {3, 5}, {3, 4}, {4, 3}, {3, 3}, {4, 2}, {5, 2}, {5, 1}, {5, 0}},
  {{4, 5}, {4, 4}, {4, 3}, {3, 7}, {3, 6}, {3, 5}, {3, 4}, {3, 3}, {4, 2}, {5, 1}, {4, 1}, {5, 0}},
  {{6, 1}, {5, 1}, {3, 7}, {3, 6}, {3, 5}, {3, 4}, {3, 3}, {3, 2}, {4, 1}, {3, 1}, {6, 0}},
  {{6, 1}, {5, 1}, {3, 5}, {3, 4}, {3, 3}, {2, 3}, {3, 2}, {4, 1}, {3, 1}, {6, 0}},
  {{6, 1}, {4, 1}, {5, 1}, {3, 3}, {2, 3}, {2, 2}, {3, 2}, {3, 1}, {6, 0}},
  {{6, 1}, {6, 0}, {4, 1}, {2, 3}, {2, 2}, {3, 1}, {2, 1}, {5, 1}},
  {{5, 1}, {5, 0}, {3, 1}, {2, 3}, {2, 2}, {2, 1}, {4, 1}},
  {{4, 0}, {4, 1}, {3, 1}, {3, 2}, {1, 1}, {3, 3}},
  {{4, 0}, {4, 1}, {2, 1}, {1, 1}, {3, 1}},
  {{3, 0}, {3, 1}, {1, 1}, {2, 1}},
  {{2, 0}, {2, 1}, {1, 1}},
  {{1, 0}, {1, 1}},
};
// Table 9-9 (a), total_zeros for chroma DC 4:2:0: [TotalCoeff - 1][total_zeros].
const Vlc kTotalZerosChromaDc[3][4] = {
  {{1, 1}, {2, 1}, {3, 1}, {3, 0}},
  {{1, 1}, {2, 1}, {2, 0}},
  {{1, 1}, {1, 0}},
};
// Table 9-10, run_before: [min(zerosLeft, 7) - 1][run_before].
const Vlc kRunBefore[7][15] = {
  {{1, 1}, {1, 0}},
  {{1, 1}, {2, 1}, {2, 0}},
  {{2, 3}, {2, 2}, {2, 1}, {2, 0}},
  {{2, 3}, {2, 2}, {2, 1}, {3, 1}, {3, 0}},
  {{2, 3}, {2, 2}, {3, 3}, {3, 2}, {3, 1}, {3, 0}},
  {{2, 3}, {3, 0}, {3, 1}, {3, 3}, {3, 2}, {3, 5}, {3, 4}},
  {{3, 7}, {3, 6}, {3, 5}, {3, 4}, {3, 3}, {3, 2}, {3, 1}, {4, 1}, {5, 1}, {6, 1}, {7, 1}, {8, 1}, {9, 1}, {10, 1}, {11, 1}},
};

// Table 9-4 (chroma_format_idc 1): codeNum of coded_block_pattern, {Intra_4x4, Inter} per CodedBlockPattern.
const uint8_t kCbpCode[48][2] = {
    {3, 0}, {29, 2}, {30, 3}, {17, 7}, {31, 4}, {18, 8}, {37, 17}, {8, 13},
    {32, 5}, {38, 18}, {19, 9}, {9, 14}, {20, 10}, {10, 15}, {11, 16}, {2, 11},
    {16, 1}, {33, 32}, {34, 33}, {21, 36}, {35, 34}, {22, 37}, {39, 44}, {4, 40},
    {36, 35}, {40, 45}, {23, 38}, {5, 41}, {24, 39}, {6, 42}, {7, 43}, {1, 19},
    {41, 6}, {42, 24}, {43, 25}, {25, 20}, {44, 26}, {26, 21}, {46, 46}, {12, 28},
    {45, 27}, {47, 47}, {27, 22}, {13, 29}, {28, 23}, {14, 30}, {15, 31}, {0, 12},
};

// Counts what a BitWriter would write: the RD decisions need the length of residual blocks, not their bits.
struct BitCounter {
  int bits = 0;
  void put(int nbits, uint32_t) { bits += nbits; }
};

template <class Writer>
void write_coeff_token(Writer& bw, int nC, int total, int t1) {
  if (nC < 0) {
    const Vlc& v = kCoeffTokenChromaDc[total][t1];
    bw.put(v.len, v.code);
  } else if (nC >= 8) {
    // 6-bit fixed length: (TotalCoeff - 1) << 2 | TrailingOnes, and 000011 for no coefficients.
    bw.put(6, total ? static_cast<uint32_t>(((total - 1) << 2) | t1) : 3u);
  } else {
    const Vlc& v = kCoeffToken[nC < 2 ? 0 : nC < 4 ? 1 : 2][total][t1];
    bw.put(v.len, v.code);
  }
}

// One level (9.2.2.1 inverted). level_code carries the trailing-ones adjustment already.
template <class Writer>
void write_level(Writer& bw, int level_code, int& suffix_len) {
  int prefix, suffix_size = suffix_len;
  uint32_t suffix;
  if (suffix_len == 0) {
    if (level_code < 14) { prefix = level_code; suffix = 0; suffix_size = 0; }
    else if (level_code < 30) { prefix = 14; suffix = static_cast<uint32_t>(level_code - 14); suffix_size = 4; }
    else { prefix = 15; suffix = static_cast<uint32_t>(level_code - 30); suffix_size = 12; }
  } else if (level_code < (15 << suffix_len)) {
    prefix = level_code >> suffix_len;
    suffix = static_cast<uint32_t>(level_code & ((1 << suffix_len) - 1));
  } else {
    // Escape: level_prefix 15 with a 12-bit suffix. Levels are clipped at quantisation (kMaxLevel) so that the
    // suffix always fits: Baseline forbids level_prefix > 15.
    prefix = 15;
    suffix = static_cast<uint32_t>(level_code - (15 << suffix_len));
    suffix_size = 12;
  }
  bw.put(prefix, 0);
  bw.put(1, 1);
  bw.put(suffix_size, suffix);
}

// residual_block_cavlc() into a BitWriter or a BitCounter (one body, so the count is the written length).
template <class Writer>
int residual_block(Writer& bw, const int* coeff, int n, int nC) {
  // Collect non-zero levels in reverse scan order, with the zero run preceding each.
  int level[16], run[16];
  int total = 0, last = -1;
  for (int i = n - 1; i >= 0; --i) {
    if (coeff[i]) {
      if (last < 0) last = i;
      level[total] = coeff[i];
      run[total] = 0;
      // run before this coefficient: zeros between it and the previous (lower index) non-zero
      int j = i - 1;
      while (j >= 0 && coeff[j] == 0) --j;
      run[total] = i - 1 - j;
      ++total;
    }
  }
  int t1 = 0;
  for (int i = 0; i < total && t1 < 3; ++i) {
    if (std::abs(level[i]) != 1) break;
    ++t1;
  }
  write_coeff_token(bw, nC, total, t1);
  if (total == 0) return 0;

  for (int i = 0; i < t1; ++i) bw.put(1, level[i] < 0 ? 1u : 0u);

  int suffix_len = (total > 10 && t1 < 3) ? 1 : 0;
  for (int i = t1; i < total; ++i) {
    int l = level[i];
    int level_code = l > 0 ? 2 * l - 2 : -2 * l - 1;
    if (i == t1 && t1 < 3) level_code -= 2;
    write_level(bw, level_code, suffix_len);
    if (suffix_len == 0) suffix_len = 1;
    if (std::abs(l) > (3 << (suffix_len - 1)) && suffix_len < 6) ++suffix_len;
  }

  int max_coeff = n;
  int total_zeros = last + 1 - total;
  if (total < max_coeff) {
    const Vlc& v = (nC < 0) ? kTotalZerosChromaDc[total - 1][total_zeros] : kTotalZeros[total - 1][total_zeros];
    bw.put(v.len, v.code);
  }
  int zeros_left = total_zeros;
  for (int i = 0; i < total - 1 && zeros_left > 0; ++i) {
    const Vlc& v = kRunBefore[(zeros_left > 7 ? 7 : zeros_left) - 1][run[i]];
    bw.put(v.len, v.code);
    zeros_left -= run[i];
  }
  return total;
}

}  // namespace

int cbp_code_num(int cbp, bool intra) { return kCbpCode[cbp][intra ? 0 : 1]; }

int write_residual_block(BitWriter& bw, const int* coeff, int n, int nC) { return residual_block(bw, coeff, n, nC); }

int residual_block_bits(const int* coeff, int n, int nC) {
  BitCounter counter;
  residual_block(counter, coeff, n, nC);
  return counter.bits;
}

}  // namespace gme
