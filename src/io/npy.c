/* npy.c — NumPy .npy reader (mmap) and writer; see npy.h for the contract.
 *
 * Format (numpy.lib.format): "\x93NUMPY", major, minor, header length (uint16 LE for 1.x,
 * uint32 LE for 2.x/3.x), then an ASCII (3.x: UTF-8) Python dict literal
 *   {'descr': '<f4', 'fortran_order': False, 'shape': (2708, 1433), }
 * padded with spaces and '\n', then the raw data.
 */
#include "io/npy.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/file.h"
#include "io/outguard.h"
#include "util/checked.h"
#include "util/cleanup.h"

static const struct {
    const char *name;
    const char *descr; /* without the byte-order character */
    size_t size;
    int is_int;
} DTYPE_INFO[] = {
    [NPY_DTYPE_INT8] = {"int8", "i1", 1, 1},
    [NPY_DTYPE_UINT8] = {"uint8", "u1", 1, 1},
    [NPY_DTYPE_INT32] = {"int32", "i4", 4, 1},
    [NPY_DTYPE_INT64] = {"int64", "i8", 8, 1},
    [NPY_DTYPE_FLOAT16] = {"float16", "f2", 2, 0},
    [NPY_DTYPE_FLOAT32] = {"float32", "f4", 4, 0},
    [NPY_DTYPE_FLOAT64] = {"float64", "f8", 8, 0},
};
_Static_assert(sizeof DTYPE_INFO / sizeof DTYPE_INFO[0] == NPY_DTYPE_COUNT, "dtype table");

size_t npy_dtype_size(npy_dtype dtype) { return DTYPE_INFO[dtype].size; }
const char *npy_dtype_name(npy_dtype dtype) { return DTYPE_INFO[dtype].name; }
int npy_dtype_is_int(npy_dtype dtype) { return DTYPE_INFO[dtype].is_int; }

/* ---- header dict parser --------------------------------------------------- */

typedef struct hdr_parser {
    const char *p, *end;
} hdr_parser;

static void hp_skip_ws(hdr_parser *hp) {
    while (hp->p < hp->end && isspace((unsigned char)*hp->p)) hp->p++;
}

static int hp_expect(hdr_parser *hp, char c) {
    hp_skip_ws(hp);
    if (hp->p >= hp->end || *hp->p != c) return -1;
    hp->p++;
    return 0;
}

/* Parses a quoted Python string ('...' or "...") into out. */
static int hp_string(hdr_parser *hp, char *out, size_t cap) {
    hp_skip_ws(hp);
    if (hp->p >= hp->end || (*hp->p != '\'' && *hp->p != '"')) return -1;
    char q = *hp->p++;
    size_t n = 0;
    while (hp->p < hp->end && *hp->p != q) {
        if (n + 1 >= cap) return -1;
        out[n++] = *hp->p++;
    }
    if (hp->p >= hp->end) return -1;
    hp->p++;
    out[n] = '\0';
    return 0;
}

static int parse_descr(const char *descr, npy_dtype *dtype, const char *path, cgnn_err *err) {
    char order = descr[0];
    const char *code = descr + 1;
    if (order != '<' && order != '|' && order != '=' && order != '>')
        return err_set(err, CGNN_ERR_INPUT, "%s: header: unsupported dtype '%s'", path, descr);
    for (int d = 0; d < NPY_DTYPE_COUNT; d++) {
        if (strcmp(code, DTYPE_INFO[d].descr) != 0) continue;
        if (order == '>' && DTYPE_INFO[d].size > 1)
            return err_set(err, CGNN_ERR_INPUT,
                           "%s: header: big-endian dtype '%s' is not supported (save with "
                           "a little-endian dtype, e.g. arr.astype('<%s'))",
                           path, descr, code);
        *dtype = (npy_dtype)d;
        return 0;
    }
    return err_set(err, CGNN_ERR_INPUT,
                   "%s: header: unsupported dtype '%s' (supported: int8 uint8 int32 int64 "
                   "float16 float32 float64)",
                   path, descr);
}

