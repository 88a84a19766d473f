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
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "safetensors data is little-endian");

/* The reference implementation refuses headers above 100 MB; so do we. */
#define ST_MAX_HEADER ((uint64_t)100 * 1000 * 1000)
/* JSON nesting limit (a valid header nests 3 deep). */
#define ST_MAX_DEPTH 32

/* ---- a growable byte buffer (bookkeeping: allocation failure is fatal) -------- */

typedef struct sbuf {
    char *p;
    size_t len, cap;
} sbuf;

static void sb_put(sbuf *b, const void *s, size_t n) {
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1) cap *= 2;
        b->p = (char *)cgnn_realloc(b->p, cap);
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void sb_puts(sbuf *b, const char *s) { sb_put(b, s, strlen(s)); }

static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...) {
    char tmp[64];
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    CGNN_CHECK(k >= 0 && (size_t)k < sizeof tmp);
    sb_put(b, tmp, (size_t)k);
}

/* Appends s as a JSON string literal (quotes, escapes; UTF-8 passes through). */
static void sb_json_string(sbuf *b, const char *s) {
    sb_put(b, "\"", 1);
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        switch (*c) {
        case '"': sb_puts(b, "\\\""); break;
        case '\\': sb_puts(b, "\\\\"); break;
        case '\n': sb_puts(b, "\\n"); break;
        case '\r': sb_puts(b, "\\r"); break;
        case '\t': sb_puts(b, "\\t"); break;
        case '\b': sb_puts(b, "\\b"); break;
        case '\f': sb_puts(b, "\\f"); break;
        default:
            if (*c < 0x20) sb_printf(b, "\\u%04x", *c);
            else sb_put(b, c, 1);
        }
    }
    sb_put(b, "\"", 1);
}

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

/* fsyncs the directory holding path, so the rename itself is durable. Best effort: some
 * file systems refuse fsync on directories, which loses nothing the file fsync kept. */
static void fsync_parent_dir(const char *path) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash) snprintf(dir, sizeof dir, ".");
    else if (slash == dir) dir[1] = '\0';
    else *slash = '\0';
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd < 0) return;
    (void)fsync(fd);
    close(fd);
}

int safetensors_write(const char *path, const st_tensor *tensors, int n, const char *const *meta,
                      int n_meta, cgnn_err *err) {
    CGNN_CHECK(path && n >= 0 && n_meta >= 0 && (n == 0 || tensors) && (n_meta == 0 || meta));
    /* Header: {"__metadata__":{...},"name":{"dtype":"F32","shape":[..],"data_offsets":[b,e]},...} */
    sbuf h = {0};
    sb_put(&h, "{", 1);
    if (n_meta > 0) {
        sb_json_string(&h, "__metadata__");
        sb_put(&h, ":{", 2);
        for (int k = 0; k < n_meta; k++) {
            CGNN_CHECK(meta[2 * k] && meta[2 * k + 1]);
            if (k) sb_put(&h, ",", 1);
            sb_json_string(&h, meta[2 * k]);
            sb_put(&h, ":", 1);
            sb_json_string(&h, meta[2 * k + 1]);
        }
        sb_put(&h, "}", 1);
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
        if (i || n_meta > 0) sb_put(&h, ",", 1);
        sb_json_string(&h, t->name);
        sb_puts(&h, ":{\"dtype\":\"F32\",\"shape\":[");
        for (int d = 0; d < t->ndim; d++) sb_printf(&h, "%s%lld", d ? "," : "", (long long)t->shape[d]);
        sb_printf(&h, "],\"data_offsets\":[%lld,%lld]}", (long long)off, (long long)(off + bytes));
        off += bytes;
    }
    sb_put(&h, "}", 1);
    while (h.len % 8 != 0) sb_put(&h, " ", 1);
    unsigned char len_le[8];
    for (int k = 0; k < 8; k++) len_le[k] = (unsigned char)((uint64_t)h.len >> (8 * k));

    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        int e = errno;
        free(h.p);
        return err_set(err, CGNN_ERR_RUNTIME, "%s: cannot create temporary file %s: %s", path, tmp, strerror(e));
    }
    const char *what = "write failed";
    int ok = write_all(fd, len_le, 8) == 0 && write_all(fd, h.p, h.len) == 0;
    for (int i = 0; ok && i < n; i++)
        ok = write_all(fd, tensors[i].data, (size_t)numel_of(&tensors[i]) * 4) == 0;
    if (ok && !(ok = fsync(fd) == 0)) what = "fsync failed";
    int e = ok ? 0 : errno;
    if (close(fd) != 0 && ok) {
        ok = 0;
        e = errno;
        what = "close failed";
    }
    if (ok && rename(tmp, path) != 0) {
        ok = 0;
        e = errno;
        what = "cannot rename the temporary file into place";
    }
    free(h.p);
    if (!ok) {
        unlink(tmp);
        return err_set(err, CGNN_ERR_RUNTIME, "%s: %s: %s", path, what, strerror(e));
    }
    fsync_parent_dir(path);
    return 0;
}

