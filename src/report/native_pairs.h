/* The native (automatic variant) and framework (torch, torch-compile,
 * cublas) records of the same computation in one run, one pair per
 * framework and case: what the report's ratios are taken from. */
#ifndef TB_REPORT_NATIVE_PAIRS_H
#define TB_REPORT_NATIVE_PAIRS_H

#include <stddef.h>

#include "results/model.h"

#define TB_REPORT_MAX_PAIRS 4096

struct tb_native_pair {
  const struct tb_model_case *native, *framework;
};

/* At most `most` pairs, native records in file order, then their frameworks. */
size_t tb_native_pairs(const struct tb_results_model *m, struct tb_native_pair *pairs, size_t most);

#endif