/* Parses the header dict text into dtype/ndim/shape. */
static int parse_header(const char *text, size_t len, npy_array *a, const char *path,
                        int allow_fortran, cgnn_err *err) {
    hdr_parser hp = {text, text + len};
    int have_descr = 0, have_order = 0, have_shape = 0;
    if (hp_expect(&hp, '{') != 0)
        return err_set(err, CGNN_ERR_INPUT, "%s: corrupt header: expected '{'", path);
    for (;;) {
        hp_skip_ws(&hp);
        if (hp.p < hp.end && *hp.p == '}') break;
        char key[64], val[64];
        if (hp_string(&hp, key, sizeof key) != 0 || hp_expect(&hp, ':') != 0)
            return err_set(err, CGNN_ERR_INPUT, "%s: corrupt header: expected 'key':", path);
        if (strcmp(key, "descr") == 0) {
            if (hp_string(&hp, val, sizeof val) != 0)
                return err_set(err, CGNN_ERR_INPUT, "%s: corrupt header: bad 'descr' value", path);
            if (parse_descr(val, &a->dtype, path, err) != 0) return -1;
            have_descr = 1;
        } else if (strcmp(key, "fortran_order") == 0) {
            hp_skip_ws(&hp);
            if ((size_t)(hp.end - hp.p) >= 4 && strncmp(hp.p, "True", 4) == 0) {
                if (!allow_fortran)
                    return err_set(err, CGNN_ERR_INPUT,
                                   "%s: header: fortran_order is True; only C order is supported "
                                   "(save np.ascontiguousarray(arr))",
                                   path);
                a->fortran_order = 1;
                hp.p += 4;
            } else if ((size_t)(hp.end - hp.p) >= 5 && strncmp(hp.p, "False", 5) == 0) {
                hp.p += 5;
            } else {
                return err_set(err, CGNN_ERR_INPUT, "%s: corrupt header: bad 'fortran_order'", path);
            }
            have_order = 1;
        } else if (strcmp(key, "shape") == 0) {
            if (hp_expect(&hp, '(') != 0)
                return err_set(err, CGNN_ERR_INPUT, "%s: corrupt header: bad 'shape'", path);
            a->ndim = 0;
            for (;;) {
                hp_skip_ws(&hp);
                if (hp.p < hp.end && *hp.p == ')') {
                    hp.p++;
                    break;
                }
                if (a->ndim >= NPY_MAX_DIMS)
                    return err_set(err, CGNN_ERR_INPUT, "%s: header: more than %d dimensions", path,
                                   NPY_MAX_DIMS);
                int64_t v = 0;
                int digits = 0;
                while (hp.p < hp.end && isdigit((unsigned char)*hp.p)) {
                    if (v > (INT64_MAX - 9) / 10)
                        return err_set(err, CGNN_ERR_INPUT, "%s: header: shape too large", path);
                    v = v * 10 + (*hp.p++ - '0');
                    digits++;
                }
                if (hp.p < hp.end && *hp.p == 'L') hp.p++; /* Python 2 long suffix */
                if (!digits)
                    return err_set(err, CGNN_ERR_INPUT, "%s: corrupt header: bad 'shape'", path);
                a->shape[a->ndim++] = v;
                hp_skip_ws(&hp);
                if (hp.p < hp.end && *hp.p == ',') hp.p++;
            }
            have_shape = 1;
        } else {
            return err_set(err, CGNN_ERR_INPUT, "%s: header: unknown key '%s'", path, key);
        }
        hp_skip_ws(&hp);
        if (hp.p < hp.end && *hp.p == ',') hp.p++;
    }
    if (!have_descr || !have_order || !have_shape)
        return err_set(err, CGNN_ERR_INPUT, "%s: corrupt header: missing %s", path,
                       !have_descr ? "'descr'" : !have_order ? "'fortran_order'" : "'shape'");
    return 0;
}

