// Picture-level integer motion estimation (GPUIntegerME = 1): the CUDA search and its plain C++ twin.
// See me/me_interface.h for the contract (PictureSearchRequest -> PictureCandidates) and doc/GPU.md for the
// kernel design. Both producers give bit-identical candidates.
#pragma once
#include <memory>
#include <string>

#include "me/me_interface.h"

namespace gme {

// Creates the picture-level integer search. Tries CUDA device `device`; if none is usable (not built with CUDA, no
// device, driver error, out of memory) returns the CPU twin and sets *why (when why != nullptr) to a one-line
// reason; *why is cleared when the GPU is used. Never throws for a missing GPU. dsp: the function table the host
// side uses (common/dsp.h); it must outlive the search.
std::unique_ptr<PictureIntegerSearch> make_picture_search(int device, const DspFuncs& dsp, std::string* why);

// The plain C++ twin (reference), always available.
std::unique_ptr<PictureIntegerSearch> make_picture_search_twin(const DspFuncs& dsp);

}  // namespace gme
