/* test_tfrecord.c — CRC-32C (known vectors; the table version against the bit-by-bit reference),
 * TFRecord framing (plain and gzip; GiGL's own asset), tf.Example decoding (packed and unpacked
 * lists, negative int64s, unknown fields, repeated map keys), and every kind of hostile input:
 * truncation at each byte, CRC mismatches, lying lengths, malformed wire format. Each failure
 * must be CGNN_ERR_INPUT naming the file and the record. */
#include <stdint.h>
#include <unistd.h>
#include <zlib.h>

#include "io/tfrecord.h"
#include "test.h"

/* ---- a tiny protobuf encoder (the test's own, independent of the decoder) ------------------ */
typedef struct enc {
    uint8_t b[8192];
    size_t n;
} enc;

static void put_varint(enc *e, uint64_t v) {
    do {
        uint8_t c = v & 0x7f;
        v >>= 7;
        e->b[e->n++] = c | (v ? 0x80 : 0);
    } while (v);
}
static void put_bytes_field(enc *e, int num, const void *p, size_t n) {
    put_varint(e, ((uint64_t)num << 3) | 2);
    put_varint(e, n);
    memcpy(e->b + e->n, p, n);
    e->n += n;
}
/* a Feature map entry {key, Feature{kind: list}} appended to a Features body */
static void put_entry(enc *features, const char *key, const enc *feature) {
    enc entry = {.n = 0};
    put_bytes_field(&entry, 1, key, strlen(key));
    put_bytes_field(&entry, 2, feature->b, feature->n);
    put_bytes_field(features, 1, entry.b, entry.n);
}
static void feat_floats(enc *f, const float *v, int n, int packed) {
    enc list = {.n = 0};
    if (packed) {
        put_bytes_field(&list, 1, v, (size_t)n * 4);
    } else {
        for (int i = 0; i < n; i++) {
            put_varint(&list, (1 << 3) | 5);
            memcpy(list.b + list.n, &v[i], 4);
            list.n += 4;
        }
    }
    f->n = 0;
    put_bytes_field(f, 2, list.b, list.n);
}
static void feat_ints(enc *f, const int64_t *v, int n, int packed) {
    enc list = {.n = 0}, pk = {.n = 0};
    for (int i = 0; i < n; i++) {
        if (packed) put_varint(&pk, (uint64_t)v[i]);
        else put_varint(&list, 1 << 3), put_varint(&list, (uint64_t)v[i]);
    }
    if (packed) put_bytes_field(&list, 1, pk.b, pk.n);
    f->n = 0;
    put_bytes_field(f, 3, list.b, list.n);
}
static void feat_bytes(enc *f, const char *s) {
    enc list = {.n = 0};
    put_bytes_field(&list, 1, s, strlen(s));
    f->n = 0;
    put_bytes_field(f, 1, list.b, list.n);
}
static void example_of(enc *ex, const enc *features) {
    ex->n = 0;
    put_bytes_field(ex, 1, features->b, features->n);
}

static char *tmp;

static void path_of(char *out, const char *name) { snprintf(out, 4096, "%s/%s", tmp, name); }

/* ---- CRC-32C ------------------------------------------------------------------------- */
TEST(crc32c_known_vectors) {
    /* RFC 3720 (iSCSI) B.4 and the classic check value */
    ASSERT_EQ(tfrecord_crc32c(0, "123456789", 9), 0xe3069283u);
    ASSERT_EQ(tfrecord_crc32c_ref(0, "123456789", 9), 0xe3069283u);
    uint8_t z[32] = {0}, ff[32], inc[32], dec[32];
    for (int i = 0; i < 32; i++) ff[i] = 0xff, inc[i] = (uint8_t)i, dec[i] = (uint8_t)(31 - i);
    ASSERT_EQ(tfrecord_crc32c(0, z, 32), 0x8a9136aau);
    ASSERT_EQ(tfrecord_crc32c(0, ff, 32), 0x62a8ab43u);
    ASSERT_EQ(tfrecord_crc32c(0, inc, 32), 0x46dd794eu);
    ASSERT_EQ(tfrecord_crc32c(0, dec, 32), 0x113fdb5cu);
    ASSERT_EQ(tfrecord_crc32c(0, "", 0), 0u);
    ASSERT_EQ(tfrecord_mask_crc(0), 0xa282ead8u);
    /* continuation: crc(a ++ b) == crc(crc(a), b) */
    ASSERT_EQ(tfrecord_crc32c(tfrecord_crc32c(0, "1234", 4), "56789", 5), 0xe3069283u);
}

