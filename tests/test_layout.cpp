// The house's floors (doc/ARCHITECTURE.md): a folder includes only its own floor's folder and those below it.
//   common  <  me  <  encoder, gpu  <  lencod, rd  <  tools, tests, sequences
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>

namespace gme {
namespace {

const std::map<std::string, int> kFloor = {{"common", 0}, {"me", 1},    {"encoder", 2}, {"gpu", 2},      {"lencod", 3},
                                           {"rd", 3},     {"tools", 4}, {"tests", 4},   {"sequences", 4}};

TEST(Layout, NoFolderIncludesAFolderAboveIt) {
  namespace fs = std::filesystem;
  static const std::regex include(R"re(#include\s+"([a-z_]+)/[^"]+")re");
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
      for (std::sregex_iterator it(s.begin(), s.end(), include), end; it != end; ++it) {
        const std::string target = (*it)[1];
        const auto t = kFloor.find(target);
        if (t == kFloor.end() || target == folder) continue;
        EXPECT_LT(t->second, floor) << e.path().string() << " includes " << (*it)[0].str() << ": " << target
                                    << "/ is not below " << folder << "/";
      }
    }
  }
  EXPECT_GT(files, 100);
}

}  // namespace
}  // namespace gme
