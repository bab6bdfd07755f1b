# gme264 build. `make` builds every program into bin/; `make test` builds and runs the GoogleTest suite.
# Sources are found by directory: common/ me/ encoder/ gpu/ lencod/ rd/ form the library; every */NAME_main.cpp is
# the program bin/NAME; tests/*.cpp form bin/gme_tests. gpu/*.cu are compiled when nvcc is on the PATH (CUDA 13, sm_90 + PTX);
# otherwise gpu/cuda_absent.cpp stands in and the encoder runs the CPU twin.

CXX      ?= g++
CXXFLAGS ?= -O2
CXXFLAGS += -std=c++17 -Wall -Wextra -Werror -I. -MMD -MP -pthread
LDLIBS   += -lz -pthread
BUILD    ?= build

NVCC := $(shell command -v nvcc 2>/dev/null)
ifneq ($(NVCC),)
  CUDA_HOME  ?= $(patsubst %/bin/nvcc,%,$(NVCC))
  NVCCFLAGS  := -std=c++17 -O3 -I. -MMD -MP -Xcompiler -Wall,-Wextra,-Werror -Werror all-warnings \
                -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90
  CU_SRCS    := $(wildcard gpu/*.cu)
  CXXFLAGS   += -DGME_HAVE_CUDA=1 -I$(CUDA_HOME)/include
  LDLIBS     += -L$(CUDA_HOME)/lib64 -lcudart_static -ldl -lrt
  GPU_NOTE   := CUDA: building gpu/ with $(NVCC)
  ABSENT     := gpu/cuda_absent.cpp
else
  CU_SRCS    :=
  GPU_NOTE   := CUDA: nvcc not found, building without CUDA (the GPU path falls back to its CPU twin)
  ABSENT     :=
endif

LIB_DIRS  := common me encoder gpu lencod rd
LIB_SRCS  := $(filter-out %_main.cpp $(ABSENT),$(foreach d,$(LIB_DIRS),$(wildcard $(d)/*.cpp)))
MAIN_SRCS := $(wildcard */*_main.cpp)
TEST_SRCS := $(wildcard tests/*.cpp)
PROGRAMS  := $(patsubst %_main.cpp,bin/%,$(notdir $(MAIN_SRCS)))

LIB_OBJS  := $(LIB_SRCS:%.cpp=$(BUILD)/%.o) $(CU_SRCS:%.cu=$(BUILD)/%.cu.o)
TEST_OBJS := $(TEST_SRCS:%.cpp=$(BUILD)/%.o)
LIB       := $(BUILD)/libgme.a

.PHONY: all test bench bench-gpu conformance-full clean note
all: note $(PROGRAMS) bin/gme_tests

note:
	@echo "$(GPU_NOTE)"

$(BUILD)/%.o: %.cpp
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) -c $< -o $@

$(BUILD)/%.cu.o: %.cu
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -c $< -o $@

$(LIB): $(LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

# bin/NAME from */NAME_main.cpp, whichever folder holds it.
define program_rule
bin/%: $(BUILD)/$(1)/%_main.o $(LIB)
	@mkdir -p bin
	$$(CXX) $$^ -o $$@ $$(LDLIBS)
endef
$(foreach d,$(sort $(dir $(MAIN_SRCS))),$(eval $(call program_rule,$(d:/=))))

bin/gme_tests: $(TEST_OBJS) $(LIB)
	@mkdir -p bin
	$(CXX) $^ -o $@ -lgtest -lgtest_main $(LDLIBS)

# The suite; tests that need a program find it in bin/ (they are built first).
test: all
	tests/run_tests.sh

bench: all
	tools/bench.sh

bench-gpu: all
	tools/bench_gpu.sh
	tools/bench_gpu_e2e.sh

# Large conformance matrix (minutes to hours); the default suite runs a reduced one.
conformance-full: all
	GME_CONFORMANCE_FULL=1 tests/run_tests.sh --gtest_filter='Conformance*'

clean:
	rm -rf $(BUILD) bin

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
.SECONDARY:
