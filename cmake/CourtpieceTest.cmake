# courtpiece_test(<name> SOURCES ... DEPS ... LABELS unit|integration [TIMEOUT s] [COST s]
#                 [FULL_SCALE])
# A GoogleTest binary in build/bin registered with ctest under the given labels. FULL_SCALE:
# a unit test whose iteration counts the sanitizer tree divides (ScaledIterations), so that
# every tree runs it (COURTPIECE_UNIT_TESTS below).
#
# COST: about how many seconds the test runs (ctest's COST property). tests/run.sh runs ctest
# with many more jobs than cores (most long tests wait on game timers, not the CPU), so the
# wall time is set by when the longest tests start: ctest starts the costliest first. After
# one run ctest knows the real times (build/Testing/Temporary/CTestCostData.txt); COST orders
# the first run of a fresh build tree, i.e. every CI run. Give it to any test over ~20 s.
#
# courtpiece_unit_tests: a target that builds exactly the binaries the tests labelled unit
# run, and nothing else (no integration tests, benchmarks or service binaries the unit tests
# do not run). tests/run.sh's sanitizer pass builds only it and runs `ctest -L unit`.
# courtpiece_test() adds its binary when LABELS has unit, so new components get it for free;
# a unit test added with a plain add_test() names what it runs with
# courtpiece_unit_test_binaries(<target>...). A binary a test runs (a CLI under test) is
# add_dependencies() of the test binary, which this target then builds too. A binary left
# out fails loudly: ctest reports "Could not find executable" and the test fails.
#
# COURTPIECE_TEST_CODE_FLAGS: extra compile options for test code only: the test binaries'
# own sources, never the libraries and tools they test. (tests/run.sh's sanitizer tree is a
# Debug tree at -O0 with its hot code at -O1, COURTPIECE_HOT_CODE_FLAGS: test bodies cost 2-3
# times as much to compile under ASan+UBSan at -O1 as at -O0, and sanitizers check -O0 code
# fully; it passes -g0 here, test bodies without line tables.) courtpiece_test() applies it;
# other test binaries call courtpiece_test_code(<target>).
include(GoogleTest)
# Its default, AUTO, is -O0 in the optimized configurations (RelWithDebInfo, Release) and
# nothing in others: test bodies run little of the CPU-bound work themselves (that is in
# the libraries they test, which keep their flags, and in the CPU-bound tests marked hot
# with courtpiece_hot_code()), and GCC compiles them in about three quarters of the time
# it takes at -O1 and half of -O2 (gateway http_server_test.cc: 12.5, 16.9 and about
# 24 CPU s).
set(COURTPIECE_TEST_CODE_FLAGS AUTO CACHE STRING
  "Extra compile options (a ;-list) for test sources only, e.g. -O0 (tests/run.sh's ASan \
tree); AUTO: -O0 in RelWithDebInfo and Release")
add_custom_target(courtpiece_unit_tests)

# COURTPIECE_UNIT_TESTS: which of courtpiece_test()'s unit tests this tree builds and runs.
#   all         every one (the default; a sanitizer tree; tests/run.sh --no-sanitizers).
#   full_scale  only those marked FULL_SCALE: the heavy randomized tests that run a tenth of
#               their iterations under the sanitizers (ScaledIterations,
#               courtpiece/common/test_scale.h), so their full counts run here. tests/run.sh
#               configures its first tree so: its sanitizer tree builds and runs every unit
#               test, and compiling the others twice was a sixth of a cold CI run's CPU. Their
#               binaries stay targets here (out of `all`, not registered with ctest), so
#               `cmake --build build --target <test>` still builds one.
# Unit tests registered with a plain add_test() (the CLIs, tablesim, fuzz corpora, the
# rules property shards) run in both trees.
set(COURTPIECE_UNIT_TESTS all CACHE STRING
  "Unit tests this tree builds and runs: all, or full_scale (tests/run.sh's first tree)")
set_property(CACHE COURTPIECE_UNIT_TESTS PROPERTY STRINGS all full_scale)
if(NOT COURTPIECE_UNIT_TESTS MATCHES "^(all|full_scale)$")
  message(FATAL_ERROR "COURTPIECE_UNIT_TESTS must be all or full_scale, not '${COURTPIECE_UNIT_TESTS}'")
endif()

# COURTPIECE_TEST_TIMEOUT_SCALE: a test's TIMEOUT (a hang guard, never a performance check)
# is multiplied by it. AUTO: 4 in a sanitizer tree, else 1. tests/run.sh runs the
# sanitizer tree's tests at nice 19 beside ctest and the browsers, so a test that takes 6 s
# in the first tree took 157 s there (courtpiece_rules_cli_test), and CI once stopped
# replay_cases at its 120 s. courtpiece_test() and courtpiece_test_shards() apply it, and
# every unit test added with a plain add_test() (what the sanitizer lane runs) sets its
# timeout with courtpiece_test_timeout(); a few integration tests still set TIMEOUT directly.
set(COURTPIECE_TEST_TIMEOUT_SCALE AUTO CACHE STRING
  "Multiplier of every test's TIMEOUT; AUTO: 4 with COURTPIECE_SANITIZE, else 1")
if(COURTPIECE_TEST_TIMEOUT_SCALE STREQUAL "AUTO")
  if(COURTPIECE_SANITIZE)
    set(courtpiece_timeout_scale 4)
  else()
    set(courtpiece_timeout_scale 1)
  endif()
elseif(COURTPIECE_TEST_TIMEOUT_SCALE MATCHES "^[1-9][0-9]*$")
  set(courtpiece_timeout_scale ${COURTPIECE_TEST_TIMEOUT_SCALE})
