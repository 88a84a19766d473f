/* dist_phase.c — the collective end of a phase, shared by the MPI and serial backends. */
#include "dist/dist.h"

int dist_phase_failed(const dist_ctx *d, int failed, cgnn_err *err) {
    char report[sizeof err->msg];
    int code = 0;
    if (dist_check_errors(d, failed, err->code, err->msg, report, sizeof report, &code) == 0) return 0;
    if (d->size > 1 && d->rank == 0) err_set(err, code ? code : CGNN_ERR_RUNTIME, "%s", report);
    else if (!failed) err_set(err, code ? code : CGNN_ERR_RUNTIME, "another rank failed (rank 0 reports it)");
    return 1;
}
