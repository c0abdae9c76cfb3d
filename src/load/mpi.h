/* mpi.h: the Open MPI implementation of the distributed load engine
 * (dist.h).  Built only when configure finds MPI (MB_HAVE_MPI), into its
 * own archive (src/load/libmbmpi.a), so that nothing else links MPI. */
#ifndef MB_LOAD_MPI_H
#define MB_LOAD_MPI_H

#include "load/dist.h"

extern const struct mb_dist_ops mb_mpi_dist_ops;

#endif
