#include "core/support/atomic_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace fuselens {

Status writeFileAtomically(const std::string& path, const std::string& contents) {
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f)
    return Status::error(std::string("cannot create the file: ") + std::strerror(errno), path);
  bool ok = std::fwrite(contents.data(), 1, contents.size(), f) == contents.size();
  ok = (std::fflush(f) == 0) && ok;
  ok = (::fsync(::fileno(f)) == 0) && ok;
  int err = errno;
  std::fclose(f);
  if (!ok) {
    std::remove(tmp.c_str());
    return Status::error(std::string("cannot write the file: ") + std::strerror(err), path);
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::remove(tmp.c_str());
    return Status::error("cannot replace the file: " + ec.message(), path);
  }
  return Status::ok();
}

}  // namespace fuselens
