# `format` rewrites our sources with clang-format; `format-check` fails on any difference.
find_program(CLANG_FORMAT clang-format)
if(CLANG_FORMAT)
  file(GLOB_RECURSE COURTPIECE_FORMAT_SOURCES CONFIGURE_DEPENDS
    ${CMAKE_SOURCE_DIR}/libs/*.h ${CMAKE_SOURCE_DIR}/libs/*.cc
    ${CMAKE_SOURCE_DIR}/services/*.h ${CMAKE_SOURCE_DIR}/services/*.cc
    ${CMAKE_SOURCE_DIR}/tools/*.h ${CMAKE_SOURCE_DIR}/tools/*.cc
    ${CMAKE_SOURCE_DIR}/tests/*.h ${CMAKE_SOURCE_DIR}/tests/*.cc)
  add_custom_target(format COMMAND ${CLANG_FORMAT} -i ${COURTPIECE_FORMAT_SOURCES} VERBATIM)
  add_custom_target(format-check
    COMMAND ${CLANG_FORMAT} --dry-run --Werror ${COURTPIECE_FORMAT_SOURCES} VERBATIM)
endif()
