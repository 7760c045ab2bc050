#include "services/gateway/fake_moderation.h"

#include <utility>

namespace courtpiece::gateway {

namespace mv1 = moderation::v1;

FakeModeration::FakeModeration() {
  mv1::GetNoteResponse note;
  note.set_note_id("n-1");
  note.set_table_id("t-1");
  note.set_round(3);
  note.set_author("p-author");
  note.set_duration_ms(2500);
  note.set_format("webm/opus");
  note.set_content_type("audio/webm");
  note.set_audio(std::string("\x1a\x45\xdf\xa3 webm bytes \0\xff", 19));
  note.set_created_at_ms(1700000000000);
  notes_.emplace(note.note_id(), std::move(note));
}

void FakeModeration::Refuse(const std::string& method, grpc::Status status) {
  std::lock_guard<std::mutex> lock(mu_);
  if (status.ok()) {
    refuse_.erase(method);
  } else {
    refuse_[method] = std::move(status);
  }
}

void FakeModeration::PutNote(mv1::GetNoteResponse note) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string id = note.note_id();
  notes_[id] = std::move(note);
}

std::vector<FakeModeration::Seen> FakeModeration::seen() const {
  std::lock_guard<std::mutex> lock(mu_);
  return seen_;
}

std::optional<FakeModeration::Seen> FakeModeration::last(const std::string& method) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = seen_.rbegin(); it != seen_.rend(); ++it) {
    if (it->method == method) return *it;
  }
  return std::nullopt;
}

grpc::Status FakeModeration::Record(grpc::ServerContext* ctx, const std::string& method,
                                    const google::protobuf::Message& request) {
  Seen seen;
  seen.method = method;
  auto it = ctx->client_metadata().find("authorization");
  if (it != ctx->client_metadata().end()) {
    seen.authorization = std::string(it->second.data(), it->second.size());
  }
  seen.request = request.SerializeAsString();
  std::lock_guard<std::mutex> lock(mu_);
  seen_.push_back(std::move(seen));
  auto refusal = refuse_.find(method);
  return refusal == refuse_.end() ? grpc::Status::OK : refusal->second;
}

std::optional<mv1::GetNoteResponse> FakeModeration::Note(const std::string& id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = notes_.find(id);
  if (it == notes_.end()) return std::nullopt;
  return it->second;
}

grpc::Status FakeModeration::VoiceNotesImpl::UploadNote(grpc::ServerContext* ctx,
                                                        const mv1::UploadNoteRequest* request,
                                                        mv1::UploadNoteResponse* response) {
  grpc::Status status = fake_.Record(ctx, "UploadNote", *request);
  if (!status.ok()) return status;
  response->set_note_id("n-" + std::to_string(request->audio().size()));
  response->set_round(request->round() == 0 ? 4 : request->round());
  response->set_duration_ms(3210);
  response->set_format("webm/opus");
  response->set_replayed(false);
  return grpc::Status::OK;
}

grpc::Status FakeModeration::VoiceNotesImpl::GetNote(grpc::ServerContext* ctx,
                                                     const mv1::GetNoteRequest* request,
                                                     mv1::GetNoteResponse* response) {
  grpc::Status status = fake_.Record(ctx, "GetNote", *request);
  if (!status.ok()) return status;
  std::optional<mv1::GetNoteResponse> note = fake_.Note(request->note_id());
  if (!note.has_value()) {
    return grpc::Status(grpc::StatusCode::NOT_FOUND, "no_note: no note " + request->note_id());
  }
  *response = *std::move(note);
  return grpc::Status::OK;
}

grpc::Status FakeModeration::AdminImpl::ListReports(grpc::ServerContext* ctx,
                                                    const mv1::ListReportsRequest* request,
                                                    mv1::ListReportsResponse* response) {
  grpc::Status status = fake_.Record(ctx, "ListReports", *request);
  if (!status.ok()) return status;
  mv1::Report* report = response->add_reports();
  report->set_report_id("r-1");
  report->set_note_id("n-1");
  report->set_table_id("t-1");
  report->set_round(3);
  report->set_author("p-author");
  report->set_reporter("p-reporter");
  report->set_status(mv1::REPORT_STATUS_OPEN);
  report->set_reported_at_ms(1700000001000);
  response->set_open_total(1);
  return grpc::Status::OK;
}

grpc::Status FakeModeration::AdminImpl::ResolveReport(grpc::ServerContext* ctx,
                                                      const mv1::ResolveReportRequest* request,
                                                      mv1::ResolveReportResponse* response) {
  grpc::Status status = fake_.Record(ctx, "ResolveReport", *request);
  if (!status.ok()) return status;
  mv1::Report* report = response->add_resolved();
  report->set_report_id(request->report_id());
  report->set_status(request->action() == mv1::ACTION_DISMISS ? mv1::REPORT_STATUS_DISMISSED
                                                              : mv1::REPORT_STATUS_ACTIONED);
  report->set_resolution_reason(request->reason());
  if (request->action() != mv1::ACTION_DISMISS) {
    response->mutable_mute()->set_player_id("p-author");
    response->mutable_mute()->set_until_ms(
        request->action() == mv1::ACTION_MUTE_FOR ? 1700000000000 + request->mute_for_ms() : 0);
    response->mutable_mute()->set_reason(request->reason());
    response->mutable_mute()->set_report_id(request->report_id());
  }
  return grpc::Status::OK;
}

}  // namespace courtpiece::gateway
