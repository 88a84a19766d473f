/* test_torch_save.c — io/torch_save (PyTorch's zip checkpoint format) and train/gigl_ckpt (cgnn's
 * model in GiGL's state_dict layout):
 *   - round trips: keys, shapes (0 to 4 dims, an empty tensor with a dim past 2^31), bits,
 *     metadata; 1500 tensors (SETITEMS batches, memo ids past 255); forced zip64 fields;
 *   - the layout, checked by an independent zip walker: record names and order, 64-byte aligned
 *     data, CRC-32s, version / byteorder / serialization_id, the zip64 end records, the archive
 *     folder named after the file; the same bytes when written twice;
 *   - files PyTorch itself wrote (tests/fixtures/torch_save, scripts/fixtures/
 *     make_torch_save_fixtures.py): a state_dict read back to the same values, and refusals of a
 *     LongStorage, views, the legacy format, TorchScript, compressed records, an os.system pickle;
 *   - hostile archives and pickles built here (unknown opcodes and globals, memo and stack abuse,
 *     missing or mis-sized records, a big-endian byteorder), every truncation and every single-bit
 *     flip of a valid file: an input error naming the file, never a crash or garbage;
 *   - gigl_ckpt: GiGL's keys, the node classification head ([I | 0], padded last layer) and its
 *     exact inverse, a GiGL-trained head folded into the last layer, the architecture read off the
 *     keys of a file without cgnn's metadata, and the errors (wrong task, a GAT with a head). */
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "io/npy.h"
#include "io/torch_save.h"
#include "nn/model.h"
#include "test.h"
#include "train/gigl_ckpt.h"

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st, (void)flag, (void)ftw;
    return remove(p);
}
static void rm_tree(const char *d) { nftw(d, rm_entry, 16, FTW_DEPTH | FTW_PHYS); }

