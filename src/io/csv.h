/* csv.h — numeric CSV tables: a user's edge lists, node features and labels (cgnn import csv).
 *
 * A table is lines of comma-separated numbers: spaces and tabs around a number are allowed, blank
 * lines are skipped, "\r\n" line ends are fine. A first line with a field that is not a number
 * ("src,dst", "node,label", "f0,f1,...") is a header: skipped, and a log line says so. Every row
 * has the table's column count. Integers are whole decimal numbers that fit int64; floats are
 * finite (NaN and infinities are refused, as in feature files: io/dataset.h). Every error names
 * the file and the line (and the column when one value is wrong); nothing is returned then.
 */
#ifndef CGNN_CSV_H
#define CGNN_CSV_H

#include <stdint.h>

#include "util/err.h"

typedef enum csv_kind { CSV_INT64, CSV_FLOAT32 } csv_kind;

typedef struct csv_table {
    int64_t rows, cols;
    void *data;        /* (rows, cols) row-major: int64_t (CSV_INT64) or float (CSV_FLOAT32); owned */
    char header[128];  /* the header line that was skipped (cut at 127 bytes), or "" */
} csv_table;

/* Reads path as a table of `kind` numbers with want_cols columns (0: any, the first row's). 0, or
 * -1 with *err (CGNN_ERR_INPUT naming the file and line; CGNN_ERR_RUNTIME when it cannot be read).
 * The caller owns *t (csv_free). A file without a row is an error. */
int csv_read(const char *path, csv_kind kind, int64_t want_cols, csv_table *t, cgnn_err *err);

/* Releases *t; NULL-safe and safe on a zeroed table. */
void csv_free(csv_table *t);

#endif
