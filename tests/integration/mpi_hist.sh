#!/bin/bash
# tests/integration/mpi_hist.sh: the merged histogram of an Open MPI window
# reduction equals the histogram of the same samples recorded in one
# process: tests/unit/test_mpi under `mpirun -n 3` (fixed samples split
# across the ranks; rank 0 compares bucket for bucket).  Skips (77)
# without mpirun or without an MPI build.
set -u
B=${MB_BUILDDIR:-.}
. "$(dirname "$0")/mpi_lib.sh"
mpi_need "$B/tests/unit/test_mpi"
# shellcheck disable=SC2086
timeout 120 mpirun $MPIRUN_ARGS -n 3 "$B/tests/unit/test_mpi" || { echo "FAIL: test_mpi under mpirun -n 3"; exit 1; }
