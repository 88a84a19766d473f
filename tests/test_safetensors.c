/* test_safetensors.c — safetensors writer/reader: round trips, the exact byte layout, files from
 * other writers, every kind of bad file (CGNN_ERR_INPUT naming the path and the problem), atomic
 * writes that leave no temporary file behind, and (when /usr/bin/python3 has torch) a check that
 * Python reads what we write the way safetensors.torch.load_file does, and the reverse. */
#include <dirent.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/safetensors.h"
#include "test.h"

/* Joins dir/name into out[4096]. */
static void join(char *out, const char *dir, const char *name) {
    if (snprintf(out, 4096, "%s/%s", dir, name) >= 4096) abort();
}


/* Number of entries in dir other than "." and "..". */
static int count_entries(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

/* Writes dir/name as a safetensors image: 8-byte LE length (hlen_override >= 0 replaces
 * strlen(header)), header, data. Path into path[4096]. */
static int make_st(char *path, const char *dir, const char *name, const char *header, const void *data,
                   size_t data_len, long long hlen_override) {
    size_t hl = strlen(header);
    uint64_t declared = hlen_override >= 0 ? (uint64_t)hlen_override : (uint64_t)hl;
    size_t total = 8 + hl + data_len;
    unsigned char *b = (unsigned char *)malloc(total);
    for (int k = 0; k < 8; k++) b[k] = (unsigned char)(declared >> (8 * k));
    memcpy(b + 8, header, hl);
    if (data_len) memcpy(b + 8 + hl, data, data_len);
    int rc = test_write_file(dir, name, b, total);
    free(b);
    join(path, dir, name);
    return rc;
}

/* Element i of test tensor k: exactly representable, distinct per tensor. */
static float val(int k, int64_t i) { return (float)(k + 1) * 0.25f * (float)i - 1.5f; }

TEST(round_trip) {
    char *dir = test_tmpdir();
    char path[4096];
    join(path, dir, "model.safetensors");
    /* Shapes of every rank 0..4, an empty tensor, names needing escapes and UTF-8. */
    const char *names[] = {"scalar", "conv.bias", "layers.0.lin.weight", "x3", "w4", "empty",
                           "quote\"back\\slash\ttab", "n\xc3\xbcmero_\xe2\x82\xac"};
    const int ndims[] = {0, 1, 2, 3, 4, 2, 1, 1};
    const int64_t shapes[][4] = {{1, 1, 1, 1}, {5, 1, 1, 1}, {3, 4, 1, 1}, {2, 3, 2, 1},
                                 {2, 1, 2, 3}, {0, 3, 1, 1}, {2, 1, 1, 1}, {1, 1, 1, 1}};
    enum { NT = 8 };
    st_tensor t[NT];
    float *bufs[NT];
    for (int k = 0; k < NT; k++) {
        int64_t numel = 1;
        for (int d = 0; d < ndims[k]; d++) numel *= shapes[k][d];
        bufs[k] = (float *)malloc((size_t)(numel ? numel : 1) * sizeof(float));
        for (int64_t i = 0; i < numel; i++) bufs[k][i] = val(k, i);
        t[k].name = names[k];
        t[k].ndim = ndims[k];
        for (int d = 0; d < 4; d++) t[k].shape[d] = d < ndims[k] ? shapes[k][d] : 1;
        t[k].data = bufs[k];
    }
    const char *meta[] = {"format", "pt", "note", "line1\nline2 \"q\" \\", "step", "42"};
    cgnn_err err = {0};
    ASSERT_EQ(safetensors_write(path, t, NT, meta, 3, &err), 0);
    st_file f;
    ASSERT_EQ(safetensors_read(&f, path, &err), 0);
    ASSERT_EQ(f.n, NT);
    int bad = 0;
    for (int k = 0; k < NT && !bad; k++) {
        if (strcmp(f.names[k], names[k]) != 0 || f.ndims[k] != ndims[k]) bad = 1;
        int64_t numel = 1;
        for (int d = 0; d < 4; d++) {
            if (f.shapes[k][d] != (d < ndims[k] ? shapes[k][d] : 1)) bad = 1;
            if (d < ndims[k]) numel *= shapes[k][d];
        }
        if (((uintptr_t)f.data[k] & 3) != 0) bad = 1;
        for (int64_t i = 0; i < numel && !bad; i++)
            if (f.data[k][i] != val(k, i)) bad = 1;
        if (safetensors_find(&f, names[k]) != k) bad = 1;
        if (bad) fprintf(stderr, "tensor %d (%s) differs\n", k, names[k]);
    }
    ASSERT(!bad);
    ASSERT_EQ(safetensors_find(&f, "missing"), -1);
    ASSERT_EQ(f.n_meta, 3);
    ASSERT(strcmp(safetensors_meta(&f, "format"), "pt") == 0);
    ASSERT(strcmp(safetensors_meta(&f, "note"), meta[3]) == 0);
    ASSERT(strcmp(safetensors_meta(&f, "step"), "42") == 0);
    ASSERT(safetensors_meta(&f, "nope") == NULL);
    safetensors_free(&f);
    safetensors_free(&f); /* safe twice: freeing zeroes */
    safetensors_free(NULL);

    /* No tensors, no metadata: "{}" padded to 8. */
    ASSERT_EQ(safetensors_write(path, NULL, 0, NULL, 0, &err), 0);
    ASSERT_EQ(safetensors_read(&f, path, &err), 0);
    ASSERT_EQ(f.n, 0);
    ASSERT_EQ(f.n_meta, 0);
    safetensors_free(&f);
    /* Overwriting replaces the file; only it is left in the directory. */
    ASSERT_EQ(safetensors_write(path, t + 1, 1, NULL, 0, &err), 0);
    ASSERT_EQ(safetensors_read(&f, path, &err), 0);
    ASSERT_EQ(f.n, 1);
    ASSERT(strcmp(f.names[0], "conv.bias") == 0);
    safetensors_free(&f);
    ASSERT_EQ(count_entries(dir), 1);
    for (int k = 0; k < NT; k++) free(bufs[k]);
    unlink(path);
    rmdir(dir);
    free(dir);
}

TEST(exact_byte_layout) {
    char *dir = test_tmpdir();
    char path[4096];
    join(path, dir, "m.safetensors");
    const float a[2] = {1.0f, -2.0f};
    const float b[3] = {0.5f, 0.25f, 3.0f};
    st_tensor t[2] = {{"a", 1, {2, 1, 1, 1}, a}, {"b", 2, {3, 1, 1, 1}, b}};
    const char *meta[] = {"format", "pt"};
    cgnn_err err = {0};
    ASSERT_EQ(safetensors_write(path, t, 2, meta, 1, &err), 0);
    size_t len = 0;
    unsigned char *bytes = test_slurp(path, &len);
    ASSERT(bytes != NULL);
    const char *want = "{\"__metadata__\":{\"format\":\"pt\"},"
                       "\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                       "\"b\":{\"dtype\":\"F32\",\"shape\":[3,1],\"data_offsets\":[8,20]}}";
    size_t wl = strlen(want), padded = (wl + 7) / 8 * 8;
    uint64_t n = 0;
    for (int k = 0; k < 8; k++) n |= (uint64_t)bytes[k] << (8 * k); /* little-endian */
    int ok = n == padded && n % 8 == 0 && len == 8 + n + 20 && memcmp(bytes + 8, want, wl) == 0;
    for (size_t i = wl; ok && i < n; i++) ok = bytes[8 + i] == ' ';
    ok = ok && memcmp(bytes + 8 + n, a, 8) == 0 && memcmp(bytes + 8 + n + 8, b, 12) == 0;
    if (!ok) fprintf(stderr, "layout: N=%llu len=%zu header: %.*s\n", (unsigned long long)n, len, (int)n, bytes + 8);
    free(bytes);
    ASSERT(ok);
    /* The raw bytes of the floats are little-endian IEEE: 1.0f = 00 00 80 3f. */
    bytes = test_slurp(path, &len);
    ASSERT(bytes[8 + n] == 0x00 && bytes[8 + n + 2] == 0x80 && bytes[8 + n + 3] == 0x3f);
    free(bytes);
    unlink(path);
    rmdir(dir);
    free(dir);
}

TEST(reads_other_writers) {
    /* Unpadded header with whitespace, tensors listed out of data order, \u escapes (a
     * surrogate pair), metadata last, a zero-size tensor, extra unknown fields ignored. */
    char *dir = test_tmpdir();
    char path[4096];
    const float data[5] = {1, 2, 3, 4, 5};
    const char *hdr = " { \"b\" : {\"dtype\":\"F32\", \"shape\":[3], \"data_offsets\":[8, 20]},\n"
                      "\"\\u00fc\\ud83d\\ude00\\/\": {\"data_offsets\":[0,8],\"shape\":[1,2],\"dtype\":\"F32\"},"
                      "\"z\": {\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[20,20], \"extra\": [true, null, -1.5e3]},"
                      "\"__metadata__\": {\"k\": \"v\\u0041\"} }\t";
    ASSERT_EQ(make_st(path, dir, "o.safetensors", hdr, data, sizeof data, -1), 0);
    cgnn_err err = {0};
    st_file f;
    if (safetensors_read(&f, path, &err) != 0) fprintf(stderr, "%s\n", err.msg);
    ASSERT_EQ(f.n, 3);
    ASSERT(strcmp(f.names[0], "b") == 0);
    ASSERT(strcmp(f.names[1], "\xc3\xbc\xf0\x9f\x98\x80/") == 0);
    ASSERT(strcmp(f.names[2], "z") == 0);
    ASSERT(f.data[0][0] == 3 && f.data[0][2] == 5);
    ASSERT(f.data[1][0] == 1 && f.data[1][1] == 2);
    ASSERT_EQ(f.ndims[1], 2);
    ASSERT_EQ(f.shapes[1][1], 2);
    ASSERT_EQ(f.shapes[2][0], 0);
    ASSERT(strcmp(safetensors_meta(&f, "k"), "vA") == 0);
    safetensors_free(&f);
    unlink(path);
    rmdir(dir);
    free(dir);
}

typedef struct bad_case {
    const char *name;
    const char *header;    /* NULL: raw bytes below */
    size_t data_len;       /* bytes of data after the header */
    long long hlen;        /* -1: strlen(header) */
    const char *expect;    /* a phrase the message must contain */
} bad_case;

#define F32E(name, shape, b, e) "\"" name "\":{\"dtype\":\"F32\",\"shape\":" shape ",\"data_offsets\":[" #b "," #e "]}"

static const bad_case BAD[] = {
    {"hlen_beyond", "{}      ", 0, 9, "exceeds the file"},
    {"hlen_huge", "{}      ", 0, (long long)1 << 62, "exceeds the file"},
    {"empty_header", "", 0, -1, "invalid JSON"},
    {"malformed_json", "{\"a\":{\"dtype\":\"F32\",", 0, -1, "invalid JSON"},
    {"trailing_comma", "{" F32E("a", "[1]", 0, 4) ",}", 4, -1, "invalid JSON"},
    {"single_quotes", "{'a': 1}", 0, -1, "invalid JSON"},
    {"trailing_garbage", "{}x", 0, -1, "trailing characters"},
    {"bad_escape", "{\"a\\q\":{}}", 0, -1, "unknown escape"},
    {"lone_surrogate", "{\"\\ud800\":{}}", 0, -1, "surrogate"},
    {"control_char", "{\"a\tb\":{}}", 0, -1, "control character"},
    {"bad_utf8", "{\"\xc3\x28\":{}}", 0, -1, "UTF-8"},
    {"leading_zero", "{\"a\":{\"dtype\":\"F32\",\"shape\":[01],\"data_offsets\":[0,4]}}", 4, -1, "leading zero"},
    {"deep", "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]", 0, -1,
     "nested too deeply"},
    {"not_object", "[1, 2]  ", 0, -1, "not an object"},
    {"entry_not_object", "{\"a\": 5}", 0, -1, "'a': entry is not a JSON object"},
    {"f16", "{\"half\":{\"dtype\":\"F16\",\"shape\":[2],\"data_offsets\":[0,4]}}", 4, -1,
     "'half': dtype F16 is not supported"},
    {"missing_dtype", "{\"a\":{\"shape\":[1],\"data_offsets\":[0,4]}}", 4, -1, "'a': missing \"dtype\""},
    {"missing_shape", "{\"a\":{\"dtype\":\"F32\",\"data_offsets\":[0,4]}}", 4, -1, "'a': missing \"shape\""},
    {"missing_offsets", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1]}}", 4, -1, "'a': missing \"data_offsets\""},
    {"offsets_out_of_range", "{" F32E("a", "[2]", 4, 12) "}", 8, -1, "out of range"},
    {"offsets_reversed", "{" F32E("a", "[0]", 8, 4) "}", 8, -1, "out of range"},
    {"offsets_three", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4,8]}}", 4, -1, "[begin, end]"},
    {"offsets_float", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4.0]}}", 4, -1, "[begin, end]"},
    {"size_mismatch", "{" F32E("a", "[3]", 0, 8) "}", 8, -1, "need 12"},
    {"negative_dim", "{" F32E("a", "[-1]", 0, 4) "}", 4, -1, "shape[0] is not a non-negative integer"},
    {"five_dims", "{" F32E("a", "[1,1,1,1,1]", 0, 4) "}", 4, -1, "at most 4"},
    {"shape_overflow", "{" F32E("a", "[4294967296,4294967296]", 0, 4) "}", 4, -1, "too large"},
    {"overlap", "{" F32E("a", "[2]", 0, 8) "," F32E("b", "[2]", 4, 12) "}", 12, -1, "overlap"},
    {"gap", "{" F32E("a", "[1]", 0, 4) "," F32E("b", "[1]", 8, 12) "}", 12, -1, "belong to no tensor"},
    {"not_covered", "{" F32E("a", "[1]", 0, 4) "}", 8, -1, "tensors cover 4"},
    {"duplicate", "{" F32E("a", "[1]", 0, 4) "," F32E("a", "[1]", 4, 8) "}", 8, -1, "duplicate tensor 'a'"},
    {"metadata_not_string", "{\"__metadata__\":{\"k\":1}}", 0, -1, "'k' is not a string"},
    {"metadata_not_object", "{\"__metadata__\":[]}", 0, -1, "\"__metadata__\" must"},
};