static uint32_t rd16(const unsigned char *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t rd32(const unsigned char *p) { return rd16(p) | rd16(p + 2) << 16; }
static uint64_t rd64(const unsigned char *p) { return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32; }

/* An independent walk over the local headers, in file order. */
typedef struct zent {
    char name[256];
    size_t data, size;
    uint32_t crc;
} zent;
static int walk_zip(const unsigned char *b, size_t len, zent *out, int cap) {
    size_t at = 0;
    int n = 0;
    while (at + 30 <= len && rd32(b + at) == 0x04034b50 && n < cap) {
        const size_t nl = rd16(b + at + 26), xl = rd16(b + at + 28);
        zent *e = &out[n++];
        snprintf(e->name, sizeof e->name, "%.*s", (int)nl, (const char *)b + at + 30);
        e->crc = rd32(b + at + 14);
        e->size = rd32(b + at + 22);
        if (e->size == 0xFFFFFFFFu) /* zip64 local extra: usize, csize */
            for (size_t x = at + 30 + nl; x + 4 <= at + 30 + nl + xl; x += 4 + rd16(b + x + 2))
                if (rd16(b + x) == 1) e->size = (size_t)rd64(b + x + 4);
        e->data = at + 30 + nl + xl;
        at = e->data + e->size;
    }
    return n;
}

static void fill(float *p, int64_t n, float scale) {
    for (int64_t i = 0; i < n; i++) p[i] = scale * (float)((i * 37 + 11) % 101 - 50) / 7.0f;
}

/* Asserts that the header read of path fails with an input error naming path and containing want. */
#define ASSERT_REFUSED(path, want)                                                             \
    do {                                                                                       \
        ts_file f_;                                                                            \
        cgnn_err e_ = {0};                                                                     \
        ASSERT_EQ(torch_save_read_header(&f_, (path), &e_), -1);                              \
        ASSERT_EQ(e_.code, CGNN_ERR_INPUT);                                                    \
        ASSERT_STR_CONTAINS(e_.msg, (path));                                                   \
        ASSERT_STR_CONTAINS(e_.msg, (want));                                                   \
        ASSERT_EQ(f_.n, 0);                                                                    \
    } while (0)

TEST(roundtrip_and_layout) {
    char *dir = test_tmpdir(), path[4200], path2[4200];
    snprintf(path, sizeof path, "%s/weights.pt", dir);
    snprintf(path2, sizeof path2, "%s/again/weights.pt", dir);
    float w[15], b[3], sc[1] = {7.0f}, att[8], four[12];
    fill(w, 15, 1.0f), fill(b, 3, -0.5f), fill(att, 8, 2.0f), fill(four, 12, 0.25f);
    const ts_tensor t[6] = {{"a.weight", 2, {3, 5}, w},           {"a.bias", 1, {3}, b},
                            {"scalar", 0, {0}, sc},               {"att", 3, {1, 2, 4}, att},
                            {"four", 4, {2, 1, 3, 2}, four},      {"empty", 2, {0, 3000000000LL}, NULL}};
    const char *meta[] = {"cgnn_model", "GraphSAGE", "note", "\xc3\xbcnicode"};
    cgnn_err err = {0};
    ASSERT_EQ(torch_save_write(path, t, 6, meta, 2, &err), 0);
    ts_file f;
    ASSERT_EQ(torch_save_read_header(&f, path, &err), 0);
    ASSERT_EQ(f.n, 6);
    for (int i = 0; i < 6; i++) {
        ASSERT(strcmp(f.names[i], t[i].name) == 0);
        ASSERT_EQ(f.ndims[i], t[i].ndim);
        for (int d = 0; d < 4; d++) ASSERT_EQ(f.shapes[i][d], d < t[i].ndim ? t[i].shape[d] : 1);
        ASSERT_EQ(torch_save_find(&f, t[i].name), i);
        const int64_t k = torch_save_numel(&f, i);
        float buf[16] = {0};
        ASSERT(k <= 16);
        ASSERT_EQ(torch_save_read_tensor(&f, i, buf, &err), 0);
        ASSERT(k == 0 || memcmp(buf, t[i].data, (size_t)k * 4) == 0);
    }
    ASSERT_EQ(torch_save_numel(&f, 5), 0);
    ASSERT_EQ(f.n_meta, 2);
    ASSERT(strcmp(torch_save_meta(&f, "cgnn_model"), "GraphSAGE") == 0);
    ASSERT(strcmp(torch_save_meta(&f, "note"), "\xc3\xbcnicode") == 0);
    ASSERT(torch_save_meta(&f, "absent") == NULL);
    ASSERT_EQ(torch_save_find(&f, "absent"), -1);
    torch_save_free(&f);

    /* the bytes, by an independent walk */
    size_t len;
    unsigned char *bytes = test_slurp(path, &len);
    ASSERT(bytes);
    zent z[16];
    const int nz = walk_zip(bytes, len, z, 16);
    static const char *const want[] = {"weights/data.pkl", "weights/byteorder", "weights/data/0", "weights/data/1",
                                       "weights/data/2",   "weights/data/3",    "weights/data/4", "weights/data/5",
                                       "weights/version",  "weights/.data/serialization_id"};
    ASSERT_EQ(nz, 10);
    for (int i = 0; i < nz; i++) {
        ASSERT(strcmp(z[i].name, want[i]) == 0);
        ASSERT_EQ(z[i].data % 64, 0);
        ASSERT_EQ(crc32(0, bytes + z[i].data, (uInt)z[i].size), z[i].crc);
    }
    ASSERT(z[1].size == 6 && memcmp(bytes + z[1].data, "little", 6) == 0);
    ASSERT(z[8].size == 2 && memcmp(bytes + z[8].data, "3\n", 2) == 0);
    ASSERT_EQ(z[9].size, 40);
    for (int k = 0; k < 40; k++) ASSERT(bytes[z[9].data + k] >= '0' && bytes[z[9].data + k] <= '9');
    ASSERT(z[2].size == 60 && memcmp(bytes + z[2].data, w, 60) == 0);
    ASSERT_EQ(z[7].size, 0);
    ASSERT(memcmp(bytes, "PK\x03\x04", 4) == 0);                   /* torch's _is_zipfile test */
    ASSERT_EQ(rd32(bytes + len - 22), 0x06054b50);                  /* end of central directory */
    ASSERT_EQ(rd32(bytes + len - 42), 0x07064b50);                  /* zip64 locator before it */
    ASSERT_EQ(rd32(bytes + rd64(bytes + len - 42 + 8)), 0x06064b50); /* ... pointing at the zip64 record */
    ASSERT(memmem(bytes, len, "\x80\x02" "ccollections\nOrderedDict\n", 27) == bytes + z[0].data);
    ASSERT(memmem(bytes + z[0].data, z[0].size, "ctorch._utils\n_rebuild_tensor_v2\n", 33) != NULL);
    ASSERT(memmem(bytes + z[0].data, z[0].size, "ctorch\nFloatStorage\n", 20) != NULL);
    ASSERT(memmem(bytes + z[0].data, z[0].size, "\x8a\x05\x00\x5e\xd0\xb2\x00", 7) != NULL); /* LONG1 3e9 */
    ASSERT_EQ(bytes[z[0].data + z[0].size - 1], '.');
    /* deterministic: written again elsewhere, the same bytes */
    char sub[4200];
    snprintf(sub, sizeof sub, "%s/again", dir);
    ASSERT_EQ(mkdir(sub, 0755), 0);
    ASSERT_EQ(torch_save_write(path2, t, 6, meta, 2, &err), 0);
    size_t len2;
    unsigned char *bytes2 = test_slurp(path2, &len2);
    ASSERT(bytes2 && len2 == len && memcmp(bytes, bytes2, len) == 0);
    free(bytes2);
    free(bytes);
    rm_tree(dir);
    free(dir);
}

TEST(archive_folder_name) {
    char *dir = test_tmpdir(), path[4200];
    float x[2] = {1, 2};
    const ts_tensor t = {"x", 1, {2}, x};
    cgnn_err err = {0};
    static const char *const files[][2] = {{"we ird.pt", "archive/data.pkl"},
                                           {"model.v2.pth", "model.v2/data.pkl"},
                                           {"noext", "noext/data.pkl"}};
    for (int c = 0; c < 3; c++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[c][0]);
        ASSERT_EQ(torch_save_write(path, &t, 1, NULL, 0, &err), 0);
        size_t len;
        unsigned char *bytes = test_slurp(path, &len);
        zent z[8];
        ASSERT(bytes && walk_zip(bytes, len, z, 8) == 5);
        ASSERT(strcmp(z[0].name, files[c][1]) == 0);
        free(bytes);
        ts_file f;
        ASSERT_EQ(torch_save_read_header(&f, path, &err), 0);
        ASSERT_EQ(f.n, 1);
        ASSERT_EQ(f.n_meta, 0);
        torch_save_free(&f);
    }
    rm_tree(dir);
    free(dir);
}

TEST(zip64_fields) {
    char *dir = test_tmpdir(), path[4200];
    snprintf(path, sizeof path, "%s/z.pt", dir);
    float w[6];
    fill(w, 6, 1.0f);
    const ts_tensor t[2] = {{"w", 2, {2, 3}, w}, {"v", 1, {6}, w}};
    cgnn_err err = {0};
    durable_file d;
    ASSERT_EQ(durable_open(&d, path, &err), 0);
    const torch_save_options opt = {"zz", 1};
    ASSERT_EQ(torch_save_write_to(&d, t, 2, NULL, 0, &opt, &err), 0);
    ASSERT_EQ(durable_commit(&d, &err), 0);
    size_t len;
    unsigned char *bytes = test_slurp(path, &len);
    zent z[8];
    ASSERT(bytes && walk_zip(bytes, len, z, 8) == 6);
    ASSERT(strcmp(z[0].name, "zz/data.pkl") == 0);
    for (int i = 0; i < 6; i++) ASSERT_EQ(z[i].data % 64, 0);
    ASSERT_EQ(rd32(bytes + 18), 0xFFFFFFFFu);                                  /* local sizes in zip64 */
    ASSERT(rd16(bytes + len - 12) == 0xFFFF && rd32(bytes + len - 6) == 0xFFFFFFFFu); /* end record */
    ts_file f;
    ASSERT_EQ(torch_save_read_header(&f, path, &err), 0);
    ASSERT_EQ(f.n, 2);
    float buf[6];
    ASSERT_EQ(torch_save_read_tensor(&f, 1, buf, &err), 0);
    ASSERT(memcmp(buf, w, sizeof buf) == 0);
    torch_save_free(&f);
    free(bytes);
    rm_tree(dir);
    free(dir);
}

