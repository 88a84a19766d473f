/* test_tb_events.c — TensorBoard event files: CRC32C known answers and the fast CRC held to the
 * bitwise reference, the exact bytes of one Event, a file of many scalars read back here (every
 * record's framing and both CRCs, the decoded fields) and by tests/read_tb_events.py (an
 * independent reader with its own CRC32C, when /usr/bin/python3 exists), corruption detected,
 * tag truncation at UTF-8 boundaries, file naming, and open errors naming the path. */
#include <dirent.h>
#include <ftw.h>
#include <math.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"
#include "train/tb_events.h"
#include "util/rng.h"

/* ---- helpers ----------------------------------------------------------------------------- */


/* Number of entries in dir other than "." and ".."; the last one's name into last[256]. */
static int list_dir(const char *dir, char *last) {
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        n++;
        if (last) snprintf(last, 256, "%s", e->d_name);
    }
    closedir(d);
    return n;
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* Removes a test's temporary directory and everything in it. */
static void rm_tree(const char *dir) { nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS); }

static int have_python(void) { return access("/usr/bin/python3", X_OK) == 0; }

/* Runs tests/read_tb_events.py on path with extra args; returns its exit status (-1: no run). */
static int run_reader(const char *path, const char *extra) {
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 '%s/tests/read_tb_events.py' '%s' %s", test_source_dir(), path,
             extra);
    int st = system(cmd);
    if (st == -1 || !WIFEXITED(st)) return -1;
    return WEXITSTATUS(st);
}

static uint64_t le64(const unsigned char *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
    return v;
}
static uint32_t le32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* One TFRecord split out of a file. */
typedef struct rec {
    const unsigned char *data;
    size_t len;
} rec;

/* Splits blob into records (at most cap), checking framing and both CRCs of each.
 * Returns the record count, or -1 - (index of the first bad record). */
static int split_records(const unsigned char *blob, size_t n, rec *out, int cap) {
    size_t off = 0;
    int k = 0;
    while (off < n) {
        if (n - off < 12 || k >= cap) return -1 - k;
        uint64_t len = le64(blob + off);
        if (le32(blob + off + 8) != tb_masked_crc32c(blob + off, 8)) return -1 - k;
        if (len > n - off - 12 || n - off - 12 - len < 4) return -1 - k;
        const unsigned char *d = blob + off + 12;
        if (le32(d + len) != tb_masked_crc32c(d, (size_t)len)) return -1 - k;
        out[k].data = d;
        out[k].len = (size_t)len;
        k++;
        off += 12 + (size_t)len + 4;
    }
    return k;
}

/* A decoded Event (the fields we write). */
#define DEC_MAX_VALUES 128
typedef struct dec_event {
    int has_wall, has_step, has_summary;
    double wall_time;
    int64_t step;
    char file_version[64];
    int n;
    char tag[DEC_MAX_VALUES][TB_MAX_TAG_BYTES + 1];
    uint32_t bits[DEC_MAX_VALUES];
} dec_event;

static int dec_varint(const unsigned char **p, const unsigned char *end, uint64_t *v) {
    *v = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        if (*p >= end) return -1;
        unsigned char b = *(*p)++;
        *v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) return 0;
    }
    return -1;
}

/* Decodes Value {tag, simple_value} into slot i of e. */
static int dec_value(const unsigned char *p, const unsigned char *end, dec_event *e, int i) {
    while (p < end) {
        uint64_t key, n;
        if (dec_varint(&p, end, &key)) return -1;
        if (key == (1 << 3 | 2)) {
            if (dec_varint(&p, end, &n) || n > (uint64_t)(end - p) || n > TB_MAX_TAG_BYTES) return -1;
            memcpy(e->tag[i], p, (size_t)n);
            e->tag[i][n] = '\0';
            p += n;
        } else if (key == (2 << 3 | 5)) {
            if (end - p < 4) return -1;
            e->bits[i] = le32(p);
            p += 4;
        } else {
            return -1;
        }
    }
    return 0;
}