TEST(crc32c_table_matches_reference) {
    uint8_t buf[1100];
    uint64_t s = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < sizeof buf; i++) s = s * 6364136223846793005ull + 1, buf[i] = (uint8_t)(s >> 56);
    for (size_t off = 0; off < 9; off++)
        for (size_t n = 0; n + off <= sizeof buf; n += (n < 40 ? 1 : 97))
            ASSERT_EQ(tfrecord_crc32c(7, buf + off, n), tfrecord_crc32c_ref(7, buf + off, n));
}

/* ---- framing ------------------------------------------------------------------------- */
/* Writes records recs[0..n) framed into name (gzip when gz); returns the byte image (plain). */
static size_t write_records(const char *name, const enc *recs, int n, uint8_t *img, int gz) {
    size_t len = 0;
    for (int i = 0; i < n; i++) len += tfrecord_frame(img + len, recs[i].b, recs[i].n);
    char p[4096];
    path_of(p, name);
    if (gz) {
        gzFile g = gzopen(p, "wb");
        gzwrite(g, img, (unsigned)len);
        gzclose(g);
    } else {
        test_write_file(tmp, name, img, len);
    }
    return len;
}

static void two_examples(enc recs[2]) {
    enc fs = {.n = 0}, f;
    const float fv[3] = {0.5f, -1.25f, 3.0f};
    const int64_t iv[2] = {7, -3};
    feat_floats(&f, fv, 3, 1);
    put_entry(&fs, "feat", &f);
    feat_ints(&f, iv, 2, 1);
    put_entry(&fs, "ids", &f);
    example_of(&recs[0], &fs);
    fs.n = 0;
    feat_floats(&f, fv, 2, 0); /* unpacked floats */
    put_entry(&fs, "feat", &f);
    feat_ints(&f, iv, 2, 0); /* unpacked ints */
    put_entry(&fs, "ids", &f);
    feat_bytes(&f, "hello");
    put_entry(&fs, "name", &f);
    example_of(&recs[1], &fs);
}

/* Reads every record of name; returns the count, or -1 with *err. */
static int read_all(const char *name, cgnn_err *err, tfex *ex) {
    char p[4096];
    path_of(p, name);
    tfrecord_reader r;
    if (tfrecord_open(&r, p, err) != 0) return -1;
    const uint8_t *d;
    size_t n;
    int rc, count = 0;
    char why[300];
    while ((rc = tfrecord_next(&r, &d, &n, err)) == 1) {
        if (ex && tfex_parse(ex, d, n, why, sizeof why) != 0) {
            err_set(err, CGNN_ERR_INPUT, "%s: record %d: %s", p, count, why);
            rc = -1;
            break;
        }
        count++;
    }
    tfrecord_close(&r);
    return rc < 0 ? -1 : count;
}