TEST(bad_files) {
    char *dir = test_tmpdir();
    char path[4096];
    cgnn_err err;
    st_file f;
    int bad = 0;
    const unsigned char zeros[64] = {0};
    for (size_t k = 0; k < sizeof BAD / sizeof BAD[0]; k++) {
        const bad_case *c = &BAD[k];
        char name[128];
        snprintf(name, sizeof name, "%s.safetensors", c->name);
        ASSERT_EQ(make_st(path, dir, name, c->header, zeros, c->data_len, c->hlen), 0);
        err_clear(&err);
        memset(&f, 0xab, sizeof f);
        int rc = safetensors_read(&f, path, &err);
        if (rc != -1 || err.code != CGNN_ERR_INPUT || !strstr(err.msg, path) || !strstr(err.msg, c->expect) ||
            f.n != 0 || f.blob != NULL || f.names != NULL || f.meta != NULL) {
            fprintf(stderr, "case %s: rc %d code %d msg '%s' (want '%s')\n", c->name, rc, err.code, err.msg,
                    c->expect);
            bad = 1;
        }
        safetensors_free(&f);
        unlink(path);
    }
    ASSERT(!bad);

    /* Missing file. */
    join(path, dir, "nope.safetensors");
    err_clear(&err);
    ASSERT_EQ(safetensors_read(&f, path, &err), -1);
    ASSERT_EQ(err.code, CGNN_ERR_INPUT);
    ASSERT_STR_CONTAINS(err.msg, path);
    ASSERT_STR_CONTAINS(err.msg, "cannot open");
    /* Shorter than 8 bytes. */
    ASSERT_EQ(test_write_file(dir, "short.safetensors", "\x02\0\0\0\0", 5), 0);
    join(path, dir, "short.safetensors");
    err_clear(&err);
    ASSERT_EQ(safetensors_read(&f, path, &err), -1);
    ASSERT_EQ(err.code, CGNN_ERR_INPUT);
    ASSERT_STR_CONTAINS(err.msg, path);
    ASSERT_STR_CONTAINS(err.msg, "too short");
    unlink(path);
    /* A directory. */
    err_clear(&err);
    ASSERT_EQ(safetensors_read(&f, dir, &err), -1);
    ASSERT_EQ(err.code, CGNN_ERR_INPUT);
    ASSERT_STR_CONTAINS(err.msg, "not a regular file");
    /* A truncated data section of a file we wrote. */
    const float x[4] = {1, 2, 3, 4};
    st_tensor t = {"x", 1, {4, 1, 1, 1}, x};
    join(path, dir, "trunc.safetensors");
    ASSERT_EQ(safetensors_write(path, &t, 1, NULL, 0, &err), 0);
    struct stat st;
    ASSERT_EQ(stat(path, &st), 0);
    ASSERT_EQ(truncate(path, st.st_size - 8), 0);
    err_clear(&err);
    ASSERT_EQ(safetensors_read(&f, path, &err), -1);
    ASSERT_EQ(err.code, CGNN_ERR_INPUT);
    ASSERT_STR_CONTAINS(err.msg, path);
    ASSERT_STR_CONTAINS(err.msg, "out of range");
    unlink(path);
    ASSERT_EQ(count_entries(dir), 0);
    rmdir(dir);
    free(dir);
}

