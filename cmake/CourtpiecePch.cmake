# Precompiled headers (COURTPIECE_PCH, GCC and clang): most of our translation units include
# gRPC, protobuf and Abseil (and the tests gtest and gmock), and the compilers spent a third
# to two thirds of their time on those headers (GCC -ftime-report, parsing: the table
# server's server.cc 48%, lobby_e2e_test.cc 67%). Two PCHs are built, one per set of compile
# flags, since a compiler uses a PCH only when the macros it was built with match the TU's
# (-O0's __NO_INLINE__, -pthread's _REENTRANT, gtest's GTEST_HAS_PTHREAD): `cold` (the
# services, libraries, tools and generated code: the build type's flags) and `test` (test
# code: COURTPIECE_TEST_CODE_FLAGS, gtest and gmock). Measured on this 2-core machine,
# user+sys CPU of one compile without -> with:
#   GCC, the first tree of tests/run.sh: services/table/server.cc 5.4 -> 4.3 s,
#     services/lobby/lobby_e2e_test.cc 5.5 -> 3.8 s, libs/common/src/config.cc 1.5 -> 0.8 s;
#     the whole tree's compile jobs 874 -> 585 s (cold ccache).
#   clang with ASan+UBSan at -O0, the sanitizer tree: server.cc 5.5 -> 4.4 s,
#     services/gateway/play_session_test.cc 5.2 -> 3.3 s.
#
# Each of our targets says what it is when it is declared (courtpiece_warnings: cold,
# courtpiece_test_code: test, courtpiece_hot_code and courtpiece_no_pch: none; the proto
# libraries: cold); courtpiece_apply_pch(), called once at the end of the top-level
# CMakeLists, gives every cold or test target its PCH (target_precompile_headers REUSE_FROM).
# A PCH the compiler cannot use is an error (GCC: CMake passes -Winvalid-pch and our targets
# -Werror; clang refuses a mismatched PCH itself), so a target whose flags differ fails to
# build instead of silently compiling slower. -DCOURTPIECE_PCH=OFF (the default) builds
# without them, which also shows whether each file includes what it uses.
#
# Off unless asked for: tests/run.sh turns it on in its first tree (GCC; code at -O1, tests at
# -O0), which CI builds and tests. Not in its sanitizer tree (clang): ccache hashes the bytes
# of a clang PCH (passed as -include-pch), which hold the clone's path, so a fresh clone
# missed there; a GCC PCH is reached through -include of a header and left out of the hash
# (CCACHE_IGNOREHEADERS, CourtpieceOptions.cmake). A plain -O2
# build with the PCH (deploy/local/up.sh's) met a GCC 12 false positive the same build
# without it does not show (-Werror=array-bounds inside std::string's char_traits, in
# libs/auth/src/keys.cc: the PCH changes what the optimizer inlines), so the binaries up.sh
# and the benchmark trees build are compiled as before. The fuzz builds never use it.
option(COURTPIECE_PCH "Precompiled headers for gRPC, protobuf, Abseil (and gtest in tests)" OFF)
if(COURTPIECE_PCH AND COURTPIECE_FUZZ)
  message(FATAL_ERROR "COURTPIECE_PCH: not with COURTPIECE_FUZZ")
endif()

if(COURTPIECE_PCH)
  # Every TU compiles with -pthread (its only effect at compile time is _REENTRANT), so that
  # the few that do not link Threads can use the same PCH as the rest.
  add_compile_options(-pthread)
endif()

function(courtpiece_pch_kind target kind)
  set_property(TARGET ${target} PROPERTY COURTPIECE_PCH_KIND ${kind})
endfunction()

# A target that must not use a PCH: its compile flags define a macro the PCH's headers read
# (hiredis's pkg-config gives -D_FILE_OFFSET_BITS=64, which glibc's headers read).
function(courtpiece_no_pch)
  foreach(target IN LISTS ARGN)
    courtpiece_pch_kind(${target} none)
  endforeach()
endfunction()

function(_courtpiece_collect_targets dir out)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub IN LISTS subdirs)
    _courtpiece_collect_targets(${sub} sub_targets)
    list(APPEND targets ${sub_targets})
  endforeach()
  set(${out} ${targets} PARENT_SCOPE)
endfunction()

function(courtpiece_apply_pch)
  if(NOT COURTPIECE_PCH)
    return()
  endif()
  set(dir ${CMAKE_SOURCE_DIR}/cmake/pch)
  set(deps gRPC::grpc++ protobuf::libprotobuf absl::status absl::statusor absl::strings
    absl::time Threads::Threads)
  add_library(courtpiece_pch_cold OBJECT ${dir}/pch_owner.cc)
  target_link_libraries(courtpiece_pch_cold PRIVATE ${deps})
  target_precompile_headers(courtpiece_pch_cold PRIVATE ${dir}/cold_pch.h)
  add_library(courtpiece_pch_test OBJECT ${dir}/pch_owner.cc)
  target_link_libraries(courtpiece_pch_test PRIVATE ${deps} GTest::gmock GTest::gtest)
  courtpiece_test_code(courtpiece_pch_test)
  target_precompile_headers(courtpiece_pch_test PRIVATE ${dir}/test_pch.h)
  courtpiece_pch_kind(courtpiece_pch_cold owner)
  courtpiece_pch_kind(courtpiece_pch_test owner)

  _courtpiece_collect_targets(${CMAKE_SOURCE_DIR} targets)
  foreach(target IN LISTS targets)
    get_property(kind TARGET ${target} PROPERTY COURTPIECE_PCH_KIND)
    if(kind STREQUAL "cold")
      target_precompile_headers(${target} REUSE_FROM courtpiece_pch_cold)
    elseif(kind STREQUAL "test")
      target_precompile_headers(${target} REUSE_FROM courtpiece_pch_test)
    endif()
  endforeach()
endfunction()
