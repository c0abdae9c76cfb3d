/* opt.h: the option-table engine: one declarative entry per option, and
 * one table of commands.
 *
 * An option is ONE struct mb_opt: its key, type, offset into the struct
 * that holds its value, default, range (min..max, MB_OPT_LO_OPEN makes it
 * (min..max]), flags and help line.  An entry may carry a command-line flag
 * (long `flag`, optional short `sflag`, value name `metavar`) and the
 * MB_OPT_CONSOLE bit (editable in the console's scenario screen).
 *
 * From these entries the engine derives everything that used to be written
 * by hand:
 *   - scenario files: loading (libconfig; every key must match an entry),
 *     defaults, cross-field checks, JSON, text dump, `scenario fields`;
 *   - commands: the getopt_long tables, the value checks (one wording,
 *     always naming the flag, exit 2), `--help`, the man page's SYNOPSIS and
 *     COMMANDS sections (`mailbench help --man`), the child argv the session
 *     builds (mb_argv_*), the console's editor fields (mb_opt_text/set).
 *
 * A command is one row (struct mb_cmd_entry: name, usage, options, run),
 * like tmux's cmd_entry; src/main.c iterates the one list of rows.
 * mb_cmd_exec parses a command's arguments into a zeroed struct of
 * args_size bytes (table defaults applied first), checks every value and
 * every required flag, then calls the row's check (validation that starts
 * nothing) and its run.  `--check-args` stops after the checks (exit 0):
 * the range tests use it so accepted values start nothing.
 * Invariant: a bad argument is reported on stderr as
 * "mailbench CMD: --flag: 'VALUE' must be ..." and exits 2 before the
 * command starts anything.
 */
#ifndef MB_CORE_OPT_H
#define MB_CORE_OPT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum mb_opt_type {
	MB_OT_INT,	 /* int */
	MB_OT_DOUBLE,	 /* double */
	MB_OT_BOOL,	 /* bool (files: true/false) */
	MB_OT_STRING,	 /* char[size] */
	MB_OT_ENUM,	 /* int-sized enum: index into choices */
	MB_OT_SCHOICE,	 /* char[size] restricted to choices */
	MB_OT_INT_LIST,	 /* int[size], count at aux (command line: "4,8,12") */
	MB_OT_THRESHOLD, /* struct mb_threshold, written as "< 80" */
	MB_OT_LIST,	 /* list of groups: elements of sub at off, count at aux */
	MB_OT_BASE,	 /* the base file of this one (not stored) */
	MB_OT_KIND,	 /* the file's kind: must be one of choices (not stored) */
	MB_OT_FLAG,	 /* command line: a flag without a value; bool set true */
	MB_OT_ARG,	 /* command line: const char * into argv */
};

#define MB_OPT_REQ 1u	    /* required (files: after the base chain) */
#define MB_OPT_HAS 2u	    /* bool at aux says whether it was given */
#define MB_OPT_PUB 4u	    /* a published figure */
#define MB_OPT_LO_OPEN 8u   /* numbers: min itself is out of range */
#define MB_OPT_CONSOLE 16u  /* editable in the console's scenario screen */
#define MB_OPT_AUTO 32u	    /* INT_LIST: "auto" is accepted (count -1) */
#define MB_OPT_NONEMPTY 64u /* ARG/STRING: an empty value is refused */

/* A family expands one entry into one key per member. */
struct mb_opt_family {
	int count;
	const char *(*key)(int i);
	const char *(*label)(int i);
};

struct mb_opt_table;
struct mb_opt {
	const char *path; /* dotted key; a family's group */
	enum mb_opt_type type;
	size_t off;
	size_t size; /* STRING: buffer size; lists: max entries */
	double def;
	const char *sdef; /* STRING/ENUM/THRESHOLD/ARG default */
	double min, max;
	unsigned flags;
	const char *help;
	const char *const *choices; /* ENUM / SCHOICE, NULL-terminated */
	size_t aux;		    /* count (lists) or has-flag (MB_OPT_HAS) */
	const struct mb_opt_family *fam;
	size_t stride, aux_stride; /* family: distance between members */
	const struct mb_opt_table *sub;
	size_t elem_size;
	/* command line (flag NULL: not on the command line) */
	const char *flag;    /* long flag without the dashes */
	int sflag;	     /* short flag, 0 none */
	const char *metavar; /* the value's name in --help ("N", "DIR") */
	const char *dtext;   /* --help: the default in words, for this command */
};

struct mb_opt_ld; /* a file load in progress */
struct mb_opt_table {
	const char *what; /* for the help text */
	const struct mb_opt *opts;
	int n;
	/* cross-field checks after a complete load (may be NULL) */
	int (*check)(struct mb_opt_ld *ld, const struct mb_opt_table *t, void *obj);
};

