/* content.h: generated message content (bodies, subjects, names).
 *
 * SHARED GENERATOR: the load engine (src/load) and `mailbench init`
 * (src/store) both call this; there is one generator in the tree, here in
 * core, the lowest layer.  Store engineer: populate mailboxes with
 * mb_content_size() + mb_content_fill() (or mb_content_body()).
 *
 * Bodies are English-like text: words drawn with a Zipf law from a fixed
 * vocabulary (common English words first, then generated words), sentences
 * and paragraphs, so that LZ4 compresses them about 2:1 like real mail text.
 * A body is a pure function of its seed: the same seed gives the same bytes,
 * different seeds give different texts (never one repeated body).  Sizes
 * follow a log-normal law (sigma 1) around the requested average, clamped
 * to [MB_CONTENT_MIN, MB_CONTENT_MAX], with the mean kept at the average.
 * Thread-safe: the vocabulary is built once (pthread_once) and read-only.
 */
#ifndef MB_CORE_CONTENT_H
#define MB_CORE_CONTENT_H

#include <stddef.h>
#include <stdint.h>

#define MB_CONTENT_MIN 512
#define MB_CONTENT_MAX (1024 * 1024)

/* Draw a body size (bytes) with mean avg_bytes from seed. */
size_t mb_content_size(uint64_t seed, size_t avg_bytes);
/* Fill exactly len bytes of buf with text generated from seed (no NUL). */
void mb_content_fill(uint64_t seed, char *buf, size_t len);
/* A malloc'd body of mb_content_size(seed, avg_bytes) bytes, plus a NUL
 * that is not counted in *len.  MB_ENOMEM on failure. */
int mb_content_body(uint64_t seed, size_t avg_bytes, char **out, size_t *len);
/* A NUL-terminated subject line (a few words) into buf (len >= 2). */
void mb_content_subject(uint64_t seed, char *buf, size_t len);

#endif