TEST(frame_roundtrip_plain_and_gzip) {
    enc recs[2];
    two_examples(recs);
    uint8_t img[4096];
    for (int gz = 0; gz < 2; gz++) {
        const char *name = gz ? "two.tfrecord.gz" : "two.tfrecord";
        write_records(name, recs, 2, img, gz);
        char p[4096];
        path_of(p, name);
        tfrecord_reader r;
        cgnn_err err = {0};
        ASSERT_EQ(tfrecord_open(&r, p, &err), 0);
        const uint8_t *d;
        size_t n;
        tfex ex = {0};
        char why[300];
        ASSERT_EQ(tfrecord_next(&r, &d, &n, &err), 1);
        ASSERT_EQ(n, recs[0].n);
        ASSERT_EQ(tfex_parse(&ex, d, n, why, sizeof why), 0);
        ASSERT_EQ(ex.n, 2);
        const tfex_feature *f = tfex_find(&ex, "feat");
        ASSERT(f && f->kind == TFEX_FLOAT && f->count == 3);
        float fv[3];
        ASSERT_EQ(tfex_get_floats(f, fv), 0);
        ASSERT(fv[0] == 0.5f && fv[1] == -1.25f && fv[2] == 3.0f);
        f = tfex_find(&ex, "ids");
        ASSERT(f && f->kind == TFEX_INT64 && f->count == 2);
        int64_t iv[2];
        ASSERT_EQ(tfex_get_int64s(f, iv), 0);
        ASSERT(iv[0] == 7 && iv[1] == -3);
        ASSERT_EQ(tfex_get_floats(f, fv), 0); /* integers read as floats */
        ASSERT(fv[0] == 7.0f && fv[1] == -3.0f);
        ASSERT_EQ(tfrecord_next(&r, &d, &n, &err), 1);
        ASSERT_EQ(tfex_parse(&ex, d, n, why, sizeof why), 0);
        ASSERT_EQ(ex.n, 3);
        f = tfex_find(&ex, "feat");
        ASSERT(f && f->count == 2);
        ASSERT_EQ(tfex_get_floats(f, fv), 0);
        ASSERT(fv[0] == 0.5f && fv[1] == -1.25f);
        f = tfex_find(&ex, "ids");
        ASSERT_EQ(tfex_get_int64s(f, iv), 0);
        ASSERT(iv[0] == 7 && iv[1] == -3);
        f = tfex_find(&ex, "name");
        ASSERT(f && f->kind == TFEX_BYTES && f->count == 1);
        ASSERT_EQ(tfex_get_floats(f, fv), -1); /* bytes are not numbers */
        ASSERT_EQ(tfex_get_int64s(f, iv), -1);
        ASSERT(tfex_find(&ex, "nope") == NULL);
        ASSERT_EQ(tfrecord_next(&r, &d, &n, &err), 0);
        tfex_free(&ex);
        tfrecord_close(&r);
    }
}

TEST(example_map_rules) {
    /* a key given twice keeps the last value; unknown fields skipped; two Features blocks merge */
    enc fs = {.n = 0}, f, ex;
    const int64_t a = 1, b = 2;
    feat_ints(&f, &a, 1, 1);
    put_entry(&fs, "k", &f);
    feat_ints(&f, &b, 1, 1);
    put_entry(&fs, "k", &f);
    put_varint(&fs, (7 << 3) | 0); /* unknown varint field 7 inside Features */
    put_varint(&fs, 300);
    example_of(&ex, &fs);
    enc fs2 = {.n = 0};
    const float x = 2.5f;
    feat_floats(&f, &x, 1, 1);
    put_entry(&fs2, "x", &f);
    put_bytes_field(&ex, 1, fs2.b, fs2.n); /* a second `features` field */
    put_bytes_field(&ex, 9, "zz", 2);      /* unknown length-delimited field */
    tfex e = {0};
    char why[300];
    ASSERT_EQ(tfex_parse(&e, ex.b, ex.n, why, sizeof why), 0);
    ASSERT_EQ(e.n, 2);
    int64_t v;
    ASSERT_EQ(tfex_get_int64s(tfex_find(&e, "k"), &v), 0);
    ASSERT_EQ(v, 2);
    ASSERT(tfex_find(&e, "x") && tfex_find(&e, "x")->kind == TFEX_FLOAT);
    /* an empty Example and a Feature with no list */
    ASSERT_EQ(tfex_parse(&e, ex.b, 0, why, sizeof why), 0);
    ASSERT_EQ(e.n, 0);
    tfex_free(&e);
}

