// An in-process fake of the moderation service (moderation.proto's VoiceNotes and
// ModerationAdmin) for the gateway's tests: it records what each call carried (method,
// `authorization`, the request) and answers canned replies, or the status a test scripts.
// Thread-safety: safe from gRPC's threads and the test's.
#ifndef COURTPIECE_SERVICES_GATEWAY_FAKE_MODERATION_H_
#define COURTPIECE_SERVICES_GATEWAY_FAKE_MODERATION_H_

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "courtpiece/moderation/v1/moderation.grpc.pb.h"
#include "grpcpp/grpcpp.h"

namespace courtpiece::gateway {

class FakeModeration {
 public:
  struct Seen {
    std::string method;         // "UploadNote"
    std::string authorization;  // the metadata's value, "" when absent
    std::string request;        // the request's serialized bytes
  };

  FakeModeration();

  // The services to register on a server.
  grpc::Service* voice_notes() { return &voice_notes_; }
  grpc::Service* admin() { return &admin_; }

  // The next calls of `method` answer `status` (until cleared with OK).
  void Refuse(const std::string& method, grpc::Status status);
  // GetNote answers this note (note_id "n-1" by default) for any id it knows.
  void PutNote(moderation::v1::GetNoteResponse note);

  std::vector<Seen> seen() const;
  std::optional<Seen> last(const std::string& method) const;

 private:
  class VoiceNotesImpl;
  class AdminImpl;
  // Records the call; answers the scripted refusal if any (else OK).
  grpc::Status Record(grpc::ServerContext* ctx, const std::string& method,
                      const google::protobuf::Message& request);
  std::optional<moderation::v1::GetNoteResponse> Note(const std::string& id) const;

  class VoiceNotesImpl final : public moderation::v1::VoiceNotes::Service {
   public:
    explicit VoiceNotesImpl(FakeModeration& fake) : fake_(fake) {}
    grpc::Status UploadNote(grpc::ServerContext* ctx,
                            const moderation::v1::UploadNoteRequest* request,
                            moderation::v1::UploadNoteResponse* response) override;
    grpc::Status GetNote(grpc::ServerContext* ctx, const moderation::v1::GetNoteRequest* request,
                         moderation::v1::GetNoteResponse* response) override;

   private:
    FakeModeration& fake_;
  };
  class AdminImpl final : public moderation::v1::ModerationAdmin::Service {
   public:
    explicit AdminImpl(FakeModeration& fake) : fake_(fake) {}
    grpc::Status ListReports(grpc::ServerContext* ctx,
                             const moderation::v1::ListReportsRequest* request,
                             moderation::v1::ListReportsResponse* response) override;
    grpc::Status ResolveReport(grpc::ServerContext* ctx,
                               const moderation::v1::ResolveReportRequest* request,
                               moderation::v1::ResolveReportResponse* response) override;

   private:
    FakeModeration& fake_;
  };

  mutable std::mutex mu_;
  std::vector<Seen> seen_;                                        // guarded by mu_
  std::map<std::string, grpc::Status> refuse_;                    // guarded by mu_
  std::map<std::string, moderation::v1::GetNoteResponse> notes_;  // guarded by mu_
  VoiceNotesImpl voice_notes_{*this};
  AdminImpl admin_{*this};
};

}  // namespace courtpiece::gateway

#endif  // COURTPIECE_SERVICES_GATEWAY_FAKE_MODERATION_H_
