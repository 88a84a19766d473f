/* fuzz_resource_config.c — libFuzzer target: the GiGL resource config reader
 * (config_load_resource).
 *
 * Input: the bytes of a resource config YAML, written to a file and loaded by path. It must
 * load (values in their documented ranges) or fail with an input error naming the file.
 */
#include "fuzz_util.h"
#include "train/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char path[4096];
    fuzz_write("resource.yaml", data, size, path);
    resource_config c;
    cgnn_err err = {0};
    int rc = config_load_resource(&c, path, &err);
    fuzz_check(rc, &err, path);
    if (rc == 0)
        FUZZ_ASSERT(c.num_workers >= 0 && c.num_workers <= 1024 && c.num_replicas >= 0 &&
                    c.num_threads_per_replica >= 0 && c.num_threads_per_replica <= 1024);
    return 0;
}
