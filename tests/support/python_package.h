// Where an installed Python package lives, for the tests on the real models
// pip packages ship (tests/realworld): empty when it is not installed.
#pragma once

#include <QProcess>
#include <QString>

namespace fuselens::test {

inline QString packageDir(const QString& pkg) {
  QProcess p;
  p.start("python3", {"-c",
                      "import importlib.util as u, sys\n"
                      "s = u.find_spec(sys.argv[1])\n"
                      "print(s.submodule_search_locations[0] if s and "
                      "s.submodule_search_locations else '')",
                      pkg});
  if (!p.waitForFinished(30000) || p.exitCode() != 0) return {};
  return QString::fromUtf8(p.readAllStandardOutput()).trimmed();
}

}  // namespace fuselens::test
