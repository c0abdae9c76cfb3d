/* sig.h: the end of a command's signal handling.
 *
 * A command stops on SIGINT or SIGTERM through libuv signal handles; when
 * it closes them on its way out, libuv gives the signals back their default
 * action.  timeout(1) and process-group kills send a second SIGTERM, and on
 * a loaded machine it can arrive that late: the default action would then
 * kill the command mid-exit (exit 143, its buffered output and the rest of
 * its clean-up lost).  mb_signals_absorb, called once the handles are
 * closed, ignores SIGINT and SIGTERM for the rest of the process's life: it
 * is already stopping.  Not for a library: only a command's own exit path
 * calls it.
 */
#ifndef MB_CORE_SIG_H
#define MB_CORE_SIG_H

void mb_signals_absorb(void);

#endif