static int npy_open_impl(npy_array *a, const char *path, int populate, int allow_fortran,
                         cgnn_err *err) {
    memset(a, 0, sizeof *a);
    snprintf(a->path, sizeof a->path, "%s", path);
    struct stat st;
    int fd = file_open_regular(path, &st, err);
    if (fd < 0) return -1;
    size_t file_len = (size_t)st.st_size;
    unsigned char pre[12];
    ssize_t got = pread(fd, pre, sizeof pre, 0);
    if (got < 10 || memcmp(pre, "\x93NUMPY", 6) != 0) {
        close(fd);
        return err_set(err, CGNN_ERR_INPUT, "%s: not a .npy file (bad magic or truncated header)",
                       path);
    }
    int major = pre[6];
    size_t hlen, hstart;
    if (major == 1) {
        hlen = (size_t)pre[8] | ((size_t)pre[9] << 8);
        hstart = 10;
    } else if (major == 2 || major == 3) {
        if (got < 12) {
            close(fd);
            return err_set(err, CGNN_ERR_INPUT, "%s: truncated header", path);
        }
        hlen = (size_t)pre[8] | ((size_t)pre[9] << 8) | ((size_t)pre[10] << 16) |
               ((size_t)pre[11] << 24);
        hstart = 12;
    } else {
        close(fd);
        return err_set(err, CGNN_ERR_INPUT, "%s: unsupported .npy format version %d.%d", path,
                       major, pre[7]);
    }
    if (hstart + hlen > file_len) {
        close(fd);
        return err_set(err, CGNN_ERR_INPUT,
                       "%s: truncated header (declares %zu header bytes, file has %zu)", path,
                       hlen, file_len);
    }
    void *base = mmap(NULL, file_len, PROT_READ, MAP_SHARED | (populate ? MAP_POPULATE : 0), fd, 0);
    close(fd);
    if (base == MAP_FAILED) return err_set(err, CGNN_ERR_INPUT, "%s: mmap: %s", path, strerror(errno));
    a->map_base = base;
    a->map_len = file_len;
    for (int d = 0; d < NPY_MAX_DIMS; d++) a->shape[d] = 1;
    if (parse_header((const char *)base + hstart, hlen, a, path, allow_fortran, err) != 0) goto fail;
    int64_t count = 1;
    for (int d = 0; d < a->ndim; d++) {
        if (a->shape[d] != 0 && count > INT64_MAX / a->shape[d]) {
            err_set(err, CGNN_ERR_INPUT, "%s: header: shape overflows", path);
            goto fail;
        }
        count *= a->shape[d];
    }
    for (int d = a->ndim; d < NPY_MAX_DIMS; d++) a->shape[d] = 1;
    a->count = count;
    if (a->fortran_order) { /* with at most one dimension > 1 both orders are the same bytes */
        int big = 0;
        for (int d = 0; d < a->ndim; d++) big += a->shape[d] > 1;
        if (big <= 1) a->fortran_order = 0;
    }
    size_t need;
    if (ck_mul_size((size_t)count, npy_dtype_size(a->dtype), &need) != 0) {
        err_set(err, CGNN_ERR_INPUT, "%s: header: shape of %lld elements of %s overflows the address space", path,
                (long long)count, npy_dtype_name(a->dtype));
        goto fail;
    }
    size_t have = file_len - hstart - hlen;
    if (have < need) {
        err_set(err, CGNN_ERR_INPUT,
                "%s: truncated data: shape needs %zu bytes of %s, file has %zu after the header",
                path, need, npy_dtype_name(a->dtype), have);
        goto fail;
    }
    if (have > need) {
        err_set(err, CGNN_ERR_INPUT,
                "%s: corrupt file: %zu bytes of data after the declared shape", path, have - need);
        goto fail;
    }
    /* the mapping is page-aligned: the data is aligned for its items iff its offset is. numpy pads
     * the header to a multiple of 64 bytes (16 before numpy 1.14); a crafted header length that
     * misaligns the data would make every typed read of it undefined behaviour */
    if ((hstart + hlen) % npy_dtype_size(a->dtype) != 0) {
        err_set(err, CGNN_ERR_INPUT,
                "%s: header: the data starts at byte %zu, not a multiple of the %zu-byte %s items (numpy pads "
                "the header to 64 bytes; rewrite the file with np.save)",
                path, hstart + hlen, npy_dtype_size(a->dtype), npy_dtype_name(a->dtype));
        goto fail;
    }
    a->data = (const char *)base + hstart + hlen;
    return 0;
fail:
    munmap(base, file_len);
    {
        char keep[4096];
        memcpy(keep, a->path, sizeof keep);
        memset(a, 0, sizeof *a);
        memcpy(a->path, keep, sizeof keep);
    }
    return -1;
}

int npy_open(npy_array *a, const char *path, int populate, cgnn_err *err) {
    return npy_open_impl(a, path, populate, 0, err);
}

int npy_open_any_order(npy_array *a, const char *path, int populate, cgnn_err *err) {
    return npy_open_impl(a, path, populate, 1, err);
}

void npy_close(npy_array *a) {
    if (!a) return;
    if (a->map_base) munmap(a->map_base, a->map_len);
    a->map_base = NULL;
    free(a->owned);
    a->owned = NULL;
    a->data = NULL;
    a->count = 0;
}

int64_t npy_get_int(const npy_array *a, int64_t i) {
    switch (a->dtype) {
    case NPY_DTYPE_INT8: return ((const int8_t *)a->data)[i];
    case NPY_DTYPE_UINT8: return ((const uint8_t *)a->data)[i];
    case NPY_DTYPE_INT32: return ((const int32_t *)a->data)[i];
    case NPY_DTYPE_INT64: return ((const int64_t *)a->data)[i];
    default: cgnn_panic(__FILE__, __LINE__, "npy_get_int on %s", npy_dtype_name(a->dtype));
    }
}

/* ---- writer --------------------------------------------------------------- */

