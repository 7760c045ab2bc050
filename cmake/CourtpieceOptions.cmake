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

# COURTPIECE_HOT_CODE_FLAGS: extra compile options (a ;-list) for the CPU-bound libraries the
# tests spend their time in: the rules engine, the bots, the table machine, the rules CLI
# and tablesim, each marked with courtpiece_hot_code(<target>). tests/run.sh's sanitizer
# tree compiles everything at -O0 and passes -O1 here: under ASan+UBSan the optimizer is
# most of the compile (the gateway's ws_session.cc: 54 CPU s at -O1, 15 s at -O0), while
# only these libraries run long enough in the unit tests for -O1 to matter.
set(COURTPIECE_HOT_CODE_FLAGS "" CACHE STRING
  "Extra compile options for the CPU-bound libraries (courtpiece_hot_code), e.g. -O1")

# GCC collects its own garbage while it compiles, from a heap size and a growth it derives
# from the machine; the Boost.Beast and gRPC translation units allocate 0.8-1.5 GB and spent
# a tenth to a sixth of their CPU collecting (the gateway's ws_session.cc: 17.5 and 15.9 CPU s,
# with these parameters 14.4 and 13.2; peak memory 0.79 -> 1.05 GB). The output is the same.
option(COURTPIECE_GCC_LESS_GC "GCC: collect less often while compiling (faster, more memory)" ON)
if(COURTPIECE_GCC_LESS_GC AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  add_compile_options("SHELL:--param ggc-min-expand=200" "SHELL:--param ggc-min-heapsize=524288")
endif()

# COURTPIECE_COLD_CODE_OPT: an optimisation level (-O0, -O1, -Og) for all the code but the
# hot libraries, which keep the build type's level, and test code, which has its own
# (COURTPIECE_TEST_CODE_FLAGS, cmake/CourtpieceTest.cmake). tests/run.sh's first tree passes
# -O1: the services, tools and generated code there only have to pass the tests, and GCC
# compiles them at -O1 in about three quarters of the CPU of -O2 (the load tool's conn.cc:
# 26.7 s against 35.6 s). Empty (the default): the build type's level everywhere, as
# deploy/local/up.sh and the benchmark trees (build-rel) build.
set(COURTPIECE_COLD_CODE_OPT "" CACHE STRING
  "Optimisation level for all but the hot code and test code, e.g. -O1 (tests/run.sh)")
if(COURTPIECE_COLD_CODE_OPT)
  if(NOT COURTPIECE_COLD_CODE_OPT MATCHES "^-O[01g]$")
    message(FATAL_ERROR "COURTPIECE_COLD_CODE_OPT must be -O0, -O1 or -Og, not '${COURTPIECE_COLD_CODE_OPT}'")
  endif()
  add_compile_options(${COURTPIECE_COLD_CODE_OPT})
  # The hot code gets the build type's level back (a later -O wins).
  string(TOUPPER "${CMAKE_BUILD_TYPE}" _courtpiece_type)
  string(REGEX MATCH "-O[0-3gs]" courtpiece_build_type_opt "${CMAKE_CXX_FLAGS_${_courtpiece_type}}")
endif()

function(courtpiece_hot_code)
  foreach(target IN LISTS ARGN)
    courtpiece_pch_kind(${target} none)  # its own flags (CourtpiecePch.cmake)
    if(courtpiece_build_type_opt)
      target_compile_options(${target} PRIVATE ${courtpiece_build_type_opt})
    endif()
    if(COURTPIECE_HOT_CODE_FLAGS)
      target_compile_options(${target} PRIVATE ${COURTPIECE_HOT_CODE_FLAGS})
    endif()
  endforeach()
endfunction()

# Warnings are errors in our own code (never applied to generated code). GCC 12 at -O3
# reports false positives for restrict and maybe-uninitialized (seen in the table bench and
# seats): they stay warnings, not errors, so Release builds of the benchmarks work.
# Those two flags are GCC's; clang (the fuzz builds) does not know them.
function(courtpiece_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wshadow -Werror)
  # Our own code: the cold precompiled header unless it said otherwise (CourtpiecePch.cmake).
  get_property(pch_kind TARGET ${target} PROPERTY COURTPIECE_PCH_KIND)
  if(NOT pch_kind)
    courtpiece_pch_kind(${target} cold)
  endif()
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(${target} PRIVATE -Wno-error=restrict -Wno-error=maybe-uninitialized)
  endif()
endfunction()

# ccache, when installed: its directory lives outside the clone (COURTPIECE_CCACHE_DIR, else
# the user's cache directory) and paths are hashed relative to the source tree with the
# working directory left out, so a fresh clone anywhere on a machine that built before
# compiles only what changed. Debug info of a cache hit names the path it was built at.
# Depend mode (CCACHE_DEPEND): a miss compiles once, with no extra preprocessor run to hash
# the TU (a hit is found from the compiler's -MD list of headers, as in direct mode); that
# run was 0.25-0.7 s of each miss (services/gateway/http_server.cc: 0.7 s of 15).
# The sloppiness lets the TUs that include a precompiled header built moments earlier in
# the same build be cached (CourtpiecePch.cmake). A precompiled header holds the absolute
# paths it was built at, so its bytes differ in every clone: the TUs that use one leave it
# out of their hash (CCACHE_IGNOREHEADERS: the two PCH folders, as ccache sees them relative
# to the build directory, where Ninja runs every compile) and hash what it is made of
# instead: cmake/pch/*.h (CCACHE_EXTRAFILES, in every compile's hash) and the compiler and
# flags (in every hash anyway). Left out: a third-party header that only the PCH includes,
# changed in place by a package upgrade without a new compiler; delete the cache then.
option(COURTPIECE_CCACHE "Compile through ccache when it is installed" ON)
find_program(COURTPIECE_CCACHE_PROGRAM ccache)
if(COURTPIECE_CCACHE AND COURTPIECE_CCACHE_PROGRAM)
  if(DEFINED ENV{COURTPIECE_CCACHE_DIR})
    set(courtpiece_ccache_dir "$ENV{COURTPIECE_CCACHE_DIR}")
  elseif(DEFINED ENV{XDG_CACHE_HOME})
    set(courtpiece_ccache_dir "$ENV{XDG_CACHE_HOME}/courtpiece-ccache")
  else()
    set(courtpiece_ccache_dir "$ENV{HOME}/.cache/courtpiece-ccache")
  endif()
  set(courtpiece_launcher /usr/bin/env CCACHE_DIR=${courtpiece_ccache_dir}
    CCACHE_BASEDIR=${CMAKE_SOURCE_DIR} CCACHE_NOHASHDIR=1 CCACHE_MAXSIZE=8G CCACHE_DEPEND=1
    CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
    CCACHE_IGNOREHEADERS=CMakeFiles/courtpiece_pch_cold.dir:CMakeFiles/courtpiece_pch_test.dir
    CCACHE_EXTRAFILES=${CMAKE_SOURCE_DIR}/cmake/pch/cold_pch.h:${CMAKE_SOURCE_DIR}/cmake/pch/test_pch.h
    ${COURTPIECE_CCACHE_PROGRAM})
  set(CMAKE_C_COMPILER_LAUNCHER ${courtpiece_launcher})
  set(CMAKE_CXX_COMPILER_LAUNCHER ${courtpiece_launcher})
  message(STATUS "ccache: ${COURTPIECE_CCACHE_PROGRAM} (dir ${courtpiece_ccache_dir})")
endif()

# mold, when installed (deploy/local/install-deps.sh installs it), links every binary: each
# build links about 120 of them, most with gRPC and debug info (relinking all of them on 2
# cores: 17.5 s with GNU ld, 13.9 s with mold).
option(COURTPIECE_MOLD "Link with mold when it is installed" ON)
find_program(COURTPIECE_MOLD_PROGRAM mold)
if(COURTPIECE_MOLD AND COURTPIECE_MOLD_PROGRAM)
  add_link_options(-fuse-ld=mold)
  message(STATUS "linker: ${COURTPIECE_MOLD_PROGRAM}")
endif()

# COURTPIECE_JEMALLOC: link jemalloc (Debian's libjemalloc2, which redis-server already pulls
# in) into the services that allocate hardest per request, marked with
# courtpiece_use_jemalloc(<target>). glibc's malloc spent ~28% of the table service's CPU at
# 5,000 live tables (consolidating fastbins for the growth of event vectors, many small
# protobuf strings); with jemalloc the table's CPU per accepted move went from 0.19 to
# 0.14-0.15 ms (docs/table-load.md "jemalloc"). Never with a sanitizer (it brings its own
# allocator); OFF, or no library found: glibc's malloc, with a notice.
option(COURTPIECE_JEMALLOC "Link jemalloc into the services marked courtpiece_use_jemalloc" ON)
if(COURTPIECE_JEMALLOC AND COURTPIECE_SANITIZE STREQUAL "")
  find_library(COURTPIECE_JEMALLOC_LIBRARY NAMES jemalloc libjemalloc.so.2)
  if(NOT COURTPIECE_JEMALLOC_LIBRARY)
    message(STATUS "jemalloc not found (apt install libjemalloc2): glibc malloc everywhere")
  endif()
endif()

function(courtpiece_use_jemalloc target)
  if(COURTPIECE_JEMALLOC AND COURTPIECE_SANITIZE STREQUAL "" AND COURTPIECE_JEMALLOC_LIBRARY)
    # Whole executable: jemalloc's malloc/free replace libc's for every library in it.
    target_link_libraries(${target} PRIVATE ${COURTPIECE_JEMALLOC_LIBRARY})
  endif()
endfunction()
