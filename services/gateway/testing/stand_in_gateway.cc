#include "services/gateway/testing/stand_in_gateway.h"

#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <string>

#include "absl/strings/str_cat.h"
#include "courtpiece/client/v1/client.pb.h"
#include "services/gateway/testing/client_json.h"
#include "services/gateway/testing/fake_game_for_test.h"

namespace courtpiece::gateway::testing {

namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
namespace net = boost::asio;
using tcp = net::ip::tcp;
namespace cv1 = ::courtpiece::client::v1;

namespace {

constexpr char kBearer[] = "Bearer tok";

http::response<http::string_body> Json(int status, std::string body) {
  http::response<http::string_body> res(static_cast<http::status>(status), 11);
  res.set(http::field::content_type, "application/json");
  res.body() = std::move(body);
  return res;
}

// /v1/play: JSON PlayRequests in, the fake game's answers out, the gateway's close codes.
void PlayOver(websocket::stream<tcp::socket&>& ws) {
  FakeGame game;
  beast::error_code ec;
  auto close = [&](int code, const std::string& reason) {
    ws.close(websocket::close_reason(static_cast<websocket::close_code>(code),
                                     beast::string_view(reason).substr(0, 120)),
             ec);
    beast::flat_buffer drain;  // until the client's close frame
    while (!ec) ws.read(drain, ec);
  };
  while (true) {
    beast::flat_buffer buffer;
    ws.read(buffer, ec);
    if (ec) return;
    if (!ws.got_text()) return close(4003, "binary frames are not supported");
    cv1::PlayRequest request;
    absl::Status parsed = FromJson(beast::buffers_to_string(buffer.data()), &request);
    if (!parsed.ok()) return close(4003, std::string(parsed.message()));
    std::vector<cv1::PlayResponse> out;
    if (request.has_open()) {
      if (request.open().table_id() == "gone") return close(4005, "unknown table gone");
      if (request.open().table_id() == "bye") return close(1000, "");
      out = game.Open(request.open());
    } else {
      out = game.Command(request.command());
    }
    for (const cv1::PlayResponse& m : out) {
      ws.text(true);
      ws.write(net::buffer(ToJson(m)), ec);
      if (ec) return;
    }
  }
}

}  // namespace

StandInGateway::StandInGateway(uint16_t port, int connections_max)
    : acceptor_(ioc_, tcp::endpoint(net::ip::make_address("127.0.0.1"), port)),
      connections_max_(connections_max) {
  port_ = acceptor_.local_endpoint().port();
  thread_ = std::thread([this] { AcceptLoop(); });
}

StandInGateway::~StandInGateway() {
  stopping_ = true;
  beast::error_code ec;
  tcp::socket poke(ioc_);  // wakes the blocking accept
  poke.connect(acceptor_.local_endpoint(), ec);
  thread_.join();
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& s : sockets_) s->shutdown(tcp::socket::shutdown_both, ec);
  for (auto& t : connections_) t.join();
}

void StandInGateway::AcceptLoop() {
  while (true) {
    auto socket = std::make_shared<tcp::socket>(ioc_);
    beast::error_code ec;
    acceptor_.accept(*socket, ec);
    if (stopping_ || ec) return;
    ++accepted_;
    if (open_.load() >= connections_max_) {
      socket->close(ec);
      continue;
    }
    ++open_;
    std::lock_guard<std::mutex> lock(mu_);
    sockets_.push_back(socket);
    connections_.emplace_back([this, socket] {
      Serve(*socket);
      --open_;
    });
  }
}

