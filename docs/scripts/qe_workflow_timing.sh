#!/bin/bash
# Times Quantum ESPRESSO against planewave on the shared reference set's post-processing
# workflow (docs/performance.md, "The post-processing workflow"): the SCF, the bands step,
# bands.x, the nscf step and dos.x by optimised tetrahedra, the two programs alternating, RUNS
# runs each. QE runs as 2 MPI ranks (bands.x and dos.x serial), planewave as one process of 2
# threads. Prints wall seconds per step and run.
#
#   docs/scripts/qe_workflow_timing.sh [PLANEWAVE_BINARY]
#
# Environment: CASE (default ../shared/reference/post/si2_lda_gth), RUNS (3), WORK (a scratch
# folder, default /tmp/planewave-qe-workflow).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
PW=${1:-$root/target/release/planewave}
CASE=${CASE:-$root/../shared/reference/post/si2_lda_gth}
RUNS=${RUNS:-3}
WORK=${WORK:-/tmp/planewave-qe-workflow}
seconds() {
    local s
    s=$(date +%s.%N)
    "$@" >/dev/null 2>&1 || echo "FAILED: $*" >&2
    echo "$(date +%s.%N) - $s" | bc
}
for run in $(seq "$RUNS"); do
    for prog in qe planewave; do
        d=$WORK/$prog$run
        rm -rf "$d" && mkdir -p "$d" && cp -r "$CASE"/{scf,bands,dos} "$d"/ && chmod -R u+w "$d"
        rm -rf "$d"/*/qe_tmp
        if [ "$prog" = qe ]; then
            pw=(mpirun --allow-run-as-root -np 2 pw.x -in pw.in)
            bands=(bands.x -in bands.in)
            dos=(dos.x -in dos_tetra.in)
        else
            export RAYON_NUM_THREADS=2
            pw=("$PW" run pw.in)
            bands=("$PW" run bands.in)
            dos=("$PW" run dos_tetra.in)
        fi
        scf=$(cd "$d/scf" && seconds "${pw[@]}")
        cp -r "$d/scf/qe_tmp" "$d/bands/" && cp -r "$d/scf/qe_tmp" "$d/dos/"
        b=$(cd "$d/bands" && seconds "${pw[@]}")
        bx=$(cd "$d/bands" && seconds "${bands[@]}")
        n=$(cd "$d/dos" && seconds "${pw[@]}")
        dx=$(cd "$d/dos" && seconds "${dos[@]}")
        echo "$prog run $run: scf $scf bands $b bands.x $bx nscf $n dos.x $dx"
    done
done