/* ---- files (libconfig) ---- */
struct mb_cfg_error;
/* Load NAME (through mb_scenario_resolve) with table T into obj (objsize
 * bytes); the file stem and the path go to the char[MB_NAME_MAX] /
 * char[MB_PATH_MAX] at name_off / path_off.  obj is written only on
 * success; MB_ECONFIG fills err. */
int mb_opt_load(const struct mb_opt_table *t, const char *name, void *obj, size_t objsize,
		size_t name_off, size_t path_off, struct mb_cfg_error *err);
/* From a table's check: fail at FIELD's recorded file and line. */
int mb_opt_fail_field(struct mb_opt_ld *ld, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
json_t *mb_opt_json(const struct mb_opt_table *t, const void *obj);
void mb_opt_print(FILE *f, const struct mb_opt_table *t, const void *obj, const char *prefix);
void mb_opt_fields_print(FILE *f, const struct mb_opt_table *t, const char *prefix);

/* ---- single values (command line, console editor) ---- */
/* Parse TEXT into o's field of obj with o's type and range.  On failure
 * nothing is written and why[] says "'TEXT' must be ..." (MB_EINVAL). */
int mb_opt_set(const struct mb_opt *o, void *obj, const char *text, char *why, size_t len);
/* o's value in obj as it is written on the command line. */
void mb_opt_text(const struct mb_opt *o, const void *obj, char *buf, size_t len);

/* ---- commands ---- */
#define MB_CMD_OPERANDS 1u /* takes operands after the options */
#define MB_CMD_DEFAULT 2u  /* the command when none is named (the console) */

struct mb_cmd_entry {
	const char *name;
	const char *usage;   /* after "mailbench NAME ": the synopsis */
	const char *summary; /* one line for `mailbench --help` */
	const char *about;   /* what it does: --help and the man page */
	const char *epilog;  /* after the options (keys, exit codes); may be NULL */
	const struct mb_opt *opts;
	int nopts;
	size_t args_size; /* the struct the options fill */
	unsigned flags;
	/* defaults beyond the table's (may be NULL) */
	void (*init)(void *args);
	/* checks that start nothing (may be NULL): message printed, MB_EXIT_USAGE */
	int (*check)(void *args);
	/* operands: argv[0..argc) after the options (MB_CMD_OPERANDS only) */
	int (*run)(void *args, int argc, char **argv);
};

/* The one list of commands (src/commands.c, linked into the program and
 * the tests that need it), NULL-terminated, and what iterates it. */
extern const struct mb_cmd_entry *const mb_commands[];
const struct mb_cmd_entry *mb_cmd_find(const char *name);
/* `mailbench --help`: the commands and their summaries. */
void mb_cmd_list(FILE *f);
/* The option of E whose flag (or key) is NAME; NULL if none. */
const struct mb_opt *mb_cmd_opt(const struct mb_cmd_entry *e, const char *name);

/* Parse argv (argv[0] is the command name) into a new args struct, then
 * run the command; returns its exit code (2 on a usage error). */
int mb_cmd_exec(const struct mb_cmd_entry *e, int argc, char **argv);
/* Parse only (the table's checks, not the row's check): 0 and *args
 * (free() it) when the arguments are good, else MB_EXIT_USAGE with the
 * message printed.  *first is the index of the first operand; *help and
 * *check_only say whether --help / --check-args were given (--help is not
 * printed here). */
int mb_cmd_parse(const struct mb_cmd_entry *e, int argc, char **argv, void **args, int *first,
		 bool *help, bool *check_only);
void mb_cmd_help(FILE *f, const struct mb_cmd_entry *e);
/* One command's lines of the man page's SYNOPSIS / COMMANDS sections. */
void mb_cmd_man_synopsis(FILE *f, const struct mb_cmd_entry *e);
void mb_cmd_man_section(FILE *f, const struct mb_cmd_entry *e);

/* ---- the argv of a child command (built from its table) ---- */
#define MB_ARGV_MAX 48
struct mb_argv {
	const struct mb_cmd_entry *e;
	const char *v[MB_ARGV_MAX + 1];
	char vals[MB_ARGV_MAX][64]; /* formatted numbers */
	int n;
	int err;       /* first error (MB_EINVAL / MB_ETOOBIG), 0 none */
	char why[256]; /* what it was */
	void *scratch; /* args struct the values are checked into */
};
/* Start "NAME" for command E (the values are checked against E's table). */
void mb_argv_init(struct mb_argv *a, const struct mb_cmd_entry *e);
/* Append --FLAG VALUE (VALUE ignored for a flag without value); VALUE is
 * checked with the option's type and range. */
void mb_argv_add(struct mb_argv *a, const char *flag, const char *value);
void mb_argv_addf(struct mb_argv *a, const char *flag, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The argv (NULL-terminated) or NULL after an error (a->why says which);
 * frees the scratch either way. */
const char *const *mb_argv_done(struct mb_argv *a);

#endif
