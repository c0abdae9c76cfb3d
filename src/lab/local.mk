# src/lab/local.mk: real mail servers as targets: the throwaway Dovecot +
# Postfix lab (`mailbench lab dovecot`), provisioning over IMAP (`init
# --target imap://`), the check over IMAP, and their tests.
noinst_LIBRARIES += src/lab/libmblab.a
src_lab_libmblab_a_SOURCES = \
	src/lab/lab.c src/lab/lab.h src/lab/labconf.c src/lab/lab_int.h \
	src/lab/labcmd.h src/lab/cmd_lab.c src/lab/cmd_imap.c src/lab/cmd_imap_init.c src/lab/imapcmd_int.h

TESTS += tests/integration/lab_dovecot.sh tests/integration/imap_init.sh \
	tests/integration/imap_driver.sh tests/integration/imap_load.sh \
	tests/integration/lab_tls.sh
EXTRA_DIST += tests/integration/lab_lib.sh tests/integration/lab_dovecot.sh tests/integration/imap_init.sh \
	tests/integration/imap_driver.sh tests/integration/imap_load.sh \
	tests/integration/lab_tls.sh
src_lab_libmblab_a_SOURCES += src/lab/mailc.c src/lab/mailc.h src/lab/mailc_int.h src/lab/smtpc.c

noinst_PROGRAMS += tests/integration/mb-mail
tests_integration_mb_mail_SOURCES = tests/integration/mb-mail.c
tests_integration_mb_mail_LDADD = $(MB_LIBS) $(MB_EXT_LIBS)

noinst_PROGRAMS += tests/integration/mb-imapdrv
tests_integration_mb_imapdrv_SOURCES = tests/integration/mb-imapdrv.c
tests_integration_mb_imapdrv_LDADD = $(MB_LIBS) $(MB_EXT_LIBS)
