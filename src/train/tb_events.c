/* tb_events.c — TensorBoard event files: CRC32C, TFRecord framing, hand-encoded Event
 * protobufs; see tb_events.h for the format. */
#include "train/tb_events.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "io/outguard.h"
#include "train/outputs.h"

/* ---- CRC32C ---------------------------------------------------------------------------- */

#define TB_CRC32C_POLY 0x82F63B78u /* Castagnoli, bit-reflected */

/* crc_table[k][b]: the CRC of byte b followed by k zero bytes (slicing-by-8). */
static uint32_t crc_table[8][256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_init_tables(void) {
    for (uint32_t b = 0; b < 256; b++) {
        uint32_t c = b;
        for (int k = 0; k < 8; k++) c = (c >> 1) ^ (TB_CRC32C_POLY & (0u - (c & 1u)));
        crc_table[0][b] = c;
    }
    for (uint32_t b = 0; b < 256; b++)
        for (int k = 1; k < 8; k++)
            crc_table[k][b] = (crc_table[k - 1][b] >> 8) ^ crc_table[0][crc_table[k - 1][b] & 0xffu];
}

uint32_t tb_crc32c_ref(uint32_t crc, const void *data, size_t n) {
    const unsigned char *p = (const unsigned char *)data;
    crc = ~crc;
    for (size_t i = 0; i < n; i++) {
        crc ^= p[i];
        for (int k = 0; k < 8; k++) crc = (crc >> 1) ^ (TB_CRC32C_POLY & (0u - (crc & 1u)));
    }
    return ~crc;
}

uint32_t tb_crc32c(uint32_t crc, const void *data, size_t n) {
    pthread_once(&crc_once, crc_init_tables);
    const unsigned char *p = (const unsigned char *)data;
    crc = ~crc;
    /* Byte loads assembled little-endian: correct on any host (compilers merge them). */
    for (; n >= 8; n -= 8, p += 8) {
        uint32_t lo = crc ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                             (uint32_t)p[3] << 24);
        crc = crc_table[7][lo & 0xffu] ^ crc_table[6][(lo >> 8) & 0xffu] ^
              crc_table[5][(lo >> 16) & 0xffu] ^ crc_table[4][lo >> 24] ^ crc_table[3][p[4]] ^
              crc_table[2][p[5]] ^ crc_table[1][p[6]] ^ crc_table[0][p[7]];
    }
    for (; n > 0; n--, p++) crc = (crc >> 8) ^ crc_table[0][(crc ^ *p) & 0xffu];
    return ~crc;
}

