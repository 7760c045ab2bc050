// courtpiece-load's connections: simulated players through the gateway (a WebSocket of
// /v1/play with JSON, or a gRPC CourtPiece.Play stream) or straight to a table instance
// (TableService.Play with `courtpiece-player-id`, for the baseline). All asynchronous: Beast
// on one io_context (run by --threads threads, each connection on its own strand) and gRPC's
// callback API; no thread per connection.
// A connection: connects (and upgrades), opens its table when it has one, `join`s when not
// seated, then is ready; in rate mode it sends `vote` commands (answered by the table at once
// with FAILED_PRECONDITION "no vote is running": a command that changes nothing) at its share
// when the pacer (main.cc: one thread spreading the total rate over the ready connections,
// round robin) asks, and measures command -> result.
// Thread-safety: Stats is safe from any thread; connections are driven by their own handlers.
#ifndef COURTPIECE_TOOLS_GATEWAY_LOAD_LOAD_H_
#define COURTPIECE_TOOLS_GATEWAY_LOAD_LOAD_H_

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/strand.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "../table_load/stats.h"
#include "courtpiece/client/v1/client.pb.h"
#include "grpcpp/grpcpp.h"

namespace courtpiece::gateway_load {

class ClientQueues;  // async_stream.h: the gRPC streams' completion queues

using table_load::Counts;
using table_load::Samples;

struct Stats {
  std::atomic<int64_t> connected{0};  // upgraded / stream started
  std::atomic<int64_t> ready{0};      // opened (and seated) or, without a table, connected
  std::atomic<int64_t> failed{0};     // ended before ready
  std::atomic<int64_t> ended{0};      // ended after ready
  std::atomic<int64_t> sent{0};       // commands sent
  std::atomic<int64_t> answered{0};   // results received
  Samples latency;                    // command -> result, microseconds
  Counts codes;                       // results by code
  Counts ends;                        // connection ends by reason
};

struct ConnSpec {
  std::string authorization;  // "Bearer <token>", "" for none
  std::string player_id;      // direct mode: the courtpiece-player-id
  std::string table_id;       // "" : connect only
};

// Every connection keeps itself alive (shared_ptr in its handlers / reactor) until it ends.
class Conn {
 public:
  virtual ~Conn() = default;
  virtual void Start() = 0;
  // Sends one `vote` command (ignored unless ready). Safe from any thread.
  virtual void SendCommand() = 0;
  virtual bool ready() const = 0;
  virtual void Stop() = 0;  // closes (WebSocket 1000) / cancels
};

std::shared_ptr<Conn> MakeWsConn(boost::asio::io_context& ioc,
                                 const boost::asio::ip::tcp::endpoint& gateway,
                                 const std::string& host_header, ConnSpec spec, Stats* stats);
// `direct`: TableService.Play on a table instance; else CourtPiece.Play on the gateway.
// The stream runs on queues' queue `index` (modulo their count).
std::shared_ptr<Conn> MakeGrpcConn(std::shared_ptr<grpc::Channel> channel, ClientQueues& queues,
                                   size_t index, bool direct, ConnSpec spec, Stats* stats);

// --- the play mode's streams (play.cc) ----------------------------------------------------
// A Play stream that delivers every message, in order, on the player's strand, and ends once
// (on_end, on the strand; `code` the gRPC status code, or for a WebSocket: close 4000+c -> c,
// 1000 -> 0, the connection lost -> 14, closed by Close() -> 1). Send and Close only on the
// strand. The handlers may run until on_end; the owner keeps them valid until then.
using Strand = boost::asio::strand<boost::asio::io_context::executor_type>;

struct PlayStreamHandlers {
  std::function<void(const client::v1::PlayResponse&)> on_message;
  std::function<void(int code, const std::string& why)> on_end;
};

class PlayStream {
 public:
  virtual ~PlayStream() = default;
  virtual void Start(client::v1::PlayRequest open) = 0;  // connects, then sends `open`
  virtual void Send(client::v1::PlayRequest request) = 0;
  virtual void Close() = 0;  // WebSocket close 1000 / gRPC cancel; on_end follows
};

std::shared_ptr<PlayStream> MakeWsPlayStream(Strand strand,
                                             const boost::asio::ip::tcp::endpoint& gateway,
                                             const std::string& host_header,
                                             const std::string& authorization,
                                             PlayStreamHandlers handlers);
std::shared_ptr<PlayStream> MakeGrpcPlayStream(Strand strand, ClientQueues& queues, size_t index,
                                               std::shared_ptr<grpc::Channel> channel,
                                               const std::string& authorization,
                                               PlayStreamHandlers handlers);

// A display name per load player that the lobby's name rules accept: `prefix`, a space and
// the index in consonants only. Digits would not do: the rules read 0/1/3/4/5/7/8 as
// letters, so "load 807" spells "loadbot" and is refused as looking like a bot.
inline std::string LoadPlayerName(const std::string& prefix, int i) {
  static constexpr char kLetters[] = "cfgjkpqrvwxyz";
  constexpr int kBase = sizeof(kLetters) - 1;
  std::string suffix;
  do {
    suffix.push_back(kLetters[i % kBase]);
    i /= kBase;
  } while (i > 0);
  return prefix + " " + suffix;
}

}  // namespace courtpiece::gateway_load

#endif  // COURTPIECE_TOOLS_GATEWAY_LOAD_LOAD_H_
