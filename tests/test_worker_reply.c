/* The torch worker's device_sample reply (providers/worker_reply.h): a
 * control sample's reply passes with the worker's clock around its session,
 * and a reply without that clock, or with its end before its begin, is the
 * provider's failure with a message naming the field. */
#include <stdio.h>
#include <string.h>

#include "providers/worker_reply.h"
#include "test_support.h"

/* A control sample of 64 calls as the worker writes it, with `host` spliced
 * in (the begin and end fields, or nothing). */
static enum tb_status parse_control(const char *host, struct tb_error *err) {
  char line[1024];
  snprintf(line, sizeof line,
           "{\"ok\": true, \"code\": 0, \"error\": \"\", \"scope\": 1, \"gpu_elapsed_ns\": "
           "248576.0, \"declared_calls\": 64, \"counted_launches\": 0, \"kernels_seen\": 0, "
           "\"kernel_sum_ns\": 0.0, \"side_stream_kernels\": 0, \"clock_drift_ns\": 0.0, "
           "\"kernels_before_launch\": 0%s}",
           host);
  json_t *reply = NULL;
  memset(err, 0, sizeof *err); /* a fresh error each reply */
  enum tb_status st = tb_worker_reply_parse(line, strlen(line), "device_sample", 64, &reply, err);
  assert_true((st == TB_OK) == (reply != NULL));
  json_decref(reply);
  return st;
}

static void the_host_clock_around_a_sample_is_checked(void **state) {
  struct tb_error err = {0};
  assert_int_equal(
      parse_control(", \"begin_host_ns\": 5000000000, \"end_host_ns\": 5000300000", &err), TB_OK);
  assert_int_equal(parse_control("", &err), TB_ERR_RUN);
  assert_string_equal(err.message,
                      "the torch worker's reply to device_sample has begin_host_ns missing");
  assert_int_equal(
      parse_control(", \"begin_host_ns\": 5000300000, \"end_host_ns\": 5000000000", &err),
      TB_ERR_RUN);
  assert_string_equal(err.message,
                      "the torch worker's reply to device_sample has end_host_ns out of range");
  assert_int_equal(parse_control(", \"begin_host_ns\": 1.5, \"end_host_ns\": 2", &err), TB_ERR_RUN);
  assert_non_null(strstr(err.message, "begin_host_ns that is not a whole number"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(the_host_clock_around_a_sample_is_checked),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
