# schedsim — build, test, benchmark, fuzz, lint.
GO      ?= go
PKGS    := ./...
FUZZTIME ?= 10s

.PHONY: all build test bench bench-data bench-year fuzz lint conformance conformance-report

all: lint test build

build:
	$(GO) build -o bin/schedsim ./cmd/schedsim

# The tests read ../shared/traces when it is there and skip those parts
# with a reason when it is not.
test:
	$(GO) vet $(PKGS)
	$(GO) test -count=1 $(PKGS)

# Benchmarks; figures go to BENCHMARKS.md with the command that made them.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 5 $(PKGS)

# The 1 M-job trace of bench/year-1024x8.yaml, synthesized (seed 1) from
# the year model fitted on the Thunder log (docs/scale.md).
bench-data: bench/data/year-1024x8.parquet

bench/data/year-1024x8.parquet: bench/year-model.yaml
	@mkdir -p bench/data
	$(GO) run ./cmd/schedsim trace synth bench/year-model.yaml --jobs 1000000 --seed 1 --out $@

# The scale benchmarks on that trace (minutes; figures in BENCHMARKS.md).
bench-year: bench-data
	$(GO) test ./cmd/schedsim -run '^$$' -bench 'BenchmarkYear' -benchtime 1x -count 3 -timeout 2h

# A short run of every fuzz target (go test -fuzz takes one target at a time).
fuzz:
	@set -e; for pkg in $$($(GO) list $(PKGS)); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "fuzz $$pkg $$f"; \
	    $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg; \
	  done; \
	done

# Re-record every conformance scenario twice on a real Slurm 22.05 (needs
# root; installs Debian's packages; about an hour). SCENARIOS="a b" limits it.
conformance:
	conformance/record-all.sh $(SCENARIOS)

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)

# A 1,000,000-job synthetic GPU workload for benchmarks, fitted from the
# Alibaba GPU cluster trace in ../shared/traces (not committed; bench/data
# is ignored by git). Same seed, same files.
BENCH_DATA  ?= bench/data
BENCH_TRACE ?= ../shared/traces/alibaba-gpu2023_openb_pod_list_default.csv
bench-data: build
	mkdir -p $(BENCH_DATA)
	bin/schedsim trace fit $(BENCH_TRACE) --out $(BENCH_DATA)/alibaba-model.yaml
	bin/schedsim trace synth $(BENCH_DATA)/alibaba-model.yaml --jobs 1000000 --seed 1 --out $(BENCH_DATA)/gpu-1m.sacct --sacct-utc
	bin/schedsim trace convert $(BENCH_DATA)/gpu-1m.sacct $(BENCH_DATA)/gpu-1m.swf
	bin/schedsim trace convert $(BENCH_DATA)/gpu-1m.sacct $(BENCH_DATA)/gpu-1m.parquet
