#!/usr/bin/env bash
# 2026-11-29 (session 4), nvidia-h200: how long a far out-of-bounds write takes the driver to
# report, one kernlab process a row under a 60 s watchdog; then the failing hostile test x5.
set -u -o pipefail
. scripts/gpu_prelude.sh
cd "$src" || exit 1
O=$out
{ date -u; ./build/kernlab --version; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv; } > "$O/device.log" 2>&1
cat "$O/device.log"
K="./build/kernlab --kernels-dir-only --kernels-dir dist/oneoff/oob --size 1000003 --dtype int32 --placement-workers 1 --kernel-timeout 60 --min-samples 3 --min-time 0"
./build/kernlab --kernels-dir-only --kernels-dir dist/oneoff/oob --variant all --block 128,256,512,1024 --compile-only > "$O/compile.log" 2>&1
for rep in 1 2; do
for v in reduce5 oob_1gib oob_1gib_one oob_64gib; do
  for b in 128 256 512 1024; do
    t0=$(date +%s.%N)
    timeout 120 $K --variant $v --block $b > "$O/row_${v}_${b}_$rep.log" 2>&1
    rc=$?
    t1=$(date +%s.%N)
    st=$(grep -Eo "(passed|CRASHED|TIMEOUT|crashed|timeout|FAILED|failed)[^|]*" "$O/row_${v}_${b}_$rep.log" | head -1 | cut -c1-110)
    printf "%s rep %s %-13s %5s rc %3s %6.2f s  %s\n" "$(date +%T)" $rep $v $b $rc $(awk "BEGIN{print $t1-$t0}") "$st" | tee -a "$O/times.log"
  done
done
done
step repeat 200 ctest --test-dir build -R AFarOutOfBoundsWriteIsACrashUnderAShortWatchdog --repeat until-fail:5 --output-on-failure
grep -h "oob \]\|Passed\|Failed" "$O/repeat.log"
(dmesg 2>&1 | tail -n 40) > "$O/dmesg.log"; tail -n 5 "$O/dmesg.log"
tar czf /tmp/out.tgz -C "$O" . && rm -rf "${O:?}"/* && mv /tmp/out.tgz "$O/"
exit 0
