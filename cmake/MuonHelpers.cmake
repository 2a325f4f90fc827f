# Helpers shared by the project's CMake files.

# muon_add_library(name SOURCES... [DEPENDS targets...] [LINK_LIBS libs...])
# A static library of this project, linked against libMLIR.so, installed and
# exported as Muon::<name> for find_package(Muon).
function(muon_add_library name)
  cmake_parse_arguments(ARG "" "" "DEPENDS;LINK_LIBS" ${ARGN})
  add_library(${name} STATIC ${ARG_UNPARSED_ARGUMENTS})
  if(ARG_DEPENDS)
    add_dependencies(${name} ${ARG_DEPENDS})
  endif()
  target_include_directories(${name} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/include>
    $<INSTALL_INTERFACE:include>)
  target_link_libraries(${name} PUBLIC ${ARG_LINK_LIBS})
  set_property(GLOBAL APPEND PROPERTY MUON_EXPORTED_LIBS ${name})
  install(TARGETS ${name} EXPORT MuonTargets
    ARCHIVE DESTINATION lib LIBRARY DESTINATION lib)
endfunction()
