# courtpiece_proto_library(<name> PROTOS <files relative to protos/>...)
# Generates messages and gRPC stubs (with gMock mocks) into the build tree and wraps them
# in a static library <name>. Include as "courtpiece/<area>/v1/<file>.pb.h" / ".grpc.pb.h".
set(COURTPIECE_PROTO_ROOT ${CMAKE_SOURCE_DIR}/protos)
# The generated sources depend only on the .proto files and protoc, not on the build type or
# sanitizers, so a second build tree (tests/run.sh's ASan pass) may point here at the first
# one's directory instead of running protoc again. Never build two trees sharing it at once.
set(COURTPIECE_PROTO_OUT ${CMAKE_BINARY_DIR}/gen CACHE PATH
  "Where protoc writes generated sources (default: <build>/gen)")

function(courtpiece_proto_library name)
  cmake_parse_arguments(ARG "" "" "PROTOS;DEPS" ${ARGN})
  if(NOT ARG_PROTOS)
    message(FATAL_ERROR "courtpiece_proto_library(${name}): PROTOS is required")
  endif()
  set(srcs)
  set(hdrs)
  foreach(proto ${ARG_PROTOS})
    get_filename_component(dir ${proto} DIRECTORY)
    get_filename_component(base ${proto} NAME_WE)
    set(out ${COURTPIECE_PROTO_OUT}/${dir}/${base})
    list(APPEND srcs ${out}.pb.cc ${out}.grpc.pb.cc)
    list(APPEND hdrs ${out}.pb.h ${out}.grpc.pb.h ${out}_mock.grpc.pb.h)
    add_custom_command(
      OUTPUT ${out}.pb.cc ${out}.pb.h ${out}.grpc.pb.cc ${out}.grpc.pb.h ${out}_mock.grpc.pb.h
      COMMAND ${CMAKE_COMMAND} -E make_directory ${COURTPIECE_PROTO_OUT}
      COMMAND protobuf::protoc
        --proto_path=${COURTPIECE_PROTO_ROOT}
        --cpp_out=${COURTPIECE_PROTO_OUT}
        --grpc_out=generate_mock_code=true:${COURTPIECE_PROTO_OUT}
        --plugin=protoc-gen-grpc=$<TARGET_FILE:gRPC::grpc_cpp_plugin>
        ${COURTPIECE_PROTO_ROOT}/${proto}
      DEPENDS ${COURTPIECE_PROTO_ROOT}/${proto} protobuf::protoc gRPC::grpc_cpp_plugin
      COMMENT "protoc ${proto}"
      VERBATIM)
  endforeach()
  add_library(${name} STATIC ${srcs} ${hdrs})
  target_include_directories(${name} PUBLIC ${COURTPIECE_PROTO_OUT})
  target_link_libraries(${name} PUBLIC protobuf::libprotobuf gRPC::grpc++ ${ARG_DEPS})
  courtpiece_pch_kind(${name} cold)  # CourtpiecePch.cmake
endfunction()
