// A scenario file -> the scenario loader, through a real file as `reins run` reads it.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "eval/scenario.h"
#include "fuzz/fuzz_target.h"

namespace reins {

REINS_FUZZ_TARGET(scenario) {
  static const std::string path = "/tmp/reins-fuzz-scenario-" + std::to_string(getpid()) + ".yaml";
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(input.data(), static_cast<std::streamsize>(input.size()));
  }
  (void)LoadScenarioFile(path);
  std::remove(path.c_str());
}

}  // namespace reins
