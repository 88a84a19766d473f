/* safetensors.c — safetensors checkpoint writer and strict reader; see safetensors.h.
 *
 * Layout (https://github.com/huggingface/safetensors):
 *   u64 little-endian N | N bytes of UTF-8 JSON header, padded with spaces so that 8 + N is a
 *   multiple of 8 | data section (raw little-endian tensors, "data_offsets" relative to it).
 * The writer puts "__metadata__" first (as the reference implementation does), then the tensors
 * in the caller's order, packed back to back. The reader accepts any valid safetensors file whose
 * tensors are all F32 with at most 4 dims; it checks what the reference implementation checks
 * (offsets in range, sizes match shapes, regions contiguous and covering the data section).
 */
#include "io/safetensors.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/durable.h"
#include "io/file.h"
#include "io/json.h"

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "safetensors data is little-endian");

/* The reference implementation refuses headers above 100 MB; so do we. */
#define ST_MAX_HEADER ((uint64_t)100 * 1000 * 1000)
/* JSON nesting limit (a valid header nests 3 deep). */
#define ST_MAX_DEPTH 32

/* ---- writer ---------------------------------------------------------------------- */

static int64_t numel_of(const st_tensor *t) {
    int64_t k = 1;
    for (int d = 0; d < t->ndim; d++) {
        CGNN_CHECK(t->shape[d] >= 0);
        CGNN_CHECK(t->shape[d] == 0 || k <= INT64_MAX / 4 / t->shape[d]);
        k *= t->shape[d];
    }
    return k;
}

int safetensors_write_to(durable_file *out, const st_tensor *tensors, int n, const char *const *meta, int n_meta,
                         cgnn_err *err) {
    CGNN_CHECK(out && n >= 0 && n_meta >= 0 && (n == 0 || tensors) && (n_meta == 0 || meta));
    /* Header: {"__metadata__":{...},"name":{"dtype":"F32","shape":[..],"data_offsets":[b,e]},...} */
    json_buf h = {0};
    json_buf_put(&h, "{", 1);
    if (n_meta > 0) {
        json_buf_string(&h, "__metadata__");
        json_buf_put(&h, ":{", 2);
        for (int k = 0; k < n_meta; k++) {
            CGNN_CHECK(meta[2 * k] && meta[2 * k + 1]);
            if (k) json_buf_put(&h, ",", 1);
            json_buf_string(&h, meta[2 * k]);
            json_buf_put(&h, ":", 1);
            json_buf_string(&h, meta[2 * k + 1]);
        }
        json_buf_put(&h, "}", 1);
    }
    int64_t off = 0;
    for (int i = 0; i < n; i++) {
        const st_tensor *t = &tensors[i];
        /* Bad names or shapes are bugs in the caller (the model), never user input. */
        CGNN_CHECK(t->name && *t->name && strcmp(t->name, "__metadata__") != 0);
        CGNN_CHECK(t->ndim >= 0 && t->ndim <= 4);
        for (int j = 0; j < i; j++) CGNN_CHECK(strcmp(tensors[j].name, t->name) != 0);
        int64_t bytes = numel_of(t) * 4;
        CGNN_CHECK(bytes == 0 || t->data);
        if (i || n_meta > 0) json_buf_put(&h, ",", 1);
        json_buf_string(&h, t->name);
        json_buf_puts(&h, ":{\"dtype\":\"F32\",\"shape\":[");
        for (int d = 0; d < t->ndim; d++) json_buf_printf(&h, "%s%lld", d ? "," : "", (long long)t->shape[d]);
        json_buf_printf(&h, "],\"data_offsets\":[%lld,%lld]}", (long long)off, (long long)(off + bytes));
        off += bytes;
    }
    json_buf_put(&h, "}", 1);
    while (h.len % 8 != 0) json_buf_put(&h, " ", 1);
    unsigned char len_le[8];
    for (int k = 0; k < 8; k++) len_le[k] = (unsigned char)((uint64_t)h.len >> (8 * k));
    int rc = durable_write(out, len_le, 8, err);
    if (rc == 0) rc = durable_write(out, h.p, h.len, err);
    json_buf_free(&h);
    for (int i = 0; rc == 0 && i < n; i++) rc = durable_write(out, tensors[i].data, (size_t)numel_of(&tensors[i]) * 4, err);
    return rc;
}

int safetensors_write(const char *path, const st_tensor *tensors, int n, const char *const *meta,
                      int n_meta, cgnn_err *err) {
    CGNN_CHECK(path);
    durable_file f;
    if (durable_open(&f, path, err) != 0) return -1;
    if (safetensors_write_to(&f, tensors, n, meta, n_meta, err) != 0) {
        durable_abort(&f);
        return -1;
    }
    return durable_commit(&f, err);
}

