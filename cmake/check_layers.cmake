# Checks the layering the build declares (src/CMakeLists.txt, tb_layer):
#   cmake -DTB_LAYER_MANIFEST=<build>/src/layers.cmake -DTB_NM=nm
#         -DTB_SOURCE_DIR=<source>/src -P cmake/check_layers.cmake
# A layer may use only itself and the layers it links (directly or through
# them). Two rules, each failing with every offence listed:
#   symbols:  every symbol an object of a layer leaves undefined that another
#             layer defines must be defined by a layer it links (nm on the
#             static libraries; libc, jansson and the like are no layer);
#   includes: every #include "<folder>/..." in the layer's .c and .h files
#             must name its own folder or the folder of a layer it links.
# The manifest (generated at configure time) sets TB_LAYERS and, for each
# layer, <layer>_FOLDER, <layer>_BELOW (every layer it links) and
# <layer>_ARCHIVE.
cmake_minimum_required(VERSION 3.20)
include(${TB_LAYER_MANIFEST})

set(offences "")

foreach(layer IN LISTS TB_LAYERS)
  set(layer_of_${${layer}_FOLDER} ${layer})
endforeach()

# Which layer defines each global symbol.
foreach(layer IN LISTS TB_LAYERS)
  execute_process(COMMAND ${TB_NM} ${${layer}_ARCHIVE} OUTPUT_VARIABLE listing
                  ERROR_VARIABLE nm_error RESULT_VARIABLE nm_status)
  if(NOT nm_status EQUAL 0)
    message(FATAL_ERROR "nm ${${layer}_ARCHIVE} failed: ${nm_error}")
  endif()
  string(REPLACE "\n" ";" lines "${listing}")
  set(object "")
  set(${layer}_USES "")
  foreach(line IN LISTS lines)
    if(line MATCHES "^(.+\\.o):$")
      set(object ${CMAKE_MATCH_1})
    elseif(line MATCHES "^ +[Uw] ([^ ]+)$")
      list(APPEND ${layer}_USES "${object}|${CMAKE_MATCH_1}")
    elseif(line MATCHES "^[0-9a-fA-F]+ [BCDGRSTVWiu] ([^ ]+)$")
      list(APPEND defined_by_${CMAKE_MATCH_1} ${layer})
    endif()
  endforeach()
endforeach()

foreach(layer IN LISTS TB_LAYERS)
  set(allowed ${layer} ${${layer}_BELOW})
  foreach(use IN LISTS ${layer}_USES)
    string(REPLACE "|" ";" use "${use}")
    list(GET use 0 object)
    list(GET use 1 symbol)
    if(NOT DEFINED defined_by_${symbol})
      continue() # outside every layer: the C library, jansson, the timing library, ...
    endif()
    set(ok FALSE)
    foreach(owner IN LISTS defined_by_${symbol})
      if(owner IN_LIST allowed)
        set(ok TRUE)
      endif()
    endforeach()
    if(NOT ok)
      list(JOIN defined_by_${symbol} ", " owners)
      list(APPEND offences
           "${layer} (${${layer}_FOLDER}/, ${object}) uses ${symbol}, defined in ${owners}")
    endif()
  endforeach()
endforeach()

foreach(layer IN LISTS TB_LAYERS)
  set(allowed ${${layer}_FOLDER})
  foreach(lower IN LISTS ${layer}_BELOW)
    list(APPEND allowed ${${lower}_FOLDER})
  endforeach()
  file(GLOB_RECURSE files RELATIVE ${TB_SOURCE_DIR} ${TB_SOURCE_DIR}/${${layer}_FOLDER}/*.c
       ${TB_SOURCE_DIR}/${${layer}_FOLDER}/*.h)
  foreach(file IN LISTS files)
    file(STRINGS ${TB_SOURCE_DIR}/${file} includes REGEX "^[ \t]*#[ \t]*include[ \t]*\"[^\"/]+/")
    foreach(line IN LISTS includes)
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([^\"/]+)/.*" "\\1" folder "${line}")
      if(DEFINED layer_of_${folder} AND NOT folder IN_LIST allowed)
        set(header_layer ${layer_of_${folder}})
        list(APPEND offences "${layer} (${file}) includes \"${folder}/...\", of ${header_layer}")
      endif()
    endforeach()
  endforeach()
endforeach()

if(offences)
  list(JOIN offences "\n  " listed)
  message(FATAL_ERROR "layering broken: a layer may use only itself and the layers it links "
          "(src/CMakeLists.txt, docs/design.md \"Layers\"):\n  ${listed}")
endif()
