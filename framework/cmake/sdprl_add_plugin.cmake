# sdprl_add_plugin(<kind> <name> SOURCES <files...> [OUTPUT_DIRECTORY <dir>] [INSTALL_DESTINATION <dir>])
#
# Builds an sdprl plugin: a MODULE library named sdprl-<kind>-<name>.so (the name the plugin host
# looks for), with hidden visibility, linked against sdprl::framework. <kind> is "loss" or
# "application". The CMake target is sdprl_<kind>_<name> with '-' replaced by '_'.
function(sdprl_add_plugin kind name)
  cmake_parse_arguments(ARG "" "OUTPUT_DIRECTORY;INSTALL_DESTINATION;TARGET" "SOURCES;LINK" ${ARGN})
  string(REPLACE "-" "_" target "sdprl_${kind}_${name}")
  if(ARG_TARGET)
    set(target ${ARG_TARGET})
  endif()
  add_library(${target} MODULE ${ARG_SOURCES})
  set_target_properties(${target} PROPERTIES
    PREFIX ""
    OUTPUT_NAME "sdprl-${kind}-${name}"
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    INSTALL_RPATH "$ORIGIN/../..")
  target_link_libraries(${target} PRIVATE sdprl::framework ${ARG_LINK})
  # A single-configuration build without CMAKE_BUILD_TYPE compiles with no optimisation at all: a
  # plugin built so ran 6.4x slower. Such a plugin gets the Release flags, as sdprl's own build.
  if(NOT CMAKE_BUILD_TYPE AND NOT CMAKE_CONFIGURATION_TYPES)
    separate_arguments(_sdprl_release_flags UNIX_COMMAND "${CMAKE_CXX_FLAGS_RELEASE}")
    target_compile_options(${target} PRIVATE ${_sdprl_release_flags})
    message(STATUS "sdprl_add_plugin(${kind} ${name}): no CMAKE_BUILD_TYPE; compiled with the Release flags "
                   "(${CMAKE_CXX_FLAGS_RELEASE})")
  endif()
  if(ARG_OUTPUT_DIRECTORY)
    set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${ARG_OUTPUT_DIRECTORY})
  endif()
  if(ARG_INSTALL_DESTINATION)
    install(TARGETS ${target} LIBRARY DESTINATION ${ARG_INSTALL_DESTINATION})
  endif()
  set(SDPRL_LAST_PLUGIN_TARGET ${target} PARENT_SCOPE)
endfunction()
