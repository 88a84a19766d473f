/* outguard.c — output checks and locks; see outguard.h. */
#include "io/outguard.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "io/file.h"
#include "util/cleanup.h"
#include "util/log.h"

static char *dupstr(const char *s) {
    size_t n = strlen(s) + 1;
    char *p = cgnn_malloc(n);
    memcpy(p, s, n);
    return p;
}

void outguard_init(outguard *g) {
    memset(g, 0, sizeof *g);
    for (int i = 0; i < OUTGUARD_MAX_LOCKS; i++) g->lock_fd[i] = -1, g->lock_cleanup[i] = -1;
}

static outguard *g_active;  /* the process's guard (outguard_activate) */
static int g_required;      /* a writing command started: writes need an active guard */

void outguard_free(outguard *g) {
    if (!g) return;
    if (g_active == g) g_active = NULL;
    for (int i = 0; i < g->num_inputs; i++) free(g->inputs[i]), free(g->input_roles[i]);
    free(g->inputs);
    free(g->input_roles);
    for (int i = 0; i < g->num_outputs; i++) {
        outguard_output *o = &g->outputs[i];
        free(o->path), free(o->field);
        for (char **p = o->own; p && *p; p++) free(*p);
        free(o->own);
    }
    free(g->outputs);
    for (int i = 0; i < g->num_locks; i++) {
        if (g->lock_fd[i] < 0) continue;
        unlink(g->lock_path[i]); /* while still holding it: a waiter re-checks the inode */
        close(g->lock_fd[i]);
        cleanup_forget(g->lock_cleanup[i]);
    }
    outguard_init(g);
}

void outguard_add_input(outguard *g, const char *path, const char *role) {
    if (!path || !*path) return;
    if (g->num_inputs == g->cap_inputs) {
        g->cap_inputs = g->cap_inputs ? 2 * g->cap_inputs : 16;
        g->inputs = cgnn_realloc(g->inputs, (size_t)g->cap_inputs * sizeof *g->inputs);
        g->input_roles = cgnn_realloc(g->input_roles, (size_t)g->cap_inputs * sizeof *g->input_roles);
    }
    g->inputs[g->num_inputs] = dupstr(path);
    g->input_roles[g->num_inputs] = dupstr(role);
    g->num_inputs++;
}

void outguard_add_dataset(outguard *g, const dataset *ds) {
    char meta[4200];
    snprintf(meta, sizeof meta, "%s/metadata.yaml", ds->dir);
    outguard_add_input(g, meta, "the dataset's metadata.yaml");
    for (int i = 0; i < ds->num_edge_types; i++) outguard_add_input(g, ds->edge_types[i].path, "the dataset's edges");
    for (int i = 0; i < ds->num_features; i++) outguard_add_input(g, ds->features[i].array.path, "a dataset feature file");
    for (int i = 0; i < ds->num_tasks; i++)
        for (int s = 0; s < DS_SPLIT_COUNT; s++) {
            const ds_split *sp = &ds->tasks[i].splits[s];
            if (!sp->present) continue;
            outguard_add_input(g, sp->seeds_path, "a dataset split file");
            if (sp->labels_path[0]) outguard_add_input(g, sp->labels_path, "a dataset split file");
            if (sp->indexes_path[0]) outguard_add_input(g, sp->indexes_path, "a dataset split file");
        }
}

/* The input that path names, or -1. */
static int find_input(const outguard *g, const char *path) {
    for (int i = 0; i < g->num_inputs; i++)
        if (file_same(g->inputs[i], path)) return i;
    return -1;
}

/* path with repeated slashes collapsed and trailing ones dropped, into out[cap]. */
static void normalize(char *out, size_t cap, const char *path) {
    size_t n = 0;
    for (const char *p = path; *p && n + 1 < cap; p++) {
        if (*p == '/' && n > 0 && out[n - 1] == '/') continue;
        out[n++] = *p;
    }
    while (n > 1 && out[n - 1] == '/') n--;
    out[n] = '\0';
}

/* 1 if a and b name the same path: the same string once normalized, or the same existing file. */
static int same_path(const char *a, const char *b) {
    char na[4200], nb[4200];
    normalize(na, sizeof na, a);
    normalize(nb, sizeof nb, b);
    return strcmp(na, nb) == 0 || file_same(na, nb);
}