uint32_t tb_masked_crc32c(const void *data, size_t n) {
    uint32_t crc = tb_crc32c(0, data, n);
    return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

/* ---- protobuf wire format (the few cases we need) -------------------------------------- */

enum { PB_VARINT = 0, PB_FIXED64 = 1, PB_LEN = 2, PB_FIXED32 = 5 };

/* Bytes of the base-128 varint of v. */
static size_t pb_varint_len(uint64_t v) {
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static unsigned char *pb_varint(unsigned char *p, uint64_t v) {
    while (v >= 0x80) {
        *p++ = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    *p++ = (unsigned char)v;
    return p;
}

static unsigned char *pb_key(unsigned char *p, int field, int wire) {
    return pb_varint(p, (uint64_t)field << 3 | (uint64_t)wire);
}

static unsigned char *pb_le(unsigned char *p, uint64_t v, int bytes) {
    for (int i = 0; i < bytes; i++) *p++ = (unsigned char)(v >> (8 * i));
    return p;
}

static unsigned char *pb_double(unsigned char *p, int field, double x) {
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    return pb_le(pb_key(p, field, PB_FIXED64), bits, 8);
}

/* 1 if x is +0.0 (all bits zero): proto3's default, left out of the encoding. */
static int pb_is_zero(double x) {
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    return bits == 0;
}

static unsigned char *pb_float(unsigned char *p, int field, float x) {
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    return pb_le(pb_key(p, field, PB_FIXED32), bits, 4);
}

static unsigned char *pb_bytes(unsigned char *p, int field, const void *s, size_t n) {
    p = pb_varint(pb_key(p, field, PB_LEN), n);
    memcpy(p, s, n);
    return p + n;
}

/* Bytes of tag kept: at most TB_MAX_TAG_BYTES, never splitting a UTF-8 sequence. */
static size_t tb_tag_len(const char *tag) {
    size_t n = strnlen(tag, TB_MAX_TAG_BYTES + 1);
    if (n <= TB_MAX_TAG_BYTES) return n;
    n = TB_MAX_TAG_BYTES;
    /* tag[n] is the first byte cut; while it continues a sequence, cut that sequence too. */
    while (n > 0 && ((unsigned char)tag[n] & 0xC0u) == 0x80u) n--;
    return n;
}

/* Encoded size of Value {tag (tag_len bytes), simple_value}. */
static size_t pb_value_len(size_t tag_len) {
    return 1 + pb_varint_len(tag_len) + tag_len + 1 + 4;
}

/* ---- records --------------------------------------------------------------------------- */

/* The Event is in w->buf[12 .. 12+len); frames it and appends it to the file. */
static void tb_write_record(tb_writer *w, size_t len) {
    CGNN_CHECK(len + 16 <= sizeof w->buf);
    unsigned char *b = w->buf;
    pb_le(b, (uint64_t)len, 8);
    pb_le(b + 8, tb_masked_crc32c(b, 8), 4);
    pb_le(b + 12 + len, tb_masked_crc32c(b + 12, len), 4);
    if (w->failed) return;
    if (fwrite(b, 1, len + 16, w->fp) != len + 16) {
        w->failed = 1;
        w->failed_errno = errno ? errno : EIO;
        return;
    }
    w->records++;
}

/* Writes one Event with values tags[0..n) (n <= TB_MAX_VALUES_PER_EVENT). */
static void tb_write_scalars(tb_writer *w, int64_t step, double wall_time, const char *const *tags,
                             const float *values, int n) {
    CGNN_CHECK(n >= 0 && n <= TB_MAX_VALUES_PER_EVENT);
    size_t tag_len[TB_MAX_VALUES_PER_EVENT];
    size_t summary_len = 0;
    for (int i = 0; i < n; i++) {
        CGNN_CHECK(tags[i] != NULL);
        tag_len[i] = tb_tag_len(tags[i]);
        size_t vl = pb_value_len(tag_len[i]);
        summary_len += 1 + pb_varint_len(vl) + vl;
    }
    /* proto3's canonical form omits fields at their default (0), so the bytes equal what the
     * protobuf library itself writes; summary is in a oneof and always present. */
    unsigned char *start = w->buf + 12, *p = start;
    if (!pb_is_zero(wall_time)) p = pb_double(p, 1, wall_time);
    if (step != 0) {
        p = pb_key(p, 2, PB_VARINT);
        p = pb_varint(p, (uint64_t)step); /* int64: negatives are 10-byte two's complement */
    }
    p = pb_varint(pb_key(p, 5, PB_LEN), summary_len);
    for (int i = 0; i < n; i++) {
        p = pb_varint(pb_key(p, 1, PB_LEN), pb_value_len(tag_len[i]));
        p = pb_bytes(p, 1, tags[i], tag_len[i]);
        p = pb_float(p, 2, values[i]);
    }
    tb_write_record(w, (size_t)(p - start));
}

void tb_add_scalars(tb_writer *w, int64_t step, double wall_time, const char *const *tags,
                    const float *values, int n) {
    CGNN_CHECK(n >= 0);
    if (!w || !w->fp) return;
    for (int i = 0; i < n; i += TB_MAX_VALUES_PER_EVENT) {
        int k = n - i < TB_MAX_VALUES_PER_EVENT ? n - i : TB_MAX_VALUES_PER_EVENT;
        tb_write_scalars(w, step, wall_time, tags + i, values + i, k);
    }
}

void tb_add_scalar(tb_writer *w, int64_t step, double wall_time, const char *tag, float value) {
    tb_add_scalars(w, step, wall_time, &tag, &value, 1);
}

double tb_wall_time(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int tb_open(tb_writer *w, const char *logdir, cgnn_err *err) {
    w->fp = NULL;
    w->path[0] = '\0';
    w->failed = w->failed_errno = 0;
    w->records = 0;
    if (!logdir || !*logdir) return 0;
    if (outputs_make_parent(logdir, 1, err) != 0) return -1;

    char host[256];
    if (gethostname(host, sizeof host) != 0) snprintf(host, sizeof host, "localhost");
    host[sizeof host - 1] = '\0';
    for (char *c = host; *c; c++)
        if (*c == '/') *c = '_';
    double now = tb_wall_time();
    long long secs = (long long)now;
    long pid = (long)getpid();

    /* O_EXCL: never truncate another writer's file (two writers in one second and process). */
    int fd = -1;
    for (int k = 0; k < 1000 && fd < 0; k++) {
        int len = k == 0 ? snprintf(w->path, sizeof w->path, "%s/events.out.tfevents.%lld.%s.%ld.cgnn",
                                    logdir, secs, host, pid)
                         : snprintf(w->path, sizeof w->path, "%s/events.out.tfevents.%lld.%s.%ld.%d.cgnn",
                                    logdir, secs, host, pid, k);
        if (len < 0 || (size_t)len >= sizeof w->path) {
            w->path[0] = '\0';
            return err_set(err, CGNN_ERR_RUNTIME, "%s: TensorBoard log directory path is too long", logdir);
        }
        if (outguard_permit(w->path, err) != 0) {
            w->path[0] = '\0';
            return -1;
        }
        fd = open(w->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd < 0 && errno != EEXIST)
            return err_set(err, CGNN_ERR_RUNTIME, "%s: cannot create TensorBoard event file: %s", w->path,
                           strerror(errno));
    }
    if (fd < 0)
        return err_set(err, CGNN_ERR_RUNTIME, "%s: cannot create TensorBoard event file: name taken", w->path);
    w->fp = fdopen(fd, "wb");
    if (!w->fp) {
        int e = errno;
        close(fd);
        return err_set(err, CGNN_ERR_RUNTIME, "%s: cannot open TensorBoard event file: %s", w->path, strerror(e));
    }

    static const char version[] = "brain.Event:2";
    unsigned char *start = w->buf + 12, *p = start;
    p = pb_double(p, 1, now);
    p = pb_bytes(p, 3, version, sizeof version - 1);
    tb_write_record(w, (size_t)(p - start));
    if (fflush(w->fp) != 0 && !w->failed) {
        w->failed = 1;
        w->failed_errno = errno;
    }
    if (w->failed) {
        err_set(err, CGNN_ERR_RUNTIME, "%s: cannot write TensorBoard event file: %s", w->path,
                strerror(w->failed_errno));
        fclose(w->fp);
        w->fp = NULL;
        return -1;
    }
    return 0;
}

int tb_open_continue(tb_writer *w, const char *logdir, const char *file_name, int64_t keep_bytes, int64_t records,
                     int *was_short, cgnn_err *err) {
    w->fp = NULL;
    w->path[0] = '\0';
    w->failed = w->failed_errno = 0;
    w->records = 0;
    *was_short = 0;
    if (!logdir || !*logdir) return 0;
    const int plain = strncmp(file_name, "events.out.tfevents.", 20) == 0 && !strchr(file_name, '/');
    int len = snprintf(w->path, sizeof w->path, "%s/%s", logdir, file_name);
    struct stat st;
    if (!plain || len < 0 || (size_t)len >= sizeof w->path || stat(w->path, &st) != 0 ||
        (int64_t)st.st_size < keep_bytes || keep_bytes < 1) {
        *was_short = 1;
        return tb_open(w, logdir, err);
    }
    if (outguard_permit(w->path, err) != 0) {
        w->path[0] = '\0';
        return -1;
    }
    int fd = open(w->path, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0 || ftruncate(fd, (off_t)keep_bytes) != 0) {
        int e = errno;
        if (fd >= 0) close(fd);
        return err_set(err, CGNN_ERR_RUNTIME, "%s: cannot continue the TensorBoard event file: %s", w->path,
                       strerror(e));
    }
    w->fp = fdopen(fd, "ab");
    if (!w->fp) {
        int e = errno;
        close(fd);
        return err_set(err, CGNN_ERR_RUNTIME, "%s: cannot open TensorBoard event file: %s", w->path, strerror(e));
    }
    fseek(w->fp, 0, SEEK_END);
    w->records = records;
    return 0;
}

int64_t tb_bytes(tb_writer *w) {
    if (!w || !w->fp) return 0;
    tb_flush(w);
    long pos = ftell(w->fp);
    return pos < 0 ? 0 : (int64_t)pos;
}

const char *tb_file_name(const tb_writer *w) {
    if (!w || !w->path[0]) return "";
    const char *slash = strrchr(w->path, '/');
    return slash ? slash + 1 : w->path;
}

void tb_flush(tb_writer *w) {
    if (!w || !w->fp || w->failed) return;
    if (fflush(w->fp) != 0) {
        w->failed = 1;
        w->failed_errno = errno ? errno : EIO;
    }
}

int tb_check(const tb_writer *w, cgnn_err *err) {
    if (!w || !w->failed) return 0;
    return err_set(err, CGNN_ERR_RUNTIME, "%s: cannot write TensorBoard event file: %s", w->path,
                   strerror(w->failed_errno));
}

void tb_close(tb_writer *w) {
    if (!w || !w->fp) return;
    tb_flush(w);
    if (fclose(w->fp) != 0 && !w->failed) {
        w->failed = 1;
        w->failed_errno = errno ? errno : EIO;
    }
    w->fp = NULL;
}
