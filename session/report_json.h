// The reports as JSON text, for `--json` and for files a face saves: one
// writer per report, so every face writes the same fields.
#pragma once

#include <string>

namespace fuselens {

class Session;
struct BisectReport;
struct CompareReport;
struct ExplainReport;
struct IsolatedReport;
struct SweepReport;
struct TapReport;

// Each returns the JSON text (indented by 2) of a report `session` made.
// With `taps` (compare --tap), a "taps" array of rows like "tensors" plus each
// tap's kernel, group and whether tapping left the group's outputs unchanged.
std::string compareJson(const CompareReport& report, const Session& session,
                        const TapReport* taps = nullptr);
std::string isolatedJson(const IsolatedReport& report, const Session& session);
std::string explainJson(const ExplainReport& report, const Session& session);
std::string bisectJson(const BisectReport& report);
// `run --sweep`: the totals (runs, compiles, cache_hits, compile_seconds,
// run_seconds, padding_waste, all_match) and one row per run.
std::string sweepJson(const SweepReport& report);
// `tensor --json`: name, producer, shape, dtype, layout, side, stats,
// histogram (lo, hi, counts, ignored), and the slice's values when one is given.
struct InspectedTensor;
struct TensorData;
struct TensorStats;
struct Histogram;
std::string tensorJson(const InspectedTensor& tensor, const std::string& side,
                       const TensorData& shown, const TensorStats& stats, const Histogram& hist,
                       const TensorData* slice);

}  // namespace fuselens
