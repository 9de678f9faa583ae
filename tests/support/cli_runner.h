// Runs fuselens-cli from the source root as a user would, for the CLI tests.
#pragma once

#include <QProcess>
#include <QStringList>

#include "tests/support/test_paths.h"

namespace fuselens::test {

struct CliResult {
  int code = -1;  // -1: did not finish in time; -2: crashed
  QString out, err;
};

inline CliResult runCli(const QStringList& args, int timeoutMs = 300000) {
  QProcess p;
  p.setWorkingDirectory(QString::fromStdString(fuselens::test::sourcePath()));
  p.start(QString::fromStdString(fuselens::test::cliPath()), args);
  CliResult r;
  if (!p.waitForFinished(timeoutMs)) return r;
  r.code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2;
  r.out = QString::fromUtf8(p.readAllStandardOutput());
  r.err = QString::fromUtf8(p.readAllStandardError());
  return r;
}

}  // namespace fuselens::test
