# docs/local.mk: the man page (installed) and the design documents (shipped).
dist_man_MANS = docs/mailbench.1
EXTRA_DIST += docs/ARCHITECTURE.md docs/performance.md docs/imap-target.md \
	docs/PROTOCOL.md docs/capacity-json.md docs/run-json.md docs/workload.md
TESTS += tests/integration/docs_counters.sh
EXTRA_DIST += tests/integration/docs_counters.sh
TESTS += tests/integration/docs_options.sh
EXTRA_DIST += tests/integration/docs_options.sh docs/gen-man.sh docs/tmux-html.py \
	docs/report.png docs/console-capacity.png docs/console-runs.png

# Regenerate the man page's generated sections from the tables.
update-man: mailbench$(EXEEXT)
	$(SHELL) $(top_srcdir)/docs/gen-man.sh ./mailbench$(EXEEXT) $(top_srcdir)/docs/mailbench.1 >mailbench.1.tmp
	mv mailbench.1.tmp $(top_srcdir)/docs/mailbench.1
.PHONY: update-man
