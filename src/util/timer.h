/* timer.h — monotonic wall-clock time. */
#ifndef CGNN_TIMER_H
#define CGNN_TIMER_H

#include <time.h>

/* Seconds since an arbitrary fixed point (CLOCK_MONOTONIC). */
static inline double timer_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#endif
