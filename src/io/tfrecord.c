/* tfrecord.c — TFRecord framing (masked CRC-32C) and tf.Example wire-format decoding; see
 * tfrecord.h. The decoder is hand-written: protoc / protobuf-c are not dependencies of this C11
 * project, and three messages are simpler to decode (and to bound) than to generate. */
#include "io/tfrecord.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

/* ---- CRC-32C --------------------------------------------------------------------------- */

#define CRC32C_POLY 0x82f63b78u /* Castagnoli, reflected */

uint32_t tfrecord_crc32c_ref(uint32_t crc, const void *buf, size_t n) {
    const uint8_t *p = buf;
    crc = ~crc;
    for (size_t i = 0; i < n; i++) {
        crc ^= p[i];
        for (int k = 0; k < 8; k++) crc = (crc & 1) ? (crc >> 1) ^ CRC32C_POLY : crc >> 1;
    }
    return ~crc;
}

/* table[k][b]: the CRC of byte b followed by k zero bytes (slicing-by-8). Built once; the build
 * is idempotent, so two threads racing on it write the same values. */
static uint32_t crc_table[8][256];
static volatile int crc_table_ready;

static void crc_table_build(void) {
    for (uint32_t b = 0; b < 256; b++) {
        uint32_t c = b;
        for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ CRC32C_POLY : c >> 1;
        crc_table[0][b] = c;
    }
    for (uint32_t b = 0; b < 256; b++)
        for (int k = 1; k < 8; k++) crc_table[k][b] = (crc_table[k - 1][b] >> 8) ^ crc_table[0][crc_table[k - 1][b] & 0xff];
    crc_table_ready = 1;
}

uint32_t tfrecord_crc32c(uint32_t crc, const void *buf, size_t n) {
    if (!crc_table_ready) crc_table_build();
    const uint8_t *p = buf;
    crc = ~crc;
    while (n >= 8) {
        uint32_t lo = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
        lo ^= crc;
        crc = crc_table[7][lo & 0xff] ^ crc_table[6][(lo >> 8) & 0xff] ^ crc_table[5][(lo >> 16) & 0xff] ^
              crc_table[4][lo >> 24] ^ crc_table[3][p[4]] ^ crc_table[2][p[5]] ^ crc_table[1][p[6]] ^
              crc_table[0][p[7]];
        p += 8;
        n -= 8;
    }
    while (n--) crc = crc_table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return ~crc;
}

uint32_t tfrecord_mask_crc(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }

static uint32_t get_u32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put_u32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

size_t tfrecord_frame(uint8_t *out, const void *data, size_t n) {
    for (int i = 0; i < 8; i++) out[i] = (uint8_t)((uint64_t)n >> (8 * i));
    put_u32(out + 8, tfrecord_mask_crc(tfrecord_crc32c(0, out, 8)));
    if (n) memcpy(out + 12, data, n);
    put_u32(out + 12 + n, tfrecord_mask_crc(tfrecord_crc32c(0, data, n)));
    return n + 16;
}

/* ---- records --------------------------------------------------------------------------- */