/* ---- JSON (strict RFC 8259, enough for the header) ------------------------------ */

typedef enum jv_type { JV_NULL, JV_BOOL, JV_NUM, JV_STR, JV_ARR, JV_OBJ } jv_type;

typedef struct jv {
    jv_type type;
    char *str;        /* JV_STR: decoded UTF-8, NUL-terminated; owned */
    int is_uint;      /* JV_NUM: an integer literal in [0, INT64_MAX] */
    int64_t u;        /* JV_NUM with is_uint: its value */
    int n;            /* JV_ARR / JV_OBJ: number of items */
    struct jv *items; /* (n) owned */
    char **keys;      /* JV_OBJ: (n) owned */
} jv;

static void jv_free(jv *v) {
    free(v->str);
    for (int i = 0; i < v->n; i++) {
        jv_free(&v->items[i]);
        if (v->keys) free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    memset(v, 0, sizeof *v);
}

typedef struct jparser {
    const unsigned char *s;
    size_t len, pos;
    char msg[160]; /* what went wrong, with the byte offset */
} jparser;

static int jp_fail(jparser *p, const char *what) {
    snprintf(p->msg, sizeof p->msg, "invalid JSON header at byte %zu: %s", p->pos, what);
    return -1;
}

static void jp_ws(jparser *p) {
    while (p->pos < p->len) {
        unsigned char c = p->s[p->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
        p->pos++;
    }
}

/* Length of the valid UTF-8 sequence at s[0..avail) (2..4 bytes, no overlongs or surrogates),
 * or 0. */
static size_t utf8_seq(const unsigned char *s, size_t avail) {
    unsigned char c = s[0];
    size_t k;
    uint32_t cp;
    if (c >= 0xC2 && c <= 0xDF) k = 2, cp = c & 0x1F;
    else if (c >= 0xE0 && c <= 0xEF) k = 3, cp = c & 0x0F;
    else if (c >= 0xF0 && c <= 0xF4) k = 4, cp = c & 0x07;
    else return 0;
    if (avail < k) return 0;
    for (size_t i = 1; i < k; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if ((k == 3 && cp < 0x800) || (k == 4 && (cp < 0x10000 || cp > 0x10FFFF))) return 0;
    if (cp >= 0xD800 && cp <= 0xDFFF) return 0;
    return k;
}

static void put_utf8(sbuf *b, uint32_t cp) {
    unsigned char o[4];
    size_t k;
    if (cp < 0x80) o[0] = (unsigned char)cp, k = 1;
    else if (cp < 0x800) o[0] = (unsigned char)(0xC0 | (cp >> 6)), o[1] = (unsigned char)(0x80 | (cp & 0x3F)), k = 2;
    else if (cp < 0x10000)
        o[0] = (unsigned char)(0xE0 | (cp >> 12)), o[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F)),
        o[2] = (unsigned char)(0x80 | (cp & 0x3F)), k = 3;
    else
        o[0] = (unsigned char)(0xF0 | (cp >> 18)), o[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F)),
        o[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F)), o[3] = (unsigned char)(0x80 | (cp & 0x3F)), k = 4;
    sb_put(b, o, k);
}

/* Four hex digits at p->pos into *out. */
static int jp_hex4(jparser *p, uint32_t *out) {
    if (p->len - p->pos < 4) return jp_fail(p, "truncated \\u escape");
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        unsigned char c = p->s[p->pos + (size_t)i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
              : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0) return jp_fail(p, "bad hex digit in \\u escape");
        v = v * 16 + (uint32_t)d;
    }
    p->pos += 4;
    *out = v;
    return 0;
}

