/* crc.c — parallel CRC-32; see crc.h. */
#include "util/crc.h"

#include <stdlib.h>
#include <zlib.h>

#include "util/err.h"

#define CRC_CHUNK ((size_t)4 << 20)

uint32_t crc_parallel(uint32_t crc, const void *p, size_t n) {
    if (n == 0) return crc;
    const unsigned char *b = p;
    const size_t nchunks = (n + CRC_CHUNK - 1) / CRC_CHUNK;
    uLong *part = cgnn_malloc(nchunks * sizeof *part);
#pragma omp parallel for schedule(dynamic, 1)
    for (size_t c = 0; c < nchunks; c++) {
        const size_t off = c * CRC_CHUNK, len = n - off < CRC_CHUNK ? n - off : CRC_CHUNK;
        part[c] = crc32(0L, b + off, (uInt)len);
    }
    uLong out = crc;
    for (size_t c = 0; c < nchunks; c++) {
        const size_t len = n - c * CRC_CHUNK < CRC_CHUNK ? n - c * CRC_CHUNK : CRC_CHUNK;
        out = crc32_combine(out, part[c], (z_off_t)len);
    }
    free(part);
    return (uint32_t)out;
}
