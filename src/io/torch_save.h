/* torch_save.h — PyTorch's own checkpoint format (what `torch.save(state_dict, "x.pt")` writes,
 * "zipfile serialization"), written and read natively: no Python anywhere.
 *
 * The file is a zip archive whose records all lie in one folder <a>/ (torch names it after the
 * file: "model.pt" -> "model/"); every record is STORED (uncompressed), its data aligned to 64
 * bytes by a padding extra field ("FB"), as torch's writer does:
 *
 *   <a>/data.pkl                 pickle protocol 2 of an OrderedDict {key: tensor}; each tensor
 *                                is torch._utils._rebuild_tensor_v2(storage, 0, shape, stride,
 *                                False, OrderedDict()) whose storage is the persistent id
 *                                ('storage', torch.FloatStorage, '<i>', 'cpu', numel)
 *   <a>/byteorder                "little" (torch >= 1.13 writes it; torch.load checks it)
 *   <a>/data/<i>                 the raw little-endian float32 elements of tensor i
 *   <a>/version                  "3\n" (the zip serialization format version torch writes)
 *   <a>/.data/serialization_id   40 digits identifying the content (torch >= 2.2 writes one;
 *                                ours: FNV-1a of the record names + the records' CRC-32)
 *
 * String metadata (key/value pairs) travel where torch keeps a state_dict's per-module
 * metadata: the OrderedDict's `_metadata` attribute (a BUILD of {'_metadata':
 * OrderedDict([(TORCH_SAVE_META_KEY, {k: v, ...})])}); Module.load_state_dict only looks up
 * the entries of its modules' prefixes, so the extra entry changes nothing for it, and
 * `torch.load(f)._metadata["cgnn"]` shows it. Archives over 4 GiB (a large embedding table)
 * use zip64 fields, as torch's writer (miniz) does; the zip64 end record is always written.
 *
 * The reader accepts exactly that subset, whoever wrote it (cgnn, or torch.save of a module's
 * state_dict): a zip archive of stored records, and a pickle that uses only the opcodes and
 * globals torch writes for a state_dict of float32 tensors. It is a small stack machine that
 * builds values, never calls anything: the only globals it knows are collections.OrderedDict,
 * torch._utils._rebuild_tensor_v2 and the torch.*Storage types (all but FloatStorage refused
 * with the tensor's key); any other global, opcode, view (storage offset, strides that are not
 * C order) or shape beyond 4 dims is an input error naming the file, the record and the byte.
 * Sizes come from fstat; every offset and size is checked against the file and the central
 * directory (records inside the file, not overlapping, names in one folder, each tensor's
 * storage record exactly numel x 4 bytes), CRC-32s are checked on every read.
 */
#ifndef CGNN_TORCH_SAVE_H
#define CGNN_TORCH_SAVE_H

#include <stdint.h>

#include "io/durable.h"
#include "io/npy.h"
#include "util/err.h"

/* The `_metadata` entry that holds the string metadata pairs. */
#define TORCH_SAVE_META_KEY "cgnn"
/* At most this many dims per tensor, this many tensors per file. */
#define TORCH_SAVE_MAX_DIMS 4
#define TORCH_SAVE_MAX_TENSORS 65536

typedef struct ts_tensor {
    const char *name;             /* state_dict key (non-empty, unique) */
    int ndim;                     /* 0..TORCH_SAVE_MAX_DIMS */
    int64_t shape[TORCH_SAVE_MAX_DIMS];
    const float *data;            /* numel = prod(shape) float32, C order; written in place */
} ts_tensor;

typedef struct torch_save_options {
    const char *archive;          /* the folder name; NULL: from the path (torch's rule) */
    int zip64;                    /* 1: zip64 fields on every record (tests; else only > 4 GiB) */
} torch_save_options;

/* Writes tensors and meta[2k] = key, meta[2k + 1] = value (n_meta pairs; none: no `_metadata`)
 * to path atomically (io/durable: temporary file, fsync, rename). The archive folder is the
 * file's name without directory and extension when that is made of [A-Za-z0-9._-] only
 * ("model.pt" -> "model"), else "archive". Returns 0, or -1 with *err (CGNN_ERR_RUNTIME naming
 * the path). Bad names or shapes are bugs of the caller (checked, abort). */
