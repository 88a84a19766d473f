/* cli_args.c — flag parsing and help for the subcommands; see cli.h. */
#include "cli/cli.h"

#include <stdio.h>
#include <string.h>

#include "io/yamldoc.h"

static cli_flag *find_flag(const cli_command *cmd, const char *name, size_t len) {
    for (int i = 0; i < cmd->num_flags; i++)
        if (strlen(cmd->flags[i].name) == len && strncmp(cmd->flags[i].name, name, len) == 0)
            return &cmd->flags[i];
    return NULL;
}

static const char *closest_flag(const cli_command *cmd, const char *name) {
    const char *best = NULL;
    int best_d = 1 << 30;
    for (int i = 0; i < cmd->num_flags; i++) {
        int d = yamldoc_edit_distance(name, cmd->flags[i].name);
        if (d < best_d) {
            best_d = d;
            best = cmd->flags[i].name;
        }
    }
    if (best && best_d <= 3) return best;
    /* a flag's name without its suffix (--task_config for --task_config_uri): the one flag that
     * starts with the name, at a '_' */
    const size_t n = strlen(name);
    const char *pre = NULL;
    for (int i = 0; i < cmd->num_flags; i++)
        if (n >= 3 && strncmp(cmd->flags[i].name, name, n) == 0 && cmd->flags[i].name[n] == '_') {
            if (pre) return NULL; /* two: no guess */
            pre = cmd->flags[i].name;
        }
    return pre;
}

int cli_parse(const cli_command *cmd, int argc, char **argv, const char **pos, int max_pos,
              int *npos, int *want_help, cgnn_err *err) {
    *npos = 0;
    *want_help = 0;
    for (int i = 0; i < cmd->num_flags; i++) cmd->flags[i].value = NULL;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            *want_help = 1;
            continue;
        }
        if (strncmp(a, "--", 2) != 0 || a[2] == '\0') {
            if (a[0] == '-' && a[1] != '\0')
                return err_set(err, CGNN_ERR_INPUT, "%s: unknown option '%s' (see cgnn %s --help)",
                               cmd->name, a, cmd->name);
            if (*npos >= max_pos)
                return err_set(err, CGNN_ERR_INPUT, "%s: unexpected argument '%s' (see cgnn %s --help)",
                               cmd->name, a, cmd->name);
            pos[(*npos)++] = a;
            continue;
        }
        const char *name = a + 2;
        const char *eq = strchr(name, '=');
        size_t nlen = eq ? (size_t)(eq - name) : strlen(name);
        cli_flag *f = find_flag(cmd, name, nlen);
        if (!f) {
            char buf[256];
            snprintf(buf, sizeof buf, "%.*s", (int)nlen, name);
            const char *sug = closest_flag(cmd, buf);
            return err_set(err, CGNN_ERR_INPUT, "%s: unknown flag '--%s'%s%s%s (see cgnn %s --help)",
                           cmd->name, buf, sug ? "; did you mean '--" : "", sug ? sug : "",
                           sug ? "'?" : "", cmd->name);
        }
        if (!f->metavar) { /* boolean */
            f->value = eq ? eq + 1 : "true";
            int b;
            if (yamldoc_parse_bool(f->value, &b) != 0)
                return err_set(err, CGNN_ERR_INPUT, "--%s: expected true or false, got '%s'", f->name,
                               f->value);
            continue;
        }
        if (eq) {
            f->value = eq + 1;
        } else {
            if (i + 1 >= argc)
                return err_set(err, CGNN_ERR_INPUT, "--%s: missing value %s", f->name, f->metavar);
            f->value = argv[++i];
        }
    }
    return 0;
}

static const cli_flag *get(const cli_command *cmd, const char *name) {
    const cli_flag *f = find_flag(cmd, name, strlen(name));
    CGNN_CHECK(f != NULL); /* asking for a flag the command does not declare is a bug */
    return f;
}

int cli_flag_int(const cli_command *cmd, const char *name, int64_t lo, int64_t hi, int64_t *out, cgnn_err *err) {
    const cli_flag *f = get(cmd, name);
    if (!f->value) return 0;
    int64_t v;
    if (yamldoc_parse_int(f->value, &v) != 0 || v < lo || v > hi)
        return err_set(err, CGNN_ERR_INPUT, "--%s: expected an integer in [%lld, %lld], got '%s'", name, (long long)lo,
                       (long long)hi, f->value);
    *out = v;
    return 0;
}

int cli_flag_double(const cli_command *cmd, const char *name, double *out, cgnn_err *err) {
    const cli_flag *f = get(cmd, name);
    if (!f->value) return 0;
    if (yamldoc_parse_double(f->value, out) != 0)
        return err_set(err, CGNN_ERR_INPUT, "--%s: expected a number, got '%s'", name, f->value);
    return 0;
}

int cli_flag_bool(const cli_command *cmd, const char *name, int *out, cgnn_err *err) {
    const cli_flag *f = get(cmd, name);
    if (!f->value) return 0;
    if (yamldoc_parse_bool(f->value, out) != 0)
        return err_set(err, CGNN_ERR_INPUT, "--%s: expected true or false, got '%s'", name, f->value);
    return 0;
}

const char *cli_flag_str(const cli_command *cmd, const char *name) { return get(cmd, name)->value; }

int cli_parse_int_list(const char *s, int64_t *out, int max, int *n) {
    *n = 0;
    char buf[512];
    size_t len = strlen(s);
    if (len >= sizeof buf) return -1;
    memcpy(buf, s, len + 1);
    char *p = buf;
    while (*p == ' ' || *p == '[') p++;
    char *end = p + strlen(p);
    while (end > p && (end[-1] == ' ' || end[-1] == ']')) *--end = '\0';
    if (*p == '\0') return -1;
    char *save = NULL;
    for (char *tok = strtok_r(p, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        while (*tok == ' ') tok++;
        char *te = tok + strlen(tok);
        while (te > tok && te[-1] == ' ') *--te = '\0';
        if (*n >= max) return -1;
        if (yamldoc_parse_int(tok, &out[*n]) != 0) return -1;
        (*n)++;
    }
    return *n > 0 ? 0 : -1;
}

void cli_print_help(const cli_command *cmd) {
    printf("usage: %s\n\n%s\n", cmd->usage, cmd->summary);
    if (cmd->num_flags) printf("\noptions:\n");
    for (int i = 0; i < cmd->num_flags; i++) {
        char left[128];
        snprintf(left, sizeof left, "--%s%s%s", cmd->flags[i].name, cmd->flags[i].metavar ? " " : "",
                 cmd->flags[i].metavar ? cmd->flags[i].metavar : "");
        printf("  %-28s %s\n", left, cmd->flags[i].help);
    }
}

int cli_fail(const cgnn_err *err) {
    fprintf(stderr, "cgnn: error: %s\n", err->msg[0] ? err->msg : "unknown error");
    return err->code ? err->code : CGNN_ERR_RUNTIME;
}
