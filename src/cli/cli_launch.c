/* cli_launch.c — `cgnn train` on a config with featureFlags.cgnn_run_trainer_command: True runs
 * the user's training command on this rank, as GiGL's in-memory Trainer launches it
 * (gigl/src/common/vertex_ai_launcher.py, _build_job_config, GiGL fee4ba5):
 *
 *   argv  trainerConfig.command split on spaces (no shell, as GiGL's), then
 *         --job_name=JOB --task_config_uri=TASK --resource_config_uri=RESOURCE, then every
 *         trainerArgs entry as --key=value (config.c, task_config.command_args)
 *   env   GiGL's runtime variables (gigl/src/common/utils/gigl_env.py: GIGL_APPLIED_TASK_IDENTIFIER,
 *         GIGL_TASK_CONFIG_URI, GIGL_RESOURCE_CONFIG_URI, GIGL_COMPONENT=Trainer) and
 *         torch.distributed's env:// variables, which Vertex AI sets for GiGL's jobs: RANK,
 *         WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT.
 *
 * The command replaces cgnn (execvp): under mpirun it is the MPI rank itself, so cgnn's Python
 * package can open a partitioned graph there (cgnn.init_distributed), and its exit status is the
 * job's. cgnn starts no MPI of its own here.
 *
 * Rank and world come from the launcher's environment: RANK / WORLD_SIZE when set (torchrun,
 * Vertex AI), else OpenMPI's OMPI_COMM_WORLD_* (mpirun), else a world of one. MASTER_ADDR and
 * MASTER_PORT are kept when set; otherwise a job on one host gets 127.0.0.1 and a port every rank
 * derives from the mpirun job's id (one process: a free port from the kernel); a job on several
 * hosts must set them (exit 2 says so). The Python package built beside this cgnn goes first on
 * PYTHONPATH.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cli/cli.h"
#include "train/config.h"

#define LAUNCH_MAX_ARGV 1024

/* getenv(name) as an integer in [lo, hi]; 1 when set and valid, 0 when unset, -1 (err) when bad. */
static int env_int(const char *name, long lo, long hi, long *out, cgnn_err *err) {
    const char *s = getenv(name);
    if (!s || !*s) return 0;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < lo || v > hi) {
        err_set(err, CGNN_ERR_INPUT, "environment variable %s='%s': expected an integer in [%ld, %ld]", name, s,
                lo, hi);
        return -1;
    }
    *out = v;
    return 1;
}

/* This process's place in the job: rank, world, local rank, local world (see the top). */
typedef struct launch_place {
    long rank, world, local_rank, local_world;
    const char *source; /* which variables said so */
} launch_place;

static int launch_place_of(launch_place *p, cgnn_err *err) {
    *p = (launch_place){0, 1, 0, 1, "a world of one"};
    int r = env_int("RANK", 0, 1L << 30, &p->rank, err);
    int w = r < 0 ? -1 : env_int("WORLD_SIZE", 1, 1L << 30, &p->world, err);
    if (r < 0 || w < 0) return -1;
    if (r != w) {
        err_set(err, CGNN_ERR_INPUT, "environment: %s is set but %s is not: set both (torch.distributed's env://)",
                r ? "RANK" : "WORLD_SIZE", r ? "WORLD_SIZE" : "RANK");
        return -1;
    }
    if (r) {
        p->source = "RANK / WORLD_SIZE";
        p->local_rank = p->rank, p->local_world = p->world; /* unless said otherwise below */
        if (env_int("LOCAL_RANK", 0, 1L << 30, &p->local_rank, err) < 0) return -1;
        if (env_int("LOCAL_WORLD_SIZE", 1, 1L << 30, &p->local_world, err) < 0) return -1;
    } else {
        const int o = env_int("OMPI_COMM_WORLD_SIZE", 1, 1L << 30, &p->world, err);
        if (o <= 0) return o;
        if (env_int("OMPI_COMM_WORLD_RANK", 0, 1L << 30, &p->rank, err) < 0 ||
            env_int("OMPI_COMM_WORLD_LOCAL_RANK", 0, 1L << 30, &p->local_rank, err) < 0)
            return -1;
        p->local_world = p->world;
        if (env_int("OMPI_COMM_WORLD_LOCAL_SIZE", 1, 1L << 30, &p->local_world, err) < 0) return -1;
        p->source = "mpirun (OMPI_COMM_WORLD_*)";
    }
    if (p->rank >= p->world || p->local_rank >= p->local_world || p->local_world > p->world) {
        err_set(err, CGNN_ERR_INPUT,
                "environment (%s): rank %ld of %ld, local rank %ld of %ld: not a place in the job", p->source,
                p->rank, p->world, p->local_rank, p->local_world);
        return -1;
    }
    return 0;
}

/* A TCP port nobody listens on now (the kernel's choice), or 0. */
static int free_port(void) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return 0;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK), .sin_port = 0};
    socklen_t len = sizeof a;
    int port = 0;
    if (bind(fd, (struct sockaddr *)&a, sizeof a) == 0 && getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    close(fd);
    return port;
}

/* FNV-1a of s. */
static uint32_t fnv1a(const char *s) {
    uint32_t h = 2166136261u;
    for (; *s; s++) h = (h ^ (uint8_t)*s) * 16777619u;
    return h;
}

