# ui/local.mk: the ncurses console: terminal layer, widgets, screens, and
# the `mailbench console` command.
noinst_LIBRARIES += ui/libmbui.a
ui_libmbui_a_SOURCES = \
	ui/term.c ui/term.h \
	ui/widgets.c ui/widgets.h \
	ui/console.h ui/screens.c \
	ui/cmd_console.c

TESTS += tests/integration/console_tmux.sh
EXTRA_DIST += tests/integration/console_tmux.sh
