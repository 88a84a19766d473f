/* cleanup.c — removal of partial outputs on a signal; see cleanup.h. */
#include "util/cleanup.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CLEANUP_SLOTS 256

typedef struct cleanup_slot {
    int used, is_dir;
    char path[4200];
} cleanup_slot;

static cleanup_slot g_slots[CLEANUP_SLOTS];
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static int g_started;

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st, (void)ftw;
    if (flag == FTW_DP || flag == FTW_D) rmdir(p);
    else unlink(p);
    return 0; /* best effort: keep going */
}

int cleanup_remove_tree(const char *path) {
    struct stat st;
    if (lstat(path, &st) != 0) return errno == ENOENT ? 0 : -1;
    if (!S_ISDIR(st.st_mode)) return unlink(path);
    nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    return lstat(path, &st) == 0 ? -1 : 0;
}

static void *signal_thread(void *arg) {
    sigset_t *set = arg;
    int sig = 0;
    while (sigwait(set, &sig) != 0) {
    }
    pthread_mutex_lock(&g_mu); /* writers cannot register or rename meanwhile */
    int removed = 0;
    for (int i = 0; i < CLEANUP_SLOTS; i++) {
        if (!g_slots[i].used) continue;
        if (cleanup_remove_tree(g_slots[i].path) == 0) removed++;
    }
    fprintf(stderr, "cgnn: %s: stopped; removed %d partial file%s\n", strsignal(sig), removed, removed == 1 ? "" : "s");
    signal(sig, SIG_DFL);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    pthread_sigmask(SIG_UNBLOCK, &one, NULL);
    raise(sig); /* dies of the signal, so the parent sees how it ended */
    _exit(128 + sig);
}

void cleanup_start(void) {
    if (g_started) return;
    g_started = 1;
    static sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    pthread_t th;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 256 * 1024);
    if (pthread_create(&th, &attr, signal_thread, &set) != 0) /* no handler: default deaths */
        pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    pthread_attr_destroy(&attr);
}

int cleanup_add(const char *path, int is_dir) {
    pthread_mutex_lock(&g_mu);
    int h = -1;
    for (int i = 0; i < CLEANUP_SLOTS && h < 0; i++) {
        if (g_slots[i].used) continue;
        g_slots[i].used = 1;
        g_slots[i].is_dir = is_dir;
        snprintf(g_slots[i].path, sizeof g_slots[i].path, "%s", path);
        h = i;
    }
    pthread_mutex_unlock(&g_mu);
    return h;
}

void cleanup_forget(int h) {
    if (h < 0 || h >= CLEANUP_SLOTS) return;
    pthread_mutex_lock(&g_mu);
    g_slots[h].used = 0;
    pthread_mutex_unlock(&g_mu);
}

int cleanup_tmp_path(char *out, size_t cap, const char *path) {
    snprintf(out, cap, "%s.tmp.%ld", path, (long)getpid());
    return cleanup_add(out, 0);
}

int cleanup_stale_tmp(const char *path, int (*may_remove)(const char *full, void *ctx), void *ctx) {
    char dir[4200], prefix[4200];
    snprintf(dir, sizeof dir, "%s", path);
    size_t len = strlen(dir);
    while (len > 1 && dir[len - 1] == '/') dir[--len] = '\0';
    const char *slash = strrchr(dir, '/');
    const char *base = slash ? slash + 1 : dir;
    snprintf(prefix, sizeof prefix, "%s.tmp.", base);
    if (slash == dir) dir[1] = '\0';
    else if (slash) dir[slash - dir] = '\0';
    else snprintf(dir, sizeof dir, ".");
    DIR *d = opendir(dir);
    if (!d) return 0;
    int removed = 0;
    const size_t pl = strlen(prefix);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, prefix, pl) != 0) continue;
        char *end = NULL;
        long pid = strtol(e->d_name + pl, &end, 10);
        if (end == e->d_name + pl || *end != '\0' || pid <= 0) continue;
        if (pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue; /* alive */
        char full[8500];
        snprintf(full, sizeof full, "%s/%s", dir, e->d_name);
        if (may_remove && !may_remove(full, ctx)) continue;
        if (cleanup_remove_tree(full) == 0) removed++;
    }
    closedir(d);
    return removed;
}
