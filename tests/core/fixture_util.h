// Helpers shared by the core tests: where the fixtures live (built by
// tests/fixtures/make_fixtures.py), the cases that carry reference outputs,
// and loading a case's input and output .npy files by graph-value name.
#pragma once

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/io/npy.h"
#include "tests/support/test_paths.h"

namespace fuselens::test {

namespace fs = std::filesystem;

inline fs::path fixturesDir() {
  return fs::path(fuselens::test::sourcePath()) / "tests" / "fixtures";
}

struct FixtureCase {
  std::string name;  // "add_bcast_row", "samples/mlp"
  fs::path model;    // the .onnx file
  fs::path dir;      // holds input_<name>.npy and output_<name>.npy
};

// Every fixture with reference outputs, sorted by name, samples last.
inline std::vector<FixtureCase> fixtureCases() {
  std::vector<FixtureCase> cases;
  for (const auto& e : fs::directory_iterator(fixturesDir())) {
    if (!e.is_directory() || !fs::exists(e.path() / "model.onnx")) continue;
    cases.push_back({e.path().filename().string(), e.path() / "model.onnx", e.path()});
  }
  std::sort(cases.begin(), cases.end(),
            [](const FixtureCase& a, const FixtureCase& b) { return a.name < b.name; });
  // Every bundled sample with stored ORT references (tests/fixtures/samples/<name>/).
  std::vector<std::string> samples;
  for (const auto& e : fs::directory_iterator(fixturesDir() / "samples"))
    if (e.is_directory()) samples.push_back(e.path().filename().string());
  std::sort(samples.begin(), samples.end());
  for (const std::string& s : samples)
    cases.push_back({"samples/" + s,
                     fs::path(fuselens::test::sourcePath()) / "samples" / (s + ".onnx"),
                     fixturesDir() / "samples" / s});
  return cases;
}

// Whether ONNX Runtime could run the case, so it holds output_*.npy references.
inline bool hasReferenceOutputs(const FixtureCase& c) {
  if (!fs::is_directory(c.dir)) return false;
  for (const auto& e : fs::directory_iterator(c.dir))
    if (e.path().filename().string().rfind("output_", 0) == 0) return true;
  return false;
}

// Files "<prefix><name>.npy" in dir, read into a map keyed by <name>; an
// unreadable file fills `error`.
inline std::map<std::string, TensorData> loadNpys(const fs::path& dir, const std::string& prefix,
                                                  std::string& error) {
  std::map<std::string, TensorData> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::string file = e.path().filename().string();
    if (file.rfind(prefix, 0) != 0 || e.path().extension() != ".npy") continue;
    auto t = readNpy(e.path().string());
    if (!t) {
      error = t.message();
      continue;
    }
    out.emplace(file.substr(prefix.size(), file.size() - prefix.size() - 4), std::move(*t));
  }
  return out;
}

}  // namespace fuselens::test
