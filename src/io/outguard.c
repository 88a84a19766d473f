/* outguard.c — output checks and locks; see outguard.h. */
#include "io/outguard.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "io/file.h"
#include "util/cleanup.h"

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

void outguard_free(outguard *g) {
    if (!g) return;
    for (int i = 0; i < g->num_inputs; i++) free(g->inputs[i]), free(g->input_roles[i]);
    free(g->inputs);
    free(g->input_roles);
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

int outguard_check_file(const outguard *g, const char *path, const char *field, cgnn_err *err) {
    if (!path || !*path) return 0;
    const int k = find_input(g, path);
    if (k >= 0)
        return err_set(err, CGNN_ERR_INPUT, "%s: %s is %s (%s); refusing to overwrite an input", field, path,
                       g->input_roles[k], g->inputs[k]);
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return err_set(err, CGNN_ERR_INPUT, "%s: %s is a directory; expected a file path", field, path);
    return 0;
}

static int matches_any(const char *name, const char *const *pats) {
    for (; pats && *pats; pats++)
        if (fnmatch(*pats, name, 0) == 0) return 1;
    return 0;
}

int outguard_check_dir(const outguard *g, const char *dir, const char *const *own, const char *const *allow_also,
                       const char *field, cgnn_err *err) {
    if (!dir || !*dir) return 0;
    struct stat st;
    if (stat(dir, &st) != 0) return 0; /* created later */
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
        if (in >= 0 && matches_any(e->d_name, own)) {
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
    return rc;
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