/* Sets MASTER_ADDR and MASTER_PORT where the launcher did not (see the top). */
static int launch_rendezvous(const launch_place *p, cgnn_err *err) {
    if (!getenv("MASTER_ADDR") || !*getenv("MASTER_ADDR")) {
        if (p->local_world != p->world) {
            err_set(err, CGNN_ERR_INPUT,
                    "the job's %ld ranks span several hosts (%ld on this one): set MASTER_ADDR to rank 0's host "
                    "and MASTER_PORT to a free port there for torch.distributed (mpirun -x MASTER_ADDR=HOST "
                    "-x MASTER_PORT=PORT ...)",
                    p->world, p->local_world);
            return -1;
        }
        setenv("MASTER_ADDR", "127.0.0.1", 1);
    }
    if (!getenv("MASTER_PORT") || !*getenv("MASTER_PORT")) {
        int port = 0;
        const char *job = getenv("OMPI_MCA_ess_base_jobid");
        if (p->world == 1) port = free_port();
        else if (job && *job) port = 20000 + (int)(fnv1a(job) % 20000u); /* every rank: the same */
        if (!port) {
            err_set(err, CGNN_ERR_INPUT,
                    "set MASTER_PORT (a free port on rank 0's host) for torch.distributed: %s",
                    p->world == 1 ? "no free port found" : "the launcher gives no job id to derive one from");
            return -1;
        }
        char buf[16];
        snprintf(buf, sizeof buf, "%d", port);
        setenv("MASTER_PORT", buf, 1);
    }
    return 0;
}

/* The Python package built beside this cgnn (BUILD/python/cgnn, next to BUILD/cgnn) goes first on
 * PYTHONPATH, so the command imports the cgnn that launched it; an installed cgnn has its package
 * in the interpreter's dist-packages already. */
static void python_path_first(void) {
    char exe[4096], pkg[4096 + 64];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash) return;
    *slash = '\0';
    snprintf(pkg, sizeof pkg, "%s/python/cgnn/__init__.py", exe);
    if (access(pkg, R_OK) != 0) return;
    const char *old = getenv("PYTHONPATH");
    char *v = malloc(strlen(exe) + 16 + (old ? strlen(old) : 0));
    if (!v) return;
    sprintf(v, "%s/python%s%s", exe, old && *old ? ":" : "", old && *old ? old : "");
    setenv("PYTHONPATH", v, 1);
    free(v);
}

static void setenv_long(const char *name, long v) {
    char buf[32];
    snprintf(buf, sizeof buf, "%ld", v);
    setenv(name, buf, 1);
}

int cli_launch_command(task_config *tc, const char *job, const char *task_uri, const char *resource_uri,
                       cgnn_err *err) {
    launch_place p;
    if (launch_place_of(&p, err) != 0 || launch_rendezvous(&p, err) != 0) return -1;
    /* argv: the command's words (split on spaces, as GiGL's launcher), then the launcher's flags
     * and the trainerArgs */
    static char *argv[LAUNCH_MAX_ARGV + 1];
    static char flags[3][CONFIG_PATH_MAX + 32];
    int argc = 0;
    for (char *w = strtok(tc->command, " "); w; w = strtok(NULL, " "))
        if (argc < LAUNCH_MAX_ARGV - 3 - tc->num_command_args) argv[argc++] = w;
        else return err_set(err, CGNN_ERR_INPUT, "%s: trainerConfig.command: more than %d words", tc->file,
                            LAUNCH_MAX_ARGV - 3 - tc->num_command_args);
    snprintf(flags[0], sizeof flags[0], "--job_name=%s", job ? job : "");
    snprintf(flags[1], sizeof flags[1], "--task_config_uri=%s", task_uri);
    snprintf(flags[2], sizeof flags[2], "--resource_config_uri=%s", resource_uri ? resource_uri : "");
    for (int i = 0; i < 3; i++) argv[argc++] = flags[i];
    const char *a = tc->command_args;
    for (int i = 0; i < tc->num_command_args; i++, a += strlen(a) + 1) argv[argc++] = (char *)a;
    argv[argc] = NULL;

    setenv("GIGL_APPLIED_TASK_IDENTIFIER", job ? job : "", 1);
    setenv("GIGL_TASK_CONFIG_URI", task_uri, 1);
    setenv("GIGL_RESOURCE_CONFIG_URI", resource_uri ? resource_uri : "", 1);
    setenv("GIGL_COMPONENT", "Trainer", 1);
    setenv_long("RANK", p.rank);
    setenv_long("WORLD_SIZE", p.world);
    setenv_long("LOCAL_RANK", p.local_rank);
    setenv_long("LOCAL_WORLD_SIZE", p.local_world);
    python_path_first();
    if (p.rank == 0)
        fprintf(stderr, "cgnn train: running trainerConfig.command on %ld rank%s (%s; MASTER_ADDR=%s "
                        "MASTER_PORT=%s): %s ...\n",
                p.world, p.world == 1 ? "" : "s", p.source, getenv("MASTER_ADDR"), getenv("MASTER_PORT"), argv[0]);
    /* the kernels cgnn chose for this CPU (nn/blas.h) go to the command's own OpenBLAS (PyTorch's)
     * too: said, so that a user comparing with a run outside cgnn knows */
    const char *choice = getenv("CGNN_BLAS_CHOICE"), *core = getenv("OPENBLAS_CORETYPE");
    if (p.rank == 0 && choice && core && !strstr(choice, ":failed"))
        fprintf(stderr, "cgnn train: the command inherits OPENBLAS_CORETYPE=%s (cgnn's choice: OpenBLAS's own "
                        "detection picked narrower kernels on this CPU; see cgnn info)\n", core);
    fflush(NULL);
    execvp(argv[0], argv);
    return err_set(err, errno == ENOENT ? CGNN_ERR_INPUT : CGNN_ERR_RUNTIME,
                   "%s: trainerConfig.command: cannot run '%s': %s", tc->file, argv[0], strerror(errno));
}