TEST(many_tensors) { /* SETITEMS in batches of 1000; memo ids past 255 (LONG_BINPUT / LONG_BINGET) */
    enum { N = 1500 };
    char *dir = test_tmpdir(), path[4200];
    snprintf(path, sizeof path, "%s/many.pt", dir);
    static ts_tensor t[N];
    static char names[N][16];
    static float v[N][2];
    for (int i = 0; i < N; i++) {
        snprintf(names[i], sizeof names[i], "t%d", i);
        v[i][0] = (float)i, v[i][1] = -(float)i;
        t[i] = (ts_tensor){names[i], 1, {2}, v[i]};
    }
    cgnn_err err = {0};
    ASSERT_EQ(torch_save_write(path, t, N, NULL, 0, &err), 0);
    ts_file f;
    ASSERT_EQ(torch_save_read_header(&f, path, &err), 0);
    ASSERT_EQ(f.n, N);
    for (int i = 0; i < N; i += 149) {
        float buf[2];
        ASSERT(strcmp(f.names[i], names[i]) == 0);
        ASSERT_EQ(torch_save_read_tensor(&f, i, buf, &err), 0);
        ASSERT(buf[0] == (float)i && buf[1] == -(float)i);
    }
    torch_save_free(&f);
    rm_tree(dir);
    free(dir);
}

TEST(files_torch_wrote) {
    char dir[4200], path[4300];
    snprintf(dir, sizeof dir, "%s/tests/fixtures/torch_save", test_source_dir());
    snprintf(path, sizeof path, "%s/linear.pt", dir);
    cgnn_err err = {0};
    ts_file f;
    ASSERT_EQ(torch_save_read_header(&f, path, &err), 0);
    static const char *const keys[] = {"0.weight", "0.bias", "1.weight", "1.bias"};
    ASSERT_EQ(f.n, 4);
    ASSERT_EQ(f.n_meta, 0); /* torch's per-module _metadata (versions) is accepted, not ours */
    for (int i = 0; i < 4; i++) {
        ASSERT(strcmp(f.names[i], keys[i]) == 0);
        char np_path[4400];
        snprintf(np_path, sizeof np_path, "%s/linear.%s.npy", dir, keys[i]);
        npy_array a;
        ASSERT_EQ(npy_open(&a, np_path, 0, &err), 0);
        ASSERT_EQ(a.count, torch_save_numel(&f, i));
        ASSERT_EQ(f.ndims[i], a.ndim);
        float buf[16];
        ASSERT_EQ(torch_save_read_tensor(&f, i, buf, &err), 0);
        ASSERT(memcmp(buf, a.data, (size_t)a.count * 4) == 0);
        npy_close(&a);
    }
    torch_save_free(&f);
    snprintf(path, sizeof path, "%s/plain_dict.pt", dir);
    ASSERT_EQ(torch_save_read_header(&f, path, &err), 0);
    ASSERT(f.n == 1 && f.ndims[0] == 2 && f.shapes[0][0] == 2 && f.shapes[0][1] == 3);
    torch_save_free(&f);
    snprintf(path, sizeof path, "%s/empty.pt", dir);
    ASSERT_EQ(torch_save_read_header(&f, path, &err), 0);
    ASSERT(f.n == 1 && f.ndims[0] == 3 && f.shapes[0][0] == 2 && f.shapes[0][1] == 0 && f.shapes[0][2] == 3);
    ASSERT_EQ(torch_save_read_tensor(&f, 0, NULL, &err), 0);
    torch_save_free(&f);
    static const char *const refused[][2] = {
        {"batchnorm.pt", "tensor 'num_batches_tracked' is a torch.LongStorage: only float32"},
        {"transposed.pt", "strides are not C order"},
        {"offset_view.pt", "a view at a storage offset"},
        {"legacy.pt", "no zip end-of-central-directory record"},
        {"torchscript.pt", "a TorchScript archive"},
        {"deflated.pt", "is compressed (method 8)"},
        {"evil.pt", "global 'posix.system' is not allowed"},
    };
    for (size_t c = 0; c < sizeof refused / sizeof refused[0]; c++) {
        snprintf(path, sizeof path, "%s/%s", dir, refused[c][0]);
        ASSERT_REFUSED(path, refused[c][1]);
    }
}

/* Writes a raw archive of (name, bytes, size) records under folder a/. */
static int raw_zip(const char *path, const char *const *names, const char *const *data, const size_t *sizes, int n) {
    ts_record r[8];
    for (int i = 0; i < n; i++) r[i] = (ts_record){names[i], data[i], (int64_t)sizes[i]};
    cgnn_err err = {0};
    durable_file d;
    if (durable_open(&d, path, &err) != 0) return -1;
    if (torch_save_write_zip(&d, r, n, 0, &err) != 0) {
        durable_abort(&d);
        return -1;
    }
    return durable_commit(&d, &err);
}

/* data.pkl of a valid one-tensor file written by torch_save_write (caller frees). */
static char *valid_pickle(const char *dir, size_t *len) {
    char path[4200];
    snprintf(path, sizeof path, "%s/valid.pt", dir);
    float x[3] = {1, 2, 3};
    const ts_tensor t = {"x", 1, {3}, x};
    cgnn_err err = {0};
    if (torch_save_write(path, &t, 1, NULL, 0, &err) != 0) return NULL;
    size_t n;
    unsigned char *b = test_slurp(path, &n);
    zent z[8];
    if (!b || walk_zip(b, n, z, 8) < 1) return NULL;
    char *p = malloc(z[0].size);
    memcpy(p, b + z[0].data, z[0].size);
    *len = z[0].size;
    free(b);
    return p;
}

