#include "tests/support/test_paths.h"

namespace fuselens::test {

std::string sourcePath(const std::string& rel) { return FUSELENS_SOURCE_DIR + rel; }
std::string cliPath() { return FUSELENS_CLI_PATH; }

}  // namespace fuselens::test
