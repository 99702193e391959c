#!/usr/bin/env bash
# gpu_scf_check.sh: the GPU path's checks and timings on the lent machine, in one call.
#
# Here (the build machine):
#   ../shared/device/prepare.sh --features mpi,scalapack,cuda si8_lda_gth_displaced \
#       si64_lda_gth_gamma si216_lda_gth_gamma si2_pbe_dojo h1_lsda_gth_box al1_lda_gth
# There (device tool, carry [".device"]):
#   bash docs/scripts/gpu_scf_check.sh "si8_lda_gth_displaced si2_pbe_dojo ..." [BIG_CASES]
#
# For every case: planewave on 1 rank x 16 threads with --device cpu and --device gpu; the
# energy and force differences (Ha/atom, Ha/bohr) and the wall times go to $OUT/gpu.tsv. For
# BIG_CASES the GPU run is compared with the CPU's 16 MPI ranks x 1 thread instead (the best
# CPU layout measured there). The
# first failing GPU run stops the script (exit 1), so a broken build costs one short call.
. .device/env.sh
OUT=${OUT:-/tmp/gpu-out}; mkdir -p "$OUT"
small=$1; big=${2:-}
nvidia-smi -L 2>&1 | head -2
printf "case\tlayout\tdevice\twall_s\tscf_it\tE_ha\tdE_per_atom\tmax_dF\n" | tee "$OUT/gpu.tsv"

# run CASE DEVICE RANKS THREADS: one run in its own folder, echo the folder.
run() {
  local c=$1 dev=$2 np=$3 th=$4 w=/tmp/run/$1-$2-$3x$4
  rm -rf "$w"; mkdir -p "$w"; cp -r .device/cases/$c/* "$w"/
  local t0 t1
  t0=$(date +%s.%N)
  (cd "$w" && RAYON_NUM_THREADS=$th timeout ${LIMIT_S:-400} mpirun -np "$np" --bind-to none \
      -x RAYON_NUM_THREADS planewave run pw.in --device "$dev" > out.txt 2>&1)
  local rc=$?
  t1=$(date +%s.%N)
  awk "BEGIN{print $t1 - $t0}" > "$w/wall"
  echo "$rc" > "$w/rc"
}

# row CASE LAYOUT DEVICE FOLDER REFERENCE_FOLDER
row() {
  python3 - "$@" <<'PY' | tee -a "$OUT/gpu.tsv"
import json, sys
case, layout, dev, w, ref = sys.argv[1:6]
wall = open(w + "/wall").read().strip()
try:
    d = json.load(open(w + "/pw.json"))
except Exception:
    print(f"{case}\t{layout}\t{dev}\t{wall}\tFAILED (rc {open(w + '/rc').read().strip()})")
    sys.exit(0)
r = json.load(open(ref + "/pw.json"))
n = len(d.get("forces_ha_per_bohr") or [[0, 0, 0]])
de = abs(d["total_energy_ha"] - r["total_energy_ha"]) / n
f, fr = d.get("forces_ha_per_bohr") or [], r.get("forces_ha_per_bohr") or []
df = max((abs(a - b) for x, y in zip(f, fr) for a, b in zip(x, y)), default=0.0)
print(f"{case}\t{layout}\t{dev}\t{float(wall):.2f}\t{d['scf_iterations']}\t{d['total_energy_ha']:.10f}\t{de:.1e}\t{df:.1e}")
PY
}

status=0
for c in $small; do
  run "$c" cpu 1 16; run "$c" gpu 1 16
  row "$c" 1x16 cpu /tmp/run/$c-cpu-1x16 /tmp/run/$c-cpu-1x16
  row "$c" 1x16 gpu /tmp/run/$c-gpu-1x16 /tmp/run/$c-cpu-1x16
  if [ "$(cat /tmp/run/$c-gpu-1x16/rc)" != 0 ]; then tail -20 /tmp/run/$c-gpu-1x16/out.txt; status=1; break; fi
done
# The big cases against the CPU's best layout there (16 ranks x 1 thread).
if [ $status = 0 ]; then
  for c in $big; do
    run "$c" gpu 1 16; run "$c" cpu 16 1
    row "$c" 16x1 cpu /tmp/run/$c-cpu-16x1 /tmp/run/$c-cpu-16x1
    row "$c" 1x16 gpu /tmp/run/$c-gpu-1x16 /tmp/run/$c-cpu-16x1
  done
fi
grep -H "local part of H\|timings (s)" /tmp/run/*/out.txt 2>/dev/null | sed 's|^/tmp/run/||' | head -40
(cd /tmp/run && tar czf "$OUT/gpu-runs.tgz" */out.txt */pw.json 2>/dev/null || true)
exit $status