TEST(hostile_archives_and_pickles) {
    char *dir = test_tmpdir(), path[4200];
    snprintf(path, sizeof path, "%s/h.pt", dir);
#define P(s) s, sizeof(s) - 1
    static const struct {
        const char *pkl;
        size_t len;
        const char *want;
    } cases[] = {
        {P("\x80\x02" "cposix\nsystem\nq\x00X\x02\x00\x00\x00lsq\x01\x85q\x02Rq\x03."), "global 'posix.system'"},
        {P("\x80\x02" "cbuiltins\neval\n."), "global 'builtins.eval' is not allowed"},
        {P("\x80\x02" "s."), "stack underflow"},
        {P("\x80\x02" "}q\x05."), "skips ahead"},
        {P("\x80\x02" "h\x03."), "memo 3 is not defined"},
        {P("\x80\x02" "}"), "without STOP"},
        {P("\x80\x04" "}."), "protocol 4"},
        {P("\x80\x02" "K\x01."), "does not hold a dict"},
        {P("\x80\x02" "N."), "opcode 0x4e"},
        {P("\x80\x02" "X\x01\x00\x00\x00\xff."), "UTF-8"},
        {P("\x80\x02" "X\xff\xff\xff\x7f" "ab."), "truncated"},
        {P("\x80\x02" "\x8a\x09\x01\x01\x01\x01\x01\x01\x01\x01\x01."), "LONG1 of 9 bytes"},
        {P("\x80\x02" "}(K\x01u."), "odd number"},
        {P("\x80\x02" "}(K\x01K\x02."), "STOP with 3 values and 1 marks"},
        {P("\x80\x02" "K\x01(K\x01K\x02s."), "SETITEM on something other than a dict"},
        {P("\x80\x02" "}X\x01\x00\x00\x00" "aK\x01s."), "'a' is not a tensor"},
        {P("\x80\x02" "(t(t(t(t."), "STOP with 4 values"},
        {P("\x80\x02" "ccollections\nOrderedDict\n)R}X\x03\x00\x00\x00" "abcK\x01sb."), "other than _metadata"},
        {P("\x80\x02" "}}b."), "BUILD on something other than an OrderedDict"},
        {P("\x80\x02" "ctorch\nFloatStorage\n)R."), "a storage type is called"},
        {P("\x80\x02" "ccollections\nOrderedDict\nK\x01\x85R."), "OrderedDict called with arguments"},
        {P("\x80\x02" "X\x07\x00\x00\x00storageK\x01\x85Q."), "persistent id is not"},
        {P("\x80\x02" "(X\x07\x00\x00\x00storagectorch\nFloatStorage\nX\x03\x00\x00\x00../X\x03\x00\x00\x00" "cpuK\x01tQ."),
         "storage key '../' has characters"},
        {P("\x80\x02" "ctorch._utils\n_rebuild_tensor_v2\n)R."), "with 0 arguments"},
    };
#undef P
    const char *names[3] = {"a/data.pkl", "a/version", "a/byteorder"};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const char *data[2] = {cases[c].pkl, "3\n"};
        const size_t sizes[2] = {cases[c].len, 2};
        ASSERT_EQ(raw_zip(path, names, data, sizes, 2), 0);
        ASSERT_REFUSED(path, cases[c].want);
    }
    /* a valid pickle in archives that are not */
    size_t plen;
    char *pkl = valid_pickle(dir, &plen);
    ASSERT(pkl);
    float x[4] = {1, 2, 3, 4};
    {
        const char *n2[2] = {"a/data.pkl", "a/version"}, *d2[2] = {pkl, "3\n"};
        const size_t s2[2] = {plen, 2};
        ASSERT_EQ(raw_zip(path, n2, d2, s2, 2), 0);
        ASSERT_REFUSED(path, "its storage record 'a/data/0' is missing");
        const char *n3[3] = {"a/data.pkl", "a/version", "a/data/0"}, *d3[3] = {pkl, "3\n", (const char *)x};
        const size_t s3[3] = {plen, 2, 16};
        ASSERT_EQ(raw_zip(path, n3, d3, s3, 3), 0);
        ASSERT_REFUSED(path, "is 16 bytes, 3 float32 need 12");
        const size_t s3b[3] = {plen, 2, 12};
        ASSERT_EQ(raw_zip(path, n3, d3, s3b, 3), 0);
        ts_file f;
        cgnn_err err = {0};
        ASSERT_EQ(torch_save_read_header(&f, path, &err), 0); /* no byteorder record: little-endian */
        torch_save_free(&f);
        const char *n4[4] = {"a/data.pkl", "a/version", "a/data/0", "a/byteorder"},
                   *d4[4] = {pkl, "3\n", (const char *)x, "big"};
        const size_t s4[4] = {plen, 2, 12, 3};
        ASSERT_EQ(raw_zip(path, n4, d4, s4, 4), 0);
        ASSERT_REFUSED(path, "only little-endian");
        const char *d5[3] = {pkl, "x\n", (const char *)x};
        ASSERT_EQ(raw_zip(path, n3, d5, s3b, 3), 0);
        ASSERT_REFUSED(path, "is not a format version");
        const char *n6[2] = {"a/data.pkl", "a/data/0"}, *d6[2] = {pkl, (const char *)x};
        const size_t s6[2] = {plen, 12};
        ASSERT_EQ(raw_zip(path, n6, d6, s6, 2), 0);
        ASSERT_REFUSED(path, "no 'a/version' record");
        const char *n7[3] = {"a/data.pkl", "b/version", "a/data/0"};
        ASSERT_EQ(raw_zip(path, n7, d3, s3b, 3), 0);
        ASSERT_REFUSED(path, "is not in the archive folder 'a/'");
        const char *n8[3] = {"data.pkl", "a/version", "a/data/0"};
        ASSERT_EQ(raw_zip(path, n8, d3, s3b, 3), 0);
        ASSERT_REFUSED(path, "is not in a folder");
        const char *n9[3] = {"a/data.pkl", "a/data.pkl", "a/data/0"};
        ASSERT_EQ(raw_zip(path, n9, d3, s3b, 3), 0);
        ASSERT_REFUSED(path, "two zip records are named 'a/data.pkl'");
    }
    free(pkl);
    { /* two keys alike (the writer does not look) */
        const ts_tensor t[2] = {{"k", 1, {2}, x}, {"k", 1, {2}, x + 2}};
        cgnn_err err = {0};
        ASSERT_EQ(torch_save_write(path, t, 2, NULL, 0, &err), 0);
        ASSERT_REFUSED(path, "key 'k' appears twice");
    }
    { /* not a regular file, empty, a short junk file */
        ASSERT_REFUSED(dir, "directory");
        ASSERT_EQ(test_write_file(dir, "h.pt", "", 0), 0);
        ASSERT_REFUSED(path, "too short for a zip archive");
        ASSERT_EQ(test_write_file(dir, "h.pt", "PK\x05\x06junkjunkjunkjunkjunkjunk", 28), 0);
        ASSERT_REFUSED(path, "no zip end-of-central-directory");
    }
    rm_tree(dir);
    free(dir);
}

