// `fuselens-cli run`: run the model eagerly or compiled and write every graph
// output as <output name>.npy.
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "app/cli/cli_common.h"
#include "app/cli/commands.h"
#include "core/eager/interpreter.h"
#include "core/io/npy.h"

namespace fuselens::cli {
namespace {

struct RunArgs {
  std::string model;
  std::string engine = "eager";
  std::string passes = defaultPipeline();
  InputArgs inputs;
  std::vector<std::string> dims;  // name=value, binding symbolic dims
  std::string outputDir = ".";
  bool json = false;
};

// Output names may hold '/' or ':' (exporters write "/fc1/Gemm_output_0"):
// keep file names flat and portable.
std::string fileNameFor(const std::string& name) {
  std::string out;
  for (char c : name) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.') ? c : '_';
  return out.empty() ? "output" : out;
}

Expected<std::map<std::string, TensorData>> runEngine(Session& s, const RunArgs& a,
                                                      const std::map<std::string, TensorData>& inputs) {
  std::map<std::string, TensorData> outputs;
  if (a.engine == "eager") {
    EagerOptions opts;
    opts.keepIntermediates = false;
    auto r = runEager(s.original(), inputs, opts, terminalProgress(), interruptToken());
    if (!r) return r.status();
    for (ValueId v : s.original().outputs()) outputs[s.original().value(v).name] = *r->find(v);
    return outputs;
  }
  FL_RETURN_IF_ERROR(s.compile({}, terminalProgress(), interruptToken()));
  auto r = s.compiled()->run(inputs, interruptToken());
  if (!r) return r.status();
  const Graph& g = s.finalGraph();
  for (ValueId v : g.outputs()) outputs[g.value(v).name] = *(*r)[v.index];
  return outputs;
}

// --dim name=value, each symbol once, value a non-negative integer.
Expected<std::map<std::string, int64_t>> parseDims(const std::vector<std::string>& args) {
  std::map<std::string, int64_t> dims;
  for (const std::string& arg : args) {
    size_t eq = arg.find('=');
    int64_t v = -1;
    try {
      size_t used = 0;
      if (eq != std::string::npos && eq > 0) v = std::stoll(arg.substr(eq + 1), &used);
      if (used != arg.size() - eq - 1) v = -1;
    } catch (...) {
      v = -1;
    }
    if (v < 0 || !dims.emplace(arg.substr(0, eq), v).second)
      return Status::error("expected name=value with a non-negative integer, each name once",
                           "--dim " + arg);
  }
  return dims;
}

// The input's type with its symbolic dims bound by --dim.
Expected<TensorType> bindDims(const Value& v, const std::map<std::string, int64_t>& dims) {
  TensorType t = v.type;
  if (!t.rankKnown)
    return Status::error("has no known rank; give it with --input", "input '" + v.name + "'");
  for (size_t k = 0; k < t.rank(); ++k) {
    Dim& d = t.shape[k];
    if (d.isStatic()) continue;
    if (d.symbol.empty())
      return Status::error("dim " + std::to_string(k) + " of " + v.type.str() +
                               " has no name to bind with --dim; give the input with --input",
                           "input '" + v.name + "'");
    auto it = dims.find(d.symbol);
    if (it == dims.end())
      return Status::error("dim " + std::to_string(k) + " of " + v.type.str() +
                               " is symbolic; bind it with --dim " + d.symbol + "=N",
                           "input '" + v.name + "'");
    d = Dim::fixed(it->second);
  }
  return t;
}

// Explicit inputs, then seeded random tensors for the rest (as loadInputs,
// seed + input index), with symbolic dims bound; explicit inputs must agree
// with the bound dims.
Expected<std::map<std::string, TensorData>> inputsWithDims(const Session& s, const RunArgs& a,
                                                           const std::map<std::string, int64_t>& dims) {
  std::map<std::string, TensorData> inputs;
  if (!a.inputs.inputs.empty()) {
    InputArgs explicitOnly = a.inputs;
    explicitOnly.random = false;
    auto given = loadInputs(s, explicitOnly);
    if (!given) return given.status();
    inputs = std::move(*given);
  }
  const Graph& g = s.original();
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    const Value& v = g.value(g.inputs()[i]);
    if (auto it = inputs.find(v.name); it != inputs.end()) {
      for (size_t k = 0; v.type.rankKnown && k < v.type.rank() && k < it->second.rank(); ++k) {
        auto d = dims.find(v.type.shape[k].symbol);
        if (d != dims.end() && d->second != it->second.shape[k])
          return Status::error("dim " + std::to_string(k) + " is " + std::to_string(it->second.shape[k]) +
                                   " but --dim " + d->first + "=" + std::to_string(d->second),
                               "input '" + v.name + "'");
      }
      continue;
    }
    if (!a.inputs.random && !a.inputs.inputs.empty()) continue;  // the interpreter names it
    auto t = bindDims(v, dims);
    if (!t) return t.status();
    auto data = randomTensor(*t, a.inputs.seed + i);
    if (!data) return Status::error(data.message(), "input '" + v.name + "'");
    inputs[v.name] = std::move(*data);
  }
  return inputs;
}

int runRun(const RunArgs& a) {
  Session session;
  if (Status s = openAndOptimize(session, a.model, a.engine == "cpu" ? a.passes : ""); !s) return fail(s);
  auto dims = parseDims(a.dims);
  if (!dims) return fail(dims.status());
  auto inputs = dims->empty() ? loadInputs(session, a.inputs) : inputsWithDims(session, a, *dims);
  if (!inputs) return fail(inputs.status());
  auto outputs = runEngine(session, a, *inputs);
  if (!outputs) return fail(outputs.status());
  std::error_code ec;
  std::filesystem::create_directories(a.outputDir, ec);
  nlohmann::json report = nlohmann::json::array();
  for (const auto& [name, t] : *outputs) {
    std::string path = (std::filesystem::path(a.outputDir) / (fileNameFor(name) + ".npy")).string();
    if (Status s = writeNpy(path, t); !s) return fail(s);
    report.push_back({{"name", name}, {"file", path}, {"dtype", std::string(dtypeName(t.dtype))}, {"shape", t.shape}});
    if (!a.json) std::cout << name << ": " << t.type().str() << " -> " << path << "\n";
  }
  if (a.json) std::cout << nlohmann::json{{"engine", a.engine}, {"outputs", report}}.dump(2) << "\n";
  return kExitOk;
}

}  // namespace

