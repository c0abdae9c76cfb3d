/* cmd.h: the command rows of the mailbench program (struct mb_cmd_entry,
 * core/opt.h).  Each row lives beside its command's code; src/commands.c
 * lists them all (mb_commands), and src/main.c and `mailbench help`
 * iterate that list.  A row's run gets its parsed args struct and returns
 * an exit code from enum mb_exit. */
#ifndef MB_CMD_H
#define MB_CMD_H

#include "core/opt.h"

extern const struct mb_cmd_entry mb_cmd_console_entry;
extern const struct mb_cmd_entry mb_cmd_run_entry;
extern const struct mb_cmd_entry mb_cmd_init_entry;
extern const struct mb_cmd_entry mb_cmd_store_entry;
extern const struct mb_cmd_entry mb_cmd_load_entry;
extern const struct mb_cmd_entry mb_cmd_storage_test_entry;
extern const struct mb_cmd_entry mb_cmd_check_entry;
extern const struct mb_cmd_entry mb_cmd_scenario_entry;
extern const struct mb_cmd_entry mb_cmd_counters_entry;
extern const struct mb_cmd_entry mb_cmd_capacity_entry;
extern const struct mb_cmd_entry mb_cmd_compare_entry;
extern const struct mb_cmd_entry mb_cmd_report_entry;
extern const struct mb_cmd_entry mb_cmd_help_entry;
extern const struct mb_cmd_entry mb_cmd_lab_entry;
/* init and check against an external IMAP server (src/lab/cmd_imap.c):
 * main.c runs them instead of the store's rows when the arguments have
 * --target imap://... (mb_cmd_imap_target). */
extern const struct mb_cmd_entry mb_cmd_init_imap_entry;
extern const struct mb_cmd_entry mb_cmd_check_imap_entry;
int mb_cmd_imap_target(int argc, char **argv);

#endif
