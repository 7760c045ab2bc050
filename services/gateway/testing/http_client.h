// A small synchronous HTTP/1.1 client (Boost.Beast) for tests and tools: one keep-alive
// connection to one host:port, reopened when the server closed it.
//
//   HttpClient http("127.0.0.1", 8080);
//   absl::StatusOr<HttpResponse> r = http.Post("/v1/GuestLogin", R"({"deviceSecret":"..."})");
//   absl::StatusOr<client::v1::Session> s =
//       http.Call<client::v1::Session>("GuestLogin", request);  // JSON both ways
//
// Post/Get answer the response whatever its HTTP status; a non-OK status only when no
// response came: UNAVAILABLE (connect refused, connection lost), DEADLINE_EXCEEDED (no
// answer within the timeout; the connection is then dropped). Call maps an error answer to
// its status with StatusFromHttp (client_json.h).
// Limits: a response of at most 8 MiB; every request bounded by `timeout`.
// Thread-safety: not thread-safe; one thread at a time.
#ifndef COURTPIECE_SERVICES_GATEWAY_TESTING_HTTP_CLIENT_H_
#define COURTPIECE_SERVICES_GATEWAY_TESTING_HTTP_CLIENT_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "google/protobuf/message.h"
#include "services/gateway/testing/client_json.h"

namespace courtpiece::gateway::testing {

using HttpHeaders = std::vector<std::pair<std::string, std::string>>;

struct HttpResponse {
  int status = 0;
  std::string body;
  std::map<std::string, std::string> headers;  // names lower-case
  std::string Header(const std::string& lower_name) const {
    auto it = headers.find(lower_name);
    return it == headers.end() ? std::string() : it->second;
  }
};

class HttpClient {
 public:
  HttpClient(std::string host, uint16_t port, absl::Duration timeout = absl::Seconds(10));
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // POST with content-type application/json (unless `headers` names one).
  absl::StatusOr<HttpResponse> Post(std::string_view path, std::string_view body,
                                    const HttpHeaders& headers = {});
  absl::StatusOr<HttpResponse> Get(std::string_view path, const HttpHeaders& headers = {});
  // Any verb ("PUT", "DELETE", ...), for the gateway's 405 answers.
  absl::StatusOr<HttpResponse> Request(std::string_view verb, std::string_view path,
                                       std::string_view body, const HttpHeaders& headers);

  // POST /v1/<method> (or `prefix`/<method>) with `request` as JSON and `authorization`
  // ("Bearer <token>", "" for none); the response parsed into `response` (strict JSON).
  absl::Status CallJson(std::string_view method, const google::protobuf::Message& request,
                        const std::string& authorization, google::protobuf::Message* response,
                        std::string_view prefix = "/v1/");
  template <typename Response>
  absl::StatusOr<Response> Call(std::string_view method, const google::protobuf::Message& request,
                                const std::string& authorization = "") {
    Response response;
    absl::Status s = CallJson(method, request, authorization, &response);
    if (!s.ok()) return s;
    return response;
  }

  // Requests answered so far, and connections opened (a keep-alive test counts them).
  int64_t requests() const { return requests_; }
  int64_t connections() const { return connections_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int64_t requests_ = 0;
  int64_t connections_ = 0;
};

}  // namespace courtpiece::gateway::testing

#endif  // COURTPIECE_SERVICES_GATEWAY_TESTING_HTTP_CLIENT_H_
