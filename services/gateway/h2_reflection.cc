#include "services/gateway/h2_reflection.h"

#include <cstdint>
#include <vector>

#include "google/protobuf/descriptor.h"
#include "google/protobuf/descriptor.pb.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"

namespace courtpiece::gateway {
namespace {

namespace pb = google::protobuf;
using pb::internal::WireFormatLite;
using pb::io::CodedInputStream;

// Field numbers of grpc.reflection.v1alpha (and v1) messages.
enum RequestField {
  kFileByFilename = 3,
  kFileContainingSymbol = 4,
  kFileContainingExtension = 5,
  kAllExtensionNumbersOfType = 6,
  kListServices = 7
};
enum ResponseField {
  kValidHost = 1,
  kOriginalRequest = 2,
  kFileDescriptorResponse = 4,
  kAllExtensionNumbersResponse = 5,
  kListServicesResponse = 6,
  kErrorResponse = 7
};

void PutTag(std::string& out, int field, int wire_type) {
  pb::io::StringOutputStream stream(&out);
  pb::io::CodedOutputStream coded(&stream);
  coded.WriteTag(static_cast<uint32_t>(field << 3 | wire_type));
}
void PutVarint(std::string& out, uint64_t value) {
  pb::io::StringOutputStream stream(&out);
  pb::io::CodedOutputStream coded(&stream);
  coded.WriteVarint64(value);
}
void PutBytes(std::string& out, int field, std::string_view bytes) {
  PutTag(out, field, WireFormatLite::WIRETYPE_LENGTH_DELIMITED);
  PutVarint(out, bytes.size());
  out.append(bytes);
}

std::string Error(int code, std::string_view message) {
  std::string error;
  PutTag(error, 1, WireFormatLite::WIRETYPE_VARINT);
  PutVarint(error, static_cast<uint64_t>(code));
  PutBytes(error, 2, message);
  return error;
}

constexpr int kNotFound = 5;

}  // namespace

Reflection::Reflection(const std::vector<std::string>& services) {
  const pb::DescriptorPool* pool = pb::DescriptorPool::generated_pool();
  std::vector<const pb::FileDescriptor*> todo;
  for (const std::string& name : services) {
    const pb::ServiceDescriptor* service = pool->FindServiceByName(name);
    if (service == nullptr) continue;
    services_.push_back(name);
    todo.push_back(service->file());
  }
  while (!todo.empty()) {
    const pb::FileDescriptor* file = todo.back();
    todo.pop_back();
    if (!files_.insert(file->name()).second) continue;
    for (int i = 0; i < file->dependency_count(); ++i) todo.push_back(file->dependency(i));
  }
}

std::string Reflection::FilesFrom(const std::string& file_name) const {
  const pb::DescriptorPool* pool = pb::DescriptorPool::generated_pool();
  std::string files;  // FileDescriptorResponse: repeated bytes file_descriptor_proto = 1
  std::set<std::string> sent;
  std::vector<const pb::FileDescriptor*> todo = {pool->FindFileByName(file_name)};
  while (!todo.empty()) {
    const pb::FileDescriptor* file = todo.front();
    todo.erase(todo.begin());
    if (file == nullptr || !sent.insert(file->name()).second) continue;
    pb::FileDescriptorProto proto;
    file->CopyTo(&proto);
    PutBytes(files, 1, proto.SerializeAsString());
    for (int i = 0; i < file->dependency_count(); ++i) todo.push_back(file->dependency(i));
  }
  return files;
}

std::optional<std::string> Reflection::Answer(std::string_view request) const {
  CodedInputStream in(reinterpret_cast<const uint8_t*>(request.data()),
                      static_cast<int>(request.size()));
  int asked = 0;
  std::string argument;
  std::string host;
  while (true) {
    const uint32_t tag = in.ReadTag();
    if (tag == 0) break;
    const int field = static_cast<int>(WireFormatLite::GetTagFieldNumber(tag));
    if (WireFormatLite::GetTagWireType(tag) != WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
      if (!WireFormatLite::SkipField(&in, tag)) return std::nullopt;
      continue;
    }
    std::string value;
    if (!WireFormatLite::ReadBytes(&in, &value)) return std::nullopt;
    if (field == 1) {
      host = std::move(value);
    } else if (field >= kFileByFilename && field <= kListServices) {
      asked = field;
      argument = std::move(value);
    }
  }
  if (!in.ConsumedEntireMessage()) return std::nullopt;

  std::string out;
  PutBytes(out, kValidHost, host);
  PutBytes(out, kOriginalRequest, request);
  const pb::DescriptorPool* pool = pb::DescriptorPool::generated_pool();
  switch (asked) {
    case kListServices: {
      std::string list;
      for (const std::string& name : services_) {
        std::string service;
        PutBytes(service, 1, name);
        PutBytes(list, 1, service);
      }
      PutBytes(out, kListServicesResponse, list);
      return out;
    }
    case kFileByFilename:
    case kFileContainingSymbol: {
      const pb::FileDescriptor* file = asked == kFileByFilename
                                           ? pool->FindFileByName(argument)
                                           : pool->FindFileContainingSymbol(argument);
      if (file == nullptr || files_.count(file->name()) == 0) {
        PutBytes(
            out, kErrorResponse,
            Error(kNotFound, asked == kFileByFilename ? "file not found" : "symbol not found"));
        return out;
      }
      PutBytes(out, kFileDescriptorResponse, FilesFrom(file->name()));
      return out;
    }
    case kAllExtensionNumbersOfType: {
      const pb::Descriptor* type = pool->FindMessageTypeByName(argument);
      if (type == nullptr || files_.count(type->file()->name()) == 0) {
        PutBytes(out, kErrorResponse, Error(kNotFound, "type not found"));
        return out;
      }
      std::string numbers;  // ExtensionNumberResponse{base_type_name}: no extensions
      PutBytes(numbers, 1, argument);
      PutBytes(out, kAllExtensionNumbersResponse, numbers);
      return out;
    }
    default:  // file_containing_extension, or nothing asked
      PutBytes(out, kErrorResponse, Error(kNotFound, "extension not found"));
      return out;
  }
}

}  // namespace courtpiece::gateway