/* Decodes an Event; returns 0, or -1 on anything unexpected. */
static int dec_event_parse(const unsigned char *p, size_t len, dec_event *e) {
    memset(e, 0, sizeof *e);
    const unsigned char *end = p + len;
    while (p < end) {
        uint64_t key, v, n;
        if (dec_varint(&p, end, &key)) return -1;
        switch (key) {
        case 1 << 3 | 1:
            if (end - p < 8) return -1;
            v = le64(p);
            memcpy(&e->wall_time, &v, 8);
            e->has_wall = 1;
            p += 8;
            break;
        case 2 << 3 | 0:
            if (dec_varint(&p, end, &v)) return -1;
            e->step = (int64_t)v;
            e->has_step = 1;
            break;
        case 3 << 3 | 2:
            if (dec_varint(&p, end, &n) || n > (uint64_t)(end - p) || n >= sizeof e->file_version) return -1;
            memcpy(e->file_version, p, (size_t)n);
            p += n;
            break;
        case 5 << 3 | 2: {
            if (dec_varint(&p, end, &n) || n > (uint64_t)(end - p)) return -1;
            const unsigned char *q = p, *qend = p + n;
            e->has_summary = 1;
            while (q < qend) {
                uint64_t k2, m;
                if (dec_varint(&q, qend, &k2) || k2 != (1 << 3 | 2)) return -1;
                if (dec_varint(&q, qend, &m) || m > (uint64_t)(qend - q) || e->n >= DEC_MAX_VALUES) return -1;
                if (dec_value(q, q + m, e, e->n++)) return -1;
                q += m;
            }
            p = qend;
            break;
        }
        default:
            return -1;
        }
    }
    return 0;
}

static uint32_t float_bits(float x) {
    uint32_t b;
    memcpy(&b, &x, 4);
    return b;
}

/* Writes s as a JSON string to f. */
static void json_str(FILE *f, const char *s) {
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
        else if (*p < 0x20) fprintf(f, "\\u%04x", *p);
        else fputc(*p, f);
    }
    fputc('"', f);
}

/* ---- CRC32C ------------------------------------------------------------------------------ */

TEST(crc32c_known_answers) {
    const char *s = "123456789";
    ASSERT_EQ(tb_crc32c(0, s, 9), 0xE3069283u);
    ASSERT_EQ(tb_crc32c_ref(0, s, 9), 0xE3069283u);
    unsigned char zeros[32] = {0}, ones[32], inc[32];
    for (int i = 0; i < 32; i++) {
        ones[i] = 0xff;
        inc[i] = (unsigned char)i;
    }
    /* RFC 3720 (iSCSI) B.4 test vectors. */
    ASSERT_EQ(tb_crc32c(0, zeros, 32), 0x8A9136AAu);
    ASSERT_EQ(tb_crc32c_ref(0, zeros, 32), 0x8A9136AAu);
    ASSERT_EQ(tb_crc32c(0, ones, 32), 0x62A8AB43u);
    ASSERT_EQ(tb_crc32c(0, inc, 32), 0x46DD794Eu);
    ASSERT_EQ(tb_crc32c(0, "", 0), 0u);
    ASSERT_EQ(tb_crc32c_ref(0, "", 0), 0u);
    /* Chaining: CRC(a ++ b) from CRC(a). */
    ASSERT_EQ(tb_crc32c(tb_crc32c(0, s, 4), s + 4, 5), 0xE3069283u);
    ASSERT_EQ(tb_crc32c_ref(tb_crc32c_ref(0, s, 7), s + 7, 2), 0xE3069283u);
}

