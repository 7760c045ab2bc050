// courtpiece-tablesim: runs a scripted table scenario in virtual time and prints every event
// and effect as JSON lines (docs/tablesim.md). Wiring only: scenario.cc reads and checks the
// scenario, libs/table decides.
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "scenario.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "courtpiece-tablesim: usage: courtpiece-tablesim SCENARIO.json (or - for stdin)\n";
    return 2;
  }
  std::stringstream text;
  if (std::string(argv[1]) == "-") {
    text << std::cin.rdbuf();
  } else {
    std::ifstream in(argv[1], std::ios::binary);
    if (!in) {
      std::cerr << "courtpiece-tablesim: cannot read " << argv[1] << "\n";
      return 2;
    }
    text << in.rdbuf();
  }
  return courtpiece::tablesim::RunTablesim(text.str(), std::cout, std::cerr);
}
