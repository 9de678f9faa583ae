#include "app/cli/run_sweep.h"

#include <cstdio>
#include <iostream>

#include "session/shape_sweep.h"
#include "session/sweep_buckets.h"

namespace fuselens::cli {
namespace {

void printRun(const SweepRun& r, size_t index, size_t total) {
  std::fprintf(stderr, "[%zu/%zu] value %lld", index + 1, total, (long long)r.value);
  if (r.bucket != r.value) std::fprintf(stderr, " (bucket %lld)", (long long)r.bucket);
  if (r.compiled)
    std::fprintf(stderr, ": compiled in %.3f s%s", r.compileSeconds,
                 r.cacheHit ? " (compile cache hit)" : "");
  else if (r.kernels > 0 && r.symbolicKernels > 0)
    std::fprintf(stderr, ": planned in %.3f s", r.compileSeconds);
  if (r.symbolicKernels > 0)
    std::fprintf(stderr, ", %zu of %zu kernels symbolic", r.symbolicKernels, r.kernels);
  std::fprintf(stderr, ", ran in %.3f ms", r.runSeconds * 1e3);
  if (r.match) std::fprintf(stderr, ", %s", r.verdict.c_str());
  if (r.padMatch) std::fprintf(stderr, ", padded eager %s", r.padVerdict.c_str());
  std::fprintf(stderr, "\n");
}

void printTable(const SweepReport& rep) {
  std::printf("%-8s %-8s %-10s %-12s %-10s %-8s %s\n", rep.dim.c_str(), "bucket", "compiled",
              "compile s", "run ms", "padded", "eager");
  for (const SweepRun& r : rep.runs) {
    std::string compiled = r.compiled ? (r.cacheHit ? "cache hit" : "yes") : "-";
    double padded = r.elements ? 100.0 * double(r.paddedElements) / double(r.elements) : 0;
    std::printf("%-8lld %-8lld %-10s %-12.3f %-10.3f %-7.1f%% %s\n", (long long)r.value,
                (long long)r.bucket, compiled.c_str(), r.compileSeconds, r.runSeconds * 1e3, padded,
                r.match ? r.verdict.c_str() : "-");
  }
  if (rep.dynamic) {
    std::printf("symbolic kernels: %zu, lowered at %s=", rep.symbolicKernels, rep.dim.c_str());
    for (size_t i = 0; i < rep.symbolicSamples.size(); ++i)
      std::printf("%s%lld", i ? "," : "", (long long)rep.symbolicSamples[i]);
    std::printf(" in %.3f s\n", rep.symbolicSeconds);
    for (const std::string& why : rep.perShapeKernels) std::printf("per shape: %s\n", why.c_str());
  }
  if (!rep.buckets.empty())  // the Buckets dock's rows, as lines
    for (const BucketRow& row : bucketRows(rep)) std::printf("%s\n", row.str().c_str());
  std::printf("%s\n", rep.summary().c_str());
}

}  // namespace

void addSweepOptions(CLI::App* cmd, SweepArgs& a) {
  cmd->add_option("--sweep", a.sweep,
                  "Run at every value of a symbolic dim: NAME=START:STOP:STEP or NAME=A,B,C "
                  "(needs --engine cpu; inputs random)");
  cmd->add_option("--buckets", a.buckets,
                  "With --sweep: pad each value up to a bucket and compile once per bucket: "
                  "NAME=32,64,128, NAME=pow2 or NAME=step:32");
  cmd->add_flag("--dynamic", a.dynamic,
                "With --sweep: symbolic kernels, compiled once for every value of the dim "
                "(kernels that do not generalize are compiled per value)");
  cmd->add_flag("--check-eager", a.checkEager,
                "With --sweep: compare every run's outputs with eager on the unpadded shape");
  cmd->add_flag("--pad-check", a.padCheck,
                "With --buckets: run the padded, masked model eagerly and compare its valid "
                "region with eager on the unpadded shape");
}

int runSweepCommand(const SweepArgs& a, const std::string& model, const std::string& engine,
                    const std::string& passes, const InputArgs& in, bool json) {
  if (engine != "cpu")
    return fail(Status::error("a sweep compiles; use --engine cpu", "--sweep " + a.sweep));
  if (!in.inputs.empty())
    return fail(Status::error("a sweep feeds random inputs of each shape; drop --input",
                              "--sweep " + a.sweep));
  auto request =
      makeSweepRequest({a.sweep, a.buckets, passes, in.seed, a.checkEager, a.padCheck, a.dynamic});
  if (!request) return fail(request.status());
  Session session;  // the model with every other dim bound; the swept one stays symbolic
  if (Status s = openAndOptimize(session, model, "", in, {request->sweep.dim}); !s) return fail(s);
  auto report = runSweep(session.original(), model, *request, printRun, interruptToken());
  if (!report) return fail(report.status());
  for (const std::string& note : report->notes) std::cerr << "note: " << note << "\n";
  if (json)
    std::cout << sweepJson(*report) << "\n";
  else
    printTable(*report);
  return report->allMatch.value_or(true) ? kExitOk : kExitCheckFailed;
}

}  // namespace fuselens::cli
