/* csv.c — numeric CSV tables (see csv.h). */
#include "io/csv.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/file.h"
#include "util/log.h"

/* One number at *p (spaces before and after skipped) into *out (kind's type); advances *p past it.
 * 0, or -1 when the field is not a number of that kind. */
static int parse_field(const char **p, csv_kind kind, void *out) {
    const char *s = *p;
    while (*s == ' ' || *s == '\t') s++;
    if (*s == ',' || *s == '\0' || *s == '\r' || *s == '\n') return -1; /* empty field */
    char *end = NULL;
    errno = 0;
    if (kind == CSV_INT64) {
        const long long v = strtoll(s, &end, 10);
        if (end == s || errno == ERANGE) return -1;
        *(int64_t *)out = (int64_t)v;
    } else {
        const float v = strtof(s, &end);
        if (end == s) return -1;
        *(float *)out = v;
    }
    s = end;
    while (*s == ' ' || *s == '\t') s++;
    if (*s != ',' && *s != '\0' && *s != '\r' && *s != '\n') return -1; /* "12abc", "1.5" as an int */
    *p = s;
    return 0;
}

/* 1 when some field of line is not a number (a header line). */
static int is_header(const char *line) {
    const char *p = line;
    float v;
    for (;;) {
        if (parse_field(&p, CSV_FLOAT32, &v) != 0) return 1;
        if (*p != ',') return 0;
        p++;
    }
}

int csv_read(const char *path, csv_kind kind, int64_t want_cols, csv_table *t, cgnn_err *err) {
    memset(t, 0, sizeof *t);
    int fd = file_open_regular(path, NULL, err);
    if (fd < 0) return -1;
    FILE *f = fdopen(fd, "r");
    if (!f) {
        close(fd);
        return err_set(err, CGNN_ERR_RUNTIME, "%s: cannot open: %s", path, strerror(errno));
    }
    const size_t vsz = kind == CSV_INT64 ? sizeof(int64_t) : sizeof(float);
    char *line = NULL, *data = NULL;
    size_t line_cap = 0;
    int64_t rows = 0, cols = want_cols, cap = 0, lineno = 0;
    int seen = 0, rc = 0;
    ssize_t got;
    while ((got = getline(&line, &line_cap, f)) != -1) {
        lineno++;
        const char *p = line;
        while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') p++;
        if (!*p) continue; /* blank */
        const size_t shown = strcspn(line, "\r\n");
        if ((ssize_t)strlen(line) != got) {
            rc = err_set(err, CGNN_ERR_INPUT, "%s:%lld: a NUL byte inside the line (not a text CSV file)", path,
                         (long long)lineno);
            break;
        }
        if (!seen++ && is_header(line)) {
            snprintf(t->header, sizeof t->header, "%.*s", (int)(shown < sizeof t->header ? shown : sizeof t->header - 1),
                     line);
            log_info("%s:%lld: header line '%.*s' skipped", path, (long long)lineno, (int)(shown > 60 ? 60 : shown), line);
            continue;
        }
        /* the row's column count: want_cols, else the first row's */
        int64_t n = 1;
        for (const char *c = line; *c; c++) n += *c == ',';
        if (cols == 0) cols = n;
        if (n != cols) {
            rc = err_set(err, CGNN_ERR_INPUT, "%s:%lld: %lld columns, expected %lld (%s)", path, (long long)lineno,
                         (long long)n, (long long)cols, rows ? "as the rows above" : "the table's width");
            break;
        }
        if (rows == cap) {
            cap = cap ? 2 * cap : 1024;
            char *nd = realloc(data, (size_t)cap * (size_t)cols * vsz);
            if (!nd) {
                rc = err_set(err, CGNN_ERR_RUNTIME, "%s: out of memory at line %lld", path, (long long)lineno);
                break;
            }
            data = nd;
        }
        p = line;
        for (int64_t c = 0; c < cols && rc == 0; c++) {
            void *dst = data + ((size_t)rows * (size_t)cols + (size_t)c) * vsz;
            if (parse_field(&p, kind, dst) != 0)
                rc = err_set(err, CGNN_ERR_INPUT, "%s:%lld: column %lld: expected %s, got '%.*s%s'", path,
                             (long long)lineno, (long long)c + 1,
                             kind == CSV_INT64 ? "an integer" : "a number", (int)(shown > 60 ? 60 : shown), line,
                             shown > 60 ? "..." : "");
            else if (kind == CSV_FLOAT32 && !isfinite(*(float *)dst))
                rc = err_set(err, CGNN_ERR_INPUT, "%s:%lld: column %lld: %s (values must be finite)", path,
                             (long long)lineno, (long long)c + 1, isnan(*(float *)dst) ? "NaN" : "infinite or out of float32 range");
            if (*p == ',') p++;
        }
        if (rc) break;
        rows++;
    }
    if (!rc && ferror(f)) rc = err_set(err, CGNN_ERR_RUNTIME, "%s: read error: %s", path, strerror(errno));
    if (!rc && rows == 0) rc = err_set(err, CGNN_ERR_INPUT, "%s: no rows", path);
    free(line);
    fclose(f);
    if (rc) {
        free(data);
        memset(t, 0, sizeof *t);
        return -1;
    }
    t->rows = rows;
    t->cols = cols;
    t->data = data;
    return 0;
}

void csv_free(csv_table *t) {
    if (!t) return;
    free(t->data);
    t->data = NULL;
    t->rows = t->cols = 0;
}
