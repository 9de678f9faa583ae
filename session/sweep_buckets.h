// What the CLI's `run --sweep` and the GUI's Buckets panel share about a
// sweep (session/shape_sweep.h): the request built from the same flag text,
// the bucket a value falls in, the model opened with its other dims bound,
// and the report grouped by bucket with the verdict words the CLI prints.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "session/shape_sweep.h"

namespace fuselens {

struct SweepOptions {
  std::string sweep;    // "seq=1:300:37" or "seq=1,2,7"
  std::string buckets;  // "seq=32,64", "seq=pow2", "seq=step:32"; empty: per shape
  std::string pipeline;
  uint64_t seed = 0;
  bool checkEager = false;
  bool padCheck = false;
  bool dynamic = false;  // symbolic kernels
};

// The flags' text as a SweepRequest; a bad spec is one sentence naming the flag.
Expected<SweepRequest> makeSweepRequest(const SweepOptions& options);

// The bucket policy as the Buckets panel takes it: `--buckets` text, with or
// without the leading "dim=" ("pow2" means "seq=pow2" for the dim `dim`).
Expected<std::vector<int64_t>> parseBucketPolicy(const std::string& text, const std::string& dim,
                                                 int64_t upTo);

// The smallest bucket holding `value`; nullopt past the largest (or no buckets).
std::optional<int64_t> bucketOf(const std::vector<int64_t>& buckets, int64_t value);

// Opens `model` with `dims` bound (the swept dim stays symbolic) and runs the sweep.
Expected<SweepReport> sweepModel(const std::string& model,
                                 const std::map<std::string, int64_t>& dims,
                                 const SweepRequest& request, const SweepObserver& observer = {},
                                 const CancelToken& cancel = {});

// One bucket of a report (one shape, per shape): its runs taken together.
struct BucketRow {
  int64_t bucket = 0;
  size_t runs = 0, compiles = 0, cacheHits = 0;
  double compileSeconds = 0;
  double paddingWaste = 0;  // padded elements / elements, over its runs
  std::string verdict;      // "within rounding", the first miss, or "-" unchecked
  // "bucket 64: 2 runs, 1 compile (0 cache hits), compile 0.41 s, padding waste 44.4%,
  // within rounding": the CLI's line, the GUI row's tooltip.
  std::string str() const;
};
std::vector<BucketRow> bucketRows(const SweepReport& report);

}  // namespace fuselens
