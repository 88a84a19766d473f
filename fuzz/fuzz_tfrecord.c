/* fuzz_tfrecord.c — libFuzzer target: the TFRecord reader and the tf.Example decoder
 * (io/tfrecord.h), the parsers cgnn import gigl runs on GiGL's preprocessed output.
 *
 * Input: a whole TFRecord file. It is read twice: as a plain file and, compressed with zlib's
 * gzip writer, as "*.tfrecord.gz" (the same bytes through the inflating reader must give the same
 * records and the same verdict). Every record whose CRCs hold is decoded as a tf.Example and every
 * feature's values are read in full; a failure must be CGNN_ERR_INPUT naming the file, and a
 * decoded feature must yield exactly its counted values. Random bytes rarely carry valid CRCs,
 * so the input is also framed as one record (tfrecord_frame: the decoder sees every input as a
 * serialized Example, through the reader).
 */
#include <zlib.h>

#include "fuzz_util.h"
#include "io/tfrecord.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Reads every record of path; returns the record count, or -1 (after checking the report). */
static int64_t read_file(const char *path, uint32_t *digest) {
    tfrecord_reader r;
    cgnn_err err = {0};
    int rc = tfrecord_open(&r, path, &err);
    fuzz_check(rc, &err, path);
    if (rc != 0) return -1;
    const uint8_t *d;
    size_t n;
    int64_t count = 0;
    tfex ex = {0};
    char why[300];
    uint32_t h = 0;
    while ((rc = tfrecord_next(&r, &d, &n, &err)) == 1) {
        h = tfrecord_crc32c(h, d, n);
        if (tfex_parse(&ex, d, n, why, sizeof why) != 0) {
            FUZZ_ASSERT(why[0]);
            h ^= 0x5bd1e995u;
            count++;
            continue;
        }
        for (int i = 0; i < ex.n; i++) {
            const tfex_feature *f = &ex.f[i];
            FUZZ_ASSERT(f->count >= 0 && (size_t)f->count <= n);
            FUZZ_ASSERT(f->name_len == 0 || (f->name >= d && f->name + f->name_len <= d + n)); /* "" when keyless */
            FUZZ_ASSERT(tfex_find(&ex, "") == NULL || tfex_find(&ex, "")->name_len == 0);
            size_t k = f->count ? (size_t)f->count : 1;
            float *fv = malloc(k * sizeof *fv);
            int64_t *iv = malloc(k * sizeof *iv);
            FUZZ_ASSERT(fv && iv);
            const int frc = tfex_get_floats(f, fv), irc = tfex_get_int64s(f, iv);
            FUZZ_ASSERT(frc == ((f->kind == TFEX_FLOAT || f->kind == TFEX_INT64 || f->kind == TFEX_NONE) ? 0 : -1));
            FUZZ_ASSERT(irc == ((f->kind == TFEX_INT64 || f->kind == TFEX_NONE) ? 0 : -1));
            for (int64_t j = 0; frc == 0 && j < f->count; j++) h = tfrecord_crc32c(h, &fv[j], 4);
            free(fv);
            free(iv);
        }
        count++;
    }
    tfex_free(&ex);
    tfrecord_close(&r);
    fuzz_check(rc, &err, path);
    *digest = h;
    return rc < 0 ? -1 : count;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char plain[4096], gz[4096];
    fuzz_write("input.tfrecord", data, size, plain);
    uint32_t d1 = 0, d2 = 0;
    const int64_t c1 = read_file(plain, &d1);
    fuzz_path(gz, "input.tfrecord.gz");
    gzFile g = gzopen(gz, "wb1");
    FUZZ_ASSERT(g != NULL);
    FUZZ_ASSERT(size == 0 || gzwrite(g, data, (unsigned)size) == (int)size);
    FUZZ_ASSERT(gzclose(g) == Z_OK);
    const int64_t c2 = read_file(gz, &d2);
    FUZZ_ASSERT(c1 == c2);
    FUZZ_ASSERT(c1 < 0 || d1 == d2);
    /* the input as the payload of one valid record */
    uint8_t *framed = malloc(size + 16);
    FUZZ_ASSERT(framed != NULL);
    const size_t flen = tfrecord_frame(framed, data, size);
    char one[4096];
    fuzz_write("one.tfrecord", framed, flen, one);
    free(framed);
    uint32_t d3 = 0;
    FUZZ_ASSERT(read_file(one, &d3) == 1); /* the framing is valid: one record, decoded or refused */
    return 0;
}