/* Every prefix of a valid file is refused; every single-bit flip is refused or read back with
 * the flipped tensor's CRC caught — never a crash, never another code, always the file named. */
TEST(truncations_and_bit_flips) {
    char *dir = test_tmpdir(), path[4200], good[4200];
    snprintf(path, sizeof path, "%s/m.pt", dir);
    snprintf(good, sizeof good, "%s/good.pt", dir);
    float w[6], b[2];
    fill(w, 6, 1.0f), fill(b, 2, 3.0f);
    const ts_tensor t[2] = {{"w", 2, {2, 3}, w}, {"b", 1, {2}, b}};
    const char *meta[] = {"k", "v"};
    cgnn_err err = {0};
    ASSERT_EQ(torch_save_write(good, t, 2, meta, 1, &err), 0);
    size_t len;
    unsigned char *bytes = test_slurp(good, &len);
    zent z[8];
    ASSERT(bytes && walk_zip(bytes, len, z, 8) == 6);
    for (size_t cut = 0; cut < len; cut++) {
        ASSERT_EQ(test_write_file(dir, "m.pt", bytes, cut), 0);
        ts_file f;
        cgnn_err e = {0};
        if (torch_save_read_header(&f, path, &e) == 0) TEST_FAIL_("a %zu-byte prefix of %zu was accepted", cut, len);
        ASSERT_EQ(e.code, CGNN_ERR_INPUT);
        ASSERT_STR_CONTAINS(e.msg, path);
    }
    int accepted = 0, caught_by_crc = 0;
    for (size_t i = 0; i < len; i++)
        for (int bit = 0; bit < 8; bit += 7) {
            bytes[i] ^= (unsigned char)(1u << bit);
            ASSERT_EQ(test_write_file(dir, "m.pt", bytes, len), 0);
            bytes[i] ^= (unsigned char)(1u << bit);
            ts_file f;
            cgnn_err e = {0};
            const int in_data = (i >= z[2].data && i < z[2].data + z[2].size) || (i >= z[3].data && i < z[3].data + z[3].size);
            if (torch_save_read_header(&f, path, &e) != 0) {
                ASSERT_EQ(e.code, CGNN_ERR_INPUT);
                ASSERT_STR_CONTAINS(e.msg, path);
                ASSERT(!in_data); /* tensor data is only read by torch_save_read_tensor */
                continue;
            }
            int failed = 0;
            for (int k = 0; k < f.n; k++) {
                float buf[8];
                ASSERT(torch_save_numel(&f, k) <= 8);
                if (torch_save_read_tensor(&f, k, buf, &e) != 0) {
                    ASSERT_EQ(e.code, CGNN_ERR_INPUT);
                    ASSERT_STR_CONTAINS(e.msg, "CRC-32 mismatch");
                    failed = 1;
                } else {
                    ASSERT(memcmp(buf, t[k].data, (size_t)torch_save_numel(&f, k) * 4) == 0);
                }
            }
            if (in_data) ASSERT(failed);
            caught_by_crc += failed;
            accepted += !failed;
            torch_save_free(&f);
        }
    fprintf(stderr, "  %zu bytes: every prefix refused; of %zu bit flips %d read back unchanged (padding, "
            "unused fields), %d caught by a tensor CRC, the rest refused at the header\n",
            len, 2 * len, accepted, caught_by_crc);
    ASSERT(caught_by_crc >= 2 * (int)(z[2].size + z[3].size));
    free(bytes);
    rm_tree(dir);
    free(dir);
}

/* ---- gigl_ckpt ---------------------------------------------------------------------------- */

static int make_model(model *m, model_kind kind, int L, int64_t in, int64_t hidden, int64_t out, int heads,
                      uint64_t seed) {
    model_config mc = {kind, L, in, hidden, out, heads, 0.0f, 0, NULL, 0, {0}};
    minibatch_capacity cap;
    memset(&cap, 0, sizeof cap);
    cap.num_layers = L;
    cap.max_items = 1;
    for (int h = 0; h <= L; h++) cap.max_nodes[h] = 1;
    for (int h = 0; h < L; h++) cap.max_edges[h] = 1;
    cap.feat_dim = in;
    cgnn_err err = {0};
    if (model_init(m, &mc, &cap, seed, &err) != 0) {
        fprintf(stderr, "model_init: %s\n", err.msg);
        return -1;
    }
    for (int64_t i = 0; i < m->num_params; i++) /* nothing left at zero (GCN / GAT biases) */
        if (m->params[i] == 0.0f) m->params[i] = 0.01f * (float)(i % 13 + 1);
    return 0;
}

