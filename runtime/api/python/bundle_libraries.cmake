# Install-time script: copies libattend and the shared libraries it needs into the
# wheel's package folder, each under its SONAME (the name the loader asks for), real
# files only (a wheel holds no symbolic links). Left out, as every Linux system with a
# Python has them (the manylinux rule): the C library and its parts, the loader, and
# the C++ and GCC runtime.
#   in: ATTEND_LIBRARY, ATTEND_LIBRARY_SONAME, ATTEND_DESTINATION
file(MAKE_DIRECTORY "${ATTEND_DESTINATION}")
file(COPY_FILE "${ATTEND_LIBRARY}" "${ATTEND_DESTINATION}/${ATTEND_LIBRARY_SONAME}")
file(GET_RUNTIME_DEPENDENCIES LIBRARIES "${ATTEND_LIBRARY}"
     RESOLVED_DEPENDENCIES_VAR dependencies UNRESOLVED_DEPENDENCIES_VAR unresolved
     PRE_EXCLUDE_REGEXES "^(linux-vdso|ld-linux)" "^lib(c|m|dl|rt|pthread|stdc\\+\\+|gcc_s)\\.so"
     POST_EXCLUDE_REGEXES "/ld-linux[^/]*$")
if(unresolved)
  message(FATAL_ERROR "libattend needs libraries that cannot be found: ${unresolved}")
endif()
foreach(dependency IN LISTS dependencies)
  get_filename_component(name "${dependency}" NAME)  # the SONAME the loader looked up
  message(STATUS "Bundling ${name} (${dependency})")
  file(COPY_FILE "${dependency}" "${ATTEND_DESTINATION}/${name}")
endforeach()
