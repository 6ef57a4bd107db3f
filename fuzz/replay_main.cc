// reins_fuzz_replay: every fuzz target over its seed corpus and its regression inputs
// (fuzz/corpus/TARGET/, fuzz/regressions/TARGET/), built with the ordinary compiler and
// run by `make test`, so a crash the fuzzer once found stays fixed.
//   reins_fuzz_replay FUZZ_DIR [TARGET]
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz/fuzz_target.h"

namespace reins::fuzz {

std::map<std::string, Target>& Targets() {
  static std::map<std::string, Target> targets;
  return targets;
}

bool Register(const char* name, Target target) {
  Targets()[name] = target;
  return true;
}

}  // namespace reins::fuzz

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  if (argc < 2) {
    std::cerr << "usage: reins_fuzz_replay FUZZ_DIR [TARGET]\n";
    return 2;
  }
  const fs::path root = argv[1];
  int inputs = 0;
  for (const auto& [name, target] : reins::fuzz::Targets()) {
    if (argc > 2 && name != argv[2]) continue;
    int mine = 0;
    for (const char* kind : {"corpus", "regressions"}) {
      const fs::path dir = root / kind / name;
      if (!fs::is_directory(dir)) continue;
      std::vector<fs::path> files;
      for (const auto& entry : fs::directory_iterator(dir)) {
        if (entry.is_regular_file()) files.push_back(entry.path());
      }
      std::sort(files.begin(), files.end());
      for (const fs::path& file : files) {
        std::ifstream in(file, std::ios::binary);
        std::stringstream bytes;
        bytes << in.rdbuf();
        target(bytes.str());
        ++mine;
      }
    }
    if (mine == 0) {
      std::cerr << name << ": no inputs under " << (root / "corpus" / name) << "\n";
      return 1;
    }
    std::cout << name << ": " << mine << " inputs\n";
    inputs += mine;
  }
  std::cout << inputs << " inputs replayed, no crash\n";
  return 0;
}