/* 1 if name is "<base>.tmp.<digits>" (a temporary file or staging tree of base). */
static int is_tmp_of(const char *name, const char *base) {
    const size_t n = strlen(base);
    if (strncmp(name, base, n) != 0 || strncmp(name + n, ".tmp.", 5) != 0) return 0;
    const char *d = name + n + 5;
    if (!*d) return 0;
    for (; *d; d++)
        if (*d < '0' || *d > '9') return 0;
    return 1;
}

static int matches_any(const char *name, const char *const *pats) {
    for (; pats && *pats; pats++)
        if (fnmatch(*pats, name, 0) == 0) return 1;
    return 0;
}

/* Splits normalized path into its directory (".": none) and its last name. */
static void split_path(const char *path, char *dir, size_t cap, const char **base) {
    const char *slash = strrchr(path, '/');
    if (!slash) {
        snprintf(dir, cap, ".");
        *base = path;
    } else {
        snprintf(dir, cap, "%.*s", slash == path ? 1 : (int)(slash - path), path);
        *base = slash + 1;
    }
}

/* 1 if declared output o covers path (normalized): see outguard_permit. */
static int covers(const outguard_output *o, const char *path) {
    char lock[4300];
    snprintf(lock, sizeof lock, "%s.lock", o->path);
    if (strcmp(path, lock) == 0) return 1;
    if (o->kind == OUTGUARD_FILE) return strcmp(path, o->path) == 0 || is_tmp_of(path, o->path);
    const size_t n = strlen(o->path);
    if (o->kind == OUTGUARD_TREE) {
        if (strcmp(path, o->path) == 0 || (strncmp(path, o->path, n) == 0 && path[n] == '/')) return 1;
        /* a staging tree "<dir>.tmp.<pid>" and everything under it */
        char head[4200];
        snprintf(head, sizeof head, "%s", path);
        for (char *p = head + n; *p; p++)
            if (*p == '/') {
                *p = '\0';
                break;
            }
        char old[4300];
        snprintf(old, sizeof old, "%s.old", o->path); /* cli_out_dir_replace's old tree */
        return is_tmp_of(head, o->path) || is_tmp_of(head, old);
    }
    char dir[4200];
    const char *base;
    split_path(path, dir, sizeof dir, &base);
    if (!same_path(dir, o->path)) return 0;
    static const char *const ours[] = {"*.lock", "*.tmp.*", NULL};
    return matches_any(base, (const char *const *)o->own) || matches_any(base, ours);
}

static char *dupstr_n(const char *s) {
    char buf[4200];
    normalize(buf, sizeof buf, s);
    return dupstr(buf);
}

static void add_output(outguard *g, outguard_kind kind, const char *path, const char *field, const char *const *own) {
    if (g->num_outputs == g->cap_outputs) {
        g->cap_outputs = g->cap_outputs ? 2 * g->cap_outputs : 8;
        g->outputs = cgnn_realloc(g->outputs, (size_t)g->cap_outputs * sizeof *g->outputs);
    }
    outguard_output *o = &g->outputs[g->num_outputs++];
    memset(o, 0, sizeof *o);
    o->kind = kind;
    o->path = dupstr_n(path);
    o->field = dupstr(field);
    if (kind == OUTGUARD_DIR) {
        int n = 0;
        while (own && own[n]) n++;
        o->own = cgnn_malloc((size_t)(n + 1) * sizeof *o->own);
        for (int i = 0; i < n; i++) o->own[i] = dupstr(own[i]);
        o->own[n] = NULL;
    }
}

/* The lock file of path, and any temporary file or staging tree of it now on disk: none may be
 * an input (a lock is created, then removed at exit; a stale temporary file is removed). */
