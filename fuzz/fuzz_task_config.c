/* fuzz_task_config.c — libFuzzer target: the GiGL task config reader (config_load_task).
 *
 * Input: the bytes of a task config YAML, written to a file and loaded by path, as
 * `cgnn train --task_config_uri` does. It must load or fail with an input error naming the
 * file; a loaded config must satisfy the invariants the trainer relies on.
 */
#include "fuzz_util.h"
#include "train/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static task_config c; /* ~30 KB of paths: not on the stack */
    char path[4096];
    fuzz_write("task.yaml", data, size, path);
    cgnn_err err = {0};
    int rc = config_load_task(&c, path, &err);
    fuzz_check(rc, &err, path);
    if (rc == 0) {
        const trainer_args *a = &c.args;
        FUZZ_ASSERT(c.task == TASK_NODE_CLASSIFICATION || c.task == TASK_LINK_PREDICTION);
        FUZZ_ASSERT(a->num_layers >= 1 && a->num_fanouts == a->num_layers);
        FUZZ_ASSERT(a->batch_size >= 1 && a->num_epochs >= 1);
        FUZZ_ASSERT(memchr(c.dataset_path, '\0', sizeof c.dataset_path) != NULL);
    }
    return 0;
}
