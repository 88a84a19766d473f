/* json.c — strict JSON reader and JSON text buffer; see json.h.
 * (Extracted from the safetensors header reader, which uses it.) */
#include "io/json.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"

/* ---- text buffer (bookkeeping: allocation failure is fatal) ------------------ */

void json_buf_put(json_buf *b, const void *s, size_t n) {
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1) cap *= 2;
        b->p = (char *)cgnn_realloc(b->p, cap);
        b->cap = cap;
    }
    if (n) memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

void json_buf_puts(json_buf *b, const char *s) { json_buf_put(b, s, strlen(s)); }

void json_buf_printf(json_buf *b, const char *fmt, ...) {
    char tmp[256];
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    CGNN_CHECK(k >= 0);
    if ((size_t)k < sizeof tmp) {
        json_buf_put(b, tmp, (size_t)k);
        return;
    }
    char *big = (char *)cgnn_malloc((size_t)k + 1);
    va_start(ap, fmt);
    vsnprintf(big, (size_t)k + 1, fmt, ap);
    va_end(ap);
    json_buf_put(b, big, (size_t)k);
    free(big);
}

void json_buf_string(json_buf *b, const char *s) {
    json_buf_put(b, "\"", 1);
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        switch (*c) {
        case '"': json_buf_puts(b, "\\\""); break;
        case '\\': json_buf_puts(b, "\\\\"); break;
        case '\n': json_buf_puts(b, "\\n"); break;
        case '\r': json_buf_puts(b, "\\r"); break;
        case '\t': json_buf_puts(b, "\\t"); break;
        case '\b': json_buf_puts(b, "\\b"); break;
        case '\f': json_buf_puts(b, "\\f"); break;
        default:
            if (*c < 0x20) json_buf_printf(b, "\\u%04x", *c);
            else json_buf_put(b, c, 1);
        }
    }
    json_buf_put(b, "\"", 1);
}

void json_buf_free(json_buf *b) {
    free(b->p);
    memset(b, 0, sizeof *b);
}

/* ---- reader ----------------------------------------------------------------- */

void json_free(json_value *v) {
    free(v->str);
    for (int i = 0; i < v->n; i++) {
        json_free(&v->items[i]);
        if (v->keys) free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    memset(v, 0, sizeof *v);
}

typedef struct json_parser {
    const unsigned char *s;
    size_t len, pos;
    int max_depth;
    char msg[160]; /* what went wrong, with the byte offset */
} json_parser;

static int jp_fail(json_parser *p, const char *what) {
    snprintf(p->msg, sizeof p->msg, "at byte %zu: %s", p->pos, what);
    return -1;
}

static void jp_ws(json_parser *p) {
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

static void put_utf8(json_buf *b, uint32_t cp) {
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
    json_buf_put(b, o, k);
}

/* Four hex digits at p->pos into *out. */
static int jp_hex4(json_parser *p, uint32_t *out) {
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
static int jp_string(json_parser *p, char **out) {
    json_buf b = {0};
    json_buf_put(&b, "", 0);
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
            json_buf_put(&b, p->s + p->pos, k);
            p->pos += k;
            continue;
        }
        if (c != '\\') {
            json_buf_put(&b, &c, 1);
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
            json_buf_put(&b, simple, 1);
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
static int jp_number(json_parser *p, json_value *v) {
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
    v->type = JSON_NUM;
    {
        const size_t k = p->pos - start;
        char small[64], *lit = k < sizeof small ? small : (char *)cgnn_malloc(k + 1);
        memcpy(lit, p->s + start, k);
        lit[k] = '\0';
        v->num = strtod(lit, NULL);
        if (lit != small) free(lit);
    }
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

static int jp_value(json_parser *p, json_value *v, int depth);

/* An array or object at p->pos (on '[' or '{'). */
static int jp_container(json_parser *p, json_value *v, int depth) {
    int is_obj = p->s[p->pos] == '{';
    char close = is_obj ? '}' : ']';
    v->type = is_obj ? JSON_OBJ : JSON_ARR;
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
            v->items = (json_value *)cgnn_realloc(v->items, (size_t)cap * sizeof(json_value));
            if (is_obj) v->keys = (char **)cgnn_realloc(v->keys, (size_t)cap * sizeof(char *));
        }
        json_value *item = &v->items[v->n];
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
        /* The item joins v even on failure, so json_free releases what it holds. */
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

static int jp_value(json_parser *p, json_value *v, int depth) {
    if (depth > p->max_depth) return jp_fail(p, "nested too deeply");
    jp_ws(p);
    if (p->pos >= p->len) return jp_fail(p, "unexpected end");
    unsigned char c = p->s[p->pos];
    if (c == '{' || c == '[') return jp_container(p, v, depth);
    if (c == '"') {
        v->type = JSON_STR;
        return jp_string(p, &v->str);
    }
    if (c == '-' || (c >= '0' && c <= '9')) return jp_number(p, v);
    static const struct { const char *lit; json_type type; } LITS[] = {
        {"true", JSON_BOOL}, {"false", JSON_BOOL}, {"null", JSON_NULL}};
    for (size_t i = 0; i < sizeof LITS / sizeof LITS[0]; i++) {
        size_t k = strlen(LITS[i].lit);
        if (p->len - p->pos >= k && memcmp(p->s + p->pos, LITS[i].lit, k) == 0) {
            p->pos += k;
            v->type = LITS[i].type;
            v->boolean = LITS[i].lit[0] == 't';
            return 0;
        }
    }
    return jp_fail(p, "unexpected character");
}

int json_parse(json_value *v, const char *s, size_t len, int max_depth, char *msg, size_t cap) {
    memset(v, 0, sizeof *v);
    json_parser p = {(const unsigned char *)s, len, 0, max_depth, ""};
    int rc = jp_value(&p, v, 0);
    if (rc == 0) {
        jp_ws(&p);
        if (p.pos != p.len) rc = jp_fail(&p, "trailing characters after the value");
    }
    if (rc != 0 && msg && cap) snprintf(msg, cap, "%s", p.msg);
    return rc;
}

const json_value *json_get(const json_value *o, const char *key) {
    if (!o || o->type != JSON_OBJ) return NULL;
    for (int i = 0; i < o->n; i++)
        if (strcmp(o->keys[i], key) == 0) return &o->items[i];
    return NULL;
}

const char *json_duplicate_key(const json_value *o) {
    if (!o || o->type != JSON_OBJ) return NULL;
    for (int i = 1; i < o->n; i++)
        for (int j = 0; j < i; j++)
            if (strcmp(o->keys[i], o->keys[j]) == 0) return o->keys[i];
    return NULL;
}