TEST(write_failures_leave_no_temp) {
    char *dir = test_tmpdir();
    char path[4096];
    const float x[2] = {1, 2};
    st_tensor t = {"x", 1, {2, 1, 1, 1}, x};
    cgnn_err err = {0};
    /* Into a directory that does not exist. */
    snprintf(path, sizeof path, "%s/no/such/dir/m.safetensors", dir);
    ASSERT_EQ(safetensors_write(path, &t, 1, NULL, 0, &err), -1);
    ASSERT_EQ(err.code, CGNN_ERR_RUNTIME);
    ASSERT_STR_CONTAINS(err.msg, path);
    ASSERT_EQ(count_entries(dir), 0);
    /* Onto a non-empty directory: the rename fails, and the temporary file must go. */
    char sub[4096];
    join(sub, dir, "taken");
    ASSERT_EQ(mkdir(sub, 0755), 0);
    ASSERT_EQ(test_write_file(sub, "keep", "x", 1), 0);
    err_clear(&err);
    ASSERT_EQ(safetensors_write(sub, &t, 1, NULL, 0, &err), -1);
    ASSERT_EQ(err.code, CGNN_ERR_RUNTIME);
    ASSERT_STR_CONTAINS(err.msg, sub);
    ASSERT_STR_CONTAINS(err.msg, "rename");
    ASSERT_EQ(count_entries(dir), 1); /* only "taken" */
    ASSERT_EQ(count_entries(sub), 1);
    join(path, sub, "keep");
    unlink(path);
    rmdir(sub);
    rmdir(dir);
    free(dir);
}

