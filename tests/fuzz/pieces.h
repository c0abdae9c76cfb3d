/* pieces.h: what the line-protocol fuzz harnesses (fuzz_imap, fuzz_smtp)
 * share: the input after its first byte is parsed once whole and once in
 * pieces of 1-17 bytes (the first byte says how many), and both parses
 * must find the same replies (their count and a hash of them) up to the
 * first error; otherwise abort(). */
#ifndef MB_TESTS_FUZZ_PIECES_H
#define MB_TESTS_FUZZ_PIECES_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* run(data, size, step, &count): parse data fed step bytes at a time; the
 * hash of what was found, and how many in count. */
typedef unsigned (*fuzz_run_fn)(const uint8_t *data, size_t size, size_t step, int *count);

static inline void fuzz_pieces_agree(const uint8_t *data, size_t size, fuzz_run_fn run)
{
	size_t step = (size_t)data[0] % 17 + 1;
	int c1, c2;
	unsigned h1 = run(data + 1, size - 1, size, &c1);
	unsigned h2 = run(data + 1, size - 1, step, &c2);
	if (c1 != c2 || h1 != h2)
		abort();
}

#endif
