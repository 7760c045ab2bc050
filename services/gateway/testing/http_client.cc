#include "services/gateway/testing/http_client.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace courtpiece::gateway::testing {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {
constexpr uint64_t kResponseBytesMax = 8 << 20;
}

struct HttpClient::Impl {
  Impl(std::string h, uint16_t p, absl::Duration t)
      : host(std::move(h)), port(p), timeout(t), stream(ioc) {}

  std::chrono::steady_clock::duration Timeout() const { return absl::ToChronoNanoseconds(timeout); }

  // Runs the io_context until the operations started complete (the stream's timer bounds
  // them).
  void Run() {
    ioc.restart();
    ioc.run();
  }

  absl::Status Connect() {
    beast::error_code ec;
    tcp::resolver resolver(ioc);
    auto results = resolver.resolve(host, std::to_string(port), ec);
    if (ec) return absl::UnavailableError(absl::StrCat("resolve ", host, ": ", ec.message()));
    stream.expires_after(Timeout());
    beast::error_code done;
    stream.async_connect(results, [&](beast::error_code e, const tcp::endpoint&) { done = e; });
    Run();
    if (done == beast::error::timeout) return absl::DeadlineExceededError("connect timed out");
    if (done) return absl::UnavailableError(absl::StrCat("connect: ", done.message()));
    open = true;
    return absl::OkStatus();
  }

  void Drop() {
    beast::error_code ec;
    stream.socket().shutdown(tcp::socket::shutdown_both, ec);
    stream.close();
    open = false;
  }

  std::string host;
  uint16_t port;
  absl::Duration timeout;
  net::io_context ioc;
  beast::tcp_stream stream;
  beast::flat_buffer buffer;
  bool open = false;
};

HttpClient::HttpClient(std::string host, uint16_t port, absl::Duration timeout)
    : impl_(std::make_unique<Impl>(std::move(host), port, timeout)) {}

HttpClient::~HttpClient() {
  if (impl_->open) impl_->Drop();
}

absl::StatusOr<HttpResponse> HttpClient::Post(std::string_view path, std::string_view body,
                                              const HttpHeaders& headers) {
  return Request("POST", path, body, headers);
}

absl::StatusOr<HttpResponse> HttpClient::Get(std::string_view path, const HttpHeaders& headers) {
  return Request("GET", path, "", headers);
}

absl::StatusOr<HttpResponse> HttpClient::Request(std::string_view verb, std::string_view path,
                                                 std::string_view body,
                                                 const HttpHeaders& headers) {
  Impl& m = *impl_;
  http::request<http::string_body> req;
  req.method_string(beast::string_view(verb.data(), verb.size()));
  req.target(beast::string_view(path.data(), path.size()));
  req.version(11);
  req.set(http::field::host, absl::StrCat(m.host, ":", m.port));
  req.set(http::field::user_agent, "courtpiece-gateway-testing");
  bool has_content_type = false;
  for (const auto& [name, value] : headers) {
    has_content_type |= absl::AsciiStrToLower(name) == "content-type";
    req.set(name, value);
  }
  if (!body.empty() || verb == "POST") {
    if (!has_content_type) req.set(http::field::content_type, "application/json");
    req.body() = std::string(body);
    req.prepare_payload();
  }
  req.keep_alive(true);

  // One retry on a fresh connection when a kept-alive one turned out to be closed.
  for (int attempt = 0; attempt < 2; ++attempt) {
    const bool reused = m.open;
    if (!m.open) {
      absl::Status s = m.Connect();
      if (!s.ok()) return s;
      ++connections_;
    }
    m.stream.expires_after(m.Timeout());
    beast::error_code write_ec, read_ec;
    bool wrote = false;
    http::async_write(m.stream, req, [&](beast::error_code e, size_t) {
      write_ec = e;
      wrote = true;
    });
    m.Run();
    if (write_ec) {
      m.Drop();
      if (reused && write_ec != beast::error::timeout) continue;
      if (write_ec == beast::error::timeout) return absl::DeadlineExceededError("write timed out");
      return absl::UnavailableError(absl::StrCat("write: ", write_ec.message()));
    }
    (void)wrote;
    http::response_parser<http::string_body> parser;
    parser.body_limit(kResponseBytesMax);
    m.stream.expires_after(m.Timeout());
    http::async_read(m.stream, m.buffer, parser, [&](beast::error_code e, size_t) { read_ec = e; });
    m.Run();
    if (read_ec) {
      m.Drop();
      m.buffer.clear();
      if (reused && read_ec == http::error::end_of_stream) continue;  // closed while idle
      if (read_ec == beast::error::timeout) return absl::DeadlineExceededError("no answer in time");
      return absl::UnavailableError(absl::StrCat("read: ", read_ec.message()));
    }
    m.stream.expires_never();
    http::response<http::string_body> res = parser.release();
    HttpResponse out;
    out.status = static_cast<int>(res.result_int());
    out.body = std::move(res.body());
    for (const auto& field : res) {
      out.headers[absl::AsciiStrToLower(std::string(field.name_string()))] =
          std::string(field.value());
    }
    if (!res.keep_alive()) m.Drop();
    ++requests_;
    return out;
  }
  return absl::UnavailableError("the connection was closed twice");
}

absl::Status HttpClient::CallJson(std::string_view method, const google::protobuf::Message& request,
                                  const std::string& authorization,
                                  google::protobuf::Message* response, std::string_view prefix) {
  HttpHeaders headers;
  if (!authorization.empty()) headers.emplace_back("authorization", authorization);
  absl::StatusOr<HttpResponse> r =
      Post(absl::StrCat(std::string(prefix), std::string(method)), ToJson(request), headers);
  if (!r.ok()) return r.status();
  if (r->status != 200) return StatusFromHttp(r->status, r->body);
  return FromJson(r->body, response);
}

}  // namespace courtpiece::gateway::testing