/* ---- reader ---------------------------------------------------------------------- */

/* Reads len bytes at offset off of fd into buf; returns 0 or -1 (errno; EIO at a short file). */
static int read_at(int fd, void *buf, size_t len, off_t off) {
    char *p = (char *)buf;
    while (len > 0) {
        size_t chunk = len < ((size_t)1 << 30) ? len : ((size_t)1 << 30);
        ssize_t r = pread(fd, p, chunk, off);
        if (r < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        if (r == 0) {
            errno = EIO;
            return -1;
        }
        p += r;
        off += r;
        len -= (size_t)r;
    }
    return 0;
}

typedef struct st_region {
    int64_t begin, end;
    int idx; /* tensor index */
} st_region;

static int region_cmp(const void *a, const void *b) {
    const st_region *x = (const st_region *)a, *y = (const st_region *)b;
    if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
    if (x->end != y->end) return x->end < y->end ? -1 : 1;
    return x->idx - y->idx;
}

/* Checks one tensor entry e (key name) and fills slot i of f (everything but data). Returns 0
 * or -1 with *err. */
static int check_entry(st_file *f, int i, const char *name, const json_value *e, int64_t data_len, st_region *r,
                       cgnn_err *err) {
    const char *path = f->path;
    if (e->type != JSON_OBJ)
        return err_set(err, CGNN_ERR_INPUT, "%s: tensor '%s': entry is not a JSON object", path, name);
    const json_value *dtype = json_get(e, "dtype"), *shape = json_get(e, "shape"), *offs = json_get(e, "data_offsets");
    if (!dtype) return err_set(err, CGNN_ERR_INPUT, "%s: tensor '%s': missing \"dtype\"", path, name);
    if (!shape) return err_set(err, CGNN_ERR_INPUT, "%s: tensor '%s': missing \"shape\"", path, name);
    if (!offs) return err_set(err, CGNN_ERR_INPUT, "%s: tensor '%s': missing \"data_offsets\"", path, name);
    if (dtype->type != JSON_STR)
        return err_set(err, CGNN_ERR_INPUT, "%s: tensor '%s': \"dtype\" is not a string", path, name);
    if (strcmp(dtype->str, "F32") != 0)
        return err_set(err, CGNN_ERR_INPUT, "%s: tensor '%s': dtype %s is not supported (only F32)", path, name,
                       dtype->str);
    if (shape->type != JSON_ARR)
        return err_set(err, CGNN_ERR_INPUT, "%s: tensor '%s': \"shape\" is not an array", path, name);
    if (shape->n > 4)
        return err_set(err, CGNN_ERR_INPUT, "%s: tensor '%s': %d dimensions, at most 4 are supported", path, name,
                       shape->n);
    int64_t numel = 1;
    f->ndims[i] = shape->n;
    for (int d = 0; d < 4; d++) f->shapes[i][d] = 1; /* unused dims are 1 */
    for (int d = 0; d < shape->n; d++) {
        const json_value *s = &shape->items[d];
        if (s->type != JSON_NUM || !s->is_uint)
            return err_set(err, CGNN_ERR_INPUT, "%s: tensor '%s': shape[%d] is not a non-negative integer", path,
                           name, d);
        if (s->u != 0 && numel > INT64_MAX / 4 / s->u)
            return err_set(err, CGNN_ERR_INPUT, "%s: tensor '%s': shape is too large", path, name);
        numel *= s->u;
        f->shapes[i][d] = s->u;
    }
    if (offs->type != JSON_ARR || offs->n != 2 || offs->items[0].type != JSON_NUM || !offs->items[0].is_uint ||
        offs->items[1].type != JSON_NUM || !offs->items[1].is_uint)
        return err_set(err, CGNN_ERR_INPUT, "%s: tensor '%s': \"data_offsets\" is not [begin, end]", path, name);
    int64_t b = offs->items[0].u, en = offs->items[1].u;
    if (b > en || en > data_len)
        return err_set(err, CGNN_ERR_INPUT,
                       "%s: tensor '%s': data_offsets [%lld, %lld] out of range (data section is %lld bytes)", path,
                       name, (long long)b, (long long)en, (long long)data_len);
    if (en - b != 4 * numel)
        return err_set(err, CGNN_ERR_INPUT,
                       "%s: tensor '%s': data_offsets [%lld, %lld] hold %lld bytes, but %lld F32 elements need %lld",
                       path, name, (long long)b, (long long)en, (long long)(en - b), (long long)numel,
                       (long long)(4 * numel));
    r->begin = b;
    r->end = en;
    r->idx = i;
    return 0;
}

/* safetensors_read (with_data) or safetensors_read_header (without). */
static int read_file(st_file *f, const char *path, int with_data, cgnn_err *err) {
    memset(f, 0, sizeof *f);
    snprintf(f->path, sizeof f->path, "%s", path);
    struct stat st;
    int fd = file_open_regular(path, &st, err);
    if (fd < 0) return -1;
    char *hdr = NULL;
    st_region *regions = NULL;
    json_value root = {0};
    char jmsg[160];
    int64_t size = (int64_t)st.st_size;
    f->file_size = size;
    if (size < 8) {
        err_set(err, CGNN_ERR_INPUT, "%s: file is %lld bytes, too short for the 8-byte header length (truncated?)",
                path, (long long)size);
        goto fail;
    }
    unsigned char len_le[8];
    if (read_at(fd, len_le, 8, 0) != 0) {
        err_set(err, CGNN_ERR_INPUT, "%s: read failed: %s", path, strerror(errno));
        goto fail;
    }
    uint64_t hlen = 0;
    for (int k = 0; k < 8; k++) hlen |= (uint64_t)len_le[k] << (8 * k);
    if (hlen > (uint64_t)(size - 8)) {
        err_set(err, CGNN_ERR_INPUT,
                "%s: header length %llu exceeds the file (%lld bytes): truncated or not a safetensors file", path,
                (unsigned long long)hlen, (long long)size);
        goto fail;
    }
    if (hlen > ST_MAX_HEADER) {
        err_set(err, CGNN_ERR_INPUT, "%s: header length %llu is over the %llu-byte limit", path,
                (unsigned long long)hlen, (unsigned long long)ST_MAX_HEADER);
        goto fail;
    }
    hdr = (char *)cgnn_malloc((size_t)hlen + 1);
    if (read_at(fd, hdr, (size_t)hlen, 8) != 0) {
        err_set(err, CGNN_ERR_INPUT, "%s: read failed: %s", path, strerror(errno));
        goto fail;
    }
    hdr[hlen] = '\0';
    if (json_parse(&root, hdr, (size_t)hlen, ST_MAX_DEPTH, jmsg, sizeof jmsg) != 0) {
        err_set(err, CGNN_ERR_INPUT, "%s: invalid JSON header %s", path, jmsg);
        goto fail;
    }
    if (root.type != JSON_OBJ) {
        err_set(err, CGNN_ERR_INPUT, "%s: the JSON header is not an object", path);
        goto fail;
    }
    int64_t data_off = 8 + (int64_t)hlen, data_len = size - data_off;

    /* Metadata, and the tensor count. */
    int ntensors = 0;
    const json_value *meta = NULL;
    for (int k = 0; k < root.n; k++) {
        if (strcmp(root.keys[k], "__metadata__") != 0) {
            ntensors++;
            continue;
        }
        meta = &root.items[k];
        if (f->meta || meta->type != JSON_OBJ) {
            err_set(err, CGNN_ERR_INPUT, "%s: \"__metadata__\" must appear once and be an object", path);
            goto fail;
        }
        f->n_meta = meta->n;
        f->meta = (char **)cgnn_calloc((size_t)(2 * meta->n + 1), sizeof(char *));
        for (int m = 0; m < meta->n; m++) {
            if (meta->items[m].type != JSON_STR) {
                err_set(err, CGNN_ERR_INPUT, "%s: \"__metadata__\": value of '%s' is not a string", path,
                        meta->keys[m]);
                goto fail;
            }
            for (int q = 0; q < m; q++)
                if (strcmp(f->meta[2 * q], meta->keys[m]) == 0) {
                    err_set(err, CGNN_ERR_INPUT, "%s: \"__metadata__\": duplicate key '%s'", path, meta->keys[m]);
                    goto fail;
                }
            f->meta[2 * m] = meta->keys[m];
            f->meta[2 * m + 1] = meta->items[m].str;
            meta->keys[m] = NULL; /* moved into f */
            meta->items[m].str = NULL;
        }
    }

    /* Tensors, in header order. */
    size_t nt = (size_t)(ntensors ? ntensors : 1);
    f->names = (char **)cgnn_calloc(nt, sizeof(char *));
    f->ndims = (int *)cgnn_calloc(nt, sizeof(int));
    f->shapes = (int64_t(*)[4])cgnn_calloc(nt, sizeof *f->shapes);
    f->data = (float **)cgnn_calloc(nt, sizeof(float *));
    f->file_offsets = (int64_t *)cgnn_calloc(nt, sizeof(int64_t));
    regions = (st_region *)cgnn_calloc(nt, sizeof *regions);
    for (int k = 0; k < root.n; k++) {
        if (strcmp(root.keys[k], "__metadata__") == 0) continue;
        int i = f->n;
        for (int q = 0; q < i; q++)
            if (strcmp(f->names[q], root.keys[k]) == 0) {
                err_set(err, CGNN_ERR_INPUT, "%s: duplicate tensor '%s'", path, root.keys[k]);
                goto fail;
            }
        if (check_entry(f, i, root.keys[k], &root.items[k], data_len, &regions[i], err) != 0) goto fail;
        f->names[i] = root.keys[k];
        root.keys[k] = NULL; /* moved into f */
        f->n++;
    }

    /* The regions must tile the data section exactly: sorted, each starts where the last ended. */
    qsort(regions, (size_t)f->n, sizeof *regions, region_cmp);
    int64_t at = 0;
    for (int k = 0; k < f->n; k++) {
        if (regions[k].begin < at) {
            err_set(err, CGNN_ERR_INPUT, "%s: tensors '%s' and '%s' overlap in the data section", path,
                    f->names[regions[k - 1].idx], f->names[regions[k].idx]);
            goto fail;
        }
        if (regions[k].begin > at) {
            err_set(err, CGNN_ERR_INPUT, "%s: bytes [%lld, %lld) of the data section belong to no tensor (before '%s')",
                    path, (long long)at, (long long)regions[k].begin, f->names[regions[k].idx]);
            goto fail;
        }
        at = regions[k].end;
        f->file_offsets[regions[k].idx] = data_off + regions[k].begin;
    }
    if (at != data_len) {
        err_set(err, CGNN_ERR_INPUT, "%s: the data section is %lld bytes but the tensors cover %lld", path,
                (long long)data_len, (long long)at);
        goto fail;
    }

    /* The data, 64-byte aligned (every region starts at a multiple of 4 from there); a
     * header-only read stops here. */
    if (with_data) {
        if (posix_memalign(&f->blob, 64, (size_t)(data_len > 0 ? data_len : 1)) != 0) {
            f->blob = NULL;
            err_set(err, CGNN_ERR_INPUT, "%s: cannot allocate %lld bytes for the data", path, (long long)data_len);
            goto fail;
        }
        if (data_len > 0 && read_at(fd, f->blob, (size_t)data_len, (off_t)data_off) != 0) {
            err_set(err, CGNN_ERR_INPUT, "%s: read failed: %s", path, strerror(errno));
            goto fail;
        }
        for (int k = 0; k < f->n; k++)
            f->data[regions[k].idx] = (float *)((char *)f->blob + regions[k].begin);
    }
    free(regions);
    free(hdr);
    json_free(&root);
    close(fd);
    return 0;

fail:
    free(regions);
    free(hdr);
    json_free(&root);
    close(fd);
    safetensors_free(f);
    return -1;
}

int safetensors_read(st_file *f, const char *path, cgnn_err *err) { return read_file(f, path, 1, err); }

int safetensors_read_header(st_file *f, const char *path, cgnn_err *err) { return read_file(f, path, 0, err); }

int safetensors_read_tensor(const st_file *f, int i, float *dst, cgnn_err *err) {
    CGNN_CHECK(f && i >= 0 && i < f->n && f->file_offsets);
    int64_t numel = 1;
    for (int d = 0; d < f->ndims[i]; d++) numel *= f->shapes[i][d];
    CGNN_CHECK(numel == 0 || dst);
    if (f->data[i]) { /* already in memory (safetensors_read) */
        memcpy(dst, f->data[i], (size_t)numel * sizeof(float));
        return 0;
    }
    struct stat st;
    int fd = file_open_regular(f->path, &st, err);
    if (fd < 0) return -1;
    int rc = 0;
    if ((int64_t)st.st_size != f->file_size)
        rc = err_set(err, CGNN_ERR_INPUT, "%s: tensor '%s': the file changed since its header was read", f->path,
                     f->names[i]);
    else if (numel > 0 && read_at(fd, dst, (size_t)numel * sizeof(float), (off_t)f->file_offsets[i]) != 0)
        rc = err_set(err, CGNN_ERR_INPUT, "%s: tensor '%s': read failed: %s", f->path, f->names[i], strerror(errno));
    close(fd);
    return rc;
}

void safetensors_free(st_file *f) {
    if (!f) return;
    for (int i = 0; i < f->n; i++) free(f->names[i]);
    for (int i = 0; f->meta && i < 2 * f->n_meta; i++) free(f->meta[i]);
    free(f->names);
    free(f->ndims);
    free(f->shapes);
    free(f->data);
    free(f->file_offsets);
    free(f->meta);
    free(f->blob);
    memset(f, 0, sizeof *f);
}

int safetensors_find(const st_file *f, const char *name) {
    for (int i = 0; i < f->n; i++)
        if (strcmp(f->names[i], name) == 0) return i;
    return -1;
}

const char *safetensors_meta(const st_file *f, const char *key) {
    for (int i = 0; i < f->n_meta; i++)
        if (f->meta[2 * i] && strcmp(f->meta[2 * i], key) == 0) return f->meta[2 * i + 1];
    return NULL;
}
