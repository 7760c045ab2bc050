// H2Front's own behaviour beyond the contract it shares with GrpcFront (grpc_front_test.cc runs
// that against both): connection limits at accept, keepalive and idle GOAWAYs, ping floods,
// health, and what it does with a client that does not speak HTTP/2. Raw sockets where the
// exact frames matter; gRPC's own client where a client's view does.
#include "services/gateway/h2_front.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "courtpiece/auth/keys.h"
#include "courtpiece/auth/token.h"
#include "courtpiece/common/grpc_client.h"
#include "courtpiece/common/grpc_server.h"
#include "courtpiece/common/metrics.h"
#include "gmock/gmock.h"
#include "google/protobuf/descriptor.pb.h"
#include "google/protobuf/dynamic_message.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/impl/codegen/sync_stream.h"
#include "gtest/gtest.h"
#include "services/gateway/h2_conn.h"

namespace courtpiece::gateway {
namespace {

namespace cv1 = client::v1;
using ::testing::ElementsAre;

constexpr std::string_view kPreface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

struct Frame {
  uint8_t type = 0;
  uint8_t flags = 0;
  uint32_t stream_id = 0;
  std::string payload;
};

// A client socket speaking raw HTTP/2 frames.
class RawClient {
 public:
  explicit RawClient(int port) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
    timeval tv{.tv_sec = 5, .tv_usec = 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  }
  ~RawClient() { Close(); }
  void Close() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }
  bool connected() const { return connected_; }

  void Write(std::string_view bytes) { (void)!write(fd_, bytes.data(), bytes.size()); }
  void WriteFrame(uint8_t type, uint8_t flags, uint32_t stream_id, std::string_view payload) {
    std::string f;
    f.push_back(static_cast<char>(payload.size() >> 16));
    f.push_back(static_cast<char>(payload.size() >> 8));
    f.push_back(static_cast<char>(payload.size()));
    f.push_back(static_cast<char>(type));
    f.push_back(static_cast<char>(flags));
    for (int shift : {24, 16, 8, 0}) f.push_back(static_cast<char>(stream_id >> shift));
    f.append(payload);
    Write(f);
  }
  void Hello() {
    Write(kPreface);
    WriteFrame(0x4, 0, 0, "");  // SETTINGS
  }

  // The next frame, or nullopt at EOF (or after the 5 s receive timeout).
  std::optional<Frame> Read() {
    while (buffer_.size() < 9 || buffer_.size() < 9 + Length()) {
      char chunk[4096];
      const ssize_t n = read(fd_, chunk, sizeof(chunk));
      if (n <= 0) return std::nullopt;
      buffer_.append(chunk, static_cast<size_t>(n));
    }
    Frame f;
    const size_t length = Length();
    f.type = static_cast<uint8_t>(buffer_[3]);
    f.flags = static_cast<uint8_t>(buffer_[4]);
    f.stream_id = Be32(buffer_.data() + 5) & 0x7fffffff;
    f.payload = buffer_.substr(9, length);
    buffer_.erase(0, 9 + length);
    return f;
  }
  // Reads until a frame `stop` takes (answering PINGs when `ack_pings`); that frame, or
  // nullopt at EOF.
  std::optional<Frame> ReadUntil(const std::function<bool(const Frame&)>& stop, bool ack_pings) {
    while (std::optional<Frame> f = Read()) {
      if (stop(*f)) return f;
      if (ack_pings && f->type == 0x6 && (f->flags & 1) == 0) WriteFrame(0x6, 1, 0, f->payload);
    }
    return std::nullopt;
  }
  std::optional<Frame> ReadUntilGoAway(bool ack_pings) {
    return ReadUntil([](const Frame& f) { return f.type == 0x7; }, ack_pings);
  }
  // True when the server closed the connection (EOF) within the receive timeout.
  bool ReadsEof() {
    while (std::optional<Frame> f = Read()) {
    }
    char c;
    return read(fd_, &c, 1) == 0;
  }

  static uint32_t Be32(const char* p) {
    const auto* u = reinterpret_cast<const uint8_t*>(p);
    return (uint32_t{u[0]} << 24) | (uint32_t{u[1]} << 16) | (uint32_t{u[2]} << 8) | u[3];
  }

