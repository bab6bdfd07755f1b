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

// The CUDA driver gives each context CUDA_DEVICE_MAX_CONNECTIONS hardware work queues (8 unless the environment
// says), and sets them all up when the context is created, one process at a time: encodes that start together on
// one GPU, as rdsweep -j starts them, wait for each other's contexts, the longer the more queues each has. The
// search needs no more than kCudaConnections queues (its bands are launched in order; the waits for rows of the
// answer stay the same), and with them a context is made in a fraction of the time. set_default_cuda_connections()
// sets the variable to kCudaConnections unless the environment has it already (the user's choice wins). The driver
// reads it when the process creates its context, so a program calls this at the start of main(), before its
// threads: setenv is not safe beside other threads' getenv. It changes no result, only how long the start-up takes
// (doc/GPU.md).
constexpr int kCudaConnections = 2;
void set_default_cuda_connections();

// The plain C++ twin (reference), always available.
std::unique_ptr<PictureIntegerSearch> make_picture_search_twin(const DspFuncs& dsp);

}  // namespace gme