TEST(many_keys) {
    /* 3000 keys (GiGL's preprocessor writes one key per scalar feature), each given twice: every
     * lookup finds its last value (the index is hashed; the map rules hold at any size) */
    /* ~110 KB: too big for enc's fixed buffer, so built in pieces */
    size_t cap = 1 << 20, n = 0;
    uint8_t *features = malloc(cap);
    enc f, entry;
    char key[32];
    for (int round = 0; round < 2; round++)
        for (int k = 0; k < 3000; k++) {
            const int64_t v = round * 100000 + k;
            feat_ints(&f, &v, 1, 1);
            snprintf(key, sizeof key, "f%d", k);
            entry.n = 0;
            put_entry(&entry, key, &f);
            memcpy(features + n, entry.b, entry.n);
            n += entry.n;
        }
    /* Example { features (field 1, length n) } */
    uint8_t *buf = malloc(n + 16);
    size_t m = 0;
    buf[m++] = 0x0a;
    for (size_t x = n; ; x >>= 7) {
        buf[m++] = (uint8_t)((x & 0x7f) | (x >> 7 ? 0x80 : 0));
        if (!(x >> 7)) break;
    }
    memcpy(buf + m, features, n);
    m += n;
    tfex e = {0};
    char why[300];
    ASSERT_EQ(tfex_parse(&e, buf, m, why, sizeof why), 0);
    ASSERT_EQ(e.n, 3000);
    for (int k = 0; k < 3000; k += 1) {
        snprintf(key, sizeof key, "f%d", k);
        const tfex_feature *ff = tfex_find(&e, key);
        int64_t v;
        ASSERT(ff != NULL);
        ASSERT_EQ(tfex_get_int64s(ff, &v), 0);
        ASSERT_EQ(v, 100000 + k);
    }
    ASSERT(tfex_find(&e, "f3000") == NULL && tfex_find(&e, "") == NULL);
    /* the same tfex reused for a small Example: the old index is cleared */
    enc small = {.n = 0}, sx;
    const int64_t one = 1;
    feat_ints(&f, &one, 1, 1);
    put_entry(&small, "f7", &f);
    example_of(&sx, &small);
    ASSERT_EQ(tfex_parse(&e, sx.b, sx.n, why, sizeof why), 0);
    ASSERT_EQ(e.n, 1);
    ASSERT(tfex_find(&e, "f8") == NULL && tfex_find(&e, "f7") != NULL);
    tfex_free(&e);
    free(features);
    free(buf);
}

TEST(gigl_asset_reads) {
    const char *src = getenv("CGNN_SOURCE_DIR");
    char p[4096];
    snprintf(p, sizeof p, "%s/tests/fixtures/gigl/scala/common/src/test/assets/subgraph_sampler/"
                          "supervised_node_classification/node_data/data.tfrecord",
             src ? src : "..");
    tfrecord_reader r;
    cgnn_err err = {0};
    if (tfrecord_open(&r, p, &err) != 0) TEST_FAIL_("%s", err.msg);
    const uint8_t *d;
    size_t n;
    tfex ex = {0};
    char why[300];
    int count = 0, rc;
    int seen[16] = {0};
    while ((rc = tfrecord_next(&r, &d, &n, &err)) == 1) {
        ASSERT_EQ(tfex_parse(&ex, d, n, why, sizeof why), 0);
        int64_t id, label;
        float f1;
        ASSERT_EQ(tfex_get_int64s(tfex_find(&ex, "node_id"), &id), 0);
        ASSERT_EQ(tfex_get_int64s(tfex_find(&ex, "node_label"), &label), 0);
        ASSERT_EQ(tfex_get_floats(tfex_find(&ex, "f1"), &f1), 0);
        ASSERT(id >= 0 && id < 16 && !seen[id]);
        seen[id] = 1;
        ASSERT(label == 1 || label == 2);
        ASSERT_EQ((int64_t)f1, id); /* GiGL's mock: f1 = node id */
        count++;
    }
    ASSERT_EQ(rc, 0);
    ASSERT_EQ(count, 16);
    tfex_free(&ex);
    tfrecord_close(&r);
}

/* ---- hostile files ------------------------------------------------------------------- */
static void expect_fail(const char *name, const char *what, int record) {
    cgnn_err err = {0};
    tfex ex = {0};
    int rc = read_all(name, &err, &ex);
    tfex_free(&ex);
    if (rc != -1) {
        fprintf(stderr, "%s: expected a failure (%s), read %d records\n", name, what, rc);
        test_cur_failed_ = 1;
        return;
    }
    char rec[64];
    snprintf(rec, sizeof rec, "record %d", record);
    if (err.code != CGNN_ERR_INPUT || !strstr(err.msg, name) || !strstr(err.msg, rec) || !strstr(err.msg, what)) {
        fprintf(stderr, "%s: message '%s' (code %d) lacks '%s' / '%s'\n", name, err.msg, err.code, rec, what);
        test_cur_failed_ = 1;
    }
}