static void check_gigl_roundtrip(model_kind kind, task_kind task, const char *const *want_keys, int n_keys) {
    char *dir = test_tmpdir(), path[4200];
    snprintf(path, sizeof path, "%s/model.pt", dir);
    model m, back;
    ASSERT_EQ(make_model(&m, kind, 2, 5, 6, 3, 2, 1), 0);
    ASSERT_EQ(make_model(&back, kind, 2, 5, 6, 3, 2, 2), 0);
    const char *meta[] = {"cgnn_model", model_kind_name(kind), "num_layers", "2", "in_channels", "5",
                          "hidden_channels", "6", "out_channels", "3", "heads", "2"};
    cgnn_err err = {0};
    ASSERT_EQ(gigl_ckpt_save(path, task, &m, m.params, NULL, 0, meta, 6, &err), 0);
    ts_file f;
    ASSERT_EQ(torch_save_read_header(&f, path, &err), 0);
    ASSERT_EQ(f.n, n_keys);
    for (int i = 0; i < n_keys; i++)
        if (strcmp(f.names[i], want_keys[i]) != 0) TEST_FAIL_("key %d: '%s', want '%s'", i, f.names[i], want_keys[i]);
    ASSERT(strcmp(torch_save_meta(&f, "task"), task == TASK_NODE_CLASSIFICATION ? "node_classification"
                                                                               : "link_prediction") == 0);
    const int kh = torch_save_find(&f, "_head.weight");
    if (task == TASK_NODE_CLASSIFICATION) { /* [I_3 | 0] over W = 6, zero bias */
        ASSERT(kh >= 0 && f.shapes[kh][0] == 3 && f.shapes[kh][1] == 6);
        float hw[18], hb[3];
        ASSERT_EQ(torch_save_read_tensor(&f, kh, hw, &err), 0);
        ASSERT_EQ(torch_save_read_tensor(&f, torch_save_find(&f, "_head.bias"), hb, &err), 0);
        for (int c = 0; c < 3; c++) {
            ASSERT(hb[c] == 0.0f);
            for (int w = 0; w < 6; w++) ASSERT(hw[c * 6 + w] == (c == w ? 1.0f : 0.0f));
        }
    } else {
        ASSERT_EQ(kh, -1);
    }
    torch_save_free(&f);
    /* shouldSkipTraining's path: bit for bit */
    ASSERT_EQ(gigl_ckpt_load_model(path, task, &back, &err), 0);
    ASSERT(memcmp(back.params, m.params, (size_t)m.num_params * sizeof(float)) == 0);
    /* cgnn embed's path: PyG keys, the model's shapes and bits, the metadata */
    st_file s;
    ASSERT_EQ(gigl_ckpt_read(&s, path, &err), 0);
    ASSERT_EQ(s.n, m.num_tensors);
    for (int i = 0; i < m.num_tensors; i++) {
        const model_tensor *mt = &m.tensors[i];
        ASSERT(strcmp(s.names[i], mt->name) == 0);
        ASSERT_EQ(s.ndims[i], mt->ndim);
        for (int d = 0; d < mt->ndim; d++) ASSERT_EQ(s.shapes[i][d], mt->shape[d]);
        ASSERT(memcmp(s.data[i], m.params + mt->offset, (size_t)mt->numel * 4) == 0);
    }
    ASSERT(strcmp(safetensors_meta(&s, "cgnn_model"), model_kind_name(kind)) == 0);
    ASSERT(strcmp(safetensors_meta(&s, "out_channels"), "3") == 0);
    safetensors_free(&s);
    /* the other task's layout is refused, naming the head */
    const task_kind other = task == TASK_NODE_CLASSIFICATION ? TASK_LINK_PREDICTION : TASK_NODE_CLASSIFICATION;
    ASSERT_EQ(gigl_ckpt_load_model(path, other, &back, &err), -1);
    ASSERT_EQ(err.code, CGNN_ERR_INPUT);
    ASSERT_STR_CONTAINS(err.msg, "_head.weight");
    ASSERT_STR_CONTAINS(err.msg, path);
    /* another architecture is refused, naming the key */
    model wide;
    ASSERT_EQ(make_model(&wide, kind, 2, 5, 12, 3, 2, 3), 0);
    ASSERT_EQ(gigl_ckpt_load_model(path, task, &wide, &err), -1);
    ASSERT_STR_CONTAINS(err.msg, "_encoder.");
    model_free(&wide);
    model_free(&m);
    model_free(&back);
    rm_tree(dir);
    free(dir);
}

TEST(gigl_layout_sage_nc) {
    static const char *const keys[] = {"_encoder.conv_layers.0.lin_l.weight", "_encoder.conv_layers.0.lin_l.bias",
                                       "_encoder.conv_layers.0.lin_r.weight", "_encoder.conv_layers.1.lin_l.weight",
                                       "_encoder.conv_layers.1.lin_l.bias",   "_encoder.conv_layers.1.lin_r.weight",
                                       "_head.weight",                         "_head.bias"};
    check_gigl_roundtrip(MODEL_GRAPHSAGE, TASK_NODE_CLASSIFICATION, keys, 8);
}
TEST(gigl_layout_gat_nc) {
    static const char *const keys[] = {"_encoder.convs.0.att_src", "_encoder.convs.0.att_dst", "_encoder.convs.0.bias",
                                       "_encoder.convs.0.lin.weight", "_encoder.convs.1.att_src",
                                       "_encoder.convs.1.att_dst", "_encoder.convs.1.bias", "_encoder.convs.1.lin.weight",
                                       "_head.weight", "_head.bias"};
    check_gigl_roundtrip(MODEL_GAT, TASK_NODE_CLASSIFICATION, keys, 10);
}
TEST(gigl_layout_gcn_lp) {
    static const char *const keys[] = {"_encoder.convs.0.bias", "_encoder.convs.0.lin.weight", "_encoder.convs.1.bias",
                                       "_encoder.convs.1.lin.weight"};
    check_gigl_roundtrip(MODEL_GCN, TASK_LINK_PREDICTION, keys, 4);
}
TEST(gigl_layout_sage_lp) {
    static const char *const keys[] = {"_encoder.conv_layers.0.lin_l.weight", "_encoder.conv_layers.0.lin_l.bias",
                                       "_encoder.conv_layers.0.lin_r.weight", "_encoder.conv_layers.1.lin_l.weight",
                                       "_encoder.conv_layers.1.lin_l.bias",   "_encoder.conv_layers.1.lin_r.weight"};
    check_gigl_roundtrip(MODEL_GRAPHSAGE, TASK_LINK_PREDICTION, keys, 6);
}

