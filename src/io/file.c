/* file.c — safe opening of input files; see file.h. */
#include "io/file.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

const char *file_kind_name(const struct stat *st) {
    if (S_ISFIFO(st->st_mode)) return "a FIFO";
    if (S_ISCHR(st->st_mode)) return "a character device";
    if (S_ISBLK(st->st_mode)) return "a block device";
    if (S_ISSOCK(st->st_mode)) return "a socket";
    if (S_ISDIR(st->st_mode)) return "a directory";
    if (S_ISREG(st->st_mode)) return "a regular file";
    return "not a regular file";
}

int file_open_regular(const char *path, struct stat *st_out, cgnn_err *err) {
    /* O_NONBLOCK: open(2) of a FIFO without a writer would block forever */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) return err_set(err, CGNN_ERR_INPUT, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return err_set(err, CGNN_ERR_INPUT, "%s: cannot stat: %s", path, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return err_set(err, CGNN_ERR_INPUT, "%s: cannot read: it is %s, not a regular file", path,
                       file_kind_name(&st));
    }
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
        int e = errno;
        close(fd);
        return err_set(err, CGNN_ERR_INPUT, "%s: cannot open: %s", path, strerror(e));
    }
    if (st_out) *st_out = st;
    return fd;
}

int file_same(const char *a, const char *b) {
    struct stat sa, sb;
    if (!a || !b || !*a || !*b || stat(a, &sa) != 0 || stat(b, &sb) != 0) return 0;
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}
