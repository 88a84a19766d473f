/* cachedir.c — cgnn's per-user cache folder (see cachedir.h). */
#include "io/cachedir.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int cachedir_root(char *out, size_t cap, const char **from, cgnn_err *err) {
    const char *v;
    int n;
    if ((v = getenv("CGNN_CACHE_DIR")) != NULL) {
        *from = "CGNN_CACHE_DIR";
        if (!*v) return err_set(err, CGNN_ERR_RUNTIME, "no cache folder ($CGNN_CACHE_DIR is set to \"\")");
        n = snprintf(out, cap, "%s", v);
    } else if ((v = getenv("XDG_CACHE_HOME")) != NULL && v[0] == '/') { /* relative: ignored (XDG) */
        *from = "XDG_CACHE_HOME";
        n = snprintf(out, cap, "%s/cgnn", v);
    } else if ((v = getenv("HOME")) != NULL && *v) {
        *from = "HOME";
        n = snprintf(out, cap, "%s/.cache/cgnn", v);
    } else {
        *from = "HOME";
        return err_set(err, CGNN_ERR_RUNTIME, "no cache folder (neither $CGNN_CACHE_DIR, $XDG_CACHE_HOME nor $HOME is set)");
    }
    if (n < 0 || (size_t)n >= cap)
        return err_set(err, CGNN_ERR_RUNTIME, "no cache folder (the path from $%s is too long)", *from);
    return 0;
}

/* mkdir -p of path (mode 0755); 0 or -1 (errno). */
static int make_dirs(char *path) {
    for (char *p = path + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        const int rc = mkdir(path, 0755);
        *p = '/';
        if (rc != 0 && errno != EEXIST) return -1;
    }
    if (mkdir(path, 0755) != 0 && errno != EEXIST) return -1;
    struct stat st;
    if (stat(path, &st) != 0) return -1;
    if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}

int cachedir_get(char *out, size_t cap, const char *what, cgnn_err *err) {
    const char *from = NULL;
    if (cachedir_root(out, cap, &from, err) != 0) return -1;
    const size_t len = strlen(out);
    const int n = snprintf(out + len, cap - len, "/%s", what);
    if (n < 0 || (size_t)n >= cap - len || strchr(what, '/'))
        return err_set(err, CGNN_ERR_RUNTIME, "no cache folder (the path from $%s is too long)", from);
    if (make_dirs(out) != 0)
        return err_set(err, CGNN_ERR_RUNTIME, "cache folder %s (from $%s): %s", out, from, strerror(errno));
    return 0;
}
