/* mix.c: drawing messages from a message mix (see mix.h). */
#include "core/mix.h"

#include <string.h>

#include "core/rng.h"

enum mb_content_kind mb_mix_content_kind(const char *name)
{
	enum mb_content_kind k;
	return mb_content_kind_parse(name, &k) == 0 ? k : MB_CK_TEXT;
}

double mb_mix_mean_kb(const struct mb_mix_kind *kinds, int n)
{
	double w = 0, kb = 0;
	for (int i = 0; i < n; i++) {
		w += kinds[i].weight;
		kb += kinds[i].weight *
		      (kinds[i].body_kb + kinds[i].attachments * kinds[i].attachment_kb);
	}
	return w > 0 ? kb / w : 0;
}

static size_t around(uint64_t *s, double kb)
{
	double v = kb * 1024.0 * (0.75 + 0.5 * mb_rng_unit(s));
	return v < 1 ? 1 : (size_t)(v + 0.5);
}

void mb_mix_draw(const struct mb_mix_kind *kinds, int n, uint64_t seed, struct mb_mix_msg *out)
{
	uint64_t s = seed ^ 0x6d6978ULL;
	memset(out, 0, sizeof(*out));
	double w = 0;
	for (int i = 0; i < n; i++)
		w += kinds[i].weight;
	double pick = mb_rng_unit(&s) * w;
	int k = n - 1;
	for (int i = 0; i < n; i++) {
		if (pick < kinds[i].weight) {
			k = i;
			break;
		}
		pick -= kinds[i].weight;
	}
	const struct mb_mix_kind *mk = &kinds[k];
	out->kind = k;
	out->body = mb_mix_content_kind(mk->body);
	out->body_len = around(&s, mk->body_kb);
	out->nattach = mk->attachments > MB_MIX_MAX_ATTACH ? MB_MIX_MAX_ATTACH : mk->attachments;
	out->attach_kind = mb_mix_content_kind(mk->attachment);
	for (int i = 0; i < out->nattach; i++)
		out->attach_len[i] = around(&s, mk->attachment_kb);
}