/* 0 when /usr/bin/python3 can import torch and numpy. */
static int have_torch(void) {
    return system("/usr/bin/python3 -c 'import torch, numpy' >/dev/null 2>&1");
}

/* Parses a safetensors file by hand (as safetensors.torch.load_file does), checks it against
 * what the C side wrote (tensor k element i = (k+1)*0.25*i - 1.5), then writes back.st the way
 * safetensors.torch.save_file lays a file out (metadata first, tensors sorted by name, header
 * padded with spaces to 8). */
static const char *PY_CHECK =
    "import json, struct, sys\n"
    "import numpy as np, torch\n"
    "path, out = sys.argv[1], sys.argv[2]\n"
    "raw = open(path, 'rb').read()\n"
    "(n,) = struct.unpack('<Q', raw[:8])\n"
    "assert (8 + n) % 8 == 0, 'header not padded'\n"
    "hdr = json.loads(raw[8:8 + n].decode('utf-8'))\n"
    "data = raw[8 + n:]\n"
    "assert hdr.pop('__metadata__') == {'format': 'pt', 'framework': 'cgnn'}, 'metadata'\n"
    "names = ['conv1.weight', 'conv1.bias', 'head.w', 'scalar']\n"
    "shapes = [[2, 3, 2], [3], [2, 2, 1, 3], []]\n"
    "assert list(hdr) == names, list(hdr)\n"
    "sd = {}\n"
    "for k, name in enumerate(names):\n"
    "    e = hdr[name]\n"
    "    assert e['dtype'] == 'F32' and e['shape'] == shapes[k], e\n"
    "    b, en = e['data_offsets']\n"
    "    t = torch.frombuffer(bytearray(data[b:en]), dtype=torch.float32).reshape(e['shape'])\n"
    "    want = torch.tensor([(k + 1) * 0.25 * i - 1.5 for i in range(t.numel())], dtype=torch.float32)\n"
    "    assert torch.equal(t.reshape(-1), want), (name, t)\n"
    "    sd[name] = t\n"
    "sd['extra'] = torch.arange(6, dtype=torch.float32).reshape(2, 3) * 0.5\n"
    "header, off, blobs = {'__metadata__': {'format': 'pt'}}, 0, []\n"
    "for name in sorted(sd):\n"
    "    arr = sd[name].contiguous().numpy().astype('<f4').tobytes()\n"
    "    header[name] = {'dtype': 'F32', 'shape': list(sd[name].shape), 'data_offsets': [off, off + len(arr)]}\n"
    "    off += len(arr)\n"
    "    blobs.append(arr)\n"
    "hb = json.dumps(header, separators=(',', ':')).encode('utf-8')\n"
    "hb += b' ' * ((8 - len(hb) % 8) % 8)\n"
    "open(out, 'wb').write(struct.pack('<Q', len(hb)) + hb + b''.join(blobs))\n"
    "print('python: ok', len(sd), 'tensors')\n";

