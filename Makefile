# Thin wrapper around CMake: make, make demo, make test, make bench, make install, make deps;
# make sanitize and make fuzz check the code (docs/reliability.md).
BUILD ?= build
JOBS ?= $(shell nproc)
PREFIX ?= /usr/local
CMAKE_FLAGS ?=
# `make KEDR_CUDA=OFF` is short for CMAKE_FLAGS=-DKEDR_CUDA=OFF; likewise the other options.
KEDR_OPTIONS = $(foreach o,KEDR_CUDA KEDR_MPI KEDR_PLOT KEDR_NATIVE,$(if $($(o)),-D$(o)=$($(o))))
KEDR = $(BUILD)/kedr

.PHONY: all deps build demo test bench install sanitize fuzz fuzz-deps clean

all: build

deps:
	@bash scripts/install-deps.sh

build: deps
	@mkdir -p $(BUILD)
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(KEDR_OPTIONS) $(CMAKE_FLAGS) > $(BUILD)/configure.log 2>&1 || { cat $(BUILD)/configure.log; exit 1; }
	@grep -- '-- kedr ' $(BUILD)/configure.log || true
	@if grep -q 'cuda=ON' $(BUILD)/configure.log && ! nvidia-smi -L > /dev/null 2>&1; then \
	  echo "   no GPU here: the cuda back end is compiled (minutes), not run; make KEDR_CUDA=OFF skips it"; fi
	@bash scripts/build.sh $(BUILD) $(JOBS)

# Test 1 of Kashkovsky, Shershnev & Ivanov (2012) on the best back end present (about 10 s on
# 2 cpu cores): statistics, then PNG maps, VTK and CSV in $(BUILD)/demo.
demo: build
	$(KEDR) info
	$(KEDR) dsmc cases/dsmc/seed-test1.ini --out $(BUILD)/demo

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

bench: build
	$(KEDR) bench prim --json $(BUILD)/bench-prim.json

# Headers, libkedr.a and libkedr.so, the kedr program, pkg-config files and a CMake package.
install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

# The cpu code under AddressSanitizer, LeakSanitizer and UndefinedBehaviorSanitizer in its own
# build: every test, the fuzz harnesses' seeded campaigns included, at the quick sizes
# (KEDR_TEST_QUICK); CTest passes the sanitizers' options (CMakeLists.txt). SANITIZE_SKIP: a
# ctest regular expression of tests to leave out (e.g. ^test_dsmc_couette$, the longest).
ASAN_BUILD ?= build-asan
SANITIZE_SKIP ?=
sanitize: deps
	@mkdir -p $(ASAN_BUILD)
	@cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKEDR_CUDA=OFF -DKEDR_SANITIZE=ON $(CMAKE_FLAGS) > $(ASAN_BUILD)/configure.log 2>&1 || { cat $(ASAN_BUILD)/configure.log; exit 1; }
	@cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && KEDR_TEST_QUICK=1 ctest --output-on-failure -j $(JOBS) $(if $(SANITIZE_SKIP),-E '$(SANITIZE_SKIP)')

# The long libFuzzer campaign (clang), FUZZ_RUNS inputs a harness; fuzz-deps installs clang.
FUZZ_RUNS ?= 1000000
fuzz:
	bash scripts/fuzz.sh -n $(FUZZ_RUNS)

fuzz-deps:
	@bash scripts/install-deps.sh --fuzz

clean:
	rm -rf $(BUILD)