TEST(crc32c_fast_matches_ref) {
    enum { MAX = 4096 + 64 };
    unsigned char *buf = (unsigned char *)malloc(MAX);
    rng r;
    rng_init(&r, 12345);
    for (int i = 0; i < MAX; i++) buf[i] = (unsigned char)(rng_next_u64(&r) >> 24);
    for (size_t len = 0; len <= 300; len++)
        for (size_t off = 0; off < 8; off++) {
            uint32_t seed = (uint32_t)rng_next_u64(&r);
            uint32_t a = tb_crc32c(seed, buf + off, len), b = tb_crc32c_ref(seed, buf + off, len);
            if (a != b) {
                free(buf);
                TEST_FAIL_("len %zu off %zu: fast %#x != ref %#x", len, off, a, b);
            }
        }
    size_t big[] = {1000, 1023, 1024, 1025, 4095, 4096, 4096 + 63};
    for (size_t k = 0; k < sizeof big / sizeof big[0]; k++) {
        uint32_t a = tb_crc32c(0, buf, big[k]), b = tb_crc32c_ref(0, buf, big[k]);
        if (a != b) {
            free(buf);
            TEST_FAIL_("len %zu: fast %#x != ref %#x", big[k], a, b);
        }
    }
    /* Split anywhere: chained fast CRC == one-shot reference. */
    for (size_t cut = 0; cut <= 100; cut += 7)
        if (tb_crc32c(tb_crc32c(0, buf, cut), buf + cut, 100 - cut) != tb_crc32c_ref(0, buf, 100)) {
            free(buf);
            TEST_FAIL_("chained CRC differs at cut %zu", cut);
        }
    free(buf);
}

TEST(masked_crc) {
    /* ((crc >> 15) | (crc << 17)) + 0xa282ead8 of CRC32C("123456789") = 0xE3069283. */
    uint32_t crc = 0xE3069283u;
    uint32_t want = ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
    ASSERT_EQ(want, 0xc78ab0e5u); /* the same value computed by read_tb_events.py */
    ASSERT_EQ(tb_masked_crc32c("123456789", 9), 0xc78ab0e5u);
    unsigned char len26[8] = {26, 0, 0, 0, 0, 0, 0, 0};
    ASSERT_EQ(tb_masked_crc32c(len26, 8), 0x2dd89b12u);
}

/* ---- files ------------------------------------------------------------------------------- */

TEST(file_name_and_first_record) {
    char *dir = test_tmpdir();
    char logdir[4096];
    snprintf(logdir, sizeof logdir, "%s/runs/a/b", dir); /* mkdir -p */
    tb_writer w;
    cgnn_err err = {0};
    double before = tb_wall_time();
    ASSERT_EQ(tb_open(&w, logdir, &err), 0);
    tb_close(&w);
    tb_close(&w); /* idempotent */
    tb_close(NULL);
    ASSERT_EQ(tb_check(&w, &err), 0);

    char name[256];
    ASSERT_EQ(list_dir(logdir, name), 1);
    char host[256];
    gethostname(host, sizeof host);
    host[255] = '\0';
    char want_mid[600];
    snprintf(want_mid, sizeof want_mid, ".%s.%ld.cgnn", host, (long)getpid());
    ASSERT(strncmp(name, "events.out.tfevents.", 20) == 0);
    ASSERT_STR_CONTAINS(name, want_mid);
    ASSERT(strcmp(name + strlen(name) - 5, ".cgnn") == 0);
    long long secs = atoll(name + 20);
    ASSERT(secs >= (long long)before - 1 && secs <= (long long)tb_wall_time() + 1);
    ASSERT_STR_CONTAINS(w.path, name);

    size_t n;
    unsigned char *blob = test_slurp(w.path, &n);
    ASSERT(blob);
    rec r[4];
    int k = split_records(blob, n, r, 4);
    dec_event *e = (dec_event *)malloc(sizeof *e);
    int ok = k == 1 && dec_event_parse(r[0].data, r[0].len, e) == 0;
    int fields_ok = ok && e->has_wall && !e->has_step && !e->has_summary &&
                    strcmp(e->file_version, "brain.Event:2") == 0 && e->wall_time >= before - 1 &&
                    e->wall_time <= tb_wall_time() + 1;
    free(e);
    free(blob);
    ASSERT_EQ(k, 1);
    ASSERT(ok);
    ASSERT(fields_ok);

    /* A second writer in the same second and process never overwrites the first file. */
    tb_writer w2, w3;
    ASSERT_EQ(tb_open(&w2, logdir, &err), 0);
    ASSERT_EQ(tb_open(&w3, logdir, &err), 0);
    ASSERT(strcmp(w2.path, w.path) != 0 && strcmp(w3.path, w.path) != 0 && strcmp(w2.path, w3.path) != 0);
    ASSERT_STR_CONTAINS(w2.path, "events.out.tfevents.");
    ASSERT(strcmp(w2.path + strlen(w2.path) - 5, ".cgnn") == 0);
    tb_close(&w2);
    tb_close(&w3);
    ASSERT_EQ(list_dir(logdir, NULL), 3);
    rm_tree(dir);
    free(dir);
}