 private:
  size_t Length() const {
    const auto* u = reinterpret_cast<const uint8_t*>(buffer_.data());
    return (size_t{u[0]} << 16) | (size_t{u[1]} << 8) | u[2];
  }
  int fd_ = -1;
  bool connected_ = false;
  std::string buffer_;
};

uint32_t GoAwayCode(const Frame& f) { return RawClient::Be32(f.payload.data() + 4); }
std::string GoAwayDebug(const Frame& f) { return f.payload.substr(8); }

// A gRPC request's header block for `path`, with `authorization` when given.
std::string RequestBlock(std::string_view path, std::string_view authorization = "") {
  std::string block;
  block.push_back(static_cast<char>(0x83));  // :method POST
  block.push_back(static_cast<char>(0x86));  // :scheme http
  h2::PutHpackLiteral(block, ":path", path);
  h2::PutHpackLiteral(block, ":authority", "x");
  h2::PutHpackLiteral(block, "content-type", "application/grpc");
  h2::PutHpackLiteral(block, "te", "trailers");
  if (!authorization.empty()) h2::PutHpackLiteral(block, "authorization", authorization);
  return block;
}
// The status in a trailers-only or trailers HEADERS frame we sent (our encoder: literals only).
std::string GrpcStatusIn(const Frame& f) {
  const size_t at = f.payload.find("grpc-status");
  if (at == std::string::npos) return "";
  const size_t length = static_cast<uint8_t>(f.payload[at + 11]);
  return f.payload.substr(at + 12, length);
}
constexpr uint8_t kEndStream = 0x1;
constexpr uint8_t kEndHeaders = 0x4;

class NoRouter final : public UnaryRouter {
 public:
  const UnaryMethod* Find(std::string_view) const override { return nullptr; }
  void Call(const UnaryMethod&, std::unique_ptr<google::protobuf::Message>, const UnaryContext&,
            UnaryDone done) override {
    done(absl::InternalError("no"), nullptr);
  }
};

// Keeps every connection's sink; tells how many clients went away.
class KeepPlay final : public PlayService {
 public:
  class Conn final : public PlayConnection {
   public:
    explicit Conn(KeepPlay& play) : play_(play) {}
    void OnClientMessage(cv1::PlayRequest) override {}
    void OnClientGone() override { ++play_.gone; }

   private:
    KeepPlay& play_;
  };
  std::shared_ptr<PlayConnection> Connect(std::string, std::string,
                                          std::shared_ptr<ClientSink> sink) override {
    std::lock_guard<std::mutex> lock(mu);
    sinks.push_back(std::move(sink));
    return std::make_shared<Conn>(*this);
  }
  std::shared_ptr<ClientSink> Last() {
    std::lock_guard<std::mutex> lock(mu);
    return sinks.empty() ? nullptr : sinks.back();
  }
  std::mutex mu;
  std::vector<std::shared_ptr<ClientSink>> sinks;  // guarded by mu
  std::atomic<int> gone{0};
};

class RefusalMetrics final : public NullGatewayMetrics {
 public:
  void ConnectionRefused(std::string_view reason) override {
    std::lock_guard<std::mutex> lock(mu);
    refused.emplace_back(reason);
  }
  std::vector<std::string> Refused() {
    std::lock_guard<std::mutex> lock(mu);
    return refused;
  }
  std::mutex mu;
  std::vector<std::string> refused;  // guarded by mu
};

class H2FrontTest : public ::testing::Test {
 protected:
  void Start(H2FrontOptions options) {
    options.host = "127.0.0.1";
    options.port = 0;
    front_ = std::make_unique<H2Front>(options, router_, play_, gate_, metrics_, server_metrics_);
    ASSERT_TRUE(front_->Start().ok());
  }
  void TearDown() override {
    if (front_ != nullptr) front_->Shutdown(absl::Now() + absl::Seconds(1));
  }

