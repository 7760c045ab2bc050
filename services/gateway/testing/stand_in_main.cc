// courtpiece-gateway-standin: StandInGateway (stand_in_gateway.h) as a process, to smoke-test
// courtpiece-load without the real gateway (and with --grpc_port its gRPC StandInCourtPiece).
// Serves until SIGINT/SIGTERM.
//   courtpiece-gateway-standin --port=18080 --grpc_port=18081
#include <csignal>
#include <iostream>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "grpcpp/grpcpp.h"
#include "services/gateway/testing/stand_in_gateway.h"

ABSL_FLAG(int, port, 0, "loopback port to listen on (0: any; printed)");
ABSL_FLAG(int, grpc_port, -1,
          "also serve the gRPC StandInCourtPiece on this loopback port (0: any; -1: no)");
ABSL_FLAG(int, connections_max, 4096, "connections at once (a thread each)");

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  courtpiece::gateway::testing::StandInGateway server(
      static_cast<uint16_t>(absl::GetFlag(FLAGS_port)), absl::GetFlag(FLAGS_connections_max));
  std::cout << "listening on 127.0.0.1:" << server.port() << std::endl;
  courtpiece::gateway::testing::StandInCourtPiece service;
  std::unique_ptr<grpc::Server> rpc_server;
  if (absl::GetFlag(FLAGS_grpc_port) >= 0) {
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort(absl::StrCat("127.0.0.1:", absl::GetFlag(FLAGS_grpc_port)),
                             grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(&service);
    rpc_server = builder.BuildAndStart();
    std::cout << "gRPC on 127.0.0.1:" << port << std::endl;
  }
  int sig = 0;
  sigwait(&set, &sig);
  if (rpc_server != nullptr) rpc_server->Shutdown();
  return 0;
}
