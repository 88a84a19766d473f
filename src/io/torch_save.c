/* torch_save.c — PyTorch's zip checkpoint format, writer and strict reader; see torch_save.h.
 *
 * Zip layout written (APPNOTE 6.3.x, the subset torch's miniz writer produces):
 *   per record: local header (version 2.0 / 4.5, no flags, method 0 = stored, CRC-32 and sizes
 *               known up front) | name | [zip64 extra: sizes] | "FB" extra of 'Z' padding so the
 *               data starts at a multiple of 64 | data
 *   central directory (one entry per record, zip64 extra where a size or offset needs it)
 *   zip64 end of central directory + its locator (always, as torch writes them) | end record
 * Reader: finds the end record from the file's end, follows the zip64 locator, parses the
 * central directory with every field bounded, and checks each local header against it.
 *
 * Pickle: written opcode for opcode as Python's pickle (protocol 2) writes torch.save's
 * OrderedDict, memo included (BINPUT after each string, tuple, dict, global and reduce; BINGET
 * for the repeated globals and the 'storage' / 'cpu' strings), so `pickletools.dis` shows the
 * structure torch's own files have. The reader is a value-building stack machine for that
 * opcode set (pvm_*), with Python's MARK semantics and a memo that must be filled in order.
 */
#include "io/torch_save.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "io/file.h"
#include "util/checked.h"
#include "util/crc.h"

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "torch.save data is little-endian");

#define TS_ALIGN 64                        /* torch's kFieldAlignment */
#define TS_BATCH 1000                      /* pickle's _BATCHSIZE (SETITEMS batches) */
#define TS_U32_MAX 0xFFFFFFFFu
#define TS_MAX_PICKLE ((int64_t)64 << 20)  /* data.pkl: a 65536-tensor state_dict is ~10 MB */
#define TS_MAX_RECORDS (1 << 20)
#define TS_MAX_CD ((int64_t)256 << 20)     /* central directory bytes */
#define TS_MAX_NAME 1024                   /* record names and state_dict keys */
#define TS_MAX_VALUES (1 << 21)            /* pickle objects (~20 per tensor; bounds memory: ~150 MB) */
#define TS_MAX_META 4096                   /* metadata pairs */
#define TS_FORMAT_VERSION "3\n"            /* torch's kProducedFileFormatVersion for torch.save */

/* ---- little helpers ------------------------------------------------------------------------ */

typedef struct tbuf {
    unsigned char *p;
    size_t len, cap;
} tbuf;

static void tb_put(tbuf *b, const void *s, size_t n) {
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n) cap *= 2;
        b->p = (unsigned char *)cgnn_realloc(b->p, cap);
        b->cap = cap;
    }
    if (n) memcpy(b->p + b->len, s, n);
    b->len += n;
}
static void tb_u8(tbuf *b, unsigned v) {
    unsigned char c = (unsigned char)v;
    tb_put(b, &c, 1);
}
static void tb_u16(tbuf *b, unsigned v) {
    unsigned char c[2] = {(unsigned char)v, (unsigned char)(v >> 8)};
    tb_put(b, c, 2);
}
static void tb_u32(tbuf *b, uint32_t v) {
    unsigned char c[4];
    for (int k = 0; k < 4; k++) c[k] = (unsigned char)(v >> (8 * k));
    tb_put(b, c, 4);
}
static void tb_u64(tbuf *b, uint64_t v) {
    unsigned char c[8];
    for (int k = 0; k < 8; k++) c[k] = (unsigned char)(v >> (8 * k));
    tb_put(b, c, 8);
}

/* CRC-32 of a record: zlib's directly for small ones (no thread team for a few bytes). */
static uint32_t crc_of(const void *p, size_t n) {
    return n <= ((size_t)4 << 20) ? (uint32_t)crc32(0L, (const Bytef *)p, (uInt)n) : crc_parallel(0, p, n);
}

static uint32_t le16(const unsigned char *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t le32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t le64(const unsigned char *p) { return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32; }

/* ---- zip writer ---------------------------------------------------------------------------- */

/* The records with their CRC-32s (crcs[i]) as one STORED zip. */
static int zip_write(durable_file *out, const ts_record *r, const uint32_t *crcs, int n, int zip64, cgnn_err *err) {
    CGNN_CHECK(n >= 0 && n <= TS_MAX_RECORDS && (n == 0 || (r && crcs)));
    uint64_t *lho = (uint64_t *)cgnn_calloc((size_t)n + 1, sizeof *lho);
    char pad[TS_ALIGN];
    memset(pad, 'Z', sizeof pad);
    tbuf h = {0};
    uint64_t pos = (uint64_t)out->written;
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        const size_t nlen = strlen(r[i].name);
        CGNN_CHECK(nlen >= 1 && nlen <= 0xFFFF && r[i].size >= 0 && (r[i].size == 0 || r[i].data));
        const uint64_t size = (uint64_t)r[i].size;
        const int z64 = zip64 || size >= TS_U32_MAX; /* local zip64 extra: both sizes */
        const uint64_t start = pos + 30 + nlen + (z64 ? 20 : 0) + 4;
        const unsigned padlen = (unsigned)((TS_ALIGN - start % TS_ALIGN) % TS_ALIGN);
        lho[i] = pos;
        h.len = 0;
        tb_u32(&h, 0x04034b50);
        tb_u16(&h, z64 ? 45 : 20); /* version needed: 4.5 for zip64, else 2.0 */
        tb_u16(&h, 0);             /* flags */
        tb_u16(&h, 0);             /* method: stored */
        tb_u16(&h, 0);             /* time */
        tb_u16(&h, 0);             /* date (0, as torch writes: deterministic) */
        tb_u32(&h, crcs[i]);
        tb_u32(&h, z64 ? TS_U32_MAX : (uint32_t)size);
        tb_u32(&h, z64 ? TS_U32_MAX : (uint32_t)size);
        tb_u16(&h, (unsigned)nlen);
        tb_u16(&h, (z64 ? 20u : 0u) + 4u + padlen);
        tb_put(&h, r[i].name, nlen);
        if (z64) {
            tb_u16(&h, 0x0001);
            tb_u16(&h, 16);
            tb_u64(&h, size);
            tb_u64(&h, size);
        }
        tb_put(&h, "FB", 2);
        tb_u16(&h, padlen);
        tb_put(&h, pad, padlen);
        CGNN_CHECK((pos + h.len) % TS_ALIGN == 0);
        rc = durable_write(out, h.p, h.len, err);
        if (rc == 0 && size) rc = durable_write(out, r[i].data, (size_t)size, err);
        pos += h.len + size;
    }
    const uint64_t cd_off = pos;
    h.len = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        const size_t nlen = strlen(r[i].name);
        const uint64_t size = (uint64_t)r[i].size;
        const int zs = zip64 || size >= TS_U32_MAX, zo = zip64 || lho[i] >= TS_U32_MAX;
        tb_u32(&h, 0x02014b50);
        tb_u16(&h, 45);                   /* version made by */
        tb_u16(&h, zs || zo ? 45 : 20);   /* version needed */
        tb_u16(&h, 0);
        tb_u16(&h, 0);
        tb_u16(&h, 0);
        tb_u16(&h, 0);
        tb_u32(&h, crcs[i]);
        tb_u32(&h, zs ? TS_U32_MAX : (uint32_t)size);
        tb_u32(&h, zs ? TS_U32_MAX : (uint32_t)size);
        tb_u16(&h, (unsigned)nlen);
        tb_u16(&h, zs || zo ? 4u + (zs ? 16u : 0u) + (zo ? 8u : 0u) : 0u);
        tb_u16(&h, 0); /* comment */
        tb_u16(&h, 0); /* disk */
        tb_u16(&h, 0); /* internal attributes */
        tb_u32(&h, 0); /* external attributes */
        tb_u32(&h, zo ? TS_U32_MAX : (uint32_t)lho[i]);
        tb_put(&h, r[i].name, nlen);
        if (zs || zo) {
            tb_u16(&h, 0x0001);
            tb_u16(&h, (zs ? 16u : 0u) + (zo ? 8u : 0u));
            if (zs) tb_u64(&h, size), tb_u64(&h, size);
            if (zo) tb_u64(&h, lho[i]);
        }
    }
    const uint64_t cd_size = h.len, z64_off = cd_off + cd_size;
    tb_u32(&h, 0x06064b50); /* zip64 end of central directory */
    tb_u64(&h, 44);
    tb_u16(&h, 45);
    tb_u16(&h, 45);
    tb_u32(&h, 0);
    tb_u32(&h, 0);
    tb_u64(&h, (uint64_t)n);
    tb_u64(&h, (uint64_t)n);
    tb_u64(&h, cd_size);
    tb_u64(&h, cd_off);
    tb_u32(&h, 0x07064b50); /* its locator */
    tb_u32(&h, 0);
    tb_u64(&h, z64_off);
    tb_u32(&h, 1);
    const int big_n = zip64 || n >= 0xFFFF;
    tb_u32(&h, 0x06054b50); /* end of central directory */
    tb_u16(&h, 0);
    tb_u16(&h, 0);
    tb_u16(&h, big_n ? 0xFFFF : (unsigned)n);
    tb_u16(&h, big_n ? 0xFFFF : (unsigned)n);
    tb_u32(&h, zip64 || cd_size >= TS_U32_MAX ? TS_U32_MAX : (uint32_t)cd_size);
    tb_u32(&h, zip64 || cd_off >= TS_U32_MAX ? TS_U32_MAX : (uint32_t)cd_off);
    tb_u16(&h, 0);
    if (rc == 0) rc = durable_write(out, h.p, h.len, err);
    free(h.p);
    free(lho);
    return rc;
}

