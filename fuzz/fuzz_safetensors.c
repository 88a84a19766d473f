/* fuzz_safetensors.c — libFuzzer target: the safetensors checkpoint reader
 * (safetensors_read_header, safetensors_read_tensor, safetensors_read).
 *
 * Input: a whole safetensors file. The header-only read and the full read must agree: both
 * accept it (then every tensor is read one by one into a buffer of its declared size and
 * compared with the full read) or both reject it with an input error naming the file.
 */
#include "fuzz_util.h"
#include "io/safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int64_t numel(const st_file *f, int i) {
    int64_t k = 1;
    for (int d = 0; d < 4; d++) {
        FUZZ_ASSERT(f->shapes[i][d] >= 0 && (d < f->ndims[i] || f->shapes[i][d] == 1));
        k *= f->shapes[i][d];
    }
    return k;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char path[4096];
    fuzz_write("input.safetensors", data, size, path);
    st_file hf, f;
    cgnn_err err = {0};
    int rc = safetensors_read_header(&hf, path, &err);
    fuzz_check(rc, &err, path);
    cgnn_err err2 = {0};
    int rc2 = safetensors_read(&f, path, &err2);
    fuzz_check(rc2, &err2, path);
    FUZZ_ASSERT(rc == rc2);
    if (rc != 0) return 0;
    FUZZ_ASSERT(hf.n == f.n && hf.n_meta == f.n_meta);
    for (int i = 0; i < hf.n; i++) {
        FUZZ_ASSERT(strcmp(hf.names[i], f.names[i]) == 0 && safetensors_find(&hf, hf.names[i]) == i);
        int64_t k = numel(&hf, i);
        FUZZ_ASSERT(k <= (int64_t)size / 4); /* the data is in the file */
        float *buf = malloc((size_t)(k ? k : 1) * sizeof(float));
        err = (cgnn_err){0};
        int r = safetensors_read_tensor(&hf, i, buf, &err);
        fuzz_check(r, &err, path);
        FUZZ_ASSERT(r == 0); /* the file did not change */
        FUZZ_ASSERT(k == 0 || memcmp(buf, f.data[i], (size_t)k * sizeof(float)) == 0);
        free(buf);
    }
    for (int m = 0; m < hf.n_meta; m++) {
        const char *v = safetensors_meta(&f, hf.meta[2 * m]);
        FUZZ_ASSERT(v && strcmp(v, hf.meta[2 * m + 1]) == 0);
    }
    safetensors_free(&hf);
    safetensors_free(&f);
    return 0;
}
