# schedsim — build, test, benchmark, fuzz, lint.
GO      ?= go
PKGS    := ./...
FUZZTIME ?= 10s

.PHONY: all build test bench bench-data bench-data-year bench-data-gpu bench-year fuzz lint conformance conformance-report

all: lint test build

build:
	$(GO) build -o bin/schedsim ./cmd/schedsim

# The tests read ../shared/traces when it is there and skip those parts
# with a reason when it is not.
test:
	$(GO) vet $(PKGS)
	$(GO) test -count=1 -timeout 30m $(PKGS)

# Benchmarks; figures go to BENCHMARKS.md with the command that made them.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 5 $(PKGS)

# Benchmark traces, 1,000,000 jobs each, synthesized with seed 1 (not
# committed: bench/data is ignored by git; same seed, same files):
#  - bench-data-year: bench/data/year-1024x8.parquet, the trace of
#    bench/year-1024x8.yaml, from the year model fitted on the Thunder log
#    (docs/scale.md; about 2 s);
#  - bench-data-gpu: bench/data/gpu-1m.sacct, .swf and .parquet, from a
#    model fitted on the Alibaba GPU trace in ../shared/traces, for the
#    trace readers' benchmarks (docs/traces.md).
# bench-data makes both.
SCHEDSIM    ?= $(GO) run ./cmd/schedsim
BENCH_DATA  := bench/data
BENCH_TRACE ?= ../shared/traces/alibaba-gpu2023_openb_pod_list_default.csv

bench-data: bench-data-year bench-data-gpu

bench-data-year: $(BENCH_DATA)/year-1024x8.parquet

bench-data-gpu: $(BENCH_DATA)/gpu-1m.sacct $(BENCH_DATA)/gpu-1m.swf $(BENCH_DATA)/gpu-1m.parquet

$(BENCH_DATA)/year-1024x8.parquet: bench/year-model.yaml
	@mkdir -p $(BENCH_DATA)
	$(SCHEDSIM) trace synth bench/year-model.yaml --jobs 1000000 --seed 1 --out $@

$(BENCH_DATA)/alibaba-model.yaml: $(BENCH_TRACE)
	@mkdir -p $(BENCH_DATA)
	$(SCHEDSIM) trace fit $(BENCH_TRACE) --out $@

$(BENCH_DATA)/gpu-1m.sacct: $(BENCH_DATA)/alibaba-model.yaml
	$(SCHEDSIM) trace synth $< --jobs 1000000 --seed 1 --out $@ --sacct-utc

$(BENCH_DATA)/gpu-1m.swf $(BENCH_DATA)/gpu-1m.parquet: $(BENCH_DATA)/gpu-1m.sacct
	$(SCHEDSIM) trace convert $< $@

# The scale benchmarks on the year trace (minutes; figures in BENCHMARKS.md).
bench-year: bench-data-year
	$(GO) test ./cmd/schedsim -run '^$$' -bench 'BenchmarkYear' -benchtime 1x -count 3 -timeout 2h

# Every fuzz target for FUZZTIME each, one after the other (go test -fuzz
# takes one target at a time): `make fuzz FUZZTIME=10m` is the run
# docs/fuzzing.md asks for. FUZZFLAGS: minimizing a new input for the
# default 60 s stalls the slow targets (Parquet, Arrow, scenario) for most
# of a short run, so it is cut to 1 s; -parallel N sets the workers.
FUZZFLAGS ?= -fuzzminimizetime 1s
fuzz:
	@set -e; for pkg in $$($(GO) list $(PKGS)); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "fuzz $$pkg $$f"; \
	    $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $(FUZZFLAGS) $$pkg; \
	  done; \
	done

# Re-record every conformance scenario twice on a real Slurm 22.05 (needs
# root; installs Debian's packages; about an hour). SCENARIOS="a b" limits it.
conformance:
	conformance/record-all.sh $(SCENARIOS)

# gofmt, go vet, and go.mod and go.sum as go mod tidy would leave them
# (it prints the change it would make).
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	@$(GO) mod tidy -diff || { echo "go.mod/go.sum are not tidy: run go mod tidy"; exit 1; }
