# Conveniences only: every recipe is a plain command you can run without just.

# Placement sets and node sets on three node generations (KTH-SP2); results and report in results/demo/.
demo:
    cargo run --release -- demo

# The whole test suite (what CI runs).
test:
    cargo test --workspace

# Whole-process wall time, jobs/s and peak memory, each beside the count-based Python reference.
bench:
    bash scripts/bench.sh

# Formatting, lints and docs, as strict as review (CI runs these before the tests).
lint:
    cargo fmt --all -- --check
    cargo clippy --workspace --all-targets -- -D warnings
    RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --workspace
