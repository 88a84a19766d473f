/* tb_events.h — TensorBoard event files (scalars) without a protobuf dependency.
 *
 * An event file is a sequence of TFRecords, each holding one serialized `tensorflow.Event`:
 *
 *   record  = uint64 LE  length
 *             uint32 LE  masked_crc32c(the 8 length bytes)
 *             byte[length] data                      (the Event protobuf)
 *             uint32 LE  masked_crc32c(data)
 *   masked_crc32c(x) = ((crc >> 15) | (crc << 17)) + 0xa282ead8,  crc = CRC32C(x)
 *
 * The few Event fields we write are encoded by hand (protobuf wire format):
 *
 *   Event   { double wall_time = 1;  int64 step = 2;  string file_version = 3;
 *             Summary summary = 5; }
 *   Summary { repeated Value value = 1; }
 *   Value   { string tag = 1;  float simple_value = 2; }
 *
 * Fields at their proto3 default (step 0, wall_time 0.0) are left out, as the protobuf library
 * does, so each Event is byte-identical to its canonical serialization.
 *
 * The first record of every file is {wall_time, file_version: "brain.Event:2"}; TensorBoard's
 * loaders read `simple_value` scalars straight into their Scalars dashboard.
 *
 * Writers are for one thread (the trainer's main thread, usually rank 0 only). Nothing is
 * allocated per record: each Event is built in a fixed buffer inside the writer and handed to
 * stdio in one fwrite. Tags longer than TB_MAX_TAG_BYTES are truncated at a UTF-8 character
 * boundary (protobuf strings must stay valid UTF-8, or readers reject the record).
 */
#ifndef CGNN_TB_EVENTS_H
#define CGNN_TB_EVENTS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util/err.h"

/* Longest tag kept, in bytes (longer tags are cut at a UTF-8 boundary at or below this). */
#define TB_MAX_TAG_BYTES 255
/* Values per Event; tb_add_scalars with more writes several Events with the same step. */
#define TB_MAX_VALUES_PER_EVENT 64

/* Worst-case bytes of one encoded Value / Event / framed record (see tb_events.c). */
#define TB_VALUE_MAX_BYTES (1 + 2 + TB_MAX_TAG_BYTES + 1 + 4)            /* tag + simple_value */
#define TB_SUMMARY_ENTRY_MAX_BYTES (1 + 2 + TB_VALUE_MAX_BYTES)          /* Summary.value entry */
#define TB_EVENT_MAX_BYTES                                                                     \
    (1 + 8 + 1 + 10 + 1 + 3 + TB_MAX_VALUES_PER_EVENT * TB_SUMMARY_ENTRY_MAX_BYTES)
#define TB_RECORD_MAX_BYTES (8 + 4 + TB_EVENT_MAX_BYTES + 4)

typedef struct tb_writer {
    FILE *fp;                /* NULL: disabled (or closed) writer; every call is a no-op */
    char path[4096];         /* the event file */
    int failed;              /* a write failed (errno in failed_errno); later records are dropped */
    int failed_errno;
    int64_t records;         /* records written, the file_version record included */
    unsigned char buf[TB_RECORD_MAX_BYTES]; /* one framed record being built */
} tb_writer;

/* Creates logdir (mkdir -p) and the event file
 *   <logdir>/events.out.tfevents.<unix seconds>.<hostname>.<pid>.cgnn
 * (never overwriting an existing file: if that name is taken, ".<k>" is inserted before
 * ".cgnn"), and writes the file_version record. logdir NULL or "" gives a disabled writer
 * (every call a no-op). Returns 0, or -1 with *err (CGNN_ERR_RUNTIME naming the path); *w is
 * then a disabled writer. The caller owns *w (tb_close). */
int tb_open(tb_writer *w, const char *logdir, cgnn_err *err);

/* Reopens the event file logdir/file_name of an interrupted run to continue it (the file's
 * name is kept, so TensorBoard shows one run): the file is cut to its first keep_bytes bytes
 * (records written after the checkpoint being resumed are dropped; keep_bytes is a record
 * boundary from tb_bytes) and new records are appended after them; records is the count
 * tb_bytes's writer had written. When the file is missing or shorter than keep_bytes, or
 * file_name is not a plain events.out.tfevents.* name, a new file is created as tb_open does
 * and *was_short is 1 (else 0). Returns 0, or -1 with *err (CGNN_ERR_RUNTIME naming the path). */
int tb_open_continue(tb_writer *w, const char *logdir, const char *file_name, int64_t keep_bytes, int64_t records,
                     int *was_short, cgnn_err *err);

/* Flushes and returns the bytes of the file written so far (a record boundary); 0 for a
 * disabled writer. */
int64_t tb_bytes(tb_writer *w);

/* The event file's name without its directory ("" for a disabled writer). */
const char *tb_file_name(const tb_writer *w);

/* Appends one Event {wall_time, step, summary {value {tag, simple_value}}}. wall_time is in
 * seconds since the Unix epoch (tb_wall_time()). A write error is remembered, not returned:
 * see tb_check. */
void tb_add_scalar(tb_writer *w, int64_t step, double wall_time, const char *tag, float value);

/* Appends one Event holding the n scalars tags[i] = values[i] (n <= TB_MAX_VALUES_PER_EVENT;
 * more are split over several Events with the same step and wall_time). n == 0 writes nothing. */
void tb_add_scalars(tb_writer *w, int64_t step, double wall_time, const char *const *tags,
                    const float *values, int n);

/* Pushes buffered records to the file (fflush), so TensorBoard sees them while training runs. */
void tb_flush(tb_writer *w);

/* Returns 0 if every record so far reached stdio and the last flush succeeded; else -1 with
 * *err (CGNN_ERR_RUNTIME naming the path and the error). 0 for a disabled writer. */
int tb_check(const tb_writer *w, cgnn_err *err);

/* Flushes and closes the file; NULL-safe, idempotent, safe on a disabled writer. */
void tb_close(tb_writer *w);

/* Seconds since the Unix epoch (CLOCK_REALTIME), what Event.wall_time holds. */
double tb_wall_time(void);

/* ---- CRC32C (Castagnoli, reflected polynomial 0x82F63B78), zlib-style chaining:
 * crc = tb_crc32c(0, a, na); crc = tb_crc32c(crc, b, nb); gives CRC32C(a ++ b).
 * tb_crc32c is slicing-by-8; tb_crc32c_ref is the bitwise reference the tests hold it to.
 * Both are thread-safe. */
uint32_t tb_crc32c(uint32_t crc, const void *data, size_t n);
uint32_t tb_crc32c_ref(uint32_t crc, const void *data, size_t n);
/* TFRecord's masked CRC of data: rot-right-15 of CRC32C(data), plus 0xa282ead8. */
uint32_t tb_masked_crc32c(const void *data, size_t n);

#endif