static int has_suffix(const char *s, const char *suf) {
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

int tfrecord_open(tfrecord_reader *r, const char *path, cgnn_err *err) {
    memset(r, 0, sizeof *r);
    if (strlen(path) >= sizeof r->path) return err_set(err, CGNN_ERR_INPUT, "%.200s...: path too long", path);
    snprintf(r->path, sizeof r->path, "%s", path);
    struct stat st;
    if (stat(path, &st) != 0) return err_set(err, CGNN_ERR_INPUT, "%s: %s", path, strerror(errno));
    if (!S_ISREG(st.st_mode)) return err_set(err, CGNN_ERR_INPUT, "%s: not a regular file", path);
    r->gz = has_suffix(path, ".gz");
    r->file_bytes = r->gz ? -1 : (int64_t)st.st_size;
    if (r->gz) {
        gzFile g = gzopen(path, "rb");
        if (!g) return err_set(err, CGNN_ERR_INPUT, "%s: cannot open: %s", path, strerror(errno ? errno : ENOMEM));
        r->fp = g;
    } else {
        FILE *f = fopen(path, "rb");
        if (!f) return err_set(err, CGNN_ERR_INPUT, "%s: cannot open: %s", path, strerror(errno));
        r->fp = f;
    }
    return 0;
}

void tfrecord_close(tfrecord_reader *r) {
    if (!r) return;
    if (r->fp) {
        if (r->gz) gzclose((gzFile)r->fp);
        else fclose((FILE *)r->fp);
    }
    r->fp = NULL;
    free(r->buf);
    r->buf = NULL;
    r->cap = 0;
}

/* Reads up to n bytes; returns the count read (< n only at the end of the stream), or -1 with
 * *err on a read or decompression error. */
static int64_t read_some(tfrecord_reader *r, void *out, size_t n, cgnn_err *err) {
    size_t got = 0;
    while (got < n) {
        size_t want = n - got;
        if (r->gz) {
            unsigned chunk = want > (1u << 30) ? (1u << 30) : (unsigned)want;
            int k = gzread((gzFile)r->fp, (char *)out + got, chunk);
            if (k < 0) {
                int zerr = 0;
                const char *m = gzerror((gzFile)r->fp, &zerr);
                return err_set(err, CGNN_ERR_INPUT, "%s: record %lld: gzip stream: %s", r->path, (long long)r->index,
                               m ? m : "read error");
            }
            if (k == 0) {
                int zerr = 0;
                const char *m = gzerror((gzFile)r->fp, &zerr);
                if (zerr != Z_OK && zerr != Z_STREAM_END)
                    return err_set(err, CGNN_ERR_INPUT, "%s: record %lld: gzip stream: %s", r->path,
                                   (long long)r->index, m ? m : "read error");
                break;
            }
            got += (size_t)k;
        } else {
            size_t k = fread((char *)out + got, 1, want, (FILE *)r->fp);
            if (k == 0) {
                if (ferror((FILE *)r->fp))
                    return err_set(err, CGNN_ERR_INPUT, "%s: record %lld: read error: %s", r->path,
                                   (long long)r->index, strerror(errno));
                break;
            }
            got += k;
        }
    }
    r->offset += (int64_t)got;
    return (int64_t)got;
}

int tfrecord_next(tfrecord_reader *r, const uint8_t **data, size_t *len, cgnn_err *err) {
    if (!r->fp) return err_set(err, CGNN_ERR_INPUT, "%s: not open", r->path);
    const int64_t start = r->offset;
    uint8_t head[12];
    int64_t k = read_some(r, head, 12, err);
    if (k < 0) return -1;
    if (k == 0) return 0; /* a clean end between records */
    if (k < 12)
        return err_set(err, CGNN_ERR_INPUT,
                       "%s: record %lld: truncated: %lld of the 12 header bytes at offset %lld (the file ends)",
                       r->path, (long long)r->index, (long long)k, (long long)start);
    uint64_t n = 0;
    for (int i = 0; i < 8; i++) n |= (uint64_t)head[i] << (8 * i);
    const uint32_t want_len_crc = tfrecord_mask_crc(tfrecord_crc32c(0, head, 8));
    if (get_u32(head + 8) != want_len_crc)
        return err_set(err, CGNN_ERR_INPUT,
                       "%s: record %lld: length CRC mismatch at offset %lld (stored 0x%08x, computed 0x%08x): "
                       "corrupt or not a TFRecord file",
                       r->path, (long long)r->index, (long long)start, get_u32(head + 8), want_len_crc);
    if (n > TFRECORD_MAX_RECORD_BYTES)
        return err_set(err, CGNN_ERR_INPUT, "%s: record %lld: length %llu is over the %llu-byte limit", r->path,
                       (long long)r->index, (unsigned long long)n, (unsigned long long)TFRECORD_MAX_RECORD_BYTES);
    if (r->file_bytes >= 0 && n + 4 > (uint64_t)(r->file_bytes - r->offset))
        return err_set(err, CGNN_ERR_INPUT,
                       "%s: record %lld: truncated: length %llu + 4 CRC bytes, but only %lld bytes are left "
                       "after offset %lld",
                       r->path, (long long)r->index, (unsigned long long)n, (long long)(r->file_bytes - r->offset),
                       (long long)r->offset);
    /* a gzip stream's size is not known: the buffer grows as the bytes arrive (at most twice what
     * was read), so a lying length ends in "truncated", not in a huge allocation */
    const size_t need = (size_t)n + 4;
    size_t have = 0;
    while (have < need) {
        size_t step = need - have;
        const size_t chunk = have > ((size_t)1 << 20) ? have : ((size_t)1 << 20);
        if (r->gz && step > chunk) step = chunk; /* doubling: at most 2x the bytes that arrived */
        if (have + step > r->cap) {
            size_t nc = have + step;
            uint8_t *nb = realloc(r->buf, nc);
            if (!nb)
                return err_set(err, CGNN_ERR_RUNTIME, "%s: record %lld: out of memory for %zu bytes", r->path,
                               (long long)r->index, nc);
            r->buf = nb;
            r->cap = nc;
        }
        int64_t g = read_some(r, r->buf + have, step, err);
        if (g < 0) return -1;
        have += (size_t)g;
        if ((size_t)g < step)
            return err_set(err, CGNN_ERR_INPUT,
                           "%s: record %lld: truncated: length %llu + 4 CRC bytes, but the stream ends after %zu",
                           r->path, (long long)r->index, (unsigned long long)n, have);
    }
    const uint32_t want_crc = tfrecord_mask_crc(tfrecord_crc32c(0, r->buf, (size_t)n));
    if (get_u32(r->buf + n) != want_crc)
        return err_set(err, CGNN_ERR_INPUT,
                       "%s: record %lld: data CRC mismatch (stored 0x%08x, computed 0x%08x over %llu bytes at offset "
                       "%lld): corrupt",
                       r->path, (long long)r->index, get_u32(r->buf + n), want_crc, (unsigned long long)n,
                       (long long)(start + 12));
    *data = r->buf;
    *len = (size_t)n;
    r->index++;
    return 1;
}

/* ---- protobuf wire format -------------------------------------------------------------- */

typedef struct pb {
    const uint8_t *p, *end;
} pb;

/* A varint of at most 10 bytes (the 10th holding bit 63 only). 0 or -1. */
static int pb_varint(pb *b, uint64_t *out) {
    uint64_t v = 0;
    for (int i = 0; i < 10; i++) {
        if (b->p >= b->end) return -1;
        const uint8_t c = *b->p++;
        if (i == 9 && c > 1) return -1;
        v |= (uint64_t)(c & 0x7f) << (7 * i);
        if (!(c & 0x80)) {
            *out = v;
            return 0;
        }
    }
    return -1;
}

/* One field: its number, wire type, and payload (varint value, or bytes [*data, *data + *n)).
 * 1 = a field, 0 = end of the message, -1 = malformed (why says how). */
static int pb_field(pb *b, uint32_t *num, int *wt, uint64_t *v, const uint8_t **data, size_t *n, char *why,
                    size_t cap) {
    if (b->p >= b->end) return 0;
    uint64_t key;
    if (pb_varint(b, &key) != 0) return snprintf(why, cap, "malformed field key"), -1;
    *num = (uint32_t)(key >> 3);
    *wt = (int)(key & 7);
    if ((key >> 3) == 0 || (key >> 3) > 0x1fffffff) return snprintf(why, cap, "field number %llu", (unsigned long long)(key >> 3)), -1;
    const size_t left = (size_t)(b->end - b->p);
    switch (*wt) {
    case 0:
        if (pb_varint(b, v) != 0) return snprintf(why, cap, "field %u: malformed varint", *num), -1;
        return 1;
    case 1:
        if (left < 8) return snprintf(why, cap, "field %u: 8-byte value past the %zu bytes left", *num, left), -1;
        *data = b->p, *n = 8, b->p += 8;
        return 1;
    case 5:
        if (left < 4) return snprintf(why, cap, "field %u: 4-byte value past the %zu bytes left", *num, left), -1;
        *data = b->p, *n = 4, b->p += 4;
        return 1;
    case 2: {
        uint64_t len;
        if (pb_varint(b, &len) != 0) return snprintf(why, cap, "field %u: malformed length", *num), -1;
        const size_t rest = (size_t)(b->end - b->p);
        if (len > rest)
            return snprintf(why, cap, "field %u: length %llu past the %zu bytes left", *num, (unsigned long long)len,
                            rest),
                   -1;
        *data = b->p, *n = (size_t)len, b->p += len;
        return 1;
    }
    default:
        return snprintf(why, cap, "field %u: wire type %d (groups and unknown types are not tf.Example)", *num, *wt), -1;
    }
}

const char *tfex_kind_name(tfex_kind k) {
    switch (k) {
    case TFEX_BYTES: return "bytes_list";
    case TFEX_FLOAT: return "float_list";
    case TFEX_INT64: return "int64_list";
    default: return "no list";
    }
}

/* Walks a list message: counts its values (validating every one); with out_f / out_i, also
 * writes them. 0 or -1 (why). */
static int list_walk(tfex_kind kind, const uint8_t *body, size_t body_len, int64_t *count, float *out_f,
                     int64_t *out_i, char *why, size_t cap) {
    pb b = {body, body + body_len};
    int64_t c = 0;
    uint32_t num;
    int wt, rc;
    uint64_t v;
    const uint8_t *d;
    size_t n;
    while ((rc = pb_field(&b, &num, &wt, &v, &d, &n, why, cap)) == 1) {
        if (num != 1) continue; /* unknown field: skipped */
        if (kind == TFEX_BYTES) {
            if (wt != 2) return snprintf(why, cap, "bytes_list value: wire type %d, not length-delimited", wt), -1;
            c++;
        } else if (kind == TFEX_FLOAT) {
            if (wt == 5) {
                if (out_f) memcpy(&out_f[c], d, 4);
                c++;
            } else if (wt == 2) {
                if (n % 4) return snprintf(why, cap, "float_list: packed length %zu is not a multiple of 4", n), -1;
                if (out_f && n) memcpy(&out_f[c], d, n);
                c += (int64_t)(n / 4);
            } else {
                return snprintf(why, cap, "float_list value: wire type %d, not a float", wt), -1;
            }
        } else {
            if (wt == 0) {
                if (out_i) out_i[c] = (int64_t)v;
                if (out_f) out_f[c] = (float)(int64_t)v;
                c++;
            } else if (wt == 2) {
                pb q = {d, d + n};
                while (q.p < q.end) {
                    uint64_t x;
                    if (pb_varint(&q, &x) != 0) return snprintf(why, cap, "int64_list: malformed packed varint"), -1;
                    if (out_i) out_i[c] = (int64_t)x;
                    if (out_f) out_f[c] = (float)(int64_t)x;
                    c++;
                }
            } else {
                return snprintf(why, cap, "int64_list value: wire type %d, not an integer", wt), -1;
            }
        }
    }
    if (rc < 0) {
        char inner[200];
        snprintf(inner, sizeof inner, "%s", why);
        snprintf(why, cap, "%s: %s", tfex_kind_name(kind), inner);
        return -1;
    }
    *count = c;
    return 0;
}

static int parse_feature(const uint8_t *buf, size_t len, tfex_feature *f, char *why, size_t cap) {
    pb b = {buf, buf + len};
    uint32_t num;
    int wt, rc;
    uint64_t v;
    const uint8_t *d;
    size_t n;
    f->kind = TFEX_NONE, f->count = 0, f->body = NULL, f->body_len = 0;
    while ((rc = pb_field(&b, &num, &wt, &v, &d, &n, why, cap)) == 1) {
        if (num < 1 || num > 3) continue;
        if (wt != 2) return snprintf(why, cap, "%s: wire type %d, not a message", tfex_kind_name((tfex_kind)num), wt), -1;
        if (f->kind == (tfex_kind)num)
            return snprintf(why, cap, "%s given twice in one Feature", tfex_kind_name(f->kind)), -1;
        f->kind = (tfex_kind)num; /* a oneof: the last member set wins */
        f->body = d, f->body_len = n;
    }
    if (rc < 0) return -1;
    if (f->kind != TFEX_NONE) return list_walk(f->kind, f->body, f->body_len, &f->count, NULL, NULL, why, cap);
    return 0;
}

void tfex_free(tfex *ex) {
    if (!ex) return;
    free(ex->f);
    free(ex->slot);
    ex->f = NULL;
    ex->slot = NULL;
    ex->n = ex->cap = ex->nslot = 0;
}

static int name_eq(const tfex_feature *f, const uint8_t *name, size_t len) {
    return f->name_len == len && (len == 0 || memcmp(f->name, name, len) == 0);
}

static uint32_t name_hash(const uint8_t *p, size_t n) { /* FNV-1a */
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 16777619u;
    return h;
}

/* The slot of name: the one holding it, or the empty one where it goes. nslot > n always. */
static int slot_of(const tfex *ex, const uint8_t *name, size_t len) {
    uint32_t i = name_hash(name, len) & (uint32_t)(ex->nslot - 1);
    while (ex->slot[i] >= 0 && !name_eq(&ex->f[ex->slot[i]], name, len)) i = (i + 1) & (uint32_t)(ex->nslot - 1);
    return (int)i;
}

/* Sizes the index for at least `want` names (load <= 1/2) and re-inserts f[0..n). 0 or -1 (memory). */
static int index_reserve(tfex *ex, int want) {
    if (ex->nslot >= 2 * want && ex->nslot > 0) return 0;
    int ns = 16;
    while (ns < 2 * want) ns *= 2;
    int *sl = malloc((size_t)ns * sizeof *sl);
    if (!sl) return -1;
    free(ex->slot);
    ex->slot = sl;
    ex->nslot = ns;
    for (int i = 0; i < ns; i++) sl[i] = -1;
    for (int k = 0; k < ex->n; k++) sl[slot_of(ex, ex->f[k].name, ex->f[k].name_len)] = k;
    return 0;
}

int tfex_parse(tfex *ex, const uint8_t *buf, size_t len, char *why, size_t cap) {
    ex->n = 0;
    if (index_reserve(ex, 8) != 0) return snprintf(why, cap, "out of memory"), -1;
    for (int i = 0; i < ex->nslot; i++) ex->slot[i] = -1;
    pb b = {buf, buf + len};
    uint32_t num;
    int wt, rc;
    uint64_t v;
    const uint8_t *d;
    size_t n;
    while ((rc = pb_field(&b, &num, &wt, &v, &d, &n, why, cap)) == 1) {
        if (num != 1) continue; /* Example: only `features` */
        if (wt != 2) return snprintf(why, cap, "Example.features: wire type %d, not a message", wt), -1;
        pb fs = {d, d + n}; /* Features: repeated map entries (field 1) */
        uint32_t fnum;
        int fwt, frc;
        uint64_t fv;
        const uint8_t *fd;
        size_t fn;
        while ((frc = pb_field(&fs, &fnum, &fwt, &fv, &fd, &fn, why, cap)) == 1) {
            if (fnum != 1) continue;
            if (fwt != 2) return snprintf(why, cap, "Features.feature: wire type %d, not a map entry", fwt), -1;
            pb e = {fd, fd + fn};
            uint32_t enumb;
            int ewt, erc;
            uint64_t ev;
            const uint8_t *ed, *key = (const uint8_t *)"", *val = NULL;
            size_t en, key_len = 0, val_len = 0;
            while ((erc = pb_field(&e, &enumb, &ewt, &ev, &ed, &en, why, cap)) == 1) {
                if (enumb == 1) {
                    if (ewt != 2) return snprintf(why, cap, "feature map key: wire type %d, not a string", ewt), -1;
                    key = ed, key_len = en;
                } else if (enumb == 2) {
                    if (ewt != 2) return snprintf(why, cap, "feature map value: wire type %d, not a Feature", ewt), -1;
                    val = ed, val_len = en;
                }
            }
            if (erc < 0) return -1;
            tfex_feature f = {.name = key, .name_len = key_len};
            if (val && parse_feature(val, val_len, &f, why, cap) != 0) {
                char inner[300];
                snprintf(inner, sizeof inner, "%s", why);
                snprintf(why, cap, "feature '%.*s': %s", (int)(key_len > 100 ? 100 : key_len), (const char *)key, inner);
                return -1;
            }
            int sl = slot_of(ex, key, key_len);
            int at = ex->slot[sl]; /* a map key twice: the last value wins */
            if (at < 0) {
                if (ex->n == ex->cap) {
                    int nc = ex->cap ? 2 * ex->cap : 16;
                    tfex_feature *nf = realloc(ex->f, (size_t)nc * sizeof *nf);
                    if (!nf) return snprintf(why, cap, "out of memory"), -1;
                    ex->f = nf, ex->cap = nc;
                }
                at = ex->n++;
                ex->f[at] = f;
                if (index_reserve(ex, ex->n + 1) != 0) return snprintf(why, cap, "out of memory"), -1;
                ex->slot[slot_of(ex, key, key_len)] = at;
            }
            ex->f[at] = f;
        }
        if (frc < 0) return -1;
    }
    return rc < 0 ? -1 : 0;
}

const tfex_feature *tfex_find(const tfex *ex, const char *name) {
    if (ex->n == 0 || ex->nslot == 0) return NULL;
    const int at = ex->slot[slot_of(ex, (const uint8_t *)name, strlen(name))];
    return at >= 0 ? &ex->f[at] : NULL;
}

int tfex_get_floats(const tfex_feature *f, float *out) {
    char why[200];
    int64_t c;
    if (f->kind == TFEX_FLOAT || f->kind == TFEX_INT64) /* integers converted as they are decoded */
        return list_walk(f->kind, f->body, f->body_len, &c, out, NULL, why, sizeof why);
    return f->kind == TFEX_NONE && f->count == 0 ? 0 : -1;
}

int tfex_get_int64s(const tfex_feature *f, int64_t *out) {
    char why[200];
    int64_t c;
    if (f->kind != TFEX_INT64) return f->kind == TFEX_NONE && f->count == 0 ? 0 : -1;
    return list_walk(TFEX_INT64, f->body, f->body_len, &c, NULL, out, why, sizeof why);
}
