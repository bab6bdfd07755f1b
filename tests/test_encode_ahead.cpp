// Coding I pictures ahead of their turn while the GPU starts (encoder/picture.h) and the Encoder queue around it
// (encoder/encoder.h): the sequence must come out byte for byte as when every picture is coded at its turn, and
// only pictures whose turn needs nothing unknown in advance may be coded ahead.
#include <gtest/gtest.h>

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/frame.h"
#include "encoder/encoder.h"
#include "encoder/params.h"
#include "encoder/picture.h"
#include "gpu/gpu_me.h"

namespace gme {
namespace {

// A moving textured picture: content that gives P pictures real motion and I pictures real residuals.
Frame moving_frame(int w, int h, int t) {
  Frame f;
  f.alloc(w, h, w, h);
  std::mt19937 rng(7);  // the same texture every picture, shifted by t
  std::vector<uint8_t> tex(static_cast<size_t>(2 * w) * 2 * h);
  for (uint8_t& v : tex) v = static_cast<uint8_t>(rng() % 256);
  for (int c = 0; c < 3; ++c) {
    Plane& p = f.plane[c];
    const int dx = c ? t : 2 * t, dy = c ? t / 2 : t;
    for (int y = 0; y < p.height; ++y)
      for (int x = 0; x < p.width; ++x) {
        const int sx = (x + dx) % (2 * w), sy = (y + dy) % (2 * h);
        // smooth the noise a little so intra prediction has something to predict
        p.at(x, y)[0] = static_cast<uint8_t>((tex[static_cast<size_t>(sy) * 2 * w + sx] +
                                              tex[static_cast<size_t>(sy) * 2 * w + (sx + 1) % (2 * w)] + 2 * (x + y)) / 3);
      }
  }
  return f;
}

PictureSearchFactory make_picture_search_twin_factory() {
  return [](int, const DspFuncs& dsp, std::string* why) {
    if (why) why->clear();
    return make_picture_search_twin(dsp);
  };
}

struct Coded {
  std::vector<uint8_t> bytes;
  std::vector<std::vector<uint8_t>> recon;  // luma of each picture, in coding order
  std::vector<PictureResult> results;
  std::vector<std::vector<MbInfo>> mbs;
};

// Codes `frames` pictures; before picture `ahead_before` (if >= 0) codes ahead every picture next_picture_ahead
// offers.
Coded code(const EncoderParams& p, int ahead_before, int* coded_ahead = nullptr) {
  EncoderState s;
  init_encoder_state(s, p, make_picture_search_twin_factory());
  Coded out;
  int ahead = 0;
  for (int n = 0; n < p.frames_to_encode; ++n) {
    if (n == ahead_before)
      for (int a; (a = next_picture_ahead(s)) >= 0; ++ahead) encode_picture_ahead(s, a, moving_frame(p.source_width, p.source_height, a));
    const PictureResult r = encode_picture(s, moving_frame(p.source_width, p.source_height, n), out.bytes);
    out.results.push_back(r);
    out.recon.push_back(s.rec->plane[0].storage);
    out.mbs.push_back(s.mbs);
  }
  if (coded_ahead) *coded_ahead = ahead;
  return out;
}

EncoderParams base_params() {
  EncoderParams p;
  p.source_width = 64;
  p.source_height = 48;
  p.frames_to_encode = 14;
  p.intra_period = 4;
  p.search_range = 8;
  return p;
}

void expect_same(const Coded& a, const Coded& b) {
  ASSERT_EQ(a.bytes, b.bytes);
  ASSERT_EQ(a.results.size(), b.results.size());
  for (size_t i = 0; i < a.results.size(); ++i) {
    EXPECT_EQ(a.recon[i], b.recon[i]) << "picture " << i;
    EXPECT_EQ(a.results[i].bits, b.results[i].bits) << "picture " << i;
    EXPECT_EQ(a.results[i].frame_num, b.results[i].frame_num) << "picture " << i;
    EXPECT_EQ(a.results[i].poc, b.results[i].poc) << "picture " << i;
    EXPECT_EQ(a.results[i].type, b.results[i].type) << "picture " << i;
    EXPECT_EQ(a.results[i].idr, b.results[i].idr) << "picture " << i;
    for (int t = 0; t < 9; ++t) EXPECT_EQ(a.results[i].mb_counts[t], b.results[i].mb_counts[t]) << "picture " << i;
    ASSERT_EQ(a.mbs[i].size(), b.mbs[i].size());
    for (size_t m = 0; m < a.mbs[i].size(); ++m) {
      EXPECT_EQ(a.mbs[i][m].type, b.mbs[i][m].type) << "picture " << i << " mb " << m;
      EXPECT_EQ(a.mbs[i][m].mv[0], b.mbs[i][m].mv[0]) << "picture " << i << " mb " << m;
    }
  }
}

TEST(EncodeAhead, SameSequenceAsCodingEachPictureAtItsTurn) {
  struct Case { int gpu, refs, slice_mode, intra, ahead_before, expect_ahead, rdo, adaptive_rounding; };
  // I pictures at 0, 4, 8, 12 (3, 6, 9, 12 with IntraPeriod 3): coding ahead before picture 1 takes every later
  // one; before picture 5, those after 5. AdaptiveRounding: the I pictures' offset lists are their own
  // (common/quant_rounding.h), so coding them before the P pictures between them changes nothing.
  const Case cases[] = {{0, 1, 0, 4, 1, 3, 0, 0}, {1, 2, 0, 4, 1, 3, 0, 0}, {1, 1, 1, 3, 1, 4, 0, 0},
                        {0, 3, 0, 4, 5, 2, 0, 0}, {1, 1, 0, 4, 1, 3, 1, 0}, {1, 2, 0, 4, 1, 3, 1, 1},
                        {1, 1, 1, 3, 1, 4, 0, 1}};
  for (const Case& c : cases) {
    EncoderParams p = base_params();
    p.adaptive_rounding = c.adaptive_rounding;
    p.adapt_rnd_chroma = c.adaptive_rounding;
    p.gpu_integer_me = c.gpu;
    p.rd_optimization = c.rdo;
    p.num_ref_frames = c.refs;
    p.slice_mode = c.slice_mode;
    p.slice_argument = 5;
    p.intra_period = c.intra;
    const Coded serial = code(p, -1);
    int ahead = 0;
    const Coded early = code(p, c.ahead_before, &ahead);
    EXPECT_EQ(ahead, c.expect_ahead) << "gpu " << c.gpu << " intra " << c.intra;
    int flagged = 0;
    for (const PictureResult& r : early.results) flagged += r.encoded_ahead;
    EXPECT_EQ(flagged, c.expect_ahead);
    expect_same(serial, early);
  }
}

// Only non-IDR I pictures with no IDR before them, within FramesToBeEncoded, in order; no GPU start-up under way
// (GPUIntegerME 0) means none is offered to the driver.
TEST(EncodeAhead, OffersOnlyPicturesKnownInAdvance) {
  EncoderParams p = base_params();
  p.idr_period = 8;  // pictures 0 and 8 are IDR, 4 and 12 are I
  EncoderState s;
  init_encoder_state(s, p);
  std::vector<uint8_t> out;
  encode_picture(s, moving_frame(64, 48, 0), out);
  EXPECT_EQ(picture_to_encode_ahead(s), -1);  // no GPU start-up: the driver is offered nothing
  EXPECT_FALSE(next_picture_waits_for_gpu(s));  // and reads nothing ahead
  EXPECT_EQ(next_picture_ahead(s), 4);
  EXPECT_THROW(encode_picture_ahead(s, 8, moving_frame(64, 48, 8)), std::logic_error);  // not the next one
  encode_picture_ahead(s, 4, moving_frame(64, 48, 4));
  EXPECT_EQ(next_picture_ahead(s), -1);  // 8 is an IDR: nothing after it either
  for (int n = 1; n <= 5; ++n) encode_picture(s, moving_frame(64, 48, n), out);
  EXPECT_TRUE(s.ahead.empty());
  EXPECT_EQ(next_picture_ahead(s), -1);  // the IDR at 8 still comes first
  for (int n = 6; n <= 8; ++n) encode_picture(s, moving_frame(64, 48, n), out);
  EXPECT_EQ(next_picture_ahead(s), 12);
  p.frames_to_encode = 12;  // 12 beyond the end: none
  EncoderState s2;
  init_encoder_state(s2, p);
  for (int n = 0; n <= 8; ++n) encode_picture(s2, moving_frame(64, 48, n), out);
  EXPECT_EQ(next_picture_ahead(s2), -1);
  p.intra_period = 0;  // only the first picture is intra
  EncoderState s3;
  init_encoder_state(s3, p);
  encode_picture(s3, moving_frame(64, 48, 0), out);
  EXPECT_EQ(next_picture_ahead(s3), -1);
}

// A backend whose start-up lasts until the test opens the gate: the queue's behaviour while the GPU starts,
// deterministically.
struct Gate {
  std::mutex m;
  std::condition_variable cv;
  bool open = false;
  void release() {
    { std::lock_guard<std::mutex> l(m); open = true; }
    cv.notify_all();
  }
};

PictureSearchFactory gated_twin(Gate* gate) {
  return [gate](int, const DspFuncs& dsp, std::string* why) {
    std::unique_lock<std::mutex> l(gate->m);
    gate->cv.wait(l, [gate] { return gate->open; });
    if (why) why->clear();
    return make_picture_search_twin(dsp);
  };
}

Coded drain(Encoder& e, int frames, int64_t first_index) {
  Coded out;
  EncodedPicture pic;
  for (int64_t n = 0; e.pull(&pic); ++n) {
    EXPECT_EQ(pic.user_index, first_index + n) << "pictures come out in the order they went in";
    out.bytes.insert(out.bytes.end(), pic.bytes.begin(), pic.bytes.end());
    out.results.push_back(pic.result);
    out.recon.push_back(pic.recon->plane[0].storage);
    out.mbs.push_back(pic.mbs);
  }
  EXPECT_EQ(static_cast<int>(out.results.size()), frames);
  return out;
}

// While the start-up runs, push() holds the P pictures (nothing comes out: picture 1 is a P picture) and codes the
// held I pictures ahead; once it is done, flush() codes the rest. The result equals coding every picture at its
// turn.
TEST(EncoderQueue, HoldsPicturesWhileTheGpuStartsAndGivesTheSameSequence) {
  EncoderParams p = base_params();
  p.gpu_integer_me = 1;
  p.num_ref_frames = 2;
  const Coded serial = code(p, -1);
  Gate gate;
  Encoder e(p, gated_twin(&gate));
  EncodedPicture pic;
  for (int n = 0; n < p.frames_to_encode; ++n) e.push(moving_frame(p.source_width, p.source_height, n), 100 + n);
  ASSERT_TRUE(e.pull(&pic));  // the IDR picture needs no motion search
  EXPECT_EQ(pic.user_index, 100);
  EXPECT_FALSE(e.pull(&pic)) << "picture 1 is a P picture: it waits for the start-up";
  EXPECT_NE(e.integer_me_path_so_far().find("starting"), std::string::npos);
  gate.release();
  e.flush();
  Coded queued = drain(e, p.frames_to_encode - 1, 101);
  queued.bytes.insert(queued.bytes.begin(), pic.bytes.begin(), pic.bytes.end());  // picture 0, pulled above
  queued.results.insert(queued.results.begin(), pic.result);
  queued.recon.insert(queued.recon.begin(), serial.recon[0]);
  queued.mbs.insert(queued.mbs.begin(), serial.mbs[0]);
  int flagged = 0;
  for (const PictureResult& r : queued.results) flagged += r.encoded_ahead;
  EXPECT_EQ(flagged, 3) << "pictures 4, 8 and 12 are coded while the start-up runs";
  expect_same(serial, queued);
  EXPECT_EQ(e.integer_me_path(), "gpu: cpu-twin");
}

// drain() after a start-up that held every picture: the pictures one at a time, in order, the same sequence; a
// driver that lets each picture go before the next keeps only the pictures in flight, so reconstructions are reused
// (flush() and pull() would hand out all fourteen at once, each in a picture of its own). One thread and three.
TEST(EncoderQueue, DrainHandsOutPicturesOneByOneAndReusesTheirMemory) {
  for (int threads : {1, 3}) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    EncoderParams p = base_params();
    p.gpu_integer_me = 1;
    p.threads = threads;
    const Coded serial = code(p, -1);
    Gate gate;
    Encoder e(p, gated_twin(&gate));
    for (int n = 0; n < p.frames_to_encode; ++n) e.push(moving_frame(p.source_width, p.source_height, n), 100 + n);
    gate.release();
    Coded drained;
    std::set<const Frame*> addresses;
    EncodedPicture pic;
    for (int64_t n = 0; e.drain(&pic); ++n) {
      EXPECT_EQ(pic.user_index, 100 + n) << "pictures come out in the order they went in";
      drained.bytes.insert(drained.bytes.end(), pic.bytes.begin(), pic.bytes.end());
      drained.results.push_back(pic.result);
      drained.recon.push_back(pic.recon->plane[0].storage);
      drained.mbs.push_back(pic.mbs);
      addresses.insert(pic.recon.get());
      pic = EncodedPicture();
    }
    EXPECT_FALSE(e.pull(&pic));
    EXPECT_FALSE(e.drain(&pic)) << "nothing left";
    expect_same(serial, drained);
    EXPECT_LT(addresses.size(), 8u) << "reconstructions come back to the encoder once the driver lets them go";
  }
}

// Without a start-up to wait for, every push codes its picture at once.
TEST(EncoderQueue, CodesAtOnceWithoutAGpu) {
  EncoderParams p = base_params();
  const Coded serial = code(p, -1);
  Encoder e(p);
  EncodedPicture pic;
  Coded queued;
  for (int n = 0; n < p.frames_to_encode; ++n) {
    e.push(moving_frame(p.source_width, p.source_height, n), n);
    ASSERT_TRUE(e.pull(&pic)) << "picture " << n;
    EXPECT_FALSE(pic.result.encoded_ahead);
    queued.bytes.insert(queued.bytes.end(), pic.bytes.begin(), pic.bytes.end());
    queued.results.push_back(pic.result);
    queued.recon.push_back(pic.recon->plane[0].storage);
    queued.mbs.push_back(pic.mbs);
    EXPECT_FALSE(e.pull(&pic));
  }
  e.flush();
  EXPECT_FALSE(e.pull(&pic));
  expect_same(serial, queued);
}

TEST(EncoderQueue, GpuRunWithoutABackendIsAnError) {
  EncoderParams p = base_params();
  p.gpu_integer_me = 1;
  EXPECT_THROW(Encoder e(p), std::runtime_error);
}

}  // namespace
}  // namespace gme