TEST(torch_interop) {
    if (have_torch() != 0) SKIP("python3-torch not installed (/usr/bin/python3 cannot import torch, numpy)");
    char *dir = test_tmpdir();
    char path[4096], back[4096], script[4096], log[4096], cmd[16384];
    join(path, dir, "c.safetensors");
    join(back, dir, "back.safetensors");
    join(script, dir, "check.py");
    join(log, dir, "python.log");
    const char *names[] = {"conv1.weight", "conv1.bias", "head.w", "scalar"};
    const int ndims[] = {3, 1, 4, 0};
    const int64_t shapes[][4] = {{2, 3, 2, 1}, {3, 1, 1, 1}, {2, 2, 1, 3}, {1, 1, 1, 1}};
    float bufs[4][12];
    st_tensor t[4];
    for (int k = 0; k < 4; k++) {
        for (int i = 0; i < 12; i++) bufs[k][i] = val(k, i);
        t[k].name = names[k];
        t[k].ndim = ndims[k];
        memcpy(t[k].shape, shapes[k], sizeof t[k].shape);
        t[k].data = bufs[k];
    }
    const char *meta[] = {"format", "pt", "framework", "cgnn"};
    cgnn_err err = {0};
    ASSERT_EQ(safetensors_write(path, t, 4, meta, 2, &err), 0);
    ASSERT_EQ(test_write_file(dir, "check.py", PY_CHECK, strlen(PY_CHECK)), 0);
    ASSERT(snprintf(cmd, sizeof cmd, "/usr/bin/python3 '%s' '%s' '%s' > '%s' 2>&1", script, path, back, log) <
           (int)sizeof cmd);
    int rc = system(cmd);
    size_t len = 0;
    unsigned char *out = test_slurp(log, &len);
    if (out) {
        out[len] = '\0';
        fprintf(stderr, "%s", (char *)out);
        free(out);
    }
    ASSERT_EQ(rc, 0);
    /* And what Python wrote, read by us. */
    st_file f;
    if (safetensors_read(&f, back, &err) != 0) fprintf(stderr, "%s\n", err.msg);
    ASSERT_EQ(f.n, 5);
    int k = safetensors_find(&f, "extra");
    ASSERT(k >= 0);
    ASSERT_EQ(f.ndims[k], 2);
    ASSERT_EQ(f.shapes[k][0], 2);
    ASSERT_EQ(f.shapes[k][1], 3);
    for (int i = 0; i < 6; i++) ASSERT(f.data[k][i] == 0.5f * (float)i);
    for (int j = 0; j < 4; j++) {
        int q = safetensors_find(&f, names[j]);
        ASSERT(q >= 0);
        ASSERT_EQ(f.ndims[q], ndims[j]);
        int64_t numel = 1;
        for (int d = 0; d < ndims[j]; d++) numel *= shapes[j][d];
        ASSERT(memcmp(f.data[q], bufs[j], (size_t)numel * sizeof(float)) == 0);
    }
    ASSERT(strcmp(safetensors_meta(&f, "format"), "pt") == 0);
    safetensors_free(&f);
    unlink(path);
    unlink(back);
    unlink(script);
    unlink(log);
    rmdir(dir);
    free(dir);
}

int main(void) {
    RUN(round_trip);
    RUN(exact_byte_layout);
    RUN(reads_other_writers);
    RUN(bad_files);
    RUN(write_failures_leave_no_temp);
    RUN(torch_interop);
    return test_summary();
}
