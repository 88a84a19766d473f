#!/bin/sh
# launch_probe.sh — a trainerConfig.command for tests/test_trainer_command.sh: writes its
# arguments (one per line) and the launcher's environment to $PROBE_DIR/rank$RANK, then exits
# with $PROBE_EXIT (default 0).
out="$PROBE_DIR/rank$RANK"
printf 'arg0 %s\n' "$0" >"$out"
for a in "$@"; do printf 'arg %s\n' "$a" >>"$out"; done
for v in RANK WORLD_SIZE LOCAL_RANK LOCAL_WORLD_SIZE MASTER_ADDR MASTER_PORT GIGL_APPLIED_TASK_IDENTIFIER \
         GIGL_TASK_CONFIG_URI GIGL_RESOURCE_CONFIG_URI GIGL_COMPONENT; do
  eval "printf 'env %s=%s\n' $v \"\${$v-(unset)}\"" >>"$out"
done
exit "${PROBE_EXIT:-0}"