int torch_save_write_zip(durable_file *out, const ts_record *records, int n, int zip64, cgnn_err *err) {
    uint32_t *crcs = (uint32_t *)cgnn_calloc((size_t)n + 1, sizeof *crcs);
    for (int i = 0; i < n; i++) crcs[i] = crc_of(records[i].data, (size_t)records[i].size);
    int rc = zip_write(out, records, crcs, n, zip64, err);
    free(crcs);
    return rc;
}

/* ---- pickle writer -------------------------------------------------------------------------- */

typedef struct pk_writer {
    tbuf b;
    uint32_t memo; /* next memo index */
} pk_writer;

static uint32_t pk_put(pk_writer *w) { /* BINPUT / LONG_BINPUT of the object just written */
    const uint32_t id = w->memo++;
    if (id < 256) {
        tb_u8(&w->b, 'q');
        tb_u8(&w->b, id);
    } else {
        tb_u8(&w->b, 'r');
        tb_u32(&w->b, id);
    }
    return id;
}
static void pk_get(pk_writer *w, uint32_t id) {
    if (id < 256) {
        tb_u8(&w->b, 'h');
        tb_u8(&w->b, id);
    } else {
        tb_u8(&w->b, 'j');
        tb_u32(&w->b, id);
    }
}
static uint32_t pk_str(pk_writer *w, const char *s) {
    const size_t n = strlen(s);
    CGNN_CHECK(n <= TS_MAX_NAME * 64);
    tb_u8(&w->b, 'X');
    tb_u32(&w->b, (uint32_t)n);
    tb_put(&w->b, s, n);
    return pk_put(w);
}
static void pk_int(pk_writer *w, int64_t v) { /* non-negative: BININT1 / BININT2 / BININT / LONG1 */
    CGNN_CHECK(v >= 0);
    if (v <= 0xFF) {
        tb_u8(&w->b, 'K');
        tb_u8(&w->b, (unsigned)v);
    } else if (v <= 0xFFFF) {
        tb_u8(&w->b, 'M');
        tb_u16(&w->b, (unsigned)v);
    } else if (v <= INT32_MAX) {
        tb_u8(&w->b, 'J');
        tb_u32(&w->b, (uint32_t)v);
    } else { /* Python's encode_long: bit_length / 8 + 1 bytes, two's complement */
        int bits = 64 - __builtin_clzll((unsigned long long)v), nb = bits / 8 + 1;
        tb_u8(&w->b, 0x8a);
        tb_u8(&w->b, (unsigned)nb);
        for (int k = 0; k < nb; k++) tb_u8(&w->b, k < 8 ? (unsigned)((uint64_t)v >> (8 * k)) & 0xFF : 0);
    }
}
static uint32_t pk_global(pk_writer *w, const char *module, const char *name) {
    tb_u8(&w->b, 'c');
    tb_put(&w->b, module, strlen(module));
    tb_u8(&w->b, '\n');
    tb_put(&w->b, name, strlen(name));
    tb_u8(&w->b, '\n');
    return pk_put(w);
}
static void pk_int_tuple(pk_writer *w, const int64_t *v, int n) {
    if (n == 0) { /* EMPTY_TUPLE is not memoized */
        tb_u8(&w->b, ')');
        return;
    }
    if (n > 3) tb_u8(&w->b, '(');
    for (int k = 0; k < n; k++) pk_int(w, v[k]);
    tb_u8(&w->b, n > 3 ? 't' : (unsigned)(0x85 + n - 1)); /* TUPLE or TUPLE1..3 */
    pk_put(w);
}
/* SETITEMS batches over n (key, value) pairs: one pair is SETITEM, more are MARK ... SETITEMS. */
typedef void (*pk_item_fn)(pk_writer *w, int i, void *ctx);
static void pk_setitems(pk_writer *w, int n, pk_item_fn item, void *ctx) {
    for (int b = 0; b < n; b += TS_BATCH) {
        const int e = n - b < TS_BATCH ? n : b + TS_BATCH;
        if (e - b > 1) tb_u8(&w->b, '(');
        for (int i = b; i < e; i++) item(w, i, ctx);
        tb_u8(&w->b, e - b > 1 ? 'u' : 's');
    }
}

typedef struct pk_state {
    const ts_tensor *t;
    const char *const *meta;
    uint32_t od, rebuild, storage, floatst, cpu; /* memo ids; UINT32_MAX until first written */
} pk_state;

static void pk_tensor_item(pk_writer *w, int i, void *ctx) {
    pk_state *s = (pk_state *)ctx;
    const ts_tensor *t = &s->t[i];
    pk_str(w, t->name);
    if (s->rebuild == UINT32_MAX) s->rebuild = pk_global(w, "torch._utils", "_rebuild_tensor_v2");
    else pk_get(w, s->rebuild);
    tb_u8(&w->b, '('); /* args of _rebuild_tensor_v2 */
    tb_u8(&w->b, '('); /* the persistent id ('storage', torch.FloatStorage, key, 'cpu', numel) */
    if (s->storage == UINT32_MAX) s->storage = pk_str(w, "storage");
    else pk_get(w, s->storage);
    if (s->floatst == UINT32_MAX) s->floatst = pk_global(w, "torch", "FloatStorage");
    else pk_get(w, s->floatst);
    char key[32];
    snprintf(key, sizeof key, "%d", i);
    pk_str(w, key);
    if (s->cpu == UINT32_MAX) s->cpu = pk_str(w, "cpu");
    else pk_get(w, s->cpu);
    int64_t numel = 1, stride[TORCH_SAVE_MAX_DIMS], step = 1;
    for (int d = t->ndim - 1; d >= 0; d--) { /* torch's contiguous strides: products of max(size, 1) */
        stride[d] = step;
        step *= t->shape[d] > 1 ? t->shape[d] : 1;
        numel *= t->shape[d];
    }
    pk_int(w, numel);
    tb_u8(&w->b, 't');
    pk_put(w);
    tb_u8(&w->b, 'Q'); /* BINPERSID */
    pk_int(w, 0);      /* storage offset */
    pk_int_tuple(w, t->shape, t->ndim);
    pk_int_tuple(w, stride, t->ndim);
    tb_u8(&w->b, 0x89); /* requires_grad: False */
    pk_get(w, s->od);   /* backward hooks: OrderedDict() */
    tb_u8(&w->b, ')');
    tb_u8(&w->b, 'R');
    pk_put(w);
    tb_u8(&w->b, 't');
    pk_put(w);
    tb_u8(&w->b, 'R');
    pk_put(w);
}

static void pk_meta_item(pk_writer *w, int i, void *ctx) {
    const pk_state *s = (const pk_state *)ctx;
    pk_str(w, s->meta[2 * i]);
    pk_str(w, s->meta[2 * i + 1]);
}

/* data.pkl of torch.save(OrderedDict(tensors)) with `_metadata` = {META_KEY: dict(meta)}. */
static void pk_state_dict(pk_writer *w, const ts_tensor *t, int n, const char *const *meta, int n_meta) {
    pk_state s = {t, meta, 0, UINT32_MAX, UINT32_MAX, UINT32_MAX, UINT32_MAX};
    tb_u8(&w->b, 0x80);
    tb_u8(&w->b, 2);
    s.od = pk_global(w, "collections", "OrderedDict");
    tb_u8(&w->b, ')');
    tb_u8(&w->b, 'R');
    pk_put(w);
    pk_setitems(w, n, pk_tensor_item, &s);
    if (n_meta > 0) { /* BUILD {'_metadata': OrderedDict([(META_KEY, {k: v})])} */
        tb_u8(&w->b, '}');
        pk_put(w);
        pk_str(w, "_metadata");
        pk_get(w, s.od);
        tb_u8(&w->b, ')');
        tb_u8(&w->b, 'R');
        pk_put(w);
        pk_str(w, TORCH_SAVE_META_KEY);
        tb_u8(&w->b, '}');
        pk_put(w);
        pk_setitems(w, n_meta, pk_meta_item, &s);
        tb_u8(&w->b, 's');
        tb_u8(&w->b, 's');
        tb_u8(&w->b, 'b');
    }
    tb_u8(&w->b, '.');
}

/* torch's archive name rule: the file name without directory and extension. */
static void archive_name(char *out, size_t cap, const char *path) {
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *dot = strrchr(base, '.');
    size_t n = dot ? (size_t)(dot - base) : strlen(base);
    int ok = n >= 1 && n < cap && n <= 200;
    for (size_t k = 0; ok && k < n; k++) {
        const char c = base[k];
        ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
             c == '-';
    }
    if (ok) snprintf(out, cap, "%.*s", (int)n, base);
    else snprintf(out, cap, "archive");
}

