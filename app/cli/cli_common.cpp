#include "app/cli/cli_common.h"

#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "core/io/npy.h"
#include "session/input_shapes.h"

namespace fuselens::cli {

int fail(const Status& s) {
  std::cerr << "fuselens-cli: " << s.message() << "\n";
  return kExitError;
}

const CancelToken& interruptToken() {
  static CancelToken token;
  static bool installed = [] {
    std::signal(SIGINT, [](int) { token.cancel(); });
    return true;
  }();
  (void)installed;
  return token;
}

Progress terminalProgress() {
  if (!isatty(STDERR_FILENO)) return {};
  return [](double fraction, const std::string& stage) {
    int filled = static_cast<int>(fraction * 20);
    std::fprintf(stderr, "\r[%-20s] %3d%% %-40.40s", std::string(size_t(filled), '#').c_str(),
                 static_cast<int>(fraction * 100), stage.c_str());
    if (fraction >= 1.0) std::fprintf(stderr, "\r%75s\r", "");
    std::fflush(stderr);
  };
}

namespace {

// --dim name=value, each name once, value a non-negative integer.
Expected<std::map<std::string, int64_t>> parseDims(const std::vector<std::string>& args) {
  std::map<std::string, int64_t> dims;
  for (const std::string& arg : args) {
    size_t eq = arg.find('=');
    char* end = nullptr;
    long long v = eq == std::string::npos || eq == 0 ? -1 : std::strtoll(arg.c_str() + eq + 1, &end, 10);
    bool ok = v >= 0 && end && *end == '\0' && end != arg.c_str() + eq + 1;
    if (!ok || !dims.emplace(arg.substr(0, eq), v).second)
      return Status::error("expected name=value with a non-negative integer, each name once", "--dim " + arg);
  }
  return dims;
}

}  // namespace

Status openAndOptimize(Session& session, const std::string& model, const std::string& pipeline,
                       const std::vector<std::string>& dimArgs, const std::vector<std::string>& shapeArgs) {
  auto dims = parseDims(dimArgs);
  if (!dims) return dims.status();
  FL_RETURN_IF_ERROR(session.open(model, terminalProgress(), interruptToken()));
  for (const Diagnostic& d : session.model().diagnostics)
    if (d.severity != Severity::Note) std::cerr << "warning: " << d.str() << "\n";
  if (!dims->empty()) FL_RETURN_IF_ERROR(session.bindDims(*dims));
  std::string joined;
  for (const std::string& s : shapeArgs) joined += s + ";";
  auto shapes = parseInputShapes(joined);
  if (!shapes) return shapes.status();
  if (!shapes->empty()) {
    for (const auto& [name, dims] : *shapes)
      if (!session.original().findValue(name))
        return Status::error("the model has no input named '" + name + "'", "--shape " + name);
    auto bound = session.bindInputShapes(*shapes);
    if (!bound) return bound.status();
  }
  return session.optimize(pipeline, terminalProgress(), interruptToken());
}

Status fitToInputs(Session& session, const std::map<std::string, TensorData>& inputs,
                   const std::string& pipeline) {
  auto changed = session.bindInputShapes(inputs);
  if (!changed) return changed.status();
  if (!*changed) return Status::ok();
  return session.optimize(pipeline, terminalProgress(), interruptToken());
}

void addInputOptions(CLI::App* cmd, InputArgs& in) {
  cmd->add_option("--input", in.inputs, "An input tensor: name=file.npy (repeatable)");
  cmd->add_flag("--random-inputs", in.random, "Seeded random values for inputs not given with --input");
  cmd->add_option("--seed", in.seed, "Seed of --random-inputs")->capture_default_str();
  addShapeOptions(cmd, in.dims, in.shapes);
}

void addShapeOptions(CLI::App* cmd, std::vector<std::string>& dims, std::vector<std::string>& shapes) {
  cmd->add_option("--dim", dims, "Bind a symbolic dim of the model: name=value (repeatable)");
  cmd->add_option("--shape", shapes,
                  "Fix a dynamic input's shape: name=AxBxC, e.g. x=1x3x224x224 (repeatable)");
}

Expected<std::map<std::string, TensorData>> loadInputs(const Session& session, const InputArgs& args) {
  std::map<std::string, TensorData> inputs;
  const Graph& g = session.original();
  for (const std::string& arg : args.inputs) {
    size_t eq = arg.find('=');
    if (eq == std::string::npos || eq == 0)
      return Expected<std::map<std::string, TensorData>>::error("expected name=file.npy", "--input " + arg);
    std::string name = arg.substr(0, eq);
    if (!g.findValue(name))
      return Expected<std::map<std::string, TensorData>>::error("the model has no input named '" + name + "'",
                                                               "--input " + arg);
    auto t = readNpy(arg.substr(eq + 1));
    if (!t) return t.status();
    inputs[name] = std::move(*t);
  }
  if (!args.random && !inputs.empty()) return inputs;
  auto random = session.randomInputs(args.seed, inputs);
  if (!random) return random.status();
  for (auto& [name, t] : *random) inputs.emplace(name, std::move(t));  // explicit ones win
  return inputs;
}

std::string formatDouble(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

}  // namespace fuselens::cli
