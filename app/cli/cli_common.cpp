#include "app/cli/cli_common.h"

#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "session/cuda_library.h"
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

Status openRequest(Session& session, OpenRequest request, const std::vector<std::string>& dimArgs,
                   const std::vector<std::string>& shapeArgs) {
  auto dims = parseDimBindings(dimArgs);
  if (!dims) return dims.status();
  request.dims = *dims;
  std::string joined;
  for (const std::string& s : shapeArgs) joined += s + ";";
  auto shapes = parseInputShapes(joined);
  if (!shapes) return shapes.status();
  request.shapes = *shapes;
  Status st = session.open(request, terminalProgress(), interruptToken());
  if (session.isOpen())
    for (const Diagnostic& d : session.model().diagnostics)
      if (d.severity != Severity::Note) std::cerr << "warning: " << d.str() << "\n";
  return st;
}

}  // namespace

Status openAndOptimize(Session& session, const std::string& model, const std::string& pipeline,
                       const std::vector<std::string>& dimArgs,
                       const std::vector<std::string>& shapeArgs) {
  return openRequest(session, OpenRequest{model, {}, {}, pipeline}, dimArgs, shapeArgs);
}

Status openAndOptimize(Session& session, const std::string& model, const std::string& pipeline,
                       const InputArgs& in, const std::vector<std::string>& keepSymbolic) {
  OpenRequest request{model, {}, {}, pipeline};
  request.dimsDefault = in.dimsDefault;
  request.keepSymbolic = keepSymbolic;
  Status st = openRequest(session, request, in.dims, in.shapes);
  std::string bound;
  for (const auto& [name, value] : session.defaultedDims())
    bound += (bound.empty() ? "" : ", ") + name + "=" + std::to_string(value);
  if (!bound.empty()) std::cerr << "--dims-default bound " << bound << "\n";
  return st;
}

Status fitToInputs(Session& session, const std::map<std::string, TensorData>& inputs) {
  return session.fitToInputs(inputs, terminalProgress(), interruptToken());
}

Expected<std::map<std::string, TensorData>> openForInputs(Session& session,
                                                          const std::string& model,
                                                          const std::string& pipeline,
                                                          const InputArgs& args) {
  FL_RETURN_IF_ERROR(openAndOptimize(session, model, pipeline, args));
  auto inputs = loadInputs(session, args);
  if (!inputs) return inputs.status();
  FL_RETURN_IF_ERROR(fitToInputs(session, *inputs));
  return inputs;
}

void addInputOptions(CLI::App* cmd, InputArgs& in) {
  cmd->add_option("--input", in.inputs, "An input tensor: name=file.npy (repeatable)");
  cmd->add_flag("--random-inputs", in.random,
                "Seeded random values for inputs not given with --input");
  cmd->add_option("--seed", in.seed, "Seed of --random-inputs")->capture_default_str();
  addShapeOptions(cmd, in.dims, in.shapes);
  cmd->add_option("--dims-default", in.dimsDefault,
                  "Bind every symbolic dim not bound by --dim or --shape to N")
      ->check(CLI::NonNegativeNumber);
}

void addShapeOptions(CLI::App* cmd, std::vector<std::string>& dims,
                     std::vector<std::string>& shapes) {
  cmd->add_option("--dim", dims, "Bind a symbolic dim of the model: name=value (repeatable)");
  cmd->add_option("--shape", shapes,
                  "Fix a dynamic input's shape: name=AxBxC, e.g. x=1x3x224x224 (repeatable)");
}

void addCudaLibraryOptions(CLI::App* cmd, CudaRunRequest& library, const std::string& cudaFlag) {
  // No IsMember check: export's parser says what is wrong, the same on every command.
  cmd->add_option("--cuda-library", library.library,
                  "for " + cudaFlag +
                      ": cublaslt runs every MatMul/Gemm group whose epilogue cuBLASLt expresses "
                      "(bias, ReLU, GELU) as one cublasLtMatmul; none (default) keeps the "
                      "generated kernels");
  cmd->add_option("--cuda-library-group", library.libraryGroups,
                  "for " + cudaFlag +
                      ": NAME=cublaslt or NAME=generated for one group (repeatable), over "
                      "--cuda-library; `tune --target cuda` suggests them");
}

Status checkCudaLibraryArgs(const CudaRunRequest& library, bool cuda, const std::string& cudaFlag) {
  auto o = cudaLibraryOptions(library);
  if (!o) return o.status();
  if (o->any() && !cuda)
    return Status::error(
        "cuBLASLt offload runs on the CUDA engine only; add " + cudaFlag + " or drop the option",
        o->mode != "none" ? "--cuda-library" : "--cuda-library-group");
  return Status::ok();
}

Expected<std::map<std::string, TensorData>> loadInputs(const Session& session,
                                                       const InputArgs& args) {
  InputRequest request{{}, args.random, args.seed};
  for (const std::string& arg : args.inputs) {
    size_t eq = arg.find('=');
    if (eq == std::string::npos || eq == 0)
      return Status::error("expected name=file.npy", "--input " + arg);
    request.files[arg.substr(0, eq)] = arg.substr(eq + 1);
  }
  return session.inputs(request);
}

std::string formatDouble(double v) { return formatNumber(v); }

void addPrecisionOption(CLI::App* cmd, std::string& precision) {
  cmd->add_option("--precision", precision,
                  "Storage between kernels: f32, f16 or bf16 (arithmetic stays f32; graph inputs "
                  "and outputs stay f32)")
      ->capture_default_str();
}

Expected<std::string> pipelineWithPrecision(const std::string& passes,
                                            const std::string& precision) {
  return withPrecision(passes, precision);
}

}  // namespace fuselens::cli