int torch_save_write_to(durable_file *out, const ts_tensor *t, int n, const char *const *meta, int n_meta,
                        const torch_save_options *opt, cgnn_err *err) {
    CGNN_CHECK(out && n >= 0 && n <= TORCH_SAVE_MAX_TENSORS && (n == 0 || t) && n_meta >= 0 &&
               n_meta <= TS_MAX_META && (n_meta == 0 || meta));
    for (int i = 0; i < n; i++) { /* bad names or shapes are bugs of the caller, never input */
        CGNN_CHECK(t[i].name && *t[i].name && strlen(t[i].name) <= TS_MAX_NAME);
        CGNN_CHECK(t[i].ndim >= 0 && t[i].ndim <= TORCH_SAVE_MAX_DIMS);
        int64_t numel = 1;
        for (int d = 0; d < t[i].ndim; d++) {
            CGNN_CHECK(t[i].shape[d] >= 0 && ck_mul_i64(numel, t[i].shape[d], &numel) == 0);
        }
        CGNN_CHECK(numel <= INT64_MAX / 8 && (numel == 0 || t[i].data));
    }
    for (int k = 0; k < 2 * n_meta; k++) CGNN_CHECK(meta[k] && strlen(meta[k]) <= TS_MAX_NAME);
    char arch[256];
    if (opt && opt->archive) snprintf(arch, sizeof arch, "%s", opt->archive);
    else archive_name(arch, sizeof arch, out->path);

    pk_writer w = {0};
    pk_state_dict(&w, t, n, meta, n_meta);

    const int nrec = n + 4;
    ts_record *r = (ts_record *)cgnn_calloc((size_t)nrec, sizeof *r);
    char **names = (char **)cgnn_calloc((size_t)nrec, sizeof *names);
    uint32_t *crcs = (uint32_t *)cgnn_calloc((size_t)nrec, sizeof *crcs);
    const size_t cap = strlen(arch) + 64;
    for (int q = 0; q < nrec; q++) names[q] = (char *)cgnn_malloc(cap);
    int k = 0;
    snprintf(names[k], cap, "%s/data.pkl", arch);
    r[k] = (ts_record){names[k], w.b.p, (int64_t)w.b.len};
    k++;
    snprintf(names[k], cap, "%s/byteorder", arch);
    r[k] = (ts_record){names[k], "little", 6};
    k++;
    for (int i = 0; i < n; i++) {
        int64_t numel = 1;
        for (int d = 0; d < t[i].ndim; d++) numel *= t[i].shape[d];
        snprintf(names[k], cap, "%s/data/%d", arch, i);
        r[k] = (ts_record){names[k], t[i].data, numel * 4};
        k++;
    }
    snprintf(names[k], cap, "%s/version", arch);
    r[k] = (ts_record){names[k], TS_FORMAT_VERSION, 2};
    k++;
    /* .data/serialization_id: 20 digits of a hash of the record names, 20 of their CRCs combined
     * (the shape of torch's id; the values are ours, deterministic) */
    uint64_t h = 1469598103934665603ull, comb = 0;
    for (int q = 0; q < k; q++) {
        crcs[q] = crc_of(r[q].data, (size_t)r[q].size);
        comb = crc32_combine64((uLong)comb, crcs[q], (z_off64_t)r[q].size);
        for (const char *c = r[q].name; *c; c++) h = (h ^ (unsigned char)*c) * 1099511628211ull;
    }
    char sid[48];
    snprintf(sid, sizeof sid, "%020llu%020llu", (unsigned long long)h, (unsigned long long)comb);
    snprintf(names[k], cap, "%s/.data/serialization_id", arch);
    r[k] = (ts_record){names[k], sid, 40};
    crcs[k] = crc_of(sid, 40);
    k++;
    CGNN_CHECK(k == nrec);
    int rc = zip_write(out, r, crcs, nrec, opt ? opt->zip64 : 0, err);
    for (int q = 0; q < nrec; q++) free(names[q]);
    free(names);
    free(r);
    free(crcs);
    free(w.b.p);
    return rc;
}

int torch_save_write(const char *path, const ts_tensor *tensors, int n, const char *const *meta, int n_meta,
                     cgnn_err *err) {
    CGNN_CHECK(path);
    durable_file f;
    if (durable_open(&f, path, err) != 0) return -1;
    if (torch_save_write_to(&f, tensors, n, meta, n_meta, NULL, err) != 0) {
        durable_abort(&f);
        return -1;
    }
    return durable_commit(&f, err);
}

/* ---- reading: the zip directory ------------------------------------------------------------ */

