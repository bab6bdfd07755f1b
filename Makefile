# gme264 build. `make` builds every program into bin/; `make test` builds and runs the GoogleTest suite.
# Sources are found by directory: common/ me/ encoder/ gpu/ lencod/ rd/ form the library; every */NAME_main.cpp is
# the program bin/NAME; tests/*.cpp form bin/gme_tests.
#
# Switches (make VAR=value; a change of any of them rebuilds what it affects):
#   CUDA=auto|0|1   auto (default): build gpu/*.cu when nvcc is on the PATH; 0: never (gpu/cuda_absent.cpp stands in
#                   and GPUIntegerME = 1 runs the CPU twin); 1: require nvcc.
#   CUDA_ARCH       the GPU architectures (compute capability x 10): machine code (SASS) for each and PTX for the
#                   last, which the driver compiles for newer GPUs. The default covers every GPU CUDA 13 supports
#                   (compute capability 7.5 and newer); narrow it for a faster build, e.g. CUDA_ARCH=80 (A100 only).
#   CUDA_PTX_ONLY=1 PTX alone for each listed architecture, no SASS (the driver compiles it when the program
#                   starts): e.g. make CUDA_ARCH=80 CUDA_PTX_ONLY=1 BUILD=build-ptx80 BIN=bin-ptx80 tests what an
#                   Ampere build runs, on any newer GPU.
#   BIN             where programs and bin/gme_tests go (default bin; tests find programs through GME_BIN).
#   WERROR=1        warnings are errors (the project's CI and developers; .ci/run sets it). Off by default so a
#                   newer compiler's new warning does not stop a user's build.
#   CXXFLAGS        the user's flags (default -O2), added after the project's own, e.g.
#                   make CXXFLAGS="-O1 -g -fsanitize=address" BUILD=build-asan BIN=bin-asan
#   BUILD, BIN      where objects (default build) and programs (default bin) go.
#
# Checks in their own BUILD/BIN folders (CUDA=0: the CPU twin stands in; doc/CHECKS.md):
#   make sanitize   ASan + UBSan build (bin-asan/), then the unit tests and a few encodes under it
#   make tsan       TSan build (bin-tsan/), then a few encodes and the tests of threaded code (TSAN_FILTER) under it
#   make fuzz       libFuzzer harnesses (tests/fuzz/, clang++) into bin-fuzz/
#   make fuzz-run   each fuzzer for FUZZ_SECONDS (default 60) from its seed corpus in tests/fuzz/corpus/

CXX      ?= g++
CXXFLAGS ?= -O2
BUILD    ?= build
BIN      ?= bin
WERROR   ?= 0
CUDA     ?= auto
CUDA_ARCH ?= 75 80 86 89 90 100 110 120
CUDA_PTX_ONLY ?= 0

comma := ,
space := $(empty) $(empty)

WARN      := -Wall -Wextra $(if $(filter 1,$(WERROR)),-Werror)
GME_FLAGS := -std=c++17 $(WARN) -I. -MMD -MP -pthread
GME_LIBS  := -lz -pthread

NVCC := $(if $(filter 0,$(CUDA)),,$(shell command -v nvcc 2>/dev/null))
ifeq ($(CUDA),1)
  ifeq ($(NVCC),)
    $(error CUDA=1 but nvcc is not on the PATH)
  endif
