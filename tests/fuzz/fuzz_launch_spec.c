/* Fuzz target: the launch description of a CUDA source user kernel
 * (--launch, backends/launch_spec.h). Bytes 0-3 are the shape (m, n: 16 bits
 * each, plus 1), the rest up to a NUL the description. Besides "no crash, no
 * sanitizer report": an accepted description is a well-formed tree with a
 * grid and a block, evaluating it twice gives the same launch, an accepted
 * launch is within CUDA's limits, and every refusal is a usage error with a
 * message. */
#include <stdbool.h>

#include "fuzz_common.h"

#include "backends/launch_spec.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  tb_fuzz_setup();
  return 0;
}

/* Every operator's operands come before it: the parser builds bottom-up, so
 * evaluation terminates whatever the input. */
static void check_tree(const struct tb_launch_spec *s) {
  TB_FUZZ_CHECK(s->node_count >= 1 && s->node_count <= TB_LAUNCH_NODES_MAX, "%d nodes",
                s->node_count);
  for (int i = 0; i < s->node_count; ++i) {
    const struct tb_launch_node *node = &s->nodes[i];
    bool leaf = node->kind == '#' || node->kind == 'm' || node->kind == 'n';
    TB_FUZZ_CHECK(leaf || (node->lhs >= 0 && node->lhs < i && node->rhs >= 0 && node->rhs < i),
                  "node %d (%c) refers forward", i, node->kind);
    TB_FUZZ_CHECK(node->kind != '#' || node->value >= 0, "a negative literal");
  }
  TB_FUZZ_CHECK(s->grid[0] >= 0 && s->block[0] >= 0, "accepted without grid or block");
}

static void check_limits(const struct tb_launch_dims *d) {
  TB_FUZZ_CHECK(d->grid[0] >= 1 && d->grid[0] <= 2147483647u, "grid x %u", d->grid[0]);
  TB_FUZZ_CHECK(d->grid[1] >= 1 && d->grid[1] <= 65535 && d->grid[2] >= 1 && d->grid[2] <= 65535,
                "grid y/z %u %u", d->grid[1], d->grid[2]);
  TB_FUZZ_CHECK(d->block[0] >= 1 && d->block[1] >= 1 && d->block[2] >= 1 && d->block[2] <= 64,
                "block %u %u %u", d->block[0], d->block[1], d->block[2]);
  TB_FUZZ_CHECK((unsigned long long)d->block[0] * d->block[1] * d->block[2] <= 1024,
                "more than 1024 threads");
  TB_FUZZ_CHECK(d->smem_bytes <= 2147483647u, "smem %u", d->smem_bytes);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 4) {
    return 0;
  }
  int64_t m = 1 + (data[0] | data[1] << 8), n = 1 + (data[2] | data[3] << 8);
  char *text = tb_fuzz_string(data + 4, size - 4);
  if (text == NULL) {
    return 0;
  }
  struct tb_launch_spec spec;
  struct tb_error err = {0};
  if (tb_launch_spec_parse(text, &spec, &err) != TB_OK) {
    TB_FUZZ_CHECK(err.status == TB_ERR_USAGE && strstr(err.message, "--launch") != NULL,
                  "a refusal without its message: %s", err.message);
    free(text);
    return 0;
  }
  check_tree(&spec);
  struct tb_launch_dims first, again;
  struct tb_error eval_err = {0};
  enum tb_status st = tb_launch_spec_eval(&spec, m, n, &first, &eval_err);
  if (st == TB_OK) {
    check_limits(&first);
    TB_FUZZ_CHECK(tb_launch_spec_eval(&spec, m, n, &again, &eval_err) == TB_OK &&
                      memcmp(&first, &again, sizeof first) == 0,
                  "two evaluations differ");
  } else {
    TB_FUZZ_CHECK(st == TB_ERR_USAGE && eval_err.message[0] != '\0',
                  "an evaluation refused without a message");
  }
  free(text);
  return 0;
}
