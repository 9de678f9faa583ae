// Where the tests find the source tree and the CLI. The paths are compiled
// into one small library (test_paths.cpp), not into every test, so a test's
// object file does not depend on where the checkout lives and ccache shares
// it between clones and worktrees.
#pragma once

#include <string>

namespace fuselens::test {

// The checkout's root followed by `rel` (which starts with '/', or is empty).
std::string sourcePath(const std::string& rel = {});
// The fuselens-cli executable of this build.
std::string cliPath();

}  // namespace fuselens::test
