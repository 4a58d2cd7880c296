# The CUDA templates of the generators (src/codegen/kernels/*.cuh)
# embedded into tb_codegen as C strings at build time (embed.cmake), so the
# binary carries them and a template edit rebuilds only this file.
set(TB_KERNEL_TEMPLATES
    prelude row_common sum softmax rmsnorm layernorm
    streaming register_rows block_streaming split_row shared_chunk cluster_row persistent_row
    subwarp_rows gemv
    gemv_combine)
list(TRANSFORM TB_KERNEL_TEMPLATES PREPEND ${CMAKE_CURRENT_LIST_DIR}/)
list(TRANSFORM TB_KERNEL_TEMPLATES APPEND .cuh)
set(TB_KERNEL_TEMPLATES_C ${CMAKE_CURRENT_BINARY_DIR}/codegen_kernel_templates.c)
add_custom_command(
  OUTPUT ${TB_KERNEL_TEMPLATES_C}
  COMMAND ${CMAKE_COMMAND} -DTB_OUTPUT=${TB_KERNEL_TEMPLATES_C}
          "-DTB_TEMPLATES=${TB_KERNEL_TEMPLATES}" -P ${CMAKE_CURRENT_LIST_DIR}/embed.cmake
  DEPENDS ${TB_KERNEL_TEMPLATES} ${CMAKE_CURRENT_LIST_DIR}/embed.cmake
  COMMENT "Embedding the CUDA kernel templates (src/codegen/kernels)"
  VERBATIM)
target_sources(tb_codegen PRIVATE ${TB_KERNEL_TEMPLATES_C})
