/* tfrecord.h — TensorFlow's TFRecord files and the tf.Example messages in them, read in C.
 *
 * Framing (tensorflow/core/lib/io/record_writer.cc), one record after the other:
 *   uint64 length (little-endian) | uint32 masked CRC-32C of those 8 bytes |
 *   data[length] | uint32 masked CRC-32C of data
 * masked(crc) = ((crc >> 15) | (crc << 17)) + 0xa282ead8 (mod 2^32); CRC-32C is the Castagnoli
 * polynomial (0x82f63b78 reflected), not zlib's CRC-32. A file whose name ends in ".gz" is a
 * gzip stream of such records (TFRecordDataset(compression_type="GZIP"), what GiGL reads for
 * "*.tfrecord.gz"); zlib inflates it as it is read.
 *
 * tf.Example (tensorflow/core/example/{example,feature}.proto), decoded by hand from the protobuf
 * wire format: a C11 project without protoc / protobuf-c needs three small messages, and a
 * hand-written decoder can check every length against what remains (no generated code trusts
 * them for us):
 *   Example  { Features features = 1; }
 *   Features { map<string, Feature> feature = 1; }          (entries: key = 1, value = 2)
 *   Feature  { oneof kind { BytesList bytes_list = 1; FloatList float_list = 2;
 *                           Int64List int64_list = 3; } }
 *   BytesList { repeated bytes value = 1; }  FloatList { repeated float value = 1; }
 *   Int64List { repeated int64 value = 1; }  (packed or not: both are accepted, as protobuf does)
 * Unknown fields are skipped (proto3 rules); a repeated message field merges, a map key given
 * twice keeps the last value, a oneof given twice keeps the last member (protobuf's rules).
 *
 * Every failure is CGNN_ERR_INPUT naming the file and the record index (from 0): truncation, a
 * CRC mismatch, a length past what remains (checked before anything is allocated for it), a
 * malformed varint, a wire type that does not fit the field.
 */
#ifndef CGNN_TFRECORD_H
#define CGNN_TFRECORD_H

#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

/* ---- CRC-32C --------------------------------------------------------------------------- */

/* CRC-32C (Castagnoli) of buf[0..n), continuing from crc (0 to start): the table-driven
 * version (slicing-by-8). */
uint32_t tfrecord_crc32c(uint32_t crc, const void *buf, size_t n);
/* The same, bit by bit: the plain reference the table version is tested against. */
uint32_t tfrecord_crc32c_ref(uint32_t crc, const void *buf, size_t n);
/* TFRecord's mask of a CRC: ((crc >> 15) | (crc << 17)) + 0xa282ead8. */
uint32_t tfrecord_mask_crc(uint32_t crc);

/* ---- records --------------------------------------------------------------------------- */

/* A record longer than this is refused (naming the file and record) before it is allocated:
 * GiGL's records are one node or edge each (bytes to kilobytes). */
#define TFRECORD_MAX_RECORD_BYTES ((uint64_t)1 << 30)

typedef struct tfrecord_reader {
    char path[4096];
    void *fp;          /* FILE* (plain) or gzFile (gzip); NULL when closed */
    int gz;            /* 1: a gzip stream (the name ends in ".gz") */
    int64_t file_bytes; /* plain: the file's size (bounds every length); gz: -1 */
    int64_t offset;    /* bytes of the (uncompressed) stream consumed */
    int64_t index;     /* the record tfrecord_next returns next (0-based) */
    uint8_t *buf;      /* the current record (owned, reused) */
    size_t cap;
} tfrecord_reader;

/* Opens path for reading. Returns 0, or -1 with *err (CGNN_ERR_INPUT naming path). *r is then
 * closed (safe to tfrecord_close). */
int tfrecord_open(tfrecord_reader *r, const char *path, cgnn_err *err);
/* Reads the next record: 1 with *data / *len set (valid until the next call; the CRCs checked),
 * 0 at a clean end of the file, -1 with *err (CGNN_ERR_INPUT: "PATH: record K: ..."). */
int tfrecord_next(tfrecord_reader *r, const uint8_t **data, size_t *len, cgnn_err *err);
/* Closes; NULL-safe, idempotent. */
void tfrecord_close(tfrecord_reader *r);

/* Frames data[0..n) as one record into out (n + 16 bytes; the caller sizes it). For writers and
 * tests. Returns the bytes written. */
size_t tfrecord_frame(uint8_t *out, const void *data, size_t n);

/* ---- tf.Example ------------------------------------------------------------------------ */

typedef enum tfex_kind { TFEX_NONE = 0, TFEX_BYTES = 1, TFEX_FLOAT = 2, TFEX_INT64 = 3 } tfex_kind;

/* One feature of an Example: views into the record (valid while the record is). */
typedef struct tfex_feature {
    const uint8_t *name;  /* the map key, name_len bytes, not NUL-terminated */
    size_t name_len;
    tfex_kind kind;       /* TFEX_NONE: a Feature with no list set */
    int64_t count;        /* values in the list (validated: every value decodes) */
    const uint8_t *body;  /* the list message (BytesList / FloatList / Int64List) */
    size_t body_len;
} tfex_feature;

typedef struct tfex {
    int n, cap;
    tfex_feature *f;      /* owned; in first-seen order, one entry per distinct name */
    int *slot;            /* owned: open-addressing index of f by name (nslot a power of two,
                             -1 = empty), so that a record with thousands of keys (GiGL's
                             preprocessor writes one key per scalar feature) parses and is looked
                             up in O(keys), not O(keys^2) */
    int nslot;
} tfex;

/* Parses one serialized Example into *ex (previous contents dropped; ex zeroed or from an earlier
 * call). Returns 0, or -1 with a short reason in why[cap] ("feature 'f0': float_list: length 12
 * past the 8 bytes left"); the caller prefixes the file and record. */
int tfex_parse(tfex *ex, const uint8_t *buf, size_t len, char *why, size_t cap);
void tfex_free(tfex *ex);
/* The feature named name, or NULL. */
const tfex_feature *tfex_find(const tfex *ex, const char *name);
/* "bytes_list", "float_list", "int64_list" or "no list". */
const char *tfex_kind_name(tfex_kind k);

/* Decodes the values of f into out[0..f->count): float_list as is, int64_list converted to float
 * (GiGL casts integer features to float32). Bytes lists are not numbers: -1 (the caller names
 * the kind). */
int tfex_get_floats(const tfex_feature *f, float *out);
/* Decodes an int64_list into out[0..f->count); -1 for any other kind. */
int tfex_get_int64s(const tfex_feature *f, int64_t *out);

#endif
