// runDot: one dot run in a process of its own. The helper executable
// fuselens-dot serves requests on its stdin (a graph as doubles) and answers on
// its stdout (the geometry as doubles); idle helpers are kept in a small pool,
// so a scope costs a layout and not a process start (spawning is 10-20 ms,
// forking a 500 MB app 60 ms). The parent reads with a deadline and the cancel
// token in view, and kills the helper when either fires; a Graphviz crash ends
// the helper only. Where no helper can be found, a forked child lays out the
// graph it inherited and answers the same way.
//
//   parent                                 fuselens-dot (pool) or fork
//   ------                                 ---------------------------
//   write count + graph       ---stdin-->  read request
//   poll(pipe) every 20 ms    <--stdout--  gvLayout(dot); write count + doubles
//   cancel / deadline: SIGKILL, drop it
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "session/graphview/box_layout.h"
#include "session/graphview/dot_child.h"

extern char** environ;

namespace fuselens::graphview {
namespace {

bool writeAll(int fd, const void* data, size_t bytes) {
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t n = write(fd, p, bytes);
    if (n <= 0) return false;
    p += n;
    bytes -= size_t(n);
  }
  return true;
}

// Reads the doubles back into geometry; false when they do not add up.
bool decode(const std::vector<double>& in, const BoxGraph& g, BoxGeometry& out) {
  size_t i = 0;
  auto take = [&]() { return i < in.size() ? in[i++] : NAN; };
  auto box = [&]() {
    LayoutBox b;
    b.x = take();
    b.y = take();
    b.width = take();
    b.height = take();
    return b;
  };
  out.width = take();
  out.height = take();
  for (size_t n = 0; n < g.nodes.size(); ++n) out.nodes.push_back(box());
  for (size_t c = 0; c < g.clusters.size(); ++c) out.clusters.push_back(box());
  for (size_t e = 0; e < g.edges.size(); ++e) {
    EdgePath p;
    const double count = take();
    if (!(count >= 0) || count > 1e6) return false;
    for (size_t k = 0; k < size_t(count); ++k) p.points.push_back({take(), take()});
    p.hasArrow = take() > 0;
    p.arrowTip = {take(), take()};
    p.hasLabel = take() > 0;
    p.labelCenter = {take(), take()};
    out.edges.push_back(std::move(p));
  }
  return i == in.size() && !std::isnan(out.width);
}

// $FUSELENS_DOT, else the helper this build made, else fuselens-dot beside the
// running program; empty: fork instead.
std::string helperPath() {
  static const std::string path = [] {
    if (const char* env = std::getenv("FUSELENS_DOT"); env && *env) return std::string(env);
#ifdef FUSELENS_DOT_HELPER
    if (access(FUSELENS_DOT_HELPER, X_OK) == 0) return std::string(FUSELENS_DOT_HELPER);
#endif
    char self[4096];
    const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) return std::string();
    const std::string exe(self, size_t(n));
    const std::string beside = exe.substr(0, exe.rfind('/') + 1) + "fuselens-dot";
    return access(beside.c_str(), X_OK) == 0 ? beside : std::string();
  }();
  return path;
}

// A process that answers layout requests: a pooled helper, or a forked child
// that answers one (in = -1: it has its graph already).
struct Child {
  pid_t pid = -1;
  int in = -1, out = -1;
};

void discard(Child& c) {
  if (c.pid > 0) kill(c.pid, SIGKILL);
  if (c.in >= 0) close(c.in);
  if (c.out >= 0) close(c.out);
  int status = 0;
  if (c.pid > 0) waitpid(c.pid, &status, 0);
  c = Child{};
}

class HelperPool {
 public:
  static constexpr size_t kMaxIdle = 4;  // one per layout thread

  Expected<Child> acquire(const std::string& path) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!idle_.empty()) {
        Child c = idle_.back();
        idle_.pop_back();
        return c;
      }
    }
    return spawn(path);
  }

  void release(Child c) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (idle_.size() < kMaxIdle)
      idle_.push_back(c);
    else
      discard(c);
  }

 private:
  static Expected<Child> spawn(const std::string& path) {
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) != 0) return Expected<Child>::error("could not open a pipe for dot");
    if (pipe2(out, O_CLOEXEC) != 0) {
      close(in[0]);
      close(in[1]);
      return Expected<Child>::error("could not open a pipe for dot");
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in[0], 0);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    std::string arg0 = path;
    char* argv[] = {arg0.data(), nullptr};
    Child c;
    const int rc = posix_spawn(&c.pid, path.c_str(), &actions, nullptr, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    close(in[0]);
    close(out[1]);
    if (rc != 0) {
      close(in[1]);
      close(out[0]);
      return Expected<Child>::error("could not start " + path);
    }
    c.in = in[1];
    c.out = out[0];
    return c;
  }

  std::mutex mutex_;
  std::vector<Child> idle_;
};

