// courtpiece-rules: replay / view / selfplay / deal (REPLAY.md). Wiring only.
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "replay.h"

namespace {

// No or an unknown command: the help on stderr, exit 2.
int Usage() {
  std::cerr << courtpiece::rules_cli::HelpText();
  return 2;
}

int Emit(const courtpiece::rules_cli::CliOutput& out) {
  std::cout << out.json.dump() << "\n";
  return out.exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) return Usage();
  const std::string cmd = args[0];
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    std::cout << courtpiece::rules_cli::HelpText();
    return 0;
  }
  args.erase(args.begin());
  if (cmd == "replay") {
    return Emit(courtpiece::rules_cli::ReplayCommand(args, [] {
      return std::string(std::istreambuf_iterator<char>(std::cin),
                         std::istreambuf_iterator<char>());
    }));
  }
  if (cmd == "selfplay") {
    auto out = courtpiece::rules_cli::SelfplayCommand(args);
    if (out.exit_code != 0) std::cerr << out.json["error"]["message"].get<std::string>() << "\n";
    return Emit(out);
  }
  if (cmd == "deal") return Emit(courtpiece::rules_cli::DealCommand(args));
  return Usage();
}