/* A checkpoint GiGL trained (no cgnn metadata, any head): folded into the last layer. */
TEST(gigl_head_folded) {
    char *dir = test_tmpdir(), path[4200];
    snprintf(path, sizeof path, "%s/gigl.pt", dir);
    enum { I = 4, W = 5, C = 2 };
    float wl[W * I], bl[W], wr[W * I], hw[C * W], hb[C];
    fill(wl, W * I, 0.3f), fill(bl, W, -0.2f), fill(wr, W * I, 0.1f), fill(hw, C * W, 0.7f), fill(hb, C, 1.5f);
    const ts_tensor t[5] = {{"_encoder.conv_layers.0.lin_l.weight", 2, {W, I}, wl},
                            {"_encoder.conv_layers.0.lin_l.bias", 1, {W}, bl},
                            {"_encoder.conv_layers.0.lin_r.weight", 2, {W, I}, wr},
                            {"_head.weight", 2, {C, W}, hw},
                            {"_head.bias", 1, {C}, hb}};
    cgnn_err err = {0};
    ASSERT_EQ(torch_save_write(path, t, 5, NULL, 0, &err), 0);
    model m;
    ASSERT_EQ(make_model(&m, MODEL_GRAPHSAGE, 1, I, W, C, 1, 1), 0);
    ASSERT_EQ(gigl_ckpt_load_model(path, TASK_NODE_CLASSIFICATION, &m, &err), 0);
    const float *gl = m.params + model_find_tensor(&m, "convs.0.lin_l.weight")->offset;
    const float *gb = m.params + model_find_tensor(&m, "convs.0.lin_l.bias")->offset;
    const float *gr = m.params + model_find_tensor(&m, "convs.0.lin_r.weight")->offset;
    for (int c = 0; c < C; c++) {
        double b = hb[c];
        for (int w = 0; w < W; w++) b += (double)hw[c * W + w] * bl[w];
        ASSERT_NEAR(gb[c], b, 1e-6);
        for (int i = 0; i < I; i++) {
            double l = 0, r = 0;
            for (int w = 0; w < W; w++) l += (double)hw[c * W + w] * wl[w * I + i], r += (double)hw[c * W + w] * wr[w * I + i];
            ASSERT_NEAR(gl[c * I + i], l, 1e-6);
            ASSERT_NEAR(gr[c * I + i], r, 1e-6);
        }
    }
    /* cgnn embed: the same folded tensors and the architecture read off the keys */
    st_file s;
    ASSERT_EQ(gigl_ckpt_read(&s, path, &err), 0);
    ASSERT_EQ(s.n, 3);
    ASSERT(strcmp(safetensors_meta(&s, "cgnn_model"), "GraphSAGE") == 0);
    ASSERT(strcmp(safetensors_meta(&s, "num_layers"), "1") == 0);
    ASSERT(strcmp(safetensors_meta(&s, "in_channels"), "4") == 0);
    ASSERT(strcmp(safetensors_meta(&s, "hidden_channels"), "5") == 0);
    ASSERT(strcmp(safetensors_meta(&s, "out_channels"), "2") == 0);
    const int k = safetensors_find(&s, "convs.0.lin_l.weight");
    ASSERT(k >= 0 && s.shapes[k][0] == C && s.shapes[k][1] == I);
    ASSERT(memcmp(s.data[k], gl, sizeof(float) * C * I) == 0);
    safetensors_free(&s);
    model_free(&m);

    /* a GAT's head cannot be folded: refused by both readers */
    float a[1 * 1 * W], gw[W * I], gbias[W];
    fill(a, W, 0.5f), fill(gw, W * I, 0.2f), fill(gbias, W, 0.1f);
    const ts_tensor g[6] = {{"_encoder.convs.0.att_src", 3, {1, 1, W}, a}, {"_encoder.convs.0.att_dst", 3, {1, 1, W}, a},
                            {"_encoder.convs.0.bias", 1, {W}, gbias},      {"_encoder.convs.0.lin.weight", 2, {W, I}, gw},
                            {"_head.weight", 2, {C, W}, hw},               {"_head.bias", 1, {C}, hb}};
    ASSERT_EQ(torch_save_write(path, g, 6, NULL, 0, &err), 0);
    ASSERT_EQ(make_model(&m, MODEL_GAT, 1, I, W, C, 1, 1), 0);
    ASSERT_EQ(gigl_ckpt_load_model(path, TASK_NODE_CLASSIFICATION, &m, &err), -1);
    ASSERT_STR_CONTAINS(err.msg, "cannot take another Linear head");
    ASSERT_EQ(gigl_ckpt_read(&s, path, &err), -1);
    ASSERT_STR_CONTAINS(err.msg, "cannot take another Linear head");
    model_free(&m);
    /* a key that belongs to nothing */
    const ts_tensor junk[2] = {{"_encoder.conv_layers.0.lin_l.weight", 2, {W, I}, wl}, {"decoder.w", 1, {W}, bl}};
    ASSERT_EQ(torch_save_write(path, junk, 2, NULL, 0, &err), 0);
    ASSERT_EQ(gigl_ckpt_read(&s, path, &err), -1);
    ASSERT_STR_CONTAINS(err.msg, "'decoder.w' is neither an encoder");
    rm_tree(dir);
    free(dir);
}

TEST(gigl_check) {
    model_config nc = {MODEL_GRAPHSAGE, 2, 10, 4, 7, 1, 0.0f, 0, NULL, 0, {0}};
    cgnn_err err = {0};
    ASSERT_EQ(gigl_ckpt_check("out/m.pt", TASK_NODE_CLASSIFICATION, &nc, "task.yaml: trainedModelUri", &err), -1);
    ASSERT_EQ(err.code, CGNN_ERR_INPUT);
    ASSERT_STR_CONTAINS(err.msg, "task.yaml: trainedModelUri: 'out/m.pt'");
    ASSERT_STR_CONTAINS(err.msg, "out_channels 7 (the classes) must be <= hidden_dim 4");
    ASSERT_EQ(gigl_ckpt_check("out/m.safetensors", TASK_NODE_CLASSIFICATION, &nc, "f", &err), 0);
    ASSERT_EQ(gigl_ckpt_check("out/m.pt", TASK_LINK_PREDICTION, &nc, "f", &err), 0);
    nc.hidden_dim = 7;
    ASSERT_EQ(gigl_ckpt_check("out/m.pth", TASK_NODE_CLASSIFICATION, &nc, "f", &err), 0);
    ASSERT(gigl_ckpt_is_torch("a/b.pt") && gigl_ckpt_is_torch("b.pth") && !gigl_ckpt_is_torch("b.pt.bak") &&
           !gigl_ckpt_is_torch(".pt") && !gigl_ckpt_is_torch("model.safetensors"));
    char key[512];
    gigl_ckpt_key(key, sizeof key, MODEL_GRAPHSAGE, "convs.1.lin_r.weight");
    ASSERT(strcmp(key, "_encoder.conv_layers.1.lin_r.weight") == 0);
    gigl_ckpt_key(key, sizeof key, MODEL_HETERO_SAGE, "lin_dict.paper.weight");
    ASSERT(strcmp(key, "_encoder.lin_dict.paper.weight") == 0);
}

