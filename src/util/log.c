/* log.c — see log.h. */
#include "util/log.h"

#include <stdarg.h>
#include <stdio.h>

int log_level = 1;

static void log_v(const char *tag, const char *fmt, va_list ap) {
    fprintf(stderr, "cgnn: %s", tag);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

void log_info(const char *fmt, ...) {
    if (log_level < 1) return;
    va_list ap;
    va_start(ap, fmt);
    log_v("", fmt, ap);
    va_end(ap);
}

void log_warn(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    log_v("warning: ", fmt, ap);
    va_end(ap);
}

void log_debug(const char *fmt, ...) {
    if (log_level < 2) return;
    va_list ap;
    va_start(ap, fmt);
    log_v("debug: ", fmt, ap);
    va_end(ap);
}
