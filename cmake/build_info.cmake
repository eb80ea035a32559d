# Writes OUT (build_info.cpp) from IN at build time: the version, the git commit of SRC (with -dirty when the
# tree has changes) and the build date (SOURCE_DATE_EPOCH when set, for reproducible builds). configure_file
# rewrites OUT only when its text changes, so an unchanged commit rebuilds nothing.
set(MSMON_COMMIT "unknown")
find_package(Git QUIET)
if(GIT_FOUND AND EXISTS "${SRC}/.git")
  execute_process(COMMAND "${GIT_EXECUTABLE}" -C "${SRC}" rev-parse --short=12 HEAD
                  OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc ERROR_QUIET)
  if(rc EQUAL 0 AND commit)
    set(MSMON_COMMIT "${commit}")
    execute_process(COMMAND "${GIT_EXECUTABLE}" -C "${SRC}" diff --quiet HEAD -- RESULT_VARIABLE dirty ERROR_QUIET)
    if(NOT dirty EQUAL 0)
      set(MSMON_COMMIT "${MSMON_COMMIT}-dirty")
    endif()
  endif()
endif()
string(TIMESTAMP MSMON_BUILD_DATE "%Y-%m-%d" UTC)
configure_file("${IN}" "${OUT}" @ONLY)