/* A string literal at p->pos (on the opening quote) into *out (owned by the caller). */
static int jp_string(jparser *p, char **out) {
    sbuf b = {0};
    sb_put(&b, "", 0);
    p->pos++; /* opening quote */
    for (;;) {
        if (p->pos >= p->len) {
            free(b.p);
            return jp_fail(p, "unterminated string");
        }
        unsigned char c = p->s[p->pos];
        if (c == '"') {
            p->pos++;
            break;
        }
        if (c < 0x20) {
            free(b.p);
            return jp_fail(p, "control character in string");
        }
        if (c >= 0x80) {
            size_t k = utf8_seq(p->s + p->pos, p->len - p->pos);
            if (!k) {
                free(b.p);
                return jp_fail(p, "invalid UTF-8 in string");
            }
            sb_put(&b, p->s + p->pos, k);
            p->pos += k;
            continue;
        }
        if (c != '\\') {
            sb_put(&b, &c, 1);
            p->pos++;
            continue;
        }
        if (++p->pos >= p->len) {
            free(b.p);
            return jp_fail(p, "unterminated escape");
        }
        char e = (char)p->s[p->pos++];
        const char *simple = NULL;
        switch (e) {
        case '"': simple = "\""; break;
        case '\\': simple = "\\"; break;
        case '/': simple = "/"; break;
        case 'b': simple = "\b"; break;
        case 'f': simple = "\f"; break;
        case 'n': simple = "\n"; break;
        case 'r': simple = "\r"; break;
        case 't': simple = "\t"; break;
        case 'u': break;
        default:
            p->pos--;
            free(b.p);
            return jp_fail(p, "unknown escape");
        }
        if (simple) {
            sb_put(&b, simple, 1);
            continue;
        }
        uint32_t cp;
        if (jp_hex4(p, &cp) != 0) {
            free(b.p);
            return -1;
        }
        if (cp >= 0xD800 && cp <= 0xDBFF) { /* a high surrogate: a low one must follow */
            uint32_t lo;
            if (p->len - p->pos < 2 || p->s[p->pos] != '\\' || p->s[p->pos + 1] != 'u') {
                free(b.p);
                return jp_fail(p, "unpaired surrogate in \\u escape");
            }
            p->pos += 2;
            if (jp_hex4(p, &lo) != 0 || lo < 0xDC00 || lo > 0xDFFF) {
                free(b.p);
                return p->msg[0] ? -1 : jp_fail(p, "unpaired surrogate in \\u escape");
            }
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            free(b.p);
            return jp_fail(p, "unpaired surrogate in \\u escape");
        } else if (cp == 0) {
            free(b.p);
            return jp_fail(p, "\\u0000 in string is not supported");
        }
        put_utf8(&b, cp);
    }
    *out = b.p;
    return 0;
}

