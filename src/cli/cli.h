/* cli.h — command-line plumbing shared by the `cgnn` subcommands.
 *
 * Flags follow GiGL: `--flag=value` and `--flag value` both work; boolean flags take no value
 * (or =true/=false). An unknown flag is a usage error (exit 2) naming the flag and the closest
 * known one. Only the CLI prints errors and chooses exit codes (cli_fail).
 */
#ifndef CGNN_CLI_H
#define CGNN_CLI_H

#include <stdint.h>

#include "util/err.h"

typedef struct cli_flag {
    const char *name;     /* without dashes: "out" */
    const char *metavar;  /* "DIR"; NULL for boolean flags */
    const char *help;
    const char *value;    /* after parsing: the value, "true"/"false" for booleans, or NULL */
} cli_flag;

typedef struct cli_command {
    const char *name;     /* "generate" */
    const char *usage;    /* "cgnn generate --out DIR [options]" */
    const char *summary;  /* one line for `cgnn --help` */
    cli_flag *flags;
    int num_flags;
} cli_command;

/* Parses argv[0..argc) (argv[0] is the first argument after the command name) into cmd's
 * flags; positional arguments go to pos[0..*npos) (at most max_pos). `--help`/`-h` sets
 * *want_help. Returns 0, or -1 with *err (code CGNN_ERR_INPUT). */
int cli_parse(const cli_command *cmd, int argc, char **argv, const char **pos, int max_pos,
              int *npos, int *want_help, cgnn_err *err);

/* Typed flag values; absent flags leave *out unchanged and return 0.
 * Malformed values fail with "--name: expected ..." (CGNN_ERR_INPUT). Every integer flag has a
 * range [lo, hi] (a value outside it is an error naming the flag), so no flag can size a
 * buffer past what the arithmetic holds. */
int cli_flag_int(const cli_command *cmd, const char *name, int64_t lo, int64_t hi, int64_t *out, cgnn_err *err);
int cli_flag_double(const cli_command *cmd, const char *name, double *out, cgnn_err *err);
int cli_flag_bool(const cli_command *cmd, const char *name, int *out, cgnn_err *err);
const char *cli_flag_str(const cli_command *cmd, const char *name); /* NULL if absent */
/* Parses "15,10,5" or "[15, 10, 5]" into out[0..*n) (at most max). */
int cli_parse_int_list(const char *s, int64_t *out, int max, int *n);

/* Prints the command's usage and flags to stdout. */
void cli_print_help(const cli_command *cmd);

/* Prints "cgnn: error: MSG" to stderr and returns err->code (CGNN_ERR_RUNTIME if unset). */
int cli_fail(const cgnn_err *err);

/* Output directories written through a staging directory (generate, partition).
 * cli_out_dir_check: dir must be absent or an empty directory, or (force) any directory; *exists
 * says whether it is there. Returns 0, or -1 with *err (CGNN_ERR_INPUT) naming flag, dir and
 * what is in the way.
 * cli_out_dir_replace: moves the finished staging directory to dir; an existing dir is moved
 * aside first and removed only once the new one is in place (put back if the move fails).
 * Returns 0, or -1 with *err (CGNN_ERR_RUNTIME). */
int cli_out_dir_check(const char *flag, const char *dir, int force, int *exists, cgnn_err *err);
int cli_out_dir_replace(const char *dir, const char *staging, int exists, cgnn_err *err);

/* A dataset directory written whole or not at all (generate, import): `out` (trailing '/' dropped,
 * the result in dir[4096]) is checked (cli_out_dir_check with --force = force) against the inputs
 * add_inputs(guard, ctx) registers (NULL: none; never inside the output tree) and locked for `job`; then
 * write(staging, ctx) fills "<dir>.tmp.<pid>" (created; removed on failure or a signal) and it
 * is renamed into place. 0, or -1 with *err (nothing left behind). */
typedef int (*cli_out_dir_writer)(const char *staging, void *ctx, cgnn_err *err);
typedef struct outguard outguard;
int cli_out_dir_write(const char *out, const char *job, int force, void (*add_inputs)(outguard *g, void *ctx),
                      cli_out_dir_writer write, void *ctx, char dir[4096], cgnn_err *err);

/* Prints a partition book's summary (graph, parts, edge cut, balance, run time and memory) to
 * stdout: `cgnn info OUT` and the end of `cgnn partition`. */
struct partbook;
void cli_print_partbook(const struct partbook *pb);

/* `cgnn train` on a config with featureFlags.cgnn_run_trainer_command: True: replaces this process
 * with trainerConfig.command, given GiGL's launcher arguments and environment and
 * torch.distributed's rank, world and rendezvous (cli_launch.c). Returns only when it cannot
 * (-1, err: exit 2 for a bad environment or a command not found). tc->command is split in place. */
struct task_config;
int cli_launch_command(struct task_config *tc, const char *job, const char *task_uri, const char *resource_uri,
                       cgnn_err *err);

/* Subcommands: each returns the process exit status. argv[0] is the first argument after
 * the command name. */
int cli_cmd_train(int argc, char **argv);
int cli_cmd_info(int argc, char **argv);
int cli_cmd_generate(int argc, char **argv);
int cli_cmd_import(int argc, char **argv);
int cli_cmd_bench(int argc, char **argv);
int cli_cmd_rank(int argc, char **argv);
int cli_cmd_embed(int argc, char **argv);
int cli_cmd_partition(int argc, char **argv);
int cli_cmd_import(int argc, char **argv);

#endif