TEST(truncated_at_every_byte) {
    enc recs[2];
    two_examples(recs);
    uint8_t img[4096];
    const size_t len = write_records("full.tfrecord", recs, 2, img, 0);
    const size_t first = recs[0].n + 16;
    for (size_t cut = 1; cut < len; cut++) {
        if (cut == first) continue; /* a clean end after record 0 */
        test_write_file(tmp, "cut.tfrecord", img, cut);
        expect_fail("cut.tfrecord", "truncated", cut < first ? 0 : 1);
        if (test_cur_failed_) TEST_FAIL_("cut at %zu of %zu", cut, len);
    }
    /* gzip: a cut stream, and a stream cut inside its deflate data */
    for (size_t cut = 1; cut < len; cut += 7) {
        if (cut == first) continue;
        char p[4096];
        path_of(p, "cut.tfrecord.gz");
        gzFile g = gzopen(p, "wb");
        gzwrite(g, img, (unsigned)cut);
        gzclose(g);
        cgnn_err err = {0};
        ASSERT_EQ(read_all("cut.tfrecord.gz", &err, NULL), -1);
        ASSERT_STR_CONTAINS(err.msg, "cut.tfrecord.gz: record ");
        ASSERT_EQ(err.code, CGNN_ERR_INPUT);
    }
    size_t gzlen;
    write_records("ok.tfrecord.gz", recs, 2, img, 1);
    char p[4096];
    path_of(p, "ok.tfrecord.gz");
    unsigned char *gzimg = test_slurp(p, &gzlen);
    ASSERT(gzimg && gzlen > 20);
    test_write_file(tmp, "cutz.tfrecord.gz", gzimg, gzlen - 12); /* deflate data cut */
    free(gzimg);
    cgnn_err err = {0};
    ASSERT_EQ(read_all("cutz.tfrecord.gz", &err, NULL), -1);
    ASSERT_STR_CONTAINS(err.msg, "cutz.tfrecord.gz: record ");
}

TEST(crc_mismatch_and_lying_lengths) {
    enc recs[2];
    two_examples(recs);
    uint8_t img[4096], bad[4096];
    const size_t len = write_records("full.tfrecord", recs, 2, img, 0);
    const size_t first = recs[0].n + 16;
    /* a flipped bit in each part of record 1: length, length CRC, data, data CRC */
    const struct {
        size_t at;
        const char *what;
    } flips[] = {{first + 0, "length CRC mismatch"},
                 {first + 9, "length CRC mismatch"},
                 {first + 12 + 3, "data CRC mismatch"},
                 {len - 1, "data CRC mismatch"}};
    for (size_t i = 0; i < sizeof flips / sizeof flips[0]; i++) {
        memcpy(bad, img, len);
        bad[flips[i].at] ^= 0x10;
        test_write_file(tmp, "flip.tfrecord", bad, len);
        expect_fail("flip.tfrecord", flips[i].what, 1);
        if (test_cur_failed_) return;
    }
    /* lying lengths with a VALID length CRC: past the file, and past the record limit */
    const uint64_t lies[] = {recs[1].n + 1, (uint64_t)1 << 40, ~(uint64_t)0};
    for (size_t i = 0; i < sizeof lies / sizeof lies[0]; i++) {
        memcpy(bad, img, len);
        for (int k = 0; k < 8; k++) bad[first + k] = (uint8_t)(lies[i] >> (8 * k));
        uint32_t c = tfrecord_mask_crc(tfrecord_crc32c(0, bad + first, 8));
        for (int k = 0; k < 4; k++) bad[first + 8 + k] = (uint8_t)(c >> (8 * k));
        test_write_file(tmp, "lie.tfrecord", bad, len);
        expect_fail("lie.tfrecord", i == 0 ? "truncated" : "length", 1);
        if (test_cur_failed_) return;
        /* the same lie inside a gzip stream: no allocation of the lie, "truncated" / "limit" */
        char p[4096];
        path_of(p, "lie.tfrecord.gz");
        gzFile g = gzopen(p, "wb");
        gzwrite(g, bad, (unsigned)len);
        gzclose(g);
        expect_fail("lie.tfrecord.gz", i == 0 ? "truncated" : (i == 1 ? "limit" : "limit"), 1);
        if (test_cur_failed_) return;
    }
    /* not a TFRecord at all */
    test_write_file(tmp, "text.tfrecord", "hello, this is not a tfrecord file\n", 35);
    expect_fail("text.tfrecord", "length CRC mismatch", 0);
}