static int check_companions(const outguard *g, const char *path, const char *field, cgnn_err *err) {
    char np[4200], lock[4300];
    normalize(np, sizeof np, path);
    snprintf(lock, sizeof lock, "%s.lock", np);
    int k = find_input(g, lock);
    if (k >= 0)
        return err_set(err, CGNN_ERR_INPUT, "%s: its lock file %s is %s (%s); refusing to create or remove it", field,
                       lock, g->input_roles[k], g->inputs[k]);
    char dir[4200];
    const char *base;
    split_path(np, dir, sizeof dir, &base);
    DIR *d = opendir(dir);
    if (!d) return 0;
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        if (!is_tmp_of(e->d_name, base)) continue;
        char full[8400];
        snprintf(full, sizeof full, "%s/%s", dir, e->d_name);
        if ((k = find_input(g, full)) >= 0)
            rc = err_set(err, CGNN_ERR_INPUT,
                         "%s: %s has the name of a temporary file of this output and is %s (%s); refusing to write "
                         "there",
                         field, full, g->input_roles[k], g->inputs[k]);
    }
    closedir(d);
    return rc;
}

/* A new output at path (kind) against the outputs declared so far. */
static int check_vs_outputs(const outguard *g, outguard_kind kind, const char *path, const char *field,
                            cgnn_err *err) {
    char np[4200];
    normalize(np, sizeof np, path);
    for (int i = 0; i < g->num_outputs; i++) {
        const outguard_output *o = &g->outputs[i];
        if (same_path(np, o->path)) {
            if (kind == OUTGUARD_DIR && o->kind == OUTGUARD_DIR) continue; /* two uses of one log directory */
            if (kind == OUTGUARD_FILE && o->kind == OUTGUARD_FILE)
                return err_set(err, CGNN_ERR_INPUT, "%s: %s is also %s; the two outputs need their own paths", field,
                               path, o->field);
            return err_set(err, CGNN_ERR_INPUT, "%s: %s is also %s, a %s; a path is either a file or a directory", field,
                           path, o->field, o->kind == OUTGUARD_FILE ? "file" : "directory");
        }
        /* a file another output writes into its directory under one of its own names (outputs
         * declared under the same field are one output: cgnn embed --out DIR and its DIR/<type>.npy) */
        if (kind == OUTGUARD_FILE && o->kind != OUTGUARD_FILE && covers(o, np) && strcmp(o->field, field) != 0)
            return err_set(err, CGNN_ERR_INPUT, "%s: %s is a file that %s (%s) writes or removes", field, path, o->field,
                           o->path);
        if (kind != OUTGUARD_FILE && o->kind == OUTGUARD_FILE) {
            outguard_output tmp = {kind, np, NULL, NULL};
            static const char *const none[] = {NULL};
            if (kind == OUTGUARD_DIR) tmp.own = (char **)none; /* checked by the caller's own[] below */
            if (kind == OUTGUARD_TREE && covers(&tmp, o->path))
                return err_set(err, CGNN_ERR_INPUT, "%s: %s would hold %s (%s)", field, path, o->field, o->path);
        }
    }
    return 0;
}

int outguard_check_file(outguard *g, const char *path, const char *field, cgnn_err *err) {
    if (!path || !*path) return 0;
    const int k = find_input(g, path);
    if (k >= 0)
        return err_set(err, CGNN_ERR_INPUT, "%s: %s is %s (%s); refusing to overwrite an input", field, path,
                       g->input_roles[k], g->inputs[k]);
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return err_set(err, CGNN_ERR_INPUT, "%s: %s is a directory; expected a file path", field, path);
    if (check_vs_outputs(g, OUTGUARD_FILE, path, field, err) != 0) return -1;
    if (check_companions(g, path, field, err) != 0) return -1;
    add_output(g, OUTGUARD_FILE, path, field, NULL);
    return 0;
}

