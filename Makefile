# Thin wrapper around CMake: make, make demo, make test, make bench, make deps.
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
KEDR = $(BUILD)/kedr

.PHONY: all deps build demo test bench clean

all: build

deps:
	@bash scripts/install-deps.sh

build: deps
	@mkdir -p $(BUILD)
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS) > $(BUILD)/configure.log 2>&1 || { cat $(BUILD)/configure.log; exit 1; }
	@grep -- '-- kedr ' $(BUILD)/configure.log || true
	@cmake --build $(BUILD) -j $(JOBS)

# Seed 003 test 1 on the best back end present (seconds on 2 cpu cores): statistics,
# then PNG maps, VTK and CSV in $(BUILD)/demo.
demo: build
	$(KEDR) info
	$(KEDR) dsmc cases/dsmc/seed-test1.ini --out $(BUILD)/demo

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

bench: build
	$(KEDR) bench prim --json $(BUILD)/bench-prim.json

clean:
	rm -rf $(BUILD)
