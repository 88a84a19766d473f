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
        /* 0 layers: the embedding table alone (link prediction, matrix factorisation) */
        FUZZ_ASSERT(a->num_layers >= 0 && a->num_layers <= CONFIG_MAX_LAYERS);
        /* exactly one num_neighbors form: one list of num_layers, or 1..max lists per edge type */
        FUZZ_ASSERT(a->num_etype_fanouts == 0 ? a->num_fanouts == a->num_layers
                                              : a->num_fanouts == 0 && a->num_etype_fanouts <= CONFIG_MAX_ETYPE_FANOUTS);
        for (int i = 0; i < a->num_etype_fanouts; i++)
            for (int h = 0; h < CONFIG_MAX_LAYERS; h++)
                FUZZ_ASSERT(h < a->num_layers ? a->etype_fanouts[i].fanouts[h] >= -1 : a->etype_fanouts[i].fanouts[h] == 0);
        FUZZ_ASSERT(c.num_node_types <= CONFIG_MAX_TYPES && c.num_edge_types <= CONFIG_MAX_TYPES);
        FUZZ_ASSERT(a->batch_size >= 1 && a->num_epochs >= 1);
        FUZZ_ASSERT(memchr(c.dataset_path, '\0', sizeof c.dataset_path) != NULL);
    }
    return 0;
}