void addInputOptions(CLI::App* cmd, InputArgs& in) {
  cmd->add_option("--input", in.inputs, "An input tensor: name=file.npy (repeatable)");
  cmd->add_flag("--random-inputs", in.random, "Seeded random values for inputs not given with --input");
  cmd->add_option("--seed", in.seed, "Seed of --random-inputs")->capture_default_str();
}

void addRunCommand(CLI::App& app, int& exitCode) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* cmd = app.add_subcommand("run", "Run a model eagerly or compiled; write outputs as .npy");
  cmd->add_option("model", args->model, "ONNX model file")->required();
  cmd->add_option("--engine", args->engine, "eager (reference interpreter) or cpu (compiled with LLVM)")
      ->check(CLI::IsMember({"eager", "cpu"}))
      ->capture_default_str();
  cmd->add_option("--passes", args->passes, "Pipeline for --engine cpu")->capture_default_str();
  addInputOptions(cmd, args->inputs);
  cmd->add_option("--dim", args->dims,
                  "Bind a symbolic dim: name=value (repeatable; used by --random-inputs and checked "
                  "against --input tensors)");
  cmd->add_option("--output-dir", args->outputDir, "Where <output name>.npy files go")->capture_default_str();
  cmd->add_flag("--json", args->json, "Print a JSON report");
  cmd->callback([args, &exitCode] { exitCode = runRun(*args); });
}

}  // namespace fuselens::cli
