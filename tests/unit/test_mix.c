/* test_mix.c: unit tests of the message mix (core/mix.h and the
 * message_mix keys of the scenario files): the initialised mailbox of both
 * scenarios averages the published 75 KB, the send mix is LoadSim's MMB mix
 * (kinds, weights, cited), draws follow the weights and sizes keep the
 * means, every kind says where its figures come from, and the loader
 * refuses a mix that does not average avg_message_kb. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the four headers above first */
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "core/mix.h"
#include "core/scenario.h"

static struct mb_scenario *load(const char *name)
{
	struct mb_scenario *sc = calloc(1, sizeof(*sc));
	struct mb_cfg_error err;
	assert_non_null(sc);
	assert_int_equal(mb_scenario_load(name, sc, &err), 0);
	return sc;
}

static void test_published_mixes(void **state)
{
	(void)state;
	static const char *const names[] = {"online", "cached"};
	for (int s = 0; s < 2; s++) {
		struct mb_scenario *sc = load(names[s]);
		assert_true(sc->mix_init_count >= 3);
		double kb = mb_mix_mean_kb(sc->mix_init, sc->mix_init_count);
		assert_true(fabs(kb - 75.0) < 0.75);
		/* LoadSim's MMB send mix: seven message files, weights 60/16/4/6/4/4/2 */
		static const double w[] = {60, 16, 4, 6, 4, 4, 2};
		assert_int_equal(sc->mix_send_count, 7);
		for (int i = 0; i < 7; i++) {
			assert_true(sc->mix_send[i].weight == w[i]);
			assert_non_null(strstr(sc->mix_send[i].source, "[MMB]"));
		}
		assert_string_equal(sc->mix_send[0].name, "Ups1k.msg");
		assert_string_equal(sc->mix_send[0].body, "rtf");
		assert_int_equal(sc->mix_send[6].attachments, 1);
		/* Upsbmobj.msg's bitmap: uncompressed pixels, its picture a
		 * calibrated choice */
		assert_string_equal(sc->mix_send[6].attachment, "photo");
		assert_non_null(strstr(sc->mix_send[6].source, "calibrated"));
		assert_true(sc->mix_send[6].attachment_kb == 43);
		/* mostly small bodies: the send mix averages about 4 KB */
		double skb = mb_mix_mean_kb(sc->mix_send, sc->mix_send_count);
		assert_true(skb > 3.5 && skb < 5.0);
		/* every init kind is marked calibrated (no source gives them) */
		for (int i = 0; i < sc->mix_init_count; i++)
			assert_non_null(strstr(sc->mix_init[i].source, "calibrated"));
		assert_true(sc->open_attachment_pct > 0 && sc->open_attachment_pct <= 100);
		free(sc);
	}
}

static void test_draws(void **state)
{
	(void)state;
	struct mb_scenario *sc = load("online");
	const int n = 200000;
	double bytes = 0, cnt[MB_MIX_MAX] = {0}, wsum = 0;
	for (int i = 0; i < sc->mix_init_count; i++)
		wsum += sc->mix_init[i].weight;
	for (int i = 0; i < n; i++) {
		struct mb_mix_msg p;
		mb_mix_draw(sc->mix_init, sc->mix_init_count, (uint64_t)i * 7919 + 1, &p);
		assert_true(p.kind >= 0 && p.kind < sc->mix_init_count);
		const struct mb_mix_kind *k = &sc->mix_init[p.kind];
		assert_int_equal(p.nattach, k->attachments);
		assert_true(p.body_len >= (size_t)(k->body_kb * 1024 * 0.75) - 1);
		assert_true(p.body_len <= (size_t)(k->body_kb * 1024 * 1.25) + 1);
		bytes += (double)p.body_len;
		for (int a = 0; a < p.nattach; a++)
			bytes += (double)p.attach_len[a];
		cnt[p.kind]++;
	}
	/* the mean message: 75 KB within 1% */
	double kb = bytes / n / 1024.0;
	print_message("mean initialised message %.2f KB\n", kb);
	assert_true(fabs(kb - 75.0) < 0.75);
	for (int i = 0; i < sc->mix_init_count; i++)
		assert_true(fabs(cnt[i] / n - sc->mix_init[i].weight / wsum) < 0.01);
	/* deterministic per seed */
	struct mb_mix_msg a, b;
	mb_mix_draw(sc->mix_send, sc->mix_send_count, 42, &a);
	mb_mix_draw(sc->mix_send, sc->mix_send_count, 42, &b);
	assert_memory_equal(&a, &b, sizeof(a));
	assert_int_equal(mb_mix_content_kind("office"), MB_CK_OFFICE);
	free(sc);
}

static void test_loader_checks(void **state)
{
	(void)state;
	char dir[] = "/tmp/mb-mix-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[256];
	snprintf(path, sizeof(path), "%s/lab.cfg", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	/* a mix of 10 KB messages against the published 75 KB average */
	fprintf(f, "base = \"online\";\nmessage_mix = { init = ( { name = \"small\"; "
		   "body = \"text\"; body_kb = 10.0; weight = 1.0; source = \"test\"; } ); };\n");
	fclose(f);
	struct mb_scenario *sc = calloc(1, sizeof(*sc));
	struct mb_cfg_error err;
	assert_int_equal(mb_scenario_load(path, sc, &err), MB_ECONFIG);
	char msg[1024];
	mb_cfg_error_format(&err, msg, sizeof(msg));
	print_message("%s\n", msg);
	assert_non_null(strstr(msg, "message_mix.init"));
	assert_non_null(strstr(msg, "avg_message_kb"));
	/* an unknown body format names its field */
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "base = \"online\";\nmessage_mix = { send = ( { name = \"x\"; body = \"pdf\"; "
		   "body_kb = 1.0; weight = 1.0; source = \"test\"; } ); };\n");
	fclose(f);
	assert_int_equal(mb_scenario_load(path, sc, &err), MB_ECONFIG);
	mb_cfg_error_format(&err, msg, sizeof(msg));
	print_message("%s\n", msg);
	assert_non_null(strstr(msg, "body"));
	unlink(path);
	rmdir(dir);
	free(sc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_published_mixes),
	    cmocka_unit_test(test_draws),
	    cmocka_unit_test(test_loader_checks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
