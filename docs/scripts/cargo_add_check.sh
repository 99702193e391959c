#!/usr/bin/env bash
# cargo_add_check.sh: the "cargo add" route a research code takes. In a fresh cargo project
# (a temporary folder, removed at the end): `cargo add planewave --path <this repository>` and
# `cargo add ndarray@0.16`, examples/planar_average.rs copied in unchanged as src/main.rs,
# built in release and run on this repository's examples/si.toml. Fails when a step fails or
# the program does not report the 8 electrons of Si2.
#
#     bash docs/scripts/cargo_add_check.sh
#
# The build shares this repository's target/ (CARGO_TARGET_DIR, when set, wins): with the
# repository's Cargo.lock and release profile the registry dependencies built there are
# reused, and only the planewave crates are compiled again (about 2 minutes on 2 cores).
# `cargo add` reads the crates.io index.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$repo/target}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cd "$work"
cargo new --quiet --bin --vcs none research_code
cd research_code
# The dependency versions the repository is tested with.
cp "$repo/Cargo.lock" .
cargo add --quiet planewave --path "$repo"
cargo add --quiet ndarray@0.16
cat >>Cargo.toml <<'TOML'

# As the repository's, so that the artifacts in its target/ are reused.
[profile.release]
debug = "line-tables-only"
TOML
cp "$repo/examples/planar_average.rs" src/main.rs
cat Cargo.toml

cargo build --release
out=$("$CARGO_TARGET_DIR/release/research_code" "$repo/examples/si.toml")
echo "$out"
grep -q "^electrons from the density: 8\.0000000000 " <<<"$out" || {
    echo "error: the program did not report 8 electrons" >&2
    exit 1
}
echo "cargo add check: passed"