int torch_save_write(const char *path, const ts_tensor *tensors, int n, const char *const *meta, int n_meta,
                     cgnn_err *err);
/* The same image streamed into an open durable file that the caller commits (or aborts);
 * opt may be NULL (the folder from out->path, zip64 only where needed). */
int torch_save_write_to(durable_file *out, const ts_tensor *tensors, int n, const char *const *meta, int n_meta,
                        const torch_save_options *opt, cgnn_err *err);

/* One record of a raw archive (torch_save_write_zip). */
typedef struct ts_record {
    const char *name;             /* full name inside the zip, "<a>/..." */
    const void *data;
    int64_t size;
} ts_record;
/* The zip layer alone: n records, STORED, 64-byte aligned, CRC-32, central directory, zip64
 * end record (+ zip64 fields where needed or with zip64 = 1). For tests that build archives
 * the normal writer never would (hostile pickles). Returns 0, or -1 with *err. */
int torch_save_write_zip(durable_file *out, const ts_record *records, int n, int zip64, cgnn_err *err);

/* A read archive: the tensors' keys and shapes (in the OrderedDict's order) and where their
 * data lies; no tensor data is read until torch_save_read_tensor. */
typedef struct ts_file {
    char path[4096];
    int n;
    char **names;                 /* (n) owned, NUL-terminated */
    int *ndims;                   /* (n) */
    int64_t (*shapes)[TORCH_SAVE_MAX_DIMS]; /* (n); shapes[i][d] = 1 for d >= ndims[i] */
    int64_t *data_offsets;        /* (n) file offset of tensor i's first element */
    uint32_t *crcs;               /* (n) CRC-32 of tensor i's storage record */
    int n_meta;                   /* the TORCH_SAVE_META_KEY pairs (0 when absent) */
    char **meta;                  /* (2 n_meta) key, value, ...; owned */
    int64_t file_size;            /* bytes, when the archive was read */
} ts_file;

/* Reads and checks the zip directory, data.pkl, version and byteorder of path. Returns 0, or -1
 * with *err (CGNN_ERR_INPUT naming the file, the record and the problem). The caller owns *f
 * (torch_save_free); on failure *f owns nothing. */
int torch_save_read_header(ts_file *f, const char *path, cgnn_err *err);
/* Reads tensor i (numel floats) into dst and checks its record's CRC-32. Returns 0, or -1 with
 * *err (CGNN_ERR_INPUT naming the file and key; also when the file changed size since its
 * header was read). */
int torch_save_read_tensor(const ts_file *f, int i, float *dst, cgnn_err *err);
/* Elements of tensor i. */
int64_t torch_save_numel(const ts_file *f, int i);
/* Index of key in f, or -1. */
int torch_save_find(const ts_file *f, const char *name);
/* The metadata value of key, or NULL (points into f). */
const char *torch_save_meta(const ts_file *f, const char *key);
void torch_save_free(ts_file *f); /* NULL-safe */

/* One bare tensor, what `torch.save(tensor, path)` writes (GraphBolt's `format: torch` data):
 * data.pkl is _rebuild_tensor_v2(storage, 0, shape, stride, False, OrderedDict()) alone, the
 * same pickle subset as above with a tensor at the root instead of a dict. Any shape up to
 * TORCH_SAVE_MAX_DIMS (NPY_MAX_DIMS) dims, C-contiguous, the whole storage (no view, no offset).
 * Storage types: Float, Double, Half, Long, Int, Char, Byte map to the npy_dtype of the same
 * bytes; Short (int16) is widened to int32, BFloat16 to float32 (exactly) and Bool to uint8
 * (0 / 1); the complex types are refused. The tensor is read whole into memory (CRC-32 checked)
 * into *a as an npy_array whose data is owned (a->owned; npy_close frees it), C order, path set.
 * Returns 0, or -1 with *err (CGNN_ERR_INPUT naming the file and the problem: not a torch.save
 * archive, a dict instead of a tensor, a transposed view, an unsupported dtype, ...); *a is
 * zeroed (but for its path) on failure. */
int torch_save_read_npy(npy_array *a, const char *path, cgnn_err *err);

#endif
