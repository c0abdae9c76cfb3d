# ui/local.mk: sources and tests of this part (included by Makefile.am).
noinst_LIBRARIES += ui/libmbui.a
ui_libmbui_a_SOURCES =