/* Formats a version-1.0 header (version 2.0 if it does not fit 65535 bytes) into buf; returns
 * its total length (a multiple of 64). */
static size_t format_header(char *buf, size_t cap, npy_dtype dtype, int ndim, const int64_t *shape) {
    char dict[512];
    int n = snprintf(dict, sizeof dict, "{'descr': '%c%s', 'fortran_order': False, 'shape': (",
                     npy_dtype_size(dtype) == 1 ? '|' : '<', DTYPE_INFO[dtype].descr);
    for (int d = 0; d < ndim; d++)
        n += snprintf(dict + n, sizeof dict - (size_t)n, "%lld,%s", (long long)shape[d],
                      (d + 1 < ndim) ? " " : "");
    if (ndim > 1) n--; /* numpy writes (a, b) and (a,) */
    n += snprintf(dict + n, sizeof dict - (size_t)n, "), }");
    size_t pre = 10;
    size_t total = (pre + (size_t)n + 1 + 63) / 64 * 64;
    CGNN_CHECK(total <= cap);
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    size_t hlen = total - pre;
    buf[8] = (char)(hlen & 0xff);
    buf[9] = (char)(hlen >> 8);
    memcpy(buf + pre, dict, (size_t)n);
    memset(buf + pre + n, ' ', total - pre - (size_t)n - 1);
    buf[total - 1] = '\n';
    return total;
}

int npy_writer_open(npy_writer *w, const char *path, npy_dtype dtype, int ndim,
                    const int64_t *shape, cgnn_err *err) {
    memset(w, 0, sizeof *w);
    CGNN_CHECK(ndim >= 0 && ndim <= NPY_MAX_DIMS);
    snprintf(w->path, sizeof w->path, "%s", path);
    if (outguard_permit(path, err) != 0) return -1;
    w->cleanup = cleanup_tmp_path(w->tmp_path, sizeof w->tmp_path, path);
    FILE *fp = fopen(w->tmp_path, "wb");
    if (!fp) {
        int e = errno;
        cleanup_forget(w->cleanup);
        return err_set(err, CGNN_ERR_RUNTIME, "%s: cannot create: %s", w->tmp_path, strerror(e));
    }
    char hdr[640];
    size_t hl = format_header(hdr, sizeof hdr, dtype, ndim, shape);
    if (fwrite(hdr, 1, hl, fp) != hl) {
        fclose(fp);
        unlink(w->tmp_path);
        cleanup_forget(w->cleanup);
        return err_set(err, CGNN_ERR_RUNTIME, "%s: write failed: %s", w->tmp_path, strerror(errno));
    }
    size_t count = 1;
    for (int d = 0; d < ndim; d++) CGNN_CHECK(shape[d] >= 0 && ck_mul_size(count, (size_t)shape[d], &count) == 0);
    CGNN_CHECK(ck_mul_size(count, npy_dtype_size(dtype), &w->expect_bytes) == 0);
    w->fp = fp;
    return 0;
}

int npy_writer_append(npy_writer *w, const void *bytes, size_t n, cgnn_err *err) {
    if (n && fwrite(bytes, 1, n, (FILE *)w->fp) != n)
        return err_set(err, CGNN_ERR_RUNTIME, "%s: write failed: %s", w->tmp_path, strerror(errno));
    w->written_bytes += n;
    return 0;
}

int npy_writer_close(npy_writer *w, int abort_write, cgnn_err *err) {
    if (!w->fp) return 0;
    FILE *fp = (FILE *)w->fp;
    w->fp = NULL;
    int ok = !abort_write && fflush(fp) == 0 && !ferror(fp);
    int e = ok ? 0 : errno;
    if (fclose(fp) != 0 && ok) ok = 0, e = errno;
    if (ok && w->written_bytes != w->expect_bytes) ok = 0, e = EIO;
    if (ok && rename(w->tmp_path, w->path) != 0) ok = 0, e = errno;
    if (!ok) unlink(w->tmp_path);
    cleanup_forget(w->cleanup);
    if (abort_write) return 0;
    if (!ok) return err_set(err, CGNN_ERR_RUNTIME, "%s: write failed: %s", w->path, strerror(e ? e : EIO));
    return 0;
}

int npy_write(const char *path, npy_dtype dtype, int ndim, const int64_t *shape, const void *data,
              cgnn_err *err) {
    npy_writer w;
    if (npy_writer_open(&w, path, dtype, ndim, shape, err) != 0) return -1;
    if (npy_writer_append(&w, data, w.expect_bytes, err) != 0) {
        npy_writer_close(&w, 1, NULL);
        return -1;
    }
    return npy_writer_close(&w, 0, err);
}