else()
  message(FATAL_ERROR "COURTPIECE_TEST_TIMEOUT_SCALE must be AUTO or a positive integer, \
not '${COURTPIECE_TEST_TIMEOUT_SCALE}'")
endif()

# courtpiece_test_timeout(<seconds> <test>...): TIMEOUT of these tests, scaled as above.
function(courtpiece_test_timeout seconds)
  math(EXPR scaled "${seconds} * ${courtpiece_timeout_scale}")
  set_tests_properties(${ARGN} PROPERTIES TIMEOUT ${scaled})
endfunction()

function(courtpiece_test_code target)
  get_property(pch_kind TARGET ${target} PROPERTY COURTPIECE_PCH_KIND)
  if(NOT pch_kind STREQUAL "none")
    courtpiece_pch_kind(${target} test)  # CourtpiecePch.cmake
  endif()
  if(COURTPIECE_TEST_CODE_FLAGS STREQUAL "AUTO")
    target_compile_options(${target} PRIVATE $<$<CONFIG:RelWithDebInfo,Release>:-O0>)
  elseif(COURTPIECE_TEST_CODE_FLAGS)
    target_compile_options(${target} PRIVATE ${COURTPIECE_TEST_CODE_FLAGS})
  endif()
endfunction()

function(courtpiece_unit_test_binaries)
  if(NOT ARGN)
    message(FATAL_ERROR "courtpiece_unit_test_binaries(): name at least one target")
  endif()
  add_dependencies(courtpiece_unit_tests ${ARGN})
endfunction()

function(courtpiece_test name)
  cmake_parse_arguments(ARG "FULL_SCALE" "TIMEOUT;COST" "SOURCES;DEPS;LABELS;ARGS" ${ARGN})
  if(NOT ARG_LABELS)
    message(FATAL_ERROR "courtpiece_test(${name}): LABELS unit or integration is required")
  endif()
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 300)
  endif()
  set(_registered TRUE)
  if("unit" IN_LIST ARG_LABELS AND NOT ARG_FULL_SCALE)
    # A unit test that scales its counts down under the sanitizers must run in full in the
    # first tree. Checked when cmake configures (its own sources, not the headers they include).
    foreach(_source ${ARG_SOURCES})
      get_filename_component(_path ${_source} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
      file(READ ${_path} _text)
      if(_text MATCHES "ScaledIterations")
        message(FATAL_ERROR "courtpiece_test(${name}): ${_source} uses ScaledIterations: mark it FULL_SCALE")
      endif()
    endforeach()
    if(COURTPIECE_UNIT_TESTS STREQUAL "full_scale")
      set(_registered FALSE)  # the sanitizer tree beside this one runs it
    endif()
  endif()
  if(_registered)
    add_executable(${name} ${ARG_SOURCES})
  else()
    add_executable(${name} EXCLUDE_FROM_ALL ${ARG_SOURCES})
  endif()
  courtpiece_warnings(${name})
  courtpiece_test_code(${name})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gmock GTest::gtest_main)
  if(NOT _registered)
    courtpiece_unit_test_binaries(${name})
    return()
  endif()
  add_test(NAME ${name} COMMAND ${name} ${ARG_ARGS})
  set_tests_properties(${name} PROPERTIES LABELS "${ARG_LABELS}")
  courtpiece_test_timeout(${ARG_TIMEOUT} ${name})
  if(ARG_COST)
    set_tests_properties(${name} PROPERTIES COST ${ARG_COST})
  endif()
  if("unit" IN_LIST ARG_LABELS)
    courtpiece_unit_test_binaries(${name})
  endif()
endfunction()

# courtpiece_test_shards(<binary> PREFIX <p> REDIS_DB_ENV <VAR> COVER_TEST <name>
#                        TIMEOUT <s> COST <s> SHARDS "name:db:filter[:filter...]" ...)
# A long integration binary as ctest entries that run side by side: one per shard, named
# <p>_<name>, running <binary> with the shard's gtest filters and its own Redis database
# number in the environment variable <VAR> (each suite flushes its own database; tests/run.sh
# lists which numbers are taken). Plus the test <name> of COVER_TEST, which fails unless the
# shards' filters select every test of the binary exactly once.
function(courtpiece_test_shards binary)
  cmake_parse_arguments(ARG "" "PREFIX;REDIS_DB_ENV;COVER_TEST;TIMEOUT;COST" "SHARDS" ${ARGN})
  foreach(_shard ${ARG_SHARDS})
    string(REPLACE ":" ";" _parts "${_shard}")
    list(POP_FRONT _parts _name _db)
    string(REPLACE ";" ":" _filter "${_parts}")
    add_test(NAME ${ARG_PREFIX}_${_name} COMMAND ${binary} --gtest_filter=${_filter})
    # COST: tests/run.sh starts the longest first.
    set_tests_properties(${ARG_PREFIX}_${_name} PROPERTIES LABELS integration
      COST ${ARG_COST} ENVIRONMENT "${ARG_REDIS_DB_ENV}=${_db}")
    courtpiece_test_timeout(${ARG_TIMEOUT} ${ARG_PREFIX}_${_name})
  endforeach()
  add_test(NAME ${ARG_COVER_TEST}
    COMMAND ${CMAKE_COMMAND} -DBIN=$<TARGET_FILE:${binary}> "-DSHARDS=${ARG_SHARDS}"
      -P ${PROJECT_SOURCE_DIR}/cmake/test_shards_check.cmake)
  set_tests_properties(${ARG_COVER_TEST} PROPERTIES LABELS integration TIMEOUT 60)
endfunction()
