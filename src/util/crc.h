/* crc.h — CRC-32 (zlib's polynomial) of large buffers, computed in parallel.
 *
 * The buffer is cut into 4 MiB chunks whose CRCs are computed by OpenMP threads and joined in
 * order with zlib's crc32_combine, so the value is exactly zlib's crc32 of the whole buffer,
 * whatever the thread count. Used to tie derived files to their source's content (the graph
 * index cache, partition ids).
 */
#ifndef CGNN_CRC_H
#define CGNN_CRC_H

#include <stddef.h>
#include <stdint.h>

/* zlib's crc32(crc, p, n), for any n (also above 4 GiB). */
uint32_t crc_parallel(uint32_t crc, const void *p, size_t n);

#endif
