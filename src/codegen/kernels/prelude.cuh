#define TB_INF __int_as_float(0x7f800000)
static __device__ __forceinline__ bool tb_aligned16(const void *p) {
  return (reinterpret_cast<unsigned long long>(p) & 15ull) == 0ull;
}
