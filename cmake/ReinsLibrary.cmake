# reins_library(NAME SOURCES a.cc b.cc DEPS x y)
# One static library per subsystem. Warnings and sanitizer flags are set here, on
# our own targets only, never through global flag edits.
function(reins_apply_flags target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wno-missing-field-initializers)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # GCC 12 flags Boost.Asio's coroutine frames (its own operator new/delete pair) as
    # mismatched: a known false positive of the C++20 coroutine lowering.
    target_compile_options(${target} PRIVATE -Wno-mismatched-new-delete)
    # GCC 12 at -O3 (the Release build) reports `"text" + std::string` as an overlapping
    # memcpy inside libstdc++ (-Wrestrict, GCC bug 105329): about thirty places, none real.
    if(CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
      target_compile_options(${target} PRIVATE -Wno-restrict)
    endif()
  endif()
  if(REINS_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
  if(REINS_SANITIZE)
    target_compile_options(${target} PRIVATE -fsanitize=address,undefined -fno-omit-frame-pointer)
    target_link_options(${target} PUBLIC -fsanitize=address,undefined)
  endif()
  if(REINS_TSAN)
    # GCC warns that TSan does not model atomic_thread_fence (Boost.Asio's handler
    # recycling uses it); the races it could hide are in Asio's own memory reuse.
    target_compile_options(${target} PRIVATE -fsanitize=thread -fno-omit-frame-pointer -Wno-tsan)
    target_link_options(${target} PUBLIC -fsanitize=thread)
  endif()
  if(REINS_FUZZ)
    # Coverage for libFuzzer in every library it reaches; the fuzzer's own main is
    # linked only into the fuzz binaries (fuzz/CMakeLists.txt). UBSan's 'function' check
    # breaks clang 14's assembler next to coverage ("difference across sections").
    target_compile_options(${target} PRIVATE -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize=function
                           -fno-omit-frame-pointer)
    target_link_options(${target} PUBLIC -fsanitize=address,undefined)
  endif()
endfunction()

# A library sees its own folder of src/ and, through its DEPS, the folders of the
# libraries below it; never src/ as a whole. Each folder gets an include root in the
# build tree holding one link, <root>/<folder> -> src/<folder>, so `#include
# "pipeline/runtime.h"` from a library that does not depend on the pipeline does not
# compile.
function(reins_folder_include_root out)
  file(RELATIVE_PATH folder ${PROJECT_SOURCE_DIR}/src ${CMAKE_CURRENT_SOURCE_DIR})
  set(root ${PROJECT_BINARY_DIR}/include-roots/${folder})
  if(NOT EXISTS ${root}/${folder})
    file(MAKE_DIRECTORY ${root})
    file(CREATE_LINK ${CMAKE_CURRENT_SOURCE_DIR} ${root}/${folder} SYMBOLIC)
  endif()
  set(${out} ${root} PARENT_SCOPE)
endfunction()

function(reins_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  reins_folder_include_root(root)
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR}/include ${root})
  target_link_libraries(${name} PUBLIC ${ARG_DEPS})
  reins_apply_flags(${name})
endfunction()

# reins_test(NAME SOURCES a_test.cc DEPS lib)
# reins_test(NAME SOURCES a.cc DEPS x [POSTGRES]): POSTGRES tests share the run's
# PostgreSQL server (the `postgres` fixture, tests/support/CMakeLists.txt).
function(reins_test name)
  cmake_parse_arguments(ARG "POSTGRES" "" "SOURCES;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gmock GTest::gtest_main)
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests)
  target_compile_definitions(${name} PRIVATE REINS_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  reins_apply_flags(${name})
  if(ARG_POSTGRES)
    gtest_discover_tests(${name} WORKING_DIRECTORY ${PROJECT_SOURCE_DIR} DISCOVERY_TIMEOUT 60
      PROPERTIES FIXTURES_REQUIRED postgres ENVIRONMENT REINS_TEST_POSTGRES=${REINS_TEST_POSTGRES_FILE})
  else()
    gtest_discover_tests(${name} WORKING_DIRECTORY ${PROJECT_SOURCE_DIR} DISCOVERY_TIMEOUT 60)
  endif()
endfunction()
