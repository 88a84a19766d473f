/* cli_outdir.c — output directories written through a staging directory (`cgnn generate`,
 * `cgnn partition`): an existing non-empty directory is refused unless --force; the new content
 * is written to "DIR.tmp.<pid>" (registered with util/cleanup) and renamed into place at the
 * end; see cli.h. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "io/outguard.h"
#include "util/cleanup.h"

int cli_out_dir_check(const char *flag, const char *dir, int force, int *exists, cgnn_err *err) {
    struct stat st;
    *exists = 0;
    if (lstat(dir, &st) != 0) {
        if (errno == ENOENT) return 0;
        return err_set(err, CGNN_ERR_INPUT, "%s %s: %s", flag, dir, strerror(errno));
    }
    if (!S_ISDIR(st.st_mode))
        return err_set(err, CGNN_ERR_INPUT, "%s %s: exists and is not a directory; refusing to replace it", flag, dir);
    *exists = 1;
    DIR *d = opendir(dir);
    if (!d) return err_set(err, CGNN_ERR_INPUT, "%s %s: cannot read: %s", flag, dir, strerror(errno));
    char first[256] = "";
    struct dirent *e;
    while ((e = readdir(d)) != NULL && !first[0])
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            snprintf(first, sizeof first, "%s", e->d_name);
    closedir(d);
    if (first[0] && !force)
        return err_set(err, CGNN_ERR_INPUT,
                       "%s %s: directory exists and is not empty (it holds '%s'); refusing to overwrite it "
                       "(choose a new directory, or pass --force to replace it)",
                       flag, dir, first);
    return 0;
}

int cli_out_dir_write(const char *out, const char *job, int force, void (*add_inputs)(outguard *g, void *ctx),
                      cli_out_dir_writer write, void *ctx, char dir[4096], cgnn_err *err) {
    size_t olen = strlen(out);
    while (olen > 1 && out[olen - 1] == '/') olen--;
    if (olen >= 4096 - 32) return err_set(err, CGNN_ERR_INPUT, "--out: path too long");
    snprintf(dir, 4096, "%.*s", (int)olen, out);
    int exists = 0;
    if (cli_out_dir_check("--out", dir, force, &exists, err) != 0) return -1;
    outguard guard; /* the inputs against the output tree, which is locked against a second job */
    outguard_init(&guard);
    if (add_inputs) add_inputs(&guard, ctx);
    if (outguard_check_tree(&guard, dir, "--out", err) != 0 || outguard_lock(&guard, dir, "--out", job, err) != 0) {
        outguard_free(&guard);
        return -1;
    }
    outguard_activate(&guard);
    outguard_remove_stale_tmp(&guard, dir); /* a staging directory of a run that was killed */
    char staging[4200];
    snprintf(staging, sizeof staging, "%s.tmp.%ld", dir, (long)getpid());
    const int staging_h = cleanup_add(staging, 1);
    int rc = outguard_permit(staging, err);
    if (rc == 0 && mkdir(staging, 0755) != 0 && errno != EEXIST)
        rc = err_set(err, CGNN_ERR_RUNTIME, "%s: cannot create: %s", staging, strerror(errno));
    if (rc == 0 && (write(staging, ctx, err) != 0 || cli_out_dir_replace(dir, staging, exists, err) != 0)) rc = -1;
    if (rc != 0) cleanup_remove_tree(staging);
    cleanup_forget(staging_h);
    outguard_free(&guard); /* done: the lock goes */
    return rc;
}

int cli_out_dir_replace(const char *dir, const char *staging, int exists, cgnn_err *err) {
    char old[4200];
    snprintf(old, sizeof old, "%s.old.tmp.%ld", dir, (long)getpid());
    if (outguard_permit(dir, err) != 0 || outguard_permit(staging, err) != 0 || outguard_permit(old, err) != 0)
        return -1;
    const int old_h = exists ? cleanup_add(old, 1) : -1;
    if (exists && rename(dir, old) != 0) {
        cleanup_forget(old_h);
        return err_set(err, CGNN_ERR_RUNTIME, "%s: cannot move the old directory aside: %s", dir, strerror(errno));
    }
    if (rename(staging, dir) != 0) {
        int e = errno;
        if (exists) rename(old, dir); /* put it back */
        cleanup_forget(old_h);
        return err_set(err, CGNN_ERR_RUNTIME, "%s: cannot move the new directory into place: %s", dir, strerror(e));
    }
    if (exists) cleanup_remove_tree(old);
    cleanup_forget(old_h);
    return 0;
}
