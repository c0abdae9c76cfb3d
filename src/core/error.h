/* error.h: the one error table of mailbench.
 *
 * Every function that can fail returns 0 on success or a negative MB_E*
 * code from this table; results travel through out-parameters.  The table
 * is an X-macro so that the enum, the names and the messages never drift.
 * Invariant: codes are negative, distinct and stable (they travel on the
 * wire in error replies), and MB_OK is 0.
 */
#ifndef MB_CORE_ERROR_H
#define MB_CORE_ERROR_H

/* X(NAME, value, message) */
#define MB_ERROR_TABLE(X)                                                                          \
	X(MB_OK, 0, "success")                                                                     \
	X(MB_EINVAL, -1, "invalid argument")                                                       \
	X(MB_ENOMEM, -2, "out of memory")                                                          \
	X(MB_EIO, -3, "input/output error")                                                        \
	X(MB_ENOSPC, -4, "no space left on device")                                                \
	X(MB_ECORRUPT, -5, "data corruption detected")                                             \
	X(MB_ENOTFOUND, -6, "not found")                                                           \
	X(MB_EEXIST, -7, "already exists")                                                         \
	X(MB_EACCES, -8, "access denied")                                                          \
	X(MB_EAUTH, -9, "authentication failed")                                                   \
	X(MB_EPROTO, -10, "protocol error")                                                        \
	X(MB_ETOOBIG, -11, "too large")                                                            \
	X(MB_ECLOSED, -12, "closed")                                                               \
	X(MB_EBUSY, -13, "busy")                                                                   \
	X(MB_EFULL, -14, "full")                                                                   \
	X(MB_ERDONLY, -15, "read-only: the storage group's log failed")                            \
	X(MB_ETIMEDOUT, -16, "timed out")                                                          \
	X(MB_ERANGE, -17, "value out of range")                                                    \
	X(MB_ECONFIG, -18, "configuration error")                                                  \
	X(MB_ESYS, -19, "system call failed")                                                      \
	X(MB_EAGAIN, -20, "try again")                                                             \
	X(MB_EUNSUPPORTED, -21, "not supported")                                                   \
	X(MB_ESTATE, -22, "invalid state for this operation")                                      \
	X(MB_ECHILD, -23, "child process failed")                                                  \
	X(MB_EMFILE, -24, "too many open files")                                                   \
	X(MB_EROFS, -25, "read-only file system")                                                  \
	X(MB_ETLS, -26, "TLS failure (handshake, certificate or record)")                          \
	X(MB_ELOWDISK, -27, "refused: the store's disk is below its free-space reserve")

enum mb_error {
#define MB_X_ENUM(name, value, msg) name = value,
	MB_ERROR_TABLE(MB_X_ENUM)
#undef MB_X_ENUM
};

/* Codes in the table: they run from MB_OK (0) down to -(MB_ERROR_COUNT - 1). */
#define MB_X_ONE(name, value, msg) +1
enum { MB_ERROR_COUNT = 0 MB_ERROR_TABLE(MB_X_ONE) };
#undef MB_X_ONE

/* Human-readable message for a code (never NULL). */
const char *mb_strerror(int code);
/* Symbolic name for a code ("MB_EIO"), or "MB_E?" when unknown. */
const char *mb_errname(int code);
/* Map an errno value (positive) to the closest MB_E* code. */
int mb_from_errno(int err);

/* Exit codes of the program. */
enum mb_exit {
	MB_EXIT_OK = 0,
	MB_EXIT_THRESHOLDS = 1,
	MB_EXIT_USAGE = 2,
	MB_EXIT_RUNTIME = 3,
};

#endif