  auth::SigningKey key_ = auth::SigningKey::Generate("k1");
  auth::TokenVerifier verifier_{*auth::VerifyKeys::Parse(key_.PublicText()), RealClock::Instance()};
  TokenGate gate_{verifier_};
  NoRouter router_;
  KeepPlay play_;
  RefusalMetrics metrics_;
  common::Metrics server_metrics_{"h2test"};
  std::unique_ptr<H2Front> front_;
};

// The server's first frames: SETTINGS (and its window raise), nothing refused.
bool Welcomed(RawClient& c) {
  std::optional<Frame> f = c.Read();
  return f.has_value() && f->type == 0x4 && (f->flags & 1) == 0;
}

TEST_F(H2FrontTest, ConnectionsFromOneAddressAreLimitedAtAccept) {
  H2FrontOptions options;
  options.connections_per_ip_max = 2;
  Start(options);
  auto a = std::make_unique<RawClient>(front_->port());
  RawClient b(front_->port());
  ASSERT_TRUE(Welcomed(*a));
  ASSERT_TRUE(Welcomed(b));
  RawClient third(front_->port());
  std::optional<Frame> goaway = third.ReadUntilGoAway(false);
  ASSERT_TRUE(goaway.has_value());
  EXPECT_EQ(GoAwayCode(*goaway), 0xbu);  // ENHANCE_YOUR_CALM
  EXPECT_EQ(GoAwayDebug(*goaway), "too many connections from your address");
  EXPECT_TRUE(third.ReadsEof());
  EXPECT_THAT(metrics_.Refused(), ElementsAre("grpc_conn_per_ip"));

  // A gRPC client over the limit sees the call fail UNAVAILABLE.
  auto stub =
      cv1::CourtPiece::NewStub(common::CreateGrpcChannel(front_->LoopbackAddress(), nullptr));
  grpc::ClientContext ctx;
  common::SetTimeout(ctx, absl::Seconds(2));
  cv1::Session session;
  EXPECT_EQ(stub->GuestLogin(&ctx, cv1::GuestLoginRequest(), &session).error_code(),
            grpc::StatusCode::UNAVAILABLE);

  // One closes: its slot is free again.
  a->Close();
  bool welcomed = false;
  for (int i = 0; i < 100 && !welcomed; ++i) {
    RawClient again(front_->port());
    std::optional<Frame> f = again.Read();
    welcomed = f.has_value() && f->type == 0x4;
    if (welcomed) {
      std::optional<Frame> next = again.Read();  // the window raise, not a GOAWAY
      ASSERT_TRUE(next.has_value());
      EXPECT_EQ(next->type, 0x8);
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  EXPECT_TRUE(welcomed);
}

TEST_F(H2FrontTest, ConnectionsInAllAreLimitedAtAccept) {
  H2FrontOptions options;
  options.connections_max = 1;
  Start(options);
  RawClient first(front_->port());
  ASSERT_TRUE(Welcomed(first));
  RawClient second(front_->port());
  std::optional<Frame> goaway = second.ReadUntilGoAway(false);
  ASSERT_TRUE(goaway.has_value());
  EXPECT_EQ(GoAwayCode(*goaway), 0xbu);
  EXPECT_EQ(GoAwayDebug(*goaway), "the gateway is full: retry later");
  EXPECT_TRUE(second.ReadsEof());
  EXPECT_THAT(metrics_.Refused(), ElementsAre("grpc_conn_total"));
}

// A connection without a call for idle_timeout gets GOAWAY NO_ERROR "idle" and is closed,
// though it answers every ping.
TEST_F(H2FrontTest, AnIdleConnectionIsSentGoAwayAndClosed) {
  H2FrontOptions options;
  options.ping_interval = absl::Milliseconds(100);
  options.ping_timeout = absl::Seconds(5);
  options.idle_timeout = absl::Milliseconds(400);
  Start(options);
  RawClient c(front_->port());
  c.Hello();
  const auto start = std::chrono::steady_clock::now();
  std::optional<Frame> goaway = c.ReadUntilGoAway(/*ack_pings=*/true);
  ASSERT_TRUE(goaway.has_value());
  EXPECT_EQ(GoAwayCode(*goaway), 0u);
  EXPECT_EQ(GoAwayDebug(*goaway), "idle");
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(400));
  EXPECT_TRUE(c.ReadsEof());
}

// A client that stops answering our pings is cut after the timeout.
TEST_F(H2FrontTest, AClientThatDoesNotAnswerPingsIsCut) {
  H2FrontOptions options;
  options.ping_interval = absl::Milliseconds(100);
  options.ping_timeout = absl::Milliseconds(200);
  Start(options);
  RawClient c(front_->port());
  c.Hello();
  const auto start = std::chrono::steady_clock::now();
  bool pinged = false;
  std::optional<Frame> f;
  while ((f = c.Read()).has_value()) {
    if (f->type == 0x6 && (f->flags & 1) == 0) pinged = true;
  }
  EXPECT_TRUE(pinged);
  // The reads ended at the server's close, not at the 5 s receive timeout.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
}

// Pings more often than client_ping_min with nothing sent between: forgiven twice, then
// GOAWAY ENHANCE_YOUR_CALM "too_many_pings" and the connection is closed.
TEST_F(H2FrontTest, APingFloodGetsTooManyPings) {
  H2FrontOptions options;
  options.client_ping_min = absl::Seconds(5);
  Start(options);
  RawClient c(front_->port());
  c.Hello();
  for (int i = 0; i < 4; ++i) c.WriteFrame(0x6, 0, 0, std::string(8, static_cast<char>(i)));
  int acks = 0;
  std::optional<Frame> goaway = c.ReadUntil(
      [&](const Frame& f) {
        if (f.type == 0x6 && (f.flags & 1) != 0) ++acks;
        return f.type == 0x7;
      },
      false);
  ASSERT_TRUE(goaway.has_value());
  EXPECT_EQ(GoAwayCode(*goaway), 0xbu);
  EXPECT_EQ(GoAwayDebug(*goaway), "too_many_pings");
  EXPECT_EQ(acks, 4);  // every ping is answered; the fourth is one too many
  EXPECT_TRUE(c.ReadsEof());
}

TEST_F(H2FrontTest, NotHttp2IsAnsweredGoAwayProtocolError) {
  Start({});
  RawClient c(front_->port());
  c.Write("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  std::optional<Frame> goaway = c.ReadUntilGoAway(false);
  ASSERT_TRUE(goaway.has_value());
  EXPECT_EQ(GoAwayCode(*goaway), 0x1u);
  EXPECT_EQ(GoAwayDebug(*goaway), "not an HTTP/2 client preface");
  EXPECT_TRUE(c.ReadsEof());
}

// A client whose windows admit nothing: the relay's messages fill the sink ("slow reader"),
// whose end waits behind the data; the front resets the stream CANCEL after finish_timeout,
// and the relay hears the client gone.
TEST_F(H2FrontTest, ASlowReaderWithClosedWindowsIsResetAfterTheFinishTimeout) {
  H2FrontOptions options;
  options.ping_interval = absl::Milliseconds(100);
  options.finish_timeout = absl::Milliseconds(300);
  options.grpc.send_queue_max = 4;
  Start(options);
  RawClient c(front_->port());
  c.Write(kPreface);
  c.WriteFrame(0x4, 0, 0, std::string("\x00\x04\x00\x00\x00\x00", 6));  // window 0
  auth::TokenSigner signer(key_, RealClock::Instance());
  c.WriteFrame(0x1, kEndHeaders, 1,
               RequestBlock("/courtpiece.client.v1.CourtPiece/Play",
                            "Bearer " + signer.Sign("p1", auth::Role::kPlayer, absl::Minutes(5))));
  std::shared_ptr<ClientSink> sink;
  for (int i = 0; i < 500 && (sink = play_.Last()) == nullptr; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_NE(sink, nullptr);
  cv1::PlayResponse event;
  event.mutable_event()->set_detail(std::string(100, 'e'));
  // Two reach the connection, where the closed window holds them...
  ASSERT_TRUE(sink->Send(event));
  ASSERT_TRUE(sink->Send(event));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  // ...then the queue fills: slow reader, whose end waits behind those two.
  int accepted = 0;
  for (int i = 0; i < 100 && sink->Send(event); ++i) ++accepted;
  EXPECT_LT(accepted, 100);
  const auto start = std::chrono::steady_clock::now();
  std::optional<Frame> reset = c.ReadUntil([](const Frame& f) { return f.type == 0x3; }, true);
  ASSERT_TRUE(reset.has_value());
  EXPECT_EQ(reset->stream_id, 1u);
  EXPECT_EQ(RawClient::Be32(reset->payload.data()), 0x8u);  // CANCEL
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(250));
  EXPECT_EQ(play_.gone.load(), 1);
  EXPECT_EQ(front_->open_play_streams(), 0u);
}

// A unary call whose request never ends is answered DEADLINE_EXCEEDED after request_timeout.
TEST_F(H2FrontTest, AUnaryRequestThatNeverEndsIsAnsweredDeadlineExceeded) {
  H2FrontOptions options;
  options.ping_interval = absl::Milliseconds(100);
  options.request_timeout = absl::Milliseconds(300);
  Start(options);
  RawClient c(front_->port());
  c.Hello();
  c.WriteFrame(0x1, kEndHeaders, 1, RequestBlock("/grpc.health.v1.Health/Check"));
  std::optional<Frame> answer =
      c.ReadUntil([](const Frame& f) { return f.type == 0x1 && f.stream_id == 1; }, true);
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ(answer->flags & kEndStream, kEndStream);  // trailers-only
  EXPECT_EQ(GrpcStatusIn(*answer), "4");              // DEADLINE_EXCEEDED
}

// More than 200 new streams in a second: GOAWAY ENHANCE_YOUR_CALM "too many new streams".
TEST_F(H2FrontTest, AStreamFloodIsSentAway) {
  Start({});
  RawClient c(front_->port());
  c.Hello();
  const std::string block = RequestBlock("/grpc.health.v1.Health/Check");
  std::string burst;
  for (uint32_t id = 1; id <= 2 * 202; id += 2) {
    c.WriteFrame(0x1, kEndHeaders | kEndStream, id, block);
  }
  int answered = 0;
  std::optional<Frame> goaway = c.ReadUntil(
      [&](const Frame& f) {
        if (f.type == 0x1) ++answered;
        return f.type == 0x7;
      },
      false);
  ASSERT_TRUE(goaway.has_value());
  EXPECT_EQ(GoAwayCode(*goaway), 0xbu);
  EXPECT_EQ(GoAwayDebug(*goaway), "too many new streams");
  EXPECT_EQ(answered, 200);  // each answered INTERNAL (no request message) before
  EXPECT_TRUE(c.ReadsEof());
}

TEST_F(H2FrontTest, HealthIsServedForTheServerAndTheCourtPieceService) {
  Start({});
  auto channel = common::CreateGrpcChannel(front_->LoopbackAddress(), nullptr);
  absl::StatusOr<bool> all = common::CheckHealth(*channel, "", absl::Seconds(2));
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_TRUE(*all);
  absl::StatusOr<bool> service =
      common::CheckHealth(*channel, "courtpiece.client.v1.CourtPiece", absl::Seconds(2));
  ASSERT_TRUE(service.ok()) << service.status();
  EXPECT_TRUE(*service);
  absl::StatusOr<bool> other = common::CheckHealth(*channel, "nope.Nope", absl::Seconds(2));
  EXPECT_EQ(other.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(common::WaitServing(front_->LoopbackAddress(), absl::Seconds(2)));
}

// Server reflection, as grpcurl uses it: the request built and the answers read with the
// reflection messages' own descriptors (linked with libgrpc++_reflection), not our encoder.
TEST_F(H2FrontTest, ReflectionListsAndDescribesTheServices) {
  namespace pb = google::protobuf;
  const pb::DescriptorPool* pool = pb::DescriptorPool::generated_pool();
  const pb::Descriptor* request_type =
      pool->FindMessageTypeByName("grpc.reflection.v1alpha.ServerReflectionRequest");
  const pb::Descriptor* response_type =
      pool->FindMessageTypeByName("grpc.reflection.v1alpha.ServerReflectionResponse");
  ASSERT_NE(request_type, nullptr);
  ASSERT_NE(response_type, nullptr);
  pb::DynamicMessageFactory factory(pool);
  Start({});
  auto channel = common::CreateGrpcChannel(front_->LoopbackAddress(), nullptr);
  grpc::ClientContext ctx;
  common::SetTimeout(ctx, absl::Seconds(5));
  const grpc::internal::RpcMethod method(
      "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
      grpc::internal::RpcMethod::BIDI_STREAMING, channel);
  std::unique_ptr<grpc::ClientReaderWriter<grpc::ByteBuffer, grpc::ByteBuffer>> stream(
      grpc::internal::ClientReaderWriterFactory<grpc::ByteBuffer, grpc::ByteBuffer>::Create(
          channel.get(), method, &ctx));
  // One request (field `which` set to `value`), its answer as a message.
  auto ask = [&](const std::string& which, const std::string& value) {
    std::unique_ptr<pb::Message> request(factory.GetPrototype(request_type)->New());
    request->GetReflection()->SetString(request.get(), request_type->FindFieldByName(which), value);
    const std::string bytes = request->SerializeAsString();
    grpc::Slice slice(bytes);
    EXPECT_TRUE(stream->Write(grpc::ByteBuffer(&slice, 1)));
    grpc::ByteBuffer answer;
    std::unique_ptr<pb::Message> response(factory.GetPrototype(response_type)->New());
    std::vector<grpc::Slice> slices;
    if (!stream->Read(&answer) || !answer.Dump(&slices).ok()) return response;
    std::string joined;
    for (const grpc::Slice& part : slices) {
      joined.append(reinterpret_cast<const char*>(part.begin()), part.size());
    }
    EXPECT_TRUE(response->ParseFromString(joined));
    return response;
  };
  std::unique_ptr<pb::Message> list = ask("list_services", "");
  EXPECT_THAT(list->ShortDebugString(),
              ::testing::HasSubstr("list_services_response { service { name: "
                                   "\"courtpiece.client.v1.CourtPiece\" }"));
  EXPECT_THAT(list->ShortDebugString(), ::testing::HasSubstr("original_request { list_services"));

  std::unique_ptr<pb::Message> file =
      ask("file_containing_symbol", "courtpiece.client.v1.CourtPiece");
  const pb::FieldDescriptor* fd_response =
      response_type->FindFieldByName("file_descriptor_response");
  ASSERT_TRUE(file->GetReflection()->HasField(*file, fd_response));
  const pb::Message& files = file->GetReflection()->GetMessage(*file, fd_response);
  const pb::FieldDescriptor* protos =
      files.GetDescriptor()->FindFieldByName("file_descriptor_proto");
  const int count = files.GetReflection()->FieldSize(files, protos);
  ASSERT_GE(count, 1);
  pb::FileDescriptorProto first;
  ASSERT_TRUE(first.ParseFromString(files.GetReflection()->GetRepeatedString(files, protos, 0)));
  EXPECT_EQ(first.name(), "courtpiece/client/v1/client.proto");
  ASSERT_GE(first.service_size(), 1);
  EXPECT_EQ(first.service(0).name(), "CourtPiece");
  // Other files linked into the binary are not served (descriptor.proto always is linked).
  ASSERT_NE(pool->FindFileContainingSymbol("google.protobuf.FileDescriptorProto"), nullptr);
  std::unique_ptr<pb::Message> other =
      ask("file_containing_symbol", "google.protobuf.FileDescriptorProto");
  EXPECT_THAT(other->ShortDebugString(), ::testing::HasSubstr("error_response { error_code: 5"));
  EXPECT_TRUE(stream->WritesDone());
  EXPECT_TRUE(stream->Finish().ok());
}

TEST_F(H2FrontTest, AnUnknownServiceIsUnimplemented) {
  Start({});
  auto channel = common::CreateGrpcChannel(front_->LoopbackAddress(), nullptr);
  grpc::GenericStub generic(channel);
  grpc::ClientContext ctx;
  common::SetTimeout(ctx, absl::Seconds(2));
  grpc::Slice empty("");
  grpc::ByteBuffer request(&empty, 1);
  grpc::ByteBuffer response;
  std::mutex mu;
  std::condition_variable cv;
  std::optional<grpc::Status> status;
  generic.UnaryCall(&ctx, "/other.Service/Method", grpc::StubOptions(), &request, &response,
                    [&](grpc::Status s) {
                      std::lock_guard<std::mutex> lock(mu);
                      status = s;
                      cv.notify_all();
                    });
  std::unique_lock<std::mutex> lock(mu);
  ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(5), [&] { return status.has_value(); }));
  EXPECT_EQ(status->error_code(), grpc::StatusCode::UNIMPLEMENTED);
  EXPECT_EQ(status->error_message(), "unknown method /other.Service/Method");
}

}  // namespace
}  // namespace courtpiece::gateway