TEST(exact_event_bytes) {
    char *dir = test_tmpdir();
    tb_writer w;
    cgnn_err err = {0};
    ASSERT_EQ(tb_open(&w, dir, &err), 0);
    tb_add_scalar(&w, 5, 1.5, "loss", 0.25f);
    tb_add_scalar(&w, 0, 2.0, "a", 1.0f);
    tb_close(&w);
    ASSERT_EQ(w.records, 3);
    size_t n;
    unsigned char *blob = test_slurp(w.path, &n);
    ASSERT(blob);
    rec r[4];
    int k = split_records(blob, n, r, 4);
    /* Event {wall_time: 1.5, step: 5, summary {value {tag: "loss", simple_value: 0.25}}} */
    static const unsigned char want[] = {
        0x09, 0, 0, 0, 0, 0, 0, 0xF8, 0x3F,   /* 1: fixed64 1.5 */
        0x10, 0x05,                           /* 2: varint 5 */
        0x2A, 13,                             /* 5: Summary, 13 bytes */
        0x0A, 11,                             /*   1: Value, 11 bytes */
        0x0A, 4, 'l', 'o', 's', 's',          /*     1: tag */
        0x15, 0x00, 0x00, 0x80, 0x3E,         /*     2: fixed32 0.25f */
    };
    /* Step 0 is proto3's default: left out, as the protobuf library does. */
    static const unsigned char want0[] = {
        0x09, 0, 0, 0, 0, 0, 0, 0, 0x40,      /* 1: fixed64 2.0 */
        0x2A, 10, 0x0A, 8, 0x0A, 1, 'a',      /* 5: Summary { 1: Value { 1: "a" */
        0x15, 0x00, 0x00, 0x80, 0x3F,         /*   2: fixed32 1.0f } } */
    };
    int same = k == 3 && r[1].len == sizeof want && memcmp(r[1].data, want, sizeof want) == 0;
    int same0 = k == 3 && r[2].len == sizeof want0 && memcmp(r[2].data, want0, sizeof want0) == 0;
    /* The framing of the first one, byte for byte. */
    const unsigned char *hdr = r[1].data - 12;
    int frame_ok = k == 3 && le64(hdr) == 26 && le32(hdr + 8) == 0x2dd89b12u && hdr + 12 + 26 + 4 == r[2].data - 12;
    free(blob);
    ASSERT_EQ(k, 3);
    ASSERT(same);
    ASSERT(same0);
    ASSERT(frame_ok);
    rm_tree(dir);
    free(dir);
}

/* The expected contents of the round-trip file. */
#define RT_MAX_EVENTS 16
typedef struct rt_event {
    int64_t step;
    double wall;
    int n;
    const char *tags[DEC_MAX_VALUES];
    float values[DEC_MAX_VALUES];
    char want_tag[DEC_MAX_VALUES][TB_MAX_TAG_BYTES + 1]; /* after truncation */
} rt_event;

/* The first bytes of s that fit in limit without splitting a UTF-8 character (test-side). */
static void utf8_prefix(char *out, const char *s, size_t limit) {
    size_t n = 0, len = strlen(s);
    while (n < len) {
        unsigned char c = (unsigned char)s[n];
        size_t cl = c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
        if (n + cl > limit) break;
        n += cl;
    }
    memcpy(out, s, n);
    out[n] = '\0';
}