int outguard_check_dir(outguard *g, const char *dir, const char *const *own, const char *const *allow_also,
                       const char *field, cgnn_err *err) {
    if (!dir || !*dir) return 0;
    if (check_vs_outputs(g, OUTGUARD_DIR, dir, field, err) != 0) return -1;
    for (int i = 0; i < g->num_outputs; i++) { /* a declared file under one of this directory's own names */
        const outguard_output *o = &g->outputs[i];
        char pdir[4200];
        const char *base;
        split_path(o->path, pdir, sizeof pdir, &base);
        if (o->kind == OUTGUARD_FILE && same_path(pdir, dir) && matches_any(base, own) && strcmp(o->field, field) != 0)
            return err_set(err, CGNN_ERR_INPUT, "%s: %s would write or remove %s, which is %s", field, dir, o->path,
                           o->field);
    }
    if (check_companions(g, dir, field, err) != 0) return -1;
    struct stat st;
    if (stat(dir, &st) != 0) {
        add_output(g, OUTGUARD_DIR, dir, field, own);
        return 0; /* created later */
    }
    if (!S_ISDIR(st.st_mode))
        return err_set(err, CGNN_ERR_INPUT, "%s: %s exists and is not a directory", field, dir);
    const int k = find_input(g, dir);
    if (k >= 0) return err_set(err, CGNN_ERR_INPUT, "%s: %s is %s", field, dir, g->input_roles[k]);
    DIR *d = opendir(dir);
    if (!d) return err_set(err, CGNN_ERR_INPUT, "%s: %s: cannot read: %s", field, dir, strerror(errno));
    static const char *const ours[] = {"*.lock", "*.tmp.*", NULL};
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        char full[8400];
        snprintf(full, sizeof full, "%s/%s", dir, e->d_name);
        const int in = find_input(g, full);
        if (in >= 0 && (matches_any(e->d_name, own) || matches_any(e->d_name, ours))) {
            rc = err_set(err, CGNN_ERR_INPUT, "%s: %s holds %s (%s), which this job would overwrite or remove", field,
                         dir, g->input_roles[in], full);
            break;
        }
        int allowed = matches_any(e->d_name, own) || matches_any(e->d_name, ours);
        for (const char *const *a = allow_also; !allowed && a && *a; a++) allowed = file_same(*a, full);
        if (!allowed)
            rc = err_set(err, CGNN_ERR_INPUT,
                         "%s: %s is a directory cgnn did not fill (it holds '%s'); refusing to write there: choose an "
                         "empty or new directory",
                         field, dir, e->d_name);
    }
    closedir(d);
    if (rc == 0) add_output(g, OUTGUARD_DIR, dir, field, own);
    return rc;
}

int outguard_check_tree(outguard *g, const char *dir, const char *field, cgnn_err *err) {
    if (!dir || !*dir) return 0;
    if (check_vs_outputs(g, OUTGUARD_TREE, dir, field, err) != 0) return -1;
    if (check_companions(g, dir, field, err) != 0) return -1;
    char nd[4200], ro[PATH_MAX], ri[PATH_MAX];
    normalize(nd, sizeof nd, dir);
    outguard_output tree = {OUTGUARD_TREE, nd, NULL, NULL};
    for (int i = 0; i < g->num_inputs; i++) { /* by name, and through realpath (symlinks, ../) */
        int under = covers(&tree, g->inputs[i]);
        if (!under && realpath(dir, ro) && realpath(g->inputs[i], ri)) {
            const size_t n = strlen(ro);
            under = strcmp(ri, ro) == 0 || (strncmp(ri, ro, n) == 0 && (ri[n] == '/' || (n == 1 && ro[0] == '/')));
        }
        if (under)
            return err_set(err, CGNN_ERR_INPUT, "%s: %s holds %s (%s); refusing to write there", field, dir,
                           g->input_roles[i], g->inputs[i]);
    }
    add_output(g, OUTGUARD_TREE, dir, field, NULL);
    return 0;
}

void outguard_activate(outguard *g) { g_active = g; }

void outguard_require(void) { g_required = 1; }

int outguard_permit(const char *path, cgnn_err *err) {
    const outguard *g = g_active;
    if (!g) {
        if (!g_required) return 0;
        return err_set(err, CGNN_ERR_RUNTIME,
                       "%s: internal error: written before the job's outputs were checked (io/outguard.h)", path);
    }
    const int k = find_input(g, path);
    if (k >= 0)
        return err_set(err, CGNN_ERR_INPUT, "%s is %s (%s); refusing to overwrite or remove an input", path,
                       g->input_roles[k], g->inputs[k]);
    char np[4200];
    normalize(np, sizeof np, path);
    for (int i = 0; i < g->num_outputs; i++)
        if (covers(&g->outputs[i], np)) return 0;
    return err_set(err, CGNN_ERR_RUNTIME, "%s: internal error: not a declared output of this job (io/outguard.h)", path);
}