void StandInGateway::Serve(tcp::socket& socket) {
  beast::flat_buffer buffer;
  while (true) {
    http::request<http::string_body> req;
    beast::error_code ec;
    http::read(socket, buffer, req, ec);
    if (ec) return;
    if (websocket::is_upgrade(req)) {
      if (req[http::field::authorization] != kBearer) {
        auto res = Json(401, R"({"code":16,"status":"UNAUTHENTICATED","message":"missing token"})");
        res.prepare_payload();
        http::write(socket, res, ec);
        return;
      }
      websocket::stream<tcp::socket&> ws(socket);
      ws.accept(req, ec);
      if (!ec) PlayOver(ws);
      return;
    }
    const std::string target(req.target());
    http::response<http::string_body> res;
    if (target == "/v1/Echo") {
      res = Json(200, req.body());
      res.set("x-content-type", req[http::field::content_type]);
    } else if (target == "/v1/GuestLogin") {
      cv1::Session s;
      s.set_player_id(absl::StrCat("p", next_id_.fetch_add(1)));
      s.set_access_token("tok");
      s.set_access_expires_at_ms(1234567890123);
      s.set_created(true);
      res = Json(200, ToJson(s));
    } else if (target == "/v1/CreateTable") {
      cv1::TableRef t;
      t.set_table_id(absl::StrCat("t", next_id_.fetch_add(1)));
      t.set_seat(-1);
      res = Json(200, ToJson(t));
    } else if (target == "/v1/Bogus") {
      res = Json(200, R"({"playerId":"p1","bogus":1})");
    } else if (target == "/plain") {
      res = http::response<http::string_body>(http::status::service_unavailable, 11);
      res.body() = "down";
    } else {
      res = Json(404, absl::StrCat(R"({"code":5,"status":"NOT_FOUND","message":"unknown method )",
                                   target.substr(target.rfind('/') + 1), "\"}"));
    }
    const bool close = target == "/v1/Close" || !req.keep_alive();
    res.keep_alive(!close);
    res.prepare_payload();
    http::write(socket, res, ec);
    if (ec || close) return;
  }
}

namespace {

bool Authorized(grpc::ServerContext* context) {
  auto it = context->client_metadata().find("authorization");
  return it != context->client_metadata().end() &&
         std::string(it->second.data(), it->second.size()) == kBearer;
}

grpc::Status Unauthenticated() {
  return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "missing token");
}

}  // namespace

grpc::Status StandInCourtPiece::GuestLogin(grpc::ServerContext*,
                                           const cv1::GuestLoginRequest* request,
                                           cv1::Session* session) {
  if (request->device_secret().empty()) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "device_secret: required");
  }
  session->set_player_id("p1");
  session->set_access_token("tok");
  return grpc::Status::OK;
}

grpc::Status StandInCourtPiece::GetProfile(grpc::ServerContext* context,
                                           const cv1::GetProfileRequest*, cv1::Profile* profile) {
  if (!Authorized(context)) return Unauthenticated();
  profile->set_player_id("p1");
  profile->set_coins(5000);
  return grpc::Status::OK;
}

grpc::Status StandInCourtPiece::Play(
    grpc::ServerContext* context,
    grpc::ServerReaderWriter<cv1::PlayResponse, cv1::PlayRequest>* stream) {
  if (!Authorized(context)) return Unauthenticated();
  cv1::PlayRequest request;
  while (stream->Read(&request)) {
    std::vector<cv1::PlayResponse> out;
    {
      std::lock_guard<std::mutex> lock(mu_);  // one game across streams (a resume)
      if (request.has_open()) {
        if (request.open().table_id() == "gone") {
          return grpc::Status(grpc::StatusCode::NOT_FOUND, "unknown table");
        }
        opens_.push_back(request.open());
        if (request.open().table_id() == "moving" && opens_.size() == 1) {
          return grpc::Status(grpc::StatusCode::UNAVAILABLE, "draining");
        }
        out = game_.Open(request.open());
      } else {
        out = game_.Command(request.command());
      }
    }
    for (const cv1::PlayResponse& m : out) stream->Write(m);
  }
  return grpc::Status::OK;
}

std::vector<cv1::OpenTable> StandInCourtPiece::opens() {
  std::lock_guard<std::mutex> lock(mu_);
  return opens_;
}

}  // namespace courtpiece::gateway::testing
