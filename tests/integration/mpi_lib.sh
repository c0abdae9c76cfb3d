# tests/integration/mpi_lib.sh: helpers of the Open MPI tests (sourced).
# shellcheck shell=bash
# mpi_need: skip (77) unless mpirun exists and the program was built with
# MPI.  Sets MPIRUN_ARGS for one machine: ranks on localhost only
# (loopback for the byte transfer and out-of-band channels), more ranks
# than cores allowed, and root allowed (CI runs as root).
mpi_need() {
	command -v mpirun >/dev/null 2>&1 || { echo "skip: no mpirun (openmpi-bin)"; exit 77; }
	if [ -n "${1:-}" ] && [ ! -x "$1" ]; then
		echo "skip: built without MPI (no $1)"; exit 77
	fi
	export OMPI_MCA_btl=self,tcp OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
	export OMPI_MCA_rmaps_base_oversubscribe=1
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
	# an --enable-asan build: Open MPI's own allocations are not ours
	# (tests/lsan-mpi.supp); its components stay loaded at exit and
	# malloc stacks are unwound fully, so the suppressions can name them
	local supp
	supp="${MB_SRCDIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}/tests/lsan-mpi.supp"
	export OMPI_MCA_mca_base_component_disable_dlclose=1
	# and the sanitizer does not follow dynamic TLS (intercept_tls_get_addr=0):
	# its record of a dlopened component's TLS block can be stale by the
	# time a rank exits (seen: "DTLS 7 at 0x000000003bad-0x000400004caf"),
	# and LeakSanitizer's tracer then faults scanning it ("Tracer caught
	# signal 11 ... LeakSanitizer has encountered a fatal error") instead of
	# checking for leaks; mailbench's own TLS is static and still scanned
	export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0:intercept_tls_get_addr=0"
	export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$supp"
	MPIRUN_ARGS="--oversubscribe"
	[ "$(id -u)" = 0 ] && MPIRUN_ARGS="$MPIRUN_ARGS --allow-run-as-root"
	return 0
}