HelperPool& pool() {
  static HelperPool* p = new HelperPool;  // never destroyed: helpers end with our pipes
  return *p;
}

// Sends one request; a helper that died must not take this process down with SIGPIPE.
bool send(const Child& c, const std::vector<double>& request) {
  sigset_t pipeSig, old;
  sigemptyset(&pipeSig);
  sigaddset(&pipeSig, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipeSig, &old);
  const uint64_t n = request.size();
  const bool ok = writeAll(c.in, &n, sizeof n) &&
                  writeAll(c.in, request.data(), request.size() * sizeof(double));
  if (!ok) {
    const timespec zero{0, 0};
    sigtimedwait(&pipeSig, nullptr, &zero);  // drop the SIGPIPE it raised
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return ok;
}

Expected<Child> forkChild(const BoxGraph& g) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return Expected<Child>::error("could not open a pipe for dot");
  Child c;
  c.pid = fork();
  if (c.pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return Expected<Child>::error("could not start a process for dot");
  }
  if (c.pid == 0) {
    close(fds[0]);
    const std::vector<double> out = layOutWithDot(g);
    const uint64_t n = out.size();
    const bool ok =
        writeAll(fds[1], &n, sizeof n) && writeAll(fds[1], out.data(), out.size() * sizeof(double));
    _exit(ok ? 0 : 2);
  }
  close(fds[1]);
  c.out = fds[0];
  return c;
}

// Reads one answer: a count, then that many doubles. `why` says what stopped it.
std::vector<double> receive(const Child& c, double seconds, const CancelToken& cancel,
                            std::string& why) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(std::max(0.0, seconds));
  std::string bytes;
  uint64_t count = 0;
  char buf[65536];
  while (true) {
    if (cancel.cancelled()) {
      why = "cancelled";
      return {};
    }
    if (std::chrono::steady_clock::now() > deadline) {
      why = "dot ran past " + std::to_string(int(std::lround(seconds * 1000))) + " ms";
      return {};
    }
    if (bytes.size() >= sizeof count) {
      std::memcpy(&count, bytes.data(), sizeof count);
      if (bytes.size() >= sizeof count + count * sizeof(double)) break;
    }
    pollfd p{c.out, POLLIN, 0};
    if (poll(&p, 1, 20) <= 0) continue;
    const size_t want = bytes.size() < sizeof count
                            ? sizeof count - bytes.size()
                            : sizeof count + count * sizeof(double) - bytes.size();
    const ssize_t n = read(c.out, buf, std::min(sizeof buf, want));
    if (n <= 0) {
      why = "dot crashed";  // the pipe closed before the answer was whole
      return {};
    }
    bytes.append(buf, size_t(n));
  }
  if (count == 0) {
    why = "dot failed";
    return {};
  }
  std::vector<double> out(count);
  std::memcpy(out.data(), bytes.data() + sizeof count, count * sizeof(double));
  return out;
}

}  // namespace

Expected<BoxGeometry> runDot(const BoxGraph& g, double seconds, const CancelToken& cancel) {
  const std::string helper = helperPath();
  Expected<Child> started = helper.empty() ? forkChild(g) : pool().acquire(helper);
  if (!started.isOk()) return started.status();
  Child child = *started;
  if (!helper.empty() && !send(child, encodeBoxGraph(g))) {
    discard(child);  // a pooled helper that died meanwhile: one fresh try
    started = pool().acquire(helper);
    if (!started.isOk()) return started.status();
    child = *started;
    if (!send(child, encodeBoxGraph(g))) {
      discard(child);
      return Expected<BoxGeometry>::error("dot crashed");
    }
  }
  std::string why;
  const std::vector<double> values = receive(child, seconds, cancel, why);
  if (!why.empty() || helper.empty()) {
    discard(child);  // a forked child answers once; a stopped helper is killed
  } else {
    pool().release(child);
  }
  if (!why.empty()) return Expected<BoxGeometry>::error(why);
  BoxGeometry out;
  if (!decode(values, g, out)) return Expected<BoxGeometry>::error("dot's answer was garbled");
  return out;
}

Expected<BoxGeometry> layoutBoxes(const BoxGraph& g, const BoxLayoutOptions& opts) {
  if (opts.cancel.cancelled()) return Expected<BoxGeometry>::error("cancelled");
  std::string why = "dot not used";
  if (opts.useDot) {
    Expected<BoxGeometry> dot = runDot(g, opts.dotSeconds, opts.cancel);
    if (dot.isOk()) return dot;
    if (opts.cancel.cancelled()) return dot;
    why = dot.message();
  }
  BoxGeometry out = layeredLayout(g);
  out.note = "simple layered layout (" + why + ")";
  return out;
}

}  // namespace fuselens::graphview