endif
ifneq ($(NVCC),)
  CUDA_HOME  ?= $(patsubst %/bin/nvcc,%,$(NVCC))
  CUDA_LAST  := $(lastword $(CUDA_ARCH))
  ifeq ($(CUDA_PTX_ONLY),1)
    CUDA_CODE := $(foreach a,$(CUDA_ARCH),-gencode arch=compute_$(a),code=compute_$(a))
    CUDA_TEXT := compute_$(subst $(space),/,$(strip $(CUDA_ARCH))) PTX only
  else
    CUDA_CODE := $(foreach a,$(CUDA_ARCH),-gencode arch=compute_$(a),code=sm_$(a)) \
                 -gencode arch=compute_$(CUDA_LAST),code=compute_$(CUDA_LAST)
    CUDA_TEXT := sm_$(subst $(space),/,$(strip $(CUDA_ARCH))) + compute_$(CUDA_LAST) PTX
  endif
  # --threads 0: nvcc compiles the architectures in parallel, one per core.
  NVCCFLAGS  := -std=c++17 -O3 -I. -MMD -MP --threads 0 \
                -Xcompiler -Wall,-Wextra$(if $(filter 1,$(WERROR)),$(comma)-Werror -Werror all-warnings) $(CUDA_CODE)
  CU_SRCS    := $(wildcard gpu/*.cu)
  GME_FLAGS  += -DGME_HAVE_CUDA=1 -I$(CUDA_HOME)/include
  GME_LIBS   += -L$(CUDA_HOME)/lib64 -lcudart_static -ldl -lrt
  GPU_NOTE   := CUDA: building gpu/ with $(NVCC) for $(CUDA_TEXT)
  CUDA_DESC  := CUDA $(shell $(NVCC) --version | sed -n 's/.*release \([0-9.]*\).*/\1/p') $(CUDA_TEXT)
  ABSENT     := gpu/cuda_absent.cpp
else
  CU_SRCS    :=
  GPU_NOTE   := CUDA: $(if $(filter 0,$(CUDA)),off (CUDA=0),nvcc not found): building without CUDA (GPUIntegerME = 1 runs the CPU twin)
  CUDA_DESC  := no CUDA
  ABSENT     :=
endif
ALL_CXXFLAGS := $(GME_FLAGS) $(CXXFLAGS)
ALL_LDLIBS   := $(LDLIBS) $(GME_LIBS)

# Provenance (common/version.h): the release in VERSION, `git describe` of the source (-dirty when modified), the
# compiler and the CUDA architectures.
GIT_DESCRIBE := $(shell git describe --always --dirty --abbrev=12 2>/dev/null || echo unknown)
VERSION_DEFS := -DGME_RELEASE='"$(shell cat VERSION)"' -DGME_GIT='"$(GIT_DESCRIBE)"' -DGME_CUDA_DESC='"$(CUDA_DESC)"'

# Stamps: an object is rebuilt when the flags that made it change, version.o when the version text changes.
STAMP_FLAGS   := $(BUILD)/.flags
STAMP_VERSION := $(BUILD)/.version
FLAGS_TEXT    := $(CXX) $(ALL_CXXFLAGS) | $(NVCC) $(NVCCFLAGS) | $(ALL_LDLIBS)
$(shell mkdir -p $(BUILD))
ifneq ($(file <$(STAMP_FLAGS)),$(FLAGS_TEXT))
  $(file >$(STAMP_FLAGS),$(FLAGS_TEXT))
endif
ifneq ($(file <$(STAMP_VERSION)),$(VERSION_DEFS))
  $(file >$(STAMP_VERSION),$(VERSION_DEFS))
endif

LIB_DIRS  := common me encoder gpu lencod rd
LIB_SRCS  := $(filter-out %_main.cpp $(ABSENT),$(foreach d,$(LIB_DIRS),$(wildcard $(d)/*.cpp)))
MAIN_SRCS := $(wildcard */*_main.cpp)
TEST_SRCS := $(wildcard tests/*.cpp)
PROGRAMS  := $(patsubst %_main.cpp,$(BIN)/%,$(notdir $(MAIN_SRCS)))

LIB_OBJS  := $(LIB_SRCS:%.cpp=$(BUILD)/%.o) $(CU_SRCS:%.cu=$(BUILD)/%.cu.o)
TEST_OBJS := $(TEST_SRCS:%.cpp=$(BUILD)/%.o)
LIB       := $(BUILD)/libgme.a

.PHONY: all test test-slurm bench bench-gpu bench-threads conformance-full clean note sanitize tsan fuzz fuzzers fuzz-run
all: note $(PROGRAMS) $(BIN)/gme_tests $(BIN)/libfake_nvml.so

note:
	@echo "$(GPU_NOTE)"

$(BUILD)/%.o: %.cpp $(STAMP_FLAGS)
	@mkdir -p $(dir $@)
	$(CXX) $(ALL_CXXFLAGS) -c $< -o $@

$(BUILD)/common/version.o: common/version.cpp $(STAMP_FLAGS) $(STAMP_VERSION) VERSION
	@mkdir -p $(dir $@)
	$(CXX) $(ALL_CXXFLAGS) $(VERSION_DEFS) -c $< -o $@

$(BUILD)/%.cu.o: %.cu $(STAMP_FLAGS)
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -c $< -o $@

$(LIB): $(LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

# bin/NAME from DIR/NAME_main.cpp, one explicit rule per program (an object left over from a moved source is never
# picked up).
define program_rule
$(BIN)/$(notdir $(1:_main.cpp=)): $(BUILD)/$(1:.cpp=.o) $(LIB)
	@mkdir -p $(BIN)
	$$(CXX) $$(CXXFLAGS) $$(filter %.o %.a,$$^) -o $$@ $$(ALL_LDLIBS)
endef
$(foreach m,$(MAIN_SRCS),$(eval $(call program_rule,$(m))))

$(BIN)/gme_tests: $(TEST_OBJS) $(LIB)
	@mkdir -p $(BIN)
	$(CXX) $(CXXFLAGS) $^ -o $@ -lgtest -lgtest_main $(ALL_LDLIBS)

# A stand-in for libnvidia-ml.so.1 (tests/fake/fake_nvml.cpp) for the energy tests on machines without a driver.
$(BIN)/libfake_nvml.so: tests/fake/fake_nvml.cpp $(STAMP_FLAGS)
	@mkdir -p $(BIN)
	$(CXX) -std=c++17 $(WARN) $(CXXFLAGS) -fPIC -shared $< -o $@

# The suite; tests that need a program find it in bin/ (they are built first).
test: all
	tests/run_tests.sh

# rdsweep --slurm against a real single-node Slurm started on this machine (installs Debian's slurm packages).
test-slurm: all
	tests/test_slurm.sh

bench: all
	tools/bench.sh

bench-gpu: all
	tools/bench_gpu.sh
	tools/bench_gpu_e2e.sh

# Thread scaling of both runs next to x264 (doc/THREADS.md); x264 from .x264/libx264-dev_*.deb or the PATH.
bench-threads: all
	tools/bench_threads.sh

# Large conformance matrix (minutes to hours); the default suite runs a reduced one.
conformance-full: all
	GME_CONFORMANCE_FULL=1 tests/run_tests.sh --gtest_filter='Conformance*'

# ---- Sanitizers and fuzzing, each in its own BUILD/BIN folders (so they never mix with the normal build).
SAN_FLAGS  := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
TSAN_FLAGS := -O1 -g -fsanitize=thread
FUZZ_FLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
FUZZ_SECONDS ?= 60
# The tests of threaded code (the GPU start-up thread, encode-ahead, the encoder's loops through the golden streams,
# pipes); TSAN_FILTER='*' runs the whole suite, which takes far longer. The signal tests stay out:
# ThreadSanitizer defers asynchronous signal handlers, which is not what they check.
# SANITIZE_FILTER: a gtest filter for make sanitize's suite (empty: the whole suite). SAN_CXX: its compiler (g++ or
# clang++; clang compiles the instrumented build faster than gcc).
SANITIZE_FILTER ?=
SAN_CXX ?= $(CXX)
TSAN_FILTER ?= EncodeAhead*:EncoderQueue*:RecyclingPool*:GpuMe*:*gpu*:Streams/Golden*:CliRobust*:YuvIo.Pipe*
FUZZ_SRCS  := $(wildcard tests/fuzz/fuzz_*.cpp)
FUZZERS    := $(patsubst tests/fuzz/%.cpp,$(BIN)/%,$(FUZZ_SRCS))

sanitize:
	$(MAKE) all BUILD=build-asan BIN=bin-asan CUDA=0 CXX=$(SAN_CXX) CXXFLAGS="$(SAN_FLAGS)"
	tools/sanitize.sh bin-asan $(if $(SANITIZE_FILTER),--gtest_filter='$(SANITIZE_FILTER)')

tsan:
	$(MAKE) all BUILD=build-tsan BIN=bin-tsan CUDA=0 CXXFLAGS="$(TSAN_FLAGS)"
	tools/sanitize.sh bin-tsan --gtest_filter='$(TSAN_FILTER)'

# clang's warnings are not the project's gcc-clean set (WERROR=1 applies to the gcc builds), so they stay warnings.
fuzz:
	$(MAKE) fuzzers BUILD=build-fuzz BIN=bin-fuzz CUDA=0 WERROR=0 CXX=clang++ CXXFLAGS="$(FUZZ_FLAGS)"

fuzzers: $(FUZZERS)

$(BIN)/fuzz_%: $(BUILD)/tests/fuzz/fuzz_%.o $(LIB)
	@mkdir -p $(BIN)
	$(CXX) $(CXXFLAGS) -fsanitize=fuzzer $^ -o $@ $(ALL_LDLIBS)

fuzz-run: fuzz
	tools/fuzz.sh bin-fuzz $(FUZZ_SECONDS)

clean:
	rm -rf $(BUILD) $(BIN) build-asan bin-asan build-tsan bin-tsan build-fuzz bin-fuzz

-include $(patsubst %.o,%.d,$(LIB_OBJS) $(TEST_OBJS) $(MAIN_SRCS:%.cpp=$(BUILD)/%.o) $(FUZZ_SRCS:%.cpp=$(BUILD)/%.o))
.SECONDARY:

# doc/PERFORMANCE.md: rerun the benchmarks behind its sections and replace each section with what the benchmark
# printed, stamped with command, machine, GPU and date (tools/perf_doc.sh). perf-doc-gpu needs a CUDA GPU.
.PHONY: perf-doc perf-doc-gpu
perf-doc: bin/bench_me bin/lencod
	tools/perf_doc.sh cpu

perf-doc-gpu: bin/bench_gpu bin/lencod bin/rdsweep
	tools/perf_doc.sh gpu
