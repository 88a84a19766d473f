/* durable.c — crash-safe file writes (temporary file, fsync, rename, directory fsync); see
 * durable.h. */
#include "io/durable.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "io/outguard.h"
#include "util/cleanup.h"

int durable_open(durable_file *f, const char *path, cgnn_err *err) {
    memset(f, 0, sizeof *f);
    f->fd = -1;
    f->cleanup_handle = -1;
    f->exit_after_bytes = -1;
    if (snprintf(f->path, sizeof f->path, "%s", path) >= (int)sizeof f->path)
        return err_set(err, CGNN_ERR_RUNTIME, "%.200s...: path too long", path);
    if (outguard_permit(path, err) != 0) return -1;
    f->cleanup_handle = cleanup_tmp_path(f->tmp, sizeof f->tmp, path); /* removed on a signal */
    f->fd = open(f->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (f->fd < 0) {
        const int e = errno;
        cleanup_forget(f->cleanup_handle);
        f->cleanup_handle = -1;
        return err_set(err, CGNN_ERR_RUNTIME, "%s: cannot create temporary file %s: %s", path, f->tmp, strerror(e));
    }
    return 0;
}

/* Writes all of buf[0..len) to fd; returns 0 or -1 with errno set. */
static int write_all(int fd, const void *buf, size_t len) {
    const char *p = (const char *)buf;
    while (len > 0) {
        size_t chunk = len < ((size_t)1 << 30) ? len : ((size_t)1 << 30);
        ssize_t w = write(fd, p, chunk);
        if (w < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        if (w == 0) {
            errno = EIO;
            return -1;
        }
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

int durable_write(durable_file *f, const void *buf, size_t n, cgnn_err *err) {
    CGNN_CHECK(f->fd >= 0 && (n == 0 || buf));
    if (f->exit_after_bytes >= 0 && f->written + (int64_t)n >= f->exit_after_bytes) {
        /* test hook: die in the middle of the write, as a kill -9 would */
        const size_t part = (size_t)(f->exit_after_bytes - f->written);
        (void)write_all(f->fd, buf, part);
        fprintf(stderr, "cgnn: test hook: exiting abruptly after %lld bytes of %s\n",
                (long long)f->exit_after_bytes, f->tmp);
        _Exit(3);
    }
    if (write_all(f->fd, buf, n) != 0)
        return err_set(err, CGNN_ERR_RUNTIME, "%s: write failed: %s", f->path, strerror(errno));
    f->written += (int64_t)n;
    return 0;
}

void durable_sync_parent_dir(const char *path) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash) snprintf(dir, sizeof dir, ".");
    else if (slash == dir) dir[1] = '\0';
    else *slash = '\0';
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return;
    (void)fsync(fd);
    close(fd);
}

int durable_commit(durable_file *f, cgnn_err *err) {
    CGNN_CHECK(f->fd >= 0);
    const char *what = "fsync failed";
    int ok = fsync(f->fd) == 0;
    int e = ok ? 0 : errno;
    if (close(f->fd) != 0 && ok) {
        ok = 0;
        e = errno;
        what = "close failed";
    }
    f->fd = -1;
    if (ok && rename(f->tmp, f->path) != 0) {
        ok = 0;
        e = errno;
        what = "cannot rename the temporary file into place";
    }
    if (!ok) unlink(f->tmp);
    cleanup_forget(f->cleanup_handle);
    f->cleanup_handle = -1;
    if (!ok) return err_set(err, CGNN_ERR_RUNTIME, "%s: %s: %s", f->path, what, strerror(e));
    durable_sync_parent_dir(f->path);
    return 0;
}

void durable_abort(durable_file *f) {
    if (!f || f->fd < 0) return;
    close(f->fd);
    f->fd = -1;
    unlink(f->tmp);
    cleanup_forget(f->cleanup_handle);
    f->cleanup_handle = -1;
}
