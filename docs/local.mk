# docs/local.mk: the man page (installed) and the design documents (shipped).
dist_man_MANS = docs/mailbench.1
EXTRA_DIST += docs/ARCHITECTURE.md
TESTS += tests/integration/docs_counters.sh
EXTRA_DIST += tests/integration/docs_counters.sh
