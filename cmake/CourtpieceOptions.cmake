# Build options: sanitizers and the warning set for our own code.
set(COURTPIECE_SANITIZE "" CACHE STRING "Sanitizers: '', 'address' (ASan+UBSan) or 'thread' (TSan)")
set_property(CACHE COURTPIECE_SANITIZE PROPERTY STRINGS "" address thread)
option(COURTPIECE_FUZZ "Build libFuzzer targets (needs clang)" OFF)

if(COURTPIECE_SANITIZE STREQUAL "address")
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
elseif(COURTPIECE_SANITIZE STREQUAL "thread")
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
elseif(NOT COURTPIECE_SANITIZE STREQUAL "")
  message(FATAL_ERROR "COURTPIECE_SANITIZE must be '', 'address' or 'thread', not '${COURTPIECE_SANITIZE}'")
endif()

# Warnings are errors in our own code (never applied to generated code). GCC 12 at -O3
# reports false positives for restrict and maybe-uninitialized (seen in the table bench and
# seats): they stay warnings, not errors, so Release builds of the benchmarks work.
function(courtpiece_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wshadow -Werror
    -Wno-error=restrict -Wno-error=maybe-uninitialized)
endfunction()