TEST(round_trip_many_scalars) {
    char *dir = test_tmpdir();
    tb_writer w;
    cgnn_err err = {0};
    ASSERT_EQ(tb_open(&w, dir, &err), 0);

    /* Tags: ASCII, UTF-8, and long ones cut at TB_MAX_TAG_BYTES (ASCII; 2-byte and 3-byte
     * characters that straddle the limit). */
    static char long_ascii[400], long_2byte[600], long_3byte[900];
    memset(long_ascii, 'x', sizeof long_ascii - 1);
    for (int i = 0; i < 299; i++) memcpy(long_2byte + 2 * i, "\xC3\xA9", 2);   /* é */
    for (int i = 0; i < 299; i++) memcpy(long_3byte + 3 * i, "\xE8\xAE\xAD", 3); /* 训 */
    static char many_tags[100][16];
    for (int i = 0; i < 100; i++) snprintf(many_tags[i], sizeof many_tags[i], "m/%d", i);

    static rt_event ev[RT_MAX_EVENTS];
    memset(ev, 0, sizeof ev);
    int ne = 0;
    const float specials[] = {0.0f, -0.0f, 1.0f / 3.0f, 1e-45f /* denormal */, 3.4028235e38f, -2.5f,
                              INFINITY, -INFINITY, NAN};
    const int64_t steps[] = {0, 1, 127, 128, 16384, (int64_t)1 << 40, INT64_MAX, -1, 7};
    for (int i = 0; i < 9; i++) {
        ev[ne].step = steps[i];
        ev[ne].wall = 1.7e9 + i * 0.123456789;
        ev[ne].n = 1;
        ev[ne].tags[0] = i % 2 ? "train/loss" : "val/acc \"quoted\" \\ \xE8\xAE\xAD\xE7\xBB\x83";
        ev[ne].values[0] = specials[i];
        ne++;
    }
    /* Several values in one Event, including the long tags. */
    ev[ne].step = 10;
    ev[ne].wall = 1.7e9 + 10;
    ev[ne].n = 4;
    ev[ne].tags[0] = long_ascii;
    ev[ne].tags[1] = long_2byte;
    ev[ne].tags[2] = long_3byte;
    ev[ne].tags[3] = "";
    for (int j = 0; j < 4; j++) ev[ne].values[j] = (float)j * 0.5f - 1.0f;
    ne++;
    /* 100 values: written as two Events (64 + 36) with the same step. */
    int big = ne;
    for (int part = 0; part < 2; part++, ne++) {
        ev[ne].step = 11;
        ev[ne].wall = 1.7e9 + 11;
        ev[ne].n = part ? 36 : 64;
        for (int j = 0; j < ev[ne].n; j++) {
            ev[ne].tags[j] = many_tags[part * 64 + j];
            ev[ne].values[j] = (float)(part * 64 + j) * 0.01f;
        }
    }
    for (int i = 0; i < ne; i++)
        for (int j = 0; j < ev[i].n; j++) utf8_prefix(ev[i].want_tag[j], ev[i].tags[j], TB_MAX_TAG_BYTES);
    ASSERT_EQ(strlen(ev[9].want_tag[0]), 255);
    ASSERT_EQ(strlen(ev[9].want_tag[1]), 254);
    ASSERT_EQ(strlen(ev[9].want_tag[2]), 255);

    for (int i = 0; i < ne; i++) {
        if (i == big) {
            const char *tags[100];
            float values[100];
            for (int j = 0; j < 100; j++) {
                tags[j] = many_tags[j];
                values[j] = (float)j * 0.01f;
            }
            tb_add_scalars(&w, 11, 1.7e9 + 11, tags, values, 100);
            i++; /* both parts */
        } else if (ev[i].n == 1) {
            tb_add_scalar(&w, ev[i].step, ev[i].wall, ev[i].tags[0], ev[i].values[0]);
        } else {
            tb_add_scalars(&w, ev[i].step, ev[i].wall, ev[i].tags, ev[i].values, ev[i].n);
        }
        if (i == 3) tb_flush(&w);
    }
    tb_add_scalars(&w, 99, 0, NULL, NULL, 0); /* nothing */
    tb_close(&w);
    ASSERT_EQ(tb_check(&w, &err), 0);
    ASSERT_EQ(w.records, 1 + ne);

    /* Read back in C: framing, both CRCs, every field. */
    size_t n;
    unsigned char *blob = test_slurp(w.path, &n);
    ASSERT(blob);
    rec r[RT_MAX_EVENTS + 2];
    int k = split_records(blob, n, r, RT_MAX_EVENTS + 2);
    dec_event *e = (dec_event *)malloc(sizeof *e);
    char bad[512] = "";
    if (k != 1 + ne) snprintf(bad, sizeof bad, "%d records, expected %d", k, 1 + ne);
    for (int i = 0; !bad[0] && i < ne; i++) {
        if (dec_event_parse(r[1 + i].data, r[1 + i].len, e) != 0) {
            snprintf(bad, sizeof bad, "event %d: cannot decode", i);
            break;
        }
        if (!e->has_summary || e->step != ev[i].step || e->wall_time != ev[i].wall || e->n != ev[i].n)
            snprintf(bad, sizeof bad, "event %d: step %lld n %d wall %.17g", i, (long long)e->step, e->n,
                     e->wall_time);
        for (int j = 0; !bad[0] && j < e->n; j++)
            if (strcmp(e->tag[j], ev[i].want_tag[j]) != 0 || e->bits[j] != float_bits(ev[i].values[j]))
                snprintf(bad, sizeof bad, "event %d value %d: tag '%.40s' bits %#x", i, j, e->tag[j], e->bits[j]);
    }
    free(e);
    if (bad[0]) {
        free(blob);
        TEST_FAIL_("%s", bad);
    }

    /* Corrupting any byte of a record is caught (header, data or trailing CRC). */
    size_t probes[] = {3, 9, 40, n / 2, n - 1};
    for (size_t p = 0; p < sizeof probes / sizeof probes[0]; p++) {
        blob[probes[p]] ^= 0x40;
        int kk = split_records(blob, n, r, RT_MAX_EVENTS + 2);
        blob[probes[p]] ^= 0x40;
        if (kk >= 0) {
            free(blob);
            TEST_FAIL_("flipping byte %zu went unnoticed", probes[p]);
        }
    }

    if (!have_python()) {
        free(blob);
        rm_tree(dir);
        free(dir);
        SKIP("/usr/bin/python3 not found: the independent Python reader did not run");
    }
    /* The expectations for the Python reader. */
    char expect[4096];
    snprintf(expect, sizeof expect, "%s/expect.json", dir);
    FILE *f = fopen(expect, "w");
    ASSERT(f);
    fputs("{\"file_version\": \"brain.Event:2\", \"events\": [\n", f);
    for (int i = 0; i < ne; i++) {
        fprintf(f, "%s{\"step\": %lld, \"wall_time\": %.17g, \"values\": [", i ? ",\n" : "", (long long)ev[i].step,
                ev[i].wall);
        for (int j = 0; j < ev[i].n; j++) {
            float v = ev[i].values[j];
            fprintf(f, "%s{\"tag\": ", j ? ", " : "");
            json_str(f, ev[i].want_tag[j]);
            if (isnan(v)) fputs(", \"value\": null", f);
            else if (isinf(v)) fprintf(f, ", \"value\": %sInfinity", v < 0 ? "-" : "");
            else fprintf(f, ", \"value\": %.9g", (double)v);
            fprintf(f, ", \"bits\": %u}", float_bits(v));
        }
        fputs("]}", f);
    }
    fputs("\n]}\n", f);
    ASSERT_EQ(fclose(f), 0);
    char args[8192];
    snprintf(args, sizeof args, "--expect '%s' --scalar train/loss 1099511627776 -2.5 --scalar m/5 11 0.05 --scalar m/99 11 0.99", expect);
    ASSERT_EQ(run_reader(w.path, args), 0);
    /* The reader is not a rubber stamp: a wrong expectation and a corrupted copy both fail. */
    ASSERT_NE(run_reader(w.path, "--scalar train/loss 1099511627776 0.5 2>/dev/null"), 0);
    char bad_path[4096];
    snprintf(bad_path, sizeof bad_path, "%s/corrupt.tfevents", dir);
    blob[n / 2] ^= 0x01;
    f = fopen(bad_path, "wb");
    ASSERT(f);
    fwrite(blob, 1, n, f);
    fclose(f);
    free(blob);
    char errfile[4096], redirect[4200];
    snprintf(errfile, sizeof errfile, "%s/reader.err", dir);
    snprintf(redirect, sizeof redirect, "2>'%s'", errfile);
    ASSERT_EQ(run_reader(bad_path, redirect), 1);
    size_t elen;
    char *emsg = (char *)test_slurp(errfile, &elen);
    ASSERT(emsg);
    emsg[elen] = '\0';
    int says_crc = strstr(emsg, "data CRC") != NULL;
    if (!says_crc) fprintf(stderr, "reader said: %s\n", emsg);
    free(emsg);
    ASSERT(says_crc);
    rm_tree(dir);
    free(dir);
}

