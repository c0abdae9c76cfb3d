# ui/local.mk: the ncurses console: terminal layer, widgets, the screen
# manager and key table, one file per screen (ui/screens/), and the
# `mailbench console` command.
noinst_LIBRARIES += ui/libmbui.a
ui_libmbui_a_SOURCES = \
	ui/term.c ui/term.h \
	ui/widgets.c ui/widgets.h \
	ui/console.h ui/manager.c \
	ui/screen.h ui/keys.c \
	ui/screens/overview.c ui/screens/storage.c ui/screens/actions.c \
	ui/screens/thresholds.c ui/screens/runs.c ui/screens/scenario.c \
	ui/screens/capacity.c ui/screens/capacity.h ui/screens/help.c \
	ui/screens/topology.c \
	ui/pins.c ui/pins.h \
	ui/storcols.c ui/storcols.h \
	ui/sgstate.c ui/sgstate.h \
	ui/cmd_console.c

TESTS += tests/integration/console_tmux.sh tests/integration/console_report_tmux.sh \
	tests/integration/console_fault.sh
EXTRA_DIST += tests/integration/console_lib.sh \
	tests/integration/console_tmux.sh tests/integration/console_report_tmux.sh \
	tests/integration/console_fault.sh

MB_UNIT_TESTS += tests/unit/test_keys
