/* cmd.h: the subcommands of the mailbench program.
 * Each takes the arguments after the subcommand name (argv[0] is the
 * subcommand) and returns an exit code from enum mb_exit. */
#ifndef MB_CMD_H
#define MB_CMD_H

int mb_cmd_console(int argc, char **argv);
int mb_cmd_run(int argc, char **argv);
int mb_cmd_init(int argc, char **argv);
int mb_cmd_store(int argc, char **argv);
int mb_cmd_load(int argc, char **argv);
int mb_cmd_storage_test(int argc, char **argv);
int mb_cmd_check(int argc, char **argv);
int mb_cmd_scenario(int argc, char **argv);
int mb_cmd_counters(int argc, char **argv);

#endif
