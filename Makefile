# One command runs locally exactly what CI runs: `make check`.
CARGO ?= cargo

.PHONY: demo test check fmt lint bench

## Build the release binary and compare the cache schemes on a generated MSR-like trace.
demo:
	$(CARGO) run --release -q -p shingled-cli -- compare

## The test suite (what README tells a new user to run).
test:
	$(CARGO) test --workspace --lib --bins --tests -q
	$(CARGO) test --workspace --doc -q

fmt:
	$(CARGO) fmt --all -- --check

lint:
	$(CARGO) clippy --workspace --all-targets -q -- -D warnings

## Everything CI runs.
check: fmt lint test

## Benchmarks (release); results go in docs/benchmarks.md by hand.
bench:
	$(CARGO) bench -p shingled-trace --bench ingest
	$(CARGO) bench -p shingled-sim --bench replay
