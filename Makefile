# One command runs locally exactly what CI runs: `make check`.
CARGO ?= cargo

.PHONY: demo pgo install test rust-test pytest check check-long fmt lint bench

## Build the release binary (cargo's progress shown: the first build takes minutes) and compare
## the cache schemes on a generated MSR-like trace.
demo:
	$(CARGO) build --release -p shingled-cli
	./target/release/shingled compare

## Build `shingled` with profile-guided optimisation into target/pgo/shingled (an instrumented
## build, a training run on generated traces, the optimised build; about 7 minutes on two cores;
## needs llvm-profdata of rustc's LLVM version: scripts/build_pgo.sh says which).
pgo:
	scripts/build_pgo.sh

## Install `shingled` into ~/.cargo/bin (cargo's default install root).
install:
	$(CARGO) install --locked --path crates/cli

## The test suite (what README tells a new user to run): Rust, then the Python package.
test: rust-test pytest

rust-test:
	@echo "rust-test: building the workspace's tests (cargo shows its progress; the first build takes about 6 minutes on two cores), then running them"
	$(CARGO) test --workspace --lib --bins --tests --no-run
	$(CARGO) test --workspace --lib --bins --tests -q
	$(CARGO) test -p shingled-zoned --features blkdev --lib -q
	$(CARGO) test --workspace --doc -q

VENV ?= .venv
PY := $(VENV)/bin/python
WHEELS := target/pytest-wheel

## Builds the Python package (crates/py) as a release wheel, installs it into $(VENV) with the
## extras README names plus the test tools, and runs its pytest suite. Its README test installs
## README's own line into a fresh virtual environment (the same cargo build, reused).
pytest:
	test -x $(PY) || python3 -m venv $(VENV)
	@echo "pytest: installing maturin and the test tools into $(VENV)"
	$(PY) -m pip install -q --progress-bar off maturin pytest hypothesis
	$(PY) -c "import ray" 2>/dev/null || $(PY) -m pip install -q --progress-bar off ray || echo "ray did not install: the Ray sweep test will skip"
	@echo "pytest: building the Python package's wheel (release; the first build takes about 6 minutes on two cores)"
	rm -rf $(WHEELS)
	$(VENV)/bin/maturin build --release -m crates/py/Cargo.toml -o $(WHEELS)
	$(PY) -m pip install -q --progress-bar off --force-reinstall --no-deps $(WHEELS)/shingled-*.whl
	$(PY) -m pip install -q --progress-bar off "$$(ls $(WHEELS)/shingled-*.whl)[plot,progress,parquet,test]"
	@echo "pytest: building the shingled binary the CLI-facing tests run (debug)"
	$(CARGO) build -p shingled-cli
	SHINGLED_EXPECT_RAY=$$($(PY) -c "import ray" 2>/dev/null && echo 1) SHINGLED_BIN=$(abspath target/debug/shingled) $(PY) -m pytest crates/py/tests -q

fmt:
	$(CARGO) fmt --all -- --check

lint:
	python3 scripts/check_layering.py --self-test
	python3 scripts/check_layering.py
	$(CARGO) clippy --workspace --all-targets -q -- -D warnings
	$(CARGO) clippy -p shingled-zoned --features blkdev --all-targets -q -- -D warnings
	@# `shingled stl serve --ublk` (feature ublk: libublk, whose bindgen needs libclang-dev).
	@if ls /usr/lib/llvm-*/lib/libclang.so* /usr/lib/x86_64-linux-gnu/libclang*.so* >/dev/null 2>&1; then \
	  echo "$(CARGO) clippy -p shingled-cli --features ublk --all-targets -q -- -D warnings"; \
	  $(CARGO) clippy -p shingled-cli --features ublk --all-targets -q -- -D warnings; \
	else echo "lint: skipping the ublk feature (no libclang; Debian: apt-get install libclang-dev)"; fi

## Everything CI runs.
check: fmt lint test

## The long checks CI does not run (release build): every crash point of the store's crash
## sweep, of the SMaRT and dm-zoned block devices' and of the block cache's, the probe's 400-draw accuracy run, and whether the
## generated tables of docs/reproduction.md and docs/drive-models.md are current (they rerun
## every experiment and bench: about ten minutes). docs cite their figures with this target.
check-long:
	$(CARGO) test --release -p shingled-store --test integration -q -- --ignored --nocapture
	$(CARGO) test --release -p shingled-stl --test smart -q -- --ignored --nocapture
	$(CARGO) test --release -p shingled-stl --test dmzoned -q -- --ignored --nocapture
	$(CARGO) test --release -p shingled-blockcache -q -- --ignored --nocapture
	$(CARGO) test --release -p shingled-probe --test accuracy -q -- --ignored --nocapture
	$(CARGO) build --release -p shingled-cli
	python3 scripts/reproduction.py --check
	python3 scripts/drive_models_tables.py --bin target/release/shingled --check
	python3 scripts/cache_replay_table.py --bin target/release/shingled --check
	@# The profile-guided build reports what the release build reports (needs llvm-profdata).
	scripts/build_pgo.sh --check

## Benchmarks (release); results go in docs/benchmarks.md by hand.
bench:
	$(CARGO) bench -p shingled-trace --bench ingest
	$(CARGO) bench -p shingled-sim --bench replay
