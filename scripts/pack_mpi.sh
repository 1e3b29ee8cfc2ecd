#!/usr/bin/env bash
# Bundles the OpenMPI runtime that `mpirun -np N build/kernlab ...` needs into dist/mpi/, for a
# machine without OpenMPI (the GPU machines): mpirun (orterun) and orted, libmpi and the shared
# libraries it and they need beyond glibc and libstdc++, the MCA components that need nothing
# else (no InfiniBand, UCX, libfabric or PSM: one host's ranks talk over shared memory or TCP),
# PMIx's components, the help texts and the parameter file. It runs from wherever it is unpacked:
#   . dist/mpi/env.sh && mpirun -np 2 build/kernlab tune ...
# (env.sh sets PATH, LD_LIBRARY_PATH and OPAL_PREFIX with the OPAL_* folders). About 6 MB.
#   scripts/pack_mpi.sh [DEST]     (DEST: dist/mpi)
# Needs the packages scripts/setup.sh installs (openmpi-bin, libopenmpi-dev).
set -euo pipefail
cd "$(dirname "$0")/.."
dest=${1:-dist/mpi}

command -v ompi_info >/dev/null || { echo "pack_mpi: no ompi_info: install openmpi-bin" >&2; exit 1; }
ompi_path() { ompi_info --path "$1" | sed -n 's/^ *[A-Za-z]*: //p' | head -n 1; }
pkglibdir=$(ompi_path pkglibdir)  # the MCA components
pkgdatadir=$(ompi_path pkgdatadir)  # help texts
sysconfdir=$(ompi_path sysconfdir)  # openmpi-mca-params.conf
orterun=$(readlink -f "$(command -v mpirun)")
orted=$(dirname "$orterun")/orted
pmix_lib=$(readlink -f "$(ldconfig -p | sed -n 's/.*libpmix.so.2 .*=> //p' | head -n 1)")
pmix_components=$(dirname "$pmix_lib")/pmix
transport=build/libkernlab_mpi.so
[ -f "$transport" ] || { echo "pack_mpi: no $transport: build with MPI first" >&2; exit 1; }

rm -rf "$dest"
mkdir -p "$dest/bin" "$dest/lib/openmpi" "$dest/lib/pmix" "$dest/share/openmpi" "$dest/etc"

# Libraries every Linux machine that runs kernlab has: never bundled.
system_lib='^(linux-vdso|ld-linux|libc|libm|libpthread|libdl|librt|libstdc\+\+|libgcc_s)\.'
# Components that need what a GPU machine may lack (and one host does not need): left out.
needs_fabric='libuc[pstm]|libfabric|libpsm|libinfinipath|libibverbs|librdmacm|libefa|libnl-|liboshmem|libmca_common_(ucx|ofi|verbs)'
deps() { ldd "$1" | awk '/=>/ && $3 ~ /^\// {print $3}'; }

cp "$orterun" "$dest/bin/orterun"
ln -s orterun "$dest/bin/mpirun"
ln -s orterun "$dest/bin/mpiexec"
[ -x "$orted" ] && cp "$orted" "$dest/bin/orted"

kept=0 dropped=0
for c in "$pkglibdir"/*.so; do
  # (ldd's output whole first: grep -q would end the pipe early and pipefail turn it false)
  libs=$(ldd "$c" 2>&1 || true)
  if grep -qE "not found|$needs_fabric" <<<"$libs"; then
    dropped=$((dropped + 1))
  else
    cp "$c" "$dest/lib/openmpi/"
    kept=$((kept + 1))
  fi
done
[ -d "$pmix_components" ] && cp "$pmix_components"/*.so "$dest/lib/pmix/"

# The shared libraries of everything above, by soname, until nothing new turns up.
for f in "$dest/bin/orterun" "$dest/bin/orted" "$transport" "$dest"/lib/openmpi/*.so \
         "$dest"/lib/pmix/*.so; do
  [ -f "$f" ] || continue
  for lib in $(deps "$f"); do
    name=$(basename "$lib")
    [[ $name =~ $system_lib ]] && continue
    [ -e "$dest/lib/$name" ] && continue
    cp -L "$lib" "$dest/lib/$name"
    for sub in $(deps "$lib"); do  # one level further (libpmix's own, say)
      subname=$(basename "$sub")
      [[ $subname =~ $system_lib ]] || [ -e "$dest/lib/$subname" ] || cp -L "$sub" "$dest/lib/$subname"
    done
  done
done

cp -r "$pkgdatadir"/. "$dest/share/openmpi/"
[ -f "$sysconfdir/openmpi-mca-params.conf" ] && cp "$sysconfdir/openmpi-mca-params.conf" "$dest/etc/"
[ -f "$sysconfdir/openmpi-default-hostfile" ] && cp "$sysconfdir/openmpi-default-hostfile" "$dest/etc/"
cat >> "$dest/etc/openmpi-mca-params.conf" <<'EOF'
# scripts/pack_mpi.sh: one host's ranks over shared memory (no single-copy CMA, which a
# container's ptrace rules may forbid), TCP between hosts; no fabric components are bundled.
btl = self,vader,tcp
btl_vader_single_copy_mechanism = none
pml = ob1
EOF

cat > "$dest/env.sh" <<'EOF'
# Source this: the bundled OpenMPI (scripts/pack_mpi.sh) first on PATH and the library path,
# relocated to where this file is (OPAL_PREFIX and the folders OpenMPI would look in otherwise).
_kl_mpi=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export PATH="$_kl_mpi/bin:$PATH"
export LD_LIBRARY_PATH="$_kl_mpi/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export OPAL_PREFIX="$_kl_mpi" OPAL_EXEC_PREFIX="$_kl_mpi" OPAL_BINDIR="$_kl_mpi/bin"
export OPAL_LIBDIR="$_kl_mpi/lib" OPAL_PKGLIBDIR="$_kl_mpi/lib/openmpi"
export OPAL_DATAROOTDIR="$_kl_mpi/share" OPAL_DATADIR="$_kl_mpi/share"
export OPAL_PKGDATADIR="$_kl_mpi/share/openmpi" OPAL_SYSCONFDIR="$_kl_mpi/etc"
export PMIX_MCA_mca_base_component_path="$_kl_mpi/lib/pmix"
# As root (a container), OpenMPI wants to be told twice.
if [ "$(id -u)" -eq 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
unset _kl_mpi
EOF

echo "pack_mpi: $dest, $(du -sh "$dest" | cut -f1): $kept MCA components ($dropped left out), $(ls "$dest/lib" | grep -c '\.so') libraries"