/* torch_save_read_npy on bare tensors torch.save wrote (tests/fixtures/graphbolt/tensors, by
 * scripts/fixtures/make_graphbolt_fixtures.py): every dtype GraphBolt's format: torch may hold,
 * with its values; a state_dict, a view, a complex tensor and a truncated file are refused. */
TEST(bare_tensors_torch_wrote) {
    static const struct {
        const char *name;
        npy_dtype dtype;
    } ok[] = {{"float32", NPY_DTYPE_FLOAT32}, {"float64", NPY_DTYPE_FLOAT64}, {"float16", NPY_DTYPE_FLOAT16},
              {"bfloat16", NPY_DTYPE_FLOAT32}, {"int64", NPY_DTYPE_INT64},    {"int32", NPY_DTYPE_INT32},
              {"int16", NPY_DTYPE_INT32},      {"int8", NPY_DTYPE_INT8},      {"uint8", NPY_DTYPE_UINT8},
              {"bool", NPY_DTYPE_UINT8}};
    char path[4300];
    cgnn_err err = {0};
    npy_array a;
    for (size_t k = 0; k < sizeof ok / sizeof ok[0]; k++) { /* (3, 2): i * 2 + j; bool [[0,1],[1,0],[0,1]] */
        snprintf(path, sizeof path, "%s/tests/fixtures/graphbolt/tensors/%s.pt", test_source_dir(), ok[k].name);
        if (torch_save_read_npy(&a, path, &err) != 0) TEST_FAIL_("%s", err.msg);
        ASSERT(a.dtype == ok[k].dtype && a.ndim == 2 && a.shape[0] == 3 && a.shape[1] == 2 && a.count == 6);
        ASSERT(a.owned && a.data == a.owned && !a.fortran_order && strcmp(a.path, path) == 0);
        for (int64_t i = 0; i < 6; i++) {
            const int64_t want = strcmp(ok[k].name, "bool") == 0 ? (i / 2 + i % 2) % 2 : i;
            static const uint16_t half[6] = {0x0000, 0x3c00, 0x4000, 0x4200, 0x4400, 0x4500}; /* 0..5 */
            if (a.dtype == NPY_DTYPE_FLOAT16) ASSERT_EQ(((const uint16_t *)a.data)[i], half[i]);
            else if (a.dtype == NPY_DTYPE_FLOAT32) ASSERT(((const float *)a.data)[i] == (float)want);
            else if (a.dtype == NPY_DTYPE_FLOAT64) ASSERT(((const double *)a.data)[i] == (double)want);
            else ASSERT_EQ(npy_get_int(&a, i), want);
        }
        npy_close(&a);
        ASSERT(a.owned == NULL && a.data == NULL);
    }
    snprintf(path, sizeof path, "%s/tests/fixtures/graphbolt/tensors/scalar.pt", test_source_dir());
    if (torch_save_read_npy(&a, path, &err) != 0) TEST_FAIL_("%s", err.msg);
    ASSERT(a.ndim == 0 && a.count == 1 && a.dtype == NPY_DTYPE_INT64 && ((const int64_t *)a.data)[0] == 7);
    npy_close(&a);
    snprintf(path, sizeof path, "%s/tests/fixtures/graphbolt/tensors/vector.pt", test_source_dir());
    if (torch_save_read_npy(&a, path, &err) != 0) TEST_FAIL_("%s", err.msg);
    ASSERT(a.ndim == 1 && a.shape[0] == 5 && ((const int64_t *)a.data)[4] == 4);
    npy_close(&a);

    static const struct {
        const char *file, *want;
    } bad[] = {{"graphbolt/tensors/complex64.pt", "dtype complex64 is not supported"},
               {"graphbolt/tensors/transposed.pt", "strides are not C order"},
               {"graphbolt/tensors/slice.pt", "a view at a storage offset"},
               {"graphbolt/tensors/dict.pt", "data.pkl holds a dict"},
               {"torch_save/linear.pt", "data.pkl holds a dict"},
               {"torch_save/legacy.pt", "torch.save"},
               {"torch_save/evil.pt", "is not allowed"}};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        snprintf(path, sizeof path, "%s/tests/fixtures/%s", test_source_dir(), bad[k].file);
        err = (cgnn_err){0};
        ASSERT_EQ(torch_save_read_npy(&a, path, &err), -1);
        ASSERT_EQ(err.code, CGNN_ERR_INPUT);
        ASSERT_STR_CONTAINS(err.msg, path);
        ASSERT_STR_CONTAINS(err.msg, bad[k].want);
        ASSERT(a.owned == NULL && a.data == NULL);
    }
    /* every truncation of a real file is refused, never a crash */
    snprintf(path, sizeof path, "%s/tests/fixtures/graphbolt/tensors/int64.pt", test_source_dir());
    size_t n = 0;
    unsigned char *bytes = test_slurp(path, &n);
    ASSERT(bytes && n > 100);
    char *dir = test_tmpdir();
    for (size_t cut = 0; cut < n; cut += 7) {
        ASSERT_EQ(test_write_file(dir, "cut.pt", bytes, cut), 0);
        snprintf(path, sizeof path, "%s/cut.pt", dir);
        err = (cgnn_err){0};
        ASSERT_EQ(torch_save_read_npy(&a, path, &err), -1);
        ASSERT(err.code == CGNN_ERR_INPUT && strstr(err.msg, path));
    }
    free(bytes);
    remove(path);
    rmdir(dir);
    free(dir);
}

int main(void) {
    RUN(roundtrip_and_layout);
    RUN(archive_folder_name);
    RUN(zip64_fields);
    RUN(many_tensors);
    RUN(files_torch_wrote);
    RUN(hostile_archives_and_pickles);
    RUN(truncations_and_bit_flips);
    RUN(gigl_layout_sage_nc);
    RUN(gigl_layout_gat_nc);
    RUN(gigl_layout_gcn_lp);
    RUN(gigl_layout_sage_lp);
    RUN(gigl_head_folded);
    RUN(gigl_check);
    RUN(bare_tensors_torch_wrote);
    return test_summary();
}
