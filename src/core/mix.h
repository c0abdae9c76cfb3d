/* mix.h: a message mix (scenario message_mix.*) turned into messages.
 *
 * A kind is drawn by weight; its body and each attachment get a size drawn
 * uniformly within +-25% of the kind's mean, so the mix's mean message
 * size is exactly mb_mix_mean_kb().  A draw is a pure function of its seed.
 */
#ifndef MB_CORE_MIX_H
#define MB_CORE_MIX_H

#include <stddef.h>
#include <stdint.h>

#include "core/content.h"
#include "core/scenario.h"

struct mb_mix_msg {
	int kind;		   /* index into the mix */
	enum mb_content_kind body; /* body format */
	size_t body_len;	   /* bytes (>= 1) */
	int nattach;
	enum mb_content_kind attach_kind;
	size_t attach_len[MB_MIX_MAX_ATTACH];
};

/* Mean bytes of a message of the mix / 1024 (body + attachments). */
double mb_mix_mean_kb(const struct mb_mix_kind *kinds, int n);
/* Draw a message from the mix (n > 0). */
void mb_mix_draw(const struct mb_mix_kind *kinds, int n, uint64_t seed, struct mb_mix_msg *out);
/* Content kind of a name the loader accepted (text when unknown). */
enum mb_content_kind mb_mix_content_kind(const char *name);

#endif
