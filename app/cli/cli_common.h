// Shared plumbing of the fuselens-cli subcommands: loading a model into a
// Session with a terminal progress line, reading --input name=file.npy
// arguments, Ctrl-C as cancel, and printing one-sentence errors.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "session/pipeline_choice.h"
#include "session/report_json.h"
#include "session/session.h"

namespace fuselens::cli {

// Exit codes: 0 ok, 1 a check failed (compare out of tolerance), 2 bad input or error.
inline constexpr int kExitOk = 0;
inline constexpr int kExitCheckFailed = 1;
inline constexpr int kExitError = 2;

// Prints "fuselens-cli: <where>: <message>" to stderr and returns kExitError.
int fail(const Status& s);

// A progress callback drawing one updating line on stderr when it is a terminal.
Progress terminalProgress();
// Cancelled by SIGINT (Ctrl-C); the work stops at its next check.
const CancelToken& interruptToken();

struct InputArgs {
  std::vector<std::string> inputs;  // name=file.npy
  bool random = false;
  uint64_t seed = 0;
  std::vector<std::string> dims;    // name=value, binding symbolic dims
  std::vector<std::string> shapes;  // name=AxBxC, fixing an input's dynamic dims
  int64_t dimsDefault = -1;         // --dims-default N: binds every dim left unbound
};

// Opens the model, binds --dim values, and runs the pipeline.
Status openAndOptimize(Session& session, const std::string& model, const std::string& pipeline,
                       const std::vector<std::string>& dims = {},
                       const std::vector<std::string>& shapes = {});
// The same with --dims-default: saying on stderr, in one line, which dims it
// bound. Dims in `keepSymbolic` stay unbound (a sweep's dim).
Status openAndOptimize(Session& session, const std::string& model, const std::string& pipeline,
                       const InputArgs& in, const std::vector<std::string>& keepSymbolic = {});
// Explicit inputs from .npy files; seeded random tensors for the rest when
// `random` is set (or when no input was given at all).
Expected<std::map<std::string, TensorData>> loadInputs(const Session& session,
                                                       const InputArgs& args);

// Session::fitToInputs with the terminal's progress line and Ctrl-C.
Status fitToInputs(Session& session, const std::map<std::string, TensorData>& inputs);

// The three above in a row: open and optimize, load the inputs, fit the
// model's dynamic dims to them. What a command that runs the model starts with.
Expected<std::map<std::string, TensorData>> openForInputs(Session& session,
                                                          const std::string& model,
                                                          const std::string& pipeline,
                                                          const InputArgs& args);

std::string formatDouble(double v);  // "2.4e-07", compact for tables

// --input, --random-inputs, --seed, --dim and --shape on a subcommand.
void addInputOptions(CLI::App* cmd, InputArgs& in);
// --precision f32|f16|bf16 on a subcommand that compiles a pipeline. The
// value is checked where it is applied (withPrecision, session/pipeline_choice.h),
// so a bad one reads the same in both faces.
void addPrecisionOption(CLI::App* cmd, std::string& precision);
// --passes with --precision applied.
Expected<std::string> pipelineWithPrecision(const std::string& passes,
                                            const std::string& precision);

// --cuda-library and --cuda-library-group (export's words) on a subcommand;
// `cudaFlag` ("--target cuda", "--engine cuda") names what they go with.
void addCudaLibraryOptions(CLI::App* cmd, CudaRunRequest& library, const std::string& cudaFlag);
// Before any model is read: a bad value, or an option given without
// `cudaFlag` (`cuda` false), is one sentence naming the flag.
Status checkCudaLibraryArgs(const CudaRunRequest& library, bool cuda, const std::string& cudaFlag);

// --dim and --shape alone, for subcommands that take no input tensors.
void addShapeOptions(CLI::App* cmd, std::vector<std::string>& dims,
                     std::vector<std::string>& shapes);

}  // namespace fuselens::cli
