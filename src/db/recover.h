/* recover.h: checkpoints and crash recovery of a storage group (recover.c),
 * for group.c.  mb_sg_checkpoint itself is public (db.h).
 */
#ifndef MB_DB_RECOVER_H
#define MB_DB_RECOVER_H

#include <stdint.h>

struct mb_sg;

/* replay the log from redo (the group's log has been scanned and started),
 * then checkpoint; the databases it opened are closed again */
int sg_replay(struct mb_sg *sg, uint64_t redo);
/* start the checkpointer thread, woken every checkpoint_bytes of log
 * (UINT64_MAX: only on demand) */
int ckpt_start(struct mb_sg *sg, uint64_t checkpoint_bytes);
/* stop and join it (no-op when not started) */
void ckpt_stop(struct mb_sg *sg);

#endif
