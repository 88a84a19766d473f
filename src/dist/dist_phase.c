/* dist_phase.c — the collective end of a phase, shared by the MPI and serial backends. */
#include "dist/dist.h"

#include <stdio.h>

int dist_phase_failed(const dist_ctx *d, int failed, cgnn_err *err) {
    char report[sizeof err->msg];
    int code = 0;
    if (dist_check_errors(d, failed, err->code, err->msg, report, sizeof report, &code) == 0) return 0;
    if (d->size > 1 && d->rank == 0) err_set(err, code ? code : CGNN_ERR_RUNTIME, "%s", report);
    else if (!failed) err_set(err, code ? code : CGNN_ERR_RUNTIME, "another rank failed (rank 0 reports it)");
    return 1;
}

int dist_check_agreement(const dist_ctx *d, const char *const *names, const int64_t *vals, int n, cgnn_err *err) {
    if (d->size <= 1 || n <= 0) return 0;
    int64_t *counts = cgnn_malloc((size_t)d->size * sizeof *counts);
    /* the field count first: ranks built from other code or configs may not even agree on it */
    int64_t total = dist_allgather_counts(d, n, counts);
    int rc = 0;
    for (int r = 1; r < d->size && rc == 0; r++)
        if (counts[r] != counts[0])
            rc = err_set(err, CGNN_ERR_INPUT, "ranks disagree on the job fingerprint: rank 0 sends %lld fields, rank %d %lld",
                         (long long)counts[0], r, (long long)counts[r]);
    if (rc == 0) {
        int64_t *all = cgnn_malloc((size_t)total * sizeof *all);
        dist_allgatherv_i64(d, vals, all, counts);
        for (int i = 0; i < n && rc == 0; i++)
            for (int r = 1; r < d->size && rc == 0; r++)
                if (all[(size_t)r * (size_t)n + (size_t)i] != all[i])
                    rc = err_set(err, CGNN_ERR_INPUT,
                                 "ranks disagree on %s: rank 0 has %lld, rank %d has %lld (every rank must run the "
                                 "same config on the same dataset)",
                                 names[i], (long long)all[i], r, (long long)all[(size_t)r * (size_t)n + (size_t)i]);
        free(all);
    }
    free(counts);
    return rc;
}

void dist_fail_job(const dist_ctx *d, const cgnn_err *e) {
    fprintf(stderr, "cgnn: error: rank %d: %s; ending the job\n", d->rank, e->msg);
    fflush(stderr);
    dist_abort(d, CGNN_ERR_RUNTIME);
}