/* cleanup_stale_tmp's filter: never an input. */
static int stale_may_remove(const char *full, void *ctx) {
    const outguard *g = ctx;
    const int k = find_input(g, full);
    if (k < 0) return 1;
    log_info("note: kept %s: it has the name of a temporary file of an output but is %s", full, g->input_roles[k]);
    return 0;
}

int outguard_remove_stale_tmp(outguard *g, const char *path) {
    if (!path || !*path) return 0;
    cgnn_err err;
    if (outguard_permit(path, &err) != 0) { /* never for an undeclared path */
        log_info("note: %s", err.msg);
        return 0;
    }
    return cleanup_stale_tmp(path, stale_may_remove, g);
}

/* mkdir -p of the directory part of path. */
static void make_parent(const char *path) {
    char buf[4200];
    snprintf(buf, sizeof buf, "%s", path);
    char *slash = strrchr(buf, '/');
    if (!slash || slash == buf) return;
    *slash = '\0';
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        mkdir(buf, 0755);
        *p = '/';
    }
    mkdir(buf, 0755);
}

int outguard_lock(outguard *g, const char *path, const char *field, const char *job, cgnn_err *err) {
    if (!path || !*path) return 0;
    CGNN_CHECK(g->num_locks < OUTGUARD_MAX_LOCKS);
    char lp[4200];
    size_t len = strlen(path);
    while (len > 1 && path[len - 1] == '/') len--;
    snprintf(lp, sizeof lp, "%.*s.lock", (int)len, path);
    for (int i = 0; i < g->num_locks; i++)
        if (strcmp(g->lock_path[i], lp) == 0) return 0; /* two outputs of this job share it */
    const int k = find_input(g, lp);
    if (k >= 0)
        return err_set(err, CGNN_ERR_INPUT, "%s: its lock file %s is %s (%s); refusing to create or remove it", field,
                       lp, g->input_roles[k], g->inputs[k]);
    char np[4200];
    normalize(np, sizeof np, lp);
    int declared = 0;
    for (int i = 0; i < g->num_outputs && !declared; i++) declared = covers(&g->outputs[i], np);
    CGNN_CHECK(declared); /* outguard_check_* first */
    make_parent(lp);
    for (int attempt = 0; attempt < 100; attempt++) {
        int fd = open(lp, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (fd < 0) return err_set(err, CGNN_ERR_RUNTIME, "%s: cannot create the lock file %s: %s", field, lp, strerror(errno));
        if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
            int e = errno;
            char holder[512] = "";
            ssize_t n = pread(fd, holder, sizeof holder - 1, 0);
            holder[n > 0 ? n : 0] = '\0';
            holder[strcspn(holder, "\n")] = '\0';
            close(fd);
            if (e != EWOULDBLOCK) return err_set(err, CGNN_ERR_RUNTIME, "%s: cannot lock %s: %s", field, lp, strerror(e));
            return err_set(err, CGNN_ERR_INPUT,
                           "%s: %s is in use by another cgnn job (%s; lock %s); wait for it to finish or choose "
                           "other output paths",
                           field, path, holder[0] ? holder : "unknown", lp);
        }
        /* the holder may have removed the file between our open and flock: lock the live one */
        struct stat a, b;
        if (fstat(fd, &a) != 0 || stat(lp, &b) != 0 || a.st_ino != b.st_ino || a.st_dev != b.st_dev) {
            close(fd);
            continue;
        }
        char host[256] = "?", line[1024];
        gethostname(host, sizeof host);
        host[sizeof host - 1] = '\0';
        time_t now = time(NULL);
        struct tm tmv;
        char when[64] = "";
        if (localtime_r(&now, &tmv)) strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tmv);
        int n = snprintf(line, sizeof line, "pid %ld on %s, %s, started %s\n", (long)getpid(), host, job, when);
        if (ftruncate(fd, 0) != 0 || pwrite(fd, line, (size_t)n, 0) != n) { /* informative only */
        }
        const int i = g->num_locks++;
        g->lock_fd[i] = fd;
        snprintf(g->lock_path[i], sizeof g->lock_path[i], "%s", lp);
        g->lock_cleanup[i] = cleanup_add(lp, 0);
        return 0;
    }
    return err_set(err, CGNN_ERR_RUNTIME, "%s: cannot take the lock %s (it keeps changing)", field, lp);
}