TEST(disabled_and_errors) {
    tb_writer w;
    cgnn_err err = {0};
    ASSERT_EQ(tb_open(&w, "", &err), 0);
    tb_add_scalar(&w, 1, 1.0, "x", 1.0f);
    tb_flush(&w);
    ASSERT_EQ(tb_check(&w, &err), 0);
    tb_close(&w);
    ASSERT_EQ(tb_open(&w, NULL, &err), 0);
    tb_close(&w);

    /* A log directory below a regular file cannot be created: the error names the path. */
    char *dir = test_tmpdir();
    ASSERT_EQ(test_write_file(dir, "file", "x", 1), 0);
    char logdir[4096];
    snprintf(logdir, sizeof logdir, "%s/file/runs", dir);
    ASSERT_EQ(tb_open(&w, logdir, &err), -1);
    ASSERT_EQ(err.code, CGNN_ERR_RUNTIME);
    ASSERT_STR_CONTAINS(err.msg, dir);
    tb_add_scalar(&w, 1, 1.0, "x", 1.0f); /* a failed open leaves a disabled writer */
    tb_close(&w);

    /* An unwritable directory (skipped as root, who may write anywhere). */
    if (geteuid() != 0) {
        char ro[4096];
        snprintf(ro, sizeof ro, "%s/ro", dir);
        ASSERT_EQ(mkdir(ro, 0555), 0);
        err_clear(&err);
        ASSERT_EQ(tb_open(&w, ro, &err), -1);
        ASSERT_EQ(err.code, CGNN_ERR_RUNTIME);
        ASSERT_STR_CONTAINS(err.msg, "events.out.tfevents.");
        rmdir(ro);
    }

    /* Write errors are remembered and reported by tb_check (/dev/full: ENOSPC on flush). */
    if (access("/dev/full", W_OK) == 0) {
        ASSERT_EQ(tb_open(&w, dir, &err), 0);
        FILE *full = fopen("/dev/full", "wb");
        ASSERT(full);
        fclose(w.fp);
        w.fp = full;
        tb_add_scalar(&w, 1, 1.0, "x", 1.0f);
        tb_flush(&w);
        err_clear(&err);
        ASSERT_EQ(tb_check(&w, &err), -1);
        ASSERT_EQ(err.code, CGNN_ERR_RUNTIME);
        ASSERT_STR_CONTAINS(err.msg, w.path);
        tb_add_scalar(&w, 2, 1.0, "x", 1.0f); /* dropped, no crash */
        tb_close(&w);
        ASSERT_EQ(tb_check(&w, &err), -1);
    }
    rm_tree(dir);
    free(dir);
}

int main(void) {
    RUN(crc32c_known_answers);
    RUN(crc32c_fast_matches_ref);
    RUN(masked_crc);
    RUN(file_name_and_first_record);
    RUN(exact_event_bytes);
    RUN(round_trip_many_scalars);
    RUN(disabled_and_errors);
    return test_summary();
}
