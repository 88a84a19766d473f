/* json.h — a strict JSON (RFC 8259) reader into a small tree, and a text buffer for writing
 * JSON by hand.
 *
 * Reader: the whole input must be one value; strings must be valid UTF-8 (no overlongs, no
 * surrogates; \u escapes are decoded, \u0000 is refused since strings are NUL-terminated);
 * numbers follow the JSON grammar exactly (no leading zeros, no '+', no NaN). Nesting is
 * bounded by the caller's max_depth, so a hostile input cannot exhaust the stack. Duplicate
 * object keys are kept (in order); callers that need unique keys check with
 * json_duplicate_key. Used by the safetensors header reader and the partition book
 * (graph/partbook).
 *
 * Writer: json_buf grows as needed (allocation failure is fatal, as for all bookkeeping);
 * json_buf_string writes a correctly escaped string literal.
 */
#ifndef CGNN_JSON_H
#define CGNN_JSON_H

#include <stddef.h>
#include <stdint.h>

typedef enum json_type { JSON_NULL, JSON_BOOL, JSON_NUM, JSON_STR, JSON_ARR, JSON_OBJ } json_type;

typedef struct json_value {
    json_type type;
    int boolean;              /* JSON_BOOL: 0 or 1 */
    char *str;                /* JSON_STR: decoded UTF-8, NUL-terminated; owned */
    int is_uint;              /* JSON_NUM: an integer literal (no fraction or exponent) in [0, INT64_MAX] */
    int64_t u;                /* JSON_NUM with is_uint: its value */
    double num;               /* JSON_NUM: the value as a double (strtod; +-HUGE_VAL when out of range) */
    int n;                    /* JSON_ARR / JSON_OBJ: number of items */
    struct json_value *items; /* (n) owned */
    char **keys;              /* JSON_OBJ: (n) owned */
} json_value;

/* Parses the whole of s[0..len) as one JSON value into *v. Returns 0, or -1 with msg[0..cap)
 * set to "at byte K: what is wrong". *v must be released with json_free either way. */
int json_parse(json_value *v, const char *s, size_t len, int max_depth, char *msg, size_t cap);

/* Releases everything *v owns; safe on a zeroed value. */
void json_free(json_value *v);

/* The member `key` of object o (the first, if repeated), or NULL (also when o is not an
 * object). */
const json_value *json_get(const json_value *o, const char *key);

/* The first key that appears twice in object o, or NULL. */
const char *json_duplicate_key(const json_value *o);

/* A growable text buffer; p is NUL-terminated whenever len > 0. Zero-initialise it. */
typedef struct json_buf {
    char *p;
    size_t len, cap;
} json_buf;

void json_buf_put(json_buf *b, const void *s, size_t n);
void json_buf_puts(json_buf *b, const char *s);
void json_buf_printf(json_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends s as a JSON string literal: quotes, \" \\ \n \r \t \b \f, other control characters
 * as \u00XX; UTF-8 passes through. */
void json_buf_string(json_buf *b, const char *s);
void json_buf_free(json_buf *b);

#endif
