/* content.h: generated message content (bodies, subjects, names).
 *
 * SHARED GENERATOR: the load engine (src/load) and `mailbench init`
 * (src/store) both call this; there is one generator in the tree, here in
 * core, the lowest layer.  Store engineer: populate mailboxes with
 * mb_content_size() + mb_content_fill() (or mb_content_body()).
 *
 * Bodies are English-like text: words drawn with a Zipf law from a fixed
 * vocabulary (common English words first, then generated words), sentences
 * and paragraphs (a body samples sentences from a fixed pool of 32,768
 * generated once, so bodies come at memory speed for `mailbench init`), so that the wire's
 * LZ77+DIRECT2 compresses them about 2.4:1 like real English prose. A body is a pure function of
 * its seed: the same seed gives the same bytes, different seeds give different texts (never one
 * repeated body).  Sizes follow a log-normal law (sigma 1) around the requested average, clamped to
 * [MB_CONTENT_MIN, MB_CONTENT_MAX], with the mean kept at the average. Thread-safe: the vocabulary
 * is built once (pthread_once) and read-only.
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
/* Kinds of content, each with the compressibility of its real
 * counterpart under the wire's LZ77+DIRECT2 (proto/lz77.h), not one tuned
 * ratio; the ratios tests/unit/test_content.c measures per 28 KB chunk of
 * 43,254-byte samples:
 *   text    plain text (the generator above; English prose
 *           measured here: 2.4-2.5:1)                          2.4:1
 *   rtf     the text in RTF control words (Outlook's RTF)      3.0:1
 *   html    the text in Outlook-style HTML markup              3.5:1
 *   office  an office document: a compound-file layout with
 *           sector tables, UTF-16 text runs, records, stream
 *           ends, a little binary (as Word/Excel 97-2003 files
 *           measured here: 2.7-4.1:1 per 28 KB, 3.6:1 mean)    3.7:1
 *   image   a compressed image (JPEG-like: a header, then
 *           entropy-coded data that does not compress)         1.0:1
 *   bitmap  an uncompressed Windows bitmap of a drawing (BMP,
 *           24 bits: flat shapes, anti-aliased edges, some
 *           detailed areas; as small real drawings, diagrams
 *           and icons written as BMPs: 2.2-6.4:1, 4.4:1 mean)  4.3:1
 *   photo   an uncompressed Windows bitmap of a photograph (the
 *           BMP header, then pixels that do not compress: real
 *           photographs written as BMPs, 1.00-1.01:1)           1.0:1
 * Each is a pure function of (kind, seed, len).  The codes travel as
 * PR_ATTACH_KIND: new kinds go last. */
enum mb_content_kind {
	MB_CK_TEXT = 0,
	MB_CK_RTF,
	MB_CK_HTML,
	MB_CK_OFFICE,
	MB_CK_IMAGE,
	MB_CK_BITMAP,
	MB_CK_PHOTO,
	MB_CK_COUNT
};
/* "text", "rtf", "html", "office", "image", "bitmap", "photo". */
const char *mb_content_kind_name(enum mb_content_kind k);
/* The same names by code, then NULL (a choice list for the options). */
extern const char *const mb_content_kind_names[MB_CK_COUNT + 1];
/* An attachment file name's extension: "txt", "rtf", "htm", "doc", "jpg",
 * "bmp", "bmp" ("bin" for an unknown kind). */
const char *mb_content_kind_ext(enum mb_content_kind k);
/* MB_EINVAL for an unknown name. */
int mb_content_kind_parse(const char *name, enum mb_content_kind *out);
/* Fill exactly len bytes of buf with content of kind k from seed. */
void mb_content_fill_kind(enum mb_content_kind k, uint64_t seed, char *buf, size_t len);

/* A NUL-terminated subject line (a few words) into buf (len >= 2). */
void mb_content_subject(uint64_t seed, char *buf, size_t len);

#endif