/* A number literal at p->pos (strict JSON grammar). */
static int jp_number(jparser *p, jv *v) {
    size_t start = p->pos;
    int neg = 0, integral = 1;
    if (p->s[p->pos] == '-') neg = 1, p->pos++;
    if (p->pos >= p->len || !(p->s[p->pos] >= '0' && p->s[p->pos] <= '9')) return jp_fail(p, "bad number");
    if (p->s[p->pos] == '0') {
        p->pos++;
        if (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9')
            return jp_fail(p, "leading zero in number");
    } else {
        while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9') p->pos++;
    }
    size_t int_end = p->pos;
    if (p->pos < p->len && p->s[p->pos] == '.') {
        integral = 0;
        p->pos++;
        if (p->pos >= p->len || !(p->s[p->pos] >= '0' && p->s[p->pos] <= '9')) return jp_fail(p, "bad fraction");
        while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9') p->pos++;
    }
    if (p->pos < p->len && (p->s[p->pos] == 'e' || p->s[p->pos] == 'E')) {
        integral = 0;
        p->pos++;
        if (p->pos < p->len && (p->s[p->pos] == '+' || p->s[p->pos] == '-')) p->pos++;
        if (p->pos >= p->len || !(p->s[p->pos] >= '0' && p->s[p->pos] <= '9')) return jp_fail(p, "bad exponent");
        while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9') p->pos++;
    }
    v->type = JV_NUM;
    if (!neg && integral) {
        int64_t u = 0;
        int fits = 1;
        for (size_t i = start; i < int_end && fits; i++) {
            int d = p->s[i] - '0';
            if (u > (INT64_MAX - d) / 10) fits = 0;
            else u = u * 10 + d;
        }
        v->is_uint = fits;
        v->u = fits ? u : 0;
    }
    return 0;
}

static int jp_value(jparser *p, jv *v, int depth);

/* An array or object at p->pos (on '[' or '{'). */
static int jp_container(jparser *p, jv *v, int depth) {
    int is_obj = p->s[p->pos] == '{';
    char close = is_obj ? '}' : ']';
    v->type = is_obj ? JV_OBJ : JV_ARR;
    p->pos++;
    int cap = 0;
    jp_ws(p);
    if (p->pos < p->len && p->s[p->pos] == (unsigned char)close) {
        p->pos++;
        return 0;
    }
    for (;;) {
        if (v->n == cap) {
            cap = cap ? 2 * cap : 4;
            v->items = (jv *)cgnn_realloc(v->items, (size_t)cap * sizeof(jv));
            if (is_obj) v->keys = (char **)cgnn_realloc(v->keys, (size_t)cap * sizeof(char *));
        }
        jv *item = &v->items[v->n];
        memset(item, 0, sizeof *item);
        char *key = NULL;
        jp_ws(p);
        if (is_obj) {
            if (p->pos >= p->len || p->s[p->pos] != '"') return jp_fail(p, "expected a string key");
            if (jp_string(p, &key) != 0) return -1;
            jp_ws(p);
            if (p->pos >= p->len || p->s[p->pos] != ':') {
                free(key);
                return jp_fail(p, "expected ':'");
            }
            p->pos++;
            jp_ws(p);
        }
        int rc = jp_value(p, item, depth + 1);
        /* The item joins v even on failure, so jv_free releases what it holds. */
        if (is_obj) v->keys[v->n] = key;
        v->n++;
        if (rc != 0) return -1;
        jp_ws(p);
        if (p->pos >= p->len) return jp_fail(p, is_obj ? "unterminated object" : "unterminated array");
        if (p->s[p->pos] == ',') {
            p->pos++;
            continue;
        }
        if (p->s[p->pos] == (unsigned char)close) {
            p->pos++;
            return 0;
        }
        return jp_fail(p, is_obj ? "expected ',' or '}'" : "expected ',' or ']'");
    }
}

static int jp_value(jparser *p, jv *v, int depth) {
    if (depth > ST_MAX_DEPTH) return jp_fail(p, "nested too deeply");
    jp_ws(p);
    if (p->pos >= p->len) return jp_fail(p, "unexpected end");
    unsigned char c = p->s[p->pos];
    if (c == '{' || c == '[') return jp_container(p, v, depth);
    if (c == '"') {
        v->type = JV_STR;
        return jp_string(p, &v->str);
    }
    if (c == '-' || (c >= '0' && c <= '9')) return jp_number(p, v);
    static const struct { const char *lit; jv_type type; } LITS[] = {
        {"true", JV_BOOL}, {"false", JV_BOOL}, {"null", JV_NULL}};
    for (size_t i = 0; i < sizeof LITS / sizeof LITS[0]; i++) {
        size_t k = strlen(LITS[i].lit);
        if (p->len - p->pos >= k && memcmp(p->s + p->pos, LITS[i].lit, k) == 0) {
            p->pos += k;
            v->type = LITS[i].type;
            return 0;
        }
    }
    return jp_fail(p, "unexpected character");
}

/* Parses the whole of s[0..len) as one JSON value into *v (freed by the caller with jv_free
 * even on failure). */
static int json_parse(jparser *p, const char *s, size_t len, jv *v) {
    memset(v, 0, sizeof *v);
    p->s = (const unsigned char *)s;
    p->len = len;
    p->pos = 0;
    p->msg[0] = '\0';
    if (jp_value(p, v, 0) != 0) return -1;
    jp_ws(p);
    if (p->pos != p->len) return jp_fail(p, "trailing characters after the header object");
    return 0;
}

/* The member key of object o, or NULL. */
static const jv *jv_get(const jv *o, const char *key) {
    for (int i = 0; i < o->n; i++)
        if (strcmp(o->keys[i], key) == 0) return &o->items[i];
    return NULL;
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
static int check_entry(st_file *f, int i, const char *name, const jv *e, int64_t data_len, st_region *r,
                       cgnn_err *err) {
    const char *path = f->path;
    if (e->type != JV_OBJ)
        return err_set(err, CGNN_ERR_INPUT, "%s: tensor '%s': entry is not a JSON object", path, name);
    const jv *dtype = jv_get(e, "dtype"), *shape = jv_get(e, "shape"), *offs = jv_get(e, "data_offsets");
    if (!dtype) return err_set(err, CGNN_ERR_INPUT, "%s: tensor '%s': missing \"dtype\"", path, name);
    if (!shape) return err_set(err, CGNN_ERR_INPUT, "%s: tensor '%s': missing \"shape\"", path, name);
    if (!offs) return err_set(err, CGNN_ERR_INPUT, "%s: tensor '%s': missing \"data_offsets\"", path, name);
    if (dtype->type != JV_STR)
        return err_set(err, CGNN_ERR_INPUT, "%s: tensor '%s': \"dtype\" is not a string", path, name);
    if (strcmp(dtype->str, "F32") != 0)
        return err_set(err, CGNN_ERR_INPUT, "%s: tensor '%s': dtype %s is not supported (only F32)", path, name,
                       dtype->str);
    if (shape->type != JV_ARR)
        return err_set(err, CGNN_ERR_INPUT, "%s: tensor '%s': \"shape\" is not an array", path, name);
    if (shape->n > 4)
        return err_set(err, CGNN_ERR_INPUT, "%s: tensor '%s': %d dimensions, at most 4 are supported", path, name,
                       shape->n);
    int64_t numel = 1;
    f->ndims[i] = shape->n;
    for (int d = 0; d < 4; d++) f->shapes[i][d] = 1; /* unused dims are 1 */
    for (int d = 0; d < shape->n; d++) {
        const jv *s = &shape->items[d];
        if (s->type != JV_NUM || !s->is_uint)
            return err_set(err, CGNN_ERR_INPUT, "%s: tensor '%s': shape[%d] is not a non-negative integer", path,
                           name, d);
        if (s->u != 0 && numel > INT64_MAX / 4 / s->u)
            return err_set(err, CGNN_ERR_INPUT, "%s: tensor '%s': shape is too large", path, name);
        numel *= s->u;
        f->shapes[i][d] = s->u;
    }
    if (offs->type != JV_ARR || offs->n != 2 || offs->items[0].type != JV_NUM || !offs->items[0].is_uint ||
        offs->items[1].type != JV_NUM || !offs->items[1].is_uint)
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
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return err_set(err, CGNN_ERR_INPUT, "%s: cannot open: %s", path, strerror(errno));
    char *hdr = NULL;
    st_region *regions = NULL;
    jv root = {0};
    jparser jp;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        err_set(err, CGNN_ERR_INPUT, "%s: cannot stat: %s", path, strerror(errno));
        goto fail;
    }
    if (!S_ISREG(st.st_mode)) {
        err_set(err, CGNN_ERR_INPUT, "%s: not a regular file", path);
        goto fail;
    }
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
    if (json_parse(&jp, hdr, (size_t)hlen, &root) != 0) {
        err_set(err, CGNN_ERR_INPUT, "%s: %s", path, jp.msg);
        goto fail;
    }
    if (root.type != JV_OBJ) {
        err_set(err, CGNN_ERR_INPUT, "%s: the JSON header is not an object", path);
        goto fail;
    }
    int64_t data_off = 8 + (int64_t)hlen, data_len = size - data_off;

    /* Metadata, and the tensor count. */
    int ntensors = 0;
    const jv *meta = NULL;
    for (int k = 0; k < root.n; k++) {
        if (strcmp(root.keys[k], "__metadata__") != 0) {
            ntensors++;
            continue;
        }
        meta = &root.items[k];
        if (f->meta || meta->type != JV_OBJ) {
            err_set(err, CGNN_ERR_INPUT, "%s: \"__metadata__\" must appear once and be an object", path);
            goto fail;
        }
        f->n_meta = meta->n;
        f->meta = (char **)cgnn_calloc((size_t)(2 * meta->n + 1), sizeof(char *));
        for (int m = 0; m < meta->n; m++) {
            if (meta->items[m].type != JV_STR) {
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
    jv_free(&root);
    close(fd);
    return 0;

fail:
    free(regions);
    free(hdr);
    jv_free(&root);
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
    int fd = open(f->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return err_set(err, CGNN_ERR_INPUT, "%s: cannot open: %s", f->path, strerror(errno));
    struct stat st;
    int rc = 0;
    if (fstat(fd, &st) != 0 || (int64_t)st.st_size != f->file_size)
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