TEST(malformed_examples) {
    char why[300];
    tfex e = {0};
    enc fs = {.n = 0}, f, ex;
    const float fv[2] = {1, 2};
    feat_floats(&f, fv, 2, 1);
    put_entry(&fs, "x", &f);
    example_of(&ex, &fs);
    ASSERT_EQ(tfex_parse(&e, ex.b, ex.n, why, sizeof why), 0);
    /* every strict prefix of a valid Example fails (each length runs past the end), or parses
     * to a shorter Example (a cut exactly at a field boundary of the outer message: only 0) */
    for (size_t cut = 1; cut < ex.n; cut++) {
        int rc = tfex_parse(&e, ex.b, cut, why, sizeof why);
        if (rc == 0) TEST_FAIL_("prefix %zu of %zu parsed", cut, ex.n);
        ASSERT(strlen(why) > 0);
    }
    /* a length varint that lies (huge) */
    uint8_t lie[] = {0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x00};
    ASSERT_EQ(tfex_parse(&e, lie, sizeof lie, why, sizeof why), -1);
    ASSERT_STR_CONTAINS(why, "past the");
    /* an 11-byte varint */
    uint8_t longv[] = {0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    ASSERT_EQ(tfex_parse(&e, longv, sizeof longv, why, sizeof why), -1);
    /* features with a varint wire type */
    uint8_t wt[] = {0x08, 0x01}; /* Example.features as a varint */
    ASSERT_EQ(tfex_parse(&e, wt, sizeof wt, why, sizeof why), -1);
    ASSERT_STR_CONTAINS(why, "Example.features");
    uint8_t wt2[] = {0x0a, 0x02, 0x08, 0x01};                         /* Features.feature as a varint */
    ASSERT_EQ(tfex_parse(&e, wt2, sizeof wt2, why, sizeof why), -1);
    ASSERT_STR_CONTAINS(why, "not a map entry");
    /* a packed float list of 5 bytes */
    enc list = {.n = 0}, feat = {.n = 0};
    put_bytes_field(&list, 1, "abcde", 5);
    put_bytes_field(&feat, 2, list.b, list.n);
    fs.n = 0;
    put_entry(&fs, "bad", &feat);
    example_of(&ex, &fs);
    ASSERT_EQ(tfex_parse(&e, ex.b, ex.n, why, sizeof why), -1);
    ASSERT_STR_CONTAINS(why, "feature 'bad'");
    ASSERT_STR_CONTAINS(why, "multiple of 4");
    /* an int64 list whose packed varint is cut */
    list.n = 0, feat.n = 0;
    put_bytes_field(&list, 1, "\x80\x80", 2);
    put_bytes_field(&feat, 3, list.b, list.n);
    fs.n = 0;
    put_entry(&fs, "ids", &feat);
    example_of(&ex, &fs);
    ASSERT_EQ(tfex_parse(&e, ex.b, ex.n, why, sizeof why), -1);
    ASSERT_STR_CONTAINS(why, "int64_list");
    /* a group wire type */
    uint8_t grp[] = {0x0b, 0x0c};
    ASSERT_EQ(tfex_parse(&e, grp, sizeof grp, why, sizeof why), -1);
    ASSERT_STR_CONTAINS(why, "wire type");
    tfex_free(&e);
}

int main(void) {
    tmp = test_tmpdir();
    RUN(crc32c_known_vectors);
    RUN(crc32c_table_matches_reference);
    RUN(frame_roundtrip_plain_and_gzip);
    RUN(example_map_rules);
    RUN(many_keys);
    RUN(gigl_asset_reads);
    RUN(truncated_at_every_byte);
    RUN(crc_mismatch_and_lying_lengths);
    RUN(malformed_examples);
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmp);
    free(tmp);
    return test_summary();
}
