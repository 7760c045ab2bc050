// gRPC server reflection (grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo, and
// the same messages under grpc.reflection.v1) for the own-HTTP/2 mobile front, as libgrpc's
// reflection plugin gave the libgrpc front: tools such as grpcurl list and describe the
// gateway's CourtPiece service without the .proto files. Pure: request bytes in, response
// bytes out (the messages in protobuf's wire format, by hand: their generated code is not
// installed with Debian's libgrpc++).
//
// Contract: Answer(request) is the ServerReflectionResponse for one ServerReflectionRequest,
// `original_request` echoed:
//   - list_services: the services named at construction;
//   - file_by_filename / file_containing_symbol: that file and every file it imports,
//     transitively, each a serialized FileDescriptorProto (dependencies after the file), as
//     libgrpc does; only the files of the named services and their imports are served,
//     anything else (the gateway links other services' protos) is error NOT_FOUND;
//   - all_extension_numbers_of_type: the type's name and no numbers (there are no extensions);
//   - file_containing_extension: error NOT_FOUND;
//   - bytes that do not parse: std::nullopt (the front ends the call INVALID_ARGUMENT).
// Thread-safety: const after construction.
#ifndef COURTPIECE_SERVICES_GATEWAY_H2_REFLECTION_H_
#define COURTPIECE_SERVICES_GATEWAY_H2_REFLECTION_H_

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace courtpiece::gateway {

class Reflection {
 public:
  // `services`: full names in the generated descriptor pool ("courtpiece.client.v1.CourtPiece");
  // names the pool lacks are left out.
  explicit Reflection(const std::vector<std::string>& services);

  std::optional<std::string> Answer(std::string_view request) const;
  const std::vector<std::string>& services() const { return services_; }

 private:
  std::string FilesFrom(const std::string& file_name) const;

  std::vector<std::string> services_;
  std::set<std::string> files_;  // the services' files and their imports
};

}  // namespace courtpiece::gateway

#endif  // COURTPIECE_SERVICES_GATEWAY_H2_REFLECTION_H_
