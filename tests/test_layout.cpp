// The house's floors (doc/ARCHITECTURE.md): a folder includes only its own floor's folder and those below it.
//   common  <  me  <  encoder, gpu  <  lencod, rd  <  tools, tests, sequences
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

namespace gme {
namespace {

const std::map<std::string, int> kFloor = {{"common", 0}, {"me", 1},    {"encoder", 2}, {"gpu", 2},      {"lencod", 3},
                                           {"rd", 3},     {"tools", 4}, {"tests", 4},   {"sequences", 4}};

TEST(Layout, NoFolderIncludesAFolderAboveIt) {
  namespace fs = std::filesystem;
  int files = 0;
  for (const auto& [folder, floor] : kFloor) {
    ASSERT_TRUE(fs::is_directory(folder)) << folder << "/ is missing (tests run from the repository root)";
    for (const auto& e : fs::directory_iterator(folder)) {
      const std::string ext = e.path().extension().string();
      if (ext != ".cpp" && ext != ".h" && ext != ".cu" && ext != ".cuh") continue;
      ++files;
      std::ifstream f(e.path());
      std::stringstream text;
      text << f.rdbuf();
      const std::string s = text.str();
      // Every `#include "FOLDER/...` (scanned by hand: gcc 12's <regex> trips -Wmaybe-uninitialized in the
      // -Werror sanitizer builds).
      for (size_t at = s.find("#include"); at != std::string::npos; at = s.find("#include", at + 1)) {
        size_t q = s.find_first_not_of(" \t", at + 8);
        if (q == std::string::npos || s[q] != '"') continue;
        const size_t slash = s.find('/', q), end = s.find('"', q + 1);
        if (slash == std::string::npos || end == std::string::npos || slash > end) continue;
        const std::string target = s.substr(q + 1, slash - q - 1);
        const auto t = kFloor.find(target);
        if (t == kFloor.end() || target == folder) continue;
        EXPECT_LT(t->second, floor) << e.path().string() << " includes " << s.substr(at, end + 1 - at) << ": "
                                    << target << "/ is not below " << folder << "/";
      }
    }
  }
  EXPECT_GT(files, 100);
}

}  // namespace
}  // namespace gme
