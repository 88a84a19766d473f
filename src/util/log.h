/* log.h — progress and diagnostic lines on stderr ("cgnn: ..."). Results go to files. */
#ifndef CGNN_LOG_H
#define CGNN_LOG_H

/* Verbosity: 0 quiet (errors only), 1 normal (default), 2 debug. */
extern int log_level;

void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