static int read_at(int fd, void *buf, size_t len, int64_t off) {
    char *p = (char *)buf;
    while (len > 0) {
        size_t chunk = len < ((size_t)1 << 30) ? len : ((size_t)1 << 30);
        ssize_t r = pread(fd, p, chunk, (off_t)off);
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

typedef struct zrec {
    char *name;      /* owned, NUL-terminated */
    int64_t lho;     /* local header offset */
    int64_t data;    /* first data byte */
    int64_t size;
    uint32_t crc;
    uint32_t method;  /* 0: stored */
} zrec;

typedef struct zdir {
    int n;
    zrec *r;         /* central directory order */
    int *by_name;    /* indices sorted by name */
    int *by_off;     /* indices sorted by local header offset */
    char archive[TS_MAX_NAME + 2]; /* "<a>/" */
} zdir;

static void zdir_free(zdir *z) {
    for (int i = 0; z->r && i < z->n; i++) free(z->r[i].name);
    free(z->r);
    free(z->by_name);
    free(z->by_off);
    memset(z, 0, sizeof *z);
}

static const zdir *sort_dir_; /* qsort has no context argument; the reader is not re-entrant here */
static int cmp_name(const void *a, const void *b) {
    return strcmp(sort_dir_->r[*(const int *)a].name, sort_dir_->r[*(const int *)b].name);
}
static int cmp_off(const void *a, const void *b) {
    const int64_t x = sort_dir_->r[*(const int *)a].lho, y = sort_dir_->r[*(const int *)b].lho;
    return x < y ? -1 : x > y;
}

/* Index of record "<archive>/rest" in z, or -1. */
static int zdir_find(const zdir *z, const char *rest) {
    char name[2 * TS_MAX_NAME + 16];
    if (snprintf(name, sizeof name, "%s%s", z->archive, rest) >= (int)sizeof name) return -1;
    int lo = 0, hi = z->n - 1;
    while (lo <= hi) {
        const int mid = lo + (hi - lo) / 2, c = strcmp(z->r[z->by_name[mid]].name, name);
        if (c == 0) return z->by_name[mid];
        if (c < 0) lo = mid + 1;
        else hi = mid - 1;
    }
    return -1;
}

#define ZFAIL(...) (err_set(err, CGNN_ERR_INPUT, __VA_ARGS__), -1)

/* Parses the zip structure of the open file (size bytes) into *z. Returns 0 or -1 with *err. */
static int zdir_read(zdir *z, int fd, const char *path, int64_t size, cgnn_err *err) {
    memset(z, 0, sizeof *z);
    if (size < 22)
        return ZFAIL("%s: %lld bytes: too short for a zip archive (truncated, or not a torch.save file)", path,
                     (long long)size);
    /* the end record: the last "PK\5\6" whose comment reaches exactly to the end of the file */
    const int64_t tail_len = size < 22 + 0xFFFF + 20 ? size : 22 + 0xFFFF + 20;
    unsigned char *tail = (unsigned char *)cgnn_malloc((size_t)tail_len);
    if (read_at(fd, tail, (size_t)tail_len, size - tail_len) != 0) {
        free(tail);
        return ZFAIL("%s: read failed: %s", path, strerror(errno));
    }
    int64_t p = -1;
    for (int64_t q = tail_len - 22; q >= 0; q--)
        if (le32(tail + q) == 0x06054b50 && q + 22 + (int64_t)le16(tail + q + 20) == tail_len) {
            p = q;
            break;
        }
    if (p < 0) {
        free(tail);
        return ZFAIL("%s: no zip end-of-central-directory record: not a torch.save (zip) file, or truncated", path);
    }
    const unsigned char *e = tail + p;
    const int64_t eocd = size - tail_len + p;
    uint64_t n_disk = le16(e + 8), n_total = le16(e + 10), cd_size = le32(e + 12), cd_off = le32(e + 16);
    int64_t cd_end = eocd;
    int bad_disk = le16(e + 4) != 0 || le16(e + 6) != 0;
    const int has_loc = p >= 20 && le32(e - 20) == 0x07064b50;
    unsigned char z64[56];
    if (has_loc) {
        const uint64_t loc_disk = le32(e - 16), z64_off = le64(e - 12), disks = le32(e - 4);
        free(tail);
        tail = NULL;
        if (loc_disk != 0 || disks != 1)
            return ZFAIL("%s: zip64 locator: a multi-disk archive (disk %llu of %llu)", path,
                         (unsigned long long)loc_disk, (unsigned long long)disks);
        if (eocd < 20 + 56 || z64_off > (uint64_t)(eocd - 20 - 56))
            return ZFAIL("%s: zip64 locator: end record offset %llu out of range", path, (unsigned long long)z64_off);
        if (read_at(fd, z64, 56, (int64_t)z64_off) != 0) return ZFAIL("%s: read failed: %s", path, strerror(errno));
        if (le32(z64) != 0x06064b50 || le64(z64 + 4) < 44 || le64(z64 + 4) != (uint64_t)(eocd - 20) - z64_off - 12)
            return ZFAIL("%s: the zip64 end of central directory record at %llu is malformed", path,
                         (unsigned long long)z64_off);
        bad_disk = bad_disk || le32(z64 + 16) != 0 || le32(z64 + 20) != 0;
        const uint64_t n_disk64 = le64(z64 + 24), n_total64 = le64(z64 + 32), cd_size64 = le64(z64 + 40),
                       cd_off64 = le64(z64 + 48);
        if ((n_disk != 0xFFFF && n_disk != n_disk64) || (n_total != 0xFFFF && n_total != n_total64) ||
            (cd_size != TS_U32_MAX && cd_size != cd_size64) || (cd_off != TS_U32_MAX && cd_off != cd_off64))
            return ZFAIL("%s: the zip end record and the zip64 end record disagree", path);
        n_disk = n_disk64, n_total = n_total64, cd_size = cd_size64, cd_off = cd_off64;
        cd_end = (int64_t)z64_off;
    } else {
        free(tail);
        tail = NULL;
        if (n_total == 0xFFFF || cd_size == TS_U32_MAX || cd_off == TS_U32_MAX)
            return ZFAIL("%s: the zip end record holds zip64 markers but there is no zip64 locator", path);
    }
    if (bad_disk || n_disk != n_total) return ZFAIL("%s: a multi-disk zip archive is not supported", path);
    if (n_total < 1) return ZFAIL("%s: the zip archive holds no records", path);
    if (n_total > TS_MAX_RECORDS) return ZFAIL("%s: %llu zip records, over the limit of %d", path,
                                               (unsigned long long)n_total, TS_MAX_RECORDS);
    if (cd_off > (uint64_t)cd_end || cd_size != (uint64_t)cd_end - cd_off)
        return ZFAIL("%s: the central directory (offset %llu, %llu bytes) does not end where its end record starts "
                     "(%lld)", path, (unsigned long long)cd_off, (unsigned long long)cd_size, (long long)cd_end);
    if (cd_size > (uint64_t)TS_MAX_CD || cd_size < n_total * 46)
        return ZFAIL("%s: central directory of %llu bytes for %llu records", path, (unsigned long long)cd_size,
                     (unsigned long long)n_total);
    unsigned char *cd = (unsigned char *)cgnn_malloc((size_t)cd_size);
    if (read_at(fd, cd, (size_t)cd_size, (int64_t)cd_off) != 0) {
        free(cd);
        return ZFAIL("%s: read failed: %s", path, strerror(errno));
    }
    z->r = (zrec *)cgnn_calloc((size_t)n_total, sizeof *z->r);
    int rc = 0;
    size_t at = 0;
    for (uint64_t i = 0; i < n_total && rc == 0; i++) {
        const unsigned char *c = cd + at;
        if (cd_size - at < 46 || le32(c) != 0x02014b50) {
            rc = ZFAIL("%s: central directory entry %llu is malformed", path, (unsigned long long)i);
            break;
        }
        const uint32_t flags = le16(c + 8), method = le16(c + 10), crc = le32(c + 16), nlen = le16(c + 28),
                       xlen = le16(c + 30), clen = le16(c + 32);
        uint64_t csize = le32(c + 20), usize = le32(c + 24), lho = le32(c + 42), disk = le16(c + 34);
        if (cd_size - at - 46 < (uint64_t)nlen + xlen + clen) {
            rc = ZFAIL("%s: central directory entry %llu runs past the directory", path, (unsigned long long)i);
            break;
        }
        if (nlen < 1 || nlen > TS_MAX_NAME || memchr(c + 46, 0, nlen)) {
            rc = ZFAIL("%s: zip record %llu has a bad name (%u bytes)", path, (unsigned long long)i, nlen);
            break;
        }
        zrec *r = &z->r[z->n];
        r->name = (char *)cgnn_malloc(nlen + 1u);
        memcpy(r->name, c + 46, nlen);
        r->name[nlen] = '\0';
        z->n++;
        /* extra fields: the zip64 one replaces the saturated 32-bit values, in APPNOTE order */
        const unsigned char *x = c + 46 + nlen;
        int seen64 = 0;
        for (uint32_t xp = 0; xp < xlen && rc == 0;) {
            if (xlen - xp < 4 || xlen - xp - 4 < le16(x + xp + 2)) {
                rc = ZFAIL("%s: zip record '%s': malformed extra field", path, r->name);
                break;
            }
            const uint32_t id = le16(x + xp), len = le16(x + xp + 2);
            if (id == 0x0001) {
                const unsigned char *v = x + xp + 4;
                uint32_t k = 0;
                uint64_t *fields[3] = {&usize, &csize, &lho};
                if (seen64++) rc = ZFAIL("%s: zip record '%s': two zip64 extra fields", path, r->name);
                for (int f = 0; f < 3 && rc == 0; f++) {
                    if (*fields[f] != TS_U32_MAX) continue;
                    if (len - k < 8) rc = ZFAIL("%s: zip record '%s': zip64 extra field too short", path, r->name);
                    else *fields[f] = le64(v + k), k += 8;
                }
                if (rc == 0 && disk == 0xFFFF) {
                    if (len - k < 4) rc = ZFAIL("%s: zip record '%s': zip64 extra field too short", path, r->name);
                    else disk = le32(v + k);
                }
            }
            xp += 4 + len;
        }
        if (rc) break;
        if (flags & 0x0041) {
            rc = ZFAIL("%s: zip record '%s' is encrypted", path, r->name);
            break;
        }
        r->method = method; /* checked below, after a TorchScript archive is recognised */
        if (disk != 0 || usize > (uint64_t)INT64_MAX || lho > (uint64_t)cd_off ||
            (method == 0 && csize != usize)) {
            rc = ZFAIL("%s: zip record '%s': sizes %llu / %llu or offset %llu are inconsistent", path, r->name,
                       (unsigned long long)csize, (unsigned long long)usize, (unsigned long long)lho);
            break;
        }
        r->lho = (int64_t)lho;
        r->size = (int64_t)usize;
        r->crc = crc;
        at += 46 + (size_t)nlen + xlen + clen;
    }
    free(cd);
    if (rc == 0 && at != cd_size)
        rc = ZFAIL("%s: %llu bytes after the last central directory entry", path, (unsigned long long)(cd_size - at));
    for (int i = 0; i < z->n && rc == 0; i++) {
        const size_t nl = strlen(z->r[i].name);
        if (nl >= 14 && strcmp(z->r[i].name + nl - 14, "/constants.pkl") == 0)
            rc = ZFAIL("%s: a TorchScript archive (torch.jit.save), not a torch.save state_dict", path);
    }
    for (int i = 0; i < z->n && rc == 0; i++)
        if (z->r[i].method != 0)
            rc = ZFAIL("%s: zip record '%s' is compressed (method %u); torch.save stores records uncompressed", path,
                       z->r[i].name, z->r[i].method);
    /* local headers: the same name, stored, data inside the file before the directory */
    unsigned char lh[30];
    char *lname = rc == 0 ? (char *)cgnn_malloc(TS_MAX_NAME + 1) : NULL;
    for (int i = 0; i < z->n && rc == 0; i++) {
        zrec *r = &z->r[i];
        const size_t nlen = strlen(r->name);
        if ((uint64_t)r->lho > cd_off - 30 || cd_off < 30 || read_at(fd, lh, 30, r->lho) != 0 ||
            le32(lh) != 0x04034b50) {
            rc = ZFAIL("%s: zip record '%s': no local header at offset %lld", path, r->name, (long long)r->lho);
            break;
        }
        const uint32_t lflags = le16(lh + 6), lmethod = le16(lh + 8), lcrc = le32(lh + 14), lusize = le32(lh + 22),
                       lnlen = le16(lh + 26), lxlen = le16(lh + 28);
        int64_t data = r->lho + 30 + (int64_t)lnlen + lxlen, end;
        if (lnlen != nlen || data > (int64_t)cd_off || read_at(fd, lname, nlen, r->lho + 30) != 0 ||
            memcmp(lname, r->name, nlen) != 0) {
            rc = ZFAIL("%s: zip record '%s': the local header names another record", path, r->name);
            break;
        }
        if (lmethod != 0 || (!(lflags & 8) && (lcrc != r->crc || (lusize != TS_U32_MAX && lusize != r->size)))) {
            rc = ZFAIL("%s: zip record '%s': the local header disagrees with the central directory", path, r->name);
            break;
        }
        if (ck_add_i64(data, r->size, &end) != 0 || end > (int64_t)cd_off) {
            rc = ZFAIL("%s: zip record '%s': %lld bytes at offset %lld run past the records (truncated?)", path,
                       r->name, (long long)r->size, (long long)data);
            break;
        }
        r->data = data;
    }
    free(lname);
    if (rc) {
        zdir_free(z);
        return -1;
    }
    /* no two records overlap, no two share a name, all lie in one folder */
    z->by_name = (int *)cgnn_malloc((size_t)z->n * sizeof(int));
    z->by_off = (int *)cgnn_malloc((size_t)z->n * sizeof(int));
    for (int i = 0; i < z->n; i++) z->by_name[i] = z->by_off[i] = i;
    sort_dir_ = z;
    qsort(z->by_name, (size_t)z->n, sizeof(int), cmp_name);
    qsort(z->by_off, (size_t)z->n, sizeof(int), cmp_off);
    sort_dir_ = NULL;
    for (int k = 1; k < z->n && rc == 0; k++) {
        const zrec *a = &z->r[z->by_off[k - 1]], *b = &z->r[z->by_off[k]];
        if (b->lho < a->data + a->size)
            rc = ZFAIL("%s: zip records '%s' and '%s' overlap", path, a->name, b->name);
        if (rc == 0 && strcmp(z->r[z->by_name[k - 1]].name, z->r[z->by_name[k]].name) == 0)
            rc = ZFAIL("%s: two zip records are named '%s'", path, z->r[z->by_name[k]].name);
    }
    const char *slash = rc == 0 ? strchr(z->r[0].name, '/') : NULL;
    if (rc == 0 && (!slash || slash == z->r[0].name))
        rc = ZFAIL("%s: zip record '%s' is not in a folder (torch.save puts every record in <name>/)", path,
                   z->r[0].name);
    if (rc == 0) {
        snprintf(z->archive, sizeof z->archive, "%.*s", (int)(slash - z->r[0].name + 1), z->r[0].name);
        const size_t al = strlen(z->archive);
        for (int i = 0; i < z->n && rc == 0; i++)
            if (strncmp(z->r[i].name, z->archive, al) != 0)
                rc = ZFAIL("%s: zip record '%s' is not in the archive folder '%s'", path, z->r[i].name, z->archive);
    }
    if (rc) zdir_free(z);
    return rc;
}

/* Reads record k of z whole (at most cap bytes) into a new buffer (+1 NUL byte) and checks its
 * CRC-32. Returns it, or NULL with *err. */
static unsigned char *read_record(int fd, const char *path, const zdir *z, int k, int64_t cap, cgnn_err *err) {
    const zrec *r = &z->r[k];
    if (r->size > cap) {
        err_set(err, CGNN_ERR_INPUT, "%s: record '%s' is %lld bytes, over the limit of %lld", path, r->name,
                (long long)r->size, (long long)cap);
        return NULL;
    }
    unsigned char *b = (unsigned char *)cgnn_malloc((size_t)r->size + 1);
    if (read_at(fd, b, (size_t)r->size, r->data) != 0) {
        err_set(err, CGNN_ERR_INPUT, "%s: record '%s': read failed: %s", path, r->name, strerror(errno));
        free(b);
        return NULL;
    }
    b[r->size] = '\0';
    if (crc_of(b, (size_t)r->size) != r->crc) {
        err_set(err, CGNN_ERR_INPUT, "%s: record '%s': CRC-32 mismatch (the file is corrupt)", path, r->name);
        free(b);
        return NULL;
    }
    return b;
}

/* ---- reading: the pickle machine ------------------------------------------------------------ */

enum { PV_BOOL, PV_INT, PV_STR, PV_TUPLE, PV_DICT, PV_GLOBAL, PV_STORAGE, PV_TENSOR };
enum { G_ORDERED_DICT = 0, G_REBUILD_V2 = 1, G_STORAGE = 2 };

/* The storage types torch.save names (torch.<X>Storage), FloatStorage first. */
static const char *const STORAGE_NAMES[] = {"FloatStorage", "DoubleStorage", "HalfStorage",   "BFloat16Storage",
                                            "LongStorage",  "IntStorage",    "ShortStorage",  "CharStorage",
                                            "ByteStorage",  "BoolStorage",   "ComplexFloatStorage",
                                            "ComplexDoubleStorage"};
#define N_STORAGE_NAMES ((int)(sizeof STORAGE_NAMES / sizeof STORAGE_NAMES[0]))

typedef struct pv {
    uint8_t type;
    uint8_t ordered;   /* dict: made by OrderedDict() */
    int16_t sub;       /* global: G_*; global G_STORAGE and storage: index in STORAGE_NAMES */
    int32_t n, cap;    /* tuple: items; dict: pairs (items holds 2 n) */
    int32_t ref;       /* tensor: its shape tuple; dict: the `_metadata` value BUILD set, or -1 */
    int64_t i;         /* int / bool; storage: numel; tensor: its storage value */
    const char *s;     /* str / storage key: bytes inside the pickle (not NUL-terminated) */
    uint32_t slen;
    int32_t *items;    /* owned */
} pv;

typedef struct pvm {
    const unsigned char *p;
    size_t len, pos, op_at;
    pv *v;
    int32_t nv, cap_v;
    int32_t *stack, sp, cap_s;
    int32_t *marks, nm, cap_m;
    int32_t *memo;
    uint32_t nmemo, cap_memo;
    const char *path;
    cgnn_err *err;
} pvm;

static int pvm_fail(pvm *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int pvm_fail(pvm *m, const char *fmt, ...) {
    char what[640];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return err_set(m->err, CGNN_ERR_INPUT, "%s: data.pkl: byte %zu: %s", m->path, m->op_at, what);
}

static void grow_i32(int32_t **a, int32_t *cap, int64_t need) {
    if (need <= *cap) return;
    int64_t c = *cap ? *cap : 16;
    while (c < need) c *= 2;
    *a = (int32_t *)cgnn_realloc(*a, (size_t)c * sizeof(int32_t));
    *cap = (int32_t)c;
}

/* A new value of the given type; -1 past the object budget. */
static int32_t pv_new(pvm *m, int type) {
    if (m->nv >= TS_MAX_VALUES) return pvm_fail(m, "more than %d objects", TS_MAX_VALUES);
    if (m->nv == m->cap_v) {
        m->cap_v = m->cap_v ? 2 * m->cap_v : 256;
        m->v = (pv *)cgnn_realloc(m->v, (size_t)m->cap_v * sizeof(pv));
    }
    pv *x = &m->v[m->nv];
    memset(x, 0, sizeof *x);
    x->type = (uint8_t)type;
    x->ref = -1;
    return m->nv++;
}

static int push(pvm *m, int32_t id) {
    if (id < 0) return -1;
    grow_i32(&m->stack, &m->cap_s, (int64_t)m->sp + 1);
    m->stack[m->sp++] = id;
    return 0;
}
/* The stack bottom above the innermost MARK (Python's MARK starts a new stack). */
static int32_t base(const pvm *m) { return m->nm ? m->marks[m->nm - 1] : 0; }
static int32_t pop(pvm *m) {
    if (m->sp <= base(m)) return pvm_fail(m, "stack underflow");
    return m->stack[--m->sp];
}
/* Pops the innermost MARK: the k values above it start at stack + *first. */
static int pop_mark(pvm *m, int32_t *first, int32_t *k) {
    if (m->nm == 0) return pvm_fail(m, "no MARK to pop");
    *first = m->marks[--m->nm];
    *k = m->sp - *first;
    return 0;
}

static int need(pvm *m, size_t n) {
    if (m->len - m->pos < n) return pvm_fail(m, "the pickle ends inside an opcode (truncated)");
    return 0;
}

static int utf8_valid(const unsigned char *s, size_t n) {
    for (size_t i = 0; i < n;) {
        const unsigned c = s[i];
        size_t k;
        uint32_t cp, min;
        if (c < 0x80) {
            i++;
            continue;
        } else if ((c & 0xE0) == 0xC0) k = 1, cp = c & 0x1F, min = 0x80;
        else if ((c & 0xF0) == 0xE0) k = 2, cp = c & 0x0F, min = 0x800;
        else if ((c & 0xF8) == 0xF0) k = 3, cp = c & 0x07, min = 0x10000;
        else return 0;
        if (n - i - 1 < k) return 0;
        for (size_t j = 1; j <= k; j++) {
            if ((s[i + j] & 0xC0) != 0x80) return 0;
            cp = cp << 6 | (s[i + j] & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
        i += k + 1;
    }
    return 1;
}

static int is_str(const pvm *m, int32_t id, const char *s) {
    const pv *x = &m->v[id];
    return x->type == PV_STR && x->slen == strlen(s) && memcmp(x->s, s, x->slen) == 0;
}

/* GLOBAL module\nname\n: only the allow-listed ones. */
static int op_global(pvm *m) {
    const char *line[2];
    size_t ll[2];
    for (int k = 0; k < 2; k++) {
        const unsigned char *nl = memchr(m->p + m->pos, '\n', m->len - m->pos < 256 ? m->len - m->pos : 256);
        if (!nl) return pvm_fail(m, "GLOBAL without a short newline-terminated name");
        line[k] = (const char *)m->p + m->pos;
        ll[k] = (size_t)(nl - (m->p + m->pos));
        for (size_t j = 0; j < ll[k]; j++)
            if (line[k][j] <= ' ' || line[k][j] > '~') return pvm_fail(m, "GLOBAL name is not printable ASCII");
        m->pos += ll[k] + 1;
    }
#define IS(k, s) (ll[k] == strlen(s) && memcmp(line[k], s, ll[k]) == 0)
    int g = -1, sub = 0;
    if (IS(0, "collections") && IS(1, "OrderedDict")) g = G_ORDERED_DICT;
    else if (IS(0, "torch._utils") && IS(1, "_rebuild_tensor_v2")) g = G_REBUILD_V2;
    else if (IS(0, "torch"))
        for (int k = 0; k < N_STORAGE_NAMES && g < 0; k++)
            if (IS(1, STORAGE_NAMES[k])) g = G_STORAGE, sub = k;
#undef IS
    if (g < 0)
        return pvm_fail(m, "global '%.*s.%.*s' is not allowed: only collections.OrderedDict, "
                           "torch._utils._rebuild_tensor_v2 and torch.*Storage (what torch.save writes for a "
                           "state_dict) are",
                        (int)ll[0], line[0], (int)ll[1], line[1]);
    const int32_t id = pv_new(m, PV_GLOBAL);
    if (id < 0) return -1;
    m->v[id].sub = (int16_t)(g == G_STORAGE ? sub : g);
    m->v[id].i = g;
    return push(m, id);
}

/* The key string just below the value being built (for messages), or "<root>" (a bare tensor). */
static void near_key(const pvm *m, char *out, size_t cap) {
    snprintf(out, cap, "<root>");
    if (m->sp > 0 && m->v[m->stack[m->sp - 1]].type == PV_STR) {
        const pv *k = &m->v[m->stack[m->sp - 1]];
        snprintf(out, cap, "%.*s", (int)(k->slen < 200 ? k->slen : 200), k->s);
    }
}

/* BINPERSID: ('storage', torch.<X>Storage, key, location, numel) -> a storage value. */
static int op_persid(pvm *m) {
    const int32_t t = pop(m);
    if (t < 0) return -1;
    const pv *x = &m->v[t];
    if (x->type != PV_TUPLE || x->n != 5 || !is_str(m, x->items[0], "storage"))
        return pvm_fail(m, "persistent id is not ('storage', type, key, location, numel)");
    const pv *type = &m->v[x->items[1]], *key = &m->v[x->items[2]], *loc = &m->v[x->items[3]],
             *numel = &m->v[x->items[4]];
    if (type->type != PV_GLOBAL || type->i != G_STORAGE) return pvm_fail(m, "persistent id: not a storage type");
    if (key->type != PV_STR || key->slen < 1 || key->slen > 64)
        return pvm_fail(m, "persistent id: the storage key is not a short string");
    for (uint32_t k = 0; k < key->slen; k++) {
        const char c = key->s[k];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '-'))
            return pvm_fail(m, "persistent id: storage key '%.*s' has characters other than [A-Za-z0-9_-]",
                            (int)key->slen, key->s);
    }
    if (loc->type != PV_STR || loc->slen > 64) return pvm_fail(m, "persistent id: the location is not a string");
    if (numel->type != PV_INT || numel->i < 0 || numel->i > INT64_MAX / 16)
        return pvm_fail(m, "persistent id: storage size is not a non-negative integer");
    const int32_t id = pv_new(m, PV_STORAGE);
    if (id < 0) return -1;
    pv *s = &m->v[id];
    x = &m->v[t]; /* pv_new may have moved the array */
    s->sub = m->v[x->items[1]].sub;
    s->i = m->v[x->items[4]].i;
    s->s = m->v[x->items[2]].s;
    s->slen = m->v[x->items[2]].slen;
    return push(m, id);
}

/* REDUCE: OrderedDict() or _rebuild_tensor_v2(storage, 0, shape, stride, requires_grad, hooks). */
static int op_reduce(pvm *m) {
    const int32_t args = pop(m), fn = pop(m);
    if (args < 0 || fn < 0) return -1;
    if (m->v[fn].type != PV_GLOBAL || m->v[args].type != PV_TUPLE)
        return pvm_fail(m, "REDUCE of something other than an allowed global with a tuple");
    if (m->v[fn].i == G_ORDERED_DICT) {
        if (m->v[args].n != 0) return pvm_fail(m, "OrderedDict called with arguments");
        const int32_t id = pv_new(m, PV_DICT);
        if (id < 0) return -1;
        m->v[id].ordered = 1;
        return push(m, id);
    }
    if (m->v[fn].i != G_REBUILD_V2) return pvm_fail(m, "a storage type is called");
    char key[208];
    near_key(m, key, sizeof key);
    const pv *a = &m->v[args];
    if (a->n != 6)
        return pvm_fail(m, "tensor '%s': _rebuild_tensor_v2 with %d arguments (torch.save writes 6 for a plain "
                           "tensor)", key, a->n);
    const pv *st = &m->v[a->items[0]], *off = &m->v[a->items[1]], *shape = &m->v[a->items[2]],
             *stride = &m->v[a->items[3]], *rg = &m->v[a->items[4]], *hooks = &m->v[a->items[5]];
    if (st->type != PV_STORAGE) return pvm_fail(m, "tensor '%s': the first argument is not a storage", key);
    if (off->type != PV_INT || off->i != 0)
        return pvm_fail(m, "tensor '%s': a view at a storage offset (only whole-storage tensors are supported)", key);
    if (shape->type != PV_TUPLE || stride->type != PV_TUPLE || shape->n != stride->n)
        return pvm_fail(m, "tensor '%s': shape and stride are not tuples of one length", key);
    if (shape->n > TORCH_SAVE_MAX_DIMS)
        return pvm_fail(m, "tensor '%s': %d dimensions, at most %d are supported", key, shape->n, TORCH_SAVE_MAX_DIMS);
    if (rg->type != PV_BOOL || hooks->type != PV_DICT || hooks->n != 0)
        return pvm_fail(m, "tensor '%s': requires_grad is not a bool or backward hooks are not empty", key);
    int64_t numel = 1;
    for (int d = shape->n - 1; d >= 0; d--) {
        const pv *s = &m->v[shape->items[d]], *t = &m->v[stride->items[d]];
        if (s->type != PV_INT || s->i < 0 || t->type != PV_INT)
            return pvm_fail(m, "tensor '%s': shape[%d] or stride[%d] is not a non-negative integer", key, d, d);
        if (ck_mul_i64(numel, s->i, &numel) != 0 || numel > INT64_MAX / 16)
            return pvm_fail(m, "tensor '%s': shape too large", key);
    }
    /* PyTorch's is_contiguous: C-order strides, except for dims of size 1; any for no elements */
    for (int64_t d = shape->n - 1, want = 1; numel > 0 && d >= 0; d--) {
        const int64_t size = m->v[shape->items[d]].i;
        if (size > 1 && m->v[stride->items[d]].i != want)
            return pvm_fail(m, "tensor '%s': strides are not C order (a transposed view?)", key);
        want *= size;
    }
    if (numel != st->i)
        return pvm_fail(m, "tensor '%s': %lld elements in a storage of %lld (views are not supported)", key,
                        (long long)numel, (long long)st->i);
    const int32_t st_id = a->items[0], shape_id = a->items[2];
    const int32_t id = pv_new(m, PV_TENSOR);
    if (id < 0) return -1;
    m->v[id].i = st_id;
    m->v[id].ref = shape_id;
    return push(m, id);
}

static int dict_add(pvm *m, int32_t d, int32_t k, int32_t v) {
    pv *x = &m->v[d];
    if (x->n >= (INT32_MAX - 2) / 2) return pvm_fail(m, "dict too large");
    grow_i32(&x->items, &x->cap, 2 * (int64_t)x->n + 2);
    x->items[2 * x->n] = k;
    x->items[2 * x->n + 1] = v;
    x->n++;
    return 0;
}

static int new_tuple(pvm *m, int32_t first, int32_t k) {
    const int32_t id = pv_new(m, PV_TUPLE);
    if (id < 0) return -1;
    pv *x = &m->v[id];
    x->n = k;
    x->items = (int32_t *)cgnn_malloc((size_t)(k ? k : 1) * sizeof(int32_t));
    if (k) memcpy(x->items, m->stack + first, (size_t)k * sizeof(int32_t));
    m->sp = first;
    return push(m, id);
}

static int memo_put(pvm *m, uint32_t idx) {
    if (m->sp <= base(m)) return pvm_fail(m, "memo put with an empty stack");
    if (idx > m->nmemo) return pvm_fail(m, "memo index %u skips ahead of %u", idx, m->nmemo);
    if (idx == m->nmemo) {
        if (m->nmemo == m->cap_memo) {
            m->cap_memo = m->cap_memo ? 2 * m->cap_memo : 256;
            m->memo = (int32_t *)cgnn_realloc(m->memo, (size_t)m->cap_memo * sizeof(int32_t));
        }
        m->nmemo++;
    }
    m->memo[idx] = m->stack[m->sp - 1];
    return 0;
}

static int memo_get(pvm *m, uint32_t idx) {
    if (idx >= m->nmemo) return pvm_fail(m, "memo %u is not defined", idx);
    return push(m, m->memo[idx]);
}

/* Runs the pickle; on success *root is the value STOP returned. */
static int pvm_run(pvm *m, int32_t *root) {
    for (;;) {
        if (m->pos >= m->len) return pvm_fail(m, "the pickle ends without STOP (truncated)");
        m->op_at = m->pos;
        const unsigned op = m->p[m->pos++];
        int32_t id, a, b, first = 0, k = 0;
        switch (op) {
        case 0x80: /* PROTO */
            if (need(m, 1)) return -1;
            if (m->op_at != 0 || m->p[m->pos] != 2)
                return pvm_fail(m, "pickle protocol %u (torch.save writes protocol 2)", m->p[m->pos]);
            m->pos++;
            break;
        case '.': /* STOP */
            if (m->nm != 0 || m->sp != 1) return pvm_fail(m, "STOP with %d values and %d marks", m->sp, m->nm);
            *root = m->stack[0];
            return 0;
        case 'c':
            if (op_global(m)) return -1;
            break;
        case 'q':
            if (need(m, 1) || memo_put(m, m->p[m->pos++])) return -1;
            break;
        case 'r':
            if (need(m, 4)) return -1;
            m->pos += 4;
            if (memo_put(m, le32(m->p + m->pos - 4))) return -1;
            break;
        case 'h':
            if (need(m, 1) || memo_get(m, m->p[m->pos++])) return -1;
            break;
        case 'j':
            if (need(m, 4)) return -1;
            m->pos += 4;
            if (memo_get(m, le32(m->p + m->pos - 4))) return -1;
            break;
        case '(': /* MARK */
            if (m->nm >= TS_MAX_VALUES) return pvm_fail(m, "too many marks");
            grow_i32(&m->marks, &m->cap_m, (int64_t)m->nm + 1);
            m->marks[m->nm++] = m->sp;
            break;
        case ')':
            if (new_tuple(m, m->sp, 0)) return -1;
            break;
        case 0x85: case 0x86: case 0x87: /* TUPLE1..3 */
            k = (int32_t)(op - 0x84);
            if (m->sp - base(m) < k) return pvm_fail(m, "stack underflow");
            if (new_tuple(m, m->sp - k, k)) return -1;
            break;
        case 't':
            if (pop_mark(m, &first, &k) || new_tuple(m, first, k)) return -1;
            break;
        case '}':
            if (push(m, pv_new(m, PV_DICT))) return -1;
            break;
        case 's': /* SETITEM */
            if ((b = pop(m)) < 0 || (a = pop(m)) < 0) return -1;
            if (m->sp <= base(m) || m->v[id = m->stack[m->sp - 1]].type != PV_DICT)
                return pvm_fail(m, "SETITEM on something other than a dict");
            if (dict_add(m, id, a, b)) return -1;
            break;
        case 'u': /* SETITEMS */
            if (pop_mark(m, &first, &k)) return -1;
            if (k % 2 != 0) return pvm_fail(m, "SETITEMS with an odd number of values");
            if (first <= base(m) || m->v[id = m->stack[first - 1]].type != PV_DICT)
                return pvm_fail(m, "SETITEMS on something other than a dict");
            for (int32_t q = 0; q < k; q += 2)
                if (dict_add(m, id, m->stack[first + q], m->stack[first + q + 1])) return -1;
            m->sp = first;
            break;
        case 'X': { /* BINUNICODE */
            if (need(m, 4)) return -1;
            const uint32_t n = le32(m->p + m->pos);
            m->pos += 4;
            if (need(m, n)) return -1;
            if (!utf8_valid(m->p + m->pos, n)) return pvm_fail(m, "string is not valid UTF-8");
            if ((id = pv_new(m, PV_STR)) < 0) return -1;
            m->v[id].s = (const char *)m->p + m->pos;
            m->v[id].slen = n;
            m->pos += n;
            if (push(m, id)) return -1;
            break;
        }
        case 'K': case 'M': case 'J': case 0x8a: { /* BININT1, BININT2, BININT, LONG1 */
            int64_t v = 0;
            if (op == 'K') {
                if (need(m, 1)) return -1;
                v = m->p[m->pos++];
            } else if (op == 'M') {
                if (need(m, 2)) return -1;
                v = le16(m->p + m->pos);
                m->pos += 2;
            } else if (op == 'J') {
                if (need(m, 4)) return -1;
                v = (int32_t)le32(m->p + m->pos);
                m->pos += 4;
            } else {
                if (need(m, 1)) return -1;
                const unsigned n = m->p[m->pos++];
                if (n > 8) return pvm_fail(m, "LONG1 of %u bytes: integer out of range", n);
                if (need(m, n)) return -1;
                uint64_t u = 0;
                for (unsigned q = 0; q < n; q++) u |= (uint64_t)m->p[m->pos + q] << (8 * q);
                if (n > 0 && n < 8 && (m->p[m->pos + n - 1] & 0x80)) u |= ~(uint64_t)0 << (8 * n); /* sign */
                v = (int64_t)u;
                m->pos += n;
            }
            if ((id = pv_new(m, PV_INT)) < 0) return -1;
            m->v[id].i = v;
            if (push(m, id)) return -1;
            break;
        }
        case 0x88: case 0x89: /* NEWTRUE, NEWFALSE */
            if ((id = pv_new(m, PV_BOOL)) < 0) return -1;
            m->v[id].i = op == 0x88;
            if (push(m, id)) return -1;
            break;
        case 'Q':
            if (op_persid(m)) return -1;
            break;
        case 'R':
            if (op_reduce(m)) return -1;
            break;
        case 'b': /* BUILD: OrderedDict.__dict__.update({'_metadata': ...}) */
            if ((a = pop(m)) < 0) return -1;
            if (m->sp <= base(m)) return pvm_fail(m, "stack underflow");
            id = m->stack[m->sp - 1];
            if (m->v[id].type != PV_DICT || !m->v[id].ordered || m->v[a].type != PV_DICT)
                return pvm_fail(m, "BUILD on something other than an OrderedDict");
            for (int32_t q = 0; q < m->v[a].n; q++) {
                const int32_t kk = m->v[a].items[2 * q], vv = m->v[a].items[2 * q + 1];
                if (!is_str(m, kk, "_metadata") || m->v[vv].type != PV_DICT)
                    return pvm_fail(m, "BUILD sets an attribute other than _metadata (a dict)");
                if (m->v[id].ref >= 0) return pvm_fail(m, "_metadata is set twice");
                m->v[id].ref = vv;
            }
            break;
        default:
            return pvm_fail(m, "opcode 0x%02x is not one torch.save writes for a state_dict", op);
        }
    }
}

static void pvm_free(pvm *m) {
    for (int32_t i = 0; i < m->nv; i++) free(m->v[i].items);
    free(m->v);
    free(m->stack);
    free(m->marks);
    free(m->memo);
}

static char *dup_str(const pv *x) {
    char *s = (char *)cgnn_malloc(x->slen + 1u);
    memcpy(s, x->s, x->slen);
    s[x->slen] = '\0';
    return s;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The root of a successful run into f: keys, shapes, storages (their records in z), metadata. */
static int take_state_dict(ts_file *f, pvm *m, int32_t root, const zdir *z, cgnn_err *err) {
    const char *path = f->path;
    const pv *d = &m->v[root];
    if (d->type != PV_DICT) return ZFAIL("%s: data.pkl does not hold a dict (not a state_dict)", path);
    if (d->n > TORCH_SAVE_MAX_TENSORS)
        return ZFAIL("%s: data.pkl: %d tensors, over the limit of %d", path, d->n, TORCH_SAVE_MAX_TENSORS);
    const size_t nt = (size_t)(d->n ? d->n : 1);
    f->names = (char **)cgnn_calloc(nt, sizeof(char *));
    f->ndims = (int *)cgnn_calloc(nt, sizeof(int));
    f->shapes = (int64_t(*)[TORCH_SAVE_MAX_DIMS])cgnn_calloc(nt, sizeof *f->shapes);
    f->data_offsets = (int64_t *)cgnn_calloc(nt, sizeof(int64_t));
    f->crcs = (uint32_t *)cgnn_calloc(nt, sizeof(uint32_t));
    for (int32_t i = 0; i < d->n; i++) {
        const pv *k = &m->v[d->items[2 * i]], *t = &m->v[d->items[2 * i + 1]];
        if (k->type != PV_STR || k->slen < 1 || k->slen > TS_MAX_NAME || memchr(k->s, 0, k->slen))
            return ZFAIL("%s: data.pkl: key %d is not a non-empty string", path, i);
        f->names[i] = dup_str(k);
        f->n = i + 1;
        if (t->type != PV_TENSOR) return ZFAIL("%s: data.pkl: '%s' is not a tensor", path, f->names[i]);
        const pv *st = &m->v[t->i], *shape = &m->v[t->ref];
        if (st->sub != 0)
            return ZFAIL("%s: tensor '%s' is a torch.%s: only float32 tensors (torch.FloatStorage) are supported",
                         path, f->names[i], STORAGE_NAMES[st->sub]);
        f->ndims[i] = shape->n;
        for (int q = 0; q < TORCH_SAVE_MAX_DIMS; q++) f->shapes[i][q] = q < shape->n ? m->v[shape->items[q]].i : 1;
        char rest[96];
        snprintf(rest, sizeof rest, "data/%.*s", (int)st->slen, st->s);
        const int r = zdir_find(z, rest);
        if (r < 0) return ZFAIL("%s: tensor '%s': its storage record '%s%s' is missing", path, f->names[i], z->archive, rest);
        if (z->r[r].size != st->i * 4)
            return ZFAIL("%s: tensor '%s': storage record '%s' is %lld bytes, %lld float32 need %lld", path,
                         f->names[i], z->r[r].name, (long long)z->r[r].size, (long long)st->i,
                         (long long)(st->i * 4));
        f->data_offsets[i] = z->r[r].data;
        f->crcs[i] = z->r[r].crc;
    }
    char **sorted = (char **)cgnn_malloc(nt * sizeof(char *));
    if (f->n) memcpy(sorted, f->names, (size_t)f->n * sizeof(char *));
    qsort(sorted, (size_t)f->n, sizeof(char *), cmp_str);
    int rc = 0;
    for (int i = 1; i < f->n && rc == 0; i++)
        if (strcmp(sorted[i - 1], sorted[i]) == 0) rc = ZFAIL("%s: data.pkl: key '%s' appears twice", path, sorted[i]);
    free(sorted);
    if (rc || d->ref < 0) return rc;
    /* _metadata: {prefix: {name: str | int | bool}}; the TORCH_SAVE_META_KEY entry's strings are ours */
    const pv *md = &m->v[d->ref];
    for (int32_t e = 0; e < md->n; e++) {
        const pv *k = &m->v[md->items[2 * e]], *v = &m->v[md->items[2 * e + 1]];
        if (k->type != PV_STR || v->type != PV_DICT)
            return ZFAIL("%s: data.pkl: _metadata entry %d is not a string -> dict", path, e);
        const int ours = k->slen == strlen(TORCH_SAVE_META_KEY) && memcmp(k->s, TORCH_SAVE_META_KEY, k->slen) == 0;
        if (ours && f->meta) return ZFAIL("%s: data.pkl: _metadata['%s'] appears twice", path, TORCH_SAVE_META_KEY);
        if (ours && v->n > TS_MAX_META)
            return ZFAIL("%s: data.pkl: _metadata['%s'] has %d entries, over %d", path, TORCH_SAVE_META_KEY, v->n,
                         TS_MAX_META);
        if (ours) f->meta = (char **)cgnn_calloc(2 * (size_t)v->n + 1, sizeof(char *));
        for (int32_t q = 0; q < v->n; q++) {
            const pv *mk = &m->v[v->items[2 * q]], *mv = &m->v[v->items[2 * q + 1]];
            if (mk->type != PV_STR || (mv->type != PV_STR && mv->type != PV_INT && mv->type != PV_BOOL))
                return ZFAIL("%s: data.pkl: _metadata entry %d: values must be strings or integers", path, e);
            if (!ours) continue;
            if (mv->type != PV_STR || memchr(mk->s, 0, mk->slen) || memchr(mv->s, 0, mv->slen))
                return ZFAIL("%s: data.pkl: _metadata['%s'] entry %d is not a string -> string", path,
                             TORCH_SAVE_META_KEY, q);
            f->meta[2 * q] = dup_str(mk);
            f->meta[2 * q + 1] = dup_str(mv);
            f->n_meta = q + 1;
            for (int32_t o = 0; o < q; o++)
                if (strcmp(f->meta[2 * o], f->meta[2 * q]) == 0)
                    return ZFAIL("%s: data.pkl: _metadata['%s'] key '%s' appears twice", path, TORCH_SAVE_META_KEY,
                                 f->meta[2 * q]);
        }
    }
    return 0;
}

/* An archive opened up to its pickle's root value: the open file, its zip directory and the
 * pickle machine whose values root and its parts live in (they point into pkl). */
typedef struct ts_reader {
    int fd;
    int64_t size;          /* bytes, from fstat */
    zdir z;
    unsigned char *pkl;    /* data.pkl, owned */
    pvm m;
    int32_t root;          /* the value STOP returned */
} ts_reader;

static void ts_reader_close(ts_reader *r) {
    pvm_free(&r->m);
    free(r->pkl);
    if (r->z.r) zdir_free(&r->z);
    if (r->fd >= 0) close(r->fd);
    memset(r, 0, sizeof *r);
    r->fd = -1;
}

/* Opens path, reads and checks its zip directory, version and byteorder records and runs
 * data.pkl. Returns 0, or -1 with *err (r is then closed). */
static int ts_reader_open(ts_reader *r, const char *path, cgnn_err *err) {
    memset(r, 0, sizeof *r);
    r->root = -1;
    struct stat st;
    r->fd = file_open_regular(path, &st, err);
    if (r->fd < 0) return -1;
    r->size = (int64_t)st.st_size;
    unsigned char *small = NULL;
    int rc = zdir_read(&r->z, r->fd, path, r->size, err);
    if (rc) goto done;
    int k = zdir_find(&r->z, "version");
    if (k < 0) k = zdir_find(&r->z, ".data/version");
    if (k < 0) {
        rc = ZFAIL("%s: no '%sversion' record (not a torch.save archive)", path, r->z.archive);
        goto done;
    }
    if (!(small = read_record(r->fd, path, &r->z, k, 16, err))) {
        rc = -1;
        goto done;
    }
    char *endp = NULL;
    errno = 0;
    long ver = strtol((const char *)small, &endp, 10);
    if (errno || endp == (char *)small || (*endp != '\0' && strcmp(endp, "\n") != 0) || ver < 1 || ver > 100) {
        rc = ZFAIL("%s: record '%s': '%s' is not a format version", path, r->z.r[k].name, (const char *)small);
        goto done;
    }
    free(small);
    small = NULL;
    if ((k = zdir_find(&r->z, "byteorder")) >= 0) {
        if (!(small = read_record(r->fd, path, &r->z, k, 16, err))) {
            rc = -1;
            goto done;
        }
        if (strcmp((const char *)small, "little") != 0) {
            rc = ZFAIL("%s: record '%s' is '%s': only little-endian data is supported", path, r->z.r[k].name,
                       (const char *)small);
            goto done;
        }
    }
    if ((k = zdir_find(&r->z, "data.pkl")) < 0) {
        rc = ZFAIL("%s: no '%sdata.pkl' record (not a torch.save archive)", path, r->z.archive);
        goto done;
    }
    if (!(r->pkl = read_record(r->fd, path, &r->z, k, TS_MAX_PICKLE, err))) {
        rc = -1;
        goto done;
    }
    r->m.p = r->pkl;
    r->m.len = (size_t)r->z.r[k].size;
    r->m.path = path;
    r->m.err = err;
    rc = pvm_run(&r->m, &r->root);
done:
    free(small);
    if (rc) ts_reader_close(r);
    return rc;
}

int torch_save_read_header(ts_file *f, const char *path, cgnn_err *err) {
    memset(f, 0, sizeof *f);
    snprintf(f->path, sizeof f->path, "%s", path);
    ts_reader r;
    int rc = ts_reader_open(&r, path, err);
    if (rc) return rc;
    f->file_size = r.size;
    rc = take_state_dict(f, &r.m, r.root, &r.z, err);
    ts_reader_close(&r);
    if (rc) {
        torch_save_free(f);
        snprintf(f->path, sizeof f->path, "%s", path);
    }
    return rc;
}

/* Storage type (index in STORAGE_NAMES) -> the npy dtype cgnn holds it as, its element size on
 * disk, and whether it is converted on reading (0: kept as is; 1: int16 -> int32; 2: bfloat16 ->
 * float32; 3: bool -> uint8, checked to be 0 or 1). dtype -1: refused. */
static const struct {
    int dtype;
    int size;
    int convert;
    const char *torch_name;
} STORAGE_DTYPES[] = {
    {NPY_DTYPE_FLOAT32, 4, 0, "float32"}, {NPY_DTYPE_FLOAT64, 8, 0, "float64"}, {NPY_DTYPE_FLOAT16, 2, 0, "float16"},
    {NPY_DTYPE_FLOAT32, 2, 2, "bfloat16"}, {NPY_DTYPE_INT64, 8, 0, "int64"},    {NPY_DTYPE_INT32, 4, 0, "int32"},
    {NPY_DTYPE_INT32, 2, 1, "int16"},      {NPY_DTYPE_INT8, 1, 0, "int8"},      {NPY_DTYPE_UINT8, 1, 0, "uint8"},
    {NPY_DTYPE_UINT8, 1, 3, "bool"},       {-1, 8, 0, "complex64"},             {-1, 16, 0, "complex128"},
};
_Static_assert(sizeof STORAGE_DTYPES / sizeof STORAGE_DTYPES[0] == N_STORAGE_NAMES, "storage dtypes");

int torch_save_read_npy(npy_array *a, const char *path, cgnn_err *err) {
    memset(a, 0, sizeof *a);
    snprintf(a->path, sizeof a->path, "%s", path);
    ts_reader r;
    if (ts_reader_open(&r, path, err) != 0) return -1;
    int rc = 0;
    unsigned char *raw = NULL;
    const pv *t = &r.m.v[r.root];
    if (t->type != PV_TENSOR) {
        rc = ZFAIL("%s: data.pkl holds a %s, not a tensor (GraphBolt's format: torch is one tensor saved with "
                   "torch.save(tensor, path))",
                   path, t->type == PV_DICT ? "dict (a state_dict?)" : "value other than a tensor");
        goto done;
    }
    const pv *st = &r.m.v[t->i], *shape = &r.m.v[t->ref];
    const int sub = st->sub;
    if (STORAGE_DTYPES[sub].dtype < 0) {
        rc = ZFAIL("%s: a torch.%s tensor: dtype %s is not supported (float32, float64, float16, bfloat16, int64, "
                   "int32, int16, int8, uint8 and bool are)",
                   path, STORAGE_NAMES[sub], STORAGE_DTYPES[sub].torch_name);
        goto done;
    }
    if (shape->n > NPY_MAX_DIMS) {
        rc = ZFAIL("%s: a tensor of %d dims; at most %d are supported", path, shape->n, NPY_MAX_DIMS);
        goto done;
    }
    a->dtype = (npy_dtype)STORAGE_DTYPES[sub].dtype;
    a->ndim = shape->n;
    for (int d = 0; d < NPY_MAX_DIMS; d++) a->shape[d] = d < shape->n ? r.m.v[shape->items[d]].i : 1;
    a->count = st->i; /* op_reduce checked: the product of the shape */
    char rest[96];
    snprintf(rest, sizeof rest, "data/%.*s", (int)st->slen, st->s);
    const int k = zdir_find(&r.z, rest);
    const int64_t esize = STORAGE_DTYPES[sub].size;
    if (k < 0) {
        rc = ZFAIL("%s: the tensor's storage record '%s%s' is missing", path, r.z.archive, rest);
        goto done;
    }
    if (r.z.r[k].size != a->count * esize) {
        rc = ZFAIL("%s: storage record '%s' is %lld bytes, %lld %s elements need %lld", path, r.z.r[k].name,
                   (long long)r.z.r[k].size, (long long)a->count, STORAGE_DTYPES[sub].torch_name,
                   (long long)(a->count * esize));
        goto done;
    }
    if (!(raw = read_record(r.fd, path, &r.z, k, r.z.r[k].size, err))) {
        rc = -1;
        goto done;
    }
    const int64_t n = a->count;
    switch (STORAGE_DTYPES[sub].convert) {
    case 0: /* as is: the record's buffer becomes the array's */
        a->owned = raw;
        raw = NULL;
        break;
    case 1: { /* int16 -> int32 */
        int32_t *o = (int32_t *)cgnn_malloc((size_t)(n ? n : 1) * sizeof *o);
        for (int64_t i = 0; i < n; i++) o[i] = (int16_t)le16(raw + 2 * i);
        a->owned = o;
        break;
    }
    case 2: { /* bfloat16 -> float32: the high half of a float32's bits */
        float *o = (float *)cgnn_malloc((size_t)(n ? n : 1) * sizeof *o);
        for (int64_t i = 0; i < n; i++) {
            const uint32_t bits = le16(raw + 2 * i) << 16;
            memcpy(&o[i], &bits, sizeof bits);
        }
        a->owned = o;
        break;
    }
    default: /* bool -> uint8 */
        for (int64_t i = 0; i < n && rc == 0; i++)
            if (raw[i] > 1)
                rc = ZFAIL("%s: element %lld of a bool tensor is byte %u, not 0 or 1", path, (long long)i, raw[i]);
        a->owned = raw;
        raw = NULL;
        break;
    }
    a->data = a->owned;
done:
    free(raw);
    ts_reader_close(&r);
    if (rc) {
        npy_close(a);
        memset(a, 0, sizeof *a);
        snprintf(a->path, sizeof a->path, "%s", path);
    }
    return rc;
}

int64_t torch_save_numel(const ts_file *f, int i) {
    CGNN_CHECK(f && i >= 0 && i < f->n);
    int64_t k = 1;
    for (int d = 0; d < f->ndims[i]; d++) k *= f->shapes[i][d];
    return k;
}

int torch_save_read_tensor(const ts_file *f, int i, float *dst, cgnn_err *err) {
    const int64_t numel = torch_save_numel(f, i);
    CGNN_CHECK(numel == 0 || dst);
    struct stat st;
    int fd = file_open_regular(f->path, &st, err);
    if (fd < 0) return -1;
    int rc = 0;
    const size_t bytes = (size_t)numel * sizeof(float);
    if ((int64_t)st.st_size != f->file_size)
        rc = ZFAIL("%s: tensor '%s': the file changed since its header was read", f->path, f->names[i]);
    else if (bytes && read_at(fd, dst, bytes, f->data_offsets[i]) != 0)
        rc = ZFAIL("%s: tensor '%s': read failed: %s", f->path, f->names[i], strerror(errno));
    else if (crc_of(dst, bytes) != f->crcs[i])
        rc = ZFAIL("%s: tensor '%s': CRC-32 mismatch (the file is corrupt)", f->path, f->names[i]);
    close(fd);
    return rc;
}

int torch_save_find(const ts_file *f, const char *name) {
    for (int i = 0; i < f->n; i++)
        if (strcmp(f->names[i], name) == 0) return i;
    return -1;
}

const char *torch_save_meta(const ts_file *f, const char *key) {
    for (int i = 0; i < f->n_meta; i++)
        if (f->meta[2 * i] && strcmp(f->meta[2 * i], key) == 0) return f->meta[2 * i + 1];
    return NULL;
}

void torch_save_free(ts_file *f) {
    if (!f) return;
    for (int i = 0; f->names && i < f->n; i++) free(f->names[i]);
    for (int i = 0; f->meta && i < 2 * f->n_meta; i++) free(f->meta[i]);
    free(f->names);
    free(f->ndims);
    free(f->shapes);
    free(f->data_offsets);
    free(f->crcs);
    free(f->meta);
    memset(f, 0, sizeof *f);
}
