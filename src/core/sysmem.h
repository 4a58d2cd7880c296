/* How much host memory is available now, to refuse cases before allocating. */
#ifndef TB_CORE_SYSMEM_H
#define TB_CORE_SYSMEM_H

/* MemAvailable from /proc/meminfo in bytes, or physical memory when that
 * line is missing. */
double tb_available_memory_bytes(void);

#endif
